// A memory cap for a core WebAssembly module: the maximum of every memory
// the module defines, written into its memory section before it is
// compiled. Node has no ResourceLimiter, and a Worker's `resourceLimits`
// cover the JavaScript heap, not linear memory; with a maximum, a
// `memory.grow` past it fails inside the guest (which then aborts: a trap).
// Imported memories are the exporting module's to cap.

export const WASM_PAGE_BYTES = 65536;
const MEMORY_SECTION = 5;
const HAS_MAXIMUM = 0x01;
const MEMORY64 = 0x04;

/** An unsigned LEB128 at `offset`: `{ value, next }` (a BigInt-free read; memory limits fit in 2^53). */
export function readUleb(bytes, offset) {
  let value = 0;
  let scale = 1;
  for (let at = offset; at < bytes.length; at += 1) {
    const byte = bytes[at];
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) return { value, next: at + 1 };
  }
  throw new Error(`a truncated LEB128 at byte ${offset}`);
}

/** `value` as an unsigned LEB128. */
export function uleb(value) {
  const out = [];
  let rest = value;
  do {
    let byte = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    out.push(byte);
  } while (rest > 0);
  return out;
}

/**
 * `bytes` (a core module) with every defined memory's maximum at most
 * `maxPages` (64 KiB pages). Throws when a memory's initial size is already
 * past the cap: such a module could not even be instantiated under it.
 */
export function capMemoryPages(bytes, maxPages) {
  const input = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (input[0] !== 0x00 || input[1] !== 0x61 || input[2] !== 0x73 || input[3] !== 0x6d) {
    throw new Error("not a WebAssembly module");
  }
  let offset = 8;
  while (offset < input.length) {
    const id = input[offset];
    const size = readUleb(input, offset + 1);
    const end = size.next + size.value;
    if (id === MEMORY_SECTION) {
      const section = cappedMemorySection(input.subarray(size.next, end), maxPages);
      return concat(input.subarray(0, offset), [id, ...uleb(section.length)], section, input.subarray(end));
    }
    offset = end;
  }
  return input; // no memory of its own
}

/** A memory section's contents with each memory's maximum capped. */
function cappedMemorySection(section, maxPages) {
  const count = readUleb(section, 0);
  const out = [...uleb(count.value)];
  let at = count.next;
  for (let n = 0; n < count.value; n += 1) {
    const flags = section[at];
    if (flags & MEMORY64) throw new Error("a 64-bit memory is not capped here");
    const initial = readUleb(section, at + 1);
    at = initial.next;
    let maximum = maxPages;
    if (flags & HAS_MAXIMUM) {
      const declared = readUleb(section, at);
      at = declared.next;
      maximum = Math.min(declared.value, maxPages);
    }
    if (initial.value > maximum) {
      throw new Error(
        `the memory cap of ${maxPages} pages is below the module's initial memory of ${initial.value} pages`,
      );
    }
    out.push(flags | HAS_MAXIMUM, ...uleb(initial.value), ...uleb(maximum));
  }
  if (at !== section.length) throw new Error("a memory section with trailing bytes");
  return out;
}

function concat(...parts) {
  const length = parts.reduce((sum, p) => sum + p.length, 0);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The cap in MiB as whole pages (at least one). */
export function pagesOfMib(mib) {
  return Math.max(1, Math.floor((mib * 1024 * 1024) / WASM_PAGE_BYTES));
}
