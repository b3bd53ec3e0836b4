//! Finding the code an issue is about: a whole bug report (title, prose, a stack trace from
//! another machine's paths, a pasted session) passed to `quarry search --stdin` must rank the
//! file to fix first, above the tests, docs and changelog that repeat its words; a query that
//! asks for tests gets tests.

mod common;

use common::Env;
use serde_json::Value;

/// A small package whose tests, docs and changelog say "parse row" far more often than the
/// code does — the shape that made word overlap rank them first.
fn fixture(env: &Env) {
    env.write(
        "src/tabular/reader.py",
        "\"\"\"Reading delimited tables.\"\"\"\n\nclass RowReader:\n    def __init__(self, delimiter=','):\n        self.delimiter = delimiter\n\n    def parse_row(self, line):\n        fields = line.split(self.delimiter)\n        if len(fields) < 2:\n            raise ValueError('a row needs at least two fields')\n        return [f.strip() for f in fields]\n\n    def read(self, lines):\n        return [self.parse_row(l) for l in lines if l.strip()]\n",
    );
    env.write(
        "src/tabular/writer.py",
        "class RowWriter:\n    def write_row(self, fields):\n        return ','.join(fields)\n",
    );
    env.write(
        "src/tabular/quoting.py",
        "def quote_field(field):\n    return '\"' + field.replace('\"', '\"\"') + '\"'\n",
    );
    let mut test = String::from("from tabular.reader import RowReader\n\n");
    for i in 0..12 {
        test.push_str(&format!(
            "def test_parse_row_{i}():\n    # parse row: a row with fields, single field rows raise ValueError\n    assert RowReader().parse_row('a,b') == ['a', 'b']\n\n"
        ));
    }
    env.write("tests/test_reader.py", test);
    env.write(
        "docs/reading.rst",
        "Reading rows\n============\n\n``RowReader.parse_row`` parses a row. A row with a single field raises ValueError:\nparse row, parse row, a row needs at least two fields. Rows, fields, delimiter.\n",
    );
    env.write(
        "CHANGES.rst",
        "1.2\n---\n\n- parse_row: a row with a single field raises ValueError (row, fields).\n- parse_row keeps quoted fields.\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
}

const ISSUE: &str = "RowReader.parse_row rejects single-field rows

Reading a file with one column fails:

```
>>> from tabular.reader import RowReader
>>> RowReader().read(['only'])
Traceback (most recent call last):
  File \"<stdin>\", line 1, in <module>
  File \"/home/someone/venv/lib/python3.12/site-packages/tabular/reader.py\", line 14, in read
    return [self.parse_row(l) for l in lines if l.strip()]
  File \"/home/someone/venv/lib/python3.12/site-packages/tabular/reader.py\", line 10, in parse_row
    raise ValueError('a row needs at least two fields')
ValueError: a row needs at least two fields
```

### Environment
- Python: 3.12.1
- OS: Linux
";

fn search_stdin(env: &Env, args: &[&str], input: &str) -> Value {
    let out = common::output_with_stdin(
        env.quarry()
            .args(["search", "--stdin", "--json"])
            .args(args),
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn files(json: &Value) -> Vec<String> {
    let mut seen = Vec::new();
    for r in json["results"].as_array().unwrap() {
        let p = r["path"].as_str().unwrap().to_string();
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

#[test]
fn an_issue_with_a_stack_trace_ranks_the_file_to_fix_first() {
    let env = Env::new();
    fixture(&env);
    let json = search_stdin(&env, &["--explain"], ISSUE);
    let ranked = files(&json);
    assert_eq!(ranked[0], "src/tabular/reader.py", "{ranked:?}");
    // The chunk holding the innermost frame's line comes first.
    let first = &json["results"][0];
    assert!(
        first["start_line"].as_u64().unwrap() <= 10 && 10 <= first["end_line"].as_u64().unwrap(),
        "{first}"
    );
    let terms = json["plan"]["terms"].as_array().unwrap();
    assert!(
        !terms.iter().any(|t| t == "venv" || t == "someone"),
        "a frame's folders are not evidence: {terms:?}"
    );
    // Tests, docs and changelog come after the package's source files.
    let pos = |p: &str| ranked.iter().position(|f| f == p).unwrap_or(usize::MAX);
    for other in ["tests/test_reader.py", "docs/reading.rst", "CHANGES.rst"] {
        assert!(
            pos(other) > pos("src/tabular/reader.py"),
            "{other}: {ranked:?}"
        );
    }
    // --explain says why: the frames, the boilerplate left out, the evidence per file.
    let plan = &json["plan"];
    assert_eq!(
        plan["issue"]["frames"].as_array().unwrap().len(),
        2,
        "{plan}"
    );
    assert!(
        !plan["terms"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "linux"),
        "environment lines are not evidence: {plan}"
    );
    let top = &json["files"][0];
    assert_eq!(top["path"], "src/tabular/reader.py");
    assert!(
        top["mentions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["kind"] == "frame" && m["innermost"] == true),
        "{top}"
    );
    let test_file = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "tests/test_reader.py");
    if let Some(t) = test_file {
        assert_eq!(t["role"], "test");
        assert!(t["parts"]["prior"].as_f64().unwrap() < 1.0);
    }
}

#[test]
fn the_same_issue_without_a_trace_still_finds_the_code_and_queries_for_tests_get_tests() {
    let env = Env::new();
    fixture(&env);
    // No trace, no paths: the words and the names must do it.
    let prose = "parse_row rejects rows with a single field\n\nA row needs at least two fields, says the ValueError, but a file with one column is valid.\nThe reader should accept it.";
    let json = search_stdin(&env, &[], prose);
    assert_eq!(
        files(&json)[0],
        "src/tabular/reader.py",
        "{:?}",
        files(&json)
    );

    let json = env.json(&["search", "tests for parse_row"]);
    assert_eq!(
        files(&json)[0],
        "tests/test_reader.py",
        "a query that asks for tests gets them"
    );

    // A query file works like stdin; an empty one is a clear error.
    let path = env.home.path().join("issue.md");
    std::fs::write(&path, ISSUE).unwrap();
    let json = env.json(&["search", "--query-file", path.to_str().unwrap()]);
    assert_eq!(files(&json)[0], "src/tabular/reader.py");
    std::fs::write(&path, "  \n").unwrap();
    let err = env.fails(&["search", "--query-file", path.to_str().unwrap()]);
    assert!(err.contains("the query is empty"), "{err}");
}

#[test]
fn the_call_graph_around_a_named_definition_is_evidence_when_weighted() {
    let env = Env::new();
    env.write(
        "app/export.py",
        "from app.fmt import format_row\n\n\ndef export_rows(rows):\n    return [format_row(r) for r in rows]\n",
    );
    env.write(
        "app/fmt.py",
        "def format_row(row):\n    return ','.join(row)\n",
    );
    env.write(
        "app/cli.py",
        "from app.export import export_rows\n\n\ndef main():\n    print(export_rows(load()))\n\n\ndef load():\n    return []\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let issue = "export_rows drops the last column\n\nCalling `export_rows` on a table with three columns gives two.\nExpected every column to be kept.";
    let mentions = |json: &Value, path: &str| -> Vec<Value> {
        json["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["mentions"].as_array().cloned().unwrap_or_default())
            .unwrap_or_default()
    };
    // Off by default (measured: no gain on the evaluation sets, docs/EVAL.md).
    let json = search_stdin(&env, &["--explain"], issue);
    assert!(
        mentions(&json, "app/fmt.py").is_empty(),
        "{}",
        json["files"]
    );

    env.ok(&["config", "set", "search.callee_weight", "0.3"]);
    env.ok(&["config", "set", "search.caller_weight", "0.3"]);
    let json = search_stdin(&env, &["--explain"], issue);
    let callee = mentions(&json, "app/fmt.py");
    assert!(
        callee.iter().any(|m| m["kind"] == "callee"
            && m["name"] == "format_row"
            && m["via"] == "export_rows"),
        "{}",
        json["files"]
    );
    let caller = mentions(&json, "app/cli.py");
    assert!(
        caller
            .iter()
            .any(|m| m["kind"] == "caller" && m["name"] == "export_rows"),
        "{}",
        json["files"]
    );
    assert_eq!(
        files(&json)[0],
        "app/export.py",
        "the named definition stays first"
    );
}
