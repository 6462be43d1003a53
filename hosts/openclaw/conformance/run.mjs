#!/usr/bin/env node
// The conformance suite (tests/conformance/, see its README) against the
// memory-core component under Node, through jco: the Node counterpart of
// `memory-harness conformance` (host-harness/src/conformance/mod.rs).
//
//   node hosts/openclaw/conformance/run.mjs tests/conformance [--filter SUBSTR] [--plugin DIR]
//
// `--plugin DIR` runs it against an installed copy of the plugin (e.g.
// OpenClaw's `<state>/extensions/memory-wasm`) instead of this source tree.
//
// Prints `ok     <name>` or `FAILED <name>` with the failing step, its note,
// what was expected and the actual result, one scenario at a time in sorted
// path order, then `N passed, M failed`; exits 1 when anything failed.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compareUtf8 } from "./json.mjs";

const USAGE = "usage: run.mjs <conformance-dir> [--filter SUBSTR] [--plugin DIR]";

function parseArguments(argv) {
  let root;
  let filter;
  let plugin;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--filter") {
      if (i + 1 >= argv.length) throw new Error(`--filter needs a value\n${USAGE}`);
      filter = argv[(i += 1)];
    } else if (arg.startsWith("--filter=")) {
      filter = arg.slice("--filter=".length);
    } else if (arg === "--plugin") {
      if (i + 1 >= argv.length) throw new Error(`--plugin needs a directory\n${USAGE}`);
      plugin = argv[(i += 1)];
    } else if (arg === "-h" || arg === "--help") {
      console.log(USAGE);
      process.exit(0);
    } else if (root === undefined && !arg.startsWith("-")) {
      root = arg;
    } else {
      throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
    }
  }
  if (root === undefined) throw new Error(USAGE);
  return { root, filter, plugin };
}

/** Path order as Rust sorts PathBufs: component by component, bytewise. */
function comparePaths(a, b) {
  const [x, y] = [a.split(path.sep), b.split(path.sep)];
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    const order = compareUtf8(x[i], y[i]);
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

/** Every scenario folder (one holding a `scenario.json`) under `root`; its subdirectories are not searched. */
export function discover(root) {
  const found = [];
  const walk = (dir) => {
    if (isFile(path.join(dir, "scenario.json"))) {
      found.push(dir);
      return;
    }
    for (const name of fs.readdirSync(dir)) {
      const child = path.join(dir, name);
      if (isDirectoryFollowingLinks(child)) walk(child);
    }
  };
  walk(root);
  return found.sort(comparePaths);
}

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function isDirectoryFollowingLinks(dir) {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

const indent = (text) =>
  text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");

async function main() {
  const { root, filter, plugin } = parseArguments(process.argv.slice(2));
  // Before the runner loads the plugin (conformance/plugin.mjs reads it).
  if (plugin !== undefined) process.env.MEMORY_WASM_PLUGIN_DIR = plugin;
  const { runScenario } = await import("./scenario.mjs");
  const { pluginDir } = await import("./plugin.mjs");
  console.log(`plugin: ${pluginDir}`);
  let passed = 0;
  let failed = 0;
  for (const dir of discover(root)) {
    const name = path.relative(root, dir);
    if (filter !== undefined && !name.includes(filter)) continue;
    try {
      await runScenario(dir);
      passed += 1;
      console.log(`ok     ${name}`);
    } catch (error) {
      failed += 1;
      console.log(`FAILED ${name}\n${indent(error?.message ?? String(error))}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (passed + failed === 0) {
    console.log("no scenario ran: check the folder and the filter");
    return 1;
  }
  return failed === 0 ? 0 : 1;
}

// Run when started as a script (`import.meta.main` needs Node 24.2+).
const startedAsScript = process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (startedAsScript) main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(`error: ${error?.message ?? error}`);
    process.exitCode = 2;
  },
);
