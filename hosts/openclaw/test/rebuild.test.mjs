// A damaged index through the Node host: set aside, rebuilt, reported by the
// search that did it and by status (the component's `index-rebuilt`, the
// provider status's `custom.indexRebuilt`, the CLI's status text) until a
// sync that acknowledges it; the host's own syncs leave it set.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryComponent, turnContext } from "../lib/component.js";
import { providerStatusOf } from "../lib/adapt.js";
import { formatStatus } from "../lib/cli.js";

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-rebuild-"));
fs.writeFileSync(path.join(workspace, "MEMORY.md"), "- The spare bike key hangs behind the pantry door.\n");
const memory = new MemoryComponent({ workspaceDir: workspace });
after(async () => {
  await memory.close();
  fs.rmSync(workspace, { recursive: true, force: true });
});

const owner = { senderIsOwner: true, channel: "cli", sender: undefined };
const search = () => memory.search({ query: "bike key", context: turnContext(owner) });
const index = path.join(workspace, ".memory", "index.sqlite");
const damaged = () => fs.readdirSync(path.dirname(index)).filter((n) => n.startsWith("index.sqlite.damaged-"));

test("a damaged index is set aside, rebuilt and reported until the user's sync", async () => {
  await memory.sync({ acknowledgeRebuild: true });
  assert.equal((await memory.status()).indexRebuilt, undefined);

  await memory.restart(); // the index is closed before it is overwritten
  fs.writeFileSync(index, Buffer.alloc(Math.max(fs.statSync(index).size, 4096), 0x5a));
  const result = await search();
  assert.equal(result.hits[0]?.citation, "MEMORY.md#L1-L1");
  assert.match(result.indexRebuilt, /corrupt.*set aside as \.memory\/index\.sqlite\.damaged-\d+/);
  assert.equal(damaged().length, 1);
  assert.equal((await search()).indexRebuilt, undefined, "reported once");

  await memory.sync({}); // the host's own sync (before a search, on a timer)
  const status = await memory.status();
  assert.match(status.indexRebuilt, /corrupt/);
  assert.match(providerStatusOf(status, { workspaceDir: workspace, embedder: null }).custom.indexRebuilt, /corrupt/);
  assert.match(formatStatus(status, { workspaceDir: workspace, embedder: null }), /Index rebuilt: .*corrupt/);

  const report = await memory.sync({ acknowledgeRebuild: true }); // `openclaw memory index`
  assert.match(report.rebuilt, /corrupt/);
  assert.equal((await memory.status()).indexRebuilt, undefined);
  assert.equal(damaged().length, 1, "the damaged file is kept for a person");

  // Damaged again: this time the first call is a `get`, and it reports it.
  await memory.restart();
  fs.writeFileSync(index, Buffer.alloc(Math.max(fs.statSync(index).size, 4096), 0x5a));
  const got = await memory.get({ path: "MEMORY.md", context: turnContext(owner) });
  assert.match(got.indexRebuilt, /corrupt/);
  assert.equal((await search()).indexRebuilt, undefined);
  assert.equal(damaged().length, 2);
});
