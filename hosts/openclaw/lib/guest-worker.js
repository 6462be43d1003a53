// The worker thread one instance of the component runs in (lib/guest.js is
// the main thread's side). The thread exists so that the main thread can
// stop a call that runs past its deadline: `worker.terminate()` interrupts
// even a guest spinning in a loop, and the next call gets a fresh thread.
//
// The worker instantiates the transpiled component with the workspace as its
// only directory; its core modules (compiled, memory-capped) and the
// embedder's and model's answers come from the main thread, which keeps the
// lenders and their deadlines. An export suspended on one of those answers
// waits under JSPI, as it does in the main thread.
//
// Messages in: `open`, `call`, `close`, `answer` (to a `request` of ours), and
// `status-now` (answered on the status port, then the shared flag is raised
// so that the main thread, blocked in `Atomics.wait`, can take it at once).

import { parentPort, workerData } from "node:worker_threads";
import { wasiImports } from "./component.js";

const { workspaceDir, embedderInfo, guestUrl, statusPort, statusFlag } = workerData;
const statusSignal = new Int32Array(statusFlag);

let nextRequest = 0;
const waiting = new Map(); // request id -> { resolve, reject }

/** Asks the main thread for something (a core module, an embedding, a completion) and waits for its answer. */
function request(what, args) {
  const id = (nextRequest += 1);
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    parentPort.postMessage({ type: "request", id, what, args });
  });
}

function imports() {
  return {
    ...wasiImports(workspaceDir),
    "openclaw:memory/types": {},
    "openclaw:memory/embedder": {
      describe: () => embedderInfo ?? undefined,
      embed: (texts) => request("embed", [texts]),
    },
    "openclaw:memory/model": {
      complete: (req) => request("complete", [req]),
    },
  };
}

let exports = null;
let memory = null; // the open `store.memory`
const linearMemories = []; // the guest's memories, to tell how full they were when a call failed

/** Core instantiation that remembers the memories the instance exports. */
async function instantiateCore(module, coreImports) {
  const instance = await WebAssembly.instantiate(module, coreImports);
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) linearMemories.push(value);
  }
  return instance;
}

function memoryBytes() {
  return Math.max(0, ...linearMemories.map((m) => m.buffer.byteLength));
}

async function open({ settings, readOnly }) {
  const { instantiate } = await import(guestUrl);
  exports = await instantiate((name) => request("module", [name]), imports(), instantiateCore);
  const Memory = exports.store.Memory;
  memory = readOnly ? Memory.openReadOnly(settings) : Memory.open(settings);
  return null;
}

const camel = (name) => name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (name) => camel(name).replace(/^./, (c) => c.toUpperCase());

/**
 * Calls the export `fn` of interface `iface` by its WIT name (`search`,
 * `trigger-inject`, `[method]memory.sync`, `[static]memory.open`; jco's
 * camelCase names too): a method on its first parameter. `params` are
 * `{ memory: true }` (the open memory, borrowed) or `{ value }`.
 */
async function call({ iface, fn, params }) {
  if (!exports) throw new Error("the component is not instantiated");
  const args = params.map((p) => (p.memory ? memory : p.value));
  const [, kind, resource, name] = fn.match(/^(?:\[(method|static)\]([^.]+)\.)?(.+)$/);
  const exported = exports[camel(iface)];
  if (!exported) throw new Error(`the component exports no interface \`${iface}\``);
  if (kind === "method") {
    const [self, ...rest] = args;
    return self[camel(name)](...rest);
  }
  const owner = kind === "static" ? exported[pascal(resource)] : exported;
  if (typeof owner?.[camel(name)] !== "function") throw new Error(`the component exports no \`${iface}.${fn}\``);
  return owner[camel(name)](...args);
}

/**
 * Whether a failure left the instance unusable, as a trap does under
 * wasmtime: a wasm trap, a stack overflow (V8 reports it as a RangeError),
 * or any other error thrown from within the guest's code or jco's glue
 * around it (its stack runs through wasm functions).
 */
function isTrap(error) {
  return error instanceof WebAssembly.RuntimeError || error instanceof RangeError || /wasm-function\[/.test(String(error?.stack ?? ""));
}

/** A failure as it crosses to the main thread: the component's error, a trap, or a failure of this host. */
function describeFailure(error) {
  const payload = error?.payload;
  if (payload && typeof payload.tag === "string") return { payload, memoryBytes: memoryBytes() };
  if (isTrap(error)) return { trap: error.message, memoryBytes: memoryBytes() };
  return { failure: { name: error?.name ?? "Error", message: String(error?.message ?? error), stack: error?.stack } };
}

async function answer(id, task) {
  try {
    const value = await task();
    parentPort.postMessage({ type: "reply", id, value });
  } catch (error) {
    parentPort.postMessage({ type: "reply", id, error: describeFailure(error) });
  }
}

/** `status` reaches no async import, so it is answered at once (the main thread only asks while no call is in flight). */
function statusNow(id) {
  let reply;
  try {
    reply = { id, status: memory ? memory.status() : null };
  } catch (error) {
    reply = { id, error: describeFailure(error) };
  }
  statusPort.postMessage(reply);
  Atomics.store(statusSignal, 0, id);
  Atomics.notify(statusSignal, 0);
}

parentPort.on("message", (message) => {
  switch (message.type) {
    case "open":
      return answer(message.id, () => open(message));
    case "call":
      return answer(message.id, () => call(message));
    case "close":
      return answer(message.id, () => {
        memory?.[Symbol.dispose]?.();
        memory = null;
        return null;
      });
    case "status-now":
      return statusNow(message.id);
    case "answer": {
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if ("error" in message) pending?.reject(message.error);
      else pending?.resolve(message.value);
      return undefined;
    }
    default:
      throw new Error(`unknown message ${message.type}`);
  }
});
parentPort.postMessage({ type: "ready" });
