// The review page's plots as inline SVG, ported from the harness
// (host-harness/src/report/svg.rs): stacked columns over time and
// horizontal bars. Pure functions from numbers to markup; every label is
// escaped, colours come from the page's CSS classes, and each bar carries a
// `<title>` so hovering shows its figures without any script.

import { esc, utcMinute } from "./report-text.js";

const DAY_MS = 86_400_000;
/** Up to this many days, one column per day; then per month; then per year. */
const MAX_DAY_COLUMNS = 62;
const MAX_MONTH_COLUMNS = 120;

/** The column key of a day (days since the epoch) at a granularity: the day, the month count or the year. */
function keyOf(granularity, day) {
  const date = utcMinute(day * DAY_MS);
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7));
  if (granularity === "day") return day;
  return granularity === "month" ? year * 12 + month - 1 : year;
}

function labelOf(granularity, key) {
  if (granularity === "day") return utcMinute(key * DAY_MS).slice(0, 10);
  if (granularity === "month") {
    return `${String(Math.floor(key / 12)).padStart(4, "0")}-${String((key % 12) + 1).padStart(2, "0")}`;
  }
  return String(key).padStart(4, "0");
}

/** Days since the epoch of a `YYYY-MM-DD`, or null. */
function dayNumber(day) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) ? null : ms / DAY_MS;
}

/**
 * Columns over time from per-day values (`[["YYYY-MM-DD", [v, …]], …]`, any
 * order): one per day, month or year, whichever keeps the axis readable,
 * with the empty ones in between so the axis is even.
 */
export function timeColumns(days, series) {
  const dated = days
    .map(([day, values]) => [dayNumber(day), values])
    .filter(([d]) => d !== null)
    .sort((a, b) => a[0] - b[0]);
  if (!dated.length) return [];
  const first = dated[0][0];
  const last = dated.at(-1)[0];
  const granularity =
    last - first < MAX_DAY_COLUMNS ? "day" : keyOf("month", last) - keyOf("month", first) < MAX_MONTH_COLUMNS ? "month" : "year";
  const lo = keyOf(granularity, first);
  const hi = keyOf(granularity, last);
  const columns = [];
  for (let k = lo; k <= hi; k += 1) columns.push({ label: labelOf(granularity, k), values: new Array(series).fill(0) });
  for (const [d, values] of dated) {
    const column = columns[keyOf(granularity, d) - lo];
    values.slice(0, series).forEach((v, i) => {
      column.values[i] += v;
    });
  }
  return columns;
}

/** A round axis maximum at or above `max`: 1, 2 or 5 times a power of ten. */
export function niceMax(max) {
  for (let step = 1; step <= 1e10; step *= 10) {
    for (const m of [1, 2, 5]) if (step * m >= max) return step * m;
  }
  return max;
}

const sum = (values) => values.reduce((a, b) => a + b, 0);

/** Stacked columns with a value axis, a label axis and a legend. */
export function stackedColumns(title, series, columns) {
  const W = 960;
  const H = 260;
  const LEFT = 48;
  const RIGHT = 12;
  const TOP = 28;
  const BOTTOM = 56;
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const top = niceMax(Math.max(1, ...columns.map((c) => sum(c.values))));
  let svg = `<svg class="plot" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg">`;
  // Legend along the top.
  let x = LEFT;
  for (const s of series) {
    svg += `<rect x="${x}" y="8" width="12" height="12" class="${esc(s.class)}"/><text x="${x + 16}" y="18" class="legend">${esc(s.name)}</text>`;
    x += 24 + 8 * [...s.name].length;
  }
  // Value axis: 0, half, top.
  for (const tick of [0, Math.floor(top / 2), top]) {
    const y = TOP + plotH - (plotH * tick) / top;
    svg += `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" class="grid"/><text x="${LEFT - 6}" y="${(y + 4).toFixed(1)}" class="tick" text-anchor="end">${tick}</text>`;
  }
  const slot = plotW / Math.max(1, columns.length);
  const bar = Math.max(1, slot * 0.8);
  const labelEvery = Math.max(1, Math.floor(columns.length / 16));
  columns.forEach((column, i) => {
    const cx = LEFT + slot * i + (slot - bar) / 2;
    let y = TOP + plotH;
    const total = sum(column.values);
    column.values.forEach((value, j) => {
      const s = series[j];
      if (!s || value === 0) return;
      const h = (plotH * value) / top;
      y -= h;
      svg += `<rect x="${cx.toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" class="${esc(s.class)}"><title>${esc(column.label)} · ${esc(s.name)}: ${value} of ${total}</title></rect>`;
    });
    if (i % labelEvery === 0) {
      const lx = (cx + bar / 2).toFixed(1);
      const ly = (TOP + plotH + 14).toFixed(1);
      svg += `<text x="${lx}" y="${ly}" class="tick" text-anchor="end" transform="rotate(-35 ${lx} ${ly})">${esc(column.label)}</text>`;
    }
  });
  return `${svg}</svg>`;
}

/** Horizontal bars (`{ label, value, class }`), longest first as given, labels on the left. */
export function horizontalBars(title, bars) {
  const W = 960;
  const ROW = 22;
  const LABEL_W = 360;
  const LABEL_CHARS = 52;
  const h = ROW * Math.max(1, bars.length) + 8;
  const top = niceMax(Math.max(1, ...bars.map((b) => b.value)));
  const plotW = W - LABEL_W - 60;
  let svg = `<svg class="plot" viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" role="img" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg">`;
  bars.forEach((b, i) => {
    const y = 4 + ROW * i;
    const w = Math.max(1, (plotW * b.value) / top);
    const chars = [...b.label];
    const label = chars.length > LABEL_CHARS ? `${chars.slice(0, LABEL_CHARS - 1).join("")}…` : b.label;
    svg += `<text x="${(LABEL_W - 8).toFixed(1)}" y="${(y + 15).toFixed(1)}" class="tick" text-anchor="end">${esc(label)}</text><rect x="${LABEL_W}" y="${(y + 3).toFixed(1)}" width="${w.toFixed(1)}" height="${(ROW - 6).toFixed(1)}" class="${esc(b.class)}"><title>${esc(b.label)}: ${b.value}</title></rect><text x="${(LABEL_W + w + 6).toFixed(1)}" y="${(y + 15).toFixed(1)}" class="tick">${b.value}</text>`;
  });
  return `${svg}</svg>`;
}
