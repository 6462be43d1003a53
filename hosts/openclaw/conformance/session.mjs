// The session of one scenario (`start` in
// host-harness/src/conformance/mod.rs): the workspace lock, the component
// with the scenario's settings, embedder and scripted model, the clock, and
// the active projects.

import { acquireWorkspaceLock, describeSettings, MemoryComponent } from "./plugin.mjs";
import { parseTime } from "./clock.mjs";
import { embedderFor, scriptedModel } from "./doubles.mjs";
import { toJsonText } from "./json.mjs";
import { ActiveProjects } from "./project.mjs";
import { joinPath } from "./workspace.mjs";

const DEFAULT_NOW = "2026-12-02";

/** The sections whose settings a scenario's `settings` name without the section (`settings::SCENARIO_SECTIONS` in the harness). */
const SCENARIO_SECTIONS = ["search", "bootstrap"];

/** The scenario's `settings` (`maxResults` is `search.maxResults`) as the component's settings, by key. */
async function componentConfig(settings) {
  const keys = (await describeSettings()).map((s) => s.key);
  const config = {};
  for (const [name, value] of Object.entries(settings)) {
    const key = SCENARIO_SECTIONS.map((section) => `${section}.${name}`).find((k) => keys.includes(k));
    if (key === undefined) {
      const names = keys.flatMap((k) => SCENARIO_SECTIONS.filter((s) => k.startsWith(`${s}.`)).map((s) => k.slice(s.length + 1)));
      throw new Error(`unknown setting ${JSON.stringify(name)} (a scenario's settings are ${names.join(", ")})`);
    }
    config[key] = value;
  }
  return config;
}

/** The scripted replies, with `append_to` made a path in the workspace (a concurrent editor). */
function modelScript(replies, workspace) {
  return replies.map((reply) => (reply.append_to === undefined ? reply : { ...reply, append_to: joinPath(workspace, reply.append_to) }));
}

/**
 * The session: the workspace lock, the component (instantiated and opened at
 * its first call, and again after a restart, as the wasmtime host does), the
 * clock and its offset, and the active projects.
 */
export async function openSession(scenario, workspace) {
  const embedder = embedderFor(scenario.embedder ?? "none");
  const config = await componentConfig(scenario.settings ?? {});
  const clock = parseTime(scenario.now ?? DEFAULT_NOW);
  const release = acquireWorkspaceLock(workspace);
  const replies = scenario.model_replies;
  const memory = new MemoryComponent({
    workspaceDir: workspace,
    config,
    embedder,
    model: replies === undefined ? undefined : scriptedModel(modelScript(replies, workspace), (v) => toJsonText(v)),
    lock: false, // the session holds it, from now until the end
  });
  return {
    memory,
    nowMs: clock.ms,
    // Never the host's zone: the offset `now` is written with, else 0.
    utcOffsetMinutes: clock.offsetMinutes ?? 0,
    projects: new ActiveProjects(),
    /** A step's `now`: the clock and the offset it is written with (`set_clock` in mod.rs). */
    setClock(text) {
      const at = parseTime(text);
      this.nowMs = at.ms;
      this.utcOffsetMinutes = at.offsetMinutes ?? 0;
    },
    async close() {
      try {
        await memory.close();
      } finally {
        release();
      }
    },
  };
}
