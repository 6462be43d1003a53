// The host's health record, `.memory/host-health.json`, in memory-harness's
// format (host-harness/src/health.rs): the last failed call and counts of
// traps and deadline stops, so that status shows them. Written atomically
// (temporary file, fsync, rename); skipped when the workspace is read-only.

import fs from "node:fs";
import path from "node:path";
import { writeDurably } from "./durable.js";

export const HEALTH_FILE = ".memory/host-health.json";

/** The record, or null. */
export function loadHealth(workspaceDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(workspaceDir, HEALTH_FILE), "utf8"));
  } catch {
    return null;
  }
}

// Error kinds that are the caller's mistake, not the host's or the
// workspace's health (as CALLERS_MISTAKES in host-harness/src/health.rs).
export const CALLERS_MISTAKES = new Set(["invalid-input", "not-found", "access-denied", "too-large"]);

/** Adds a failure: `{ command, kind, message, trap, deadline }` (a caller's mistake is not one). Best effort: returns the error, if any. */
export function recordFailure(workspaceDir, { command, kind, message, trap = false, deadline = false }) {
  if (CALLERS_MISTAKES.has(kind) && !trap) return null;
  const health = { traps: 0, deadline_stops: 0, errors: 0, last_error: null, ...(loadHealth(workspaceDir) ?? {}) };
  health.errors += 1;
  health.traps += trap ? 1 : 0;
  health.deadline_stops += deadline ? 1 : 0;
  health.last_error = { at_ms: Date.now(), host: "openclaw", command, kind, message };
  try {
    writeDurably(path.join(workspaceDir, HEALTH_FILE), JSON.stringify(health, null, 2));
    return null;
  } catch (error) {
    return error;
  }
}
