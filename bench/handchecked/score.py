#!/usr/bin/env python3
"""quarry's definitions against a hand-checked set, for languages ctags has no parser for.

Usage: python3 bench/handchecked/score.py [--quarry BIN] [--lang LANG]... [--work DIR]
                                          [--window W] [--aux] [--extras] [--json]

defs.json (next to this script) names, per language (Swift, Scala, Dart, Zig), public repositories
at fixed commits, a few files of each, and every definition a reader would list in each file
(name, kind, 1-based line), written down by reading the source; README.md says how and gives
the rule each language follows. This script checks each repository out at its commit (from
the local mirror /work/.mirror/OWNER+NAME/repo when there is one, else from GitHub) under
--work (/tmp/quarry-handchecked), runs `quarry summary FILE --json` and `quarry summary FILE`
with an empty --index-dir (so outlines come from the parser), and counts:

  JSON outline: an expected definition is found when quarry has an item (any depth) of the
  same name starting within --window (2) lines of the expected line. Names compare with
  backticks and spaces dropped; an expected entry may carry `alt` names, and a dotted name
  (`ArgParser.allowAnything`, `JSONEncoding.Error`) also matches its last segment. Each quarry
  item matches one expected entry at most (the nearest, entries taken in line order), so two
  overloads cannot both be found through one item.

  Text outline (what an agent reads): the name stands on an item line (`12-40 func f(...)`,
  `12 class A`) whose start is within the window of the expected line, or appears as
  `name LINE` in a listed run (`13 definitions: a 56 (b 73), c 84`) with LINE within the
  window. A name only counted (`… 5 more`, `{ 10 members }`) is a miss. This is the idea of
  named_in_text in bench/ctags_defs.py, without its ctags-specific allowances. A name with
  spaces in it (a Zig test, `test "route: glob"`) is looked for as written, spaces kept.

  A miss whose quarry item starts further up, on a stack of attribute lines (`@_disfavoredOverload`
  / `@available(...)` / `@available(...)` / `func f`), is marked so: the definition is there,
  the window is too narrow for where quarry starts it.

"aux" entries (Swift computed properties, Zig container-level constants and variables) are
scored apart, as ctags_defs.py scores ctags' properties and variables apart: quarry's outline
puts properties on an item's members line, not as items. Columns aux, a.found (an item of
their own), a.memb (named in the `members` of the JSON item around them); --aux lists them.

Prints per language: files, expected, found, recall (JSON and text), the aux columns, the
misses (file:line kind name | source line), misses grouped by kind, text-only misses, and how
many quarry items match no expected entry (--extras lists them: false or extra items, or
rule differences).
"""
import argparse, json, os, re, signal, subprocess, sys, tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MIRROR = "/work/.mirror"


def checkout(repo, commit, work):
    """A work tree of `repo` at `commit`, cloned once under `work`."""
    dest = os.path.join(work, repo.replace("/", "+"))
    if not os.path.isdir(os.path.join(dest, ".git")):
        mirror = os.path.join(MIRROR, repo.replace("/", "+"), "repo")
        src = mirror if os.path.isdir(mirror) else f"https://github.com/{repo}.git"
        os.makedirs(work, exist_ok=True)
        subprocess.run(["git", "clone", "-q", src, dest], check=True)
    have = subprocess.run(["git", "-C", dest, "cat-file", "-e", commit + "^{commit}"],
                          capture_output=True).returncode == 0
    if not have:
        subprocess.run(["git", "-C", dest, "fetch", "-q", "origin", commit], check=True)
    subprocess.run(["git", "-C", dest, "checkout", "-q", "--detach", commit], check=True)
    return dest


def norm(name):
    return re.sub(r"[`\s]", "", name)


def spaced_names(entry):
    """(name, as written) for each name of the entry that has spaces in it (a Zig test is named
    by its string, `route: glob`): the text outline shows it with its spaces, which norm drops."""
    out = []
    for n in [entry["name"]] + entry.get("alt", []):
        shown = n.replace("`", "")
        if re.search(r"\s", shown):
            out.append((norm(shown), shown))
    return list(dict.fromkeys(out))


def names_of(entry):
    """The names an expected entry may be found under."""
    out = []
    for n in [entry["name"]] + entry.get("alt", []):
        n = norm(n)
        out.append(n)
        if "." in n and not n.startswith("."):
            out.append(n.rsplit(".", 1)[1])
        if entry.get("kind") == "operator" and not n.startswith("operator"):
            out.append("operator" + n)  # quarry names it as C++ and C# do: `operator[]`
    return list(dict.fromkeys(out))


def quarry_json(quarry, index_dir, path):
    out = subprocess.run([quarry, "summary", path, "--json", "--index-dir", index_dir],
                         capture_output=True, text=True, errors="replace")
    if out.returncode != 0:
        return None, out.stderr.strip()[:200]
    data = json.loads(out.stdout)
    return data.get("items", []), ("heuristic" if data.get("heuristic") else None)


AUX_WHAT = {"swift": "computed properties", "zig": "container-level constants and variables"}

ITEM_LINE = re.compile(r"^\s*(\d+)(?:-(\d+))? (.*)$")


def quarry_text(quarry, index_dir, path):
    """Item lines as (start, text) and the outline's body (for listed runs)."""
    out = subprocess.run([quarry, "summary", path, "--index-dir", index_dir],
                         capture_output=True, text=True, errors="replace")
    if out.returncode != 0:
        return None
    body = out.stdout.split("\n", 1)[1] if "\n" in out.stdout else ""  # line 1 names the file
    rows = []
    for text in body.splitlines():
        m = ITEM_LINE.match(text)
        if m and not re.match(r"(imports \(|\d* ?definitions?\b)", m.group(3)):
            rows.append((int(m.group(1)), m.group(3)))
    return rows, body


def name_rx(name):
    """A name standing on its own: word boundaries for identifiers, plain text for operators."""
    if re.match(r"[\w$]", name):
        return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")
    return re.compile(r"(?<![^\s(.])" + re.escape(name) + r"(?=[\s(<]|$)")


def match(entries, candidates, window):
    """One-to-one: each entry (in line order) takes the nearest unused candidate of one of its
    names within the window. candidates: list of (key, name, line). Returns found flags."""
    used = set()
    flags = []
    for e in entries:
        want = set(names_of(e))
        best = None
        for key, name, line in candidates:
            d = abs(line - e["line"])
            if key in used or name not in want or d > window:
                continue
            if best is None or d < best[0]:
                best = (d, key)
        if best:
            used.add(best[1])
        flags.append(best is not None)
    return flags, used


def attribute_start(items, entry, lines):
    """The start of a quarry item of the entry's name that begins further up, on an
    attribute/annotation line (`@available(...)`) from which only attribute, comment or blank
    lines lead down to the expected line; None if there is none. Such a miss is the window's,
    not a missing definition: quarry counts a stack of attributes as part of the item."""
    want = set(names_of(entry))
    for i in items:
        start = i["start_line"]
        if norm(i["name"]) not in want or not start < entry["line"]:
            continue
        between = lines[start - 1:entry["line"] - 1]
        if between and between[0].lstrip().startswith("@") and all(
                t.strip() == "" or t.lstrip().startswith(("@", "//")) for t in between):
            return start
    return None


def text_candidates(outline, entries):
    """(key, name, line) for every place an expected name shows in the text outline."""
    rows, body = outline
    wanted = {n for e in entries for n in names_of(e)}
    cands = []
    for i, (start, text) in enumerate(rows):
        for n in wanted:
            if name_rx(n).search(text):
                cands.append((("row", i, n), n, start))
    for n in wanted:
        listed = re.compile(name_rx(n).pattern + r"(?:<[^\n]*?>)? (\d+)(?=[,)\s]|$)")
        for m in listed.finditer(body):
            cands.append((("run", m.start(), n), n, int(m.group(1))))
    # names with spaces, looked for as written; a candidate under the normalised name
    for n, shown in sorted({p for e in entries for p in spaced_names(e)}):
        for i, (start, text) in enumerate(rows):
            if name_rx(shown).search(text):
                cands.append((("row", i, shown), n, start))
        listed = re.compile(name_rx(shown).pattern + r" (\d+)(?=[,)\s]|$)")
        for m in listed.finditer(body):
            cands.append((("run", m.start(), shown), n, int(m.group(1))))
    return cands


def score_file(args, index_dir, lang, repo, root, f):
    path = os.path.join(root, f["path"])
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    items, note = quarry_json(args.quarry, index_dir, path)
    res = {"lang": lang, "repo": repo, "path": f["path"], "note": note, "misses": [],
           "text_misses": [], "aux_misses": [], "extras": []}
    defs, aux = f["defs"], f.get("aux", [])
    for key in ("def", "def_found", "def_text", "aux", "aux_found", "aux_text", "aux_members"):
        res[key] = 0
    if items is None:
        res["failed"] = True
        return res
    outline = quarry_text(args.quarry, index_dir, path)
    cands = [(k, norm(i["name"]), i["start_line"]) for k, i in enumerate(items)]
    tcands = text_candidates(outline, defs + aux) if outline else []
    used_all = set()
    for cat, entries in (("def", defs), ("aux", aux)):
        entries = sorted(entries, key=lambda e: e["line"])
        flags, used = match(entries, [c for c in cands if c[0] not in used_all], args.window)
        used_all |= used
        tflags, _ = match(entries, tcands, args.window)
        res[cat] = len(entries)
        res[cat + "_found"] = sum(flags)
        res[cat + "_text"] = sum(tflags)
        # named on the members line of an item around it (where quarry puts properties)
        members = [any(i["start_line"] <= e["line"] <= i["end_line"] and any(
                       name_rx(n).search(m) for m in i.get("members") or [] for n in names_of(e))
                       for i in items) for e in entries]
        if cat == "aux":
            res["aux_members"] = sum(members)
        for e, ok, tok, memb in zip(entries, flags, tflags, members):
            src = lines[e["line"] - 1].strip()[:150] if e["line"] <= len(lines) else ""
            miss = {"file": f"{repo}/{f['path']}", "line": e["line"], "kind": e["kind"],
                    "name": e["name"], "source": src}
            if not ok:
                above = attribute_start(items, e, lines)
                if above:
                    miss["note"] = f"quarry's item starts on attribute line {above}"
                elif cat == "aux":
                    miss["note"] = "on a members line" if memb else "on no members line either"
            if not ok:
                res["misses" if cat == "def" else "aux_misses"].append(miss)
            if not tok and cat == "def":
                res["text_misses"].append(dict(miss, in_json=ok))
    for k, i in enumerate(items):
        if k not in used_all:
            res["extras"].append(f"{repo}/{f['path']}:{i['start_line']} {i['name']} ({i['kind']})")
    return res


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quarry", default=None,
                    help="quarry binary (default: target/debug/quarry of this checkout, else quarry)")
    ap.add_argument("--defs", default=os.path.join(HERE, "defs.json"))
    ap.add_argument("--lang", action="append", help="only these languages (repeatable)")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "quarry-handchecked"),
                    help="where the repositories are checked out")
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--extras", action="store_true", help="list quarry items no entry matches")
    ap.add_argument("--aux", action="store_true", help="list the aux entries missed")
    ap.add_argument("--json", action="store_true", help="print the per-file results as JSON")
    args = ap.parse_args()
    if args.quarry is None:
        local = os.path.join(HERE, "..", "..", "target", "debug", "quarry")
        args.quarry = os.path.abspath(local) if os.path.exists(local) else "quarry"
    with open(args.defs) as fh:
        spec = json.load(fh)
    results = []
    with tempfile.TemporaryDirectory(prefix="qh-index-") as index_dir:
        for lang, L in spec["languages"].items():
            if args.lang and lang not in args.lang:
                continue
            for src in L["sources"]:
                root = checkout(src["repo"], src["commit"], args.work)
                for f in src["files"]:
                    results.append(score_file(args, index_dir, lang, src["repo"], root, f))
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    by_lang = defaultdict(list)
    for r in results:
        by_lang[r["lang"]].append(r)
    pct = lambda a, b: f"{a / b:.3f}" if b else "-"
    print(f"{'language':10} {'files':>5} {'expected':>8} {'found':>6} {'recall':>6}"
          f" {'text':>6} {'t.rec':>6} {'aux':>5} {'a.found':>7} {'a.memb':>6} {'extras':>6}")
    tot = Counter()
    for lang, rs in by_lang.items():
        s = Counter()
        for r in rs:
            for k in ("def", "def_found", "def_text", "aux", "aux_found", "aux_members"):
                s[k] += r[k]
            s["extras"] += len(r["extras"])
        tot += s
        print(f"{lang:10} {len(rs):5} {s['def']:8} {s['def_found']:6} {pct(s['def_found'], s['def']):>6}"
              f" {s['def_text']:6} {pct(s['def_text'], s['def']):>6} {s['aux']:5} {s['aux_found']:7}"
              f" {s['aux_members']:6} {s['extras']:6}")
    print(f"{'all':10} {len(results):5} {tot['def']:8} {tot['def_found']:6} {pct(tot['def_found'], tot['def']):>6}"
          f" {tot['def_text']:6} {pct(tot['def_text'], tot['def']):>6} {tot['aux']:5} {tot['aux_found']:7}"
          f" {tot['aux_members']:6} {tot['extras']:6}")
    for lang, rs in by_lang.items():
        failed = [r["path"] for r in rs if r.get("failed")]
        heur = [r["path"] for r in rs if r["note"] == "heuristic"]
        misses = [m for r in rs for m in r["misses"]]
        tmiss = [m for r in rs for m in r["text_misses"] if m["in_json"]]
        print(f"\n== {lang}: {len(misses)} misses in the JSON outline"
              + (f"; failed: {', '.join(failed)}" if failed else "")
              + (f"; heuristic outline: {', '.join(heur)}" if heur else ""))
        attr = sum(1 for m in misses if m.get("note"))
        if attr:
            print(f"   of which {attr} start on an attribute stack more than {args.window} lines up"
                  " (found with the attributes counted)")
        if misses:
            print("   by kind: " + ", ".join(f"{k} {n}" for k, n in
                                           Counter(m["kind"] for m in misses).most_common()))
        for m in misses:
            note = f" [{m['note']}]" if m.get("note") else ""
            print(f"  {m['file']}:{m['line']} {m['kind']} {m['name']} | {m['source']}{note}")
        print(f"-- {lang}: {len(tmiss)} more misses in the text outline (found in the JSON)")
        for m in tmiss:
            print(f"  {m['file']}:{m['line']} {m['kind']} {m['name']} | {m['source']}")
        amiss = [m for r in rs for m in r["aux_misses"]]
        if any(r["aux"] for r in rs):
            what = AUX_WHAT.get(lang, "aux")
            print(f"-- {lang}: aux ({what}) not an item of their own: {len(amiss)},"
                  f" {sum(r['aux'] - r['aux_members'] for r in rs)} of them on no members line either")
            if args.aux:
                for m in amiss:
                    print(f"  {m['file']}:{m['line']} {m['kind']} {m['name']} | {m['source']}"
                          f" [{m['note']}]")
        if args.extras:
            ex = [e for r in rs for e in r["extras"]]
            print(f"-- {lang}: {len(ex)} quarry items matching no expected entry")
            for e in ex:
                print("  " + e)


if __name__ == "__main__":
    main()
