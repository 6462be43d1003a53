// The spool of the JavaScript host: a flush or an ingest that could not get
// the workspace (busy past `lockWaitMs`) is written to `.memory/spool/` as
// `js-*.json` instead of being lost, and replayed, oldest first, as soon as
// this host gets the workspace; a file is removed only after its call
// succeeded. Written atomically and durably (temporary file, fsync, rename,
// fsync of the directory). memory-harness spools to the same directory under
// `harness-*` names and replays its own (host-harness/src/spool.rs).

import fs from "node:fs";
import path from "node:path";
import { writeDurably } from "./durable.js";

export const SPOOL_DIR = ".memory/spool";

const replacer = (_, value) => (typeof value === "bigint" ? { $bigint: value.toString() } : value);
const reviver = (_, value) =>
  value && typeof value === "object" && typeof value.$bigint === "string" && Object.keys(value).length === 1
    ? BigInt(value.$bigint)
    : value;

/** Spools `{ call: "flush" | "ingest", request }`; returns the file written. */
export function spool(workspaceDir, call, request) {
  const stamp = String(Date.now()).padStart(16, "0");
  const name = `js-${stamp}-${process.pid}-${Math.random().toString(36).slice(2, 8)}-${call}.json`;
  const file = path.join(workspaceDir, SPOOL_DIR, name);
  writeDurably(file, JSON.stringify({ call, request }, replacer));
  return file;
}

/** Where a spooled call that can never succeed is moved (as memory-harness does). */
export const REJECTED_DIR = ".memory/spool/rejected";

/** Moves a spooled call to `REJECTED_DIR`; returns its new path. */
export function setAside(workspaceDir, file) {
  const dir = path.join(workspaceDir, REJECTED_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const target = path.join(dir, path.basename(file));
  fs.renameSync(file, target);
  return target;
}

/** This host's spooled calls, oldest first: `{ file, call, request }` (an unreadable one has `error`). */
export function pending(workspaceDir) {
  const dir = path.join(workspaceDir, SPOOL_DIR);
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith("js-") && n.endsWith(".json"))
    .sort()
    .map((n) => {
      const file = path.join(dir, n);
      try {
        const { call, request } = JSON.parse(fs.readFileSync(file, "utf8"), reviver);
        return { file, call, request };
      } catch (error) {
        return { file, error };
      }
    });
}
