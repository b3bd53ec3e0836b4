//! Warm search latency: opens a workspace once and runs each query of a file (one per line)
//! `--rounds` times, then prints p50/p95/max in milliseconds as JSON.
//!
//! `[MODE=hybrid] cargo run --release -p quarry-engine --example search_latency -- INDEX_DIR QUERIES [ROUNDS]`

use quarry_engine::{Mode, SearchRequest, Workspace};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(
        args.len() >= 3,
        "usage: search_latency INDEX_DIR QUERIES_FILE [ROUNDS]"
    );
    let mut ws = Workspace::open_existing(std::path::Path::new(&args[1]))?;
    // MODE=hybrid|semantic measures those modes with the installed model.
    let mode = match std::env::var("MODE").as_deref() {
        Ok("hybrid") => Mode::Hybrid,
        Ok("semantic") => Mode::Semantic,
        _ => Mode::Lexical,
    };
    if mode != Mode::Lexical {
        if let Some(note) = ws.attach_embedder(quarry_engine::EmbedPurpose::Searching)? {
            anyhow::bail!("{}", note.message);
        }
    }
    let request = |q: &str| {
        let mut r = SearchRequest::new(q);
        r.mode = mode;
        r
    };
    let queries: Vec<String> = std::fs::read_to_string(&args[2])?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let rounds: usize = args.get(3).map(|r| r.parse()).transpose()?.unwrap_or(20);
    let mut samples = Vec::new();
    for q in &queries {
        ws.search(&request(q))?; // warm the page cache and statement cache
    }
    for _ in 0..rounds {
        for q in &queries {
            let started = Instant::now();
            let response = ws.search(&request(q))?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(response);
        }
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let at =
        |q: f64| samples[((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    println!(
        "{}",
        serde_json::json!({"searches": samples.len(), "p50_ms": at(0.5), "p95_ms": at(0.95), "max_ms": at(1.0)})
    );
    Ok(())
}
