// One instance of the component in a worker thread of its own
// (lib/guest-worker.js), under the limits memory-harness sets with wasmtime:
// every call has a deadline, and the instance a memory cap.
//
// - Deadline: a call still running at its deadline has its thread
//   terminated (which stops even a guest that never returns); the call fails
//   as a trap, and the next one starts a fresh thread. Time the guest spends
//   waiting on this host (a core module, the embedder, the model) does not
//   count: those have deadlines of their own, and a sweep's model turn would
//   otherwise have to be added on top, as the harness does.
// - Memory cap: the core modules' linear memory gets a maximum
//   (wasm-memory-cap.js), the thread's JavaScript heap `resourceLimits`. A
//   call that fails with the guest's memory at its cap is reported as the
//   cap, and the instance is dropped.
//
// The embedder and the model stay in this thread; the worker asks for them.

import { receiveMessageOnPort, MessageChannel, Worker } from "node:worker_threads";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { capMemoryPages, pagesOfMib } from "./wasm-memory-cap.js";

/** The harness's defaults (host-harness/src/config.rs: DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_MIB). */
export const DEFAULT_CALL_TIMEOUT_MS = 30000;
export const DEFAULT_MEMORY_MIB = 1024;

const WORKER_URL = new URL("./guest-worker.js", import.meta.url);
export const COMPONENT_URL = new URL("../component/memory_core.js", import.meta.url);
const FRESH = "the next call starts a fresh instance";
/** How long `statusNow` blocks for the worker's answer before it gives the last one. */
const STATUS_NOW_WAIT_MS = 2000;

/** Why a call stopped: the guest's fault, not the caller's. Carries `stop`: `trap`, `deadline` or `memory-cap`. */
export class GuestStopped extends Error {
  constructor(stop, message) {
    super(message);
    this.name = "GuestStopped";
    this.stop = stop;
  }
}

export function deadlineMessage(ms) {
  return `the call ran past its deadline of ${ms} ms and was stopped; ${FRESH}`;
}

export function memoryCapMessage(mib, why) {
  return `the component needed more than its memory cap of ${mib} MiB and was stopped${why ? ` (${why})` : ""}; ${FRESH}`;
}

/**
 * Whether a failure came from the memory cap: the guest's memory was within
 * a sixteenth of the cap (at least a MiB) when the call failed, and the
 * failure was a trap (Rust aborts when an allocation fails) or the
 * component reporting that it ran out of memory (SQLite does, gracefully).
 */
export function hitMemoryCap({ trap, payload, memoryBytes }, capMib) {
  const capBytes = capMib * 1024 * 1024;
  const slack = Math.max(1024 * 1024, capBytes / 16);
  if (!(memoryBytes >= capBytes - slack)) return false;
  return trap !== undefined || /out of memory/i.test(String(payload?.val ?? ""));
}

/** A deadline that does not run while the guest waits on the host. */
export class PausableDeadline {
  #remaining;
  #onExpiry;
  #timer = null;
  #startedAt = 0;
  #pauses = 0;

  constructor(ms, onExpiry) {
    this.#remaining = ms;
    this.#onExpiry = onExpiry;
    this.#run();
  }

  #run() {
    this.#startedAt = performance.now();
    this.#timer = setTimeout(this.#onExpiry, Math.max(0, this.#remaining));
  }

  pause() {
    if (this.#pauses++ > 0 || this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#remaining -= performance.now() - this.#startedAt;
  }

  resume() {
    if (--this.#pauses > 0 || this.#timer !== null || this.#remaining === null) return;
    this.#run();
  }

  clear() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#remaining = null;
  }
}

const coreModules = new Map(); // `${url} ${name} ${pages}` -> Promise<WebAssembly.Module>
/** A core module of the component, its memory capped, compiled once per process and cap. */
function capped(guestUrl, name, pages) {
  const key = `${guestUrl} ${name} ${pages}`;
  if (!coreModules.has(key)) {
    const file = path.join(path.dirname(fileURLToPath(guestUrl)), name);
    const compiling = readFile(file).then((bytes) => WebAssembly.compile(capMemoryPages(bytes, pages)));
    compiling.catch(() => coreModules.delete(key)); // a failure is retried by the next instance
    coreModules.set(key, compiling);
  }
  return coreModules.get(key);
}

/**
 * The instance's thread. `hostCalls` answers what the guest asks of this
 * host: `{ embed(texts), complete(request) }` (each a promise, rejecting with
 * the import's `{tag, val}`). Failures reject as `GuestStopped` (the thread
 * is gone), `{ payload }` (the component's error), or an Error of this host.
 */
export class GuestThread {
  #worker;
  #limits;
  #hostCalls;
  #guestUrl;
  #ready;
  #pending = new Map(); // message id -> { resolve, reject, deadline }
  #nextId = 0;
  #statusPort;
  #statusSignal = new Int32Array(new SharedArrayBuffer(4));
  #stopped = null; // why the thread is gone, once it is

  constructor({ workspaceDir, embedderInfo, hostCalls, limits, guestUrl = COMPONENT_URL }) {
    this.#limits = limits;
    this.#hostCalls = hostCalls;
    this.#guestUrl = guestUrl;
    const { port1, port2 } = new MessageChannel();
    this.#statusPort = port1;
    this.#worker = new Worker(WORKER_URL, {
      workerData: {
        workspaceDir,
        embedderInfo: embedderInfo ?? null,
        guestUrl: guestUrl.href,
        statusPort: port2,
        statusFlag: this.#statusSignal.buffer,
      },
      transferList: [port2],
      // The JavaScript side of the instance (jco's glue, values crossing)
      // gets the same cap as its linear memory.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(64, limits.memoryMib) },
      stdout: false,
      stderr: false,
    });
    this.#worker.unref(); // only a call in flight keeps the process alive
    this.#ready = new Promise((resolve, reject) => {
      this.#pending.set(0, { resolve, reject, deadline: null });
    });
    this.#ready.catch(() => {});
    this.#worker.on("message", (message) => this.#onMessage(message));
    this.#worker.on("error", (error) => this.#stop(this.#stopOfError(error)));
    this.#worker.on("exit", (code) =>
      this.#stop(new GuestStopped("trap", `the component's thread exited (code ${code}); ${FRESH}`)),
    );
  }

  /** Whether the thread is alive (a stopped one is never used again). */
  get alive() {
    return this.#stopped === null;
  }

  /** Instantiates the component and opens the workspace's memory (`store.memory.open`, or `open-read-only`). */
  async open(settings, readOnly) {
    await this.#ready;
    return this.#send({ type: "open", settings, readOnly: Boolean(readOnly) });
  }

  /** Calls `iface`.`fn` (see guest-worker.js) with `params` (`{memory: true}` or `{value}` each). */
  call(iface, fn, params) {
    return this.#send({ type: "call", iface, fn, params });
  }

  /**
   * The open memory's status, synchronously: the worker is asked and this
   * thread blocks (at most `STATUS_NOW_WAIT_MS`) for its answer. Only while
   * no call is in flight; `undefined` when there is no answer.
   */
  statusNow() {
    if (!this.alive || this.#pending.size > 0) return undefined;
    const id = (this.#nextId += 1);
    const until = Date.now() + STATUS_NOW_WAIT_MS;
    Atomics.store(this.#statusSignal, 0, 0);
    this.#worker.postMessage({ type: "status-now", id });
    // A late answer to an earlier ask may raise the signal first: drain it
    // and wait again, until this ask's answer or the time is up.
    for (;;) {
      for (let m = receiveMessageOnPort(this.#statusPort); m; m = receiveMessageOnPort(this.#statusPort)) {
        if (m.message.id !== id) continue;
        return m.message.error ? undefined : m.message.status;
      }
      const left = until - Date.now();
      if (left <= 0) return undefined;
      Atomics.store(this.#statusSignal, 0, 0);
      // An answer posted between the drain and the reset is caught by the next drain.
      Atomics.wait(this.#statusSignal, 0, 0, Math.min(left, 50));
    }
  }

  /** Closes the open memory (under the call deadline), then ends the thread. */
  async close() {
    if (this.alive && this.#pending.size === 0) await this.#send({ type: "close" }).catch(() => {});
    this.terminate();
  }

  /** Stops the thread (any call in flight fails as stopped). */
  terminate() {
    this.#stop(new GuestStopped("trap", `the instance was closed; ${FRESH}`));
  }

  #send(message) {
    if (!this.alive) return Promise.reject(this.#stopped);
    const id = (this.#nextId += 1);
    return new Promise((resolve, reject) => {
      const deadline = new PausableDeadline(this.#limits.callTimeoutMs, () =>
        this.#stop(new GuestStopped("deadline", deadlineMessage(this.#limits.callTimeoutMs))),
      );
      this.#pending.set(id, { resolve, reject, deadline });
      this.#worker.ref();
      this.#worker.postMessage({ ...message, id });
    });
  }

  #settle(id, settle) {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    pending.deadline?.clear();
    if (this.#pending.size === 0) this.#worker.unref();
    settle(pending);
  }

  #onMessage(message) {
    switch (message.type) {
      case "ready":
        return this.#settle(0, (p) => p.resolve());
      case "reply":
        if (!("error" in message)) return this.#settle(message.id, (p) => p.resolve(message.value));
        return this.#settle(message.id, (p) => p.reject(this.#failureOf(message.error)));
      case "request":
        return this.#answer(message);
      default:
        return undefined;
    }
  }

  /** A failure the worker reported; a trap or the cap ends the thread. */
  #failureOf(error) {
    if (error.failure) return Object.assign(new Error(error.failure.message), { name: error.failure.name });
    if (hitMemoryCap(error, this.#limits.memoryMib)) {
      const why = error.trap ?? `${error.payload.tag}: ${error.payload.val}`;
      const stopped = new GuestStopped("memory-cap", memoryCapMessage(this.#limits.memoryMib, why));
      this.#stop(stopped); // an allocator at its cap is of no further use
      return stopped;
    }
    if (error.trap !== undefined) {
      const stopped = new GuestStopped("trap", `${error.trap}; ${FRESH}`);
      this.#stop(stopped);
      return stopped;
    }
    return { payload: error.payload };
  }

  /** Answers the guest's request; the deadlines in flight wait meanwhile. */
  async #answer({ id, what, args }) {
    const paused = [...this.#pending.values()].map((p) => p.deadline).filter(Boolean);
    for (const d of paused) d.pause();
    let reply;
    try {
      const value =
        what === "module"
          ? await capped(this.#guestUrl, args[0], pagesOfMib(this.#limits.memoryMib))
          : await this.#hostCalls[what](...args);
      reply = { type: "answer", id, value };
    } catch (error) {
      reply = { type: "answer", id, error };
    } finally {
      for (const d of paused) d.resume();
    }
    if (!this.alive) return;
    try {
      this.#worker.postMessage(reply);
    } catch (error) {
      this.#worker.postMessage({ type: "answer", id, error: { tag: "failed", val: String(error?.message ?? error) } });
    }
  }

  #stopOfError(error) {
    if (error?.code === "ERR_WORKER_OUT_OF_MEMORY") {
      return new GuestStopped("memory-cap", memoryCapMessage(this.#limits.memoryMib, "its JavaScript heap is full"));
    }
    return new GuestStopped("trap", `the component's thread failed: ${error?.message ?? error}; ${FRESH}`);
  }

  #stop(why) {
    if (this.#stopped) return;
    this.#stopped = why;
    for (const id of [...this.#pending.keys()]) this.#settle(id, (p) => p.reject(why));
    this.#worker.terminate().catch(() => {});
    this.#statusPort.close();
  }
}
