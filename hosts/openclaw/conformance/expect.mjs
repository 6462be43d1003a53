// The matcher of tests/conformance/README.md ("The matcher"), ported from
// `check` and `check_operator` in host-harness/src/conformance/expect.rs: objects
// match on the keys the pattern names, arrays element by element with equal
// length, numbers within 1e-6, other scalars by equality, and `$` operators.
// Keys are visited in serde_json's (sorted) order so that the first failure
// reported is the one the Rust runner reports.

import { sortedKeys, toJsonText } from "./json.mjs";

/** Thrown by `check`: where the pattern failed and why. */
export class Mismatch extends Error {}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNumber = (v) => typeof v === "number" || typeof v === "bigint";
const show = (v) => toJsonText(v);

/** Rust's `{}` of an f64: no exponent, integers without a fraction. */
function showF64(x) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 2 ** 64) return BigInt(x).toString();
  return Math.abs(x) >= 1e-6 ? String(x) : x.toFixed(20).replace(/0+$/, "");
}

/** Throws a Mismatch unless `actual` satisfies the pattern `expected`. */
export function check(expected, actual, at) {
  if (isObject(expected)) {
    const keys = sortedKeys(expected);
    if (keys.some((k) => k.startsWith("$"))) {
      for (const op of keys) checkOperator(op, expected[op], actual, at);
      return;
    }
    if (!isObject(actual)) throw new Mismatch(`${at}: expected an object, got ${show(actual)}`);
    for (const key of keys) {
      const child = Object.hasOwn(actual, key) ? actual[key] : null;
      check(expected[key], child, `${at}.${key}`);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length !== actual.length) {
      throw new Mismatch(`${at}: expected ${expected.length} elements, got ${actual.length}: ${show(actual)}`);
    }
    expected.forEach((item, i) => check(item, actual[i], `${at}[${i}]`));
    return;
  }
  if (isNumber(expected) && isNumber(actual)) {
    const [e, a] = [Number(expected), Number(actual)];
    if (Math.abs(e - a) <= 1e-6) return;
    throw new Mismatch(`${at}: expected ${showF64(e)}, got ${showF64(a)}`);
  }
  if (sameScalar(expected, actual)) return;
  throw new Mismatch(`${at}: expected ${show(expected)}, got ${show(actual)}`);
}

/** `check`, with `shown` (the full actual value) added to a mismatch's message. */
export function checkOrExplain(expected, actual, at, shown) {
  try {
    check(expected, actual, at);
  } catch (error) {
    if (error instanceof Mismatch) throw new Error(`${error.message}\n${shown}`);
    throw error;
  }
}

/** Whether `check` accepts `actual`, as a boolean. */
export function matches(expected, actual, at) {
  try {
    check(expected, actual, at);
    return true;
  } catch (error) {
    if (error instanceof Mismatch) return false;
    throw error;
  }
}

/** serde_json `Value` equality for what is left: strings, booleans, null (arrays and objects never get here equal). */
function sameScalar(a, b) {
  if (Array.isArray(a) || Array.isArray(b) || isObject(a) || isObject(b)) return false;
  return a === b;
}

function checkOperator(op, arg, actual, at) {
  const fail = (what) => {
    throw new Mismatch(`${at}: ${what}`);
  };
  const number = (v) => (isNumber(v) ? Number(v) : fail(`expected a number, got ${show(v)}`));
  const array = (v) => (Array.isArray(v) ? v : fail(`expected an array, got ${show(v)}`));
  switch (op) {
    case "$len":
    case "$min_len":
    case "$max_len": {
      // A string is counted in characters (Unicode scalar values), as Rust's chars().count().
      const n = typeof actual === "string" ? [...actual].length : array(actual).length;
      const want = number(arg);
      const ok = op === "$len" ? n === want : op === "$min_len" ? n >= want : n <= want;
      if (!ok) fail(`${op} ${showF64(want)}, got length ${n}: ${show(actual)}`);
      return;
    }
    case "$contains":
    case "$not_contains": {
      const items = array(actual);
      for (const wanted of array(arg)) {
        const present = items.some((item) => matches(wanted, item, at));
        if (present !== (op === "$contains")) fail(`${op} ${show(wanted)} failed in ${show(actual)}`);
      }
      return;
    }
    case "$substr":
    case "$not_substr": {
      if (typeof arg !== "string") throw new Mismatch("$substr needs a string");
      if (typeof actual !== "string") fail(`expected a string, got ${show(actual)}`);
      if (actual.includes(arg) !== (op === "$substr")) fail(`${op} ${show(arg)} failed in ${show(actual)}`);
      return;
    }
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte": {
      const [a, b] = [number(actual), number(arg)];
      const ok = { $gt: a > b, $gte: a >= b, $lt: a < b, $lte: a <= b }[op];
      if (!ok) fail(`expected ${op} ${showF64(b)}, got ${showF64(a)}`);
      return;
    }
    case "$absent_or_null":
      if (actual !== null && actual !== undefined) fail(`expected null, got ${show(actual)}`);
      return;
    default:
      fail(`unknown operator ${op}`);
  }
}
