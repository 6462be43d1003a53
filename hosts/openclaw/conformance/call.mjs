// A component call step (`call`): the function named `<interface>.<function>`
// with its arguments as data, built into jco values by the one rule of
// values.mjs from the types in tests/conformance/calls.json, and its answer
// rendered back by the same rule. Nothing here knows any function's shape;
// the only per-call knowledge is which calls must leave the Markdown
// unchanged or only appended to. A port of host-harness/src/driver/calls.rs
// and conformance/call.rs, but for the call deadline's extra time: under
// MemoryComponent, time the guest waits on the model does not count against
// the deadline, so `dream.run` needs none on top. The call is made by name
// in the instance's thread, the open memory standing in for a borrow.

import fs from "node:fs";
import { MEMORY, MemoryError } from "./plugin.mjs";
import { parseNow } from "./clock.mjs";
import { checkOrExplain } from "./expect.mjs";
import { checkFraming, framedAsTrusted } from "./framing.mjs";
import { toJsonText } from "./json.mjs";
import { camel, fieldsIntoJco, fromJco, kindOf } from "./values.mjs";
import * as files from "./workspace.mjs";

/** Calls that only read Markdown: a change to any file outside `.memory/` fails the step. */
const READ_CALLS = new Set([
  "store.sync",
  "store.status",
  "recall.search",
  "recall.get",
  "bootstrap.load",
  "inject.trigger-inject",
  "report.gather",
]);
/** Calls that may write Markdown, only by appending. (`write.forget` removes lines; its scenarios check the files themselves.) */
const APPEND_CALLS = new Set(["write.note", "write.ingest", "write.flush", "intents.create"]);

/** The component's calls and their WIT types, found in the repository (not beside a scenario: the poisoning suite is written to a temporary directory). */
const CALLS_FILE = new URL("../../../tests/conformance/calls.json", import.meta.url);
const GUEST_WORKSPACE = "/workspace";

let described;
/** A call's entry in calls.json (`{call, interface, function, params, result}`); the file is read once. */
function lookup(name) {
  described ??= new Map(JSON.parse(fs.readFileSync(CALLS_FILE, "utf8")).calls.map((c) => [c.call, c]));
  const call = described.get(name);
  if (call === undefined) throw new Error(`the component exports no \`${name}\`; it exports ${[...described.keys()].sort().join(", ")}`);
  return call;
}

const isBorrow = (param) => kindOf(param.type)[0] === "borrow";

/**
 * The calls of one scenario's session, and the defaults of the records a
 * request may leave out: the turn context (from the session's clock and
 * projects) and the dream gates (the component's own, resolved).
 */
export class Calls {
  #session;
  /** The component's own dream gates, asked for the first time a call takes gates, so setting up touches no instance. */
  #gates;

  constructor(session) {
    this.#session = session;
  }

  /** The dream gates a request leaves out: `config.resolve("/workspace", "{}")`'s. */
  /** As an answer: `{ok: gates}`, or the component's error (a memory that cannot be opened answers every call with it). */
  async #defaultGates() {
    if (this.#gates === undefined) {
      const resolved = await this.answer("config.resolve", { workspace: GUEST_WORKSPACE, settings_json: "{}" });
      if (Object.hasOwn(resolved, "err")) return resolved;
      this.#gates = resolved.ok.dream_gates;
    }
    return { ok: this.#gates };
  }

  /** Runs a call step: the call (`repeat` times), the file invariants, and the step's expectation. */
  async run(step, workspace) {
    const name = step.call;
    const args = step.args ?? {};
    const watched = READ_CALLS.has(name) || APPEND_CALLS.has(name);
    const before = watched ? files.snapshot(workspace) : null;
    // `repeat`: the same call N times (recall signals); the last answer is
    // checked, and every earlier one must succeed.
    for (let n = 1; n < (step.repeat ?? 1); n += 1) {
      const earlier = await this.answer(name, args);
      if (Object.hasOwn(earlier, "err")) throw new Error(`a repeated call failed: ${toJsonText(earlier.err)}`);
    }
    const answer = await this.answer(name, args);
    if (before !== null) checkMarkdownKept(name, workspace, before);
    checkAnswer(step, answer);
  }

  /**
   * Makes the call and renders its answer as a `result` is: `{ok}`, or
   * `{err}` for the component's error; a trap or a host failure throws.
   */
  async answer(name, args) {
    const call = lookup(name);
    const resolved = await this.#resolveHelpers(args);
    const defaults = { context: turnContext(this.#session) };
    if (call.params.some((p) => hasField(p.type, "gates"))) {
      const gates = await this.#defaultGates();
      if (Object.hasOwn(gates, "err")) return gates;
      defaults.gates = gates.ok;
    }
    const built = fieldsIntoJco(call.params.filter((p) => !isBorrow(p)), resolved, defaults, "$args");
    const params = call.params.map((p) => (isBorrow(p) ? MEMORY : built[camel(p.name)]));
    let outcome;
    try {
      outcome = await this.#session.memory.invoke(call.interface, call.function, params, { command: name, outcome: true });
    } catch (error) {
      // The instance's `open` refused the workspace: every call answers with
      // that error, rendered as any variant is.
      if (error instanceof MemoryError && !error.trapped) return { err: { kind: error.kind, value: error.detail } };
      throw new Error(`the call failed: ${describeFailure(error)}`);
    }
    return render(call.result, outcome);
  }

  /**
   * Replaces the argument helpers: `{"$time": "2026-12-03T09:00:00Z"}` (the
   * time in ms), `{"$jsonl": [...]}` (one JSON text per line) and
   * `{"$call": "user.show", "field": "hash"}` (a field of another call's
   * answer, made just before).
   */
  async #resolveHelpers(value) {
    if (Array.isArray(value)) {
      const items = [];
      for (const item of value) items.push(await this.#resolveHelpers(item));
      return items;
    }
    if (value === null || typeof value !== "object") return value;
    checkHelperKeys(value);
    if (Object.hasOwn(value, "$time")) {
      if (typeof value.$time !== "string") throw new Error("$time needs a date or time");
      return parseNow(value.$time);
    }
    if (Object.hasOwn(value, "$jsonl")) {
      if (!Array.isArray(value.$jsonl)) throw new Error("$jsonl needs an array");
      return value.$jsonl.map((line) => `${toJsonText(line)}\n`).join("");
    }
    if (Object.hasOwn(value, "$call")) return this.#helperCall(value);
    const resolved = {};
    for (const [key, item] of Object.entries(value)) resolved[key] = await this.#resolveHelpers(item);
    return resolved;
  }

  async #helperCall({ $call: name, field, args }) {
    if (typeof name !== "string") throw new Error("$call needs a call name");
    const answer = await this.answer(name, args ?? {});
    if (Object.hasOwn(answer, "err")) throw new Error(`${name} failed: ${toJsonText(answer.err)}`);
    if (field === undefined) return answer.ok;
    if (!Object.hasOwn(answer.ok ?? {}, field)) throw new Error(`${name} has no field \`${field}\``);
    return answer.ok[field];
  }

  /**
   * The runner's check of every hit's framing (`search_framing`): one block,
   * opened and closed once (also after removing invisible characters and
   * mapping look-alike brackets), and text holding `marker` never presented
   * as trusted. Result `{"hits": N}`.
   */
  async searchFraming(step) {
    const request = { query: step.query, max_results: step.max_results ?? 20, min_score: 0 };
    const answer = await this.answer("recall.search", { request });
    if (Object.hasOwn(answer, "err")) throw new Error(`the search failed: ${toJsonText(answer.err)}`);
    const { hits } = answer.ok;
    for (const hit of hits) {
      checkFraming(hit.framed, hit.citation);
      const holdsMarker = step.marker !== undefined && hit.snippet.toLowerCase().includes(step.marker.toLowerCase());
      if (holdsMarker && framedAsTrusted(hit.framed)) {
        throw new Error(`${hit.citation} holds ${JSON.stringify(step.marker)} and is framed as trusted:\n${hit.framed}`);
      }
    }
    return { hits: hits.length };
  }
}

/** Whether a value of WIT type `type` holds a record field called `name`. */
function hasField(type, name) {
  const [kind, inner] = kindOf(type);
  if (kind === "record") return inner.some((f) => f.name === name || hasField(f.type, name));
  if (kind === "option" || kind === "list") return hasField(inner, name);
  return false;
}

/** A helper object's keys are exactly the helper's. */
function checkHelperKeys(value) {
  const keys = Object.keys(value);
  const helper = keys.find((k) => k.startsWith("$"));
  if (helper === undefined) return;
  const allowed = { $time: ["$time"], $jsonl: ["$jsonl"], $call: ["$call", "field", "args"] }[helper];
  if (allowed === undefined) throw new Error(`unknown helper ${JSON.stringify(helper)}; the helpers are $time, $jsonl and $call`);
  const extra = keys.find((k) => !allowed.includes(k));
  if (extra !== undefined) throw new Error(`the helper ${helper} takes no \`${extra}\``);
}

/**
 * The turn a call's `context` starts from: the scenario's clock and offset,
 * the owner in person in an interactive session on the `cli` channel, the
 * session's active projects.
 */
function turnContext(session) {
  return {
    now_ms: session.nowMs,
    session_id: null,
    session_kind: "interactive",
    channel: "cli",
    sender: null,
    sender_is_owner: true,
    active_projects: session.projects.keys(),
    utc_offset_minutes: session.utcOffsetMinutes,
    taint: null,
  };
}

/**
 * A call's answer by the rule: a `result` as `{ok}` or `{err}` (the
 * component's `error` variant as `{kind, value}`), a value of any other type
 * as `{ok}`.
 */
function render(type, outcome) {
  return kindOf(type)[0] === "result" ? fromJco(type, outcome) : { ok: fromJco(type, outcome.val) };
}

/** A failed call: a trap (the instance is gone; the next call gets a fresh one), or a failure of this host with its stack. */
function describeFailure(error) {
  if (error?.trapped) return `the component stopped: ${error.detail}`;
  return error?.stack ?? String(error);
}

/** Markdown files are never rewritten: unchanged by reads, only appended to by writes. */
function checkMarkdownKept(name, workspace, before) {
  if (APPEND_CALLS.has(name)) {
    files.checkAppendOnly(workspace, before);
    return;
  }
  const changed = files.changedPaths(before, files.snapshot(workspace));
  if (changed.length > 0) throw new Error(`the call changed memory files on disk: ${files.debugList(changed)}`);
}

/** The answer against `expect` / `expect_error`. */
function checkAnswer(step, answer) {
  const pretty = (v) => toJsonText(v, { pretty: true });
  if (Object.hasOwn(answer, "ok")) {
    if (step.expect_error !== undefined) {
      throw new Error(`expected the error ${toJsonText(step.expect_error)}, got the result ${pretty(answer.ok)}`);
    }
    // `"expect": null` checks nothing, as serde reads it in the Rust runner.
    if (step.expect != null) checkOrExplain(step.expect, answer.ok, "$", `full result: ${pretty(answer.ok)}`);
    return;
  }
  if (step.expect_error === undefined) throw new Error(`the component answered with an error: ${toJsonText(answer.err)}`);
  checkOrExplain(step.expect_error, answer.err, "$error", `actual error: ${toJsonText(answer.err)}`);
}
