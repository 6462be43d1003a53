// A stand-in for the transpiled component (jco's `instantiate`), run by the
// same worker machinery (lib/guest-worker.js): its `recall.search` never
// returns, traps, grows memory until refused, fails, or waits on the model,
// as the query says (and its `open` never returns, when the test says so; a
// replayed ingest for session `never` never returns); `store.memory.status` names the thread, so a test can
// tell a fresh instance. Its core module is `spin.core.wasm`, written beside
// it by the test (test/wasm-bytes.mjs) and fetched, memory-capped, through
// `getCoreModule` like the component's.

import { threadId } from "node:worker_threads";

export async function instantiate(getCoreModule, imports, instantiateCore) {
  const { exports: core } = await instantiateCore(await getCoreModule("spin.core.wasm"), {});
  const model = imports["openclaw:memory/model"];
  let calls = 0;
  class Memory {
    // `SPIN_GUEST_OPEN=1` in the environment (worker threads share it): opening never returns.
    static open() {
      if (process.env.SPIN_GUEST_OPEN === "1") core.spin();
      return new Memory();
    }
    static openReadOnly() {
      return new Memory();
    }
    status() {
      return { threadId, calls };
    }
  }
  return {
    store: { Memory },
    recall: {
      async search(memory, request) {
        calls += 1;
        switch (request.query) {
          case "never returns":
            core.spin();
            break;
          case "traps":
            core.trap();
            break;
          case "grows":
            core.grow();
            break;
          case "fails":
            throw Object.assign(new Error("not found"), { payload: { tag: "not-found", val: "no such thing" } });
          case "asks the model":
            return { hits: [], threadId, reply: (await model.complete({ timeoutMs: 5000 })).text };
          default:
        }
        return { hits: [], threadId };
      },
    },
    // A spooled ingest replayed on open: one for session `never` never returns.
    write: {
      async ingest(memory, request) {
        if (request.sessionId === "never") core.spin();
        return { messagesRead: 0, messagesWritten: 0 };
      },
    },
  };
}
