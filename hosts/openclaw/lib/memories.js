// One component instance per agent workspace, opened on first use with the
// embedder and model OpenClaw configures for that agent, and kept in sync
// with the files: a call that reads memory first syncs when the last sync is
// older than `syncIntervalMs` (an unchanged workspace costs a directory walk).

import path from "node:path";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_EMBED_TIMEOUT_MS,
  DEFAULT_MEMORY_MIB,
  MemoryComponent,
  resolveSettings,
} from "./component.js";
import { openclawEmbedder, openclawModel } from "./bridge.js";
import { contextOf } from "./adapt.js";
import { PendingIntents } from "./pending.js";
import { resolveTimeZone } from "./time.js";
import { FIRST_PACE, nextPace } from "./pacing.js";

/** Texts a sync before a turn's memory use may embed: a session's new lines, not a backlog. */
export const BEFORE_USE_EMBEDDINGS = 128;

/**
 * The host's cap on any model call never goes below a minute (a host
 * setting); the component still gives each call its own, shorter deadline.
 */
const MODEL_CAP_FLOOR_MS = 60000;

/**
 * The plugin's settings (`plugins.entries.memory-wasm.config`): the
 * component's (`search`, `bootstrap`, `dreaming`'s gates, `flush`), passed
 * on as they are for the component to resolve (`config.resolve`: its
 * defaults, its ranges), and this host's own, with their defaults here.
 */
export function pluginSettings(config = {}) {
  // This host's keys; everything else in these sections is the component's.
  const { enabled: injectBootstrap, ...bootstrap } = config.bootstrap ?? {};
  const { enabled: dreamingEnabled, cron, timezone, ...gates } = config.dreaming ?? {};
  return {
    component: { search: config.search, bootstrap, dreaming: gates, flush: config.flush },
    injectBootstrap: injectBootstrap !== false,
    // Lane 2 within the prompt build (the component's own default, for a host that passes none, is longer).
    escalation: { mode: config.escalation?.mode ?? "escalate", timeoutMs: config.escalation?.timeoutMs ?? 8000 },
    rememberAcrossConversations: config.rememberAcrossConversations === true,
    // The sweep's schedule on OpenClaw's cron (memory-harness's `[memory.dreaming] frequency` is its own).
    dreaming: { enabled: dreamingEnabled !== false, cron: cron ?? "0 3 * * *", timezone },
    // An IANA zone; else OpenClaw's `agents.defaults.userTimezone`, else the host's (lib/time.js).
    timeZone: config.timeZone,
    intents: { deliverDue: config.intents?.deliverDue !== false },
    // memory-harness's `[limits]`, with its defaults (lib/guest.js).
    limits: {
      callTimeoutMs: config.limits?.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      memoryMib: config.limits?.memoryMib ?? DEFAULT_MEMORY_MIB,
    },
    embedTimeoutMs: config.embedTimeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS,
    syncIntervalMs: config.syncIntervalMs ?? 5000,
    useModel: config.model?.enabled !== false,
  };
}

export class Memories {
  #api;
  #open = new Map(); // workspace dir -> Promise<entry>
  #settled = new Map(); // workspace dir -> entry, once open
  #closing = new Map(); // workspace dir -> the close in progress
  #pending = new Map(); // workspace dir -> PendingIntents
  #resolved = null; // the component's resolution of the plugin's settings

  constructor(api) {
    this.#api = api;
    this.settings = pluginSettings(api.pluginConfig);
  }

  /**
   * The component's settings, dream gates and flush values for the plugin's
   * config (`config.resolve`): `{ settings, dreamGates, flush }`.
   */
  resolved() {
    this.#resolved ??= resolveSettings(this.settings.component).catch((error) => {
      this.#resolved = null;
      throw error;
    });
    return this.#resolved;
  }

  /**
   * The owner's time zone under `cfg` (OpenClaw's config; the plugin's when
   * the hook names none): the plugin's `timeZone`, else
   * `agents.defaults.userTimezone`, else the host's.
   */
  timeZone(cfg) {
    const config = cfg ?? this.#api.config;
    return resolveTimeZone({ configured: this.settings.timeZone, userTimezone: config?.agents?.defaults?.userTimezone });
  }

  /** The component's turn context for a hook's or tool's context, at `nowMs`, in the owner's time zone. */
  context(ctx = {}, nowMs = Date.now()) {
    return contextOf(ctx, nowMs, this.timeZone(ctx?.config));
  }

  /** The due intents waiting in a workspace for the owner's next turn. */
  pending(workspaceDir) {
    const dir = path.resolve(workspaceDir);
    if (!this.#pending.has(dir)) this.#pending.set(dir, new PendingIntents(dir));
    return this.#pending.get(dir);
  }

  /** The workspace of `agentId` under `cfg`. */
  workspaceOf(cfg, agentId) {
    return this.#api.runtime.agent.resolveAgentWorkspaceDir(cfg, agentId ?? "main");
  }

  /** The open memory of a workspace (opened on first use). */
  async forWorkspace({ workspaceDir, cfg, agentId }) {
    const config = cfg ?? this.#api.config;
    const dir = path.resolve(workspaceDir ?? this.workspaceOf(config, agentId));
    // A workspace being closed is reopened only once its lock is released.
    await this.#closing.get(dir);
    if (!this.#open.has(dir)) {
      const opening = this.#openWorkspace(dir, config, agentId).catch((error) => {
        this.#open.delete(dir);
        throw error;
      });
      this.#open.set(dir, opening);
    }
    return this.#open.get(dir);
  }

  async #openWorkspace(workspaceDir, cfg, agentId) {
    const log = this.#api.logger;
    const { dreamGates, flush } = await this.resolved();
    let embedder = null;
    try {
      embedder = await openclawEmbedder(cfg, agentId, { log, timeoutMs: this.settings.embedTimeoutMs });
    } catch (error) {
      log?.warn?.(`memory-wasm: embeddings unavailable (${error?.message ?? error?.val ?? error}); recall stays lexical`);
    }
    const memory = new MemoryComponent({
      workspaceDir,
      health: true,
      config: this.settings.component,
      embedder,
      model: this.settings.useModel ? openclawModel(this.#api) : null,
      embedTimeoutMs: this.settings.embedTimeoutMs,
      limits: this.settings.limits,
      // The longest model turn the settings ask for (a dreaming rewrite may
      // take longer than a flush), and never below this host's floor.
      modelTimeoutMs: Math.max(MODEL_CAP_FLOOR_MS, dreamGates.modelTimeoutMs, flush.timeoutMs, this.settings.escalation.timeoutMs),
    });
    try {
      await memory.open();
    } catch (error) {
      await memory.close().catch(() => {}); // release the workspace lock it may hold
      throw error;
    }
    for (const note of memory.notes) log?.warn?.(`memory-wasm: note: ${note}`);
    for (const r of memory.replayed) {
      if (r.error) log?.warn?.(`memory-wasm: the spooled ${r.call} ${r.file} failed again and is kept: ${r.error.message}`);
      else log?.info?.(`memory-wasm: replayed the spooled ${r.call} ${r.file}`);
    }
    // Not synced yet: the first `fresh()` syncs, `index` reports the whole work.
    const entry = { memory, embedder: embedder?.info ?? null, workspaceDir, syncedAt: 0 };
    this.#settled.set(workspaceDir, entry);
    return entry;
  }

  async #sync(entry, request) {
    const report = await entry.memory.sync(request);
    entry.syncedAt = Date.now();
    return report;
  }

  /**
   * The workspace's memory, synced when the last sync is older than the
   * interval: every changed file, at most BEFORE_USE_EMBEDDINGS texts
   * embedded (a backlog is `memory index`'s work, not a turn's).
   */
  async fresh(where) {
    const entry = await this.forWorkspace(where);
    // A read-only workspace is read as it is (the component cannot sync it).
    if (!entry.memory.readOnly && Date.now() - entry.syncedAt > this.settings.syncIntervalMs) {
      await this.#syncEntry(entry, { embeddings: BEFORE_USE_EMBEDDINGS });
    }
    return entry;
  }

  /**
   * A full sync in calls sized by time (lib/pacing.js), each committing its
   * work; only the first forces. `embeddings`: texts the whole sync may
   * embed (default: all it needs). `progress(totals, elapsedMs)` after each
   * call. Returns the totals.
   */
  async syncAll(where, { force = false, acknowledgeRebuild = false, embeddings = Infinity, progress } = {}) {
    const entry = await this.forWorkspace(where);
    return this.#syncEntry(entry, { force, acknowledgeRebuild, embeddings, progress });
  }

  async #syncEntry(entry, { force = false, acknowledgeRebuild = false, embeddings = Infinity, progress } = {}) {
    const began = Date.now();
    const total = { filesSeen: 0, filesIndexed: 0, filesUnchanged: 0, filesRemoved: 0, filesPending: 0, chunksIndexed: 0, embeddingsComputed: 0, embeddingsCached: 0, vectorsPending: 0, problems: [] };
    let pace = FIRST_PACE;
    let embedLeft = embeddings;
    for (let first = true; ; first = false) {
      const started = Date.now();
      const maxEmbeddings = Math.min(pace.embeddings, embedLeft);
      const report = await this.#sync(entry, { maxFiles: pace.files, maxEmbeddings, force: force && first, acknowledgeRebuild });
      pace = nextPace(pace, report.filesIndexed, report.embeddingsComputed, Date.now() - started);
      embedLeft -= report.embeddingsComputed;
      total.filesSeen = report.filesSeen;
      total.filesPending = report.filesPending;
      total.vectorsPending = report.vectorsPending;
      total.filesIndexed += report.filesIndexed;
      total.filesRemoved += report.filesRemoved;
      total.chunksIndexed += report.chunksIndexed;
      total.embeddingsComputed += report.embeddingsComputed;
      total.embeddingsCached += report.embeddingsCached;
      total.rebuilt ??= report.rebuilt;
      total.embeddingProblem ??= report.embeddingProblem;
      total.problems.push(...report.problems);
      progress?.(total, Date.now() - began);
      const advanced = report.filesIndexed > 0 || report.embeddingsComputed > 0 || report.embeddingsCached > 0;
      const vectorsWanted = report.vectorsPending > 0 && !report.embeddingProblem && embedLeft > 0;
      // A call that did nothing while work is pending would only repeat itself.
      if (!(report.filesPending > 0 || vectorsWanted) || !advanced) break;
    }
    total.filesUnchanged = Math.max(0, total.filesSeen - total.filesIndexed - total.filesPending);
    return total;
  }

  /** The entry of a workspace that is already open, or null: for `status()`, which must not wait. */
  openedSync(workspaceDir) {
    return this.#settled.get(path.resolve(workspaceDir)) ?? null;
  }

  async close(workspaceDir) {
    const dir = path.resolve(workspaceDir);
    const opening = this.#open.get(dir);
    this.#open.delete(dir);
    this.#settled.delete(dir);
    if (!opening) return;
    const closing = opening
      .catch(() => null)
      .then((entry) => entry?.memory.close())
      .finally(() => this.#closing.delete(dir));
    this.#closing.set(dir, closing.catch(() => {}));
    await closing;
  }

  async closeAll() {
    await Promise.all([...this.#open.keys()].map((dir) => this.close(dir)));
  }
}
