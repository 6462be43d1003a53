// The memory-core component under Node: the jco-transpiled component
// (../component/, built by scripts/build-js.sh) instantiated once per
// workspace, with that workspace as its only directory (granted by
// ./workspace-fs.js: paths resolved beneath it, appends that keep another
// process's appends), an empty environment, and the embedder and model the
// caller lends it.
//
// Calls into one instance are queued: an export suspended on an async
// import (JSPI) must not be re-entered. A trap kills the instance; the next
// call starts a fresh one on the same workspace.

import fs from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import * as shim from "@bytecodealliance/preview2-shim";
import { acquireWorkspaceLockWaiting, DEFAULT_LOCK_WAIT_MS } from "./lock.js";
import { CALLERS_MISTAKES, loadHealth, recordFailure } from "./health.js";
import { pending as pendingSpool, setAside, spool } from "./spool.js";
import { workspaceFilesystem } from "./workspace-fs.js";

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

/** A trap: the instance is dead (the next call starts a fresh one). */
function trapError(error) {
  const trap = new MemoryError("internal", `the component trapped: ${error.message}`);
  trap.trapped = true;
  return trap;
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
  transpiled ??= import(new URL("../component/memory_core.js", import.meta.url).href).catch((e) => {
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

function wasiImports(workspaceDir) {
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

/**
 * One workspace's memory, served by its own instance of the component.
 *
 * Options: `workspaceDir` (host path, granted as `/workspace`), `config`
 * (the component's settings, as `resolveSettings` takes them; resolved when
 * the workspace is opened), `embedder`, `model` (see the imports above),
 * `embedTimeoutMs` (default `DEFAULT_EMBED_TIMEOUT_MS`), `modelTimeoutMs`
 * (the cap on any model call; default the longest model turn the settings
 * ask for, dreaming's `modelTimeoutMs`), `lock`
 * (default true: one process per workspace), `lockWaitMs` (default 10 s: how
 * long a workspace another process holds is waited for; then the call fails
 * with kind `busy`), `health` (default false: record failed calls and traps
 * in `.memory/host-health.json`, memory-harness's format).
 */
export class MemoryComponent {
  #options;
  #instance = null; // { exports, memory }
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
      ...options,
    };
    this.workspaceDir = path.resolve(options.workspaceDir);
  }

  /** Opens the workspace (instantiating the component); idempotent. */
  async open() {
    await this.#enqueue(() => this.#ensure());
    return this;
  }

  async #ensure() {
    if (this.#instance) return this.#instance;
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
    const { instantiate } = await loadTranspiled();
    const imports = {
      ...wasiImports(this.workspaceDir),
      "openclaw:memory/types": {},
      "openclaw:memory/embedder": embedderImport(this.#options.embedder, this.#options.embedTimeoutMs),
      "openclaw:memory/model": modelImport(
        this.#options.model,
        this.modelCalls,
        this.#options.modelTimeoutMs ?? this.resolved.dreamGates.modelTimeoutMs,
      ),
    };
    const exports = await instantiate(compileCore, imports);
    let memory;
    try {
      memory = this.readOnly
        ? exports.store.Memory.openReadOnly(this.resolved.settings)
        : exports.store.Memory.open(this.resolved.settings);
    } catch (error) {
      const failure = asMemoryError(error);
      if (this.readOnly && failure instanceof MemoryError) {
        throw new MemoryError("workspace-read-only", `${this.readOnly}, and its memory cannot be read as it is (${failure.detail})`);
      }
      throw failure;
    }
    this.#instance = { exports, memory };
    if (!this.readOnly && (await this.#replaySpool(exports, memory)) === "trapped") {
      // The instance is gone with the trap; the call that trapped was set
      // aside, so a fresh instance replays the rest.
      this.#instance = null;
      return this.#ensure();
    }
    return this.#instance;
  }

  /** Replays this host's spooled flushes and ingests, oldest first (see spool.js). */
  async #replaySpool(exports, memory) {
    for (const entry of pendingSpool(this.workspaceDir)) {
      if (entry.error) continue; // unreadable: left in place for an operator
      try {
        const report =
          entry.call === "flush"
            ? await exports.write.flush(memory, entry.request)
            : await exports.write.ingest(memory, entry.request);
        fs.rmSync(entry.file, { force: true });
        this.replayed.push({ call: entry.call, file: path.basename(entry.file), report });
      } catch (error) {
        const trapped = error instanceof WebAssembly.RuntimeError;
        const failure = trapped ? trapError(error) : asMemoryError(error);
        const file = path.basename(entry.file);
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
      return await this.call((e, m) => e.write[call](m, request), call);
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

  /** Runs `fn(exports, memory)` in the queue; component errors become MemoryError. */
  call(fn, command = "call") {
    return this.#enqueue(async () => {
      try {
        const { exports, memory } = await this.#ensure();
        if (this.readOnly && WRITES.has(command)) {
          throw new MemoryError("workspace-read-only", `${command} writes, and ${this.readOnly}; nothing was written`);
        }
        try {
          return await fn(exports, memory);
        } catch (error) {
          if (error instanceof WebAssembly.RuntimeError) {
            // A trap leaves the instance unusable: the next call starts anew.
            this.#instance = null;
            throw trapError(error);
          }
          throw asMemoryError(error);
        }
      } catch (error) {
        this.#noteFailure(command, error);
        throw error;
      }
    });
  }

  /** Records a failed call in the workspace's health file (not when it is read-only). */
  #noteFailure(command, error) {
    if (!this.#options.health) return;
    const kind = error?.trapped ? "trap" : (error?.kind ?? "host");
    if (kind === "workspace-read-only") return;
    recordFailure(this.workspaceDir, {
      command,
      kind,
      message: String(error?.message ?? error),
      trap: Boolean(error?.trapped),
    });
  }

  /** The health record (`.memory/host-health.json`), or null. */
  health() {
    return loadHealth(this.workspaceDir);
  }

  /**
   * The index status, synchronously (OpenClaw's manager `status()` is
   * synchronous): `null` before the first `open()`. `status` reaches no
   * async import, so it runs at once when the instance is idle; while a call
   * is in flight (perhaps suspended on an import) the instance must not be
   * re-entered, and the last status read while idle is returned (or null),
   * as it is after a trap.
   */
  statusNow() {
    if (!this.#instance) return null;
    if (this.#busy) return this.#lastStatus;
    try {
      this.#lastStatus = this.#instance.memory.status();
      return this.#lastStatus;
    } catch (error) {
      if (error instanceof WebAssembly.RuntimeError) {
        // A caller that must have an answer now gets the last one; the next
        // queued call starts a fresh instance.
        this.#instance = null;
        return this.#lastStatus;
      }
      throw asMemoryError(error);
    }
  }

  status() {
    return this.call((_, memory) => memory.status(), "status");
  }
  sync(request = {}) {
    return this.call(
      (_, memory) =>
        memory.sync({ maxFiles: request.maxFiles, force: Boolean(request.force), acknowledgeRebuild: Boolean(request.acknowledgeRebuild) }),
      "sync",
    );
  }
  bootstrap(request) {
    return this.call((e, m) => e.bootstrap.load(m, request), "bootstrap");
  }
  search(request) {
    return this.call((e, m) => e.recall.search(m, request), "search");
  }
  get(request) {
    return this.call((e, m) => e.recall.get(m, request), "get");
  }
  note(request) {
    return this.call((e, m) => e.write.note(m, request), "note");
  }
  ingest(request) {
    return this.#spoolable("ingest", request);
  }
  flush(request) {
    return this.#spoolable("flush", request);
  }
  forget(request) {
    return this.call((e, m) => e.write.forget(m, request), "forget");
  }
  triggerInject(request) {
    return this.call((e, m) => e.inject.triggerInject(m, request), "triggerInject");
  }
  escalate(request) {
    return this.call((e, m) => e.inject.escalate(m, request), "escalate");
  }
  intentCreate(spec, context) {
    return this.call((e, m) => e.intents.create(m, spec, context), "intentCreate");
  }
  intentList(context) {
    return this.call((e, m) => e.intents.list(m, context), "intentList");
  }
  intentCancel(id, context) {
    return this.call((e, m) => e.intents.cancel(m, BigInt(id), context), "intentCancel");
  }
  due(atMs) {
    return this.call((e, m) => e.intents.due(m, BigInt(atMs)), "due");
  }
  userShow() {
    return this.call((e, m) => e.user.show(m), "userShow");
  }
  userSet(request) {
    return this.call((e, m) => e.user.set(m, request), "userSet");
  }
  dreamRun(request) {
    return this.call((e, m) => e.dream.run(m, request), "dreamRun");
  }
  dreamRollback(context) {
    return this.call((e, m) => e.dream.rollback(m, context), "dreamRollback");
  }
  report(request) {
    return this.call((e, m) => e.report.gather(m, request), "report");
  }

  /** Drops the instance (the next call opens the workspace again), keeping the lock. */
  async restart() {
    await this.#enqueue(() => this.#drop());
  }

  /** Drops the instance and releases the workspace; later calls are refused. */
  async close() {
    this.#closed = true;
    await this.#enqueue(() => {
      this.#drop();
      this.#release?.();
      this.#release = null;
    });
  }

  #drop() {
    const instance = this.#instance;
    this.#instance = null;
    try {
      instance?.memory?.[Symbol.dispose]?.();
    } catch {
      // A dead instance has nothing left to close.
    }
  }
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
