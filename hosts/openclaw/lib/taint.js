// Taint that crosses a turn (wit/types.wit `turn-context.taint`): the lowest
// class of what a session's context has held so far. A web page fetched, a
// command's output, a stranger's message in a group, recall of untrusted
// notes: once any of these is in the conversation, whatever the agent writes
// to memory for that session may be a paraphrase of it, so the component
// classes it no higher (and refuses USER.md changes and agent-derived
// intents). The host is the only one who sees the conversation, so it keeps
// the mark, per session, on disk beside the index: an `openclaw agent` turn
// is a process of its own, and the next turn of the same session must still
// know.

import fs from "node:fs";
import path from "node:path";
import { writeDurably } from "./durable.js";

export const TAINT_FILE = ".memory/session-taint.json";

/** Sessions remembered; the least recently used are forgotten first. */
const KEPT_SESSIONS = 500;
/** A mark not used for this long is forgotten (the conversation it was in is long compacted away or reset). */
const KEPT_MS = 30 * 86400000;
/** How often a mark's last use is refreshed on disk while its session keeps bringing outside content in. */
const TOUCH_MS = 3600000;

/** Source classes from most to least trusted (wit/types.wit `source-class`). */
const RANK = { owner: 3, agent: 2, system: 1, untrusted: 0 };

/** The lower of two classes (`undefined` is no taint). */
export function lowerTaint(a, b) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return RANK[b] < RANK[a] ? b : a;
}

/**
 * Tools whose results bring nothing from outside into the conversation:
 * the memory tools (whose recall is framed with its class and marked by
 * the tools themselves, see `taintOfRecall`) and the file-writing tools
 * (a status line), and Tool Search's catalog tools, whose nested calls
 * reach `before_tool_call` under their own names. Any other tool's output
 * is outside content: a web page, a command's output, a file of unknown
 * origin, another session.
 */
const TOOLS_THAT_BRING_NOTHING = new Set([
  "memory_search",
  "memory_get",
  "memory_note",
  "memory_directive",
  "intent",
  "write",
  "edit",
  "apply_patch",
  "update_plan",
  "tool_search",
  "tool_describe",
  "tool_call",
  "tool_search_code",
]);

/** The taint a call of `toolName` brings into the conversation, with why; undefined for none. */
export function taintOfTool(toolName) {
  const name = String(toolName ?? "");
  if (TOOLS_THAT_BRING_NOTHING.has(name)) return undefined;
  return { taint: "untrusted", why: `output of the ${name || "unnamed"} tool` };
}

/**
 * The lowest class among framed memory text (`class="…"` in the
 * `<memory-recall>` / `<memory-context>` headers the component writes; the
 * content inside is escaped, so no text can forge a header).
 */
export function taintOfFramed(texts) {
  let lowest;
  for (const text of texts) {
    for (const match of String(text ?? "").matchAll(/<memory-(?:recall|context)\b[^>]*\bclass="([a-z]+)"/g)) {
      if (match[1] in RANK) lowest = lowerTaint(lowest, match[1]);
    }
  }
  // Owner and agent text lowers nothing.
  return lowest === "untrusted" || lowest === "system" ? lowest : undefined;
}

/**
 * Whether a session key names a group or channel conversation
 * (`agent:<id>:<channel>:group:<id>`, `…:channel:<id>`): other people's
 * messages are in its context (OpenClaw even puts a mention-gated group's
 * chatter before the owner's message), so it is tainted from the start.
 * (With `session.groupScope: "main"` groups share the main key and cannot
 * be told apart; their non-owner turns still mark it.)
 */
export function isGroupSession(sessionKey) {
  const parts = String(sessionKey ?? "").toLowerCase().split(":");
  return parts.includes("group") || parts.includes("channel");
}

/** The key of a session in a hook's or tool's context: a reset (`/new`) starts a new session id. */
export function sessionKeyOf(ctx = {}) {
  const key = ctx.sessionId ?? ctx.sessionKey;
  return key === undefined || key === null || key === "" ? undefined : String(key);
}

/** The marks kept at `nowMs`: the most recently used last, at most KEPT_SESSIONS, none unused for KEPT_MS. */
export function keptMarks(marks, nowMs) {
  const fresh = Object.entries(marks).filter(([, m]) => Number.isFinite(m?.atMs) && nowMs - m.atMs < KEPT_MS);
  fresh.sort((a, b) => a[1].atMs - b[1].atMs);
  return Object.fromEntries(fresh.slice(-KEPT_SESSIONS));
}

/** The taint marks of one workspace's sessions (`.memory/session-taint.json`). */
export class SessionTaint {
  #file;

  constructor(workspaceDir) {
    this.#file = path.join(workspaceDir, TAINT_FILE);
  }

  /**
   * `{ [session]: { taint, why, atMs } }`; no file is no marks; a file that
   * cannot be read is `null`: every session is then taken as tainted (the
   * marks it held are unknown) until an operator removes it.
   */
  #read() {
    let text;
    try {
      text = fs.readFileSync(this.#file, "utf8");
    } catch (error) {
      return error.code === "ENOENT" ? {} : null;
    }
    try {
      const parsed = JSON.parse(text);
      return parsed && typeof parsed.sessions === "object" && parsed.sessions !== null ? parsed.sessions : null;
    } catch {
      return null;
    }
  }

  /** The session's taint (`untrusted`, `system`), or undefined. */
  of(ctx) {
    const key = sessionKeyOf(ctx);
    if (key === undefined) return undefined;
    const marks = this.#read();
    if (marks === null) return "untrusted";
    const mark = marks[key];
    return mark && mark.taint in RANK ? mark.taint : undefined;
  }

  /**
   * Lowers the session's taint to `taint` (never raises it); returns the
   * session's taint after. A context without a session cannot be marked:
   * such a turn has no later turn to carry it to.
   */
  mark(ctx, taint, why, nowMs = Date.now()) {
    const key = sessionKeyOf(ctx);
    if (key === undefined || taint === undefined) return this.of(ctx);
    const marks = this.#read();
    if (marks === null) throw new Error(`${this.#file} cannot be read; every session is taken as tainted until it is removed`);
    const before = marks[key]?.taint in RANK ? marks[key].taint : undefined;
    const after = lowerTaint(before, taint);
    // Unchanged: only a mark unused for a while is refreshed, so that a
    // session that keeps bringing outside content in is never forgotten.
    if (after === before && nowMs - marks[key].atMs < TOUCH_MS) return before;
    marks[key] = after === before ? { ...marks[key], atMs: nowMs } : { taint: after, why: String(why ?? ""), atMs: nowMs };
    writeDurably(this.#file, `${JSON.stringify({ sessions: keptMarks(marks, nowMs) })}\n`);
    return after;
  }
}
