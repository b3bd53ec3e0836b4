#!/usr/bin/env python3
"""fix_commit_set.py — a swebench-style localisation set from a repository's own fixes.

Why: the shared sets (../shared/eval) localise Python issues only. To see whether a change to
how quarry reads another language (JavaScript's CommonJS definitions, say) moves localisation
there, this builds a set mechanically from any repository's history, with no hand-picked labels.

How: every first-parent commit on HEAD whose subject says it fixes something (`fix`, `fixes`,
`fixed`, `bug`, or a `#123` issue reference) and that changes 1 to 3 source files of the chosen
extensions outside tests, docs, examples and benchmarks, each file existing before the commit.
The query is the commit's message (subject and body; trailers such as `Signed-off-by:` and
`Co-authored-by:` dropped), the tree is the commit's first parent (the code before the fix, so
the fix itself cannot leak), and the relevant files are the changed ones. Messages shorter than
five words are skipped (nothing to search with). With --max N, N rows are taken as an even
spread over the candidates ordered by sha1(sha), so the pick is deterministic.

Output: JSONL rows {"id", "query", "repo", "commit", "relevant"} on stdout, the format of
../shared/eval/swebench_dev.jsonl, for `quarry eval` (bench/localize.sh) and
../shared/eval/bm25_code_baseline.py. The rows quote third-party commit messages: keep them out
of this repository.

Usage:
  fix_commit_set.py GIT_DIR --repo owner/name [--ext .js,.mjs,.cjs] [--max N]
"""
import argparse
import hashlib
import json
import re
import subprocess
import sys

SKIP = re.compile(r"(^|/)(tests?|__tests__|spec|specs|docs?|examples?|benchmarks?|bench|"
                  r"fixtures?|node_modules|vendor|dist|build)(/|$)|\.(test|spec)\.")
FIX = re.compile(r"\b(fix|fixes|fixed|fixing|bug)\b|#\d+", re.I)
TRAILER = re.compile(r"^[A-Z][A-Za-z-]+: .+$")


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True,
                          text=True, errors="replace").stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("git_dir")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--ext", default=".js,.mjs,.cjs")
    ap.add_argument("--max", type=int, default=None)
    args = ap.parse_args()
    exts = tuple(args.ext.split(","))
    log = git(args.git_dir, "log", "--first-parent", "--no-merges", "-z",
              "--format=%H%x00%P%x00%B", "HEAD")
    fields = log.split("\0")
    rows = []
    for i in range(0, len(fields) - 2, 3):
        sha, parents, message = fields[i].strip(), fields[i + 1].split(), fields[i + 2]
        if not sha or not parents:
            continue
        lines = [l for l in message.strip().splitlines() if not TRAILER.match(l.strip())]
        text = "\n".join(lines).strip()
        if not lines or not FIX.search(lines[0]) or len(text.split()) < 5:
            continue
        changed = git(args.git_dir, "diff", "--name-status", "--no-renames", parents[0], sha)
        files = []
        ok = True
        for line in changed.splitlines():
            status, _, path = line.partition("\t")
            if not path.endswith(exts) or SKIP.search(path):
                continue
            if status != "M":  # added or deleted files: nothing to find before the fix
                ok = False
            files.append(path)
        if not ok or not 1 <= len(files) <= 3:
            continue
        rows.append({"id": f"{args.repo.replace('/', '__')}-{sha[:12]}", "query": text,
                     "repo": args.repo, "commit": parents[0], "relevant": sorted(files)})
    rows.sort(key=lambda r: hashlib.sha1(r["id"].encode()).hexdigest())
    if args.max and len(rows) > args.max:
        step = len(rows) / args.max
        rows = [rows[int(i * step)] for i in range(args.max)]
    for row in sorted(rows, key=lambda r: r["id"]):
        print(json.dumps(row))
    print(f"fix_commit_set: {args.repo}: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
