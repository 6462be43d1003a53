// Pure conversions between OpenClaw's shapes and the component's (jco:
// camelCase records, BigInt for 64-bit integers, strings for enums).

import { hostTimeZone, parseLocalDateTime, utcOffsetMinutes } from "./time.js";

/** Files OpenClaw injects itself; the plugin's bootstrap leaves them out. */
const HOST_INJECTED_FILES = new Set(["AGENTS.md"]);

/**
 * The session kind of an OpenClaw session key: `agent:<id>:cron:…` runs are
 * scheduled jobs, `…:subagent:…` sub-agent runs, `…:heartbeat…` self-checks;
 * everything else is a person talking to the agent. A trigger the host names
 * (`cron`, `heartbeat`) wins over the key.
 */
export function sessionKindOf({ sessionKey, trigger } = {}) {
  if (trigger === "cron") return "cron";
  if (trigger === "heartbeat") return "heartbeat";
  const parts = String(sessionKey ?? "").toLowerCase().split(":");
  if (parts.includes("subagent")) return "subagent";
  if (parts.includes("cron")) return "cron";
  if (parts.some((p) => p.startsWith("heartbeat"))) return "heartbeat";
  return "interactive";
}

/**
 * The turn context of an OpenClaw hook or tool call at `nowMs`, for an owner
 * in `timeZone` (IANA; its offset at `nowMs` names the local date). `senderIsOwner` must
 * come from the host's own authentication; it is false unless the host says
 * true.
 */
export function contextOf(ctx = {}, nowMs = Date.now(), timeZone = hostTimeZone()) {
  return {
    nowMs: BigInt(Math.trunc(nowMs)),
    sessionId: ctx.sessionId ?? ctx.sessionKey ?? undefined,
    sessionKind: sessionKindOf(ctx),
    channel: ctx.messageChannel ?? ctx.channel ?? ctx.channelId ?? undefined,
    sender: ctx.requesterSenderId ?? ctx.senderId ?? undefined,
    senderIsOwner: ctx.senderIsOwner === true,
    activeProjects: Array.isArray(ctx.activeProjectKeys) ? ctx.activeProjectKeys.slice(0, 4) : [],
    utcOffsetMinutes: utcOffsetMinutes(timeZone, nowMs),
    // The session's taint, as the plugin tracks it (lib/taint.js); the
    // component also derives the taint of ingested and flushed turns from
    // the transcript itself.
    taint: ctx.taint === "untrusted" || ctx.taint === "system" ? ctx.taint : undefined,
  };
}

/**
 * The component's `intent-spec` from the `intent` tool's or the CLI's
 * fields: `dueAt` ISO 8601 (without an offset, a wall-clock time in
 * `timeZone`), the expiry in days and the cool-down in minutes. `label`
 * names the due field in an error.
 */
export function intentSpecOf({ text, triggers, dueAt, fireBudget, cooldownMinutes, expiresInDays, origin }, timeZone, label = "dueAt") {
  const dueAtMs = dueAt ? parseLocalDateTime(dueAt, timeZone) : undefined;
  if (Number.isNaN(dueAtMs)) throw new Error(`${label} is not a date: ${dueAt}`);
  return {
    text: String(text ?? ""),
    triggers: triggers ?? [],
    dueAtMs: dueAtMs === undefined ? undefined : BigInt(dueAtMs),
    channel: undefined,
    sender: undefined,
    expiresInMs: expiresInDays === undefined ? undefined : BigInt(Math.round(expiresInDays * 86400000)),
    fireBudget,
    cooldownMs: cooldownMinutes === undefined ? undefined : BigInt(Math.round(cooldownMinutes * 60000)),
    semantic: false,
    origin: intentOriginOf(origin),
  };
}

/**
 * Where an intent's text came from, as the component's `content-origin`:
 * `owner` (the owner's own words) is `sender-message`; anything else, or
 * nothing said, is `agent-derived` — the agent wrote it — which the
 * component refuses in a turn tainted by outside material.
 */
export function intentOriginOf(origin) {
  return origin === "owner" || origin === "sender-message" ? "sender-message" : "agent-derived";
}

/** JSON.stringify that writes 64-bit integers (BigInt) as numbers. */
export function toJson(value, space) {
  return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? Number(v) : v), space);
}

/** A tool's result: the payload as indented JSON for the model, and as plain data in `details`. */
export function textResult(payload) {
  return { content: [{ type: "text", text: toJson(payload, 2) }], details: JSON.parse(toJson(payload)) };
}

/** A component search hit as OpenClaw's `MemorySearchResult`. */
export function searchResultOf(hit) {
  const p = hit.provenance;
  return {
    path: hit.path,
    startLine: hit.lines.start,
    endLine: hit.lines.end,
    score: hit.score,
    textScore: hit.parts?.text,
    vectorScore: hit.parts?.vector,
    snippet: hit.snippet,
    source: hit.path.startsWith("memory/") && /-session-/.test(hit.path) ? "sessions" : "memory",
    citation: hit.citation,
    provenance: p && {
      originClass: p.sourceClass,
      sessionKind: p.sessionKind,
      observedAt: p.observedAtMs === undefined ? undefined : Number(p.observedAtMs),
      supersedesKey: p.supersedesKey,
    },
  };
}

/** The host health record (`.memory/host-health.json`) as the manager status shows it, or undefined. */
function hostHealthOf(health) {
  if (!health) return undefined;
  return { errors: health.errors ?? 0, traps: health.traps ?? 0, deadlineStops: health.deadline_stops ?? 0, lastError: health.last_error ?? undefined };
}

/** The component's status as OpenClaw's `MemoryProviderStatus` (`health`: the host health record, if any). */
export function providerStatusOf(status, { workspaceDir, embedder, health = null }) {
  if (!status) {
    return { backend: "builtin", provider: embedder?.provider ?? "none", workspaceDir, custom: { opened: false, hostHealth: hostHealthOf(health) } };
  }
  const hybrid = status.searchMode === "hybrid";
  return {
    backend: "builtin",
    provider: embedder?.provider ?? "none",
    model: embedder?.model,
    files: status.files,
    chunks: status.entries + status.windows,
    dirty: status.filesStale > 0,
    workspaceDir,
    dbPath: `${workspaceDir}/${status.indexPath}`,
    sources: ["memory"],
    fts: { enabled: true, available: true },
    vector: { enabled: Boolean(embedder), available: hybrid, dims: embedder?.dimensions },
    custom: {
      engine: "memory-core (wasm component)",
      schemaVersion: status.schemaVersion,
      revision: Number(status.revision),
      entries: status.entries,
      windows: status.windows,
      embedded: status.embedded,
      searchMode: status.searchMode,
      ftsTokenizer: status.ftsTokenizer,
      filesStale: status.filesStale,
      bySourceClass: Object.fromEntries(status.bySourceClass.map((c) => [c.sourceClass, c.entries])),
      bySessionKind: Object.fromEntries(status.bySessionKind.map((c) => [c.sessionKind, c.entries])),
      problems: status.problems,
      provenanceLost: status.provenanceLost,
      promotionsDeferred: status.promotionsDeferred,
      sweepProblem: status.sweepProblem,
      indexRebuilt: status.indexRebuilt,
      hostHealth: hostHealthOf(health),
    },
  };
}

/**
 * The bootstrap blocks to inject, without the files OpenClaw injects itself.
 * The component escapes block delimiters inside file content, so a line
 * that opens a `<memory-file` block is always a real block boundary.
 */
export function bootstrapBlocks(text) {
  const blocks = [];
  let current = null;
  for (const line of text.split("\n")) {
    const open = /^<memory-file path="([^"]*)"/.exec(line);
    if (open) {
      current = { path: open[1], lines: [] };
      blocks.push(current);
    }
    current?.lines.push(line);
  }
  return blocks
    .filter((b) => !HOST_INJECTED_FILES.has(b.path))
    .map((b) => b.lines.join("\n").trimEnd())
    .join("\n\n");
}

/** The text of one OpenClaw transcript message (string or content parts). */
export function messageText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : part?.type === "text" ? String(part.text ?? "") : ""))
    .filter(Boolean)
    .join("\n");
}

const ROLES = new Map([
  ["user", "user"],
  ["assistant", "assistant"],
  ["system", "system"],
  ["tool", "tool"],
  ["toolResult", "tool"],
  ["tool_result", "tool"],
]);

/** Tools whose results are memory itself: re-ingesting them would echo memory back into it. */
const MEMORY_TOOLS = new Set(["memory_search", "memory_get", "intent"]);

/** Whether a tool result came from one of the memory tools (directly or through Tool Search's `tool_call`). */
export function isMemoryToolResult(message, text) {
  if (MEMORY_TOOLS.has(message?.toolName)) return true;
  // Only Tool Search's own wrapper is unwrapped: any other tool's output
  // (a fetched page shaped like the wrapper) is never taken for memory's.
  if (message?.toolName !== "tool_call" || !text.startsWith("{")) return false;
  try {
    return MEMORY_TOOLS.has(JSON.parse(text)?.tool?.name);
  } catch {
    return false;
  }
}

/**
 * OpenClaw's agent messages as the component's JSONL transcript. The
 * user's messages count as the owner's only when the session's sender is
 * the owner; tool results are tool output, except the memory tools' own.
 * Messages without text are left out (a tool call alone says nothing to
 * remember).
 */
export function transcriptOf(messages, { senderIsOwner = false, channel } = {}) {
  const lines = [];
  for (const message of messages ?? []) {
    const role = ROLES.get(message?.role);
    if (!role) continue;
    const text = messageText(message.content).trim();
    if (!text) continue;
    const line = { role, text };
    // Memory's own results are never stored again, but what they showed the
    // agent counts: an untrusted hit taints the rest of the turn.
    if (role === "tool" && isMemoryToolResult(message, text)) line.memory = true;
    if (role === "user") line.owner = senderIsOwner;
    if (channel) line.channel = channel;
    if (typeof message.timestamp === "number") line.timestamp = new Date(message.timestamp).toISOString();
    lines.push(JSON.stringify(line));
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** Tokens of a transcript, estimated as OpenClaw does when it has no count: 4 characters each. */
export function estimateTokens(messages) {
  let chars = 0;
  for (const m of messages ?? []) chars += messageText(m?.content).length;
  return Math.ceil(chars / 4);
}

/** The default agent of a config: the one marked default, else the first, else `main`. */
export function defaultAgentId(cfg) {
  const agents = cfg?.agents?.list ?? [];
  return agents.find((a) => a?.default)?.id ?? agents[0]?.id ?? "main";
}

/** The agent of a hook's context: its own field, else the `agent:<id>:…` session key's. */
export function agentIdOf(ctx = {}) {
  if (ctx.agentId) return ctx.agentId;
  const match = /^agent:([^:]+):/.exec(String(ctx.sessionKey ?? ""));
  return match?.[1];
}

/**
 * Whether a hook's turn is the owner's. OpenClaw tells tools
 * (`ctx.senderIsOwner`) and `before_agent_run` (`event.senderIsOwner`), but
 * not the prompt-building hook (which runs before it), compaction or
 * session end; so the last answer per session is remembered (with its
 * sender, when the context names one). Only a user turn with no channel and
 * no sender — a local `openclaw agent --local` run — counts as the
 * operator's without having been told. Anything else unknown is not the owner.
 */
export class OwnerMemory {
  #bySession = new Map();
  static #LIMIT = 1000; // sessions remembered; the oldest are forgotten first

  static #key(ctx) {
    return String(ctx?.sessionKey ?? ctx?.sessionId ?? "");
  }

  remember(ctx, senderIsOwner) {
    if (typeof senderIsOwner !== "boolean") return;
    const key = OwnerMemory.#key(ctx);
    this.#bySession.delete(key);
    this.#bySession.set(key, { senderId: ctx?.senderId, owner: senderIsOwner });
    if (this.#bySession.size > OwnerMemory.#LIMIT) this.#bySession.delete(this.#bySession.keys().next().value);
  }

  isOwner(ctx = {}) {
    if (typeof ctx.senderIsOwner === "boolean") return ctx.senderIsOwner;
    const known = this.#bySession.get(OwnerMemory.#key(ctx));
    if (known && (ctx.senderId === undefined || known.senderId === ctx.senderId)) return known.owner;
    const local = !ctx.channel && !ctx.channelId && !ctx.messageProvider && !ctx.senderId;
    return ctx.trigger === "user" && local && !known;
  }

  forget(ctx) {
    this.#bySession.delete(OwnerMemory.#key(ctx));
  }
}
