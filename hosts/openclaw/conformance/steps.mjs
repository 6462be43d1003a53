// The ops of a step (tests/conformance/README.md, "Ops"), ported from
// `run_step` in host-harness/src/conformance.rs: component calls (each one
// WIT call, its result rendered by results.mjs), runner-side answers, and
// host-side operations on the workspace or the instance.

import fs from "node:fs";
import { MemoryError } from "../lib/component.js";
import { parseNow } from "./clock.mjs";
import { checkFraming, framedAsTrusted } from "./framing.mjs";
import { toJsonText } from "./json.mjs";
import { projectKey } from "./project.mjs";
import * as json from "./results.mjs";
import * as files from "./workspace.mjs";

const SESSION_KINDS = ["interactive", "cron", "heartbeat", "subagent"];
const SOURCE_CLASSES = ["owner", "agent", "untrusted", "system"];
const ORIGINS = ["sender-message", "agent-derived", "web-page", "tool-output", "participant", "scaffolding", "unknown-external"];
const MODES = ["escalate", "always", "off"];
const PHASES = ["light", "rem", "deep"];

/** `{a:?}` of a Rust string, near enough for messages. */
const quoted = (text) => JSON.stringify(text);

function need(value, message) {
  if (value === undefined) throw new Error(message);
  return value;
}

function oneOf(value, allowed, what, hint) {
  if (!allowed.includes(value)) throw new Error(`unknown ${what} ${quoted(value)}${hint ? `; ${hint}` : ""}`);
  return value;
}

/** The turn context of a step: the session's, with the step's sender, session and projects. */
function stepContext(session, step) {
  const context = session.context();
  context.senderIsOwner = step.owner ?? true;
  context.sessionKind =
    step.session_kind === undefined
      ? undefined
      : oneOf(step.session_kind, SESSION_KINDS, "session kind", "use interactive, cron, heartbeat or subagent");
  context.sessionId = step.session_id;
  if (step.active_projects.length > 0) context.activeProjects = [...step.active_projects];
  if (step.channel !== undefined) context.channel = step.channel;
  context.sender = step.sender;
  context.taint = step.taint === undefined ? undefined : oneOf(step.taint, SOURCE_CLASSES, "taint");
  return context;
}

/** A step's transcript as JSONL: `transcript` (one object a line, as serde_json writes it) or `transcript_text`. */
function transcriptOf(step) {
  const [messages, text] = [step.transcript, step.transcript_text];
  if (messages !== undefined && text === undefined) return messages.map((m) => `${toJsonText(m)}\n`).join("");
  if (messages === undefined && text !== undefined) return text;
  throw new Error("give exactly one of `transcript` and `transcript_text`");
}

/** Rows of each list a `report` step asks for (as REPORT_ROWS in conformance.rs). */
const REPORT_ROWS = 100;

function dreamRequest(session, step) {
  const g = step.gates ?? {};
  const r = session.dreamGates;
  return {
    phases: step.phases.map((p) => oneOf(p, PHASES, "phase", "light, rem or deep")),
    dryRun: step.dry_run,
    gates: {
      ...r,
      minScore: g.min_score ?? r.minScore,
      minRecalls: g.min_recalls ?? r.minRecalls,
      minUniqueQueries: g.min_unique_queries ?? r.minUniqueQueries,
      recencyHalfLifeDays: g.recency_half_life_days ?? r.recencyHalfLifeDays,
      maxPromotions: g.max_promotions ?? r.maxPromotions,
    },
    context: stepContext(session, step),
  };
}

function intentSpec(step) {
  const spec = need(step.intent, "intent_create needs `intent`");
  return {
    text: spec.text,
    triggers: spec.triggers,
    dueAtMs: spec.due_at === undefined ? undefined : BigInt(parseNow(spec.due_at)),
    channel: spec.channel,
    sender: spec.sender,
    expiresInMs: spec.expires_in_ms,
    fireBudget: spec.fire_budget,
    cooldownMs: spec.cooldown_ms,
    semantic: spec.semantic,
    origin: oneOf(step.origin ?? "sender-message", ORIGINS, "origin"),
  };
}

/** Is this error a trap (a dead instance), not the component's documented error? */
export function isTrap(error) {
  // component.js marks a WebAssembly.RuntimeError (`trapped`) and drops the instance.
  return error instanceof MemoryError && error.trapped === true;
}

/** A failed call as the Rust runner prints `CallError`. */
export function describeCallError(error) {
  if (isTrap(error)) return `the component stopped: ${error.detail}`;
  if (error instanceof MemoryError) return `${error.kind}: ${error.detail}`;
  return error?.stack ?? String(error);
}

/** Runs one component call: `{value}` (rendered) or `{error}`. */
async function call(run, render) {
  let answer;
  try {
    answer = await run();
  } catch (error) {
    return { error };
  }
  return { value: render(answer) };
}

/** Runs one call whose failure fails the step (a `repeat`ed search, `$current`, `search_framing`). */
async function callOrFail(run) {
  try {
    return await run();
  } catch (error) {
    throw new Error(describeCallError(error));
  }
}

/** Component calls: each returns `{value}` or `{error}`. */
export const componentOps = {
  sync: (s, step) =>
    call(() => s.memory.sync({ maxFiles: step.max_files, force: step.force, acknowledgeRebuild: step.acknowledge_rebuild }), json.syncReport),
  status: (s) => call(() => s.memory.status(), json.statusReport),
  async search(s, step) {
    const request = searchRequest(s, step);
    // `repeat`: the same search N times (recall signals); the last answer is checked.
    for (let n = 1n; n < (step.repeat ?? 1n); n += 1n) await callOrFail(() => s.memory.search(request));
    return call(() => s.memory.search(request), json.searchResult);
  },
  get: (s, step) =>
    call(
      () =>
        s.memory.get({
          path: need(step.path, "get needs `path`"),
          startLine: step.start_line,
          endLine: step.end_line,
          context: stepContext(s, step),
        }),
      json.getResult,
    ),
  bootstrap: (s, step) =>
    call(() => s.memory.bootstrap({ purpose: "session-start", context: s.context(), knownDigest: step.known_digest }), json.bootstrapResult),
  note(s, step) {
    const request = {
      text: need(step.text, "note needs `text`"),
      origin: oneOf(need(step.origin, "note needs `origin`"), ORIGINS, "origin"),
      importance: step.importance,
      triggers: step.triggers,
      supersedesKey: step.supersedes_key,
      context: stepContext(s, step),
    };
    return call(() => s.memory.note(request), json.writeReport);
  },
  flush(s, step) {
    const request = {
      sessionId: need(step.session_id, "flush needs `session_id`"),
      state: {
        tokenEstimate: need(step.token_estimate, "flush needs `token_estimate`"),
        contextWindow: step.context_window ?? 200_000,
        reserveTokens: step.reserve_tokens ?? 20_000,
        compactionCycle: step.compaction_cycle ?? 1,
      },
      softThresholdTokens: step.soft_threshold_tokens,
      transcript: transcriptOf(step),
      timeoutMs: step.timeout_ms,
      context: stepContext(s, step),
    };
    return call(() => s.memory.flush(request), json.flushReport);
  },
  ingest(s, step) {
    const transcript = transcriptOf(step);
    const request = { sessionId: need(step.session_id, "ingest needs `session_id`"), transcript, context: stepContext(s, step) };
    return call(() => s.memory.ingest(request), json.ingestReport);
  },
  forget(s, step) {
    const request = { sessionId: need(step.session_id, "forget needs `session_id`"), context: stepContext(s, step) };
    return call(() => s.memory.forget(request), json.forgetReport);
  },
  inject(s, step) {
    const request = {
      message: need(step.message, "inject needs `message`"),
      mode: oneOf(step.mode ?? "escalate", MODES, "escalation mode", "use escalate, always or off"),
      context: stepContext(s, step),
    };
    return call(() => s.memory.triggerInject(request), json.injectResult);
  },
  intent_create(s, step) {
    const spec = intentSpec(step);
    const context = stepContext(s, step);
    return call(() => s.memory.intentCreate(spec, context), json.createResult);
  },
  intent_list(s, step) {
    const context = stepContext(s, step);
    return call(() => s.memory.intentList(context), json.intents);
  },
  intent_cancel(s, step) {
    const context = stepContext(s, step);
    const id = need(step.id, "intent_cancel needs `id`");
    return call(() => s.memory.intentCancel(id, context), json.intent);
  },
  due(s, step) {
    const at = step.at === undefined ? s.nowMs : parseNow(step.at);
    return call(() => s.memory.due(at), json.intents);
  },
  escalate(s, step) {
    const request = {
      message: need(step.message, "escalate needs `message`"),
      context: stepContext(s, step),
      timeoutMs: step.timeout_ms,
      rememberAcrossConversations: step.remember_across_conversations ?? false,
    };
    return call(() => s.memory.escalate(request), json.escalation);
  },
  dream(s, step) {
    const request = dreamRequest(s, step);
    return call(() => s.memory.dreamRun(request), json.dreamReport);
  },
  report(s, step) {
    const dream = dreamRequest(s, step);
    const request = {
      nowMs: dream.context.nowMs,
      gates: dream.gates,
      maxSweeps: REPORT_ROWS,
      maxCandidates: REPORT_ROWS,
      maxPromoted: REPORT_ROWS,
      maxRecalled: REPORT_ROWS,
    };
    return call(() => s.memory.report(request), json.workspaceReport);
  },
  dream_rollback(s, step) {
    const context = stepContext(s, step);
    return call(() => s.memory.dreamRollback(context), json.rollbackReport);
  },
  user_show: (s) => call(() => s.memory.userShow(), json.userModel),
  async user_set(s, step) {
    const expectedHash =
      step.expected_hash === undefined || step.expected_hash === "$current"
        ? (await callOrFail(() => s.memory.userShow())).hash
        : step.expected_hash;
    const request = {
      directive: need(step.directive, "user_set needs `directive`"),
      replacesLine: step.replaces_line,
      expectedHash,
      context: stepContext(s, step),
    };
    return call(() => s.memory.userSet(request), json.userModel);
  },
};

function searchRequest(s, step) {
  return {
    query: need(step.query, "search needs `query`"),
    maxResults: step.max_results,
    minScore: step.min_score,
    context: stepContext(s, step),
  };
}

/** Runner-side answers (no component call, or one whose failure fails the step): each returns `{value}`. */
export const runnerOps = {
  prepare_repo(s, step, workspace) {
    // The host's side: the repository's project key from its git files,
    // made the session's most recent project.
    const dir = files.joinPath(workspace, need(step.path, "prepare_repo needs `path`"));
    const key = projectKey(dir);
    if (key !== null) s.projects.prepare(key);
    return { value: { key, active: s.projects.keys() } };
  },
  model_calls: (s) => ({ value: { count: s.memory.modelCalls.count } }),
  async search_framing(s, step) {
    const request = {
      query: need(step.query, "search_framing needs `query`"),
      maxResults: step.max_results ?? 20,
      minScore: 0,
      context: stepContext(s, step),
    };
    const result = await callOrFail(() => s.memory.search(request));
    for (const hit of result.hits) {
      checkFraming(hit.framed, hit.citation);
      if (step.marker !== undefined && framedAsTrusted(hit.framed) && hit.snippet.toLowerCase().includes(step.marker.toLowerCase())) {
        throw new Error(`${hit.citation} holds ${quoted(step.marker)} and is framed as trusted:\n${hit.framed}`);
      }
    }
    return { value: { hits: result.hits.length } };
  },
  read_file: (s, step, workspace) => ({ value: files.readFileForPerson(files.joinPath(workspace, need(step.path, "read_file needs `path`"))) }),
  // Workspace-relative paths of the files whose path starts with `path`, sorted.
  list_files: (s, step, workspace) => ({ value: { files: files.listFiles(workspace, need(step.path, "list_files needs `path`")) } }),
};

/** Host-side operations: they change the workspace or the instance and have no result. */
export const hostOps = {
  restart: (s) => s.memory.restart(),
  write: (s, step, workspace) => writeStep(step, workspace, { append: false }),
  append: (s, step, workspace) => writeStep(step, workspace, { append: true }),
  delete: (s, step, workspace) => fs.unlinkSync(files.joinPath(workspace, need(step.path, "needs `path`"))),
  // A person renaming or moving a file (`path` to `target`).
  rename: (s, step, workspace) =>
    fs.renameSync(files.joinPath(workspace, need(step.path, "needs `path`")), files.joinPath(workspace, need(step.target, "needs `target`"))),
  symlink(s, step, workspace) {
    const link = files.joinPath(workspace, need(step.path, "needs `path`"));
    fs.symlinkSync(need(step.target, "needs `target`"), link);
  },
  mkfifo: (s, step, workspace) => files.makeFifo(files.joinPath(workspace, need(step.path, "needs `path`"))),
  async corrupt_index(s, step, workspace) {
    const index = files.joinPath(workspace, ".memory/index.sqlite");
    const bytes = files.corruptIndexBytes(index);
    await s.memory.restart(); // the index is closed before it is overwritten
    fs.writeFileSync(index, bytes);
  },
  async delete_index(s, step, workspace) {
    await s.memory.restart();
    fs.rmSync(files.joinPath(workspace, ".memory/index.sqlite"), { force: true });
    fs.rmSync(files.joinPath(workspace, ".memory/index.sqlite-journal"), { force: true });
  },
  save_files(s, step, workspace, state) {
    state.saved = files.snapshot(workspace);
  },
  files_unchanged(s, step, workspace, state) {
    const before = need(state.saved, "files_unchanged needs an earlier save_files");
    const changed = files.changedPaths(before, files.snapshot(workspace));
    if (changed.length > 0) throw new Error(`files changed since save_files: ${debugList(changed)}`);
  },
  save_state(s, step, workspace, state) {
    state.saved = files.snapshot(workspace, { withMemory: true });
  },
  state_unchanged(s, step, workspace, state) {
    const before = need(state.saved, "state_unchanged needs an earlier save_state");
    const changed = files.changedPaths(before, files.snapshot(workspace, { withMemory: true }));
    if (changed.length > 0) throw new Error(`files changed since save_state: ${debugList(changed)}`);
  },
};

function writeStep(step, workspace, { append }) {
  const file = files.joinPath(workspace, need(step.path, "needs `path`"));
  const [content, hex] = [step.content, step.bytes_hex];
  let bytes;
  if (content !== undefined && hex === undefined) bytes = Buffer.from(content, "utf8");
  else if (content === undefined && hex !== undefined) bytes = files.decodeHex(hex);
  else throw new Error("give exactly one of `content` and `bytes_hex`");
  if (step.repeat !== undefined) bytes = Buffer.alloc(bytes.length * Number(step.repeat), bytes);
  files.writeBytes(file, bytes, { append });
}

/** Rust's `{:?}` of a Vec<String>. */
export const debugList = (items) => `[${items.map(quoted).join(", ")}]`;
