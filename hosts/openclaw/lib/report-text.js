// Text on the review page, as the harness writes it
// (host-harness/src/report/html.rs): escaped for HTML, with characters that
// could hide or reorder what a reviewer reads made visible.

/**
 * Escapes text for HTML content and attribute values. Not the component's
 * framing escape, which writes blocks for a model to read: here a browser
 * decodes the text.
 */
export function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/** Control (but newline and tab), bidirectional, zero-width, format and tag characters. */
const HIDDEN =
  /(?![\n\t])\p{Cc}|[\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]|[\u{E0000}-\u{E007F}]/gu;

/** Hidden characters as visible `⟨U+XXXX⟩`. */
export function visible(text) {
  return String(text).replace(HIDDEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** Text from the workspace, escaped and with hidden characters shown. */
export function text(s) {
  return esc(visible(s));
}

/** An instant (ms, a number or the component's BigInt) as `YYYY-MM-DDTHH:MMZ`, as the harness's cron clock prints it. */
export function utcMinute(ms) {
  const minute = Math.floor(Number(ms) / 60000) * 60000;
  return `${new Date(minute).toISOString().slice(0, 16)}Z`;
}
