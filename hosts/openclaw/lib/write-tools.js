// The agent's ways to write memory, through the component so that every line
// records where it came from: `memory_note` (an observation into today's
// daily note) and `memory_directive` (a USER.md directive, the owner only).
// The class the component records comes from the turn, never from the text:
// the sender and whether OpenClaw authenticated them as the owner, the
// session's kind, the origin the agent declares, and the session's taint
// (lib/taint.js). OpenClaw's file tools are refused on memory paths
// (lib/memory-paths.js), so these are the only way in for the agent.

import { textResult } from "./adapt.js";

/** The note tool's `origin` values and the component's `content-origin` for each. */
export const NOTE_ORIGINS = {
  owner: "sender-message",
  agent: "agent-derived",
  web: "web-page",
  tool: "tool-output",
  participant: "participant",
  other: "unknown-external",
};

/** The component's `content-origin` for the tool's `origin` (default: the agent wrote it). */
export function noteOriginOf(origin) {
  if (origin === undefined || origin === null || origin === "") return NOTE_ORIGINS.agent;
  const mapped = NOTE_ORIGINS[origin];
  if (!mapped) throw new Error(`origin must be one of ${Object.keys(NOTE_ORIGINS).join(", ")}; got ${JSON.stringify(origin)}`);
  return mapped;
}

/** The component's `note-request` from the tool's parameters and a turn context. */
export function noteRequestOf(params = {}, context) {
  const triggers = params.triggers ?? [];
  if (!Array.isArray(triggers) || triggers.some((t) => typeof t !== "string")) throw new Error("triggers must be a list of phrases");
  return {
    text: String(params.text ?? ""),
    origin: noteOriginOf(params.origin),
    importance: params.importance,
    triggers,
    supersedesKey: params.supersedes === undefined || params.supersedes === "" ? undefined : String(params.supersedes),
    context,
  };
}

/** What the model is told about a note: where it went and the class it was recorded with. */
export function noteResultOf(report, taint) {
  const result = {
    path: report.path,
    lines: report.lines,
    sourceClass: report.sourceClass,
    duplicates: report.duplicates,
  };
  if (report.sourceClass === "untrusted" || report.sourceClass === "system") {
    result.note =
      taint === undefined
        ? "Kept apart as outside content: recallable as evidence, never promoted to MEMORY.md."
        : "This conversation has held outside content, so the note is kept apart as such: recallable as evidence, never promoted to MEMORY.md.";
  }
  return result;
}

/**
 * `memory_note`. `turn` gives the tool call's turn context (the session's
 * taint included) and `taint` the session's taint, both read at call time.
 */
export function noteTool({ memoryOf, turn, taint }) {
  return {
    name: "memory_note",
    label: "Memory note",
    description:
      "Remember one observation: a fact, decision, preference, date or todo worth keeping. It is appended to today's daily note (memory/YYYY-MM-DD.md) with where it came from; dreaming later promotes what proves useful into MEMORY.md. Write memory only with this tool (and memory_directive), never with file tools.",
    parameters: {
      type: "object",
      properties: {
        text: { type: "string", description: "The observation, one self-contained line (at most 4,000 characters)." },
        origin: {
          type: "string",
          enum: Object.keys(NOTE_ORIGINS),
          description:
            "Where the text came from: owner (the owner's own words in this conversation), agent (your own conclusion from what the owner said; the default), web (a web page), tool (a tool's or command's output), participant (someone other than the owner), other.",
        },
        importance: { type: "integer", minimum: 1, maximum: 10, description: "How much it matters, 1..10." },
        triggers: { type: "array", items: { type: "string" }, description: "Phrases that should bring it back up." },
        supersedes: {
          type: "string",
          description:
            "For a fact that can change (a host, a port, an owner, an on-call, a preference, a version, a name): a short stable key for what it is about, e.g. `staging-host` or `billing-owner`. When the fact changes, note the new value with the same key: search then ranks the new note in the old one's place and the old one below it. Reuse the key a recalled note carries (`provenance.supersedesKey` in memory_search results).",
        },
      },
      required: ["text"],
      additionalProperties: false,
    },
    async execute(_id, params) {
      const memory = await memoryOf();
      const report = await memory.note(noteRequestOf(params, turn()));
      return textResult(noteResultOf(report, taint()));
    },
  };
}

/** `memory_directive`: the owner only (the factory hides it from anyone else). */
export function directiveTool({ memoryOf, turn, assertCurrent }) {
  return {
    name: "memory_directive",
    label: "USER.md directive",
    description:
      "Read (show) or change (set) the owner's standing directives in USER.md: one sentence starting with Always, Never or Prefer. A directive about the same behaviour replaces the old one. Use it only when the owner asks you to change how you behave from now on.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["show", "set"] },
        directive: { type: "string", description: "set: the directive, e.g. `Always answer in Spanish.`" },
        replacesLine: { type: "integer", minimum: 1, description: "set: the line of the directive it replaces (from show), when it is not found by itself." },
      },
      required: ["action"],
      additionalProperties: false,
    },
    async execute(_id, params) {
      const memory = await memoryOf();
      const current = await memory.userShow();
      if (params?.action === "show") return textResult({ text: current.text, hash: current.hash });
      if (params?.action !== "set") throw new Error(`unknown action ${params?.action}; use show or set`);
      if (typeof params.directive !== "string" || !params.directive.trim()) throw new Error("set needs the directive");
      // The last check before the effect: the run that asked is still the owner's and still admitted.
      assertCurrent?.();
      const model = await memory.userSet({
        directive: params.directive,
        replacesLine: params.replacesLine,
        expectedHash: current.hash,
        context: turn(),
      });
      return textResult({ text: model.text, replaced: model.replaced ?? null });
    },
  };
}
