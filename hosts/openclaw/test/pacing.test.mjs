import { test } from "node:test";
import assert from "node:assert/strict";
import { FIRST_PACE, nextPace, vectorsOf, etaMs, describeProgress, formatDuration } from "../lib/pacing.js";

test("sizes that were used up move towards the target time, within bounds", () => {
  assert.deepEqual(nextPace(FIRST_PACE, 200, 64, 500), { files: 800, embeddings: 256 });
  assert.deepEqual(nextPace(FIRST_PACE, 200, 64, 8000), { files: 50, embeddings: 32 });
  assert.deepEqual(nextPace({ files: 200, embeddings: 1000 }, 37, 1000, 4000), { files: 200, embeddings: 500 });
  assert.deepEqual(nextPace({ files: 20000, embeddings: 20000 }, 20000, 20000, 1), { files: 20000, embeddings: 20000 });
});

test("the time left follows the embedding rate and the files to come", () => {
  const p = { filesIndexed: 1000, filesPending: 9000, embedded: 2000, cached: 0, vectorsPending: 18000, elapsedMs: 20000 };
  assert.deepEqual(vectorsOf(p), { done: 2000, total: 200000 });
  assert.equal(etaMs(p), 1980000);
  assert.equal(describeProgress(p), "1,000/10,000 files · 2,000/200,000 vectors · 100/s · about 33m00s left");
});

test("without embedding the time left follows the files; nothing timed yet is unknown", () => {
  const lexical = { filesIndexed: 500, filesPending: 1500, embedded: 0, cached: 0, vectorsPending: 0, elapsedMs: 1000 };
  assert.equal(etaMs(lexical), 3000);
  assert.equal(describeProgress(lexical), "500/2,000 files · about 3s left");
  assert.equal(etaMs({ filesIndexed: 10, filesPending: 10, embedded: 0, cached: 100, vectorsPending: 5, elapsedMs: 1000 }), null);
  assert.equal(etaMs({ filesIndexed: 10, filesPending: 0, embedded: 40, cached: 0, vectorsPending: 0, elapsedMs: 1000 }), 0);
  assert.equal(formatDuration(890000), "14m50s");
  assert.equal(formatDuration(7500000), "2h05m");
});

test("memory index shows a bar on a terminal and a line every few seconds elsewhere", async () => {
  const { progressOnStderr, PROGRESS_LINE_EVERY_MS } = await import("../lib/cli.js");
  const totals = { filesIndexed: 100, filesPending: 100, embeddingsComputed: 50, embeddingsCached: 0, vectorsPending: 950 };
  const written = [];
  let clock = 0;
  const log = progressOnStderr({ isTTY: false, write: (s) => written.push(s) }, () => clock);
  log.update(totals, 1000);
  assert.deepEqual(written, [], "a quick sync prints nothing");
  clock = PROGRESS_LINE_EVERY_MS;
  log.update(totals, 1000);
  log.finish();
  assert.deepEqual(written, ["indexing: 100/200 files · 50/2,000 vectors · 50/s · about 39s left\n"]);
  const drawn = [];
  const bar = progressOnStderr({ isTTY: true, write: (s) => drawn.push(s) });
  bar.update(totals, 1000);
  bar.finish();
  assert.match(drawn[0], /^\rindexing \[#{0,1} {29,30}\] 100\/200 files/);
  assert.equal(drawn.at(-1), "\n");
});
