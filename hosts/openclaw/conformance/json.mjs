// JSON as the Rust runner (serde_json) sees and writes it, so that what this
// runner sends the component and prints is what the wasmtime runner would:
// integers beyond 2^53 stay exact, objects are written with their keys sorted
// (serde_json's map is a BTreeMap), compact by default. One difference: a
// float with an integral value prints as `1` (JavaScript has one number
// type) where serde writes `1.0`; the matcher compares numbers, not text.

/** Parses JSON, keeping integers that a double cannot hold as BigInt (serde keeps them as i64/u64). */
export function parseJson(text) {
  return JSON.parse(text, (_key, value, context) => {
    if (typeof value !== "number" || Number.isSafeInteger(value)) return value;
    const source = context?.source ?? "";
    if (!/^-?\d+$/.test(source)) return value;
    const exact = BigInt(source);
    const fitsSerdeInteger = exact >= -(2n ** 63n) && exact < 2n ** 64n;
    return fitsSerdeInteger ? exact : value; // serde reads larger integers as f64
  });
}

/** Byte-wise (UTF-8) order of two strings: BTreeMap<String> order. */
export function compareUtf8(a, b) {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Sorted keys of an object, in serde_json's order. */
export function sortedKeys(object) {
  return Object.keys(object).sort(compareUtf8);
}

/** serde_json's text of a number (integers as integers, exponents without `+`). */
function numberText(value) {
  if (typeof value === "bigint") return value.toString();
  if (!Number.isFinite(value)) return "null";
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 64) return BigInt(value).toString();
  return String(value).replace("e+", "e");
}

/**
 * serde_json's `Display` (compact) or `{:#}` (pretty, two spaces) of a value.
 * Strings are escaped as JSON.stringify does, which is serde_json's escaping
 * too (`\"`, `\\`, `\b\f\n\r\t`, other controls as lowercase `\u00xx`).
 */
export function toJsonText(value, { pretty = false } = {}) {
  return write(value, pretty ? "\n" : "");
}

function write(value, newline) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number" || typeof value === "bigint") return numberText(value);
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  const inner = newline ? `${newline}  ` : "";
  const separator = newline ? ": " : ":";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => inner + write(item, inner));
    return `[${items.join(",")}${newline}]`;
  }
  const keys = sortedKeys(value);
  if (keys.length === 0) return "{}";
  const entries = keys.map((key) => inner + JSON.stringify(key) + separator + write(value[key], inner));
  return `{${entries.join(",")}${newline}}`;
}
