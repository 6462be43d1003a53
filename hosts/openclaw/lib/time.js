// The owner's local time: the IANA time zone the plugin works in, resolved
// as OpenClaw resolves `agents.defaults.userTimezone` (`resolveUserTimezone`
// in OpenClaw's src/agents/date-time.ts: the configured zone if it is valid,
// else the host's, else UTC), with the plugin's own `timeZone` setting first;
// and that zone's offset from UTC at an instant, which travels to the
// component in every turn context (`utc-offset-minutes`): the component names
// daily notes, counts recall days and dates sweeps and wishes by the local
// date it gives.

const formatters = new Map(); // zone -> Intl.DateTimeFormat (wall-clock parts), or null when invalid

function wallClockFormatter(zone) {
  if (!formatters.has(zone)) {
    let formatter = null;
    try {
      formatter = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
        era: "short",
      });
    } catch {
      // RangeError: not a time zone this runtime knows.
    }
    formatters.set(zone, formatter);
  }
  return formatters.get(zone);
}

/** Whether `zone` is an IANA time zone (or `UTC`) this runtime knows. */
export function isTimeZone(zone) {
  return typeof zone === "string" && zone.trim() !== "" && wallClockFormatter(zone.trim()) !== null;
}

/** The host's own zone (what `Intl` says, `TZ` included), else UTC. */
export function hostTimeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone?.trim() || "UTC";
}

/**
 * The zone the plugin works in: the plugin's `timeZone` setting, else
 * OpenClaw's `agents.defaults.userTimezone`, each only when valid; else the
 * host's zone; else UTC.
 */
export function resolveTimeZone({ configured, userTimezone } = {}) {
  for (const zone of [configured, userTimezone]) {
    if (isTimeZone(zone)) return zone.trim();
  }
  return hostTimeZone();
}

/** The wall-clock fields of `ms` in `zone` (proleptic Gregorian, astronomical years). */
function wallClock(zone, ms) {
  const formatter = wallClockFormatter(zone) ?? wallClockFormatter("UTC");
  const parts = {};
  for (const { type, value } of formatter.formatToParts(ms)) parts[type] = value;
  const year = Number(parts.year);
  return {
    year: parts.era === "BC" || parts.era === "B" ? 1 - year : year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** `Date.UTC` that keeps years 0..99 as they are. */
function utcOf({ year, month, day, hour = 0, minute = 0, second = 0 }) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** The WIT's range for `utc-offset-minutes` (±18 h). */
const MAX_OFFSET_MINUTES = 1080;

/**
 * `zone`'s offset from UTC at the instant `ms`, in minutes, east positive
 * (DST-correct: the offset in force at that instant). An unknown zone is UTC.
 */
export function utcOffsetMinutes(zone, ms = Date.now()) {
  const instant = Math.floor(ms / 1000) * 1000; // the formatter shows whole seconds
  const minutes = Math.round((utcOf(wallClock(zone, instant)) - instant) / 60000);
  return Math.max(-MAX_OFFSET_MINUTES, Math.min(MAX_OFFSET_MINUTES, minutes)) || 0;
}

/** The local date of `ms` in `zone`, `YYYY-MM-DD` (as the component names daily notes). */
export function localDate(zone, ms = Date.now()) {
  const { year, month, day } = wallClock(zone, ms);
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/**
 * The instant a wall-clock time in `zone` names. A time skipped by a DST
 * change (spring forward) is read with the offset before the change, so it
 * lands the gap's length later; a repeated one (fall back) is the earlier.
 */
export function zonedTimeToMs(zone, fields) {
  const wall = utcOf(fields);
  const before = wall - utcOffsetMinutes(zone, wall - 86400000) * 60000;
  const first = wall - utcOffsetMinutes(zone, wall) * 60000;
  // Of the candidate instants, the earliest whose own offset names this wall time.
  const candidates = [before, first, wall - utcOffsetMinutes(zone, first) * 60000].sort((a, b) => a - b);
  return candidates.find((t) => t + utcOffsetMinutes(zone, t) * 60000 === wall) ?? before;
}

const LOCAL_ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?$/;

/**
 * An ISO 8601 date or date-time as an instant. With `Z` or an offset it is
 * that instant; without one it is a wall-clock time in `zone` (a date alone is
 * its local midnight), so "2026-12-05T09:00" means 9:00 where the owner is,
 * not where the host is. Anything else is `Date.parse`'s reading, or NaN.
 */
export function parseLocalDateTime(text, zone) {
  const trimmed = String(text ?? "").trim();
  const match = LOCAL_ISO.exec(trimmed);
  if (!match) return Date.parse(trimmed);
  const [, year, month, day, hour = "0", minute = "0", second = "0", fraction = "0"] = match;
  const fields = { year: +year, month: +month, day: +day, hour: +hour, minute: +minute, second: +second };
  const roundTrip = new Date(utcOf(fields));
  if (
    fields.month < 1 || fields.month > 12 || fields.hour > 23 || fields.minute > 59 || fields.second > 59 ||
    roundTrip.getUTCDate() !== fields.day
  ) {
    return NaN;
  }
  return zonedTimeToMs(zone, fields) + Math.floor(Number(`0.${fraction}`) * 1000);
}
