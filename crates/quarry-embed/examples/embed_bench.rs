//! Embedding throughput and agreement of quarry's runtimes, side by side on the same texts.
//!
//!     cargo run --release -p quarry-embed --example embed_bench -- \
//!         (--index INDEX.sqlite [--repo NAME] | DIR) [--n N] [--max-tokens T] [--batch B]
//!         [--threads T] [--runtimes candle,onnx-fp32,onnx-int8,cuda-fp32,cuda-int8]
//!         [--model embeddinggemma]
//!
//! Texts: with `--index`, the real embedding texts (`quarry_core::embed_text`) of N chunks drawn
//! (fixed seed) from a quarry index, of one repository with `--repo`; with DIR, windows of 600
//! characters of its .py/.rs files. Each runtime embeds all N after one warm-up batch; the
//! first runtime listed is the reference the others' cosines are measured against. `cuda-*` run
//! onnxruntime's CUDA provider (a GPU build of onnxruntime named by `QUARRY_ORT_LIB`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use quarry_embed::{
    Device, EmbedOptions, Embedder, LocalEmbedder, ModelDir, Precision, Runtime, MINILM,
};

// What a quarry binary does too: glibc malloc churn costs candle 30–50% of its throughput.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut index, mut repo) = (None::<PathBuf>, None::<PathBuf>, None::<String>);
    let mut n = 500usize;
    let mut max_tokens = 128usize;
    let mut batch = EmbedOptions::default().batch_size;
    let mut threads = None;
    let mut runtimes = vec!["candle".to_string(), "onnx-fp32".into(), "onnx-int8".into()];
    let mut model = &MINILM;
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{a} needs a value"))
        };
        match a.as_str() {
            "--n" => n = val()?.parse()?,
            "--max-tokens" => max_tokens = val()?.parse()?,
            "--batch" => batch = val()?.parse()?,
            "--threads" => threads = Some(val()?.parse()?),
            "--index" => index = Some(PathBuf::from(val()?)),
            "--repo" => repo = Some(val()?),
            "--runtimes" => runtimes = val()?.split(',').map(str::to_string).collect(),
            "--model" => {
                let name = val()?;
                model = quarry_embed::local_model(&name)
                    .ok_or_else(|| anyhow::anyhow!("unknown model {name}"))?;
            }
            _ if !a.starts_with("--") => dir = Some(PathBuf::from(&a)),
            _ => anyhow::bail!("unknown option {a}"),
        }
    }
    let texts = match (&index, &dir) {
        (Some(index), _) => index_texts(index, repo.as_deref(), n)?,
        (None, Some(dir)) => file_windows(dir, n),
        (None, None) => file_windows(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."), n),
    };
    anyhow::ensure!(!texts.is_empty(), "no texts to embed");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    println!(
        "{}: {} texts from {}; max_tokens {max_tokens}, batch {batch}, threads {}",
        model.name,
        refs.len(),
        index
            .as_ref()
            .or(dir.as_ref())
            .map_or("this workspace".into(), |p| p.display().to_string()),
        threads.map_or("default".to_string(), |t: usize| t.to_string())
    );

    let mut reference: Option<(String, Vec<Vec<f32>>, f64)> = None;
    for name in &runtimes {
        let (runtime, precision, device) = match name.as_str() {
            "candle" => (Runtime::Candle, Precision::Fp32, Device::Cpu),
            "onnx-fp32" => (Runtime::Onnx, Precision::Fp32, Device::Cpu),
            "onnx-int8" => (Runtime::Onnx, Precision::Int8, Device::Cpu),
            "cuda-fp32" => (Runtime::Onnx, Precision::Fp32, Device::Cuda),
            "cuda-int8" => (Runtime::Onnx, Precision::Int8, Device::Cuda),
            other => anyhow::bail!(
                "unknown runtime {other}: candle, onnx-fp32, onnx-int8, cuda-fp32 or cuda-int8"
            ),
        };
        let t0 = Instant::now();
        let e = LocalEmbedder::from_dir(
            &ModelDir::locate_model(model)?,
            EmbedOptions {
                max_tokens,
                batch_size: batch,
                threads,
                runtime,
                precision,
                device,
            },
        )?;
        let load = t0.elapsed();
        let tokens: usize = e.tokenize(&refs)?.iter().map(Vec::len).sum();
        e.embed(&refs[..batch.min(refs.len())])?; // warm-up
        let (t, cpu0) = (Instant::now(), cpu_seconds());
        let v = e.embed(&refs)?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let rate = refs.len() as f64 / secs;
        let mut line = format!(
            "{name:10} {rate:6.1} texts/s  {:7.0} tokens/s  {:5.1} texts per CPU-s  (avg {:.0} tokens; load {:.2}s)",
            tokens as f64 / secs,
            refs.len() as f64 / cpu.max(1e-9),
            tokens as f64 / refs.len() as f64,
            load.as_secs_f64()
        );
        match &reference {
            None => reference = Some((name.clone(), v, rate)),
            Some((ref_name, ref_v, ref_rate)) => {
                let mut cos: Vec<f32> = v
                    .iter()
                    .zip(ref_v)
                    .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum())
                    .collect();
                cos.sort_by(f32::total_cmp);
                let mean = cos.iter().sum::<f32>() / cos.len() as f32;
                line += &format!(
                    "  {:.2}x {ref_name}; cosine to {ref_name}: min {:.4} p1 {:.4} mean {:.5}",
                    rate / ref_rate,
                    cos[0],
                    cos[cos.len() / 100],
                    mean
                );
            }
        }
        println!("{line}");
    }
    Ok(())
}

/// The embedding texts of `n` chunks of a quarry index, drawn with a fixed seed.
fn index_texts(index: &Path, repo: Option<&str>, n: usize) -> anyhow::Result<Vec<String>> {
    let db =
        rusqlite::Connection::open_with_flags(index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = db.prepare(
        "SELECT files.path, chunks.kind, chunks.symbol, chunks.signature, chunks.text
         FROM chunks JOIN files ON files.id = chunks.file_id JOIN repos ON repos.id = files.repo_id
         WHERE ?1 IS NULL OR repos.name = ?1 ORDER BY chunks.id",
    )?;
    let rows = stmt
        .query_map([repo], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    // A fixed-seed draw without replacement (xorshift; the sample only has to be repeatable).
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let mut state = 0x2026_1123_u64;
    for i in (1..order.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    Ok(order
        .into_iter()
        .take(n)
        .map(|i| {
            let (path, kind, symbol, signature, text) = &rows[i];
            quarry_core::embed_text(&quarry_core::EmbedSource {
                path,
                kind,
                symbol: symbol.as_deref(),
                signature: signature.as_deref(),
                text,
            })
        })
        .collect())
}

/// Windows of ~600 characters of the .py/.rs files under `dir`.
fn file_windows(dir: &Path, n: usize) -> Vec<String> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    let mut texts = Vec::new();
    for f in &files {
        let Ok(s) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut window = String::new();
        for line in s.lines() {
            window.push_str(line);
            window.push('\n');
            if window.len() >= 600 {
                texts.push(std::mem::take(&mut window));
                if texts.len() >= n {
                    return texts;
                }
            }
        }
    }
    texts
}

/// User + system CPU time of this process, all threads (Linux; 0 elsewhere). On a busy machine
/// texts per CPU-second is steadier than wall-clock throughput.
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
        if p.is_dir() {
            if !p.file_name().is_some_and(|n| n == "target" || n == ".git") {
                walk(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "py" || e == "rs") {
            out.push(p);
        }
    }
}
