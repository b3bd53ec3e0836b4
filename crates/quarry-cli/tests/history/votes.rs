//! Past changes as evidence in file ranking (`search.history_weight`): commits like an issue
//! text vote for the files they changed and, through the lines they added that still stand,
//! for the definitions they changed; without synced history there is no such evidence.

use super::common::git::commit;
use super::common::{write_file, Env};
use serde_json::Value;

const ISSUE: &str = "Discounted totals are not rounded to cents\n\nWhen a discount applies the invoice total shows many decimals (10.333333 instead of 10.33).\nExpected: the total rounded to cents, as it was before.";

fn changed_mention(search: &Value, path: &str) -> Option<Value> {
    search["files"]
        .as_array()?
        .iter()
        .find(|f| f["path"] == path)?["mentions"]
        .as_array()?
        .iter()
        .find(|m| m["kind"] == "changed")
        .cloned()
}

#[test]
fn past_commits_like_an_issue_vote_for_the_files_and_definitions_they_changed() {
    let env = Env::new();
    let repo = env.repo.path();
    std::fs::create_dir_all(repo).unwrap();
    super::common::git::init(repo);
    let totals = |body: &str| {
        format!(
            "def format_invoice(items):\n    lines = []\n    for item in items:\n        lines.append(f\"{{item.name}}: {{item.price}}\")\n    header = \"Invoice\"\n    return \"\\n\".join([header] + lines)\n\n\ndef compute_total(items, discount):\n    total = 0\n    for item in items:\n        total += item.price\n{body}    return total\n\n\ndef apply_tax(total, rate):\n    taxed = total * (1 + rate)\n    if taxed < 0:\n        raise ValueError(\"negative\")\n    return taxed\n"
        )
    };
    write_file(
        repo,
        "billing/totals.py",
        totals("    total = total * (1 - discount)\n").as_bytes(),
    );
    let ledger = |entry: &str| {
        format!("def record_entry(ledger, amount):\n    if amount is None:\n        raise ValueError(\"no amount\")\n    {entry}\n    return len(ledger)\n")
    };
    write_file(
        repo,
        "billing/ledger.py",
        ledger("ledger.append(amount)").as_bytes(),
    );
    commit(repo, "Add billing", "Ann", "2025-01-01T00:00:00Z");
    // Commits about other things, so that the issue's words are rare in the history, as in
    // any real one.
    super::common::git::unrelated_commits(
        &env,
        "misc",
        &[
            "logging setup",
            "a cache for sessions",
            "the command line parser",
            "retries for uploads",
            "a health endpoint",
            "colour themes",
        ],
    );
    write_file(
        repo,
        "billing/totals.py",
        totals("    total = round(total * (1 - discount), 2)\n").as_bytes(),
    );
    commit(
        repo,
        "Round discounted totals to cents",
        "Ann",
        "2025-02-01T00:00:00Z",
    );
    write_file(
        repo,
        "billing/ledger.py",
        ledger("ledger.append(round(amount, 2))").as_bytes(),
    );
    commit(
        repo,
        "Keep ledger entries in cents",
        "Bob",
        "2025-03-01T00:00:00Z",
    );

    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.ok(&["config", "set", "search.history_weight", "0.5"]);
    let before = env.json(&["search", ISSUE, "--explain", "--mode", "lexical"]);
    assert!(
        changed_mention(&before, "billing/totals.py").is_none(),
        "no history synced, no votes: {before}"
    );

    env.ok(&["sync", env.repo_path(), "--no-embed"]);
    let after = env.json(&["search", ISSUE, "--explain", "--mode", "lexical"]);
    let voted = changed_mention(&after, "billing/totals.py").expect("totals.py voted for");
    assert_eq!(voted["share"], 1.0, "{voted}");
    // The commit that rounded the totals votes for compute_total alone; the one that added
    // the file votes for all three definitions, less (it matches the issue less).
    let definitions = voted["definitions"].as_array().unwrap();
    let share = |name: &str| {
        definitions
            .iter()
            .find(|d| d["symbol"] == name)
            .and_then(|d| d["share"].as_f64())
            .unwrap_or(0.0)
    };
    assert_eq!(share("compute_total"), 1.0, "{voted}");
    assert!(
        share("format_invoice") < 0.5 && share("apply_tax") < 0.5,
        "{voted}"
    );
    assert_eq!(after["results"][0]["path"], "billing/totals.py", "{after}");
    assert_eq!(
        after["results"][0]["symbol"], "compute_total",
        "the changed definition first: {after}"
    );
    let text = env.ok(&["search", ISSUE, "--explain", "--mode", "lexical"]);
    assert!(
        text.contains("changed by past commits like the query") && text.contains("compute_total :"),
        "{text}"
    );

    // The weight at 0, history says nothing.
    env.ok(&["config", "set", "search.history_weight", "0"]);
    let off = env.json(&["search", ISSUE, "--explain", "--mode", "lexical"]);
    assert!(
        changed_mention(&off, "billing/totals.py").is_none(),
        "{off}"
    );
}
