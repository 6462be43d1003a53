// The session of host-harness/src/session/ and config.rs for one
// scenario: the workspace lock, the component with the scenario's settings,
// embedder and scripted model, the clock, and the active projects.

import { MemoryComponent } from "../lib/component.js";
import { acquireWorkspaceLock } from "../lib/lock.js";
import { parseTime } from "./clock.mjs";
import { embedderFor, scriptedModel } from "./doubles.mjs";
import { toJsonText } from "./json.mjs";
import { ActiveProjects } from "./project.mjs";
import { readReply } from "./schema.mjs";
import { joinPath } from "./workspace.mjs";

const DEFAULT_NOW = "2026-12-02";

/** The component's settings for the scenario's `settings` (camelCase overrides of the reference). */
function componentSettings(s) {
  const tokenizer = s.tokenizer ?? "unicode61";
  if (!["unicode61", "trigram"].includes(tokenizer)) {
    throw new Error(`unknown FTS tokenizer ${JSON.stringify(tokenizer)}; use unicode61 or trigram`);
  }
  return {
    search: {
      maxResults: s.maxResults,
      minScore: s.minScore,
      recencyHalfLifeDays: s.recencyHalfLifeDays,
      mmrLambda: s.mmrLambda,
    },
    ftsTokenizer: tokenizer,
    bootstrap: { maxFileChars: s.maxFileChars, maxUserFileChars: s.maxUserFileChars, maxTotalChars: s.maxTotalChars },
  };
}

/** The scripted replies, with `append_to` made a path in the workspace (a concurrent editor). */
function modelScript(replies, workspace) {
  return replies.map((raw, i) => {
    const reply = readReply(raw, i + 1);
    if (reply.append_to !== undefined) reply.append_to = joinPath(workspace, reply.append_to);
    return reply;
  });
}

/**
 * The session of `session/mod.rs`: the workspace lock, the component (which
 * instantiates lazily, at the first call, as the wasmtime host does), the
 * clock, and the active projects.
 */
export function openSession(scenario, workspace) {
  const embedder = embedderFor(scenario.embedder ?? "none");
  const settings = componentSettings(scenario.settings);
  const clock = parseTime(scenario.now ?? DEFAULT_NOW);
  const release = acquireWorkspaceLock(workspace);
  try {
    const replies = scenario.model_replies === undefined ? undefined : modelScript(scenario.model_replies, workspace);
    const memory = new MemoryComponent({
      workspaceDir: workspace,
      settings,
      embedder,
      model: replies === undefined ? undefined : scriptedModel(replies, (v) => toJsonText(v)),
      lock: false, // the session holds it, from now until the end
    });
    return {
      memory,
      nowMs: clock.ms,
      // Never the host's zone: the offset `now` is written with, else 0.
      utcOffsetMinutes: clock.offsetMinutes ?? 0,
      projects: new ActiveProjects(),
      /** A step's `now`: the clock and the offset it is written with (`set_clock` in conformance.rs). */
      setClock(text) {
        const at = parseTime(text);
        this.nowMs = at.ms;
        this.utcOffsetMinutes = at.offsetMinutes ?? 0;
      },
      /** The context of a turn typed by the owner on the command line. */
      context() {
        return {
          nowMs: BigInt(this.nowMs),
          sessionId: undefined,
          sessionKind: "interactive",
          channel: "cli",
          sender: undefined,
          senderIsOwner: true,
          activeProjects: this.projects.keys(),
          utcOffsetMinutes: this.utcOffsetMinutes,
        };
      },
      async close() {
        try {
          await memory.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

