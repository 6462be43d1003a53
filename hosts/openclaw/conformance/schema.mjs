// The shape of `scenario.json`, checked as strictly as serde does it in
// host-harness/src/conformance.rs (`deny_unknown_fields`, typed fields): an
// unknown field or a value of the wrong type is an error, so a typo never
// silently turns a check off. Absent and `null` optional fields become
// `undefined`; defaults are filled in.

const U32_MAX = 2 ** 32 - 1;
const isRecord = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Integer types: a JSON integer (a BigInt when beyond 2^53) within range; returned as Number or BigInt. */
function integer(name, min, max, asBigInt = false) {
  return {
    name,
    read(v) {
      const ok = (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint";
      if (!ok || BigInt(v) < min || BigInt(v) > max) return fail(v, name);
      return asBigInt ? BigInt(v) : Number(v);
    },
  };
}

function fail(value, expected) {
  const shown = value === null ? "null" : Array.isArray(value) ? "a sequence" : isRecord(value) ? "a map" : JSON.stringify(value, (_, x) => (typeof x === "bigint" ? x.toString() : x));
  throw new Error(`invalid type or value: ${shown}, expected ${expected}`);
}

export const types = {
  string: { name: "a string", read: (v) => (typeof v === "string" ? v : fail(v, "a string")) },
  bool: { name: "a boolean", read: (v) => (typeof v === "boolean" ? v : fail(v, "a boolean")) },
  u8: integer("u8", 0n, 255n),
  u32: integer("u32", 0n, BigInt(U32_MAX)),
  u64: integer("u64", 0n, 2n ** 64n - 1n, true),
  usize: integer("usize", 0n, 2n ** 64n - 1n, true),
  i64: integer("i64", -(2n ** 63n), 2n ** 63n - 1n, true),
  /** An f32: any JSON number, rounded to f32 as serde's `as f32`. */
  f32: { name: "f32", read: (v) => (typeof v === "number" || typeof v === "bigint" ? Math.fround(Number(v)) : fail(v, "f32")) },
  /** Any JSON value (serde_json::Value). */
  value: { name: "any value", read: (v) => v },
  listOf(item) {
    return {
      name: `a sequence of ${item.name}`,
      read: (v) => (Array.isArray(v) ? v.map((x, i) => within(`[${i}]`, () => item.read(x))) : fail(v, `a sequence of ${item.name}`)),
    };
  },
  record(fields, what) {
    return { name: what, read: (v) => readRecord(v, fields, what) };
  },
};

/** A field: `{type, optional}` (null allowed, meaning absent), `required`, or `default` (absent only). */
export const optional = (type) => ({ type, optional: true });
export const required = (type) => ({ type, required: true });
export const withDefault = (type, value) => ({ type, default: value });

function within(where, read) {
  try {
    return read();
  } catch (error) {
    throw new Error(`${where}: ${error.message}`);
  }
}

/** Reads a JSON object as the record `fields` describes, refusing unknown fields. */
export function readRecord(raw, fields, what) {
  if (!isRecord(raw)) fail(raw, what);
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(fields, key)) {
      throw new Error(`unknown field \`${key}\` in ${what}, expected one of ${Object.keys(fields).map((k) => `\`${k}\``).join(", ")}`);
    }
  }
  const out = {};
  for (const [key, field] of Object.entries(fields)) {
    const present = Object.hasOwn(raw, key);
    if (!present) {
      if (field.required) throw new Error(`missing field \`${key}\` in ${what}`);
      out[key] = typeof field.default === "function" ? field.default() : field.default;
      continue;
    }
    const value = raw[key];
    out[key] = value === null && field.optional ? undefined : within(key, () => field.type.read(value));
  }
  return out;
}

const { string, bool, u8, u32, u64, usize, i64, f32, value, listOf, record } = types;
/** A JSON object of any values (serde_json::Map). */
const map = { name: "a map", read: (v) => (isRecord(v) ? v : fail(v, "a map")) };

const intentFields = {
  text: required(string),
  triggers: withDefault(listOf(string), () => []),
  due_at: optional(string),
  channel: optional(string),
  sender: optional(string),
  expires_in_ms: optional(i64),
  fire_budget: optional(u32),
  cooldown_ms: optional(i64),
  semantic: withDefault(bool, false),
};

const gateFields = {
  min_score: optional(f32),
  min_recalls: optional(u32),
  min_unique_queries: optional(u32),
  recency_half_life_days: optional(f32),
  max_promotions: optional(u32),
};

const stepFields = {
  op: required(string),
  note: optional(string),
  now: optional(string),
  query: optional(string),
  path: optional(string),
  target: optional(string),
  content: optional(string),
  bytes_hex: optional(string),
  repeat: optional(usize),
  start_line: optional(u32),
  end_line: optional(u32),
  max_results: optional(u32),
  min_score: optional(f32),
  max_files: optional(u32),
  force: withDefault(bool, false),
  // `sync`: a sync the user asked for unless false (a host's own sync).
  acknowledge_rebuild: withDefault(bool, true),
  known_digest: optional(string),
  text: optional(string),
  origin: optional(string),
  taint: optional(string),
  owner: optional(bool),
  // Absent: interactive; JSON null: none (unknown).
  session_kind: { type: string, optional: true, default: "interactive" },
  session_id: optional(string),
  importance: optional(u8),
  triggers: withDefault(listOf(string), () => []),
  supersedes_key: optional(string),
  transcript: optional(listOf(value)),
  transcript_text: optional(string),
  token_estimate: optional(u32),
  context_window: optional(u32),
  reserve_tokens: optional(u32),
  compaction_cycle: optional(u32),
  soft_threshold_tokens: optional(u32),
  timeout_ms: optional(u32),
  directive: optional(string),
  replaces_line: optional(u32),
  expected_hash: optional(string),
  remember_across_conversations: optional(bool),
  message: optional(string),
  mode: optional(string),
  intent: optional(record(intentFields, "an intent")),
  id: optional(i64),
  at: optional(string),
  channel: optional(string),
  sender: optional(string),
  active_projects: withDefault(listOf(string), () => []),
  phases: withDefault(listOf(string), () => []),
  dry_run: withDefault(bool, false),
  gates: optional(record(gateFields, "the gates")),
  marker: optional(string),
  expect: optional(value),
  expect_error: optional(value),
};

const scenarioFields = {
  description: required(string),
  now: optional(string),
  embedder: optional(string),
  // Checked by the component (`config.resolve`), by their names (session.mjs).
  settings: withDefault(map, () => ({})),
  model_replies: optional(listOf(value)),
  steps: required(listOf(record(stepFields, "a step"))),
};

/** A scripted reply (`ScriptedReply` in model.rs). */
const replyFields = {
  text: optional(string),
  tool_calls: optional(listOf(value)),
  error: optional(string),
  message: optional(string),
  delay_ms: optional(u64),
  append_to: optional(string),
  append_text: optional(string),
};

/** A parsed scenario.json, validated. */
export function readScenario(json) {
  return readRecord(json, scenarioFields, "a scenario");
}

/** One scripted reply, validated as `Scripted::load` does: text and/or tool calls, or an error. */
export function readReply(json, number) {
  const reply = within(`the model script line ${number}: not a scripted reply`, () => readRecord(json, replyFields, "a scripted reply"));
  const answers = reply.text !== undefined || reply.tool_calls !== undefined;
  if (answers === (reply.error !== undefined)) {
    throw new Error(`the model script line ${number}: give \`text\` and/or \`tool_calls\`, or \`error\``);
  }
  return reply;
}
