//! Documents beside code, through the real binary: PDFs (pages, headings, the three ways one
//! cannot be read), reStructuredText, AsciiDoc and titled text cut by sections, a notebook
//! cell by cell, `--type code|docs`, and the outline of a PDF.

mod common;

use common::Env;
use quarry_sources::pdf::fixture;
use serde_json::Value;

fn manual() -> Vec<u8> {
    fixture::bytes(fixture::document(
        &[
            vec![
                ("Operations Manual", 24.0),
                ("For the people who run the service.", 11.0),
            ],
            vec![
                ("Retry policy", 18.0),
                ("Clients retry a failed request three times", 11.0),
                ("with exponential backoff between attempts.", 11.0),
            ],
            vec![
                ("Storage quotas", 18.0),
                ("Each tenant may keep forty gigabytes.", 11.0),
            ],
        ],
        &[],
    ))
}

fn documents_repo(env: &Env) {
    env.write("docs/manual.pdf", manual());
    env.write("docs/broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog");
    env.write(
        "docs/locked.pdf",
        fixture::encrypted(
            fixture::document(&[vec![("Salary bands for every grade.", 11.0)]], &[]),
            "secret",
        ),
    );
    env.write(
        "docs/scan.pdf",
        fixture::bytes(fixture::document(&[vec![]], &[])),
    );
    env.write(
        "docs/guide.rst",
        "=====\nGuide\n=====\n\nInstallation\n------------\n\nRun the installer with root rights.\n\nCertificate rotation\n--------------------\n\nCertificates are renewed every ninety days by the rotation job.\n",
    );
    env.write(
        "docs/ops.adoc",
        "= Operations\n\n== Paging rotation\n\nThe on-call engineer answers pages within fifteen minutes.\n",
    );
    env.write(
        "NOTES.txt",
        "OVERVIEW\n\nNotes kept by hand.\n\n1.  Glossary\n\nA tenant is one customer account.\n",
    );
    let notebook = serde_json::json!({
        "nbformat": 4,
        "metadata": {"language_info": {"name": "python"}},
        "cells": [
            {"cell_type": "markdown", "source": ["# Churn analysis\n", "Which tenants cancelled their plan."]},
            {"cell_type": "code", "source": ["def churn_rate(cancelled, total):\n", "    return cancelled / total\n"],
             // A plot: one long base64 line, as real notebooks carry (never "minified").
             "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo".repeat(4000)}}]},
            {"cell_type": "markdown", "source": ["## Loading\n"]},
            {"cell_type": "code", "source": ["import pandas as pd\n", "def load_tenants(path):\n", "    return pd.read_csv(path)\n"]}
        ]
    });
    env.write("analysis.ipynb", notebook.to_string());
    env.write(
        "src/retry.py",
        "def retry_with_backoff(call, attempts=3):\n    for attempt in range(attempts):\n        try:\n            return call()\n        except IOError:\n            sleep(2 ** attempt)\n",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
}

fn search(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search", "--mode", "lexical"];
    all.extend_from_slice(args);
    env.json(&all)["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_pdf_answers_with_its_page_and_unreadable_ones_are_counted() {
    let env = Env::new();
    documents_repo(&env);
    let results = search(&env, &["retry exponential backoff", "--type", "docs"]);
    let top = &results[0];
    assert_eq!(top["path"], "docs/manual.pdf", "{results:#?}");
    assert_eq!(top["page"], 2);
    assert_eq!(top["language"], "pdf");
    assert_eq!(top["symbol"], "Retry policy");
    assert!(top["id"]
        .as_str()
        .unwrap()
        .contains("docs/manual.pdf#page=2:"));

    let human = env.ok(&["search", "--mode", "lexical", "storage quotas tenant"]);
    assert!(human.contains("docs/manual.pdf#page=3"), "{human}");

    let status = env.json(&["status"]);
    let skipped = &status["repos"][0]["repo"]["skipped"];
    assert_eq!(skipped["pdf-corrupt"], 1, "{status:#}");
    assert_eq!(skipped["pdf-encrypted"], 1, "{status:#}");
    assert_eq!(skipped["pdf-no-text"], 1, "{status:#}");
    let nothing = env.json_nothing(&["search", "--mode", "lexical", "salary bands grade"]);
    assert!(nothing["results"].as_array().unwrap().is_empty());
}

#[test]
fn markup_and_text_are_cut_at_their_titles_and_a_notebook_by_cells() {
    let env = Env::new();
    documents_repo(&env);
    let rst = search(&env, &["certificate rotation renewed"]);
    assert_eq!(rst[0]["path"], "docs/guide.rst");
    assert_eq!(rst[0]["symbol"], "Certificate rotation");
    assert_eq!(
        (rst[0]["start_line"].as_u64(), rst[0]["end_line"].as_u64()),
        (Some(10), Some(13))
    );
    let adoc = search(&env, &["on-call pages fifteen minutes"]);
    assert_eq!(adoc[0]["symbol"], "Paging rotation");
    let text = search(&env, &["tenant customer account glossary"]);
    assert_eq!(text[0]["path"], "NOTES.txt");
    assert_eq!(text[0]["symbol"], "1.  Glossary");

    let prose = search(&env, &["tenants cancelled churn", "--type", "docs"]);
    assert_eq!(prose[0]["path"], "analysis.ipynb");
    assert_eq!(prose[0]["cell"], 1);
    assert_eq!(prose[0]["language"], "markdown");
    // No trigram row for a notebook (its outputs are megabytes): grep reads the file.
    let grep = env.ok(&["grep", "-l", "churn_rate", env.repo_path()]);
    assert!(grep.contains("analysis.ipynb"), "{grep}");
    let code = search(&env, &["churn rate cancelled", "--type", "code"]);
    assert_eq!(code[0]["path"], "analysis.ipynb");
    assert_eq!(code[0]["cell"], 2);
    assert_eq!(code[0]["language"], "python");
    assert_eq!(code[0]["symbol"], "churn_rate");
}

#[test]
fn type_keeps_code_and_documents_apart() {
    let env = Env::new();
    documents_repo(&env);
    let docs = search(&env, &["retry backoff attempts", "--type", "docs"]);
    let code = search(&env, &["retry backoff attempts", "--type", "code"]);
    let all = search(&env, &["retry backoff attempts"]);
    let paths = |rs: &[Value]| -> Vec<String> {
        rs.iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(paths(&docs).contains(&"docs/manual.pdf".to_string()));
    assert!(
        !paths(&docs).contains(&"src/retry.py".to_string()),
        "{docs:#?}"
    );
    assert_eq!(paths(&code)[0], "src/retry.py");
    assert!(
        !paths(&code).iter().any(|p| p.ends_with(".pdf")),
        "{code:#?}"
    );
    assert!(paths(&all).contains(&"src/retry.py".to_string()));
    assert!(paths(&all).contains(&"docs/manual.pdf".to_string()));
    let err = env.fails(&["search", "x", "--type", "pictures"]);
    assert!(err.contains("unknown type `pictures`"), "{err}");
}

#[test]
fn the_summary_of_a_pdf_is_its_headings_with_pages() {
    let env = Env::new();
    documents_repo(&env);
    let path = env.repo.path().join("docs/manual.pdf");
    let out = env.ok(&["summary", path.to_str().unwrap()]);
    assert!(out.contains("3 pages, 3 headings"), "{out}");
    assert!(out.contains("p.2 heading Retry policy"), "{out}");
    let json = env.json(&["summary", path.to_str().unwrap()]);
    let items = json["items"]
        .as_array()
        .or(json["outline"]["items"].as_array())
        .cloned()
        .unwrap_or_default();
    let pages: Vec<u64> = items.iter().filter_map(|i| i["page"].as_u64()).collect();
    assert_eq!(pages, [1, 2, 3], "{json:#}");
    let notebook = env.repo.path().join("analysis.ipynb");
    let out = env.ok(&["summary", notebook.to_str().unwrap()]);
    // Sizes of the cells' sources (not of the JSON with its outputs), imports with their
    // cell, headings nested by level and code under the heading above it.
    assert!(out.contains("analysis.ipynb — notebook, 8 lines"), "{out}");
    assert!(
        out.contains("cell 4:1-1 imports (1): pandas as pd"),
        "{out}"
    );
    assert!(out.contains("\ncell 1:1-2 # Churn analysis"), "{out}");
    assert!(
        out.contains("\n  cell 2:1-2 def churn_rate(cancelled, total)"),
        "{out}"
    );
    assert!(out.contains("\n  cell 3:1-1 ## Loading"), "{out}");
    assert!(
        out.contains("\n    cell 4:2-3 def load_tenants(path)"),
        "{out}"
    );
    let broken = env.repo.path().join("docs/locked.pdf");
    let err = env.fails(&["summary", broken.to_str().unwrap()]);
    assert!(err.contains("pdf-encrypted"), "{err}");
}
