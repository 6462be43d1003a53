// The host's side of project-scoped memory (`prepare_repo`): the project key
// of the git repository containing a directory, read from git's own files
// (never by starting git), and the session's active set. A port of
// host-harness/src/project.rs.

import fs from "node:fs";
import { rustTrim } from "./clock.mjs";
import { joinPath } from "./workspace.mjs";

/** The directory and its ancestors, nearest first (Rust's `Path::ancestors`). */
function* ancestors(dir) {
  let current = dir;
  while (true) {
    yield current;
    if (current === "/") return;
    const cut = current.lastIndexOf("/");
    current = cut <= 0 ? "/" : current.slice(0, cut);
  }
}

/** Rust's `str::lines`: split on `\n`, a trailing `\r` dropped, no empty last line. */
function lines(text) {
  const parts = text.split("\n").map((line) => line.replace(/\r$/, ""));
  if (text.endsWith("\n")) parts.pop();
  return parts;
}

const keyCache = new Map();

/** The project key of the repository containing `dir`, or null outside any repository. */
export function projectKey(dir) {
  let canonical;
  try {
    canonical = fs.realpathSync(dir);
  } catch (error) {
    throw new Error(`cannot open ${dir}: ${error.message}`);
  }
  if (!keyCache.has(canonical)) keyCache.set(canonical, resolveKey(canonical));
  return keyCache.get(canonical);
}

function resolveKey(dir) {
  const root = [...ancestors(dir)].find((d) => fs.existsSync(joinPath(d, ".git")));
  if (root === undefined) return null;
  const dotGit = joinPath(root, ".git");
  let common = dotGit;
  if (!fs.statSync(dotGit).isDirectory()) {
    // A linked worktree: `.git` names its git directory, whose `commondir`
    // names the repository's shared directory.
    const text = fs.readFileSync(dotGit, "utf8");
    const pointer = lines(text).find((l) => l.startsWith("gitdir:"));
    if (pointer === undefined) throw new Error(`${dotGit} is not a git directory pointer`);
    const gitdir = joinPath(root, rustTrim(pointer.slice("gitdir:".length)));
    const commondir = readOrNull(joinPath(gitdir, "commondir"));
    common = commondir === null ? gitdir : joinPath(gitdir, rustTrim(commondir));
  }
  const config = readOrNull(joinPath(common, "config")) ?? "";
  const url = originUrl(config);
  return escapeKey(url === null ? root : normaliseRemote(url));
}

function readOrNull(file) {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** The `url` of `[remote "origin"]` in a git config file. */
export function originUrl(config) {
  let inOrigin = false;
  for (const line of lines(config).map(rustTrim)) {
    if (line.startsWith("[")) {
      inOrigin = line.replace(/\p{White_Space}/gu, "") === '[remote"origin"]';
      continue;
    }
    if (!inOrigin) continue;
    const eq = line.indexOf("=");
    if (eq >= 0 && rustTrim(line.slice(0, eq)) === "url") {
      return rustTrim(line.slice(eq + 1)).replace(/^"+|"+$/g, "");
    }
  }
  return null;
}

/** `https://user:token@GitHub.com:443/Owner/Repo.git`, `git@github.com:Owner/Repo.git`, … → `github.com/Owner/Repo`. */
export function normaliseRemote(url) {
  const trimmed = rustTrim(url);
  const scheme = trimmed.indexOf("://");
  const scp = scheme < 0;
  let rest = scp ? trimmed : trimmed.slice(scheme + 3);
  const at = rest.lastIndexOf("@");
  if (at >= 0) rest = rest.slice(at + 1);
  const cut = rest.indexOf(scp ? ":" : "/");
  let [host, path] = cut < 0 ? [rest, ""] : [rest.slice(0, cut), rest.slice(cut + 1)];
  host = host.split(":")[0].replace(/[A-Z]/g, (c) => c.toLowerCase());
  path = path.replace(/^\/+/, "").replace(/\/+$/, "");
  if (path.endsWith(".git")) path = path.slice(0, -".git".length);
  return path === "" ? host : `${host}/${path}`;
}

/** Semicolons separate keys in an annotation: escaped so one key never becomes two. */
export function escapeKey(key) {
  return key.replaceAll(";", "\\;");
}

/** A session's active projects: at most four keys, most recent first. */
export class ActiveProjects {
  static CAPACITY = 4;
  #keys = [];

  prepare(key) {
    this.#keys = [key, ...this.#keys.filter((k) => k !== key)].slice(0, ActiveProjects.CAPACITY);
  }

  keys() {
    return [...this.#keys];
  }
}
