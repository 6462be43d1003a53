// Dreaming on OpenClaw's scheduler: one cron job of OpenClaw's own (kept
// in step with the plugin's config when the gateway starts) runs an
// isolated agent turn whose message is a token; the `before_agent_reply`
// hook recognises the token, runs `dream.run` on the agent's workspace and
// answers the turn itself, so no model reply is made for it. The schedule
// is in the owner's time zone (`dreaming.timezone`, else the plugin's zone).

export const DREAM_TOKEN = "[memory-wasm:dream]";
const DECLARATION_KEY = "memory-wasm:dreaming";
const JOB_NAME = "memory-wasm dreaming";

/**
 * The cron job the plugin's dreaming settings ask for, in `timeZone` unless
 * they name one; its description names the `gates` (the component's
 * resolved `dream-gates`) when given.
 */
export function dreamingJob(dreaming, timeZone, gates) {
  const tz = dreaming.timezone ?? timeZone;
  // The score is an f32: shown with the digits it holds (0.8, not 0.800000011920929).
  const figures = gates ? ` (limit ${gates.maxPromotions}, min score ${Number(gates.minScore.toPrecision(7))})` : "";
  return {
    declarationKey: DECLARATION_KEY,
    name: JOB_NAME,
    description: `Dreaming sweep of memory-wasm (light, REM, deep): promotes recalled, promotable entries into MEMORY.md${figures}.`,
    enabled: true,
    schedule: { kind: "cron", expr: dreaming.cron, ...(tz ? { tz } : {}) },
    sessionTarget: "isolated",
    wakeMode: "now",
    payload: { kind: "agentTurn", message: DREAM_TOKEN, lightContext: true },
    delivery: { mode: "none" },
  };
}

/** Brings OpenClaw's cron in line with the settings: one job when enabled, none when not. */
export async function reconcileDreamingJob(cron, dreaming, log, timeZone, gates) {
  const jobs = await cron.list({ includeDisabled: true });
  const ours = jobs.filter((job) => job.declarationKey === DECLARATION_KEY || job.name === JOB_NAME);
  if (!dreaming.enabled) {
    for (const job of ours) await cron.remove(job.id);
    return { status: "disabled", removed: ours.length };
  }
  const desired = dreamingJob(dreaming, timeZone, gates);
  const [primary, ...duplicates] = ours;
  for (const job of duplicates) await cron.remove(job.id);
  if (!primary) {
    await cron.add(desired);
    log?.info?.("memory-wasm: created the dreaming cron job");
    return { status: "added", removed: duplicates.length };
  }
  const same =
    primary.enabled !== false &&
    primary.schedule?.expr === desired.schedule.expr &&
    (primary.schedule?.tz ?? undefined) === desired.schedule.tz &&
    primary.payload?.message === DREAM_TOKEN;
  if (!same) {
    await cron.update(primary.id, desired);
    return { status: "updated", removed: duplicates.length };
  }
  return { status: "unchanged", removed: duplicates.length };
}

/** One sweep on a workspace; the owner's scheduler runs it, so it speaks as the owner. */
export async function runDream(memories, where, { dryRun = false, phases = [] } = {}) {
  const { memory } = await memories.fresh(where);
  return memory.dreamRun({
    phases,
    dryRun,
    gates: (await memories.resolved()).dreamGates,
    context: memories.context({ senderIsOwner: true, channel: "cron", trigger: "cron", sessionKind: "cron" }),
  });
}

/** A sweep's report in one line. */
export function dreamSummary(report) {
  const parts = [`sweep ${report.sweep}`, `${report.candidates.length} candidates`, `${report.added.length} added`];
  if (report.merged.length) parts.push(`${report.merged.length} merged`);
  if (report.superseded.length) parts.push(`${report.superseded.length} superseded`);
  if (report.fallbackReason) parts.push(`rewrite refused: ${report.fallbackReason}`);
  return parts.join(", ");
}

export function registerDreaming(api, memories) {
  const dreaming = memories.settings.dreaming;
  api.registerService({
    id: "memory-wasm-dreaming",
    async start(ctx) {
      const cron = ctx?.getCron?.();
      if (!cron) return;
      try {
        const { dreamGates } = await memories.resolved();
        await reconcileDreamingJob(cron, dreaming, ctx.logger ?? api.logger, memories.timeZone(ctx.config), dreamGates);
      } catch (error) {
        (ctx.logger ?? api.logger)?.warn?.(`memory-wasm: cannot schedule dreaming: ${error.message}`);
      }
    },
    async stop() {
      await memories.closeAll();
    },
  });

  api.on(
    "before_agent_reply",
    async (event, ctx) => {
      if (ctx?.trigger !== "cron" || !String(event?.cleanedBody ?? "").includes(DREAM_TOKEN)) return undefined;
      try {
        const report = await runDream(memories, { workspaceDir: ctx.workspaceDir, cfg: ctx.config, agentId: ctx.agentId });
        return { handled: true, reply: { text: `memory-wasm dreaming: ${dreamSummary(report)}` }, reason: "memory-wasm dreaming" };
      } catch (error) {
        return { handled: true, reason: `memory-wasm dreaming failed: ${error.message}` };
      }
    },
    { eligibleTriggers: ["cron"] },
  );
}
