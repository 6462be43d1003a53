import { test } from "node:test";
import assert from "node:assert/strict";
import { parseNow, parseTime } from "../conformance/clock.mjs";

// The same cases as `clock::tests` in host-harness/src/clock.rs.
test("dates and RFC 3339, strictly", () => {
  assert.equal(parseNow("1970-01-02"), 86_400_000);
  assert.equal(parseNow("2026-12-02"), 1_796_169_600_000);
  assert.equal(parseNow("1970-01-01T00:00:01Z"), 1000);
  assert.equal(parseNow("1970-01-01T01:00:00+01:00"), 0);
  assert.equal(parseNow("1970-01-01T00:00:00.25-00:30"), 1_800_250);
  for (const bad of ["2026-02-30", "yesterday", "2026-12-02T10:00", "2026-12-02T10:00:00", "2026-12-02T10:00Z", "2026-12-02T25:00:00Z", ""]) {
    assert.throws(() => parseNow(bad), undefined, bad);
  }
});

test("the offset written is kept, but Z names no local offset", () => {
  const at = (text) => parseTime(text).offsetMinutes;
  assert.equal(at("2026-12-02T23:30:00-05:00"), -300);
  assert.equal(at("2026-12-02T23:30:00+05:30"), 330);
  assert.equal(at("2026-12-02T23:30:00+00:00"), 0);
  assert.equal(at("2026-12-02T23:30:00-00:00"), undefined);
  assert.equal(at("2026-12-02T23:30:00Z"), undefined);
  assert.equal(at("2026-12-02"), undefined);
});
