// The memory-core component under Node: the jco-transpiled component
// (../component/, built by scripts/build-js.sh) instantiated once per
// workspace, in a worker thread of its own (guest.js), with that workspace
// as its only directory (granted by ./workspace-fs.js: paths resolved
// beneath it, appends that keep another process's appends), an empty
// environment, and the embedder and model the caller lends it.
//
// Calls into one instance are queued: an export suspended on an async
// import (JSPI) must not be re-entered. Every call has a deadline and the
// instance a memory cap, as under memory-harness; a trap, a deadline stop or
// the cap ends the instance, and the next call starts a fresh one on the
// same workspace.

import fs from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as shim from "@bytecodealliance/preview2-shim";
import { acquireWorkspaceLockWaiting, DEFAULT_LOCK_WAIT_MS } from "./lock.js";
import { CALLERS_MISTAKES, loadHealth, recordFailure } from "./health.js";
import { pending as pendingSpool, setAside, spool } from "./spool.js";
import { COMPONENT_URL, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_MIB, GuestStopped, GuestThread } from "./guest.js";

import { workspaceFilesystem } from "./workspace-fs.js";

export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_MIB };

/** Calls that write: refused with `workspace-read-only` on a read-only workspace. */
const WRITES = new Set([
  "sync", "note", "ingest", "flush", "forget", "triggerInject", "intentCreate",
  "intentCancel", "due", "userSet", "dreamRun", "dreamRollback",
]);

const componentDir = fileURLToPath(new URL("../component/", import.meta.url));
const GUEST_WORKSPACE = "/workspace";

/** The host-side deadline of one embedder call by default, in ms (a setting of this host, as `limits.embedTimeoutMs` is memory-harness's). */
export const DEFAULT_EMBED_TIMEOUT_MS = 30000;

/** A failure the component reported (`types.error`), or one of this host. */
export class MemoryError extends Error {
  constructor(kind, message) {
    super(`${kind}: ${message}`);
    this.name = "MemoryError";
    this.kind = kind;
    this.detail = message;
  }
}

/** A component `result` error (jco throws `ComponentError` with a payload) as a MemoryError. */
function asMemoryError(error) {
  const payload = error?.payload;
  if (payload && typeof payload.tag === "string") {
    return new MemoryError(payload.tag, String(payload.val ?? ""));
  }
  return error;
}

const coreModules = new Map();
function compileCore(name) {
  if (!coreModules.has(name)) {
    const compiling = readFile(path.join(componentDir, name)).then((bytes) => WebAssembly.compile(bytes));
    compiling.catch(() => coreModules.delete(name)); // a failure is retried by the next instance
    coreModules.set(name, compiling);
  }
  return coreModules.get(name);
}

let transpiled;
function loadTranspiled() {
  transpiled ??= import(COMPONENT_URL.href).catch((e) => {
    transpiled = undefined;
    throw new Error(
      `the transpiled component is missing (${e.message}); run scripts/build-js.sh after building the component`,
    );
  });
  return transpiled;
}

/**
 * Rejects with `timeout` when `promise` takes longer than `ms`. The message is
 * the one the wasmtime host gives ("no answer within N ms"): the component
 * passes it on (an escalation's `detail`, a flush's `model_error`), and the
 * conformance suite matches it.
 */
export function withDeadline(promise, ms) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject({ tag: "timeout", val: `no answer within ${ms} ms` }), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** A thrown value as the `{tag, val}` of an embed-error or model-error. */
function asImportError(error) {
  if (error && typeof error === "object" && ["unavailable", "timeout", "failed"].includes(error.tag)) {
    return { tag: error.tag, val: String(error.val ?? "") };
  }
  if (error?.name === "AbortError" || error?.name === "TimeoutError") {
    return { tag: "timeout", val: String(error.message ?? error) };
  }
  return { tag: "failed", val: String(error?.message ?? error) };
}

/**
 * The `openclaw:memory/embedder` import over a lender:
 * `{ info: {provider, model, dimensions, maxBatch} | null, embed(texts) -> Promise<number[][]> }`.
 */
function embedderImport(embedder, timeoutMs) {
  return {
    describe() {
      return embedder?.info ?? undefined;
    },
    async embed(texts) {
      if (!embedder?.info) throw { tag: "unavailable", val: "no embedder is configured" };
      try {
        const vectors = await withDeadline(Promise.resolve().then(() => embedder.embed(texts)), timeoutMs);
        return vectors.map((v) => (v instanceof Float32Array ? v : Float32Array.from(v)));
      } catch (error) {
        throw asImportError(error);
      }
    },
  };
}

/**
 * The `openclaw:memory/model` import over a lender:
 * `{ complete(request, signal) -> Promise<{text, toolCalls}> }`. The host
 * enforces the request's own deadline, never longer than its own cap.
 */
function modelImport(model, calls, capMs) {
  return {
    async complete(request) {
      calls.count += 1;
      if (!model) throw { tag: "unavailable", val: "no language model is configured" };
      const controller = new AbortController();
      try {
        const reply = await withDeadline(
          Promise.resolve().then(() => model.complete(request, controller.signal)),
          Math.min(Math.max(request.timeoutMs, 1), capMs),
        );
        return { text: String(reply?.text ?? ""), toolCalls: reply?.toolCalls ?? [] };
      } catch (error) {
        controller.abort();
        throw asImportError(error);
      }
    },
  };
}

export function wasiImports(workspaceDir) {
  const filesystem = workspaceFilesystem(workspaceDir, GUEST_WORKSPACE);
  return {
    "wasi:cli/environment": {
      getEnvironment: () => [],
      getArguments: () => [],
      initialCwd: () => undefined,
    },
    "wasi:cli/exit": {
      exit(status) {
        throw new Error(`the component called exit (${status?.tag ?? status})`);
      },
    },
    "wasi:cli/stdin": shim.cli.stdin,
    "wasi:cli/stdout": shim.cli.stdout,
    "wasi:cli/stderr": shim.cli.stderr,
    "wasi:cli/terminal-input": shim.cli.terminalInput,
    "wasi:cli/terminal-output": shim.cli.terminalOutput,
    "wasi:cli/terminal-stdin": shim.cli.terminalStdin,
    "wasi:cli/terminal-stdout": shim.cli.terminalStdout,
    "wasi:cli/terminal-stderr": shim.cli.terminalStderr,
    "wasi:clocks/monotonic-clock": shim.clocks.monotonicClock,
    "wasi:clocks/wall-clock": shim.clocks.wallClock,
    "wasi:filesystem/preopens": filesystem.preopens,
    "wasi:filesystem/types": filesystem.types,
    "wasi:io/error": shim.io.error,
    "wasi:io/poll": shim.io.poll,
    "wasi:io/streams": shim.io.streams,
    "wasi:random/random": shim.random.random,
    "wasi:random/insecure": shim.random.insecure,
    "wasi:random/insecure-seed": shim.random.insecureSeed,
  };
}

let configuration; // the `config` interface of an instance of its own, once instantiated

/**
 * The component's `config` interface (wit/config.wit): every setting's
 * default, range and meaning, and their validation. Its functions are pure,
 * so one instance serves the process: no directory, no environment, and
 * neither an embedder nor a model.
 */
function configInterface() {
  configuration ??= (async () => {
    const { instantiate } = await loadTranspiled();
    const exports = await instantiate(compileCore, {
      ...wasiImports(null),
      "openclaw:memory/types": {},
      "openclaw:memory/embedder": embedderImport(null, 0),
      "openclaw:memory/model": modelImport(null, { count: 0 }, 0),
    });
    return exports.config;
  })().catch((error) => {
    configuration = undefined;
    throw error;
  });
  return configuration;
}

/** The component's settings (`config.describe`): `{ key, valueType, defaultValue, minimum, exclusiveMinimum, maximum, choices, doc }` each. */
export async function describeSettings() {
  return (await configInterface()).describe();
}

/**
 * `config` (the component's settings in its own keys, nested by section or
 * dotted: `{ search: { maxResults: 8 } }`) over the component's defaults,
 * checked: `{ settings, dreamGates, flush }`, the records `store.open`,
 * `dream.run` and `write.flush` take. Throws a MemoryError `invalid-input`
 * naming a key the component refuses.
 */
export async function resolveSettings(config = {}) {
  const { resolve } = await configInterface();
  try {
    return resolve(GUEST_WORKSPACE, JSON.stringify(config, (_, v) => (typeof v === "bigint" ? Number(v) : v)));
  } catch (error) {
    throw asMemoryError(error);
  }
}

/** Stands for the open memory (a `borrow<memory>` parameter) among the arguments of `invoke`. */
export const MEMORY = Object.freeze({ borrowed: "memory" });

/**
 * One workspace's memory, served by its own instance of the component in a
 * worker thread (lib/guest.js), under a deadline per call and a memory cap.
 *
 * Options: `workspaceDir` (host path, granted as `/workspace`), `config`
 * (the component's settings, as `resolveSettings` takes them; resolved when
 * the workspace is opened), `embedder`, `model` (see the imports above),
 * `embedTimeoutMs` (default `DEFAULT_EMBED_TIMEOUT_MS`), `modelTimeoutMs`
 * (the cap on any model call; default the longest model turn the settings
 * ask for, dreaming's `modelTimeoutMs`), `limits` (`{ callTimeoutMs,
 * memoryMib }`, memory-harness's settings and defaults: 30 s, 1024 MiB),
 * `lock` (default true: one process per workspace), `lockWaitMs` (default
 * 10 s: how long a workspace another process holds is waited for; then the
 * call fails with kind `busy`), `health` (default false: record failed
 * calls, traps, deadline stops and the memory cap in
 * `.memory/host-health.json`, memory-harness's format), `guestUrl` (the
 * transpiled component's module; tests give a guest of their own).
 */
export class MemoryComponent {
  #options;
  #guest = null; // the GuestThread whose instance has the workspace open
  #replayDeferred = false; // a spool replay ran out of time: left for the next process
  #queue = Promise.resolve();
  #release = null;
  #busy = false;
  #closed = false; // after close(), calls are refused instead of reopening behind the owner's back
  #lastStatus = null; // the last status read while idle, for `statusNow` during a call
  modelCalls = { count: 0 };
  /** Why the workspace is read as it is (it cannot be written), or null. */
  readOnly = null;
  /** Notes for the caller: why the index may be stale. */
  notes = [];
  /** Spooled calls replayed when the workspace was opened: `{ call, file, report | error }`. */
  replayed = [];
  /** The resolved configuration (`resolveSettings(options.config)`), once opened. */
  resolved = null;

  constructor(options) {
    if (!options?.workspaceDir) throw new MemoryError("invalid-input", "workspaceDir is required");
    this.#options = {
      embedTimeoutMs: DEFAULT_EMBED_TIMEOUT_MS,
      lock: true,
      lockWaitMs: DEFAULT_LOCK_WAIT_MS,
      health: false,
      guestUrl: COMPONENT_URL,
      ...options,
      limits: { callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS, memoryMib: DEFAULT_MEMORY_MIB, ...options.limits },
    };
    this.workspaceDir = path.resolve(options.workspaceDir);
  }

  /** The limits every call runs under: `{ callTimeoutMs, memoryMib }`. */
  get limits() {
    return { ...this.#options.limits };
  }

  /** Changes the limits (`{ callTimeoutMs, memoryMib }`): the deadline from the next call, the memory cap from the next instance. */
  setLimits(limits) {
    Object.assign(this.#options.limits, limits);
  }

  /** Opens the workspace (instantiating the component); idempotent. */
  async open() {
    await this.#enqueue(async () => {
      try {
        await this.#ensure();
      } catch (error) {
        // Opening is a call too (instantiating, `store.open`, the spool's
        // replay, under the deadline): its failures are the workspace's health.
        this.#noteFailure("open", error);
        throw error;
      }
    });
    return this;
  }

  async #ensure() {
    if (this.#guest?.alive) return this.#guest;
    this.#guest = null; // stopped: its thread is gone
    if (this.#closed) throw new MemoryError("io", `the memory of ${this.workspaceDir} was closed`);
    // Settings the component refuses fail before the workspace is locked.
    this.resolved ??= await resolveSettings(this.#options.config);
    if (this.#options.lock && !this.#release && !this.readOnly) {
      try {
        this.#release = await acquireWorkspaceLockWaiting(this.workspaceDir, this.#options.lockWaitMs);
      } catch (error) {
        if (error.kind !== "workspace-read-only") {
          if (error.kind) throw new MemoryError(error.kind, error.message);
          throw error;
        }
        // Nothing can write here, so no lock is needed to read: the index is
        // opened as it is (`open-read-only`) and may be stale.
        this.readOnly = error.why;
        this.notes = [`${error.why}: the index is used as it is and may be stale`];
      }
    }
    const guest = new GuestThread({
      workspaceDir: this.workspaceDir,
      embedderInfo: this.#options.embedder?.info,
      hostCalls: {
        embed: embedderImport(this.#options.embedder, this.#options.embedTimeoutMs).embed,
        complete: modelImport(
          this.#options.model,
          this.modelCalls,
          this.#options.modelTimeoutMs ?? this.resolved.dreamGates.modelTimeoutMs,
        ).complete,
      },
      limits: this.#options.limits,
      guestUrl: this.#options.guestUrl,
    });
    try {
      await guest.open(this.resolved.settings, Boolean(this.readOnly));
    } catch (error) {
      guest.terminate();
      const failure = callFailure(error);
      if (this.readOnly && failure instanceof MemoryError && !failure.trapped) {
        throw new MemoryError("workspace-read-only", `${this.readOnly}, and its memory cannot be read as it is (${failure.detail})`);
      }
      throw failure;
    }
    this.#guest = guest;
    const replay = this.readOnly || this.#replayDeferred ? "done" : await this.#replaySpool(guest);
    if (replay === "trapped") {
      // The instance is gone with the trap; the call that trapped was set
      // aside, so a fresh instance replays the rest.
      return this.#ensure();
    }
    if (replay === "deadline") {
      // A replay that ran out of time (a busy machine, a long transcript) is
      // kept for the next process to open the workspace; this one goes on
      // without replaying, or it would stop at the same place every time.
      this.#replayDeferred = true;
      return this.#ensure();
    }
    return guest;
  }

  /** Replays this host's spooled flushes and ingests, oldest first (see spool.js). */
  async #replaySpool(guest) {
    for (const entry of pendingSpool(this.workspaceDir)) {
      if (entry.error) continue; // unreadable: left in place for an operator
      try {
        const report = await guest.call("write", entry.call, [{ memory: true }, { value: entry.request }]);
        fs.rmSync(entry.file, { force: true });
        this.replayed.push({ call: entry.call, file: path.basename(entry.file), report });
      } catch (error) {
        const failure = callFailure(error);
        const trapped = Boolean(failure?.trapped);
        const file = path.basename(entry.file);
        this.#noteFailure(`replay ${entry.call}`, failure);
        if (failure?.stop === "deadline") {
          this.replayed.push({ call: entry.call, file, error: failure });
          return "deadline";
        }
        if (trapped || CALLERS_MISTAKES.has(failure?.kind)) {
          // It would fail the same way every time: set aside, not retried.
          const rejected = setAside(this.workspaceDir, entry.file);
          this.replayed.push({ call: entry.call, file, error: failure, rejected });
          if (trapped) return "trapped";
          continue;
        }
        // Kept for the next open.
        this.replayed.push({ call: entry.call, file, error: failure });
      }
    }
    return "done";
  }

  /**
   * A flush or ingest: when the workspace stays busy past `lockWaitMs`, the
   * request is spooled (never dropped) and the call fails with kind `busy`
   * and `spooled` naming the file; it is written when this host gets the
   * workspace.
   */
  async #spoolable(call, request) {
    try {
      return await this.#onMemory("write", call, [request], call);
    } catch (error) {
      if (error?.kind !== "busy") throw error;
      const file = spool(this.workspaceDir, call, request);
      const spooled = new MemoryError(
        "busy",
        `${error.detail}; the ${call} was spooled to ${path.relative(this.workspaceDir, file)} and will be written when this host gets the workspace`,
      );
      spooled.spooled = file;
      throw spooled;
    }
  }

  #enqueue(task) {
    const guarded = async () => {
      this.#busy = true;
      try {
        return await task();
      } finally {
        this.#busy = false;
      }
    };
    const run = this.#queue.then(guarded, guarded);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Calls the export `fn` of interface `iface` (a WIT name: `search`,
   * `[method]memory.sync`; or jco's camelCase) with `args`, where `MEMORY`
   * stands for the open memory; in the queue. `command` names the call for
   * the read-only check and the health record. The component's error
   * rejects as a MemoryError, or, with `outcome`, the answer comes as jco
   * gives a `result` inside a value: `{tag: "ok" | "err", val}`. A trap, a
   * deadline stop or the memory cap rejects with a MemoryError that has
   * `trapped` (and `stop`: `trap`, `deadline`, `memory-cap`).
   */
  invoke(iface, fn, args = [], { command = `${iface}.${fn}`, outcome = false } = {}) {
    return this.#enqueue(() => this.#invokeNow(iface, fn, args, { command, outcome }));
  }

  /**
   * Runs `task(invoke)` in one slot of the queue: no other call comes
   * between its calls. `invoke` takes `invoke`'s arguments.
   */
  exclusive(task) {
    return this.#enqueue(() => task((iface, fn, args = [], { command = `${iface}.${fn}`, outcome = false } = {}) =>
      this.#invokeNow(iface, fn, args, { command, outcome }),
    ));
  }

  async #invokeNow(iface, fn, args, { command, outcome }) {
    try {
      const guest = await this.#ensure();
      if (this.readOnly && WRITES.has(command)) {
        throw new MemoryError("workspace-read-only", `${command} writes, and ${this.readOnly}; nothing was written`);
      }
      const params = args.map((arg) => (arg === MEMORY ? { memory: true } : { value: arg }));
      try {
        const value = await guest.call(iface, fn, params);
        return outcome ? { tag: "ok", val: value } : value;
      } catch (error) {
        if (outcome && error?.payload) return { tag: "err", val: error.payload };
        throw callFailure(error);
      }
    } catch (error) {
      this.#noteFailure(command, error);
      throw error;
    }
  }

  /** `invoke` of a function whose first parameter is the open memory. */
  #onMemory(iface, fn, args, command) {
    return this.invoke(iface, fn, [MEMORY, ...args], { command });
  }

  /** Records a failed call in the workspace's health file (not when it is read-only). */
  #noteFailure(command, error) {
    if (!this.#options.health) return;
    const kind = error?.trapped ? (error.stop ?? "trap") : (error?.kind ?? "host");
    if (kind === "workspace-read-only") return;
    recordFailure(this.workspaceDir, {
      command,
      kind,
      message: String(error?.message ?? error),
      trap: Boolean(error?.trapped),
      deadline: error?.stop === "deadline",
    });
  }

  /** The health record (`.memory/host-health.json`), or null. */
  health() {
    return loadHealth(this.workspaceDir);
  }

  /**
   * The index status, synchronously (OpenClaw's manager `status()` is
   * synchronous): `null` before the first `open()`. `status` reaches no
   * async import, so while no call is in flight the instance's thread is
   * asked and answers at once (this thread blocks for it, briefly); while a
   * call is in flight (perhaps suspended on an import), or after a trap, the
   * last status read is returned.
   */
  statusNow() {
    if (!this.#guest) return this.#lastStatus;
    if (this.#busy || !this.#guest.alive) return this.#lastStatus;
    this.#lastStatus = this.#guest.statusNow() ?? this.#lastStatus;
    return this.#lastStatus;
  }

  async status() {
    this.#lastStatus = await this.#onMemory("store", "[method]memory.status", [], "status");
    return this.#lastStatus;
  }
  sync(request = {}) {
    const sync = { maxFiles: request.maxFiles, maxEmbeddings: request.maxEmbeddings, force: Boolean(request.force), acknowledgeRebuild: Boolean(request.acknowledgeRebuild) };
    return this.#onMemory("store", "[method]memory.sync", [sync], "sync");
  }
  bootstrap(request) {
    return this.#onMemory("bootstrap", "load", [request], "bootstrap");
  }
  search(request) {
    return this.#onMemory("recall", "search", [request], "search");
  }
  get(request) {
    return this.#onMemory("recall", "get", [request], "get");
  }
  note(request) {
    return this.#onMemory("write", "note", [request], "note");
  }
  ingest(request) {
    return this.#spoolable("ingest", request);
  }
  flush(request) {
    return this.#spoolable("flush", request);
  }
  forget(request) {
    return this.#onMemory("write", "forget", [request], "forget");
  }
  triggerInject(request) {
    return this.#onMemory("inject", "trigger-inject", [request], "triggerInject");
  }
  escalate(request) {
    return this.#onMemory("inject", "escalate", [request], "escalate");
  }
  intentCreate(spec, context) {
    return this.#onMemory("intents", "create", [spec, context], "intentCreate");
  }
  intentList(context) {
    return this.#onMemory("intents", "list", [context], "intentList");
  }
  intentCancel(id, context) {
    return this.#onMemory("intents", "cancel", [BigInt(id), context], "intentCancel");
  }
  due(atMs) {
    return this.#onMemory("intents", "due", [BigInt(atMs)], "due");
  }
  userShow() {
    return this.#onMemory("user", "show", [], "userShow");
  }
  userSet(request) {
    return this.#onMemory("user", "set", [request], "userSet");
  }
  dreamRun(request) {
    return this.#onMemory("dream", "run", [request], "dreamRun");
  }
  dreamRollback(context) {
    return this.#onMemory("dream", "rollback", [context], "dreamRollback");
  }
  report(request) {
    return this.#onMemory("report", "gather", [request], "report");
  }

  /** Drops the instance (the next call opens the workspace again), keeping the lock. */
  async restart() {
    await this.#enqueue(() => this.#drop());
  }

  /** Drops the instance and releases the workspace; later calls are refused. */
  async close() {
    this.#closed = true;
    await this.#enqueue(async () => {
      await this.#drop();
      this.#release?.();
      this.#release = null;
    });
  }

  /** Closes the instance's memory (the index is closed before anything overwrites it) and ends its thread. */
  async #drop() {
    const guest = this.#guest;
    this.#guest = null;
    await guest?.close();
  }
}

/** A failure of a call as this host reports it: a MemoryError for the component's error and for a stopped guest. */
function callFailure(error) {
  if (error instanceof GuestStopped) {
    const message = error.stop === "trap" ? `the component trapped: ${error.message}` : error.message;
    const stopped = new MemoryError("internal", message);
    stopped.trapped = true;
    stopped.stop = error.stop;
    return stopped;
  }
  if (error?.payload && typeof error.payload.tag === "string") {
    return new MemoryError(error.payload.tag, String(error.payload.val ?? ""));
  }
  return error;
}

/** A turn context with defaults: the owner at a terminal, now. */
export function turnContext(fields = {}) {
  return {
    nowMs: BigInt(fields.nowMs ?? Date.now()),
    sessionId: fields.sessionId ?? undefined,
    sessionKind: fields.sessionKind === null ? undefined : (fields.sessionKind ?? "interactive"),
    channel: fields.channel ?? undefined,
    sender: fields.sender ?? undefined,
    senderIsOwner: fields.senderIsOwner ?? true,
    activeProjects: fields.activeProjects ?? [],
    utcOffsetMinutes: fields.utcOffsetMinutes ?? 0,
    taint: fields.taint ?? undefined,
  };
}
