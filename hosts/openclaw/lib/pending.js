// Due intents waiting for the owner's next turn: `.memory/pending-intents.jsonl`
// in the workspace, one intent per line, rewritten whole (a temporary file,
// fsync, rename, fsync of the directory) on every change, so a crash leaves
// the old queue or the new one, never a torn line.
//
// `intents.due` spends an intent's fire before anyone has seen it, so the
// queue must not lose what it returns. Collecting is two-phase: the armed
// time-based intents are written first as `prepared` at the instant `due`
// will be called with, then `due` runs, then what it fired is written as
// `ready`. A crash between the two leaves `prepared` lines; the next process
// settles them against `intents.list`: an intent whose last fire is that very
// instant was fired by that call and is kept (ready), any other is dropped
// (it is still armed, and the next `due` fires it).
//
// Only the process holding the workspace (`.memory/workspace.lock` names it) opens
// the component, and the queue is only touched through an open component, so
// one process at a time writes it; in that process, changes are serialized.

import fs from "node:fs";
import path from "node:path";
import { MEMORY } from "./component.js";
import { writeDurably } from "./durable.js";
import { intentBlock } from "./framing.js";

export const PENDING_FILE = ".memory/pending-intents.jsonl";
/** A turn's share of intents (plugin/src/logic/intents.rs MAX_INTENTS_PER_TURN, INTENT_BUDGET_CHARS). */
export const MAX_INTENTS_PER_TURN = 3;
export const INTENT_BUDGET_CHARS = 1200;

const numberOf = (value) => (value === undefined || value === null ? null : Number(value));
const keyOf = (entry) => `${entry.id}@${entry.firedAtMs}`;

/** A queue line for an intent (jco's shape: BigInt times) fired at `firedAtMs`. */
export function entryOf(intent, firedAtMs, state) {
  return {
    id: Number(intent.id),
    text: intent.text,
    dueAtMs: numberOf(intent.dueAtMs),
    firedAtMs,
    channel: intent.channel ?? null,
    sender: intent.sender ?? null,
    state,
  };
}

/**
 * Whether a turn may receive an entry: the component's scope rule for
 * intents (intents.rs `in_scope`): in its channel if it names one; from its
 * sender if it names one, else only the owner.
 */
export function inScope(entry, { channel, sender, senderIsOwner }) {
  return (
    (entry.channel === null || entry.channel === channel) &&
    (entry.sender !== null ? entry.sender === sender : senderIsOwner === true)
  );
}

export class PendingIntents {
  #file;
  #lock = Promise.resolve();
  #claimed = new Set(); // keys handed to a turn that has not finished taking them
  #delivered = new Set(); // keys delivered by this process (kept out even if their removal failed)

  constructor(workspaceDir) {
    this.file = this.#file = path.join(workspaceDir, PENDING_FILE);
  }

  #exclusive(task) {
    const run = this.#lock.then(task, task);
    this.#lock = run.catch(() => {});
    return run;
  }

  /** The queue on disk (unreadable lines are skipped). */
  entries() {
    let text;
    try {
      text = fs.readFileSync(this.#file, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") return [];
      throw error;
    }
    const entries = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const entry = JSON.parse(line);
        if (Number.isSafeInteger(entry?.id) && typeof entry.text === "string") entries.push(entry);
      } catch {
        // Not one of ours; the queue is only ever replaced whole.
      }
    }
    return entries.filter((e) => !this.#delivered.has(keyOf(e)));
  }

  #write(entries) {
    writeDurably(this.#file, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
  }

  /** `prepared` entries resolved against the intents (see above); the others as they are. */
  static #settle(entries, intents) {
    return entries.flatMap((entry) => {
      if (entry.state !== "prepared") return [entry];
      const intent = intents.find((i) => Number(i.id) === entry.id);
      const fired = intent?.lastFiredAtMs !== undefined && Number(intent.lastFiredAtMs) === entry.firedAtMs;
      return fired ? [{ ...entry, state: "ready" }] : [];
    });
  }

  /**
   * Fires the time-based intents due at `nowMs` (`intents.due`) and queues
   * them. `memory` is the workspace's MemoryComponent; `context` a turn
   * context at `nowMs` for `intents.list`. Returns the intents fired.
   */
  collect(memory, nowMs, context) {
    return this.#exclusive(() =>
      // `list` and `due` in one slot of the memory's queue: no call comes between them.
      memory.exclusive(async (invoke) => {
        const intents = await invoke("intents", "list", [MEMORY, { ...context, nowMs: BigInt(nowMs) }], { command: "intentList" });
        const before = this.entries();
        const queued = PendingIntents.#settle(before, intents);
        const armed = intents.filter((i) => i.dueAtMs !== undefined && i.state === "armed");
        if (armed.length === 0) {
          if (queued.length !== before.length || queued.some((e, i) => e !== before[i])) this.#write(queued);
          return [];
        }
        this.#write([...queued, ...armed.map((i) => entryOf(i, nowMs, "prepared"))]);
        const fired = await invoke("intents", "due", [MEMORY, BigInt(nowMs)], { command: "due" });
        const firedKeys = new Set(fired.map((i) => keyOf(entryOf(i, nowMs))));
        this.#write([
          ...queued.filter((e) => !firedKeys.has(keyOf(e))),
          ...fired.map((i) => entryOf(i, nowMs, "ready")),
        ]);
        return fired;
      }),
    );
  }

  /**
   * Claims what a turn may receive, within a turn's share, oldest first:
   * `{ entries, blocks, handedOff(), release() }`. Call `handedOff` once the
   * blocks are OpenClaw's (they leave the queue), or `release` if they never
   * were (they stay for the next turn). `listIntents()` settles a queue a
   * crash left prepared.
   */
  take(turn, listIntents) {
    return this.#exclusive(async () => {
      let entries = this.entries();
      if (entries.some((e) => e.state === "prepared")) {
        entries = PendingIntents.#settle(entries, await listIntents());
        this.#write(entries);
      }
      const chosen = [];
      let used = 0;
      for (const entry of entries) {
        if (chosen.length === MAX_INTENTS_PER_TURN) break;
        if (entry.state !== "ready" || this.#claimed.has(keyOf(entry)) || !inScope(entry, turn)) continue;
        const block = intentBlock(entry);
        const size = [...block].length;
        if (chosen.length > 0 && used + size > INTENT_BUDGET_CHARS) continue; // it waits for a later turn
        used += size;
        chosen.push({ entry, block });
      }
      const keys = chosen.map((c) => keyOf(c.entry));
      for (const key of keys) this.#claimed.add(key);
      let settled = false;
      return {
        entries: chosen.map((c) => c.entry),
        blocks: chosen.map((c) => c.block),
        handedOff: () => {
          if (settled) return Promise.resolve();
          settled = true;
          for (const key of keys) this.#delivered.add(key);
          return this.#exclusive(() => {
            for (const key of keys) this.#claimed.delete(key);
            if (keys.length) this.#write(this.entries());
          });
        },
        release: () => {
          if (settled) return;
          settled = true;
          for (const key of keys) this.#claimed.delete(key);
        },
      };
    });
  }
}
