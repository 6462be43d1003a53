// `openclaw memory …`: the slot's plugin owns this command (OpenClaw's
// built-in one leaves with memory-core). The person at the terminal is the
// owner.

import { defaultAgentId, intentSpecOf, toJson } from "./adapt.js";
import { dreamSummary, runDream } from "./dreaming.js";

function print(value, json) {
  process.stdout.write(json ? `${toJson(value, 2)}\n` : `${value}\n`);
}

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

export function registerCli(api, memories) {
  api.registerCli(
    ({ program, config }) => {
      const cfg = config ?? api.config;
      const owner = () => memories.context({ senderIsOwner: true, channel: "cli", config: cfg });
      const where = (opts) => {
        const agentId = opts.agent ?? defaultAgentId(cfg);
        return { cfg, agentId, workspaceDir: memories.workspaceOf(cfg, agentId) };
      };
      // Every command releases the workspace when done: the CLI is one process among others.
      const action = (fn) => async (...args) => {
        try {
          await fn(...args);
        } catch (error) {
          process.stderr.write(`memory: ${error.message}\n`);
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
          const target = where(opts);
          const entry = await memories.forWorkspace(target);
          const status = await entry.memory.status();
          const health = entry.memory.health?.() ?? null;
          const notes = entry.memory.notes ?? [];
          if (opts.json) return print({ workspaceDir: target.workspaceDir, embedder: entry.embedder, status, hostHealth: health, notes }, true);
          const lines = [formatStatus(status, { workspaceDir: target.workspaceDir, embedder: entry.embedder })];
          for (const note of notes) lines.push(`Note: ${note}`);
          if (health) {
            lines.push(`Host health: ${health.errors ?? 0} failed calls, ${health.traps ?? 0} traps (${health.deadline_stops ?? 0} at the deadline)`);
            const e = health.last_error;
            if (e) lines.push(`Last error: ${new Date(e.at_ms).toISOString()} ${e.host} ${e.command} [${e.kind}]: ${e.message}`);
          }
          print(lines.join("\n"));
        }));

      memory
        .command("index")
        .description("Bring the index up to date with the memory files")
        .option("--agent <id>", "agent id")
        .option("--force", "re-read every file")
        .option("--json", "print JSON")
        .action(action(async (opts) => {
          // The user asked for it: it reports and clears an implicit rebuild.
          const total = await memories.syncAll(where(opts), { force: Boolean(opts.force), acknowledgeRebuild: true });
          if (opts.json) return print(total, true);
          const lines = [
            `Indexed ${total.filesIndexed} files (${total.filesUnchanged} unchanged, ${total.filesRemoved} removed) of ${total.filesSeen}; ${total.chunksIndexed} entries and windows.`,
          ];
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
          if (result.indexRebuilt && !opts.json) process.stderr.write(`note: ${result.indexRebuilt}; run \`memory index\` to acknowledge it\n`);
          print(opts.json ? result : `Search mode: ${result.mode}\n${formatHits(result.hits)}`, opts.json);
        }));

      memory
        .command("get")
        .description("Read lines of a memory file")
        .argument("<path>", "workspace-relative path")
        .option("--from <line>", "first line", (v) => Number.parseInt(v, 10))
        .option("--lines <n>", "how many lines", (v) => Number.parseInt(v, 10))
        .option("--agent <id>", "agent id")
        .action(action(async (file, opts) => {
          const { memory } = await memories.forWorkspace(where(opts));
          const end = opts.from !== undefined && opts.lines !== undefined ? opts.from + opts.lines - 1 : undefined;
          const result = await memory.get({ path: file, startLine: opts.from, endLine: end, context: owner() });
          print(result.text);
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
      });
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
          })(command.optsWithGlobals()),
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
          })(command.optsWithGlobals()),
        );
    },
    { descriptors: [{ name: "memory", description: "Agent memory (memory-wasm)", hasSubcommands: true }] },
  );
}
