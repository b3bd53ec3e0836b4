#!/usr/bin/env python3
"""Plain BM25 over commit messages and patches, the whole issue text as the query: the anchor
baseline for a commit query file (commits_dev.jsonl and any held-out set of that shape), so
`quarry eval` on commits can be read beside it.

Usage: commit_bm25_baseline.py QUERIES.jsonl MIRRORS_DIR [OUT.json]

MIRRORS_DIR holds one bare repository per `repo` of the queries, as `owner+name/repo` (what the
search tool's `fetch` lays out) or `owner+name` itself. Every commit reachable from the
repository's HEAD is a document: its whole message, then its patch as `git log -p` prints it
(a merge: its change against its first parent, as quarry stores it). Tokens, k1 and b are those
of ../shared/eval/bm25_baseline.py (identifier words, lower-cased; k1 1.2, b 0.75), so the two
baselines read text the same way. Nothing is cut: no word cap on the query, no patch limit.

Only the words that some query of a repository uses are counted per commit (every token still
counts towards a commit's length), so a 60k-commit history fits in memory; `git log -p` is read
as a stream.
"""
import collections
import json
import math
import os
import re
import subprocess
import sys

TOK = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
K1, B = 1.2, 0.75
# Starts each commit in the log stream; a line no patch or message can hold.
MARK = "\x1equarry-commit "


def toks(text):
    return [w.lower() for w in TOK.findall(text)]


def git_dir(mirrors, repo):
    base = os.path.join(mirrors, repo.replace("/", "+"))
    inner = os.path.join(base, "repo")
    return inner if os.path.isdir(inner) else base


def documents(git, vocabulary):
    """(sha, {term: count} over the query vocabulary, length in tokens) per commit."""
    cmd = ["git", "-C", git, "log", "HEAD", "-p", "--diff-merges=first-parent",
           "--no-color", "--no-ext-diff", f"--format={MARK}%H%n%B"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    sha, counts, length = None, collections.Counter(), 0
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        if line.startswith(MARK):
            if sha:
                yield sha, counts, length
            sha, counts, length = line[len(MARK):].strip(), collections.Counter(), 0
            continue
        words = toks(line)
        length += len(words)
        counts.update(w for w in words if w in vocabulary)
    if sha:
        yield sha, counts, length
    if proc.wait() != 0:
        sys.exit(f"git log failed in {git}")


def rank_repo(git, queries):
    qterms = {q["id"]: set(toks(q["query"])) for q in queries}
    vocabulary = set().union(*qterms.values())
    shas, tfs, lengths = [], [], []
    df = collections.Counter()
    for sha, counts, length in documents(git, vocabulary):
        shas.append(sha)
        tfs.append(counts)
        lengths.append(length)
        df.update(counts.keys())
    n = len(shas)
    avg = sum(lengths) / max(n, 1)
    ranks = {}
    for q in queries:
        idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in qterms[q["id"]] if df[t]}
        scores = []
        for sha, c, length in zip(shas, tfs, lengths):
            s = 0.0
            for t, w in idf.items():
                f = c.get(t)
                if f:
                    s += w * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg))
            if s > 0:
                scores.append((s, sha))
        scores.sort(reverse=True)
        relevant = set(q["relevant"])
        ranks[q["id"]] = next((i + 1 for i, (_, s) in enumerate(scores) if s in relevant), None)
    print(f"{git}: {n} commits, {len(queries)} queries", file=sys.stderr)
    return ranks


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    queries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by_repo = collections.defaultdict(list)
    for q in queries:
        by_repo[q["repo"]].append(q)
    results = []
    for repo, qs in by_repo.items():
        ranks = rank_repo(git_dir(sys.argv[2], repo), qs)
        results += [{"id": q["id"], "repo": repo, "rank": ranks[q["id"]]} for q in qs]
    n = len(results)
    hit = lambda k: sum(1 for r in results if r["rank"] and r["rank"] <= k) / n
    metrics = {"queries": n, "hit@1": hit(1), "hit@5": hit(5), "hit@10": hit(10),
               "mrr": sum(1 / r["rank"] for r in results if r["rank"]) / n}
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in metrics.items()}))
    for repo in by_repo:
        rs = [r for r in results if r["repo"] == repo]
        print(f"  {repo}: hit@10 {sum(1 for r in rs if r['rank'] and r['rank'] <= 10) / len(rs):.3f}"
              f" MRR {sum(1 / r['rank'] for r in rs if r['rank']) / len(rs):.3f} ({len(rs)} queries)",
              file=sys.stderr)
    if len(sys.argv) > 3:
        json.dump(results, open(sys.argv[3], "w"))


if __name__ == "__main__":
    main()
