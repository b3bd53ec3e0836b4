//! The router's accuracy on a labelled set of 199 queries written from five real repositories
//! and SWE-bench issues (tests/fixtures/router_queries.jsonl, made by
//! scripts/build-router-set.py; each row names its source). Goal: 95% overall.

use quarry_rank::route::{classify, QueryClass};
use std::collections::BTreeMap;

#[test]
fn the_router_classifies_the_labelled_set() {
    let text = include_str!("fixtures/router_queries.jsonl");
    let mut per_class: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let query = row["query"].as_str().unwrap();
        let want = row["class"].as_str().unwrap().to_string();
        let got = serde_json::to_value(classify(query)).unwrap();
        let entry = per_class.entry(want.clone()).or_default();
        entry.1 += 1;
        if got == want.as_str() {
            entry.0 += 1;
        } else {
            wrong.push(format!(
                "{want} → {got}: {:?}",
                query.chars().take(80).collect::<String>()
            ));
        }
    }
    let (right, all) = per_class
        .values()
        .fold((0, 0), |(r, a), (cr, ca)| (r + cr, a + ca));
    println!("class        right / all");
    for (class, (r, a)) in &per_class {
        println!(
            "{class:12} {r:>5} / {a:<4} {:.1}%",
            100.0 * *r as f64 / *a as f64
        );
    }
    println!(
        "overall      {right:>5} / {all:<4} {:.1}%",
        100.0 * right as f64 / all as f64
    );
    for w in &wrong {
        println!("  {w}");
    }
    assert!(all >= 150, "the set has {all} queries");
    assert_eq!(per_class.len(), 7, "every class is in the set");
    assert!(
        right * 100 >= all * 95,
        "{right}/{all} right; misclassified:\n{}",
        wrong.join("\n")
    );
    let _ = QueryClass::Identifier;
}
