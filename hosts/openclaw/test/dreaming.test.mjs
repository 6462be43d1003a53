import { test } from "node:test";
import assert from "node:assert/strict";
import { DREAM_TOKEN, dreamingJob, reconcileDreamingJob } from "../lib/dreaming.js";
import { pluginSettings } from "../lib/memories.js";
import { fakeCron } from "./fake-cron.mjs";

test("the job runs the token as an isolated, silent agent turn on the configured schedule", () => {
  const job = dreamingJob(pluginSettings({ dreaming: { cron: "30 4 * * *", timezone: "Europe/Berlin" } }).dreaming);
  assert.deepEqual(job.schedule, { kind: "cron", expr: "30 4 * * *", tz: "Europe/Berlin" });
  assert.equal(job.payload.message, DREAM_TOKEN);
  assert.equal(job.sessionTarget, "isolated");
  assert.deepEqual(job.delivery, { mode: "none" });
});

test("the schedule is in the owner's time zone unless dreaming names its own", async () => {
  const plain = pluginSettings({}).dreaming;
  assert.deepEqual(dreamingJob(plain, "Asia/Kolkata").schedule, { kind: "cron", expr: "0 3 * * *", tz: "Asia/Kolkata" });
  const own = pluginSettings({ dreaming: { timezone: "Europe/Berlin" } }).dreaming;
  assert.equal(dreamingJob(own, "Asia/Kolkata").schedule.tz, "Europe/Berlin");
  const cron = fakeCron();
  await reconcileDreamingJob(cron, plain, undefined, "Asia/Kolkata");
  assert.equal((await reconcileDreamingJob(cron, plain, undefined, "Asia/Kolkata")).status, "unchanged");
  assert.equal((await reconcileDreamingJob(cron, plain, undefined, "America/New_York")).status, "updated", "the owner moved");
  assert.equal(cron.jobs[0].schedule.tz, "America/New_York");
});

test("reconciling adds once, updates a changed schedule, prunes duplicates, removes when disabled", async () => {
  const cron = fakeCron();
  const on = pluginSettings({}).dreaming;
  assert.equal((await reconcileDreamingJob(cron, on)).status, "added");
  assert.equal((await reconcileDreamingJob(cron, on)).status, "unchanged");
  assert.equal(cron.jobs.length, 1);
  const later = pluginSettings({ dreaming: { cron: "0 5 * * *" } }).dreaming;
  assert.equal((await reconcileDreamingJob(cron, later)).status, "updated");
  assert.equal(cron.jobs[0].schedule.expr, "0 5 * * *");
  cron.jobs.push({ ...cron.jobs[0], id: "dup" }, { id: "other", name: "someone else's job" });
  await reconcileDreamingJob(cron, later);
  assert.deepEqual(cron.jobs.map((j) => j.id).sort(), ["j1", "other"]);
  const off = pluginSettings({ dreaming: { enabled: false } }).dreaming;
  assert.equal((await reconcileDreamingJob(cron, off)).status, "disabled");
  assert.deepEqual(cron.jobs.map((j) => j.id), ["other"]);
});
