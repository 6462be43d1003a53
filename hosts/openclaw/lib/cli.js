// `openclaw memory …`: the slot's plugin owns this command (OpenClaw's
// built-in one leaves with memory-core). The person at the terminal is the
// owner.
//
// `--json` follows OpenClaw's own memory CLI (extensions/memory-core,
// 2026.9.6) where it has the command, so a script written for one reads the
// other; what only this plugin has rides along under its own names:
// - status: an array, one element per agent (all configured agents unless
//   `--agent`), each `{ agentId, status }` with `status` OpenClaw's
//   `MemoryProviderStatus` (backend, files, chunks, dirty, workspaceDir,
//   dbPath, provider, model, sources, fts, vector, custom); added:
//   `component` (the component's own status), `embedder`, `hostHealth`,
//   `notes`.
// - search: `{ results }`, each OpenClaw's `MemorySearchResult` (path,
//   startLine, endLine, score, snippet, source, citation), and `warning` when
//   there is one; added: `mode` and `hits` (the component's hits: provenance,
//   framing).
// - forget: the built-in's report names where they apply (`dryRun`,
//   `sessionIds`, `artifacts.memoryFiles|memoryEntries`, `refusals`); added:
//   `filesChanged`, `entriesRemoved`.
// - index, get, dream, intents, report: OpenClaw's has no `--json` for them
//   (or no such command); they print the component's result (`report`: the
//   page's path and figures).
// - a failure: OpenClaw's CLI failure envelope (`formatCliJsonFailure`) on
//   stdout, `{ ok: false, error: { type: "cli_error", message }, agentId }`
//   (plus `error.code`, the component's error kind, when it has one), the
//   message on stderr, exit code 1.

import { defaultAgentId, intentSpecOf, providerStatusOf, searchResultOf, toJson } from "./adapt.js";
import { dreamSummary, runDream } from "./dreaming.js";
import { assertReviewable, gather, reportSummary, writePage } from "./report.js";
import { renderPage } from "./report-page.js";
import { describeProgress, vectorsOf } from "./pacing.js";


export function formatStatus(status, { workspaceDir, embedder }) {
  const classes = status.bySourceClass.map((c) => `${c.sourceClass} ${c.entries}`).join(", ");
  const kinds = status.bySessionKind.map((c) => `${c.sessionKind} ${c.entries}`).join(", ");
  const lines = [
    "Memory: memory-wasm (memory-core component, sandboxed)",
    `Workspace: ${workspaceDir}`,
    `Index: ${status.indexPath} (schema ${status.schemaVersion}, revision ${status.revision})`,
    `Files: ${status.files} · entries: ${status.entries} · windows: ${status.windows} · stale files: ${status.filesStale}`,
    `Search: ${status.searchMode} · embedder: ${embedder ? `${embedder.provider}/${embedder.model} (${embedder.dimensions} dims)` : "none"} · embedded: ${status.embedded}`,
    `By source class: ${classes}`,
    `By session kind: ${kinds}`,
  ];
  if (status.provenanceLost) lines.push(`Provenance ledger lost: ${status.provenanceLost}`);
  if (status.promotionsDeferred > 0) {
    lines.push(`Dreaming: budget full: ${status.promotionsDeferred} deferred (MEMORY.md has no room within its budget; each sweep tries again)`);
  }
  if (status.sweepProblem) lines.push(`Dreaming: ${status.sweepProblem}`);
  if (status.indexRebuilt) lines.push(`Index rebuilt: ${status.indexRebuilt} (shown until the next \`memory index\`)`);
  for (const p of status.problems) lines.push(`Problem: ${p.path}: ${p.problem}`);
  return lines.join("\n");
}

export function formatHits(hits) {
  if (!hits.length) return "No matches.";
  return hits
    .map((hit) => {
      const trust = hit.provenance.sourceClass === "untrusted" ? " UNTRUSTED" : "";
      const snippet = hit.snippet.split("\n").map((l) => `    ${l}`).join("\n");
      return `${hit.score.toFixed(3)}  ${hit.citation}  [${hit.provenance.sourceClass}${trust}]\n${snippet}`;
    })
    .join("\n");
}

/** One intent in one line. */
export function formatIntent(intent) {
  const due = intent.dueAtMs === undefined ? "" : `, due ${new Date(Number(intent.dueAtMs)).toISOString()}`;
  const triggers = intent.triggers.length ? `, on "${intent.triggers.join('", "')}"` : "";
  return `#${intent.id} [${intent.state}] ${intent.text} (fired ${intent.fires}/${intent.fireBudget}${due}${triggers})`;
}

/** A failure as OpenClaw's CLI prints it under `--json` (`formatCliJsonFailure`). */
export function jsonFailure(message, { agentId, kind } = {}) {
  return { ok: false, error: { type: "cli_error", message, ...(kind ? { code: kind } : {}) }, ...(agentId ? { agentId } : {}) };
}

/** The agents a command covers: the one named, else every configured one (OpenClaw's `listAgentIds`), else the default. */
export function agentIdsOf(cfg, agent) {
  if (agent !== undefined) return [agent];
  const ids = (cfg?.agents?.list ?? []).map((a) => a?.id).filter(Boolean);
  return ids.length ? [...new Set(ids)] : [defaultAgentId(cfg)];
}

/** One agent's `status --json` element. */
export function statusJson({ agentId, workspaceDir, embedder, status, hostHealth, notes }) {
  return { agentId, status: providerStatusOf(status, { workspaceDir, embedder, health: hostHealth }), component: status, embedder, hostHealth, notes };
}

/** `search --json`: OpenClaw's `{ results }`, with the component's hits beside them. */
export function searchJson(result) {
  const warning = result.indexRebuilt ? `${result.indexRebuilt}; run \`openclaw memory index\` to acknowledge it` : undefined;
  return { results: result.hits.map(searchResultOf), ...(warning ? { warning } : {}), mode: result.mode, hits: result.hits };
}

/** `forget --json`, from the component's report per session. */
export function forgetJson(agentId, reports) {
  const filesChanged = [...new Set(reports.flatMap((r) => r.report.filesChanged))];
  const entriesRemoved = reports.reduce((n, r) => n + r.report.entriesRemoved, 0);
  return {
    agentId,
    dryRun: false,
    sessionIds: reports.map((r) => r.sessionId),
    filesChanged,
    entriesRemoved,
    artifacts: { memoryFiles: filesChanged.length, memoryEntries: entriesRemoved },
    refusals: [],
  };
}

/** `forget` for people: one line per session, as the harness prints it. */
export function formatForgotten({ sessionId, report }) {
  return `session ${sessionId} forgotten: ${report.entriesRemoved} entries removed from ${report.filesChanged.length} files; it will never be ingested again`;
}

/** Every this many ms a progress line, where standard error is no terminal (a log, CI). */
export const PROGRESS_LINE_EVERY_MS = 5000;

/**
 * `memory index`'s progress on `stream`: a bar redrawn in place on a
 * terminal, else a line every PROGRESS_LINE_EVERY_MS (none for a quick sync).
 */
export function progressOnStderr(stream, now = Date.now) {
  let drawn = false;
  let lastLine = now();
  return {
    update(totals, elapsedMs) {
      const p = { filesIndexed: totals.filesIndexed, filesPending: totals.filesPending, embedded: totals.embeddingsComputed, cached: totals.embeddingsCached, vectorsPending: totals.vectorsPending, elapsedMs };
      if (stream.isTTY) {
        const { done, total } = vectorsOf(p);
        const files = p.filesIndexed + p.filesPending;
        const fraction = total > 0 ? done / total : files > 0 ? p.filesIndexed / files : 1;
        const filled = Math.min(30, Math.floor(fraction * 30));
        stream.write(`\rindexing [${"#".repeat(filled)}${" ".repeat(30 - filled)}] ${describeProgress(p)}\x1b[K`);
        drawn = true;
      } else if (now() - lastLine >= PROGRESS_LINE_EVERY_MS) {
        stream.write(`indexing: ${describeProgress(p)}\n`);
        lastLine = now();
      }
    },
    finish() {
      if (drawn) stream.write("\n");
    },
  };
}

/** `io`: where the commands print (the process's streams; a test's). */
export function registerCli(api, memories, io = process) {
  const print = (value, json) => io.stdout.write(json ? `${toJson(value, 2)}\n` : `${value}\n`);
  api.registerCli(
    ({ program, config }) => {
      const cfg = config ?? api.config;
      const owner = () => memories.context({ senderIsOwner: true, channel: "cli", config: cfg });
      const where = (opts) => {
        const agentId = opts.agent ?? defaultAgentId(cfg);
        return { cfg, agentId, workspaceDir: memories.workspaceOf(cfg, agentId) };
      };
      // Every command releases the workspace when done: the CLI is one
      // process among others. A failure is told on stderr, and under
      // `--json` also as OpenClaw's failure envelope on stdout.
      const action = (fn, commandName) => async (...args) => {
        const last = args.at(-1);
        const opts = typeof last?.optsWithGlobals === "function" ? last.optsWithGlobals() : (last ?? {});
        const name = commandName ?? (typeof last?.name === "function" ? last.name() : "command");
        try {
          await fn(...args);
        } catch (error) {
          const agentId = opts.agent ?? defaultAgentId(cfg);
          const message = `memory ${name} failed (${agentId}): ${error.message}`;
          io.stderr.write(`${message}\n`);
          if (opts.json) print(jsonFailure(message, { agentId, kind: error.kind }), true);
          process.exitCode = 1;
        } finally {
          await memories.closeAll();
        }
      };
      const memory = program.command("memory").description("Agent memory (memory-wasm: the memory-core component)");

      memory
        .command("status")
        .description("What the memory index holds")
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          const results = [];
          for (const agentId of agentIdsOf(cfg, opts.agent)) {
            const target = where({ agent: agentId });
            const entry = await memories.forWorkspace(target);
            const status = await entry.memory.status();
            const hostHealth = entry.memory.health?.() ?? null;
            results.push({ agentId, workspaceDir: target.workspaceDir, embedder: entry.embedder, status, hostHealth, notes: entry.memory.notes ?? [] });
          }
          if (opts.json) return print(results.map(statusJson), true);
          const blocks = results.map(({ agentId, workspaceDir, embedder, status, hostHealth: health, notes }) => {
            const lines = [`Agent: ${agentId}`, formatStatus(status, { workspaceDir, embedder })];
            for (const note of notes) lines.push(`Note: ${note}`);
            if (health) {
              lines.push(`Host health: ${health.errors ?? 0} failed calls, ${health.traps ?? 0} traps (${health.deadline_stops ?? 0} at the deadline)`);
              const e = health.last_error;
              if (e) lines.push(`Last error: ${new Date(e.at_ms).toISOString()} ${e.host} ${e.command} [${e.kind}]: ${e.message}`);
            }
            return lines.join("\n");
          });
          print(blocks.join("\n\n"));
        }));

      memory
        .command("index")
        .description("Bring the index up to date with the memory files")
        .option("--agent <id>", "agent id")
        .option("--force", "re-read every file")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          // The user asked for it: it reports and clears an implicit rebuild.
          const shown = progressOnStderr(io.stderr);
          const total = await memories.syncAll(where(opts), { force: Boolean(opts.force), acknowledgeRebuild: true, progress: shown.update });
          shown.finish();
          if (opts.json) return print({ agentId: where(opts).agentId, ...total }, true);
          const lines = [
            `Indexed ${total.filesIndexed} files (${total.filesUnchanged} unchanged, ${total.filesRemoved} removed) of ${total.filesSeen}; ${total.chunksIndexed} entries and windows; embeddings ${total.embeddingsComputed} computed, ${total.embeddingsCached} cached.`,
          ];
          if (total.vectorsPending > 0) lines.push(`${total.vectorsPending} entries have no vector yet (matched by their words only).`);
          if (total.rebuilt) lines.push(`Index rebuilt: ${total.rebuilt}`);
          if (total.embeddingProblem) lines.push(`Embeddings skipped: ${total.embeddingProblem}`);
          for (const p of total.problems) lines.push(`Problem: ${p.path}: ${p.problem}`);
          print(lines.join("\n"));
        }));

      memory
        .command("search")
        .description("Search memory")
        .argument("[query...]", "what to look for")
        .option("--query <text>", "what to look for")
        .option("--agent <id>", "agent id")
        .option("--max-results <n>", "hits to return", (v) => Number.parseInt(v, 10))
        .option("--min-score <x>", "relevance gate (0..1)", Number.parseFloat)
        .option("--json", "print JSON")
        .action(action(async (words, opts) => {
          const query = opts.query ?? words.join(" ");
          if (!query.trim()) throw new Error("give a query");
          const { memory } = await memories.fresh(where(opts));
          const result = await memory.search({ query, maxResults: opts.maxResults, minScore: opts.minScore, context: owner() });
          if (result.indexRebuilt && !opts.json) io.stderr.write(`note: ${result.indexRebuilt}; run \`memory index\` to acknowledge it\n`);
          print(opts.json ? searchJson(result) : `Search mode: ${result.mode}\n${formatHits(result.hits)}`, opts.json);
        }));

      memory
        .command("get")
        .description("Read lines of a memory file")
        .argument("<path>", "workspace-relative path")
        .option("--from <line>", "first line", (v) => Number.parseInt(v, 10))
        .option("--lines <n>", "how many lines", (v) => Number.parseInt(v, 10))
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action(action(async (file, opts) => {
          const { memory } = await memories.forWorkspace(where(opts));
          const end = opts.from !== undefined && opts.lines !== undefined ? opts.from + opts.lines - 1 : undefined;
          const result = await memory.get({ path: file, startLine: opts.from, endLine: end, context: owner() });
          if (!opts.json) return print(result.text);
          const { path, lines, totalLines, truncated, sourceClass, text } = result;
          print({ path, from: lines.start, to: lines.end, totalLines, truncated, sourceClass, text }, true);
        }));

      memory
        .command("forget")
        .description("Remove everything a session wrote (notes, flushes, its transcript) and never ingest it again")
        .requiredOption("--session <id>", "the session (repeatable)", (v, all = []) => [...all, v])
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          const target = where(opts);
          const { memory } = await memories.forWorkspace(target);
          const reports = [];
          for (const sessionId of opts.session) reports.push({ sessionId, report: await memory.forget({ sessionId, context: owner() }) });
          print(opts.json ? forgetJson(target.agentId, reports) : reports.map(formatForgotten).join("\n"), opts.json);
        }));

      memory
        .command("report")
        .description("Write the review page (sweeps, candidates and their gates, promotions, refused rewrites, entries over time, budgets, intents, recalls); changes nothing in memory")
        .option("--out <file>", "the HTML file to write, never inside the workspace", "memory-report.html")
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          const target = where(opts);
          assertReviewable(target.workspaceDir);
          // Opened, never synced: the page shows the index as the last sync left it.
          const { memory } = await memories.forWorkspace(target);
          const data = await gather(memory, { workspaceDir: target.workspaceDir, nowMs: Date.now(), resolved: await memories.resolved(), context: owner() });
          const file = writePage(opts.out, target.workspaceDir, renderPage(data));
          if (!opts.json) return print(`${file}: ${reportSummary(data)}`);
          const r = data.report;
          print({ agentId: target.agentId, path: file, sweeps: r.sweeps.length, candidates: r.candidatesTotal, promoted: r.promoted.length, recalledEntries: r.recalledTotal, intents: data.intents.length }, true);
        }));

      memory
        .command("dream")
        .description("Run a dreaming sweep now (light, REM, deep)")
        .option("--agent <id>", "agent id")
        .option("--dry-run", "report what would change, write nothing")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          const report = await runDream(memories, where(opts), { dryRun: Boolean(opts.dryRun) });
          print(opts.json ? report : dreamSummary(report), opts.json);
        }));

      // `intents` lists; `intents create|cancel` change them (as the owner).
      // The parent's options are also the subcommands' (`optsWithGlobals`).
      const listIntents = action(async (opts) => {
        const { memory } = await memories.forWorkspace(where(opts));
        const intents = await memory.intentList(owner());
        if (opts.json) return print(intents, true);
        print(intents.length ? intents.map(formatIntent).join("\n") : "No standing intents.");
      }, "intents");
      const intents = memory
        .command("intents")
        .description("Standing intents: list them, create or cancel one")
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action((opts, command) => listIntents(command.optsWithGlobals()));
      intents
        .command("list")
        .description("List the standing intents")
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action((opts, command) => listIntents(command.optsWithGlobals()));
      intents
        .command("create")
        .description("Create an intent: fired by words (--trigger) or at a time (--due)")
        .argument("<text...>", "what to bring up when it fires")
        .option("--due <when>", "when it is due: ISO 8601; without an offset, in the owner's time zone")
        .option("--trigger <words>", "words that fire it (repeatable)", (v, all) => [...all, v], [])
        .option("--fire-budget <n>", "how many times it may fire", (v) => Number.parseInt(v, 10))
        .option("--cooldown-minutes <n>", "quiet time after each firing", Number.parseFloat)
        .option("--expires-in-days <n>", "when it expires", Number.parseFloat)
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action((words, _opts, command) =>
          action(async (opts) => {
            const spec = intentSpecOf(
              { text: words.join(" "), triggers: opts.trigger, dueAt: opts.due, fireBudget: opts.fireBudget, cooldownMinutes: opts.cooldownMinutes, expiresInDays: opts.expiresInDays },
              memories.timeZone(cfg),
              "--due",
            );
            const { memory } = await memories.forWorkspace(where(opts));
            const result = await memory.intentCreate(spec, owner());
            if (opts.json) return print(result, true);
            print(result.intent ? `Created ${formatIntent(result.intent)}` : `Kept as a wish: ${result.wish}`);
          }, "intents create")(command.optsWithGlobals()),
        );
      intents
        .command("cancel")
        .description("Cancel an intent")
        .argument("<id>", "the intent's id (from `memory intents`)")
        .option("--agent <id>", "agent id")
        .option("--json", "print JSON")
        .action((id, _opts, command) =>
          action(async (opts) => {
            if (!/^\d+$/.test(id)) throw new Error(`not an intent id: ${id}`);
            const { memory } = await memories.forWorkspace(where(opts));
            const cancelled = await memory.intentCancel(Number(id), owner());
            print(opts.json ? cancelled : `Cancelled ${formatIntent(cancelled)}`, opts.json);
          }, "intents cancel")(command.optsWithGlobals()),
        );
    },
    { descriptors: [{ name: "memory", description: "Agent memory (memory-wasm)", hasSubcommands: true }] },
  );
}
