#!/usr/bin/env python3
"""How much past changes could add to file localisation, whatever the fusion: the ceiling of
history as evidence (issue [25]) on a swebench-style query file.

Usage: history_ceiling.py EVAL.json QUERIES.jsonl WORKSPACE MIRRORS_DIR

EVAL.json is `quarry eval QUERIES --repos MIRRORS_DIR --work-dir W --mode lexical --json` (each
query's `ranked_files`, today's file ranking with its scores); WORKSPACE is W/workspace after a
`quarry eval ... --history` run, so its store holds each repository's commits (subjects,
bodies, patches, changed files) up to the newest query's commit.

Per query, only the commits reachable from the query's own `commit` (`git rev-list`) are read:
never its fix. The commits most like the issue (BM25 over subject and body, the patch's changed
lines at 0.25; k1 1.2, b 0.9, as quarry's commit search) vote for the files they changed
(each vote the commit's score over the best one's, optionally over its number of files and
halved every HALF_LIFE days before the query's commit). It prints:

- history alone: files ranked by their votes only;
- of the queries today's ranking misses at rank 1: how many have the right file first by
  history alone, and how many have it out-voting every file today ranks above it (only those
  can any fusion that adds votes to today's scores bring to rank 1: the ceiling);
- today's ranking re-ordered by score + w x votes (the best file's votes 1) over its first 20
  files, for a few w, with the queries it moves up and down.

Pure Python, no packages; ~1 min to read a 60k-commit history, seconds per variant after.
"""
import collections
import json
import math
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from commit_bm25_baseline import git_dir  # where a mirror's git directory is

STOP = set(
    """a an and are as at be but by for from has have i if in into is it its of on or that the
    their then there these this to was were will with not no can do does when which while we you
    your they he she them our us also just so than too very should would could may might what how
    why where who all any some one two get got use used using like""".split()
)
K1, B, PATCH_WEIGHT = 1.2, 0.9, 0.25


def stem(w):
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def words(text):
    """Identifier-aware words: snake and camel parts, and the whole identifier."""
    out = []
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = [p for p in re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", w) if p]
        for p in parts + ([w] if len(parts) > 1 else []):
            p = p.lower()
            if len(p) >= 2 and p not in STOP:
                out.append(stem(p))
    return out


def changed_words(patch):
    lines = [
        l[1:]
        for l in patch.split("\n")
        if l[:1] in "+-" and not l.startswith(("+++", "---"))
    ]
    return words("\n".join(lines)[:20000])


def read_history(db, repo):
    """Every stored commit of `repo`: term counts, length, time, changed files."""
    rid = db.execute("SELECT id FROM repos WHERE name = ?", (repo,)).fetchone()
    if rid is None:
        sys.exit(f"{repo} is not in the workspace: run `quarry eval ... --history` first")
    commits, by_id, df, total = {}, {}, collections.Counter(), 0.0
    for cid, sha, t, subject, body, patch in db.execute(
        "SELECT id, sha, commit_time, subject, body, patch FROM commits WHERE repo_id = ?", rid
    ):
        message = words(subject) * 3 + words(body)
        patch_terms = changed_words(patch)
        c = dict(
            t=t,
            tf=collections.Counter(message),
            ptf=collections.Counter(patch_terms),
            len=len(message) + PATCH_WEIGHT * len(patch_terms),
            files=[],
        )
        total += c["len"]
        df.update(set(message) | set(patch_terms))
        commits[sha] = c
        by_id[cid] = c
    for cid, path in db.execute(
        "SELECT cf.commit_id, cf.path FROM commit_files cf JOIN commits c ON c.id = cf.commit_id"
        " WHERE c.repo_id = ? AND cf.merged_in = 0",
        rid,
    ):
        by_id[cid]["files"].append(path)
    return dict(commits=commits, df=df, n=len(commits), avg=total / max(1, len(commits)))


def ranked_commits(history, query, reachable):
    terms = list(dict.fromkeys(words(query)))[:64]
    n, avg, df = history["n"], history["avg"], history["df"]
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df.get(t)}
    scored = []
    for sha in reachable:
        c = history["commits"].get(sha)
        if c is None:
            continue
        norm = K1 * (1 - B + B * c["len"] / avg)
        s = 0.0
        for t, w in idf.items():
            f = c["tf"].get(t, 0) + PATCH_WEIGHT * c["ptf"].get(t, 0)
            if f:
                s += w * f * (K1 + 1) / (f + norm)
        if s > 0:
            scored.append((s, sha))
    scored.sort(reverse=True)
    return scored[:1000]


def votes(history, scored, now, voters, per_file, half_life):
    out = collections.defaultdict(float)
    top = scored[:voters]
    if not top:
        return out
    best = top[0][0]
    for s, sha in top:
        c = history["commits"][sha]
        if not c["files"] or len(c["files"]) > 50:
            continue
        v = s / best
        if half_life:
            v *= 0.5 ** (max(0, now - c["t"]) / 86400 / half_life)
        if per_file:
            v /= len(c["files"])
        for path in c["files"]:
            out[path] += v
    return out


def first_rank(order, relevant):
    return next((i + 1 for i, p in enumerate(order) if p in relevant), None)


def summary(ranks):
    n = len(ranks)
    hit = lambda k: sum(1 for r in ranks if r and r <= k) / n
    mrr = sum(1 / r for r in ranks if r) / n
    return f"h@1 {hit(1):.3f}  h@5 {hit(5):.3f}  h@10 {hit(10):.3f}  MRR {mrr:.3f}"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    eval_json, queries_file, workspace, mirrors = sys.argv[1:]
    report = json.load(open(eval_json))
    report = report["reports"][0] if "reports" in report else report
    queries = {q["id"]: q for q in map(json.loads, open(queries_file))}
    db = sqlite3.connect(f"file:{os.path.join(workspace, 'index.sqlite')}?mode=ro", uri=True)
    histories, rows = {}, []
    for outcome in report["per_query"]:
        q = queries[outcome["id"]]
        repo = q["repo"].replace("/", "+")
        if repo not in histories:
            print(f"reading {repo}'s history ...", file=sys.stderr)
            histories[repo] = read_history(db, repo)
        history = histories[repo]
        reachable = subprocess.run(
            ["git", "--git-dir", git_dir(mirrors, q["repo"]), "rev-list", q["commit"]],
            capture_output=True, text=True, check=True,
        ).stdout.split()
        now = max((history["commits"][s]["t"] for s in reachable if s in history["commits"]), default=0)
        files = outcome.get("ranked_files") or sys.exit(f"{eval_json} has no ranked_files")
        rows.append(dict(q=q, repo=repo, files=files, now=now,
                         scored=ranked_commits(history, q["query"], reachable)))

    today = [first_rank([f["path"] for f in r["files"]], r["q"]["relevant"]) for r in rows]
    print(f"{'today':44s} {summary(today)}")
    for voters in (10, 30, 100, 300):
        for per_file in (True, False):
            for half_life in (None, 365):
                name = f"voters {voters} per-file {int(per_file)} half-life {half_life}"
                vs = [votes(histories[r["repo"]], r["scored"], r["now"], voters, per_file, half_life)
                      for r in rows]
                alone = [first_rank(sorted(v, key=lambda p: -v[p]), r["q"]["relevant"])
                         for r, v in zip(rows, vs)]
                rescued = sum(1 for a, t in zip(alone, today) if a == 1 and t != 1)
                misses = sum(1 for t in today if t != 1)
                # Any fusion that adds votes to today's scores can put a missed file first only
                # where it has more votes than every file today ranks above it.
                within = sum(
                    1 for r, v, t in zip(rows, vs, today) if t and 1 < t <= 20
                    and all(v.get(r["files"][t - 1]["path"], 0) > v.get(f["path"], 0)
                            for f in r["files"][: t - 1]))
                print(f"{'history alone, ' + name:44s} {summary(alone)}  of today's {misses} "
                      f"misses at 1: first by votes {rescued}, out-voting all above {within}")
                for w in (0.1, 0.25, 0.5):
                    fused = []
                    for r, v in zip(rows, vs):
                        files = r["files"][:20]
                        top_vote = max((v.get(f["path"], 0) for f in files), default=0) or 1
                        best = files[0]["score"] or 1
                        order = sorted(files, key=lambda f: -(f["score"] / best + w * v.get(f["path"], 0) / top_vote))
                        fused.append(first_rank([f["path"] for f in order], r["q"]["relevant"]))
                    up = sum(1 for a, t in zip(fused, today) if (a or 99) < (t or 99))
                    down = sum(1 for a, t in zip(fused, today) if (a or 99) > (t or 99))
                    print(f"{'  today + ' + str(w) + ' x votes':44s} {summary(fused)}  up {up} down {down}")


if __name__ == "__main__":
    main()
