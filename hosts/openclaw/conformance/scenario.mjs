// One scenario: a fresh temporary workspace with the fixture copied in, its
// own MemoryComponent (the jco-transpiled component), and the steps run in
// order against it, each result rendered to the JSON of results.mjs and
// matched with expect.mjs. A port of `run_parsed` and `run_step` in
// host-harness/src/conformance.rs; the first failing step fails the scenario.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemoryError } from "../lib/component.js";
import { check, Mismatch } from "./expect.mjs";
import { parseJson, toJsonText } from "./json.mjs";
import { memoryError } from "./results.mjs";
import { readScenario } from "./schema.mjs";
import { openSession } from "./session.mjs";
import { componentOps, debugList, describeCallError, hostOps, isTrap, runnerOps } from "./steps.mjs";
import * as files from "./workspace.mjs";

/** Calls that only read: any change to a file outside `.memory/` fails the step. */
const READ_CALLS = new Set(["sync", "status", "search", "get", "bootstrap", "inject", "report"]);
/** Calls that may write Markdown, only by appending. (`forget` removes lines; its scenarios check the files.) */
const WRITE_CALLS = new Set(["note", "ingest", "flush", "intent_create"]);

/** Runs the scenario in `dir`; throws an Error whose message says which step failed and why. */
export async function runScenario(dir) {
  const file = path.join(dir, "scenario.json");
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read ${file}: ${error.message}`);
  }
  let scenario;
  try {
    scenario = readScenario(parseJson(text));
  } catch (error) {
    throw new Error(`${file} is not a valid scenario: ${error.message}`);
  }
  await runParsed(scenario, path.join(dir, "workspace"), file);
}

async function runParsed(scenario, fixture, label) {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "memory-conformance-"));
  let session;
  try {
    const workspace = path.join(temp, "workspace");
    fs.mkdirSync(workspace);
    if (isDirectory(fixture)) files.copyTree(fixture, workspace);
    session = await openSession(scenario, workspace);
    // The files as `save_files` saw them, for `files_unchanged`.
    const state = { saved: undefined };
    for (const [index, step] of scenario.steps.entries()) {
      const stepLabel = `${label} step ${index + 1} (${step.op}${step.note === undefined ? "" : `: ${step.note}`})`;
      try {
        if (step.now !== undefined) session.setClock(step.now);
        await runStep(session, workspace, step, state);
      } catch (error) {
        throw new Error(`${stepLabel}: ${error.message}`);
      }
    }
  } finally {
    await session?.close();
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

function isDirectory(dir) {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** One step: the op, then (for a component call) the invariants, then its expectation. */
async function runStep(session, workspace, step, state) {
  const isCall = READ_CALLS.has(step.op) || WRITE_CALLS.has(step.op);
  const before = isCall ? files.snapshot(workspace) : null;
  let outcome;
  if (Object.hasOwn(componentOps, step.op)) outcome = await componentOps[step.op](session, step);
  else if (Object.hasOwn(runnerOps, step.op)) outcome = await runnerOps[step.op](session, step, workspace);
  else if (Object.hasOwn(hostOps, step.op)) await hostOps[step.op](session, step, workspace, state);
  else throw new Error(`unknown op ${JSON.stringify(step.op)}`);
  if (before !== null) checkInvariants(step.op, workspace, before);
  if (outcome === undefined) {
    if (step.expect !== undefined || step.expect_error !== undefined) throw new Error(`op ${step.op} has no result to check`);
    return;
  }
  checkOutcome(step, outcome);
}

/** Markdown files are never rewritten: unchanged by reads, only appended to by writes. */
function checkInvariants(op, workspace, before) {
  if (WRITE_CALLS.has(op)) {
    files.checkAppendOnly(workspace, before);
    return;
  }
  const changed = files.changedPaths(before, files.snapshot(workspace));
  if (changed.length > 0) throw new Error(`the call changed memory files on disk: ${debugList(changed)}`);
}

/** The result (or the documented error) against `expect` / `expect_error`. */
function checkOutcome(step, { value, error }) {
  const pretty = (v) => toJsonText(v, { pretty: true });
  if (error === undefined) {
    if (step.expect_error !== undefined) {
      throw new Error(`expected the error ${toJsonText(step.expect_error)}, got the result ${pretty(value)}`);
    }
    if (step.expect !== undefined) matchOrFail(step.expect, value, "$", `full result: ${pretty(value)}`);
    return;
  }
  // A trap is never an acceptable answer, whatever the step expects.
  if (step.expect_error !== undefined && error instanceof MemoryError && !isTrap(error)) {
    const actual = memoryError(error);
    matchOrFail(step.expect_error, actual, "$error", `actual error: ${toJsonText(actual)}`);
    return;
  }
  throw new Error(`the call failed: ${describeCallError(error)}`);
}

function matchOrFail(expected, actual, at, context) {
  try {
    check(expected, actual, at);
  } catch (error) {
    if (error instanceof Mismatch) throw new Error(`${error.message}\n${context}`);
    throw error;
  }
}
