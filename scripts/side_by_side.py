#!/usr/bin/env python3
"""OpenClaw's in-process memory search and memory-core on the same corpora and
queries, in one run: search median/p90, indexing rate, and the ratios.

The queries are read from OpenClaw's own benchmark script (the peer's
bench-inproc.mjs), so both sides answer exactly the same list. Called by
scripts/side-by-side.sh; Python 3 standard library only."""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def peer_queries(peer: Path) -> list[str]:
    source = (peer / "bench-inproc.mjs").read_text()
    match = re.search(r"const queries = \[(.*?)\];", source, re.S)
    if not match:
        sys.exit(f"no query list in {peer / 'bench-inproc.mjs'}")
    return json.loads("[" + match.group(1) + "]")


def openclaw(peer: Path, corpus: str, iterations: int) -> dict:
    """Its in-process search (no CLI start-up), and its indexing from the CLI:
    `memory index --force` less the start-up that `memory status` also pays
    (its in-process forced re-index needs a dreaming store the peer's
    benchmark script does not configure)."""
    out = subprocess.run(
        [str(peer / "inproc.sh"), corpus, str(iterations)],
        check=True, capture_output=True, text=True, timeout=3600,
    ).stdout
    figures = json.loads(out[out.index("{"):])

    def cli_seconds(*command: str) -> float:
        started = time.monotonic()
        subprocess.run([str(peer / "oc.sh"), corpus, *command], check=True,
                       capture_output=True, text=True, timeout=3600)
        return time.monotonic() - started

    startup = min(cli_seconds("memory", "status") for _ in range(2))
    index = cli_seconds("memory", "index", "--force")
    figures["reindex_ms"] = max(index - startup, 0.001) * 1000
    return figures


def memory_core(harness: str, corpus: Path, queries: list[str], repeat: int, *extra: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("\n".join(queries) + "\n")
        f.flush()
        out = subprocess.run(
            [harness, "bench-corpus", str(corpus), "--queries", f.name, "--repeat", str(repeat), *extra],
            check=True, capture_output=True, text=True, timeout=4 * 3600,
        ).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpora", nargs="*", default=["n100", "n1000"])
    ap.add_argument("--peer", default="/tmp/peer")
    ap.add_argument("--harness", required=True)
    ap.add_argument("--iterations", type=int, default=20, help="passes over the query list")
    ap.add_argument("--hybrid", action="store_true",
                    help="also memory-core hybrid (all-MiniLM-L6-v2, sandboxed): each query once, "
                         "so that every search pays its query's embedding (repeats would hit the "
                         "query-vector cache); the corpus is embedded first (minutes)")
    ap.add_argument("--out")
    args = ap.parse_args()
    peer = Path(args.peer)
    queries = peer_queries(peer)
    rows = []
    for corpus in args.corpora:
        ws = peer / "ws" / corpus
        files = sum(1 for _ in ws.rglob("*.md"))
        oc = openclaw(peer, corpus, args.iterations)
        ours = memory_core(args.harness, ws, queries, args.iterations)
        wasm, native = ours["wasm"], ours["native"]
        oc_rate = files / (oc["reindex_ms"] / 1000) if oc.get("reindex_ms") else None
        rows.append({
            "corpus": corpus,
            "files": files,
            "queries": len(queries),
            "searches": oc["n"],
            "openclaw": {"search_p50_ms": oc["p50"], "search_p90_ms": oc["p90"],
                         "reindex_ms": oc["reindex_ms"], "index_files_per_s": oc_rate},
            "memory_core_wasm": {k: wasm[k] for k in ("search_median_ms", "search_p95_ms", "index_cold_ms",
                                                      "index_files_per_s", "cold_start_median_ms")},
            "memory_core_native": {k: native[k] for k in ("search_median_ms", "search_p95_ms",
                                                          "index_cold_ms", "index_files_per_s")},
            "speedup_search_wasm": round(oc["p50"] / wasm["search_median_ms"], 2),
            "speedup_search_native": round(oc["p50"] / native["search_median_ms"], 2),
            "speedup_index_wasm": round(wasm["index_files_per_s"] / oc_rate, 2) if oc_rate else None,
        })
        if args.hybrid:
            hybrid = memory_core(args.harness, ws, queries, 1, "--embedder", "minilm", "--no-native")
            rows[-1]["memory_core_hybrid_wasm"] = {k: hybrid.get(k) for k in (
                "search_median_ms", "search_p95_ms", "search_after_write_median_ms", "index_cold_ms",
                "index_embedded", "index_embedded_per_s", "peak_guest_memory_mib")}
            rows[-1]["hybrid_search_vs_openclaw_fts"] = round(hybrid["search_median_ms"] / oc["p50"], 3)
    print(f"{'corpus':8} {'files':>6} | {'OpenClaw p50':>12} {'ours wasm':>10} {'ours native':>11} "
          f"{'x wasm':>7} {'x native':>8} | {'OC idx/s':>9} {'ours idx/s':>10} {'x':>6}")
    for r in rows:
        oc, w, n = r["openclaw"], r["memory_core_wasm"], r["memory_core_native"]
        rate = f"{oc['index_files_per_s']:.1f}" if oc["index_files_per_s"] else "-"
        print(f"{r['corpus']:8} {r['files']:>6} | {oc['search_p50_ms']:>9.2f} ms {w['search_median_ms']:>7.3f} ms "
              f"{n['search_median_ms']:>8.3f} ms {r['speedup_search_wasm']:>6.1f}x {r['speedup_search_native']:>7.1f}x | "
              f"{rate:>9} {w['index_files_per_s']:>10.0f} {r['speedup_index_wasm'] or 0:>5.0f}x")
    for r in rows:
        if "memory_core_hybrid_wasm" in r:
            h = r["memory_core_hybrid_wasm"]
            print(f"{r['corpus']:8} hybrid (MiniLM, sandboxed): search p50 {h['search_median_ms']:.2f} ms "
                  f"= {r['hybrid_search_vs_openclaw_fts']:.2f} of OpenClaw's FTS-only p50; "
                  f"after a write {h['search_after_write_median_ms']:.2f} ms; "
                  f"embedded {h['index_embedded']} at {h['index_embedded_per_s']:.0f}/s")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
        print(f"(written to {args.out})")


if __name__ == "__main__":
    main()
