// The component's framing of a hidden context block, for the one block this
// host writes itself: a due intent delivered from the pending queue
// (`intents.due` returns intents, not blocks). A port of
// plugin/src/text/framing.rs (`escape`, `context_block`) and
// plugin/src/ops/intents.rs (`intent_block`); test/plugin.test.mjs checks
// that it gives the component's own block for the same intent.

/** Look-alike brackets and invisible characters (framing.rs `is_confusable`). */
function isConfusable(code) {
  return (
    [0x02c2, 0x02c3, 0x2039, 0x203a, 0x2329, 0x232a, 0x27e8, 0x27e9, 0x3008, 0x3009, 0xfe64, 0xfe65, 0xff1c, 0xff1e, 0xfeff].includes(code) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2064) ||
    (code >= 0x2066 && code <= 0x2069) ||
    (code >= 0xe0000 && code <= 0xe007f)
  );
}

/** Escapes text for the inside of a block or an attribute value (framing.rs `escape`). */
export function escape(text) {
  let out = "";
  for (const c of String(text)) {
    const code = c.codePointAt(0);
    if (c === "&") out += "&amp;";
    else if (c === "<") out += "&lt;";
    else if (c === ">") out += "&gt;";
    else if (c === '"') out += "&quot;";
    else if (isConfusable(code)) out += `&#x${code.toString(16).toUpperCase()};`;
    else out += c;
  }
  return out;
}

/** A hidden context block (framing.rs `context_block`). */
export function contextBlock(kind, citation, sourceClass, text) {
  return `<memory-context kind="${escape(kind)}" source="${escape(citation)}" class="${sourceClass}">\n${escape(text)}\n</memory-context>`;
}

/** The hidden block of one fired intent (standing.rs `intent_block`): the owner's words. */
export function intentBlock({ id, text }) {
  return contextBlock("intent", `intent:${id}`, "owner", text);
}
