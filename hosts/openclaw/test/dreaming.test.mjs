import { test } from "node:test";
import assert from "node:assert/strict";
import { DREAM_TOKEN, dreamingJob, reconcileDreamingJob } from "../lib/dreaming.js";
import { pluginSettings } from "../lib/memories.js";

function fakeCron(jobs = []) {
  let next = jobs.length;
  return {
    jobs,
    async list() {
      return this.jobs;
    },
    async add(job) {
      this.jobs.push({ ...job, id: `j${++next}` });
    },
    async update(id, patch) {
      this.jobs = this.jobs.map((j) => (j.id === id ? { ...j, ...patch } : j));
    },
    async remove(id) {
      this.jobs = this.jobs.filter((j) => j.id !== id);
      return { removed: true };
    },
  };
}

test("the job runs the token as an isolated, silent agent turn on the configured schedule", () => {
  const job = dreamingJob(pluginSettings({ dreaming: { cron: "30 4 * * *", timezone: "Europe/Berlin" } }).dreaming);
  assert.deepEqual(job.schedule, { kind: "cron", expr: "30 4 * * *", tz: "Europe/Berlin" });
  assert.equal(job.payload.message, DREAM_TOKEN);
  assert.equal(job.sessionTarget, "isolated");
  assert.deepEqual(job.delivery, { mode: "none" });
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
