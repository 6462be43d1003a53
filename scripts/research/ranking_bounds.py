#!/usr/bin/env python3
"""What bounds issue 23's two missed targets, measured (docs/BENCHMARKS.md,
"What bounds the two missed targets").

  learned   LoCoMo (dev split), hybrid time-neutral R@4k of a ranker *learned
            from LoCoMo's own answers* over every signal the product has:
            BM25 and idf-weighted query-word coverage of a line and of the
            two lines on each side, the all-MiniLM-L6-v2 and all-mpnet-base-v2
            cosines of the same five lines (the line's own two also
            standardised over the conversation), whether the line's speaker is
            named, its length, and memory-core's own score and reciprocal rank
            (time-neutral, 100 hits): 26 signals. Every line of a conversation
            is a candidate, so finding is no limit. A logistic regression and
            LambdaMART (LightGBM, two sizes), each trained on four
            conversations and scored on the fifth; also with folds over
            questions (a conversation's other questions in training: an
            easier, leakier setting) and fitted in-sample (memorising the
            answers: what tuning to the benchmark would give); beside them
            the oracle that puts the evidence among memory-core's own top 50
            or 100 first. Each row has
            a 95 % paired bootstrap interval of its difference from
            memory-core's own order; the signals' gains in the LambdaMART
            fitted on everything close the run.
  dates     Hand-written supersession (bench-supersession seeds 1-5) and
            LoCoMo's default lists, when hits that are near duplicates
            (MiniLM cosine >= t) and near equals in relevance (>= r of the
            group's first hit) are put in date order, newest first, in the
            slots they hold: how often the latest value comes first, how
            often an unchanged fact is still the first hit, and LoCoMo's
            default R@4k.

A research tool, not part of the product or its tests; LoCoMo is read from
../shared at run time and never copied. It needs numpy, torch, transformers,
scikit-learn and lightgbm, e.g.:

  python3 -m venv /tmp/bounds && /tmp/bounds/bin/pip install numpy scikit-learn lightgbm transformers \
      && /tmp/bounds/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
  /tmp/bounds/bin/python scripts/research/ranking_bounds.py learned
  /tmp/bounds/bin/python scripts/research/ranking_bounds.py dates

The two local models are read from --models (default: where
scripts/fetch-model.sh puts them). Measured with numpy 2.4.6, torch 2.15.0
(CPU), transformers 5.25.0, scikit-learn 1.9.1, LightGBM 4.7.0; the run
prints the versions it used. Workspaces are kept under --work between runs
(delete it after rebuilding the harness).
"""
import argparse, collections, json, math, os, pickle, shutil, subprocess, sys
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memory-core", "models")


class Embedder:
    """Mean-pooled, normalised sentence vectors, as the product's encoder makes them."""

    def __init__(self, models, name, max_len):
        import torch
        from transformers import AutoModel, PreTrainedTokenizerFast
        self.torch = torch
        d = os.path.join(models, name)
        self.tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(d, "tokenizer.json"))
        self.mpnet = "mpnet" in name
        self.tok.pad_token = "<pad>" if self.mpnet else "[PAD]"
        self.model = AutoModel.from_pretrained(d).eval()
        self.max_len, self.cache = max_len, {}

    def __call__(self, texts):
        need = sorted(set(t for t in texts if t not in self.cache))
        for i in range(0, len(need), 64):
            batch = self.tok(need[i:i + 64], padding=True, truncation=True, max_length=self.max_len,
                             return_tensors="pt")
            if self.mpnet:
                batch.pop("token_type_ids", None)
            with self.torch.no_grad():
                h = self.model(**batch).last_hidden_state
            m = batch["attention_mask"].unsqueeze(-1).float()
            e = self.torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1).numpy()
            self.cache.update(zip(need[i:i + 64], e))
        return np.stack([self.cache[t] for t in texts])


def harness(bin_, ws, now, args, payload=None):
    cmd = [bin_, "--workspace", ws, "--now", now] + args
    return subprocess.run(cmd, input=payload, capture_output=True, text=True, check=True).stdout


def batch_search(bin_, ws, now, queries, extra):
    """{id: hits} for [(id, query)] through `search --batch --json`."""
    payload = "".join(json.dumps({"id": i, "query": q}) + "\n" for i, q in queries)
    out = harness(bin_, ws, now, ["search", "--batch", "--json"] + extra, payload)
    res = {}
    for line in out.splitlines():
        if line.startswith("{"):
            o = json.loads(line)
            res[o["id"]] = o.get("hits") or []
    return res


def locomo(args):
    sys.path.insert(0, args.tool_dir)
    import locomo_eval as L
    work = os.path.join(args.work, "locomo")
    if os.path.exists(os.path.join(work, "convs.pkl")):
        convs = pickle.load(open(os.path.join(work, "convs.pkl"), "rb"))
    else:
        convs, _ = L.prepare(L.load_conversations(args.data), work)
        for c in convs:
            harness(args.bin, c["workspace"], c["info"]["now"], ["index"])
        pickle.dump(convs, open(os.path.join(work, "convs.pkl"), "wb"))
    return L, convs


def r_at_4k(L, info, hits, q):
    locs = [info["dia_loc"][e] for e in q["evidence"]]
    return L.covered(L.budget_hits(hits, info["lines"], 4000), locs) / len(locs)


def stem(t):
    for s in ("ing", "ed", "es", "s"):
        if len(t) > len(s) + 2 and t.endswith(s):
            return t[:-len(s)]
    return t


def features(L, convs, args):
    """Per question: (conversation, question, lines, feature matrix, labels)."""
    bin_ = args.bin
    mini, mpnet = Embedder(args.models, "all-MiniLM-L6-v2", 256), Embedder(args.models, "all-mpnet-base-v2", 384)
    rows, names = [], None
    for ci, c in enumerate(convs):
        info = c["info"]
        ours = batch_search(bin_, c["workspace"], info["now"], [(q["id"], q["query"]) for q in c["queries"]],
                            ["--max-results", "100", "--min-score", "0.01", "--half-life-days", "0"])
        docs = [(p, i, t) for p, lines in info["lines"].items() for i, t in enumerate(lines, 1) if t.startswith("- ")]
        at = {(p, i): k for k, (p, i, _) in enumerate(docs)}
        toks = [[stem(w) for w in L.tokenize(t)] for _, _, t in docs]
        n, avg = len(docs), sum(map(len, toks)) / len(docs)
        df = collections.Counter(w for d in toks for w in set(d))
        tf = [collections.Counter(d) for d in toks]
        texts = [t for _, _, t in docs]
        vm, vp = mini(texts), mpnet(texts)
        speaker = [t[2:].split(":", 1)[0].lower() for t in texts]
        length = np.array([math.log1p(len(t)) for t in texts])

        def beside(a, off):
            out = np.zeros(n)
            for k, (p, i, _) in enumerate(docs):
                j = at.get((p, i + off))
                if j is not None:
                    out[k] = a[j]
            return out

        for q in c["queries"]:
            words = list(dict.fromkeys(stem(w) for w in L.tokenize(q["query"])))
            idf = {w: math.log(1 + (n - df[w] + .5) / (df[w] + .5)) for w in words}
            bm = np.array([sum(idf[w] * f[w] * 2.2 / (f[w] + 1.2 * (.25 + .75 * len(d) / avg)) for w in words if w in f)
                           for f, d in zip(tf, toks)])
            cov = np.array([sum(idf[w] for w in words if w in f) / (sum(idf.values()) or 1) for f in tf])
            cm, cp = vm @ mini([q["query"]])[0], vp @ mpnet([q["query"]])[0]
            rank = {(h["path"], h["start_line"]): (h["score"], 1 / (r + 1)) for r, h in enumerate(ours.get(q["id"], []))}
            qlow = q["query"].lower()
            f = {"bm25": bm / (bm.max() or 1), "coverage": cov, "minilm": cm, "mpnet": cp,
                 "minilm_z": (cm - cm.mean()) / (cm.std() or 1), "mpnet_z": (cp - cp.mean()) / (cp.std() or 1),
                 "speaker_named": np.array([1.0 if s and s in qlow else 0.0 for s in speaker]), "length": length,
                 "ours_score": np.array([rank.get((p, i), (0, 0))[0] for p, i, _ in docs]),
                 "ours_reciprocal_rank": np.array([rank.get((p, i), (0, 0))[1] for p, i, _ in docs])}
            for off in (-2, -1, 1, 2):
                for k in ("bm25", "coverage", "minilm", "mpnet"):
                    f["%s%+d" % (k, off)] = beside(f[k], off)
            names = names or sorted(f)
            evidence = set(tuple(info["dia_loc"][e]) for e in q["evidence"])
            rows.append((ci, q, docs, np.stack([f[k] for k in names], 1),
                         np.array([1 if (p, i) in evidence else 0 for p, i, _ in docs])))
    return names, rows


def learned(args):
    import lightgbm as lgb
    from sklearn.linear_model import LogisticRegression
    import sklearn, torch, transformers
    print("numpy %s, torch %s, transformers %s, scikit-learn %s, LightGBM %s" % (
        np.__version__, torch.__version__, transformers.__version__, sklearn.__version__, lgb.__version__))
    L, convs = locomo(args)
    names, rows = features(L, convs, args)
    print("%d questions, %d features" % (len(rows), len(names)))
    baseline = []

    def report(label, scores):
        tot, per_q = collections.defaultdict(list), []
        for (ci, q, docs, _, _), s in zip(rows, scores):
            order = np.argsort(-s, kind="stable")[:100]
            hits = [{"path": docs[k][0], "start": docs[k][1], "end": docs[k][1]} for k in order]
            r = r_at_4k(L, convs[ci]["info"], hits, q)
            per_q.append(r)
            tot["overall"].append(r)
            tot[L.CATEGORY_NAMES[q["category"]]].append(r)
        ci95 = ""
        if baseline:
            d = np.array(per_q) - np.array(baseline)
            rng = np.random.default_rng(0)
            means = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(2000)]
            ci95 = "  vs own order %+.3f (%+.3f … %+.3f)" % (d.mean(), *np.percentile(means, [2.5, 97.5]))
        else:
            baseline.extend(per_q)
        print("%-50s %s%s" % (label, "  ".join("%s %.3f" % (k, np.mean(v)) for k, v in tot.items()), ci95),
              flush=True)

    def column(name):
        return [x[:, names.index(name)] for _, _, _, x, _ in rows]

    report("memory-core, time-neutral, its own order", column("ours_reciprocal_rank"))
    report("BM25 alone", column("bm25"))
    report("MiniLM cosine alone", column("minilm"))
    report("MPNet cosine alone", column("mpnet"))
    for depth in (50, 100):
        # memory-core's own top `depth`, the evidence lines put first: what a perfect re-ranker of them could give
        report("memory-core's top %d, evidence first (oracle)" % depth,
               [np.where(r >= 1 / depth, 1 + r + 10 * (y > 0), 0)
                for r, y in zip(column("ours_reciprocal_rank"), [row[4] for row in rows])])
    without_ours = [k for k in names if not k.startswith("ours_")]

    def cross(label, fit, cols, fold):
        idx = [names.index(k) for k in cols]
        scores = [None] * len(rows)
        for held in sorted(set(fold(i, r) for i, r in enumerate(rows))):
            train = [r for i, r in enumerate(rows) if fold(i, r) != held or held == -1]
            m = fit(np.concatenate([r[3][:, idx] for r in train]), np.concatenate([r[4] for r in train]),
                    [len(r[4]) for r in train])
            for i, r in enumerate(rows):
                if fold(i, r) == held:
                    x = r[3][:, idx]
                    scores[i] = m.decision_function(x) if hasattr(m, "decision_function") else m.predict(x)
        report(label, scores)

    def lambdamart(x, y, groups, trees=300, leaves=15, rate=0.05):
        return lgb.LGBMRanker(n_estimators=trees, learning_rate=rate, num_leaves=leaves, min_child_samples=50,
                              importance_type="gain", verbose=-1).fit(x, y, group=groups)

    def larger(x, y, groups):
        return lambdamart(x, y, groups, trees=800, leaves=31, rate=0.03)

    def logistic(x, y, _groups):
        return LogisticRegression(max_iter=2000).fit(x, y)

    by_conversation = lambda _i, r: r[0]
    by_question = lambda i, _r: i % 5
    in_sample = lambda _i, _r: -1  # every question in training, scored on itself
    cross("logistic, held-out conversation", logistic, names, by_conversation)
    cross("LambdaMART, held-out conversation", lambdamart, names, by_conversation)
    cross("LambdaMART 800x31, held-out conversation", larger, names, by_conversation)
    cross("LambdaMART without our score, held-out conv.", lambdamart, without_ours, by_conversation)
    cross("LambdaMART, held-out questions (leaky)", lambdamart, names, by_question)
    cross("logistic, in-sample (tuned to the answers)", logistic, names, in_sample)
    cross("LambdaMART, in-sample (memorised)", lambdamart, names, in_sample)
    everything = lambdamart(np.concatenate([r[3] for r in rows]), np.concatenate([r[4] for r in rows]),
                            [len(r[4]) for r in rows])
    gains = sorted(zip(names, everything.feature_importances_), key=lambda x: -x[1])
    total = sum(g for _, g in gains) or 1
    print("signal gains (LambdaMART fitted on all): " + ", ".join("%s %.3f" % (k, g / total) for k, g in gains))


def date_groups(mini, hits, cosine, ratio, window):
    """Near duplicates of near-equal relevance put in date order, newest first, in the slots they hold.
    A hit joins the first earlier hit that leads a group and is close enough (no chains)."""
    n = min(len(hits), window)
    if n < 2:
        return hits
    v = mini([h["snippet"] for h in hits[:n]])
    sim, rel = v @ v.T, [h["parts"]["relevance"] for h in hits[:n]]
    lead = list(range(n))
    for b in range(n):
        for a in range(b):
            if lead[a] == a and sim[a, b] >= cosine and rel[b] >= ratio * rel[a]:
                lead[b] = a
                break
    groups = collections.defaultdict(list)
    for i in range(n):
        groups[lead[i]].append(i)
    out = list(hits)
    for g in groups.values():
        for slot, i in zip(g, sorted(g, key=lambda i: -hits[i]["observed_at_ms"])):
            out[slot] = hits[i]
    return out


def dates(args):
    mini = Embedder(args.models, "all-MiniLM-L6-v2", 256)
    now, seeds = "2026-12-01", [1, 2, 3, 4, 5]
    corpora = []
    for s in seeds:
        ws = os.path.join(args.work, "supersession-%d" % s)
        if not os.path.exists(os.path.join(ws, "labels.json")):
            shutil.rmtree(ws, ignore_errors=True)  # a run cut short leaves a half-written corpus
            subprocess.run([args.bin, "--now", now, "bench-supersession", "--seed", str(s), "--keep", ws],
                           check=True, capture_output=True)
        labels = json.load(open(os.path.join(ws, "labels.json")))
        res = batch_search(args.bin, ws, now, [(str(i), x["query"]) for i, x in enumerate(labels)], ["--max-results", "10"])
        corpora.append((labels, res))
    L, convs = locomo(args)
    lists = {c["sample_id"]: batch_search(args.bin, c["workspace"], c["info"]["now"],
                                          [(q["id"], q["query"]) for q in c["queries"]], ["--max-results", "50"])
             for c in convs}

    def measure(reorder):
        latest, top1 = [], []
        for labels, res in corpora:
            lf = lf_n = t1 = un_n = 0
            for i, x in enumerate(labels):
                hits = reorder(res[str(i)], 10)
                pos = [next((r for r, h in enumerate(hits)
                             if h["path"] == p and h["start_line"] <= ln <= h["end_line"]), None)
                       for p, ln in x["versions"]]
                if len(pos) > 1:
                    lf_n += 1
                    lf += pos[-1] is not None and all(p is None or p > pos[-1] for p in pos[:-1])
                else:
                    un_n += 1
                    t1 += pos[0] == 0
            latest.append(lf / lf_n)
            top1.append(t1 / un_n)
        r4k = np.mean([r_at_4k(L, c["info"], L.clean_hits(reorder(lists[c["sample_id"]][q["id"]], 50), c["workspace"]), q)
                       for c in convs for q in c["queries"]])
        return "latest first %s (mean %.3f)  unchanged fact first %s  LoCoMo default R@4k %.3f" % (
            " ".join("%.3f" % x for x in latest), np.mean(latest), " ".join("%.3f" % x for x in top1), r4k)

    print("%-24s %s" % ("the default ranking", measure(lambda hits, window: hits)), flush=True)
    for cosine, ratio in [(0.4, 0.0), (0.5, 0.0), (0.4, 0.8), (0.5, 0.8), (0.6, 0.8), (0.7, 0.8), (0.6, 0.9)]:
        label = "cosine >= %.1f, rel >= %.1f" % (cosine, ratio)
        print("%-24s %s" % (label, measure(lambda hits, window: date_groups(mini, hits, cosine, ratio, window))), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["learned", "dates"])
    ap.add_argument("--data", default=os.path.join(ROOT, "../shared/data/locomo-dev.json"))
    ap.add_argument("--tool-dir", default=os.path.join(ROOT, "../shared/tools"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/memory-harness"))
    ap.add_argument("--models", default=MODELS, help="the local models' directory (all-MiniLM-L6-v2/, all-mpnet-base-v2/)")
    ap.add_argument("--work", default="/tmp/memory-core-bounds",
                    help="workspaces, kept between runs (delete after rebuilding the harness)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    {"learned": learned, "dates": dates}[args.what](args)


if __name__ == "__main__":
    main()
