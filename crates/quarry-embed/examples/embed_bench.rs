//! Throughput of LocalEmbedder on real source code.
//!
//!     cargo run --release -p quarry-embed --example embed_bench -- [DIR] [--n N]
//!         [--max 128,256] [--batch B] [--threads T] [--chars C]
//!
//! Reads .py/.rs files under DIR (default /work/bench-data/sympy, else this workspace's crates/),
//! cuts them into windows of C characters (default 1500, enough to fill 256 tokens), embeds the
//! first N (default 200) with each max-token setting, and prints chunks/s and tokens/s.

use std::path::{Path, PathBuf};
use std::time::Instant;

use quarry_embed::{EmbedOptions, Embedder, LocalEmbedder};

// What a quarry binary should do too: glibc malloc churn costs 30–50% of throughput.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut n = 200usize;
    let mut maxes = vec![128usize, 256];
    let mut batch = EmbedOptions::default().batch_size;
    let mut threads = None;
    let mut chars = 1500usize;
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{a} needs a value"))
        };
        match a.as_str() {
            "--n" => n = val()?.parse()?,
            "--max" => {
                maxes = val()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--batch" => batch = val()?.parse()?,
            "--threads" => threads = Some(val()?.parse()?),
            "--chars" => chars = val()?.parse()?,
            _ if !a.starts_with("--") => dir = Some(PathBuf::from(&a)),
            _ => anyhow::bail!("unknown option {a}"),
        }
    }
    let dir = dir.unwrap_or_else(|| {
        let sympy = PathBuf::from("/work/bench-data/sympy");
        if sympy.is_dir() {
            sympy
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
        }
    });

    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let mut texts = Vec::new();
    'files: for f in &files {
        let Ok(s) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut window = String::new();
        for line in s.lines() {
            window.push_str(line);
            window.push('\n');
            if window.len() >= chars {
                texts.push(std::mem::take(&mut window));
                if texts.len() >= n {
                    break 'files;
                }
            }
        }
    }
    anyhow::ensure!(
        !texts.is_empty(),
        "no .py/.rs files under {}",
        dir.display()
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    println!(
        "{} chunks of ~{chars} chars from {} ({} files); batch {batch}, threads {}",
        refs.len(),
        dir.display(),
        files.len(),
        threads.map_or("default".to_string(), |t: usize| t.to_string())
    );

    for &max_tokens in &maxes {
        let t0 = Instant::now();
        let e = LocalEmbedder::new(EmbedOptions {
            max_tokens,
            batch_size: batch,
            threads,
        })?;
        let load = t0.elapsed();
        let tokens: usize = e.tokenize(&refs)?.iter().map(Vec::len).sum();
        e.embed(&refs[..batch.min(refs.len())])?; // warm-up
        let (t, cpu0) = (Instant::now(), cpu_seconds());
        let v = e.embed(&refs)?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        assert_eq!(v.len(), refs.len());
        println!(
            "max_tokens {max_tokens:3}: {:6.1} chunks/s  {:7.0} tokens/s  ({:.1} chunks per CPU-second; avg {:.0} tokens/chunk, {:.2}s for {}; load {:.2}s)",
            refs.len() as f64 / secs,
            tokens as f64 / secs,
            refs.len() as f64 / cpu,
            tokens as f64 / refs.len() as f64,
            secs,
            refs.len(),
            load.as_secs_f64()
        );
    }
    Ok(())
}

/// User + system CPU time of this process, all threads (Linux; 0 elsewhere). On a busy machine
/// chunks per CPU-second is steadier than wall-clock throughput, at one thread especially.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some(end) = stat.rfind(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = stat[end + 2..].split(' ').collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0 // utime, stime in clock ticks (USER_HZ = 100)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.flatten() {
        let p = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("py" | "rs")) {
            out.push(p);
        }
    }
}
