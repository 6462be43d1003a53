// The memory-harness binary the Node tests compare against: `MEMORY_HARNESS`,
// else the release build in the Cargo target directory (`CARGO_TARGET_DIR`,
// as CI sets it outside the clone, else the repository's `target/`).
// scripts/test.sh builds it before the Node tests.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

/** Where the harness is expected (for a clear failure when it is not there). */
export const harnessExpectedAt =
  process.env.MEMORY_HARNESS ?? path.join(process.env.CARGO_TARGET_DIR ?? path.join(repo, "target"), "release", "memory-harness");

/** The harness binary, or undefined when it is not built. */
export const harnessBin = fs.existsSync(harnessExpectedAt) ? harnessExpectedAt : undefined;
