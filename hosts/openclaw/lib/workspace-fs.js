// The workspace as the component's only directory under Node.
//
// preview2-shim 0.26.1 implements wasi:filesystem by turning a guest path
// into a host path string in JS and opening that string (in its I/O worker),
// and its `append-via-stream` writes at the size the file had when the
// stream was made. Here, over the shim's own descriptors (their prototype is
// patched once; a descriptor this module did not open keeps the shim's
// behaviour):
//
// - Paths are resolved beneath the descriptor they are given to, one
//   component at a time from an open directory (on Linux through
//   `/proc/self/fd/<dir>/<name>`, which the kernel resolves as openat does),
//   as cap-std does under wasmtime: `..` may not climb above that directory,
//   a symlink's target is resolved in its place and may be neither absolute
//   nor lead out; either is `not-permitted`. A symlink that stays inside is
//   followed. What was opened is checked to lie beneath the workspace; the
//   shim's descriptor for it is then opened by that checked path (never with
//   create or truncate, done already) and must be the same file.
// - Appends are appends. The guest appends to a note (ops/write/append.rs)
//   by reading the file's size with `stat` and writing at that offset, on a
//   file opened to write but not read; such a write goes through an
//   O_APPEND description of the file, so it lands at the end as it is then,
//   after whatever another process appended in between instead of over it.
//   On Linux `append-via-stream` writes through an O_APPEND description too.
// - `mutate-directory` is cleared: Rust's std sets it on every writable open
//   on wasip2, wasmtime ignores it, and the shim refuses it.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import * as shim from "@bytecodealliance/preview2-shim";

// The shim's I/O worker, to open a file's O_APPEND stream from its descriptor
// (the shim opens only by path). The same module instance the shim uses
// (`require` of an ES module shares the loader's cache); the version is
// pinned in package.json. Loaded with `require`, not a top-level `await
// import()`: OpenClaw loads plugins with `require`, which refuses a module
// graph with top-level await.
const require = createRequire(import.meta.url);
const shimIo = path.join(path.dirname(require.resolve("@bytecodealliance/preview2-shim")), "..", "io");
const { ioCall, outputStreamCreate } = require(path.join(shimIo, "worker-io.js"));
const { FILE, FILESYSTEM_DESCRIPTOR_OPEN, FILESYSTEM_DESCRIPTOR_CLOSE, OUTPUT_STREAM_CREATE } = require(path.join(shimIo, "calls.js"));

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const MAX_SYMLINKS = 40; // Linux's limit, and the shim's
/** Where an open descriptor can be named (Linux); elsewhere descriptors are named by the real path they were opened by. */
const PROC_FD = isDirectory("/proc/self/fd") ? "/proc/self/fd" : null;

/**
 * Host state of each descriptor this module opened (`{ fd, path, root,
 * writable, appendable, observedEnd }`) and of the workspace's own
 * (`{ workspace, root }`, opened at each call).
 */
const handles = new WeakMap();
const closeLeaked = new FinalizationRegistry((fd) => fs.close(fd, () => {}));

function isDirectory(hostPath) {
  try {
    return fs.statSync(hostPath).isDirectory();
  } catch {
    return false;
  }
}

/** A thrown Node error as the WASI error code the shim would give; a code stays itself. */
function errorCode(error) {
  if (typeof error === "string") return error;
  if (error?.code === "ERR_INVALID_ARG_VALUE") return "invalid"; // a path holding NUL
  return shim.filesystem.types.filesystemErrorCode({ payload: error });
}

/** `name` inside the open directory `dir`, named through the descriptor where the OS allows. */
function within(dir, name) {
  return PROC_FD ? `${PROC_FD}/${dir.fd}/${name}` : path.join(dir.path, name);
}

/** Where the file open as `handle` is now. */
function whereIs(handle) {
  return PROC_FD ? fs.readlinkSync(`${PROC_FD}/${handle.fd}`) : fs.realpathSync(handle.path);
}

function components(guestPath) {
  return guestPath.split("/").filter((c) => c !== "" && c !== ".");
}

/** The target of the symlink `name` in `dir`, or null when it is no symlink (or absent). */
function symlinkTarget(dir, name) {
  try {
    return fs.readlinkSync(within(dir, name));
  } catch (error) {
    if (error.code === "EINVAL" || error.code === "ENOENT") return null;
    throw error;
  }
}

/** Opens the directory `name` in `dir`, never through a symlink (one swapped in since it was looked at fails). */
function openDirectory(dir, name) {
  const fd = fs.openSync(within(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  return { fd, path: PROC_FD ? null : path.join(dir.path, name) };
}

/**
 * Resolves `guestPath` beneath the open directory `base`, as cap-std does:
 * `{ dir, name, opened }`, the directory holding the last component, its
 * name ("." for `dir` itself) and the directories opened on the way (the
 * caller closes them). The last component is a symlink only when
 * `followFinal` is false.
 */
function resolveBeneath(base, guestPath, followFinal) {
  if (guestPath.startsWith("/")) throw "not-permitted";
  let pending = components(guestPath);
  const stack = [base];
  let symlinks = 0;
  try {
    while (pending.length > 0) {
      const name = pending.shift();
      if (name === "..") {
        if (stack.length === 1) throw "not-permitted";
        fs.closeSync(stack.pop().fd);
        continue;
      }
      const dir = stack.at(-1);
      const last = pending.length === 0;
      const target = last && !followFinal ? null : symlinkTarget(dir, name);
      if (target !== null) {
        if (++symlinks > MAX_SYMLINKS) throw "loop";
        if (target.startsWith("/")) throw "not-permitted";
        pending = [...components(target), ...pending];
        continue;
      }
      if (last) return { dir, name, opened: stack.slice(1) };
      stack.push(openDirectory(dir, name));
    }
    return { dir: stack.at(-1), name: ".", opened: stack.slice(1) };
  } catch (error) {
    for (const handle of stack.slice(1)) fs.closeSync(handle.fd);
    throw errorCode(error);
  }
}

/**
 * `use(dir)` with `handle` open as a directory. The workspace itself is
 * opened for the call only: nothing holds it once the instance is gone (it
 * can be unmounted, say).
 */
function withOpen(handle, use) {
  if (handle.workspace === undefined) return use(handle);
  let fd;
  try {
    fd = fs.openSync(handle.workspace, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    throw errorCode(error);
  }
  try {
    return use({ fd, path: handle.workspace });
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `operate(hostPath, resolved)` on `guestPath` resolved beneath `handle`; a
 * trailing slash is kept, so the kernel insists on a directory. Node errors
 * become WASI error codes.
 */
function atPath(handle, guestPath, followFinal, operate) {
  const trailingSlash = guestPath.endsWith("/");
  return withOpen(handle, (base) => {
    const resolved = resolveBeneath(base, guestPath, followFinal || trailingSlash);
    try {
      return operate(within(resolved.dir, resolved.name) + (trailingSlash ? "/" : ""), resolved);
    } catch (error) {
      throw errorCode(error);
    } finally {
      for (const dir of resolved.opened) fs.closeSync(dir.fd);
    }
  });
}

/** The open(2) flags of a WASI open; symlinks are already followed where asked, and a writable file's own description appends. */
function hostOpenFlags(openFlags, descriptorFlags) {
  const access = descriptorFlags.write ? (descriptorFlags.read ? O_RDWR : O_WRONLY) : O_RDONLY;
  return (
    access |
    O_NOFOLLOW |
    (descriptorFlags.write ? O_APPEND : 0) |
    (openFlags.create ? O_CREAT : 0) |
    (openFlags.directory ? O_DIRECTORY : 0) |
    (openFlags.exclusive ? O_EXCL : 0) |
    (openFlags.truncate ? O_TRUNC : 0)
  );
}

/** The open file `fd`'s path relative to the workspace, refusing one outside it (or gone). */
function workspaceRelative(root, fd, hostPath) {
  if (fs.fstatSync(fd).nlink === 0) throw "no-entry"; // unlinked since: no path reaches it
  const relative = path.relative(withOpen(root, whereIs), whereIs({ fd, path: hostPath }));
  if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) throw "not-permitted";
  return relative || ".";
}

function typeOf(entry) {
  if (entry.isFile()) return "regular-file";
  if (entry.isDirectory()) return "directory";
  if (entry.isSymbolicLink()) return "symbolic-link";
  if (entry.isFIFO()) return "fifo";
  if (entry.isSocket()) return "socket";
  if (entry.isCharacterDevice()) return "character-device";
  if (entry.isBlockDevice()) return "block-device";
  return "unknown";
}

function datetime(ns) {
  return { seconds: ns / 1_000_000_000n, nanoseconds: Number(ns % 1_000_000_000n) };
}

/** A `descriptor-stat` from bigint Node stats, as the shim gives it. */
function statRecord(stats) {
  return {
    type: typeOf(stats),
    linkCount: stats.nlink,
    size: stats.size,
    dataAccessTimestamp: datetime(stats.atimeNs),
    dataModificationTimestamp: datetime(stats.mtimeNs),
    statusChangeTimestamp: datetime(stats.ctimeNs),
  };
}

/** A `new-timestamp` in seconds, `currentNs` standing for `no-change`. */
function secondsOf(newTimestamp, currentNs) {
  if (newTimestamp.tag === "now") return Date.now() / 1000;
  if (newTimestamp.tag === "timestamp") return Number(newTimestamp.val.seconds) + newTimestamp.val.nanoseconds / 1e9;
  return Number(currentNs) / 1e9;
}

/** The directory entries of an open directory, read from the directory itself rather than from a path. */
class WorkspaceEntries {
  #dir;
  constructor(dir) {
    this.#dir = dir;
  }
  readDirectoryEntry() {
    let entry;
    try {
      entry = this.#dir.readSync();
    } catch (error) {
      throw errorCode(error);
    }
    return entry === null ? undefined : { name: entry.name, type: typeOf(entry) };
  }
  [Symbol.dispose]() {
    this.#dir?.close(() => {});
    this.#dir = null;
  }
}

const stock = {}; // the shim's own methods, called from the replacements

function otherHandle(descriptor) {
  const handle = handles.get(descriptor);
  if (!handle) throw "cross-device"; // not this workspace's: no path links the two
  return handle;
}

/** The replaced methods of workspace descriptors: `this` is the descriptor, `handle` its host state. */
const beneath = {
  openAt(handle, pathFlags, guestPath, openFlags, descriptorFlags) {
    if (descriptorFlags.requestedWriteSync || descriptorFlags.fileIntegritySync || descriptorFlags.dataIntegritySync) {
      throw "unsupported"; // as the shim and wasmtime
    }
    const flags = { ...descriptorFlags, mutateDirectory: false };
    const { fd, hostPath } = atPath(handle, guestPath, pathFlags.symlinkFollow, (at, { dir, name }) => ({
      fd: fs.openSync(at, hostOpenFlags(openFlags, flags), 0o666),
      hostPath: PROC_FD ? null : path.join(dir.path, name),
    }));
    let descriptor;
    try {
      const relative = workspaceRelative(handle.root.handle, fd, hostPath);
      descriptor = stock.openAt.call(
        handle.root.descriptor,
        { symlinkFollow: false },
        relative,
        { create: false, directory: Boolean(openFlags.directory), exclusive: false, truncate: false },
        flags,
      );
      // A path swapped between the two opens names another file.
      if (descriptor.metadataHash().lower !== fs.fstatSync(fd, { bigint: true }).ino) throw "not-permitted";
    } catch (error) {
      if (descriptor) stock.dispose.call(descriptor);
      fs.closeSync(fd);
      throw errorCode(error);
    }
    handles.set(descriptor, {
      fd,
      path: hostPath,
      root: handle.root,
      writable: Boolean(flags.write),
      appendable: Boolean(flags.write && !flags.read),
      observedEnd: undefined,
    });
    closeLeaked.register(descriptor, fd, descriptor);
    return descriptor;
  },

  /** The size it reports is where an append by positional write would start (see `write`). */
  stat(handle) {
    const stats = stock.stat.call(this);
    if (handle.appendable) handle.observedEnd = stats.size;
    return stats;
  },

  /**
   * A write at the end the descriptor last reported (and on from there) is
   * the guest appending: it goes to the end as it is now, so bytes another
   * process appended meanwhile are kept, not overwritten.
   */
  write(handle, buffer, offset) {
    if (!handle.appendable || offset !== handle.observedEnd) {
      handle.observedEnd = undefined;
      return stock.write.call(this, buffer, offset);
    }
    let written;
    try {
      written = BigInt(fs.writeSync(handle.fd, buffer));
    } catch (error) {
      throw errorCode(error);
    }
    handle.observedEnd += written;
    return written;
  },

  appendViaStream(handle) {
    if (!PROC_FD) return stock.appendViaStream.call(this);
    if (!handle.writable) throw "bad-descriptor";
    try {
      // Node's file stream writes at positions (pwrite), which on an
      // O_APPEND description Linux ignores: every write lands at the end.
      const { id } = ioCall(FILESYSTEM_DESCRIPTOR_OPEN, null, { path: `${PROC_FD}/${handle.fd}`, flags: O_WRONLY | O_APPEND });
      try {
        return outputStreamCreate(FILE, ioCall(OUTPUT_STREAM_CREATE | FILE, null, { descriptorId: id, offset: 0 }));
      } finally {
        ioCall(FILESYSTEM_DESCRIPTOR_CLOSE, id); // the stream holds the file open
      }
    } catch (error) {
      throw errorCode(error);
    }
  },

  readDirectory(handle) {
    return withOpen(handle, (dir) => {
      try {
        return new WorkspaceEntries(fs.opendirSync(PROC_FD ? `${PROC_FD}/${dir.fd}` : dir.path));
      } catch (error) {
        throw errorCode(error);
      }
    });
  },

  statAt(handle, pathFlags, guestPath) {
    return atPath(handle, guestPath, pathFlags.symlinkFollow, (at) => statRecord(fs.lstatSync(at, { bigint: true })));
  },

  metadataHashAt(handle, pathFlags, guestPath) {
    return atPath(handle, guestPath, pathFlags.symlinkFollow, (at) => {
      const stats = fs.lstatSync(at, { bigint: true });
      return { upper: stats.mtimeNs, lower: stats.ino }; // the shim's hash
    });
  },

  setTimesAt(handle, pathFlags, guestPath, accessed, modified) {
    atPath(handle, guestPath, pathFlags.symlinkFollow, (at) => {
      const stats = fs.lstatSync(at, { bigint: true });
      fs.lutimesSync(at, secondsOf(accessed, stats.atimeNs), secondsOf(modified, stats.mtimeNs));
    });
  },

  createDirectoryAt(handle, guestPath) {
    atPath(handle, guestPath, false, (at) => fs.mkdirSync(at));
  },

  readlinkAt(handle, guestPath) {
    return atPath(handle, guestPath, false, (at) => fs.readlinkSync(at));
  },

  removeDirectoryAt(handle, guestPath) {
    atPath(handle, guestPath, false, (at) => fs.rmdirSync(at));
  },

  unlinkFileAt(handle, guestPath) {
    atPath(handle, guestPath, false, (at) => fs.unlinkSync(at));
  },

  symlinkAt(handle, target, guestPath) {
    if (target.startsWith("/")) throw "not-permitted"; // as the shim: it could only ever lead out
    atPath(handle, guestPath, false, (at) => fs.symlinkSync(target, at));
  },

  renameAt(handle, oldPath, newDescriptor, newPath) {
    const to = otherHandle(newDescriptor);
    atPath(handle, oldPath, false, (from) => atPath(to, newPath, false, (at) => fs.renameSync(from, at)));
  },

  linkAt(handle, oldPathFlags, oldPath, newDescriptor, newPath) {
    const to = otherHandle(newDescriptor);
    atPath(handle, oldPath, oldPathFlags.symlinkFollow, (from) => atPath(to, newPath, false, (at) => fs.linkSync(from, at)));
  },

  dispose(handle) {
    handles.delete(this);
    closeLeaked.unregister(this);
    if (handle.fd !== null) fs.closeSync(handle.fd);
    return stock.dispose.call(this);
  },
};

let installed = false;
/** Replaces the shim's descriptor methods once; each keeps the shim's behaviour for a descriptor not opened here. */
function install() {
  if (installed) return;
  installed = true;
  const proto = shim.filesystem.types.Descriptor.prototype;
  for (const [name, replacement] of Object.entries(beneath)) {
    const key = name === "dispose" ? Symbol.dispose : name;
    const original = proto[key];
    stock[name] = original;
    proto[key] = function (...args) {
      const handle = handles.get(this);
      return handle ? replacement.call(this, handle, ...args) : original.apply(this, args);
    };
  }
}

/**
 * `wasi:filesystem/preopens` and `wasi:filesystem/types` granting `hostDir`
 * as `guestDir` and nothing else (nothing when `hostDir` is null).
 */
export function workspaceFilesystem(hostDir, guestDir) {
  install();
  const types = { ...shim.filesystem.types, DirectoryEntryStream: WorkspaceEntries };
  if (hostDir === null) return { preopens: { getDirectories: () => [] }, types };
  const { preopens } = shim.filesystem.createFilesystem({ preopens: { [guestDir]: hostDir } });
  const [[descriptor]] = preopens.getDirectories();
  const root = { descriptor };
  root.handle = { fd: null, workspace: hostDir, root };
  handles.set(descriptor, root.handle);
  return { preopens, types };
}
