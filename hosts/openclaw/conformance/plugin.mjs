// The plugin under test: this source tree's, or an installed copy's
// (`MEMORY_WASM_PLUGIN_DIR`, set by run.mjs `--plugin DIR`; e.g. OpenClaw's
// `<state>/extensions/memory-wasm`), so the suite can run against exactly
// what `openclaw plugins install` put in place. Everything the runner takes
// from the plugin comes through here, from one copy (MemoryError must be
// the class the component's calls throw).

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const installed = process.env.MEMORY_WASM_PLUGIN_DIR;

/** The directory of the plugin under test. */
export const pluginDir = installed ? path.resolve(installed) : fileURLToPath(new URL("..", import.meta.url));

const lib = (name) => pathToFileURL(path.join(pluginDir, "lib", name)).href;

export const { MEMORY, MemoryComponent, MemoryError, describeSettings } = await import(lib("component.js"));
export const { acquireWorkspaceLock } = await import(lib("lock.js"));
