// One scenario: validated against the schema, a fresh temporary workspace
// with the fixture copied in, its own MemoryComponent (the jco-transpiled
// component), and the steps run in order against it — component calls by
// call.mjs, runner steps by fixture.mjs — each result matched with
// expect.mjs. A port of `run_parsed` and `run_step` in
// host-harness/src/conformance/mod.rs; the first failing step fails the scenario.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Calls } from "./call.mjs";
import { checkOrExplain } from "./expect.mjs";
import { runOp } from "./fixture.mjs";
import { parseJson, toJsonText } from "./json.mjs";
import { validateScenario } from "./schema.mjs";
import { openSession } from "./session.mjs";
import { copyTree } from "./workspace.mjs";

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
    scenario = parseJson(text);
    validateScenario(scenario);
  } catch (error) {
    throw new Error(`${file} is not a valid scenario:\n${error.message}`);
  }
  await runParsed(scenario, path.join(dir, "workspace"), file);
}

async function runParsed(scenario, fixture, label) {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "memory-conformance-"));
  let session;
  try {
    const workspace = path.join(temp, "workspace");
    fs.mkdirSync(workspace);
    if (isDirectory(fixture)) copyTree(fixture, workspace);
    session = await openSession(scenario, workspace);
    const calls = new Calls(session);
    const saved = { snapshot: undefined };
    for (const [index, step] of scenario.steps.entries()) {
      const note = step.note === undefined ? "" : `: ${step.note}`;
      try {
        if (step.now !== undefined) session.setClock(step.now);
        await runStep(session, calls, workspace, step, saved);
      } catch (error) {
        throw new Error(`${label} step ${index + 1} (${step.call ?? step.op}${note}): ${error.message}`);
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

/** One step: a call (checked by call.mjs), or a runner step and its expectation (only reads have one, by the schema). */
async function runStep(session, calls, workspace, step, saved) {
  if (step.call !== undefined) return calls.run(step, workspace);
  const result = step.op === "search_framing" ? await calls.searchFraming(step) : await runOp(session, workspace, step, saved);
  if (step.expect != null) checkOrExplain(step.expect, result, "$", `full result: ${toJsonText(result, { pretty: true })}`);
}
