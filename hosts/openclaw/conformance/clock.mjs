// The scenario clock: `YYYY-MM-DD` (midnight UTC) or RFC 3339
// (`2026-12-02T09:30:00Z`, `…+01:00`, fractions allowed) to milliseconds
// since the Unix epoch, and the numeric offset it was written with. A port
// of `parse_time` in host-harness/src/clock.rs, with its strictness:
// two-digit fields, an offset required, real dates only.

/** Rust's `str::trim`: Unicode White_Space at both ends (JS trim also strips U+FEFF). */
export const rustTrim = (text) => text.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, "");

/** Milliseconds since the epoch of `text`; throws on anything else. */
export function parseNow(text) {
  return parseTime(text).ms;
}

/**
 * `{ms, offsetMinutes}` of `text`: `offsetMinutes` is the numeric offset it
 * was written with (`+01:00`: 60), undefined for `Z`, `-00:00` and a bare date.
 */
export function parseTime(text) {
  const trimmed = rustTrim(text);
  const at = trimmed.search(/[Tt ]/);
  const [date, time] = at < 0 ? [trimmed, undefined] : [trimmed.slice(0, at), trimmed.slice(at + 1)];
  let days;
  try {
    days = daysFromDate(date);
  } catch (error) {
    throw new Error(`${JSON.stringify(trimmed)} is not YYYY-MM-DD or RFC 3339: ${error.message}`);
  }
  let ms = days * 86_400_000;
  let written;
  if (time !== undefined) {
    const [clock, offsetMinutes, numeric] = splitOffset(time);
    if (numeric) written = offsetMinutes;
    const [hourText, minuteText, secondsText] = splitN(clock, ":", 3);
    const hour = parseField(hourText, 0, 23, "hour");
    const minute = parseField(minuteText, 0, 59, "minute");
    if (secondsText === undefined) throw new Error("RFC 3339 times need seconds");
    const dot = secondsText.indexOf(".");
    const [whole, fraction] = dot < 0 ? [secondsText, ""] : [secondsText.slice(0, dot), secondsText.slice(dot + 1)];
    const second = parseField(whole, 0, 60, "second");
    let millis = 0;
    if (fraction !== "") {
      if (!/^[0-9]+$/.test(fraction)) throw new Error(`bad fraction of a second in ${JSON.stringify(trimmed)}`);
      millis = Number(fraction.padEnd(3, "0").slice(0, 3));
    }
    ms += ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis;
  }
  return { ms, offsetMinutes: written };
}

/** Rust's `splitn(n, sep)`: at most n parts, the last one keeping the rest. */
function splitN(text, separator, n) {
  const parts = text.split(separator);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(separator)];
}

/** [clock, offset in minutes, whether it is numeric (not `Z` or `-00:00`)] */
function splitOffset(time) {
  if (/[Zz]$/.test(time)) return [time.slice(0, -1), 0, false];
  const pos = Math.max(time.lastIndexOf("+"), time.lastIndexOf("-"));
  if (pos < 0) throw new Error(`RFC 3339 times need an offset (Z or ±HH:MM): ${JSON.stringify(time)}`);
  const [clock, offset] = [time.slice(0, pos), time.slice(pos)];
  const sign = offset.startsWith("-") ? -1 : 1;
  const colon = offset.indexOf(":", 1);
  if (colon < 0) throw new Error("offsets look like +01:00");
  const minutes =
    parseField(offset.slice(1, colon), 0, 23, "offset hour") * 60 + parseField(offset.slice(colon + 1), 0, 59, "offset minute");
  if (minutes === 0) return [clock, 0, sign > 0];
  return [clock, sign * minutes, true];
}

function parseField(text, min, max, what) {
  if (text === undefined) throw new Error(`missing ${what}`);
  if (!/^[0-9]{2}$/.test(text)) throw new Error(`bad ${what}: ${JSON.stringify(text)}`);
  const value = Number(text);
  if (value < min || value > max) throw new Error(`${what} ${value} is out of range`);
  return value;
}

/** Rust's `str::parse::<i64>` for the date's fields: an optional sign and digits. */
function parseInteger(text) {
  if (!/^[+-]?[0-9]+$/.test(text)) throw new Error(`invalid digit in ${JSON.stringify(text)}`);
  return Number(text);
}

function daysFromDate(date) {
  const bytes = Buffer.from(date, "utf8");
  if (bytes.length !== 10 || date.length !== 10 || date[4] !== "-" || date[7] !== "-") throw new Error("not YYYY-MM-DD");
  let y = parseInteger(date.slice(0, 4));
  const m = parseInteger(date.slice(5, 7));
  const d = parseInteger(date.slice(8, 10));
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (m < 1 || m > 12 || d < 1 || d > monthDays[m - 1]) throw new Error("no such date");
  // Howard Hinnant's days_from_civil (integer division truncating, as in Rust).
  if (m <= 2) y -= 1;
  const era = Math.trunc((y >= 0 ? y : y - 399) / 400);
  const yoe = y - era * 400;
  const doy = Math.trunc((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.trunc(yoe / 4) - Math.trunc(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}
