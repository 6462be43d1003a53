// The `search_framing` check (the poisoning suite): every hit's `framed` is
// one intact `<memory-recall>` block, also after removing invisible
// characters and mapping look-alike brackets and hyphens, as
// `check_framing` in host-harness/src/conformance/fixture.rs.

/** Invisible characters dropped before the framing check. */
const isInvisible = (cp) => (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0xfeff;
const LOOKALIKE_OPEN = new Set([0xff1c, 0x2039, 0x2329, 0x27e8, 0x3008, 0xfe64, 0x02c2]);
const LOOKALIKE_CLOSE = new Set([0xff1e, 0x203a, 0x232a, 0x27e9, 0x3009, 0xfe65, 0x02c3]);
const isLookalikeHyphen = (cp) => (cp >= 0x2010 && cp <= 0x2015) || cp === 0x2212 || cp === 0xfe63 || cp === 0xff0d;

function plainCharacter(c) {
  const cp = c.codePointAt(0);
  if (LOOKALIKE_OPEN.has(cp)) return "<";
  if (LOOKALIKE_CLOSE.has(cp)) return ">";
  if (isLookalikeHyphen(cp)) return "-";
  return c;
}

/** One `<memory-recall>` block: it starts and ends the text, and no other opening or closing tag is in it, however disguised. */
export function checkFraming(framed, citation) {
  const plain = [...framed]
    .filter((c) => !isInvisible(c.codePointAt(0)))
    .map(plainCharacter)
    .join("")
    .toLowerCase();
  const opens = plain.split("<memory-").length - 1;
  const closes = plain.split("</memory-").length - 1;
  if (!(plain.startsWith("<memory-recall ") && plain.endsWith("</memory-recall>")) || opens !== 1 || closes !== 1) {
    throw new Error(`the framing of ${citation} is not one intact block (${opens} openings, ${closes} closings):\n${framed}`);
  }
}

/** Whether the block's first line says `trust="trusted"`. */
export function framedAsTrusted(framed) {
  return framed.split("\n")[0].replace(/\r$/, "").includes('trust="trusted"');
}
