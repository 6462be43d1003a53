// OpenClaw's cron as a plugin service sees it (`ctx.getCron()`), in memory.

export function fakeCron(jobs = []) {
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
