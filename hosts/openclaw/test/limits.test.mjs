// The guest's limits under Node, as under memory-harness: every call has a
// deadline and the instance a memory cap. A call past its deadline (one that
// never returns, or a sync too big for it) is stopped and fails as a trap;
// a guest at its memory cap is stopped and reported as the cap; either way
// the health record counts it and the next call runs on a fresh instance.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_MIB, MemoryComponent, turnContext } from "../lib/component.js";
import { providerStatusOf } from "../lib/adapt.js";
import { hitMemoryCap, PausableDeadline } from "../lib/guest.js";
import { loadHealth } from "../lib/health.js";
import { capMemoryPages, readUleb } from "../lib/wasm-memory-cap.js";
import { section, spinModule, wasmModule, TRAP } from "./wasm-bytes.mjs";
import { spool } from "../lib/spool.js";

const tmp = (what) => fs.mkdtempSync(path.join(os.tmpdir(), `memory-wasm-${what}-`));

/** The spinning guest (test/guests/spin-guest.js) with its core module, in a directory of its own. */
function spinGuest() {
  const dir = tmp("spin-guest");
  fs.copyFileSync(new URL("./guests/spin-guest.js", import.meta.url), path.join(dir, "spin-guest.js"));
  fs.writeFileSync(path.join(dir, "spin.core.wasm"), spinModule());
  return pathToFileURL(path.join(dir, "spin-guest.js"));
}

function spinning(options = {}) {
  const workspaceDir = tmp("spin");
  return new MemoryComponent({ workspaceDir, health: true, guestUrl: spinGuest(), ...options });
}

/** A workspace of `files` daily notes of `lines` lines each. */
function bigWorkspace(files, lines) {
  const dir = tmp("big");
  fs.mkdirSync(path.join(dir, "memory"));
  fs.writeFileSync(path.join(dir, "MEMORY.md"), "# Memory\n\n- Dana owns the billing service.\n");
  for (let f = 0; f < files; f += 1) {
    const text = Array.from({ length: lines }, (_, l) => `- note ${l} of day ${f}: topic${l % 97} and word${(f * l) % 1013}`).join("\n");
    fs.writeFileSync(path.join(dir, `memory/2026-11-${String(f + 1).padStart(2, "0")}.md`), `${text}\n`);
  }
  return dir;
}

const search = (memory, query) => memory.search({ query, context: turnContext() });

test("the limits default to memory-harness's", () => {
  assert.equal(DEFAULT_CALL_TIMEOUT_MS, 30000);
  assert.equal(DEFAULT_MEMORY_MIB, 1024);
  const memory = new MemoryComponent({ workspaceDir: tmp("defaults"), limits: { callTimeoutMs: 5 } });
  assert.deepEqual(memory.limits, { callTimeoutMs: 5, memoryMib: 1024 });
});

test("a guest call that never returns is stopped at its deadline; the next call runs on a fresh instance", async () => {
  const memory = spinning({ limits: { callTimeoutMs: 300 } });
  try {
    const before = await search(memory, "anything");
    const started = performance.now();
    await assert.rejects(search(memory, "never returns"), (e) => {
      assert.equal(e.trapped, true);
      assert.equal(e.stop, "deadline");
      assert.match(e.message, /the call ran past its deadline of 300 ms and was stopped; the next call starts a fresh instance/);
      return true;
    });
    const took = performance.now() - started;
    assert.ok(took >= 290 && took < 5000, `stopped after ${took} ms`);
    const health = loadHealth(memory.workspaceDir);
    assert.equal(health.traps, 1);
    assert.equal(health.deadline_stops, 1);
    assert.equal(health.last_error.kind, "deadline");
    assert.equal(health.last_error.command, "search");
    const after = await search(memory, "anything");
    assert.notEqual(after.threadId, before.threadId, "a fresh instance in a fresh thread");
    assert.equal(memory.statusNow().calls, 1, "the fresh instance answers status synchronously");
  } finally {
    await memory.close();
  }
});

test("opening is under the deadline too, and a stop there is in the workspace's health", async () => {
  const memory = spinning({ limits: { callTimeoutMs: 300 } });
  process.env.SPIN_GUEST_OPEN = "1";
  try {
    await assert.rejects(memory.open(), (e) => e.trapped && /past its deadline of 300 ms/.test(e.message));
    const health = memory.health();
    assert.equal(health.deadline_stops, 1);
    assert.equal(health.last_error.command, "open");
  } finally {
    delete process.env.SPIN_GUEST_OPEN;
  }
  // The next call opens a fresh instance.
  assert.ok(await search(memory, "anything"));
  await memory.close();
});

test("a spooled call whose replay runs out of time is kept for the next process, and opening goes on without it", async () => {
  const memory = spinning({ limits: { callTimeoutMs: 300 } });
  const file = spool(memory.workspaceDir, "ingest", { sessionId: "never", transcript: "", context: turnContext() });
  try {
    await memory.open();
    assert.equal(memory.replayed.length, 1);
    assert.equal(memory.replayed[0].error.stop, "deadline");
    assert.ok(fs.existsSync(file), "kept in the spool, not set aside");
    assert.equal(memory.health().deadline_stops, 1);
    assert.ok(await search(memory, "anything"), "the instance opened without replaying it again");
    assert.equal(memory.replayed.length, 1);
  } finally {
    await memory.close();
  }
});

test("time the guest waits on the model does not count against its deadline", async () => {
  const model = { complete: () => new Promise((resolve) => setTimeout(() => resolve({ text: "late but fine" }), 600)) };
  const memory = spinning({ limits: { callTimeoutMs: 300 }, model, modelTimeoutMs: 5000 });
  try {
    const answer = await search(memory, "asks the model");
    assert.equal(answer.reply, "late but fine");
    assert.equal(memory.modelCalls.count, 1);
  } finally {
    await memory.close();
  }
});

test("a trap ends the instance; the next call gets a fresh one, and the component's errors stay its own", async () => {
  const memory = spinning();
  try {
    const before = await search(memory, "anything");
    await assert.rejects(search(memory, "traps"), (e) => e.trapped && e.stop === "trap" && /unreachable/.test(e.message));
    assert.equal(loadHealth(memory.workspaceDir).last_error.kind, "trap");
    const after = await search(memory, "anything");
    assert.notEqual(after.threadId, before.threadId);
    await assert.rejects(search(memory, "fails"), (e) => e.kind === "not-found" && e.detail === "no such thing" && !e.trapped);
    assert.equal((await search(memory, "anything")).threadId, after.threadId, "an error leaves the instance alive");
  } finally {
    await memory.close();
  }
});

test("a guest that grows past its memory cap is stopped and reported as the cap", async () => {
  const memory = spinning({ limits: { memoryMib: 4 } });
  try {
    await assert.rejects(search(memory, "grows"), (e) => {
      assert.equal(e.stop, "memory-cap");
      assert.match(e.message, /needed more than its memory cap of 4 MiB and was stopped/);
      return true;
    });
    const health = loadHealth(memory.workspaceDir);
    assert.equal(health.last_error.kind, "memory-cap");
    assert.deepEqual([health.traps, health.deadline_stops], [1, 0]);
  } finally {
    await memory.close();
  }
});

test("the component: a sync past its deadline is stopped, and a fresh instance finishes the index whole", async () => {
  const workspaceDir = bigWorkspace(10, 1000);
  const memory = new MemoryComponent({ workspaceDir, health: true });
  try {
    await memory.open();
    memory.setLimits({ callTimeoutMs: 50 });
    await assert.rejects(memory.sync({ force: true }), (e) => e.stop === "deadline" && /deadline of 50 ms/.test(e.message));
    assert.equal(loadHealth(workspaceDir).deadline_stops, 1);
    memory.setLimits({ callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS });
    for (let report = await memory.sync({}); report.filesPending > 0; report = await memory.sync({})) {
      // batches until nothing is left
    }
    const status = await memory.status();
    assert.equal(status.files, 11);
    assert.equal(status.filesStale, 0);
    const { hits } = await search(memory, "topic42");
    assert.ok(hits.length > 0);
    // The manager's status (`openclaw memory status` prints the same record) shows the stop.
    const { hostHealth } = providerStatusOf(memory.statusNow(), { workspaceDir, embedder: null, health: memory.health() }).custom;
    assert.deepEqual([hostHealth.traps, hostHealth.deadlineStops, hostHealth.lastError.kind], [1, 1, "deadline"]);
  } finally {
    await memory.close();
  }
});

test("the component: a tiny memory cap fails a big sync as the cap; a roomy one indexes it", async () => {
  const workspaceDir = bigWorkspace(10, 1000);
  const tight = new MemoryComponent({ workspaceDir, health: true, limits: { memoryMib: 4 } });
  try {
    await assert.rejects(tight.sync({}), (e) => {
      assert.equal(e.stop, "memory-cap", e.message);
      assert.match(e.message, /memory cap of 4 MiB/);
      return true;
    });
    assert.equal(loadHealth(workspaceDir).last_error.kind, "memory-cap");
  } finally {
    await tight.close();
  }
  const roomy = new MemoryComponent({ workspaceDir, health: true, limits: { memoryMib: 256 } });
  try {
    for (let report = await roomy.sync({}); report.filesPending > 0; report = await roomy.sync({})) {
      // batches until nothing is left
    }
    assert.equal((await roomy.status()).files, 11);
  } finally {
    await roomy.close();
  }
});

test("a status asked synchronously comes from the instance's thread while it is idle", async () => {
  const memory = new MemoryComponent({ workspaceDir: bigWorkspace(2, 10) });
  try {
    assert.equal(memory.statusNow(), null, "nothing before the first open");
    await memory.open();
    assert.equal(memory.statusNow().files, 0);
    await memory.sync({});
    assert.equal(memory.statusNow().files, 3, "asked again, not the last answer");
  } finally {
    await memory.close();
  }
});

test("the memory cap is written into a defined memory's limits; the rest of the module is kept", () => {
  const noMaximum = wasmModule([["trap", TRAP]], [0x01, 0x00, 0x15]);
  const capped = capMemoryPages(noMaximum, 64);
  assert.equal(capped.length, noMaximum.length + 1);
  assert.ok(WebAssembly.validate(capped));
  const memory = new WebAssembly.Instance(new WebAssembly.Module(capped)).exports.memory;
  assert.equal(memory.grow(64 - 21), 21);
  assert.throws(() => memory.grow(1), RangeError);
  // A declared maximum below the cap stays; one above it is lowered (multi-byte LEB128s).
  const below = capMemoryPages(wasmModule([["trap", TRAP]], [0x01, 0x01, 0x01, 0x0a]), 16384);
  const belowMemory = new WebAssembly.Instance(new WebAssembly.Module(below)).exports.memory;
  assert.equal(belowMemory.grow(9), 1);
  assert.throws(() => belowMemory.grow(1), RangeError);
  const above = capMemoryPages(wasmModule([["trap", TRAP]], [0x01, 0x01, 0x01, 0x80, 0x80, 0x04]), 300);
  const memorySection = sectionOf(above, 5);
  assert.deepEqual([...memorySection], [0x01, 0x01, 0x01, 0xac, 0x02]);
  assert.ok(WebAssembly.validate(above));
});

test("a module without a memory of its own is left as it is; one whose initial memory is past the cap is refused", () => {
  const none = wasmModule([["trap", TRAP]], null);
  assert.equal(capMemoryPages(none, 10), none);
  assert.throws(() => capMemoryPages(wasmModule([["trap", TRAP]], [0x01, 0x00, 0x15]), 20), /below the module's initial memory of 21 pages/);
  assert.throws(() => capMemoryPages(new Uint8Array([1, 2, 3, 4]), 10), /not a WebAssembly module/);
  assert.deepEqual(section(5, [1, 2]), [5, 2, 1, 2]);
});

test("the cap is named only for a failure with the memory at the cap", () => {
  const mib = 1024 * 1024;
  assert.equal(hitMemoryCap({ trap: "unreachable", memoryBytes: 4 * mib }, 4), true);
  assert.equal(hitMemoryCap({ trap: "unreachable", memoryBytes: 1.5 * mib }, 4), false, "a trap far from the cap is a trap");
  assert.equal(hitMemoryCap({ payload: { tag: "index", val: "sqlite error 7: out of memory" }, memoryBytes: 3.9 * mib }, 4), true);
  assert.equal(hitMemoryCap({ payload: { tag: "not-found", val: "no such file" }, memoryBytes: 4 * mib }, 4), false);
  assert.equal(hitMemoryCap({ trap: "unreachable", memoryBytes: 1000 * mib }, 1024), true, "within a sixteenth of a big cap");
});

test("a deadline does not run while paused", async () => {
  let expired = 0;
  const deadline = new PausableDeadline(100, () => (expired += 1));
  deadline.pause();
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(expired, 0);
  deadline.resume();
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(expired, 1);
  deadline.clear();
});

/** The contents of section `id` of a module. */
function sectionOf(bytes, id) {
  for (let offset = 8; offset < bytes.length; ) {
    const size = readUleb(bytes, offset + 1);
    if (bytes[offset] === id) return bytes.subarray(size.next, size.next + size.value);
    offset = size.next + size.value;
  }
  return null;
}
