//! How a whole issue text ranks commits: its words read as code search reads them, and the
//! shapes of a fix it raises (code with its tests, changed lines that repeat the issue's code,
//! after the release the issue runs); a commit that changed no code ranks below one that did.

use super::common::git::{commit, session_history, subjects, unrelated_commits};
use super::common::{self, Env};
use serde_json::Value;

/// The `why` of the commit with this subject in a `log --explain --json` answer.
fn why(log: &Value, subject: &str) -> Value {
    log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == subject)
        .unwrap_or_else(|| panic!("{subject}: {log}"))["why"]
        .clone()
}

#[test]
fn an_issue_text_ranks_commits_by_its_words_not_its_pasted_session() {
    let env = Env::new();
    let dir = env.repo.path();
    session_history(&env);
    // A commit whose words are those of an interpreter's banner.
    env.write("LICENSE", "copyright\n");
    commit(
        dir,
        "Update copyright and credits in the license information",
        "Dan",
        "2025-05-01T10:00:00Z",
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let issue = "Bursts are throttled too hard by the rate limiter\n\
        ```\n\
        Python 3.12.1 (main, Dec 19 2023) [GCC 12.2.0] on linux\n\
        Type \"help\", \"copyright\", \"credits\" or \"license\" for more information.\n\
        Type 'copyright', 'credits' or 'license' for more information\n\
        IPython 8.20.0 -- An enhanced Interactive Python. Type '?' for help.\n\
        In [1]: login(user)\n\
        ```\n\
        The second login within a second is refused.\n";
    let log = env.json(&["log", "--mode", "lexical", "-k", "2", issue]);
    let first = &subjects(&log)[0];
    assert!(
        first == "Throttle logins with a rate limiter" || first == "Allow bursts",
        "{log}"
    );
    assert!(
        !subjects(&log).iter().any(|s| s.contains("copyright")),
        "the banner's words ranked a commit: {log}"
    );
    // The same issue read whole from standard input or a file, without shell quoting.
    let mut piped = env.quarry();
    piped.args(["log", "--mode", "lexical", "-k", "2", "--json", "--stdin"]);
    let out = common::output_with_stdin(&mut piped, issue.as_bytes());
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), log);
    env.write("issue.md", issue);
    let file = env.repo.path().join("issue.md");
    let from_file = env.json(&[
        "log",
        "--mode",
        "lexical",
        "-k",
        "2",
        "--query-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(from_file, log);
}

#[test]
fn an_issue_text_raises_the_commit_that_changed_code_and_its_tests() {
    let env = Env::new();
    let dir = env.repo.path();
    common::git::init(dir);
    env.write("money/rounding.py", "def round_half(x):\n    return x\n");
    commit(dir, "Add rounding", "Ann", "2025-01-01T10:00:00Z");
    // Other work, so that the issue's words are rare in the history (a word in half of all
    // commits weighs nothing).
    unrelated_commits(
        &env,
        "money",
        &[
            "currency codes",
            "invoice layout",
            "tax tables",
            "ledger export",
        ],
    );
    // Two commits the issue's words find: a rework of the code alone, and the fix that
    // came with its test.
    env.write(
        "money/rounding.py",
        "def round_half(x):\n    # negative amounts round away from zero\n    return x\n",
    );
    commit(
        dir,
        "Rework rounding of negative amounts",
        "Ann",
        "2025-02-01T10:00:00Z",
    );
    env.write(
        "money/rounding.py",
        "def round_half(x):\n    return -round_half(-x) if x < 0 else x\n",
    );
    env.write(
        "money/tests/test_rounding.py",
        "def test_negative():\n    assert round_half(-2.5) == -3\n",
    );
    commit(
        dir,
        "Round negative amounts away from zero",
        "Bob",
        "2025-03-01T10:00:00Z",
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let issue = "Negative amounts are rounded towards zero\n\n\
        round_half(-2.5) gives -2, not -3 as for positive amounts.\n\
        Rounding of negative amounts should mirror the positive ones.\n";
    let score = |log: &Value, subject: &str| -> f64 {
        log["commits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["subject"] == subject)
            .unwrap_or_else(|| panic!("{subject} not found: {log}"))["score"]
            .as_f64()
            .unwrap()
    };
    let fix = "Round negative amounts away from zero";
    let rework = "Rework rounding of negative amounts";
    let ranked = env.json(&["log", "--mode", "lexical", issue]);
    assert!(
        ranked["commits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c.get("why").is_none()),
        "why only when asked: {ranked}"
    );
    // --explain says where each commit stood and which the prior raised.
    let explained = env.json(&["log", "--mode", "lexical", "--explain", issue]);
    let why = |subject: &str| -> Value {
        explained["commits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["subject"] == subject)
            .unwrap()["why"]
            .clone()
    };
    assert_eq!(why(fix)["fix_prior"], 1.25, "{explained}");
    assert!(why(rework).get("fix_prior").is_none(), "{explained}");
    assert!(
        why(rework)["lexical_rank"].as_u64().is_some(),
        "{explained}"
    );
    // The fix's test repeats the issue's call (`round_half(-2.5)`): its changed lines echo
    // the issue's code, and that multiplies its score too; the rework echoes none of it.
    let echo = why(fix)["echo_factor"].as_f64().unwrap_or(1.0);
    assert!(why(fix)["code_echoes"].as_u64() > Some(0), "{explained}");
    assert!(why(rework).get("code_echoes").is_none(), "{explained}");
    assert!(
        (why(fix)["bm25"].as_f64().unwrap() * 1.25 * echo - score(&ranked, fix)).abs() < 1e-9,
        "{explained}"
    );
    let text = env.ok(&["log", "--mode", "lexical", "--explain", issue]);
    assert!(text.contains("changed code and tests ×1.25"), "{text}");
    let newest = env.ok(&["log", "--explain", "-k", "2"]);
    assert!(newest.contains("listed newest first"), "{newest}");
    env.ok(&["config", "set", "search.commit_fix_prior", "1"]);
    let plain = env.json(&["log", "--mode", "lexical", issue]);
    // The default prior (1.25) multiplies the fix's score, and only the fix's.
    assert!(
        (score(&ranked, fix) / score(&plain, fix) - 1.25).abs() < 1e-9,
        "{ranked}\n{plain}"
    );
    assert_eq!(score(&ranked, rework), score(&plain, rework));
    env.ok(&["config", "set", "search.commit_fix_prior", "100"]);
    assert_eq!(
        subjects(&env.json(&["log", "--mode", "lexical", issue]))[0],
        fix
    );
    // A short query is not an issue's: no commit is raised for its shape.
    let short = env.json(&["log", "--mode", "lexical", "negative amounts"]);
    env.ok(&["config", "set", "search.commit_fix_prior", "1"]);
    assert_eq!(
        env.json(&["log", "--mode", "lexical", "negative amounts"]),
        short
    );
}

#[test]
fn a_commit_that_changed_no_code_ranks_below_one_that_did_unless_asked_for() {
    let env = Env::new();
    let dir = env.repo.path();
    common::git::init(dir);
    env.write("app/cookies.py", "def sign(value):\n    return value\n");
    commit(dir, "Add cookies", "Ann", "2025-01-01T10:00:00Z");
    unrelated_commits(
        &env,
        "app",
        &["routing", "templates", "logging", "config loading"],
    );
    // The release note repeats the words of the change; the change is in the code.
    env.write(
        "app/cookies.py",
        "def sign(value, key):\n    return hmac(key, value)\n",
    );
    commit(
        dir,
        "Sign session cookies with the key",
        "Bob",
        "2025-02-01T10:00:00Z",
    );
    env.write(
        "CHANGES.rst",
        "Session cookie signing changed: session cookies are signed with the secret key.\n",
    );
    env.write(
        "docs/sessions.rst",
        "Session cookie signing changed in 2.0.\n",
    );
    commit(
        dir,
        "Document that session cookie signing changed",
        "Dan",
        "2025-02-02T10:00:00Z",
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let query = "session cookie signing changed";
    let log = env.json(&["log", "--mode", "lexical", "--explain", query]);
    assert_eq!(
        subjects(&log)[0],
        "Sign session cookies with the key",
        "{log}"
    );
    let docs = log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "Document that session cookie signing changed")
        .unwrap_or_else(|| panic!("{log}"));
    // The best of its files' role priors: docs (0.4) over the changelog (0.2).
    assert_eq!(docs["why"]["role_prior"], 0.4, "{log}");
    // A query that asks for docs gets them first.
    let asked = env.json(&["log", "--mode", "lexical", "docs on session cookie signing"]);
    assert_eq!(
        subjects(&asked)[0],
        "Document that session cookie signing changed",
        "{asked}"
    );
}

#[test]
fn an_issue_text_raises_the_commit_whose_changes_repeat_its_code() {
    let env = Env::new();
    let dir = env.repo.path();
    common::git::init(dir);
    env.write(
        "printing/pretty.py",
        "def print_sum(expr):\n    for item in expr.args:\n        if S(item.args[0]).is_negative:\n            sign = '-'\n",
    );
    env.write(
        "printing/tests/test_pretty.py",
        "def test_sum():\n    pass\n",
    );
    commit(dir, "Add the pretty printer", "Ann", "2025-01-01T10:00:00Z");
    unrelated_commits(
        &env,
        "solvers",
        &[
            "ode hints",
            "linear systems",
            "nonlinear roots",
            "inequalities",
        ],
    );
    // A look-alike that says the issue's words, and the fix that says other words but edits
    // the line the traceback quotes and tests the pasted call.
    env.write(
        "printing/pretty.py",
        "def print_sum(expr):\n    # pretty printing of a matrix sum keeps its order\n    for item in expr.args:\n        if S(item.args[0]).is_negative:\n            sign = '-'\n",
    );
    env.write(
        "printing/tests/test_pretty.py",
        "def test_sum():\n    assert pretty_sum_order()\n\n# error pretty printing a sum of matrix symbols: a MatrixSymbol name\n# with a star: pprint, SympifyError, could not parse, traceback, fails\n# pretty printing the sum of matrix symbols fails when a name has a star\n",
    );
    commit(
        dir,
        "Keep the order of a sum when printing",
        "Bob",
        "2025-02-01T10:00:00Z",
    );
    env.write(
        "printing/pretty.py",
        "def print_sum(expr):\n    # pretty printing of a matrix sum keeps its order\n    for item in expr.args:\n        if coefficient_is_negative(item):\n            sign = '-'\n",
    );
    env.write(
        "printing/tests/test_pretty.py",
        "def test_sum():\n    assert pretty_sum_order()\n\ndef test_star_name():\n    pprint(MatrixSymbol('x', n, n) + MatrixSymbol('y*', n, n))\n",
    );
    commit(
        dir,
        "Use the coefficient's sign",
        "Cid",
        "2025-03-01T10:00:00Z",
    );
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let issue = "Error pretty printing a matrix sum\n\n\
        ```\n>>> pprint(MatrixSymbol('x', n, n) + MatrixSymbol('y*', n, n))\n\
        Traceback (most recent call last):\n  File \"printing/pretty.py\", line 3, in print_sum\n\
        \x20   if S(item.args[0]).is_negative:\nSympifyError: could not parse 'y*'\n```\n\
        Pretty printing the sum of matrix symbols fails when a name has a star.\n";
    let fix = "Use the coefficient's sign";
    let look_alike = "Keep the order of a sum when printing";
    let echoed = env.json(&["log", "--mode", "lexical", "--explain", issue]);
    assert_eq!(subjects(&echoed)[0], fix, "{echoed}");
    assert!(
        why(&echoed, fix)["code_echoes"].as_u64() >= Some(5),
        "{echoed}"
    );
    assert!(
        why(&echoed, look_alike)["code_echoes"]
            .as_u64()
            .unwrap_or(0)
            < why(&echoed, fix)["code_echoes"].as_u64().unwrap(),
        "{echoed}"
    );
    let text = env.ok(&["log", "--mode", "lexical", "--explain", issue]);
    assert!(text.contains("repeats the issue's code"), "{text}");
    // Without the echo the look-alike's words win: the echo is what put the fix first.
    env.ok(&["config", "set", "search.commit_code_echo", "0"]);
    let plain = env.json(&["log", "--mode", "lexical", "--explain", issue]);
    assert_eq!(subjects(&plain)[0], look_alike, "{plain}");
    assert!(why(&plain, fix).get("code_echoes").is_none(), "{plain}");
    // A short query pastes no code: nothing is read for it.
    let short = env.json(&[
        "log",
        "--mode",
        "lexical",
        "--explain",
        "matrix sum printing",
    ]);
    assert!(
        short["commits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["why"].get("code_echoes").is_none()),
        "{short}"
    );
}

#[test]
fn an_issue_naming_the_release_it_runs_lowers_commits_from_before_that_release() {
    let env = Env::new();
    // The folder is the repo's name, and the name an issue calls the project by.
    let dir = env.repo.path().join("widget");
    std::fs::create_dir_all(&dir).unwrap();
    common::git::init(&dir);
    let tag = |args: &[&str], date: &str| common::git::git(&dir, args, "x".as_ref(), date);
    env.write("widget/core.py", "def resize(w):\n    return w\n");
    commit(&dir, "Add widget", "Ann", "2025-01-01T10:00:00Z");
    tag(&["tag", "v1.0"], "2025-01-01T10:00:00Z");
    // Other work, so that the issue's words are rare in the history.
    for (i, topic) in ["themes", "fonts", "icons", "menus"].iter().enumerate() {
        env.write(&format!("widget/other{i}.py"), format!("# {topic}\n"));
        commit(
            &dir,
            &format!("Add {topic}"),
            "Cy",
            &format!("2025-01-{:02}T10:00:00Z", i + 2),
        );
    }
    // A fix of the same words before 2.0, and the fix after it.
    env.write(
        "widget/core.py",
        "def resize(w):\n    # narrow screens\n    return max(w, 1)\n",
    );
    commit(
        &dir,
        "Fix widget resize on narrow screens",
        "Bob",
        "2025-02-01T10:00:00Z",
    );
    env.write("widget/layout.py", "def place(w):\n    return w\n");
    commit(&dir, "Add layout", "Bob", "2025-02-15T10:00:00Z");
    tag(
        &["tag", "-a", "v2.0", "-m", "Release 2.0"],
        "2025-03-01T10:00:00Z",
    );
    env.write(
        "widget/core.py",
        "def resize(w, aspect):\n    return max(w, 1) * aspect\n",
    );
    commit(
        &dir,
        "Keep the aspect when resizing",
        "Cid",
        "2025-04-01T10:00:00Z",
    );
    env.ok(&["sync", dir.to_str().unwrap(), "--no-embed"]);
    let issue = "Resize breaks on narrow screens\n\n\
        With Widget 2.0, resizing a widget on a narrow screen squashes it.\n\
        Resize should keep the widget usable on narrow screens.\n";
    let before = "Fix widget resize on narrow screens";
    let after = "Keep the aspect when resizing";
    let log = env.json(&["log", "--mode", "lexical", "--explain", issue]);
    assert_eq!(why(&log, before)["release_prior"], 0.5, "{log}");
    assert_eq!(why(&log, before)["before_release"], "v2.0", "{log}");
    assert!(why(&log, after).get("release_prior").is_none(), "{log}");
    let text = env.ok(&["log", "--mode", "lexical", "--explain", issue]);
    assert!(
        text.contains("before v2.0, the release the issue runs ×0.5"),
        "{text}"
    );
    // Its words alone put the older fix first; the release named is what moved it.
    env.ok(&["config", "set", "search.commit_before_release_prior", "1"]);
    let plain = env.json(&["log", "--mode", "lexical", "--explain", issue]);
    assert_eq!(subjects(&plain)[0], before, "{plain}");
    env.ok(&["config", "set", "search.commit_before_release_prior", "0.1"]);
    assert_eq!(
        subjects(&env.json(&["log", "--mode", "lexical", issue]))[0],
        after
    );
    // Another project's version, or one that was never released, lowers nothing.
    for other in ["Python 2.0", "Widget 9.9"] {
        let issue = issue.replace("Widget 2.0", other);
        let log = env.json(&["log", "--mode", "lexical", "--explain", &issue]);
        assert!(
            why(&log, before).get("release_prior").is_none(),
            "{other}: {log}"
        );
    }
}
