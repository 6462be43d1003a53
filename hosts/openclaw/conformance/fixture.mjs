// The runner's own steps (`op`, tests/conformance/README.md "Runner steps"):
// what a person or the host does between component calls — edit, move and
// read files, damage the index, restart the instance, resolve a repository —
// and the snapshots behind the "files unchanged" checks. Nothing here is the
// component's behaviour. A port of host-harness/src/conformance/fixture.rs;
// the schema has checked that each op has the fields it needs.

import fs from "node:fs";
import { projectKey } from "./project.mjs";
import * as files from "./workspace.mjs";

/**
 * Runs a runner step; returns its result when it has one to check. `saved`
 * keeps the files as `save_files` or `save_state` saw them.
 */
export function runOp(session, workspace, step, saved) {
  return OPS[step.op](session, step, workspace, saved);
}

const at = (workspace, relative) => files.joinPath(workspace, relative);

const OPS = {
  prepare_repo(session, step, workspace) {
    // The host's side: resolve the repository's project key from its git
    // files and make it the session's most recent project.
    const key = projectKey(at(workspace, step.path));
    if (key !== null) session.projects.prepare(key);
    return { key, active: session.projects.keys() };
  },
  model_calls: (session) => ({ count: session.memory.modelCalls.count }),
  save_files(session, step, workspace, saved) {
    saved.snapshot = files.snapshot(workspace);
  },
  save_state(session, step, workspace, saved) {
    saved.snapshot = files.snapshot(workspace, { withMemory: true });
  },
  files_unchanged: (session, step, workspace, saved) => unchangedSince(step.op, "save_files", workspace, saved),
  state_unchanged: (session, step, workspace, saved) => unchangedSince(step.op, "save_state", workspace, saved),
  // The file as a person would see it.
  read_file: (session, step, workspace) => files.readFileForPerson(at(workspace, step.path)),
  list_files: (session, step, workspace) => ({ files: files.listFiles(workspace, step.path) }),
  restart: (session) => session.memory.restart(),
  write: (session, step, workspace) => writeStep(step, workspace, { append: false }),
  append: (session, step, workspace) => writeStep(step, workspace, { append: true }),
  delete(session, step, workspace) {
    fs.unlinkSync(at(workspace, step.path));
  },
  // A person renaming or moving a file (`path` to `target`).
  rename(session, step, workspace) {
    fs.renameSync(at(workspace, step.path), at(workspace, step.target));
  },
  symlink(session, step, workspace) {
    fs.symlinkSync(step.target, at(workspace, step.path));
  },
  mkfifo(session, step, workspace) {
    files.makeFifo(at(workspace, step.path));
  },
  async corrupt_index(session, step, workspace) {
    const index = at(workspace, ".memory/index.sqlite");
    const bytes = files.corruptIndexBytes(index);
    await session.memory.restart(); // the index is closed before it is overwritten
    fs.writeFileSync(index, bytes);
  },
  async delete_index(session, step, workspace) {
    await session.memory.restart();
    fs.rmSync(at(workspace, ".memory/index.sqlite"), { force: true });
    fs.rmSync(at(workspace, ".memory/index.sqlite-journal"), { force: true });
  },
};

/** `files_unchanged` / `state_unchanged`: fails, naming the files, when any differs from what `save` remembered. */
function unchangedSince(op, save, workspace, saved) {
  if (saved.snapshot === undefined) throw new Error(`${op} needs an earlier ${save}`);
  const after = files.snapshot(workspace, { withMemory: save === "save_state" });
  const changed = files.changedPaths(saved.snapshot, after);
  if (changed.length > 0) throw new Error(`files changed since ${save}: ${files.debugList(changed)}`);
}

/** `write` / `append`: `content` or `bytes_hex`, `repeat` times, into the file (its parent directories created). */
function writeStep(step, workspace, { append }) {
  let bytes = step.content === undefined ? files.decodeHex(step.bytes_hex) : Buffer.from(step.content, "utf8");
  if (step.repeat !== undefined) bytes = Buffer.alloc(bytes.length * Number(step.repeat), bytes);
  files.writeBytes(at(workspace, step.path), bytes, { append });
}
