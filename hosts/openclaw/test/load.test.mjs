// OpenClaw loads a plugin's entry with `require` (which refuses an ES module
// graph holding a top-level await), so the plugin must load that way too.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

test("the plugin's entry loads through require, as OpenClaw loads it", () => {
  const entry = fileURLToPath(new URL("../index.js", import.meta.url));
  const loaded = spawnSync(process.execPath, ["-e", `const m = require(${JSON.stringify(entry)}); process.stdout.write(typeof m.default.register);`], { encoding: "utf8" });
  assert.equal(loaded.stderr, "");
  assert.equal(loaded.stdout, "function");
});
