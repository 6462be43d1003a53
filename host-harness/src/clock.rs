//! The harness's clock and local time.
//!
//! `--now` and the conformance suite's `now` are a fixed clock, as
//! `YYYY-MM-DD` (midnight UTC) or RFC 3339 (`2026-12-02T09:30:00Z`,
//! `…+01:00`, fractions allowed); [`parse_time`] keeps the numeric offset a
//! time was written with, since that offset is the owner's local offset.
//! `Z` (and RFC 3339's `-00:00`) name an instant without saying what the
//! local offset is.
//!
//! On the command line, times may also be typed without an offset
//! (`2026-12-04T09:00`, seconds optional): [`parse_local`] reads them as a
//! wall-clock time in the configured IANA time zone ([`resolve_zone`];
//! default the host's own: `TZ`, else `/etc/localtime`, else UTC).

use anyhow::{bail, Context};
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

const DAY_MS: i64 = 86_400_000;

/// A time as written: its instant, and the offset it was written with when
/// that was a numeric one (`+01:00`; not `Z`, `-00:00` or a bare date).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed {
    pub ms: i64,
    pub offset_minutes: Option<i32>,
}

/// Milliseconds since the Unix epoch of `YYYY-MM-DD` or RFC 3339.
pub fn parse_now(text: &str) -> anyhow::Result<i64> {
    Ok(parse_time(text)?.ms)
}

/// `YYYY-MM-DD` (midnight UTC) or RFC 3339 with its offset: the formats of
/// the conformance suite (which the Node runner's `clock.mjs` mirrors).
pub fn parse_time(text: &str) -> anyhow::Result<Parsed> {
    parse(text, None)
}

/// What [`parse_time`] reads, and also a local date-time without an offset
/// (`2026-12-04T09:00`, `…T09:00:30`, `…T09:00:30.5`), which is read in
/// `zone`: a time the clocks skip is moved forward by the gap, one they
/// pass twice is the first. A bare date stays midnight UTC.
pub fn parse_local(text: &str, zone: &TimeZone) -> anyhow::Result<Parsed> {
    parse(text, Some(zone))
}

fn parse(text: &str, zone: Option<&TimeZone>) -> anyhow::Result<Parsed> {
    let text = text.trim();
    let formats = if zone.is_some() {
        "YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time) or RFC 3339"
    } else {
        "YYYY-MM-DD or RFC 3339"
    };
    let (date, time) = match text.split_once(['T', 't', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let days = days_from_date(date).with_context(|| format!("{text:?} is not {formats}"))?;
    let Some(time) = time else {
        return Ok(Parsed {
            ms: days * DAY_MS,
            offset_minutes: None,
        });
    };
    let (clock, offset) = split_offset(time, zone.is_some())?;
    let wall_ms = days * DAY_MS + clock_ms(clock, text, zone.is_none())?;
    match (offset, zone) {
        (Some(Written::Utc), _) => Ok(Parsed {
            ms: wall_ms,
            offset_minutes: None,
        }),
        (Some(Written::Minutes(minutes)), _) => Ok(Parsed {
            ms: wall_ms - i64::from(minutes) * 60_000,
            offset_minutes: Some(minutes),
        }),
        (None, Some(zone)) => Ok(Parsed {
            ms: wall_to_instant(wall_ms, zone)
                .with_context(|| format!("{text:?} in the time zone {}", zone_name(zone)))?,
            offset_minutes: None,
        }),
        (None, None) => unreachable!("split_offset requires an offset without a zone"),
    }
}

enum Written {
    /// `Z` or `-00:00`: UTC, local offset unknown.
    Utc,
    Minutes(i32),
}

fn split_offset(time: &str, optional: bool) -> anyhow::Result<(&str, Option<Written>)> {
    if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        return Ok((clock, Some(Written::Utc)));
    }
    let Some(pos) = time.rfind(['+', '-']) else {
        if optional {
            return Ok((time, None));
        }
        bail!("RFC 3339 times need an offset (Z or ±HH:MM): {time:?}");
    };
    let (clock, offset) = time.split_at(pos);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let (h, m) = offset[1..]
        .split_once(':')
        .context("offsets look like +01:00")?;
    let minutes = parse_field(Some(h), 0..=23, "offset hour")? * 60
        + parse_field(Some(m), 0..=59, "offset minute")?;
    if sign < 0 && minutes == 0 {
        return Ok((clock, Some(Written::Utc)));
    }
    Ok((clock, Some(Written::Minutes((sign * minutes) as i32))))
}

/// `HH:MM:SS[.fff]` (seconds optional unless `need_seconds`) in ms.
fn clock_ms(clock: &str, text: &str, need_seconds: bool) -> anyhow::Result<i64> {
    let mut parts = clock.splitn(3, ':');
    let hour: i64 = parse_field(parts.next(), 0..=23, "hour")?;
    let minute: i64 = parse_field(parts.next(), 0..=59, "minute")?;
    let seconds_text = match parts.next() {
        Some(seconds) => seconds,
        None if need_seconds => bail!("RFC 3339 times need seconds"),
        None => "00",
    };
    let (whole, fraction) = seconds_text.split_once('.').unwrap_or((seconds_text, ""));
    let second: i64 = parse_field(Some(whole), 0..=60, "second")?;
    let millis: i64 = if fraction.is_empty() {
        0
    } else if fraction.bytes().all(|b| b.is_ascii_digit()) {
        format!("{fraction:0<3}")[..3].parse()?
    } else {
        bail!("bad fraction of a second in {text:?}")
    };
    Ok(((hour * 60 + minute) * 60 + second) * 1000 + millis)
}

fn parse_field(
    text: Option<&str>,
    range: std::ops::RangeInclusive<i64>,
    what: &str,
) -> anyhow::Result<i64> {
    let text = text.with_context(|| format!("missing {what}"))?;
    if text.len() != 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        bail!("bad {what}: {text:?}");
    }
    let value: i64 = text.parse()?;
    if !range.contains(&value) {
        bail!("{what} {value} is out of range");
    }
    Ok(value)
}

fn days_from_date(date: &str) -> anyhow::Result<i64> {
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        bail!("not YYYY-MM-DD");
    }
    let y: i64 = date[0..4].parse()?;
    let m: i64 = date[5..7].parse()?;
    let d: i64 = date[8..10].parse()?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        bail!("no such date");
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok(era * 146_097 + doe - 719_468)
}

/// The instant of a wall-clock time in `zone`, given as ms since the epoch
/// as if the wall clock were UTC (compatible disambiguation: a skipped time
/// moves forward by the gap, a repeated one is the earlier).
pub fn wall_to_instant(wall_ms: i64, zone: &TimeZone) -> anyhow::Result<i64> {
    let civil = TimeZone::UTC.to_datetime(Timestamp::from_millisecond(wall_ms)?);
    Ok(zone
        .to_ambiguous_timestamp(civil)
        .compatible()?
        .as_millisecond())
}

/// The wall clock of `zone` at `ms`, as ms since the epoch as if it were UTC.
pub fn instant_to_wall(ms: i64, zone: &TimeZone) -> i64 {
    ms + i64::from(offset_minutes_at(zone, ms)) * 60_000
}

/// The zone's offset from UTC at `ms`, in minutes (east positive).
pub fn offset_minutes_at(zone: &TimeZone, ms: i64) -> i32 {
    match Timestamp::from_millisecond(ms) {
        Ok(at) => zone.to_offset(at).seconds() / 60,
        Err(_) => 0,
    }
}

/// `ms` as RFC 3339 with the zone's offset then (`2026-12-04T09:00:00+00:00`).
pub fn format_local(ms: i64, zone: &TimeZone) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(at) => at.display_with_offset(zone.to_offset(at)).to_string(),
        Err(_) => format!("{ms} ms"),
    }
}

/// `ms` to the minute in the zone's wall clock, with its offset
/// (`2026-12-04T09:00+00:00`).
pub fn format_local_minute(ms: i64, zone: &TimeZone) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(at) => at
            .to_zoned_datetime(zone.clone())
            .strftime("%Y-%m-%dT%H:%M%:z")
            .to_string(),
        Err(_) => format!("{ms} ms"),
    }
}

/// Largest local offset the turn context takes (the WIT's ±18 h).
pub const MAX_OFFSET_MINUTES: i32 = 18 * 60;

/// The zone of a fixed offset (`--now …-05:00`: the run's local offset).
pub fn fixed_zone(offset_minutes: i32) -> anyhow::Result<TimeZone> {
    if offset_minutes.abs() > MAX_OFFSET_MINUTES {
        bail!(
            "the offset {} is beyond ±18:00; no time zone has it",
            format_offset(offset_minutes)
        );
    }
    Ok(TimeZone::fixed(Offset::from_seconds(offset_minutes * 60)?))
}

fn format_offset(minutes: i32) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let minutes = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// The configured IANA time zone, else the host's own.
pub fn resolve_zone(name: Option<&str>) -> anyhow::Result<TimeZone> {
    match name {
        Some(name) => TimeZone::get(name.trim()).map_err(|e| {
            anyhow::anyhow!(
                "unknown time zone {name:?} ({e}); give an IANA name such as Europe/Lisbon, America/New_York or UTC"
            )
        }),
        None => Ok(system_zone()),
    }
}

/// The host's zone: `TZ`, else `/etc/localtime`, else UTC. A `TZ` that
/// names no zone is reported and UTC used, as the C library does.
pub fn system_zone() -> TimeZone {
    match TimeZone::try_system() {
        Ok(zone) => zone,
        Err(error) => {
            if let Some(tz) = std::env::var_os("TZ") {
                eprintln!(
                    "memory-harness: TZ={} is not a time zone ({error}); using UTC",
                    tz.to_string_lossy()
                );
            }
            TimeZone::UTC
        }
    }
}

/// The zone's IANA name, else its offset now.
pub fn zone_name(zone: &TimeZone) -> String {
    match zone.iana_name() {
        Some(name) => name.to_string(),
        None => format_offset(offset_minutes_at(zone, system_now_ms())),
    }
}

pub fn system_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str) -> TimeZone {
        resolve_zone(Some(name)).unwrap()
    }

    #[test]
    fn dates_and_rfc3339() {
        assert_eq!(parse_now("1970-01-02").unwrap(), 86_400_000);
        assert_eq!(parse_now("2026-12-02").unwrap(), 1_796_169_600_000);
        assert_eq!(parse_now("1970-01-01T00:00:01Z").unwrap(), 1000);
        assert_eq!(parse_now("1970-01-01T01:00:00+01:00").unwrap(), 0);
        assert_eq!(
            parse_now("1970-01-01T00:00:00.25-00:30").unwrap(),
            1_800_250
        );
        for bad in [
            "2026-02-30",
            "yesterday",
            "2026-12-02T10:00",
            "2026-12-02T10:00:00",
            "2026-12-02T10:00Z",
            "2026-12-02T25:00:00Z",
            "",
        ] {
            assert!(parse_now(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_offset_written_is_kept_but_z_names_no_local_offset() {
        let at = |text| parse_time(text).unwrap().offset_minutes;
        assert_eq!(at("2026-12-02T23:30:00-05:00"), Some(-300));
        assert_eq!(at("2026-12-02T23:30:00+05:30"), Some(330));
        assert_eq!(at("2026-12-02T23:30:00+00:00"), Some(0));
        assert_eq!(at("2026-12-02T23:30:00-00:00"), None);
        assert_eq!(at("2026-12-02T23:30:00Z"), None);
        assert_eq!(at("2026-12-02"), None);
    }

    #[test]
    fn local_times_are_read_in_the_zone() {
        let lisbon = zone("Europe/Lisbon");
        let tokyo = zone("Asia/Tokyo");
        // Lisbon is on UTC in winter and UTC+1 in summer.
        assert_eq!(
            parse_local("2026-12-04T09:00", &lisbon).unwrap().ms,
            parse_now("2026-12-04T09:00:00Z").unwrap()
        );
        assert_eq!(
            parse_local("2026-07-04T09:00:30.5", &lisbon).unwrap().ms,
            parse_now("2026-07-04T08:00:30.5Z").unwrap()
        );
        assert_eq!(
            parse_local("2026-12-04 09:00", &tokyo).unwrap(),
            Parsed {
                ms: parse_now("2026-12-04T00:00:00Z").unwrap(),
                offset_minutes: None
            }
        );
        // An offset or Z wins over the zone; a bare date stays midnight UTC.
        assert_eq!(
            parse_local("2026-12-04T09:00-05:00", &tokyo).unwrap(),
            Parsed {
                ms: parse_now("2026-12-04T14:00:00Z").unwrap(),
                offset_minutes: Some(-300)
            }
        );
        assert_eq!(
            parse_local("2026-12-04", &tokyo).unwrap().ms,
            parse_now("2026-12-04").unwrap()
        );
        for bad in ["2026-12-04T9:00", "2026-12-04T09", "2026-12-04T24:00"] {
            assert!(parse_local(bad, &tokyo).is_err(), "{bad}");
        }
    }

    #[test]
    fn clock_changes_move_skipped_times_forward_and_take_the_first_of_repeated_ones() {
        let new_york = zone("America/New_York");
        // 2026-03-08 02:30 does not exist in New York: 03:30 EDT.
        assert_eq!(
            parse_local("2026-03-08T02:30", &new_york).unwrap().ms,
            parse_now("2026-03-08T03:30:00-04:00").unwrap()
        );
        // 2026-11-01 01:30 happens twice: the first, in EDT.
        assert_eq!(
            parse_local("2026-11-01T01:30", &new_york).unwrap().ms,
            parse_now("2026-11-01T01:30:00-04:00").unwrap()
        );
    }

    #[test]
    fn offsets_and_formats_follow_the_zone() {
        let new_york = zone("America/New_York");
        let winter = parse_now("2026-12-03T04:30:00Z").unwrap();
        let summer = parse_now("2026-07-03T04:30:00Z").unwrap();
        assert_eq!(offset_minutes_at(&new_york, winter), -300);
        assert_eq!(offset_minutes_at(&new_york, summer), -240);
        assert_eq!(offset_minutes_at(&zone("Asia/Kolkata"), winter), 330);
        assert_eq!(format_local(winter, &new_york), "2026-12-02T23:30:00-05:00");
        assert_eq!(
            format_local(winter + 250, &TimeZone::UTC),
            "2026-12-03T04:30:00.25+00:00"
        );
        assert_eq!(
            format_local_minute(summer, &new_york),
            "2026-07-03T00:30-04:00"
        );
        assert_eq!(
            instant_to_wall(winter, &new_york),
            parse_now("2026-12-02T23:30:00Z").unwrap()
        );
        assert_eq!(offset_minutes_at(&fixed_zone(-300).unwrap(), summer), -300);
        assert!(fixed_zone(19 * 60).is_err());
    }

    #[test]
    fn unknown_zones_are_a_clear_error() {
        let error = resolve_zone(Some("Mars/Olympus_Mons")).unwrap_err();
        assert!(error.to_string().contains("unknown time zone"), "{error:#}");
        assert_eq!(zone_name(&zone("utc")), "UTC");
    }
}
