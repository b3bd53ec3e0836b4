#!/usr/bin/env python3
"""Documents beside code: PDF extraction speed and search quality on real manuals.

    python3 bench/docs_eval.py [--corpus DIR] [--quarry target/release/quarry] [--modes lexical,hybrid]

The corpus is seven LaTeX manuals Debian ships (bench/docs_questions.json names them): the
script downloads the two packages with `apt-get download` and unpacks the PDFs into DIR.
The answers' pages come from each PDF's own bookmarks, read with pypdf (`pip install pypdf`).

It prints, for quarry (`search --type docs`) in each mode and for a plain BM25 over whole
pages (pdftotext, from poppler-utils, when installed: the baseline), page hit@1, hit@5 and
MRR@10 (a result counts when it is the named PDF on one of the section's pages) and
document hit@1; then extraction throughput of the 345-page interface3.pdf through
`examples/pdf_pages` (`cargo build --release -p quarry-sources --example pdf_pages`).
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = ["texlive-latex-base-doc", "texlive-latex-recommended-doc"]
DOC_ROOT = "usr/share/doc/texlive-doc/latex"


def fetch_corpus(corpus: Path, documents: dict) -> None:
    if all((corpus / name).exists() for name in documents):
        return
    corpus.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL)
        for deb in Path(tmp).glob("*.deb"):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "x")], check=True)
        for name, rel in documents.items():
            shutil.copy(Path(tmp) / "x" / DOC_ROOT / rel, corpus / name)


def section_pages(pdf: Path) -> dict:
    """Section title -> pages, from the PDF's bookmarks."""
    import pypdf

    reader = pypdf.PdfReader(str(pdf))
    flat = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:
                continue
            flat.append((depth, item.title, page))

    walk(reader.outline, 0)
    pages = {}
    for i, (depth, title, start) in enumerate(flat):
        end = next((p for d, _, p in flat[i + 1:] if d <= depth), len(reader.pages) + 1) - 1
        pages[title] = list(range(start, max(start, end) + 1))
    return pages


def scores(ranked_lists, answers):
    """ranked_lists[i]: [(doc, page)] best first; answers[i]: (doc, set(pages))."""
    n = len(answers)
    hit1 = hit5 = mrr = doc1 = 0.0
    for ranked, (doc, pages) in zip(ranked_lists, answers):
        rank = next((i + 1 for i, (d, p) in enumerate(ranked[:10]) if d == doc and p in pages), None)
        if rank:
            mrr += 1 / rank
            hit1 += rank == 1
            hit5 += rank <= 5
        doc1 += bool(ranked) and ranked[0][0] == doc
    return {"page_hit@1": hit1 / n, "page_hit@5": hit5 / n, "page_mrr@10": mrr / n, "doc_hit@1": doc1 / n}


def tokens(text):
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 1]


def bm25_pages(corpus: Path, documents: dict, questions):
    """Plain BM25 (k1 1.2, b 0.75) over every page's pdftotext text."""
    if not shutil.which("pdftotext"):
        return None
    pages = []
    for name in documents:
        out = subprocess.run(["pdftotext", str(corpus / name), "-"], capture_output=True, text=True).stdout
        for i, text in enumerate(out.split("\f")):
            if text.strip():
                pages.append((name, i + 1, Counter(tokens(text))))
    n = len(pages)
    avg = sum(sum(c.values()) for _, _, c in pages) / n
    df = Counter(t for _, _, c in pages for t in c)
    ranked = []
    for q in questions:
        terms = tokens(q["q"])
        scored = []
        for name, page, counts in pages:
            length = sum(counts.values())
            s = 0.0
            for t in terms:
                tf = counts.get(t, 0)
                if tf:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))
            if s > 0:
                scored.append((s, name, page))
        scored.sort(reverse=True)
        ranked.append([(name, page) for _, name, page in scored[:10]])
    return ranked


def quarry_ranked(quarry, workspace, questions, mode):
    ranked, times = [], []
    for q in questions:
        started = time.perf_counter()
        out = subprocess.run(
            [quarry, "--index-dir", workspace, "search", "--json", "--mode", mode, "--type", "docs",
             "-k", "10", q["q"]],
            capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        results = json.loads(out.stdout)["results"] if out.stdout.strip() else []
        ranked.append([(Path(r["path"]).name, r.get("page")) for r in results])
    times.sort()
    return ranked, times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="/tmp/quarry-docs-corpus")
    parser.add_argument("--quarry", default=str(HERE.parent / "target/release/quarry"))
    parser.add_argument("--modes", default="lexical,hybrid")
    args = parser.parse_args()
    spec = json.loads((HERE / "docs_questions.json").read_text())
    corpus = Path(args.corpus)
    fetch_corpus(corpus, spec["documents"])
    questions = spec["questions"]
    answers = []
    by_doc = {name: section_pages(corpus / name) for name in spec["documents"]}
    for q in questions:
        pages = by_doc[q["doc"]].get(q["section"])
        if not pages:
            sys.exit(f"no bookmark titled {q['section']!r} in {q['doc']}")
        answers.append((q["doc"], set(pages)))
    total_pages = sum(int(re.search(r"Pages:\s+(\d+)", subprocess.run(
        ["pdfinfo", str(corpus / n)], capture_output=True, text=True).stdout).group(1))
        for n in spec["documents"]) if shutil.which("pdfinfo") else None
    print(f"{len(questions)} questions over {len(spec['documents'])} PDFs"
          + (f" ({total_pages} pages)" if total_pages else ""))

    with tempfile.TemporaryDirectory() as ws:
        started = time.perf_counter()
        subprocess.run([args.quarry, "--index-dir", ws, "index", str(corpus), "--no-embed"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"quarry index --no-embed: {time.perf_counter() - started:.1f} s")
        rows = []
        for mode in args.modes.split(","):
            if mode != "lexical":
                started = time.perf_counter()
                subprocess.run([args.quarry, "--index-dir", ws, "index", str(corpus)], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                print(f"quarry index (embedding): {time.perf_counter() - started:.1f} s")
            ranked, p50 = quarry_ranked(args.quarry, ws, questions, mode)
            rows.append((f"quarry {mode}", scores(ranked, answers), f"{p50 * 1000:.0f} ms"))
    baseline = bm25_pages(corpus, spec["documents"], questions)
    if baseline is not None:
        rows.append(("BM25 over pdftotext pages", scores(baseline, answers), "-"))
    print(f"{'':28} {'page hit@1':>10} {'page hit@5':>10} {'page MRR':>9} {'doc hit@1':>9} {'p50 (process)':>14}")
    for name, s, p50 in rows:
        print(f"{name:28} {s['page_hit@1']:10.3f} {s['page_hit@5']:10.3f} {s['page_mrr@10']:9.3f} {s['doc_hit@1']:9.3f} {p50:>14}")

    example = HERE.parent / "target/release/examples/pdf_pages"
    if example.exists():
        out = subprocess.run([str(example), str(corpus / "interface3.pdf")], capture_output=True, text=True)
        print("extraction:", out.stdout.strip())


if __name__ == "__main__":
    main()
