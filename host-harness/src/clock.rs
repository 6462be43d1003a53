//! `--now`: a fixed clock for reproducible runs, as `YYYY-MM-DD` (midnight
//! UTC) or RFC 3339 (`2026-12-02T09:30:00Z`, `…+01:00`, fractions allowed).

use anyhow::{bail, Context};

pub fn parse_now(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    let (date, time) = match text.split_once(['T', 't', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let days =
        days_from_date(date).with_context(|| format!("{text:?} is not YYYY-MM-DD or RFC 3339"))?;
    let mut ms = days * 86_400_000;
    if let Some(time) = time {
        let (clock, offset_minutes) = split_offset(time)?;
        let mut parts = clock.splitn(3, ':');
        let hour: i64 = parse_field(parts.next(), 0..=23, "hour")?;
        let minute: i64 = parse_field(parts.next(), 0..=59, "minute")?;
        let seconds_text = parts.next().context("RFC 3339 times need seconds")?;
        let (whole, fraction) = seconds_text.split_once('.').unwrap_or((seconds_text, ""));
        let second: i64 = parse_field(Some(whole), 0..=60, "second")?;
        let millis: i64 = if fraction.is_empty() {
            0
        } else if fraction.bytes().all(|b| b.is_ascii_digit()) {
            format!("{fraction:0<3}")[..3].parse()?
        } else {
            bail!("bad fraction of a second in {text:?}")
        };
        ms += ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000 + millis;
    }
    Ok(ms)
}

fn split_offset(time: &str) -> anyhow::Result<(&str, i64)> {
    if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        return Ok((clock, 0));
    }
    let Some(pos) = time.rfind(['+', '-']) else {
        bail!("RFC 3339 times need an offset (Z or ±HH:MM): {time:?}");
    };
    let (clock, offset) = time.split_at(pos);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let (h, m) = offset[1..]
        .split_once(':')
        .context("offsets look like +01:00")?;
    let minutes = parse_field(Some(h), 0..=23, "offset hour")? * 60
        + parse_field(Some(m), 0..=59, "offset minute")?;
    Ok((clock, sign * minutes))
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

pub fn system_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "2026-12-02T25:00:00Z",
            "",
        ] {
            assert!(parse_now(bad).is_err(), "{bad}");
        }
    }
}
