import { test } from "node:test";
import assert from "node:assert/strict";
import { contextOf } from "../lib/adapt.js";
import { hostTimeZone, isTimeZone, localDate, parseLocalDateTime, resolveTimeZone, utcOffsetMinutes } from "../lib/time.js";

const at = (iso) => Date.parse(iso);

test("the offset follows DST on both sides of a change (Europe/Berlin, America/New_York)", () => {
  // Berlin springs forward at 01:00 UTC on 2026-03-29 and falls back at 01:00 UTC on 2026-10-25.
  assert.equal(utcOffsetMinutes("Europe/Berlin", at("2026-03-29T00:59:59Z")), 60);
  assert.equal(utcOffsetMinutes("Europe/Berlin", at("2026-03-29T01:00:00Z")), 120);
  assert.equal(utcOffsetMinutes("Europe/Berlin", at("2026-10-25T00:59:59.999Z")), 120);
  assert.equal(utcOffsetMinutes("Europe/Berlin", at("2026-10-25T01:00:00Z")), 60);
  // New York: 07:00 UTC on 2026-03-08, 06:00 UTC on 2026-11-01.
  assert.equal(utcOffsetMinutes("America/New_York", at("2026-03-08T06:59:59Z")), -300);
  assert.equal(utcOffsetMinutes("America/New_York", at("2026-03-08T07:00:00Z")), -240);
  assert.equal(utcOffsetMinutes("America/New_York", at("2026-11-01T05:59:59Z")), -240);
  assert.equal(utcOffsetMinutes("America/New_York", at("2026-11-01T06:00:00Z")), -300);
});

test("UTC, half-hour and far-east zones", () => {
  assert.equal(utcOffsetMinutes("UTC", at("2026-07-01T12:00:00Z")), 0);
  assert.equal(Object.is(utcOffsetMinutes("UTC", 0), 0), true, "not -0");
  assert.equal(utcOffsetMinutes("Asia/Kolkata", at("2026-01-15T00:00:00Z")), 330);
  assert.equal(utcOffsetMinutes("Asia/Kolkata", at("2026-07-15T00:00:00Z")), 330);
  assert.equal(utcOffsetMinutes("America/St_Johns", at("2026-01-15T00:00:00Z")), -210);
  assert.equal(utcOffsetMinutes("Asia/Kathmandu", at("2026-01-15T00:00:00Z")), 345);
  assert.equal(utcOffsetMinutes("Pacific/Kiritimati", at("2026-01-15T00:00:00Z")), 840);
  assert.equal(utcOffsetMinutes("Pacific/Pago_Pago", at("2026-01-15T00:00:00Z")), -660);
  // Before the epoch, and at a moment that is not a whole second.
  assert.equal(utcOffsetMinutes("Asia/Kolkata", at("1960-06-01T00:00:00Z")), 330);
  assert.equal(utcOffsetMinutes("Europe/Berlin", at("2026-03-29T01:00:00Z") - 0.5), 60);
});

test("an invalid zone falls back: the offset is UTC's, the resolved zone the next valid one", () => {
  assert.equal(isTimeZone("Mars/Olympus_Mons"), false);
  assert.equal(isTimeZone(""), false);
  assert.equal(isTimeZone(42), false);
  assert.equal(isTimeZone("Asia/Kolkata"), true);
  assert.equal(utcOffsetMinutes("Mars/Olympus_Mons", at("2026-07-01T12:00:00Z")), 0);
  assert.equal(resolveTimeZone({ configured: "Mars/Olympus_Mons", userTimezone: " Asia/Kolkata " }), "Asia/Kolkata");
  assert.equal(resolveTimeZone({ configured: "Europe/Berlin", userTimezone: "Asia/Kolkata" }), "Europe/Berlin", "the plugin's setting first");
  assert.equal(resolveTimeZone({ configured: undefined, userTimezone: "nowhere" }), hostTimeZone(), "then the host's");
  assert.equal(resolveTimeZone(), hostTimeZone());
});

test("the turn context carries the offset at the turn's instant", () => {
  assert.equal(contextOf({}, at("2026-07-01T12:00:00Z"), "Europe/Berlin").utcOffsetMinutes, 120);
  assert.equal(contextOf({}, at("2026-01-01T12:00:00Z"), "Europe/Berlin").utcOffsetMinutes, 60);
  assert.equal(contextOf({}, at("2026-01-01T12:00:00Z"), "Asia/Kolkata").utcOffsetMinutes, 330);
  assert.equal(contextOf({}, at("2026-01-01T12:00:00Z"), "Nowhere/Land").utcOffsetMinutes, 0);
});

test("local dates and offset-less times are the owner's wall clock", () => {
  assert.equal(localDate("Pacific/Kiritimati", at("2026-12-03T12:00:00Z")), "2026-12-04");
  assert.equal(localDate("America/New_York", at("2026-12-04T03:00:00Z")), "2026-12-03");
  assert.equal(parseLocalDateTime("2026-12-05T09:00", "America/New_York"), at("2026-12-05T14:00:00Z"));
  assert.equal(parseLocalDateTime("2026-12-05 09:00:30.5", "Asia/Kolkata"), at("2026-12-05T03:30:30.500Z"));
  assert.equal(parseLocalDateTime("2026-12-05", "Asia/Kolkata"), at("2026-12-04T18:30:00Z"), "a date is its local midnight");
  assert.equal(parseLocalDateTime("2026-12-05T09:00Z", "Asia/Kolkata"), at("2026-12-05T09:00:00Z"), "an explicit zone wins");
  assert.equal(parseLocalDateTime("2026-12-05T09:00-05:00", "Asia/Kolkata"), at("2026-12-05T14:00:00Z"));
  // A skipped time lands the gap later; a repeated one is the first.
  assert.equal(parseLocalDateTime("2026-03-29T02:30", "Europe/Berlin"), at("2026-03-29T01:30:00Z"));
  assert.equal(parseLocalDateTime("2026-10-25T02:30", "Europe/Berlin"), at("2026-10-25T00:30:00Z"));
  assert.equal(parseLocalDateTime("2026-03-08T02:30", "America/New_York"), at("2026-03-08T07:30:00Z"));
  assert.equal(parseLocalDateTime("2026-11-01T01:30", "America/New_York"), at("2026-11-01T05:30:00Z"));
  assert.ok(Number.isNaN(parseLocalDateTime("2026-02-30", "UTC")));
  assert.ok(Number.isNaN(parseLocalDateTime("2026-12-05T25:00", "UTC")));
  assert.ok(Number.isNaN(parseLocalDateTime("next Friday", "UTC")));
});
