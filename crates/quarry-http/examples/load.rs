//! Load client for `quarry serve`: N concurrent clients send code searches (the lines of a
//! query file, round robin) for a fixed time; prints requests/s, latency p50/p99 and errors
//! as JSON. A client of our own (ureq, one thread per client) so the benchmark needs nothing
//! installed beyond cargo.
//!
//! cargo run --release -p quarry-http --example load -- BASE_URL QUERIES [CLIENTS] [SECONDS] [MODE]

use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = args
        .get(1)
        .expect("usage: load BASE_URL QUERIES [CLIENTS] [SECONDS] [MODE]")
        .clone();
    let queries: Vec<String> = std::fs::read_to_string(args.get(2).expect("QUERIES file"))
        .expect("readable query file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let clients: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(8);
    let seconds: f64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let mode = args.get(5).cloned().unwrap_or_else(|| "lexical".into());
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (base, queries, mode) = (base.clone(), queries.clone(), mode.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut latencies = Vec::new();
                let mut errors = 0u64;
                let mut i = c;
                while Instant::now() < until {
                    let q = &queries[i % queries.len()];
                    i += clients;
                    let t = Instant::now();
                    let ok = agent
                        .get(format!("{base}/api/search/code"))
                        .query("query", q)
                        .query("mode", &mode)
                        .query("limit", "10")
                        .call()
                        .map(|mut r| r.status() == 200 && r.body_mut().read_to_vec().is_ok())
                        .unwrap_or(false);
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                    errors += u64::from(!ok);
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for t in threads {
        let (l, e) = t.join().expect("client thread");
        all.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{}",
        serde_json::json!({
            "clients": clients,
            "seconds": (elapsed * 10.0).round() / 10.0,
            "requests": all.len(),
            "requests_per_s": (all.len() as f64 / elapsed).round(),
            "p50_ms": (pct(0.50) * 10.0).round() / 10.0,
            "p99_ms": (pct(0.99) * 10.0).round() / 10.0,
            "errors": errors,
        })
    );
}
