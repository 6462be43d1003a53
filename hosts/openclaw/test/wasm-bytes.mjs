// Hand-encoded core WebAssembly modules for the tests: sections from bytes,
// and a module whose functions never return, trap, or grow memory until
// refused.

import { uleb } from "../lib/wasm-memory-cap.js";

const name = (text) => [...uleb(text.length), ...Buffer.from(text)];
export const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];

/** A module of `()->()` functions `bodies` (each `[name, code]`, locals none) and `memory` (section 5's contents), exported as "memory". */
export function wasmModule(bodies, memory) {
  const functions = bodies.map((_, i) => 0);
  const exports = [
    ...bodies.map(([exportName], i) => [...name(exportName), 0x00, ...uleb(i)]),
    ...(memory ? [[...name("memory"), 0x02, 0x00]] : []),
  ];
  const code = bodies.map(([, body]) => [...uleb(body.length + 1), 0x00, ...body]);
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x00, 0x00]),
    ...section(3, [...uleb(functions.length), ...functions]),
    ...(memory ? section(5, memory) : []),
    ...section(7, [...uleb(exports.length), ...exports.flat()]),
    ...section(10, [...uleb(code.length), ...code.flat()]),
  ]);
}

/** `loop br 0 end`: a call that never returns. */
export const SPIN = [0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b];
/** `unreachable`. */
export const TRAP = [0x00, 0x0b];
/** Grows memory by 16 pages until refused, then `unreachable` (as Rust aborts when an allocation fails). */
export const GROW = [0x03, 0x40, 0x41, 0x10, 0x40, 0x00, 0x41, 0x7f, 0x47, 0x0d, 0x00, 0x0b, 0x00, 0x0b];

/** The spinning guest's core module: `spin`, `trap`, `grow`, and one page of memory without a maximum. */
export const spinModule = () => wasmModule([["spin", SPIN], ["trap", TRAP], ["grow", GROW]], [0x01, 0x00, 0x01]);
