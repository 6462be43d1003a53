import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { acquireWorkspaceLock } from "../lib/lock.js";

test("one holder per workspace; stale files (even naming our own pid) are taken over; a half-written one is not", () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-lock-"));
  const file = path.join(workspace, ".memory", "js-host.lock");
  fs.mkdirSync(path.dirname(file));
  try {
    fs.writeFileSync(file, `pid ${process.pid}\n`); // left by an earlier process that had our pid
    const release = acquireWorkspaceLock(workspace);
    assert.throws(() => acquireWorkspaceLock(workspace), /already has .* open/);
    release();
    assert.equal(fs.existsSync(file), false);
    fs.writeFileSync(file, "pid 999999999\n"); // a holder that is gone
    acquireWorkspaceLock(workspace)();
    fs.writeFileSync(file, ""); // created a moment ago, not yet written
    assert.throws(() => acquireWorkspaceLock(workspace), /is opening/);
    fs.rmSync(file);
    // memory-harness holds the workspace (its lock names a live process: our parent).
    const harness = path.join(workspace, ".memory", "harness.lock");
    fs.writeFileSync(harness, `pid ${process.ppid}`);
    assert.throws(() => acquireWorkspaceLock(workspace), /memory-harness \(pid \d+\) is using/);
    fs.writeFileSync(harness, ""); // released: it names no holder
    acquireWorkspaceLock(workspace)();
    fs.writeFileSync(harness, "pid 999999999"); // a harness killed while holding it
    acquireWorkspaceLock(workspace)();
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test("a busy workspace is waited for up to the deadline, then refused as busy; the health record keeps the last failure", async () => {
  const { acquireWorkspaceLockWaiting } = await import("../lib/lock.js");
  const { recordFailure, loadHealth } = await import("../lib/health.js");
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-lock-wait-"));
  const harness = path.join(workspace, ".memory", "harness.lock");
  fs.mkdirSync(path.dirname(harness));
  try {
    // memory-harness holds it (a live process: our parent) and lets go within the wait.
    fs.writeFileSync(harness, `pid ${process.ppid}`);
    setTimeout(() => fs.writeFileSync(harness, ""), 300);
    const started = Date.now();
    const release = await acquireWorkspaceLockWaiting(workspace, 5000);
    assert.ok(Date.now() - started >= 250);
    release();
    // Held past the wait: kind busy.
    fs.writeFileSync(harness, `pid ${process.ppid}`);
    await assert.rejects(acquireWorkspaceLockWaiting(workspace, 200), (e) => e.kind === "busy" && /waited 200 ms/.test(e.message));
    fs.writeFileSync(harness, "");
    // The health record, in memory-harness's format.
    assert.equal(recordFailure(workspace, { command: "search", kind: "trap", message: "boom", trap: true }), null);
    const health = loadHealth(workspace);
    assert.equal(health.traps, 1);
    assert.equal(health.deadline_stops, 0);
    assert.equal(health.last_error.command, "search");
    assert.equal(health.last_error.host, "openclaw");
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});
