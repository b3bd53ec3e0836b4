//! How big outlines are next to their files, in characters (what an agent's context holds):
//! `chars(render(outline)) / chars(file)` for every code file over 100 lines.
//!
//!     cargo run --release -p quarry-outline --example char_ratio -- [--files] [--worst N] DIR [DIR...]
//!
//! Per directory: the mean of the per-file ratios, the total/total ratio, the median and p90,
//! and the worst files; `--files` prints every file's ratio too. A FILE instead of a DIR prints
//! its outline and ratio. The files are the ones the
//! indexer would take (.gitignore etc. respected), as in the `token_savings` example.

#[path = "common/outlined.rs"]
mod outlined;

use quarry_core::Language;

fn main() -> anyhow::Result<()> {
    let mut dirs = Vec::new();
    let (mut per_file, mut worst_n) = (false, 5usize);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--files" => per_file = true,
            "--worst" => worst_n = args.next().and_then(|n| n.parse().ok()).unwrap_or(5),
            _ => dirs.push(arg),
        }
    }
    anyhow::ensure!(
        !dirs.is_empty(),
        "usage: char_ratio [--files] [--worst N] DIR [DIR...]"
    );
    for dir in dirs {
        let path = std::path::Path::new(&dir);
        if path.is_file() {
            // A single file: print its outline and its ratio.
            let text = std::fs::read_to_string(path)?;
            let outline = quarry_outline::outline(&dir, Language::detect(path), &text);
            let rendered = quarry_outline::render(&outline);
            print!("{rendered}");
            let (raw, small) = (text.chars().count(), rendered.chars().count());
            println!(
                "[{small}/{raw} chars = {:.3}]",
                small as f64 / raw.max(1) as f64
            );
            continue;
        }
        let mut rows: Vec<(f64, usize, usize, String)> = Vec::new();
        for file in outlined::outlined_files(&dir)? {
            let (text, rendered) = (&file.text, &file.rendered);
            let (raw, small) = (text.chars().count(), rendered.chars().count());
            rows.push((small as f64 / raw.max(1) as f64, raw, small, file.rel_path));
        }
        if rows.is_empty() {
            println!("{dir}: no code file over 100 lines");
            continue;
        }
        rows.sort_by(|a, b| b.0.total_cmp(&a.0));
        let raw_total: usize = rows.iter().map(|r| r.1).sum();
        let small_total: usize = rows.iter().map(|r| r.2).sum();
        let mean = rows.iter().map(|r| r.0).sum::<f64>() / rows.len() as f64;
        let at = |q: f64| rows[((rows.len() - 1) as f64 * (1.0 - q)).round() as usize].0;
        println!(
            "{dir}: {} files > 100 lines · chars {raw_total} → {small_total} · total/total {:.3} · mean {:.3} · median {:.3} · p90 {:.3}",
            rows.len(),
            small_total as f64 / raw_total as f64,
            mean,
            at(0.5),
            at(0.9),
        );
        for (ratio, raw, small, path) in rows.iter().take(worst_n) {
            println!("  worst: {path} {ratio:.3} ({small}/{raw})");
        }
        if per_file {
            for (ratio, raw, small, path) in &rows {
                println!("    {ratio:.3} {small:>6}/{raw:<7} {path}");
            }
        }
    }
    Ok(())
}
