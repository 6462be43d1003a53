// The one rule between the component's WIT values, as jco takes and gives
// them, and the JSON of a scenario, in both directions, from the WIT types
// alone (tests/conformance/calls.json; the grammar is `describe_type` in
// host-harness/src/driver/wit_json.rs, the rule the README's "Values").
// No function's shape is known here.
//
// - record: an object keyed by field name, `-` written `_` (jco: lowerCamelCase);
// - enum: the case name; flags: the list of the flags set (jco: an object of booleans);
// - variant: `{"kind": case, "value": payload}` (jco: `{tag, val}`);
// - option: `null` or the value (jco: `undefined` for none);
// - result: `{"ok": …}` or `{"err": …}` (jco: `{tag, val}`);
// - list and tuple: an array; integers and floats: numbers (jco: BigInt for
//   s64/u64; a float that is not finite: `null`); bool, char, string as themselves.
//
// Into the component, a record field that is absent is `none` for an option,
// empty for a list and `false` for a bool; any other absent or unknown field
// is an error naming its path. Fields named in `defaults` (the turn context,
// the dream gates) start from the given object and take the step's fields
// over it, also when the field is an option and absent.

import { toJsonText } from "./json.mjs";

/** A WIT name as a scenario's JSON key: `start-line` → `start_line`. */
export const jsonKey = (name) => name.replaceAll("-", "_");

/** A WIT name as jco spells it: `start-line` → `startLine`. */
export const camel = (name) => name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());

/** A resource's name as jco's class: `memory` → `Memory`. */
export const pascal = (name) => camel(name).replace(/^./, (c) => c.toUpperCase());

/** `[kind, inner]` of a type: a primitive's name, or the one key of a compound (`record`, `list`, …) and its value. */
export const kindOf = (type) => (typeof type === "string" ? [type, null] : Object.entries(type)[0]);

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The JSON of a value jco returned, of WIT type `type`. */
export function fromJco(type, value) {
  const [kind, inner] = kindOf(type);
  switch (kind) {
    case "list":
      return Array.from(value, (item) => fromJco(inner, item)); // also a typed array
    case "tuple":
      return inner.map((t, i) => fromJco(t, value[i]));
    case "option":
      return value === undefined || value === null ? null : fromJco(inner, value);
    case "record":
      return Object.fromEntries(inner.map((f) => [jsonKey(f.name), fromJco(f.type, value[camel(f.name)])]));
    case "variant":
      return variantFromJco(inner, value);
    case "enum":
      return value;
    case "flags":
      return inner.filter((name) => value[camel(name)]);
    case "result":
      return value.tag === "ok" ? { ok: payloadFromJco(inner.ok, value.val) } : { err: payloadFromJco(inner.err, value.val) };
    case "borrow":
    case "own":
      return "<handle>";
    default:
      return primitiveFromJco(kind, value);
  }
}

/** A variant case as `{"kind", "value"}`: the component's `error` renders as `{"kind": "not-found", "value": "…"}`. */
function variantFromJco(cases, value) {
  const found = cases.find((c) => c.name === value.tag);
  return { kind: value.tag, value: payloadFromJco(found?.type ?? null, value.val) };
}

/** A payload that the type may not have (a variant case, a result side): null without one. */
const payloadFromJco = (type, value) => (type === null ? null : fromJco(type, value));

function primitiveFromJco(kind, value) {
  if (kind === "f32" || kind === "f64") return Number.isFinite(value) ? value : null;
  if (typeof value !== "bigint") return value;
  // s64/u64: a number, kept a BigInt beyond 2^53 so that it prints exactly (as serde does).
  return Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

/** The jco value of WIT type `type` from scenario JSON; `at` names the place in errors. */
export function intoJco(type, json, defaults, at) {
  const [kind, inner] = kindOf(type);
  const wrong = () => new Error(`${at}: expected ${kind}, got ${toJsonText(json)}`);
  switch (kind) {
    case "list":
      if (!Array.isArray(json)) throw wrong();
      return json.map((item, i) => intoJco(inner, item, defaults, `${at}[${i}]`));
    case "tuple":
      if (!Array.isArray(json) || json.length !== inner.length) throw wrong();
      return inner.map((t, i) => intoJco(t, json[i], defaults, `${at}[${i}]`));
    case "option":
      return json === null ? undefined : intoJco(inner, json, defaults, at);
    case "record":
      if (!isObject(json)) throw wrong();
      return fieldsIntoJco(inner, json, defaults, at);
    case "variant":
      if (!isObject(json) || typeof json.kind !== "string") throw wrong();
      return variantIntoJco(inner, json, defaults, at);
    case "enum":
      if (typeof json !== "string") throw wrong();
      if (!inner.includes(json)) throw new Error(`${at}: \`${json}\` is not one of ${inner.join(", ")}`);
      return json;
    case "flags":
      if (!Array.isArray(json)) throw wrong();
      return flagsIntoJco(inner, json, at);
    case "result":
      if (!isObject(json) || Object.hasOwn(json, "ok") === Object.hasOwn(json, "err")) throw wrong();
      return resultIntoJco(inner, json, defaults, at);
    default:
      return primitiveIntoJco(kind, json, at, wrong);
  }
}

/** A record's fields (or a function's parameters) from a JSON object, as jco's object of camelCase fields. */
export function fieldsIntoJco(fields, object, defaults, at) {
  // Unknown names first: a typo also leaves its field missing.
  const known = fields.map((f) => jsonKey(f.name));
  const unknown = Object.keys(object).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new Error(`${at}: unknown field \`${unknown}\`; the fields are ${known.join(", ")}`);
  return Object.fromEntries(fields.map((f) => [camel(f.name), fieldIntoJco(f, object, defaults, `${at}.${jsonKey(f.name)}`)]));
}

function fieldIntoJco({ name, type }, object, defaults, path) {
  const key = jsonKey(name);
  const given = Object.hasOwn(object, key) ? object[key] : undefined;
  if (Object.hasOwn(defaults, key)) {
    // A defaulted record stands in for an absent option too (`recall.get`'s
    // context); an optional one given as `null` is none.
    const [kind, inner] = kindOf(type);
    if (kind === "option" && given === null) return undefined;
    return intoJco(kind === "option" ? inner : type, merge(defaults[key], given, path), defaults, path);
  }
  if (given !== undefined) return intoJco(type, given, defaults, path);
  return absent(type, path);
}

/** `given`'s fields over `fallback`'s. */
function merge(fallback, given, at) {
  if (given === undefined) return fallback;
  if (!isObject(given)) throw new Error(`${at}: expected an object, got ${toJsonText(given)}`);
  return { ...fallback, ...given };
}

/** The value of a record field the step left out, where it has one. */
function absent(type, path) {
  const [kind] = kindOf(type);
  if (kind === "option") return undefined;
  if (kind === "list") return [];
  if (kind === "bool") return false;
  throw new Error(`${path} is missing (a ${kind})`);
}

function variantIntoJco(cases, json, defaults, at) {
  const found = cases.find((c) => c.name === json.kind);
  if (found === undefined) throw new Error(`${at}: no case \`${json.kind}\``);
  const given = Object.hasOwn(json, "value");
  if (found.type === null) {
    if (given && json.value !== null) throw new Error(`${at}: case \`${json.kind}\` has no value`);
    return { tag: json.kind };
  }
  if (!given) throw new Error(`${at}: case \`${json.kind}\` needs a \`value\``);
  return { tag: json.kind, val: intoJco(found.type, json.value, defaults, `${at}.value`) };
}

function flagsIntoJco(names, json, at) {
  for (const name of json) {
    if (!names.includes(name)) throw new Error(`${at}: no flag \`${name}\``);
  }
  return Object.fromEntries(names.map((name) => [camel(name), json.includes(name)]));
}

function resultIntoJco(sides, json, defaults, at) {
  const tag = Object.hasOwn(json, "ok") ? "ok" : "err";
  const type = sides[tag];
  return { tag, val: type === null ? undefined : intoJco(type, json[tag], defaults, at) };
}

/** Integer types by name: their bounds. */
const INTEGERS = Object.fromEntries(
  [8n, 16n, 32n, 64n].flatMap((bits) => [
    [`s${bits}`, [-(2n ** (bits - 1n)), 2n ** (bits - 1n) - 1n]],
    [`u${bits}`, [0n, 2n ** bits - 1n]],
  ]),
);

function primitiveIntoJco(kind, json, at, wrong) {
  switch (kind) {
    case "bool":
      if (typeof json !== "boolean") throw wrong();
      return json;
    case "string":
      if (typeof json !== "string") throw wrong();
      return json;
    case "char":
      if (typeof json !== "string" || [...json].length !== 1) throw wrong();
      return json;
    case "f32":
    case "f64":
      if (typeof json !== "number" && typeof json !== "bigint") throw wrong();
      return Number(json);
  }
  if (!Object.hasOwn(INTEGERS, kind)) throw new Error(`${at}: a ${kind} cannot be written in a scenario`);
  return integerIntoJco(kind, json, at);
}

/** An integer within its type's bounds (jco would wrap one that is not): a BigInt for s64/u64. */
function integerIntoJco(kind, json, at) {
  if (typeof json !== "bigint" && !Number.isInteger(json)) throw new Error(`${at}: expected an integer, got ${toJsonText(json)}`);
  const [min, max] = INTEGERS[kind];
  if (BigInt(json) < min || BigInt(json) > max) throw new Error(`${at}: ${toJsonText(json)} is out of range`);
  return kind.endsWith("64") ? BigInt(json) : Number(json);
}
