//! Token savings of outlines over whole files, counted with a real BPE tokenizer (cl100k, the
//! GPT-4 tokenizer; Claude's is not public, and BPE counts of code track each other closely).
//!
//!     cargo run --release -p quarry-outline --example token_savings -- DIR [DIR...]
//!
//! Every code file over 100 lines that the indexer would take (.gitignore etc. respected):
//! tokens of the file, tokens of `render(outline)`, and the saving; prints the distribution.

#[path = "common/outlined.rs"]
mod outlined;

fn main() -> anyhow::Result<()> {
    let bpe = tiktoken_rs::cl100k_base()?;
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(!dirs.is_empty(), "usage: token_savings DIR [DIR...]");
    for dir in dirs {
        let mut savings = Vec::new();
        let (mut raw_total, mut outline_total) = (0usize, 0usize);
        let mut worst: Vec<(f64, String)> = Vec::new();
        for file in outlined::outlined_files(&dir)? {
            let (text, rendered) = (&file.text, &file.rendered);
            let raw = bpe.encode_ordinary(text).len();
            let small = bpe.encode_ordinary(rendered).len();
            raw_total += raw;
            outline_total += small;
            let saving = 1.0 - small as f64 / raw.max(1) as f64;
            savings.push(saving);
            worst.push((saving, file.rel_path));
        }
        savings.sort_by(f64::total_cmp);
        worst.sort_by(|a, b| a.0.total_cmp(&b.0));
        let pct = |q: f64| savings[((savings.len() - 1) as f64 * q).round() as usize] * 100.0;
        if savings.is_empty() {
            println!("{dir}: no code file over 100 lines");
            continue;
        }
        println!(
            "{dir}: {} files > 100 lines · tokens {raw_total} → {outline_total} ({:.1}% fewer overall) · saving per file: median {:.1}%, p10 {:.1}%, min {:.1}%",
            savings.len(),
            (1.0 - outline_total as f64 / raw_total as f64) * 100.0,
            pct(0.5),
            pct(0.1),
            savings[0] * 100.0,
        );
        for (saving, path) in worst.iter().take(3) {
            println!("  least saved: {path} {:.1}%", saving * 100.0);
        }
    }
    Ok(())
}
