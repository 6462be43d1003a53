// Time-based intents on OpenClaw's scheduler. `intents.due` fires what is
// due at an instant; the plugin calls it from a cron job of OpenClaw's own,
// puts what fired in the workspace's pending queue (lib/pending.js), and the
// owner's next turn gets it as hidden context (`before_prompt_build`).
//
// The job is one isolated agent turn whose message is a token, answered by
// the `before_agent_reply` hook without a model call (as dreaming is), with
// no delivery. Its schedule is a one-shot `at` set to the earliest time an
// intent falls due, re-armed whenever that can change: when the gateway
// starts, after the `intent` tool creates or cancels one, after each run
// (which fires what was due, so the next is later), and after a turn
// collected some itself. When the gateway starts, the job is set to run a
// minute later: what fell due while no gateway ran (or was created by the
// CLI meanwhile) is only known by opening the workspace, which loads the
// embedding provider and compiles the component, and that must not hold up
// the gateway's start; the run re-arms it. An `every` job (each minute) would need no
// re-arming, but each of its runs is an isolated agent session and a task
// record in OpenClaw's state: 1,440 a day to deliver perhaps one intent a
// week. The `at` job runs only when something is due. Everything that edits
// intents while a gateway runs is in the gateway (one process holds a
// workspace), so re-arming there is enough. `deleteAfterRun: false` keeps the
// one job (and its run history): an `at` job that has run stays idle until
// its time is moved past that run.
//
// Each user turn also collects what is due before it takes from the queue,
// so a turn that comes before the job's run, or any turn without a gateway
// (`openclaw agent --local`), still gets a due intent; `due` spends a fire,
// so whichever collects first delivers it, once.

import path from "node:path";
import { defaultAgentId } from "./adapt.js";

export const DUE_TOKEN = "[memory-wasm:due]";
const DECLARATION_KEY = "memory-wasm:intents-due";
const JOB_NAME = "memory-wasm due intents";

/** How long after the gateway starts the job first runs. */
export const START_CHECK_MS = 60000;

/** The turn context of the scheduler's calls: the owner's own job. */
const SCHEDULER = { senderIsOwner: true, channel: "cron", trigger: "cron" };

/**
 * When the next time-based intent falls due, from `intents.list` at
 * `nowMs`: a pending one at its due time, an armed one now, a fired one when
 * its cool-down ends; none past its expiry. Undefined when none will.
 */
export function nextDueAtMs(intents, nowMs) {
  let next;
  for (const intent of intents) {
    if (intent.dueAtMs === undefined || intent.dueAtMs === null) continue;
    let at;
    if (intent.state === "pending") at = Number(intent.dueAtMs);
    else if (intent.state === "armed") at = nowMs;
    else if (intent.state === "fired") at = Number(intent.lastFiredAtMs ?? nowMs) + Number(intent.cooldownMs);
    else continue;
    if (at >= Number(intent.expiresAtMs)) continue;
    next = next === undefined ? at : Math.min(next, at);
  }
  return next;
}

/** The job that runs `intents.due` at `atMs`. */
export function dueJob(atMs) {
  return {
    declarationKey: DECLARATION_KEY,
    name: JOB_NAME,
    description: "Fires the time-based standing intents of memory-wasm that are due; the owner's next turn receives them.",
    enabled: true,
    schedule: { kind: "at", at: new Date(atMs).toISOString() },
    sessionTarget: "isolated",
    wakeMode: "now",
    payload: { kind: "agentTurn", message: DUE_TOKEN, lightContext: true },
    delivery: { mode: "none" },
    deleteAfterRun: false,
  };
}

/**
 * Brings OpenClaw's cron in line: no job when delivery is off; else one job
 * set to the next due time (never in the past: a time already run would not
 * run again). With nothing due, a job set for later is switched off, except
 * from inside its own run (disabling a running job cancels the run); one
 * whose time is past has run, or runs once and finds nothing. `keepEarlier`:
 * a job already set for a time between now and `nextDueMs` stays as it is.
 */
export async function reconcileDueJob(cron, { enabled, nextDueMs, nowMs = Date.now(), inRun = false, keepEarlier = false }, log) {
  const jobs = await cron.list({ includeDisabled: true });
  const ours = jobs.filter((job) => job.declarationKey === DECLARATION_KEY || job.name === JOB_NAME);
  if (!enabled) {
    for (const job of ours) await cron.remove(job.id);
    return { status: "disabled", removed: ours.length };
  }
  const [primary, ...duplicates] = ours;
  for (const job of duplicates) await cron.remove(job.id);
  const scheduledAt = Date.parse(primary?.schedule?.at ?? "");
  if (nextDueMs === undefined) {
    if (primary && primary.enabled !== false && !inRun && !(scheduledAt <= nowMs)) {
      await cron.update(primary.id, { enabled: false });
      return { status: "idle", removed: duplicates.length };
    }
    return { status: "unchanged", removed: duplicates.length };
  }
  const desired = dueJob(Math.max(nextDueMs, nowMs));
  if (!primary) {
    await cron.add(desired);
    log?.info?.(`memory-wasm: due intents scheduled for ${desired.schedule.at}`);
    return { status: "added", at: desired.schedule.at, removed: duplicates.length };
  }
  const wanted = Date.parse(desired.schedule.at);
  const same =
    primary.enabled !== false &&
    primary.schedule?.kind === "at" &&
    (scheduledAt === wanted || (keepEarlier && scheduledAt > nowMs && scheduledAt <= wanted)) &&
    primary.payload?.message === DUE_TOKEN;
  if (!same) {
    await cron.update(primary.id, desired);
    return { status: "updated", at: desired.schedule.at, removed: duplicates.length };
  }
  return { status: "unchanged", at: desired.schedule.at, removed: duplicates.length };
}

/** A due run's answer (the run's summary in `openclaw cron runs`). */
export function dueSummary(fired) {
  if (!fired.length) return "memory-wasm intents: nothing due";
  const ids = fired.map((i) => `#${i.id}`).join(", ");
  return `memory-wasm intents: ${fired.length} due (${ids}), queued for the owner's next turn`;
}

/**
 * Registers the job's service and its `before_agent_reply` answer; returns
 * what the rest of the plugin needs: `rearm(where)` after an edit of
 * intents, `forTurn(where, turnContext)` for a user turn's blocks.
 */
export function registerDue(api, memories) {
  const log = api.logger;
  const enabled = memories.settings.intents.deliverDue;
  let getCron = null; // the gateway's scheduler, while the service runs
  let arming = Promise.resolve();

  const cronNow = () => {
    try {
      return getCron?.() ?? null;
    } catch {
      return null; // stopping: the scheduler is no longer ours
    }
  };
  const defaultWhere = (cfg) => {
    const agentId = defaultAgentId(cfg);
    return { cfg, agentId, workspaceDir: memories.workspaceOf(cfg, agentId) };
  };
  // The job runs as the default agent, on its workspace.
  const isDefault = (where) => {
    const cfg = where.cfg ?? api.config;
    const dir = where.workspaceDir ?? memories.workspaceOf(cfg, where.agentId);
    return path.resolve(dir) === path.resolve(defaultWhere(cfg).workspaceDir);
  };

  /** Sets the job to the next due time of `where` (the default agent's workspace). */
  const rearm = (where, { inRun = false } = {}) => {
    const cron = cronNow();
    if (!cron || !isDefault(where)) return Promise.resolve(null);
    const run = arming.then(async () => {
      if (!enabled) return reconcileDueJob(cron, { enabled: false }, log);
      const { memory } = await memories.forWorkspace(where);
      const nowMs = Date.now();
      const intents = await memory.intentList(memories.context(SCHEDULER, nowMs));
      return reconcileDueJob(cron, { enabled, nextDueMs: nextDueAtMs(intents, nowMs), nowMs, inRun }, log);
    });
    arming = run.catch(() => {});
    return run;
  };

  /** Fires what is due at `nowMs` in `where` and queues it. */
  const collect = async (where, nowMs) => {
    const entry = await memories.forWorkspace(where);
    return memories.pending(entry.workspaceDir).collect(entry.memory, nowMs, memories.context(SCHEDULER, nowMs));
  };

  const warn = (what) => (error) => log?.warn?.(`memory-wasm: ${what}: ${error.message}`);

  api.registerService({
    id: "memory-wasm-intents",
    async start(ctx) {
      const cron = ctx?.getCron?.();
      if (!cron) return; // not a gateway: no scheduler
      getCron = ctx.getCron;
      // A run a minute from now (see above), unless one is set sooner.
      const nowMs = Date.now();
      await reconcileDueJob(cron, { enabled, nextDueMs: nowMs + START_CHECK_MS, nowMs, keepEarlier: true }, log).catch(
        warn("cannot schedule due intents"),
      );
    },
    stop() {
      // The scheduler is revoked as the service stops, so the job stays as it
      // is; the next start re-arms it (a time passed meanwhile runs at once).
      getCron = null;
    },
  });

  api.on(
    "before_agent_reply",
    async (event, ctx) => {
      if (ctx?.trigger !== "cron" || !String(event?.cleanedBody ?? "").includes(DUE_TOKEN)) return undefined;
      const where = { workspaceDir: ctx.workspaceDir, cfg: ctx.config, agentId: ctx.agentId };
      try {
        const fired = enabled ? await collect(where, Date.now()) : [];
        await rearm(where, { inRun: true }).catch(warn("cannot re-arm the due-intents job"));
        return { handled: true, reply: { text: dueSummary(fired) }, reason: "memory-wasm due intents" };
      } catch (error) {
        return { handled: true, reply: { text: `memory-wasm intents: failed: ${error.message}` }, reason: `memory-wasm due intents failed: ${error.message}` };
      }
    },
    { eligibleTriggers: ["cron"] },
  );

  return {
    rearm: (where) => rearm(where).catch(warn("cannot re-arm the due-intents job")),
    /**
     * For a user turn in `where` (`turn`: its turn context): collects what is
     * due, then claims what this turn may receive from the queue (see
     * PendingIntents.take); null when delivery is off.
     */
    async forTurn(where, turn) {
      if (!enabled) return null;
      const entry = await memories.forWorkspace(where);
      const pending = memories.pending(entry.workspaceDir);
      const nowMs = Number(turn.nowMs);
      const fired = await pending.collect(entry.memory, nowMs, memories.context(SCHEDULER, nowMs)).catch((error) => {
        warn("cannot collect due intents")(error);
        return [];
      });
      if (fired.length) rearm(where).catch(warn("cannot re-arm the due-intents job"));
      return pending.take(turn, () => entry.memory.intentList(memories.context(SCHEDULER, nowMs)));
    },
  };
}
