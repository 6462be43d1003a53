//! Cron expressions for `serve`: five fields (minute, hour, day of month,
//! month, day of week), each `*`, a number, a range `a-b`, a step `*/n` or
//! `a-b/n`, or a comma list of those; evaluated on the wall clock of a time
//! zone (the harness's local zone). As in cron, when both day fields are
//! restricted a day matching either one runs. Across a change of clocks, a
//! time the clocks skip runs when they resume (`30 2 * * *` at 03:30 on the
//! spring-forward day), and a time they pass twice runs once, the first time.

use anyhow::{bail, Context};
use jiff::tz::TimeZone;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    days_restricted: bool,
    weekdays_restricted: bool,
}

impl Schedule {
    pub fn parse(text: &str) -> anyhow::Result<Schedule> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 5 {
            bail!(
                "a cron expression has five fields (minute hour day month weekday), got {text:?}"
            );
        }
        let mut weekdays = field(fields[4], 0, 7).context("weekday")?;
        if weekdays[7] {
            weekdays[0] = true; // 7 is Sunday too
        }
        Ok(Schedule {
            minutes: field(fields[0], 0, 59).context("minute")?,
            hours: field(fields[1], 0, 23).context("hour")?,
            days: field(fields[2], 1, 31).context("day of month")?,
            months: field(fields[3], 1, 12).context("month")?,
            weekdays,
            days_restricted: fields[2] != "*",
            weekdays_restricted: fields[4] != "*",
        })
    }

    /// The first minute strictly after `after_ms` that matches on the
    /// wall clock of `zone`, in ms since the Unix epoch; `None` when nothing
    /// matches within eight years (e.g. February 30th).
    pub fn next_after(&self, after_ms: i64, zone: &TimeZone) -> Option<i64> {
        // Walk the wall clock's minutes (counted as if it were UTC) from
        // the one after `after_ms`'s.
        let wall = crate::clock::instant_to_wall(after_ms, zone);
        let mut minute = wall.div_euclid(60_000) + 1;
        let limit = minute + 8 * 366 * 1440;
        while minute < limit {
            let days = minute.div_euclid(1440);
            let (_, month, day) = civil_from_days(days);
            let weekday = (days + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
            let day_ok = match (self.days_restricted, self.weekdays_restricted) {
                (true, true) => self.days[day as usize] || self.weekdays[weekday],
                _ => self.days[day as usize] && self.weekdays[weekday],
            };
            if !(self.months[month as usize] && day_ok) {
                minute = (days + 1) * 1440; // skip to the next day
                continue;
            }
            let in_day = minute.rem_euclid(1440);
            if self.hours[(in_day / 60) as usize] && self.minutes[(in_day % 60) as usize] {
                // A repeated wall-clock minute maps to its first instant,
                // which may already be past: then it has run.
                match crate::clock::wall_to_instant(minute * 60_000, zone) {
                    Ok(at) if at > after_ms => return Some(at),
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
            minute += 1;
        }
        None
    }
}

fn field(text: &str, min: u32, max: u32) -> anyhow::Result<Vec<bool>> {
    let mut set = vec![false; max as usize + 1];
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                s.parse::<u32>()
                    .with_context(|| format!("bad step in {part:?}"))?,
            ),
            None => (part, 1),
        };
        if step == 0 {
            bail!("a step of 0 in {part:?}");
        }
        let (from, to) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (number(a, min, max)?, number(b, min, max)?)
        } else {
            let n = number(range, min, max)?;
            (n, if part.contains('/') { max } else { n })
        };
        if from > to {
            bail!("the range {range:?} runs backwards");
        }
        for n in (from..=to).step_by(step as usize) {
            set[n as usize] = true;
        }
    }
    Ok(set)
}

fn number(text: &str, min: u32, max: u32) -> anyhow::Result<u32> {
    let n: u32 = text
        .parse()
        .with_context(|| format!("{text:?} is not a number"))?;
    if n < min || n > max {
        bail!("{n} is outside {min}..{max}");
    }
    Ok(n)
}

/// `YYYY-MM-DDTHH:MMZ` of a time in ms since the Unix epoch.
pub fn format_utc_minute(ms: i64) -> String {
    let minutes = ms.div_euclid(60_000);
    let (y, m, d) = civil_from_days(minutes.div_euclid(1440));
    let in_day = minutes.rem_euclid(1440);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}Z",
        in_day / 60,
        in_day % 60
    )
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's
/// civil-from-days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{format_local_minute, parse_now, resolve_zone};

    fn next(expr: &str, after: &str) -> String {
        next_in(expr, after, "UTC")
            .trim_end_matches("+00:00")
            .to_string()
    }

    /// The next run as the zone's wall clock with its offset.
    fn next_in(expr: &str, after: &str, zone: &str) -> String {
        let zone = resolve_zone(Some(zone)).unwrap();
        let at = Schedule::parse(expr)
            .unwrap()
            .next_after(parse_now(after).unwrap(), &zone)
            .unwrap();
        format_local_minute(at, &zone)
    }

    #[test]
    fn the_default_runs_at_three_every_day() {
        assert_eq!(
            next("0 3 * * *", "2026-12-02T02:59:30Z"),
            "2026-12-02T03:00"
        );
        assert_eq!(
            next("0 3 * * *", "2026-12-02T03:00:00Z"),
            "2026-12-03T03:00"
        );
        assert_eq!(
            next("0 3 * * *", "2026-12-31T12:00:00Z"),
            "2027-01-01T03:00"
        );
    }

    #[test]
    fn steps_ranges_lists_and_weekdays() {
        assert_eq!(
            next("*/15 * * * *", "2026-12-02T10:07:00Z"),
            "2026-12-02T10:15"
        );
        assert_eq!(
            next("30 9-17/4 * * *", "2026-12-02T10:00:00Z"),
            "2026-12-02T13:30"
        );
        assert_eq!(
            next("0 0 * * 0", "2026-12-02T00:00:00Z"),
            "2026-12-06T00:00"
        ); // a Sunday
        assert_eq!(
            next("0 0 * * 7", "2026-12-02T00:00:00Z"),
            "2026-12-06T00:00"
        );
        assert_eq!(
            next("0 12 1,15 * *", "2026-12-02T00:00:00Z"),
            "2026-12-15T12:00"
        );
        assert_eq!(
            next("0 0 29 2 *", "2026-12-02T00:00:00Z"),
            "2028-02-29T00:00"
        );
        // Both day fields restricted: either one.
        assert_eq!(
            next("0 0 25 * 1", "2026-12-02T00:00:00Z"),
            "2026-12-07T00:00"
        );
    }

    #[test]
    fn bad_expressions_are_refused() {
        for bad in [
            "",
            "* * * *",
            "60 * * * *",
            "* 24 * * *",
            "*/0 * * * *",
            "5-1 * * * *",
            "a * * * *",
            "* * 0 * *",
        ] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Schedule::parse("0 0 30 2 *")
                .unwrap()
                .next_after(0, &TimeZone::UTC),
            None
        );
    }

    #[test]
    fn the_schedule_runs_on_the_local_wall_clock() {
        assert_eq!(
            next_in("0 3 * * *", "2026-12-02T12:00:00Z", "America/New_York"),
            "2026-12-03T03:00-05:00"
        );
        assert_eq!(
            next_in("0 3 * * *", "2026-12-02T12:00:00Z", "Asia/Tokyo"),
            "2026-12-03T03:00+09:00"
        );
        // The local day decides the weekday: Sunday 00:00 in Tokyo is
        // Saturday 15:00 UTC.
        assert_eq!(
            next_in("0 0 * * 0", "2026-12-02T00:00:00Z", "Asia/Tokyo"),
            "2026-12-06T00:00+09:00"
        );
    }

    #[test]
    fn skipped_times_run_when_the_clocks_resume_and_repeated_ones_once() {
        // New York springs forward at 02:00 on 2026-03-08.
        assert_eq!(
            next_in(
                "30 2 * * *",
                "2026-03-08T00:00:00-05:00",
                "America/New_York"
            ),
            "2026-03-08T03:30-04:00"
        );
        assert_eq!(
            next_in(
                "30 2 * * *",
                "2026-03-08T03:30:00-04:00",
                "America/New_York"
            ),
            "2026-03-09T02:30-04:00"
        );
        // …and falls back at 02:00 on 2026-11-01: 01:30 comes twice.
        assert_eq!(
            next_in(
                "30 1 * * *",
                "2026-11-01T00:00:00-04:00",
                "America/New_York"
            ),
            "2026-11-01T01:30-04:00"
        );
        assert_eq!(
            next_in(
                "30 1 * * *",
                "2026-11-01T01:30:00-04:00",
                "America/New_York"
            ),
            "2026-11-02T01:30-05:00"
        );
        assert_eq!(
            next_in(
                "30 1 * * *",
                "2026-11-01T01:10:00-05:00",
                "America/New_York"
            ),
            "2026-11-02T01:30-05:00"
        );
    }
}
