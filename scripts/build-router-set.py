#!/usr/bin/env python3
"""Builds crates/quarry-rank/tests/fixtures/router_queries.jsonl: the router's labelled set.

Every query is written from a real repository or issue, and its class is the way it was made,
not what the router says: identifiers are names defined in the repositories' Python files,
paths their files and folders, literals their string literals, error messages and keyword
arguments, regexes and structural patterns are built around their names, questions are
SWE-bench issue titles and issue texts are whole SWE-bench issues (../shared/eval/
swebench_dev.jsonl). Each row names its source.

Usage: scripts/build-router-set.py MIRRORS_DIR SWEBENCH_DEV.jsonl > FIXTURE
(MIRRORS_DIR/owner+name/repo: bare git directories, e.g. from the search tool's fetch.)
"""
import json, os, random, re, subprocess, sys

REPOS = ["pallets+flask", "psf+requests", "pytest-dev+pytest", "sympy+sympy", "mwaskom+seaborn"]
PER_CLASS = 25


def git(repo_dir, *args):
    return subprocess.run(["git", "--git-dir", repo_dir, *args], capture_output=True, text=True,
                          errors="replace").stdout


def main():
    mirrors, swebench = sys.argv[1], sys.argv[2]
    rnd = random.Random(7)
    rows = []
    sources = {}
    for name in REPOS:
        repo_dir = os.path.join(mirrors, name, "repo")
        if not os.path.isdir(repo_dir):
            repo_dir = os.path.join(mirrors, name)
        files = [f for f in git(repo_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()]
        py = [f for f in files if f.endswith(".py")]
        rnd.shuffle(py)
        texts = {f: git(repo_dir, "show", f"HEAD:{f}") for f in py[:40]}
        sources[name.replace("+", "/")] = (files, texts)

    def add(query, cls, source):
        if query and all(r["query"] != query for r in rows):
            rows.append({"query": query, "class": cls, "source": source})

    per_repo = PER_CLASS // len(REPOS) + 1
    for repo, (files, texts) in sources.items():
        defs = sorted({(m.group(2), f) for f, t in texts.items()
                       for m in re.finditer(r"^\s*(def|class) ([A-Za-z_]\w{3,})", t, re.M)})
        rnd.shuffle(defs)
        # Identifiers: bare names, and module-qualified ones.
        for n, f in defs[:per_repo]:
            add(n, "identifier", f"{repo} {f} (a definition's name)")
        for n, f in defs[per_repo:per_repo + 2]:
            module = f[:-3].replace("/", ".").removeprefix("src.")
            add(f"{module}.{n}", "identifier", f"{repo} {f} (module-qualified name)")
        # Paths: files, bare file names, folders.
        some = rnd.sample([f for f in files if "/" in f], 4)
        for f in some[:2]:
            add(f, "path", f"{repo} tree")
        add(os.path.basename(some[2]), "path", f"{repo} tree (file name)")
        add(os.path.dirname(some[3]) + "/", "path", f"{repo} tree (folder)")
        # Literals: quoted string literals, error messages, keyword arguments, calls.
        lits = sorted({m.group(1) for t in texts.values()
                       for m in re.finditer(r"\"([A-Za-z][^\"\\\n{}%]{12,60})\"", t)})
        rnd.shuffle(lits)
        for s in lits[:2]:
            add(f'"{s}"', "literal", f"{repo} (a string literal)")
        errs = sorted({(m.group(1), m.group(2)) for t in texts.values()
                       for m in re.finditer(r"raise (\w+(?:Error|Exception))\(\s*[f]?[\"']([^\"'\\\n{}%]{10,70})[\"']", t)})
        rnd.shuffle(errs)
        for e, msg in errs[:2]:
            add(f"{e}: {msg}", "literal", f"{repo} (an error it raises)")
        kwargs = sorted({m.group(0) for t in texts.values()
                         for m in re.finditer(r"\b[a-z_]{4,}=(?:True|False|None|\d+)\b", t)})
        rnd.shuffle(kwargs)
        for k in kwargs[:1]:
            add(k, "literal", f"{repo} (a keyword argument)")
        calls = sorted({m.group(0) for t in texts.values()
                        for m in re.finditer(r"\b[a-z_]{3,}\.[a-z_]{3,}\([a-z_]{1,12}\)", t)})
        rnd.shuffle(calls)
        for c in calls[:1]:
            add(c, "literal", f"{repo} (a call as written)")
        # Regexes around its names.
        names = [n for n, _ in defs]
        if len(names) >= 6:
            a, b, c, d, e, g = names[:6]
            add(rf"def {a[:4]}\w+\(", "regex", f"{repo} (names starting like {a})")
            add(f"{b}|{c}", "regex", f"{repo} (either of two names)")
            add(rf"\b{d}\(.*\)", "regex", f"{repo} (calls of {d})")
            add(rf"^class \w+\({e}\)", "regex", f"{repo} (subclasses of {e})")
            add(rf"self\.{g[:5]}[a-z_]*", "regex", f"{repo} (attributes like {g})")
            # Structural patterns around the same names.
            add(f"{a}($$$ARGS)", "structural", f"{repo} (calls of {a})")
            add(f"$X.{b}($$$)", "structural", f"{repo} (method calls of {b})")
            add(f"def {c}($$$ARGS): $$$BODY", "structural", f"{repo} (definition of {c})")
            add(f"isinstance($A, {d})", "structural", f"{repo} (type checks against {d})")
            add(f"raise $E($MSG)", "structural", f"{repo} (raise with one argument)") if repo.endswith("flask") else None
            add(f"class $C({e}): $$$", "structural", f"{repo} (subclasses of {e})")
    # Questions: issue titles; issue texts: whole issues.
    issues = [json.loads(l) for l in open(swebench)]
    rnd.shuffle(issues)
    for q in issues[:PER_CLASS + 10]:
        title = q["query"].strip().split("\n")[0].strip()
        add(title, "question", f"swebench_dev {q['id']} (issue title)")
    for q in issues[PER_CLASS + 10:2 * PER_CLASS + 10]:
        add(q["query"].strip()[:3000], "issue_text", f"swebench_dev {q['id']} (issue text, first 3,000 characters)")
    for r in rows:
        print(json.dumps(r))
    counts = {}
    for r in rows:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    print(f"{len(rows)} queries: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
