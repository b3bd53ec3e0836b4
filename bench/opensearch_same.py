#!/usr/bin/env python3
"""Same answers on OpenSearch: the top-10 files of the embedded store against one OpenSearch
node's, on one real tree, for 15 queries of each class — names, questions, issue texts.

Usage: bench/opensearch_same.py [TREE] [--issues EVAL.jsonl] [--modes auto,lexical] [--no-embed]
                                [--quarry PATH]

TREE (default /work/repos/flask) is indexed twice by the same quarry binary — into a workspace's
SQLite file and onto a fresh OpenSearch node (bench/os_server.py) — with embeddings unless
--no-embed. Each query runs as `quarry search --json -k 40` on both (issue texts through
--stdin); a query's answer is its first 10 distinct files in rank order. Printed per class and
mode: how many queries gave the same ten files in the same order, the same ten in another
order, and the mean overlap@10; then every query that differs, both lists side by side.

Issue texts: the eval's issues of the tree's project (`--issues`, ids starting with
`--issue-repo`), then the bug reports below, written for this bench from flask's changelog, up
to 15 in all.
"""
import argparse, json, os, subprocess, sys, tempfile

from os_server import OsCluster

NAMES = ["Flask", "Blueprint", "url_for", "send_file", "make_response",
         "SecureCookieSessionInterface", "AppContext", "render_template", "jsonify", "abort",
         "before_request", "register_blueprint", "from_pyfile", "test_client", "stream_with_context"]
QUESTIONS = [
    "how are session cookies signed", "where is the JSON provider configured",
    "how does the app find templates", "register an error handler for an exception",
    "how are url rules added to the app", "load configuration from an environment variable",
    "tear down the application context", "how does the test client send requests",
    "where are static files served", "how does the command line find the app",
    "how is the request context pushed", "run async view functions",
    "blueprint url prefix and subdomain", "send a file as an attachment",
    "limit the size of uploaded request bodies"]
WRITTEN_ISSUES = [
    "flask run ignores FLASK_APP when a .env file sets it\nI have a .env file with FLASK_APP=hello.py and python-dotenv installed. Running `flask run` says it could not locate a Flask application. load_dotenv seems to be called after the app is located.",
    "Blueprint static files 404 when url_prefix is set\nRegistering a blueprint with static_folder='static' and url_prefix='/admin' gives 404 for /admin/static/style.css. The blueprint's static route is added without the prefix.",
    "session cookie not refreshed when SESSION_REFRESH_EACH_REQUEST is True\nWith a permanent session the Set-Cookie header is only sent when the session is modified. should_set_cookie does not look at the config value.",
    "jsonify fails on decimal.Decimal\nReturning jsonify(price=Decimal('1.10')) raises TypeError: Object of type Decimal is not JSON serializable. The default JSON provider should convert Decimal to str.",
    "url_for with _external=True uses http behind a proxy\nBehind nginx with X-Forwarded-Proto https, url_for(..., _external=True) builds http:// URLs. PREFERRED_URL_SCHEME is ignored in a request context.",
    "teardown_appcontext functions not called after an exception in a CLI command\nA click command decorated with with_appcontext raises; the teardown functions registered with teardown_appcontext never run, so the database connection leaks.",
    "test_client does not keep cookies between requests in a with block\nInside `with app.test_client() as c:` a cookie set by the first response is not sent with the second request. The cookie jar of the client seems to be reset.",
    "send_file with a BytesIO and no download_name raises\nsend_file(io.BytesIO(data), mimetype='text/csv', as_attachment=True) raises TypeError because the filename cannot be detected. The error message should say download_name is required.",
    "errorhandler for HTTPException subclass not used for 405\nI registered @app.errorhandler(MethodNotAllowed) but a POST to a GET-only route returns the default 405 page. The handler lookup walks the MRO wrong for routing exceptions.",
    "Config.from_file with toml loader fails on binary mode\napp.config.from_file('config.toml', load=tomllib.load) raises TypeError: File must be opened in binary mode. from_file opens the file in text mode and has no text argument.",
    "async view raises RuntimeError: install flask[async]\nI have asgiref installed but an async def view still raises RuntimeError asking to install Flask with the async extra. ensure_sync checks the wrong import.",
    "stream_with_context loses the request in a generator\nA streamed response generator that reads request.args raises RuntimeError: Working outside of request context, even when wrapped with stream_with_context.",
]


def top_files(quarry, workspace, query, mode, issue):
    args = quarry + workspace + ["search", "--all-repos", "--mode", mode, "-k", "40", "--json"]
    out = subprocess.run(args + (["--stdin"] if issue else [query]), input=query if issue else None,
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):  # 1: no results
        sys.exit(f"quarry search failed ({' '.join(workspace)}): {out.stderr}")
    files = []
    for r in (json.loads(out.stdout) if out.stdout.strip() else {}).get("results", []):
        if r["path"] not in files:
            files.append(r["path"])
    return files[:10]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", default="/work/repos/flask")
    ap.add_argument("--issues", default="/work/shared/eval/swebench_dev.jsonl")
    ap.add_argument("--issue-repo", default="pallets__flask")
    ap.add_argument("--modes", default="auto,lexical")
    ap.add_argument("--no-embed", action="store_true")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--quarry", default=os.path.join(here, "..", "target", "release", "quarry"))
    args = ap.parse_args()
    quarry = [os.path.abspath(args.quarry)]
    issues = []
    if args.issues and os.path.exists(args.issues):
        with open(args.issues) as f:
            issues = [r["query"] for r in map(json.loads, f) if r["id"].startswith(args.issue_repo)]
    issues = (issues + WRITTEN_ISSUES)[:15]
    classes = {"names": [(q, False) for q in NAMES], "questions": [(q, False) for q in QUESTIONS],
               "issue texts": [(q, True) for q in issues]}
    tree = os.path.abspath(args.tree)
    embed = ["--no-embed"] if args.no_embed else []
    with tempfile.TemporaryDirectory(prefix="quarry-same-") as work, OsCluster(nodes=1, heap="2g") as cluster:
        stores = {"embedded": ["--index-dir", os.path.join(work, "sqlite")],
                  "opensearch": ["--index-dir", os.path.join(work, "os"), "--db-url", cluster.url("same")]}
        for name, ws in stores.items():
            out = subprocess.run(quarry + ws + ["index", tree, "--json"] + embed, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"index on {name} failed: {out.stderr}")
            report = json.loads(out.stdout)["repos"][0]
            print(f"{name}: {report.get('files')} files, {report.get('chunks')} chunks indexed")
        print(f"\n{tree}; {'lexical index' if args.no_embed else 'embedded'}; top-10 distinct files of `quarry search -k 40`\n")
        print(f"{'class':12} {'mode':8} | {'same order':>10} {'same set':>8} {'overlap@10':>10} {'same first':>10}")
        differ = []
        for mode in args.modes.split(","):
            for cls, queries in classes.items():
                same = same_set = first = 0
                overlaps = []
                for q, issue in queries:
                    a = top_files(quarry, stores["embedded"], q, mode, issue)
                    b = top_files(quarry, stores["opensearch"], q, mode, issue)
                    same += a == b
                    same_set += set(a) == set(b)
                    first += a[:1] == b[:1]
                    overlaps.append(len(set(a) & set(b)) / max(1, len(a)))
                    if a != b:
                        differ.append((cls, mode, q, a, b))
                print(f"{cls:12} {mode:8} | {same:>7}/{len(queries)} {same_set:>5}/{len(queries)} "
                      f"{sum(overlaps) / len(overlaps):>10.2f} {first:>7}/{len(queries)}")
        for cls, mode, q, a, b in differ:
            print(f"\n{cls} ({mode}) differs: {q.splitlines()[0][:80]!r}")
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else ""
                y = b[i] if i < len(b) else ""
                print(f"  {i + 1:2} {x:50} {'=' if x == y else '≠'} {y}")


if __name__ == "__main__":
    main()
