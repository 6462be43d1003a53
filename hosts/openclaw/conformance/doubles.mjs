// The test doubles a scenario lends the component: the embedders of
// host-harness/src/embed/ (`none`, `test`, `failing`, `nan`, `wrong-dims`)
// and the scripted model of host-harness/src/model.rs. The vectors are
// bit-identical to the Rust ones, so rankings and scores are too.

import { createHash } from "node:crypto";
import fs from "node:fs";

export const DIMENSIONS = 256;

const info = (model) => ({ provider: "test", model, dimensions: DIMENSIONS, maxBatch: 64 });

const byteLength = (text) => Buffer.byteLength(text, "utf8");

/**
 * The deterministic bag-of-words vector (`HashEmbedder::vector`): for every
 * run of alphanumeric characters (Rust's `char::is_alphanumeric`: Alphabetic
 * or Numeric) longer than 2 bytes, lowercased, one trailing `s` removed if
 * more than 2 bytes remain, ±1 in the dimension its sha-256 picks.
 */
export function testVector(text) {
  const vector = new Float32Array(DIMENSIONS);
  for (const piece of text.split(/[^\p{Alphabetic}\p{N}]/u)) {
    if (byteLength(piece) <= 2) continue;
    const lower = piece.toLowerCase();
    const stem = lower.endsWith("s") && byteLength(lower.slice(0, -1)) > 2 ? lower.slice(0, -1) : lower;
    const digest = createHash("sha256").update(stem, "utf8").digest();
    const slot = (digest[0] | (digest[1] << 8)) % DIMENSIONS;
    vector[slot] += digest[2] % 2 === 0 ? 1 : -1;
  }
  return vector;
}

/** Vectors holding NaN (`nan`) or of the wrong length (`wrong-dims`): the component must refuse both. */
function faultyVector(text, nan) {
  const vector = testVector(text);
  if (nan) {
    vector[0] = Number.NaN;
    return vector;
  }
  return vector.slice(0, DIMENSIONS / 2);
}

/**
 * The embedder lender for a scenario's `embedder` (`EmbedderChoice::parse`),
 * in MemoryComponent's shape, or undefined for `none` (describe gives none,
 * embed `unavailable`).
 */
export function embedderFor(name) {
  switch (name) {
    case "none":
      return undefined;
    case "test":
      return { info: info("test"), embed: (texts) => texts.map(testVector) };
    case "failing":
      return {
        info: info("failing"),
        embed() {
          throw { tag: "failed", val: "the `failing` test embedder always fails" };
        },
      };
    case "nan":
    case "wrong-dims": {
      const nan = name === "nan";
      return { info: info(name), embed: (texts) => texts.map((t) => faultyVector(t, nan)) };
    }
    default:
      throw new Error(`unknown embedder ${JSON.stringify(name)}; use none, test, failing, nan or wrong-dims`);
  }
}

/** Waits `ms`, or rejects as soon as `signal` aborts (the host gave up on the call). */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** One tool call of a reply: `id` defaults to `call-<n>`, `arguments` that are not a string become their JSON text. */
function toolCall(call, index, jsonText) {
  const field = (name) => (call !== null && typeof call === "object" && !Array.isArray(call) ? call[name] : undefined);
  const args = field("arguments");
  return {
    id: typeof field("id") === "string" ? field("id") : `call-${index}`,
    name: typeof field("name") === "string" ? field("name") : "",
    arguments: typeof args === "string" ? args : jsonText(args ?? null),
  };
}

/**
 * The scripted model (`Scripted` in model.rs): the replies, already
 * validated by the schema, handed out in order, one per call, whatever the request. The
 * host (MemoryComponent) counts the calls and cuts each at its deadline; a
 * cut aborts `signal`, which ends the reply's delay.
 *
 * `jsonText` writes a value as serde_json would (tool-call arguments).
 */
export function scriptedModel(replies, jsonText) {
  const queue = [...replies];
  return {
    async complete(_request, signal) {
      const reply = queue.shift();
      if (reply === undefined) throw { tag: "failed", val: "the model script has no more replies" };
      if (reply.delay_ms !== undefined) await sleep(Number(reply.delay_ms), signal);
      if (reply.append_to !== undefined) appendAsAnEditor(reply.append_to, reply.append_text ?? "");
      const message = reply.message ?? "scripted failure";
      switch (reply.error) {
        case undefined:
          return { text: reply.text ?? "", toolCalls: (reply.tool_calls ?? []).map((c, i) => toolCall(c, i, jsonText)) };
        case "timeout":
          throw { tag: "timeout", val: message };
        case "unavailable":
          throw { tag: "unavailable", val: message };
        default:
          throw { tag: "failed", val: message };
      }
    },
  };
}

/** A concurrent editor saving the file while the model thinks. */
function appendAsAnEditor(file, text) {
  try {
    fs.appendFileSync(file, text);
  } catch (error) {
    throw { tag: "failed", val: `the script could not append to ${file}: ${error.message}` };
  }
}
