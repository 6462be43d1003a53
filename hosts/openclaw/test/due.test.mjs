import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DUE_TOKEN, dueJob, dueSummary, nextDueAtMs, reconcileDueJob } from "../lib/due.js";
import { intentBlock } from "../lib/framing.js";
import { PENDING_FILE, PendingIntents, inScope } from "../lib/pending.js";
import { MemoryComponent, turnContext } from "../lib/component.js";
import { fakeCron } from "./fake-cron.mjs";

const intent = (fields) => ({ id: 1n, text: "x", dueAtMs: undefined, state: "armed", expiresAtMs: 10_000_000n, cooldownMs: 1000n, lastFiredAtMs: undefined, ...fields });

test("the next due time: pending at its time, armed now, cooling down at its end, none when expired or done", () => {
  const now = 5000;
  assert.equal(nextDueAtMs([], now), undefined);
  assert.equal(nextDueAtMs([intent({ triggers: ["a"] })], now), undefined, "event-based intents are not the scheduler's");
  assert.equal(nextDueAtMs([intent({ dueAtMs: 9000n, state: "pending" })], now), 9000);
  assert.equal(nextDueAtMs([intent({ dueAtMs: 9000n, state: "pending" }), intent({ dueAtMs: 1000n, state: "armed" })], now), now);
  assert.equal(nextDueAtMs([intent({ dueAtMs: 1000n, state: "fired", lastFiredAtMs: 4500n })], now), 5500);
  assert.equal(nextDueAtMs([intent({ dueAtMs: 1000n, state: "fired", lastFiredAtMs: 4500n, expiresAtMs: 5500n })], now), undefined);
  for (const state of ["done", "cancelled", "expired"]) assert.equal(nextDueAtMs([intent({ dueAtMs: 1000n, state })], now), undefined);
});

test("the job is one isolated, silent, kept one-shot turn carrying the token", () => {
  const job = dueJob(Date.parse("2026-12-05T09:00:00Z"));
  assert.deepEqual(job.schedule, { kind: "at", at: "2026-12-05T09:00:00.000Z" });
  assert.equal(job.payload.message, DUE_TOKEN);
  assert.equal(job.sessionTarget, "isolated");
  assert.deepEqual(job.delivery, { mode: "none" });
  assert.equal(job.deleteAfterRun, false);
  assert.equal(dueSummary([]), "memory-wasm intents: nothing due");
  assert.equal(dueSummary([{ id: 3n }, { id: 4n }]), "memory-wasm intents: 2 due (#3, #4), queued for the owner's next turn");
});

test("reconciling: added at the next due time, never in the past, moved, switched off when nothing is due, removed when off", async () => {
  const cron = fakeCron([{ id: "other", name: "someone else's job" }]);
  const now = Date.parse("2026-12-03T12:00:00Z");
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: undefined, nowMs: now })).status, "unchanged", "nothing due, no job");
  assert.equal(cron.jobs.length, 1);
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 60000, nowMs: now })).status, "added");
  const ours = () => cron.jobs.find((j) => j.payload?.message === DUE_TOKEN);
  assert.equal(ours().schedule.at, new Date(now + 60000).toISOString());
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 60000, nowMs: now })).status, "unchanged");
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now - 5000, nowMs: now })).status, "updated");
  assert.equal(ours().schedule.at, new Date(now).toISOString(), "a past due time is now");
  // Nothing due any more: a job already at its time is left to run (or has run)...
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: undefined, nowMs: now })).status, "unchanged");
  // ...one set for later is switched off, except from inside its own run.
  await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 60000, nowMs: now });
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: undefined, nowMs: now, inRun: true })).status, "unchanged");
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: undefined, nowMs: now })).status, "idle");
  assert.equal(ours().enabled, false);
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 120000, nowMs: now })).status, "updated");
  assert.equal(ours().enabled, true);
  // At a gateway's start: a check a minute later, unless the job is set sooner.
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 180000, nowMs: now, keepEarlier: true })).status, "unchanged");
  assert.equal((await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 60000, nowMs: now, keepEarlier: true })).status, "updated");
  assert.equal(ours().schedule.at, new Date(now + 60000).toISOString());
  cron.jobs.push({ ...ours(), id: "dup" });
  await reconcileDueJob(cron, { enabled: true, nextDueMs: now + 60000, nowMs: now });
  assert.equal(cron.jobs.filter((j) => j.payload?.message === DUE_TOKEN).length, 1, "duplicates pruned");
  assert.equal((await reconcileDueJob(cron, { enabled: false })).status, "disabled");
  assert.deepEqual(cron.jobs.map((j) => j.id), ["other"]);
});

test("a turn receives an entry in its scope: unscoped ones only the owner", () => {
  const entry = { channel: null, sender: null };
  assert.equal(inScope(entry, { senderIsOwner: true }), true);
  assert.equal(inScope(entry, { senderIsOwner: false, sender: "42" }), false);
  assert.equal(inScope({ channel: "telegram", sender: "42" }, { channel: "telegram", sender: "42", senderIsOwner: false }), true);
  assert.equal(inScope({ channel: "telegram", sender: null }, { channel: "cli", senderIsOwner: true }), false);
});

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "memory-wasm-pending-"));
const memory = new MemoryComponent({ workspaceDir: workspace });
after(async () => {
  await memory.close();
  fs.rmSync(workspace, { recursive: true, force: true });
});
const owner = { senderIsOwner: true, channel: undefined, sender: undefined };
const create = async (text, dueAtMs) =>
  (
    await memory.intentCreate(
      { text, triggers: [], dueAtMs: BigInt(dueAtMs), channel: undefined, sender: undefined, expiresInMs: undefined, fireBudget: undefined, cooldownMs: undefined, semantic: false, origin: "sender-message" },
      turnContext(),
    )
  ).intent;
const lines = () => fs.readFileSync(path.join(workspace, PENDING_FILE), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

test("a crash before `due` answers leaves prepared lines; the next process keeps those `due` fired and drops the others", async () => {
  const now = Date.now();
  const fired = await create("pay the rent", now - 60000);
  const notFired = await create("book the flights", now + 3600000);
  // The crash: `due` ran (the first one's fire spent at `now`; the second was
  // not due), and the process died before the queue said so...
  const spent = await memory.due(now);
  assert.deepEqual(spent.map((i) => [i.id, Number(i.lastFiredAtMs)]), [[fired.id, now]]);
  const prepared = [fired, notFired].map((i) => ({ id: Number(i.id), text: i.text, dueAtMs: Number(i.dueAtMs), firedAtMs: now, channel: null, sender: null, state: "prepared" }));
  fs.mkdirSync(path.join(workspace, ".memory"), { recursive: true });
  fs.writeFileSync(path.join(workspace, PENDING_FILE), prepared.map((e) => `${JSON.stringify(e)}\n`).join(""));
  // ...and a new process starts.
  const queue = new PendingIntents(workspace);
  const taken = await queue.take(owner, () => memory.intentList(turnContext()));
  assert.deepEqual(taken.blocks, [intentBlock({ id: fired.id, text: "pay the rent" })]);
  assert.deepEqual(lines().map((e) => [e.id, e.state]), [[Number(fired.id), "ready"]], "settled on disk");
  taken.release();
  const again = await queue.take(owner, () => memory.intentList(turnContext()));
  assert.equal(again.blocks.length, 1, "released, so still there");
  await again.handedOff();
  assert.deepEqual(lines(), []);
});

test("collecting writes the armed intents as prepared before `due` spends their fire", async () => {
  const now = Date.now();
  const armed = await create("feed the cat", now - 1000);
  const queue = new PendingIntents(workspace);
  const crashing = {
    exclusive: (task) =>
      memory.exclusive((invoke) =>
        task((iface, fn, ...rest) => (fn === "due" ? Promise.reject(new Error("the process dies")) : invoke(iface, fn, ...rest))),
      ),
  };
  await assert.rejects(queue.collect(crashing, now, turnContext({ nowMs: now })), /the process dies/);
  assert.deepEqual(lines().map((e) => [e.id, e.state, e.firedAtMs]), [[Number(armed.id), "prepared", now]]);
  // `due` never ran, so the next collect drops the prepared line and fires it for real.
  const later = now + 1;
  const fired = await queue.collect(memory, later, turnContext({ nowMs: later }));
  assert.deepEqual(fired.map((i) => i.id), [armed.id]);
  assert.deepEqual(lines().map((e) => [e.id, e.state, e.firedAtMs]), [[Number(armed.id), "ready", later]]);
  const taken = await queue.take(owner, () => memory.intentList(turnContext()));
  assert.equal(taken.blocks.length, 1);
  const concurrent = await queue.take(owner, () => memory.intentList(turnContext()));
  assert.equal(concurrent.blocks.length, 0, "a claimed entry is not handed to a second turn");
  await taken.handedOff();
  concurrent.release();
  assert.deepEqual(lines(), []);
});

test("a turn gets at most three queued intents within 1,200 characters; the rest wait", async () => {
  const queue = new PendingIntents(workspace);
  const entries = [1, 2, 3, 4].map((id) => ({ id, text: "y".repeat(id === 2 ? 500 : 20), dueAtMs: 0, firedAtMs: 1, channel: null, sender: null, state: "ready" }));
  fs.writeFileSync(path.join(workspace, PENDING_FILE), entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
  const first = await queue.take(owner, async () => []);
  assert.deepEqual(first.entries.map((e) => e.id), [1, 2, 3]);
  await first.handedOff();
  const second = await queue.take(owner, async () => []);
  assert.deepEqual(second.entries.map((e) => e.id), [4]);
  await second.handedOff();
});
