// How a full sync is cut into calls, and how long the rest will take: the
// same rules as the harness's (host-harness/src/session/pacing.rs). Each call
// is sized, in changed files and in texts sent to the embedder, to take about
// CALL_TARGET_MS: listing the workspace (every call does) then costs little,
// progress stays live, and an interruption loses little (each call commits).
// Files are indexed lexically at once; their vectors follow in later calls.

export const CALL_TARGET_MS = 2000;
export const FIRST_PACE = Object.freeze({ files: 200, embeddings: 64 });
const FILES = [50, 20000];
const EMBEDDINGS = [32, 20000];

/**
 * The next call's sizes after one that indexed `indexed` files and sent
 * `embedded` texts to the embedder in `tookMs`. A size the call did not use
 * up taught nothing and stays; one it used up is scaled towards the target,
 * at most 4x per step.
 */
export function nextPace(pace, indexed, embedded, tookMs) {
  const scale = Math.min(4, Math.max(0.25, CALL_TARGET_MS / Math.max(1, tookMs)));
  const scaled = (size, [min, max]) => Math.min(max, Math.max(min, Math.round(size * scale)));
  return {
    files: indexed >= pace.files ? scaled(pace.files, FILES) : pace.files,
    embeddings: embedded >= pace.embeddings ? scaled(pace.embeddings, EMBEDDINGS) : pace.embeddings,
  };
}

/** Vectors done and the estimated total: files still to index need as many per file as those indexed. */
export function vectorsOf(p) {
  const done = p.embedded + p.cached;
  const perFile = p.filesIndexed === 0 ? 0 : (done + p.vectorsPending) / p.filesIndexed;
  return { done, total: done + p.vectorsPending + Math.round(p.filesPending * perFile) };
}

/** Milliseconds left at the rate so far (embedding when anything was embedded, else files), or null. */
export function etaMs(p) {
  const { done, total } = vectorsOf(p);
  if (p.filesPending === 0 && done >= total) return 0;
  if (p.elapsedMs <= 0) return null;
  if (p.embedded > 0) return ((total - done) * p.elapsedMs) / p.embedded;
  if (p.filesIndexed > 0 && p.vectorsPending === 0) return (p.filesPending * p.elapsedMs) / p.filesIndexed;
  return null;
}

/** "14m50s", "2h05m", "9s". */
export function formatDuration(ms) {
  const s = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
}

/** "1,200/10,000 files · 34,000/310,000 vectors · 310/s · about 14m50s left". */
export function describeProgress(p) {
  const n = (x) => x.toLocaleString("en-US");
  const parts = [`${n(p.filesIndexed)}/${n(p.filesIndexed + p.filesPending)} files`];
  const { done, total } = vectorsOf(p);
  if (total > 0) parts.push(`${n(done)}/${n(total)} vectors`);
  if (p.embedded > 0 && p.elapsedMs > 0) parts.push(`${Math.round((p.embedded * 1000) / p.elapsedMs)}/s`);
  const eta = etaMs(p);
  if (eta) parts.push(`about ${formatDuration(eta)} left`);
  return parts.join(" · ");
}
