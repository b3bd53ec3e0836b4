//! `quarry eval` with document vectors made on another machine (a lent GPU): the same
//! evaluation code path, with the embedder split in two.
//!
//! ```text
//! replay_vectors record QUERIES.jsonl REPOS WORK TEXTS.jsonl   # every text the eval would embed
//! replay_vectors replay QUERIES.jsonl REPOS WORK TEXTS.jsonl VECTORS.i8 [MODES]
//! replay_vectors compare TEXTS.jsonl VECTORS.i8 N   # cosine of N rows to the model's own vectors
//! ```
//!
//! Both read the embedder and fusion settings of the workspace in `QUARRY_CONFIG_DIR` (made
//! with `quarry model use …`). `record` runs the evaluation with an embedder that writes each
//! distinct document text (chunks, commits) to TEXTS.jsonl (`{"text": …}` per line, in first-seen
//! order) and answers a placeholder vector: WORK is then scratch. `replay` runs it again in a
//! fresh WORK, answering each document text with row i of VECTORS.i8 (row i: `dims` int8 then
//! an f32 little-endian scale, made from line i of TEXTS.jsonl elsewhere — bench/gpu_vectors.py)
//! and each query with the configured model itself, as `quarry search` would. It prints each
//! mode's report as one JSON line; `SWEEP="key=v1,v2"` scores fusion settings side by side.
//!
//! Why: embedding sympy's 77 swebench_dev trees and 62k commits with EmbeddingGemma takes hours
//! on two cores and about a minute on a GPU machine that cannot hold the repositories.
use anyhow::{bail, Context, Result};
use quarry_core::{content_hash, Embedder};
use quarry_engine::answer::Mode;
use quarry_eval::EvalOptions;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Writes every new document text; answers a unit vector (the index needs one per text).
struct Recorder {
    /// The model the texts are for (its name and size; it embeds nothing here).
    model: Arc<dyn Embedder>,
    seen: Mutex<(HashSet<String>, BufWriter<std::fs::File>)>,
}

impl Embedder for Recorder {
    fn fingerprint(&self) -> String {
        self.model.fingerprint()
    }
    fn dims(&self) -> usize {
        self.model.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut guard = self.seen.lock().unwrap();
        let (seen, out) = &mut *guard;
        for text in texts {
            if seen.insert(content_hash(text.as_bytes())) {
                serde_json::to_writer(&mut *out, &serde_json::json!({ "text": text }))?;
                out.write_all(b"\n")?;
            }
        }
        out.flush()?;
        let mut unit = vec![0.0; self.dims()];
        unit[0] = 1.0;
        Ok(vec![unit; texts.len()])
    }
}

/// Document texts from the table made elsewhere; queries from the model itself.
struct Replayer {
    model: Arc<dyn Embedder>,
    vectors: HashMap<String, Vec<f32>>,
}

impl Embedder for Replayer {
    fn fingerprint(&self) -> String {
        self.model.fingerprint()
    }
    fn dims(&self) -> usize {
        self.model.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts
            .iter()
            .map(|t| {
                self.vectors
                    .get(&content_hash(t.as_bytes()))
                    .cloned()
                    .with_context(|| format!("no vector was made for a text: {:.80?}", t))
            })
            .collect()
    }
    fn embed_queries(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.model.embed_queries(queries)
    }
}

fn read_texts(path: &Path) -> Result<Vec<String>> {
    let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    std::io::BufReader::new(file)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(&line?)?;
            Ok(v["text"]
                .as_str()
                .context("a line without text")?
                .to_string())
        })
        .collect()
}

/// Row i of `path` (dims int8, then an f32 scale) for line i of `texts`, unit length again.
fn read_vectors(texts: &[String], path: &Path, dims: usize) -> Result<HashMap<String, Vec<f32>>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
    let row = dims + 4;
    if bytes.len() != texts.len() * row {
        bail!(
            "{} holds {} bytes: {} texts of {dims} dims need {}",
            path.display(),
            bytes.len(),
            texts.len(),
            texts.len() * row
        );
    }
    Ok(texts
        .iter()
        .zip(bytes.chunks_exact(row))
        .map(|(text, r)| {
            let scale = f32::from_le_bytes(r[dims..].try_into().unwrap());
            let mut v: Vec<f32> = r[..dims].iter().map(|&b| b as i8 as f32 * scale).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|x| *x /= norm);
            (content_hash(text.as_bytes()), v)
        })
        .collect())
}

/// The first `n` texts embedded by the model itself beside their rows: min and mean cosine.
fn compare(model: &dyn Embedder, texts: &Path, vectors: &Path, n: usize) -> Result<()> {
    let lines = read_texts(texts)?;
    let table = read_vectors(&lines, vectors, model.dims())?;
    let sample: Vec<&str> = lines.iter().take(n).map(String::as_str).collect();
    let started = std::time::Instant::now();
    let own = model.embed(&sample)?;
    let cosines: Vec<f32> = sample
        .iter()
        .zip(&own)
        .map(|(t, v)| {
            let other = &table[&content_hash(t.as_bytes())];
            v.iter().zip(other).map(|(a, b)| a * b).sum::<f32>()
        })
        .collect();
    let min = cosines.iter().copied().fold(f32::MAX, f32::min);
    let mean = cosines.iter().sum::<f32>() / cosines.len().max(1) as f32;
    println!(
        "{} texts: cosine to {} min {min:.4} mean {mean:.4} ({:.1} texts/s here)",
        cosines.len(),
        model.fingerprint(),
        cosines.len() as f64 / started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `SWEEP="key=v1,v2"`: the fusion settings scored side by side on the same index, as
/// `quarry eval --sweep` does.
fn sweep(
    config: &quarry_engine::Config,
) -> Result<Vec<(String, quarry_engine::fusion::FusionConfig)>> {
    let sweeps: Vec<String> = std::env::var("SWEEP").into_iter().collect();
    Ok(quarry_eval::swept_settings(config, &sweeps)?
        .into_iter()
        .map(|(label, cfg)| (label, cfg.fusion()))
        .collect())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config_dir =
        PathBuf::from(std::env::var("QUARRY_CONFIG_DIR").context("set QUARRY_CONFIG_DIR")?);
    let config = quarry_engine::Config::load(&config_dir)?;
    let model = quarry_engine::build_embedder(&config.embedder_choice()?)?
        .context("the configured workspace has no embedder")?;
    if args.first().map(String::as_str) == Some("compare") {
        let (Some(texts), Some(vectors), Some(n)) = (args.get(1), args.get(2), args.get(3)) else {
            bail!("usage: replay_vectors compare TEXTS VECTORS N");
        };
        return compare(
            model.as_ref(),
            Path::new(texts),
            Path::new(vectors),
            n.parse()?,
        );
    }
    let usage = "replay_vectors record QUERIES REPOS WORK TEXTS | replay QUERIES REPOS WORK TEXTS VECTORS [MODES]";
    let (Some(verb), Some(queries), Some(repos), Some(work), Some(texts)) = (
        args.first(),
        args.get(1),
        args.get(2),
        args.get(3),
        args.get(4),
    ) else {
        bail!("usage: {usage}");
    };
    let (embedder, modes): (Arc<dyn Embedder>, Vec<Mode>) = match verb.as_str() {
        "record" => {
            let out = std::fs::File::create(texts)?;
            let recorder = Recorder {
                model,
                seen: Mutex::new((HashSet::new(), BufWriter::new(out))),
            };
            (Arc::new(recorder), vec![Mode::Semantic])
        }
        "replay" => {
            let vectors_file = args.get(5).context(usage)?;
            let lines = read_texts(Path::new(texts))?;
            let vectors = read_vectors(&lines, Path::new(vectors_file), model.dims())?;
            eprintln!("{} vectors read", vectors.len());
            let modes = args
                .get(6)
                .map(String::as_str)
                .unwrap_or("lexical,semantic,hybrid")
                .split(',')
                .map(|m| match m {
                    "lexical" => Ok(Mode::Lexical),
                    "semantic" => Ok(Mode::Semantic),
                    "hybrid" => Ok(Mode::Hybrid),
                    "auto" => Ok(Mode::Auto),
                    other => bail!("unknown mode {other}"),
                })
                .collect::<Result<_>>()?;
            (Arc::new(Replayer { model, vectors }), modes)
        }
        other => bail!("unknown verb {other}: {usage}"),
    };
    let opts = EvalOptions {
        modes,
        repos_dir: Some(PathBuf::from(repos)),
        work_dir: PathBuf::from(work),
        candidates: 300,
        language: None,
        max_queries: None,
        weights: Default::default(),
        fusion: config.fusion(),
        variants: sweep(&config)?,
        embedder: Some(embedder),
        agentic: false,
        history: false,
        route: false,
        judge: None,
    };
    let reports = quarry_eval::run(Path::new(queries), &opts, &quarry_engine::NoProgress)?;
    for report in reports {
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}
