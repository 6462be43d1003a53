// OpenClaw's plugin SDK modules this plugin needs beyond `api.runtime`
// (the embedding providers). OpenClaw aliases `openclaw/plugin-sdk/*` only
// while it loads a plugin's entry, and the component loads later, so the
// modules are imported from the running OpenClaw's own package: the one
// whose CLI started this process, or one `require` can find.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

function packageRootAbove(start) {
  let dir = start;
  for (let depth = 0; dir && depth < 12; depth += 1) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
      if (pkg.name === "openclaw") return dir;
    } catch {
      // No package.json here; keep climbing.
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

let root;
/** The directory of the running OpenClaw package. */
export function openclawRoot() {
  if (root !== undefined) return root;
  const candidates = [];
  if (process.argv[1]) {
    try {
      candidates.push(path.dirname(fs.realpathSync(process.argv[1])));
    } catch {
      // argv[1] is not a file (e.g. `node -e`).
    }
  }
  try {
    candidates.push(path.dirname(createRequire(import.meta.url).resolve("openclaw/package.json")));
  } catch {
    // Not installed next to the plugin.
  }
  root = candidates.map(packageRootAbove).find(Boolean) ?? null;
  return root;
}

/** Imports `openclaw/plugin-sdk/<name>` from the running OpenClaw. */
export async function importSdk(name) {
  const dir = openclawRoot();
  if (!dir) throw new Error("cannot find the running OpenClaw package to load its plugin SDK");
  return import(pathToFileURL(path.join(dir, "dist", "plugin-sdk", `${name}.js`)).href);
}
