// The component's cost under Node (jco + preview2-shim), on any corpus: a
// copy of DIR is indexed from scratch, then each query is searched
// `--repeat` times. Prints JSON comparable with `memory-harness bench-corpus
// DIR --queries FILE --no-native` (the same component under wasmtime).
//
// Usage: node test/bench.mjs DIR --queries FILE [--repeat N]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryComponent, turnContext } from "../lib/component.js";

function parseArgs(argv) {
  const args = { repeat: 20 };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--queries") args.queries = argv[++i];
    else if (argv[i] === "--repeat") args.repeat = Number(argv[++i]);
    else args.dir = argv[i];
  }
  if (!args.dir || !args.queries || !(args.repeat > 0)) {
    console.error("usage: node test/bench.mjs DIR --queries FILE [--repeat N]");
    process.exit(2);
  }
  return args;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const args = parseArgs(process.argv.slice(2));
const queries = fs.readFileSync(args.queries, "utf8").split("\n").map((q) => q.trim()).filter(Boolean);
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-bench-"));
const workspace = path.join(temp, "ws");
fs.cpSync(args.dir, workspace, { recursive: true });
fs.rmSync(path.join(workspace, ".memory"), { recursive: true, force: true });

const memory = new MemoryComponent({ workspaceDir: workspace });
try {
  let started = performance.now();
  await memory.open();
  const openMs = performance.now() - started;

  started = performance.now();
  let files = 0;
  for (;;) {
    const report = await memory.sync({ maxFiles: 500 });
    files += report.filesIndexed;
    if (report.filesPending === 0 || report.filesIndexed === 0) break;
  }
  const indexMs = performance.now() - started;

  const times = [];
  for (let round = 0; round < args.repeat; round += 1) {
    for (const query of queries) {
      const t = performance.now();
      await memory.search({ query, context: turnContext({ nowMs: Date.UTC(2026, 11, 2) }) });
      times.push(performance.now() - t);
    }
  }
  times.sort((a, b) => a - b);
  const round3 = (x) => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify(
      {
        host: `node ${process.versions.node} (jco, preview2-shim)`,
        files,
        open_ms: round3(openMs),
        index_ms: round3(indexMs),
        index_files_per_s: Math.round(files / (indexMs / 1000)),
        searches: times.length,
        search_median_ms: round3(percentile(times, 50)),
        search_p95_ms: round3(percentile(times, 95)),
      },
      null,
      2,
    ),
  );
} finally {
  await memory.close();
  fs.rmSync(temp, { recursive: true, force: true });
}
