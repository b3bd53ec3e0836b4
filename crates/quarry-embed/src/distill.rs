//! A static embedding model distilled from the installed transformer, after the Model2Vec
//! method: every vocabulary token is embedded once by the teacher (`[CLS] token [SEP]`,
//! mean-pooled), the table is centred, and each row is weighted by how rare its token is
//! (Zipf: log(1 + rank), WordPiece vocabularies being ordered roughly by frequency). A text's
//! vector is then the mean of its tokens' rows — no network, thousands of texts a second.
//!
//! Written here rather than taken from a crate: no Rust crate distils (model2vec-rs only
//! loads published tables, which would mean a hub download). Model2Vec also reduces the
//! table with PCA; at the teacher's 384 dimensions a PCA that keeps every component is a
//! rotation, which leaves cosine similarities unchanged, so only its centring is kept.
//!
//! Files in the output folder: `static.json` (teacher fingerprint, dims, vocabulary size,
//! weighting), `embeddings.f32` (vocabulary × dims, little-endian f32), `tokenizer.json`.

use crate::{LocalEmbedder, ModelDir};
use anyhow::{anyhow, bail, Context, Result};
use quarry_core::Embedder;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// The marker of a static model folder.
pub const STATIC_META: &str = "static.json";
const TABLE_FILE: &str = "embeddings.f32";
/// Tokens per text: the table lookup is cheap, so take far more than the transformer does.
const STATIC_MAX_TOKENS: usize = 512;
/// Tokens per teacher batch while distilling.
const DISTILL_BATCH: usize = 256;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StaticMeta {
    pub teacher: String,
    pub dims: usize,
    pub vocab_size: usize,
    pub weighting: String,
}

/// Whether `dir` holds a distilled static model.
pub fn is_static_model(dir: &Path) -> bool {
    dir.join(STATIC_META).is_file()
}

/// Distils `teacher` (loaded from `teacher_dir`) into `out`. `progress(done, total)` is called
/// after each batch. Writes into a temporary folder renamed at the end, so an interrupted run
/// leaves no half model.
pub fn distill(
    teacher: &LocalEmbedder,
    teacher_dir: &ModelDir,
    out: &Path,
    mut progress: impl FnMut(usize, usize),
) -> Result<StaticMeta> {
    let tokenizer = &teacher.tokenizer;
    let vocab_size = tokenizer.get_vocab_size(true);
    let id = |t: &str| {
        tokenizer
            .token_to_id(t)
            .ok_or_else(|| anyhow!("the teacher's vocabulary has no {t}"))
    };
    let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
    let dims = teacher.dims();
    let special = |token: &str| token.starts_with('[') && token.ends_with(']');

    let mut table = vec![0f32; vocab_size * dims];
    let ids: Vec<u32> = (0..vocab_size as u32)
        .filter(|&i| tokenizer.id_to_token(i).is_some_and(|t| !special(&t)))
        .collect();
    for (done, batch) in ids.chunks(DISTILL_BATCH).enumerate() {
        let rows: Vec<[u32; 3]> = batch.iter().map(|&i| [cls, i, sep]).collect();
        let rows: Vec<&[u32]> = rows.iter().map(|r| r.as_slice()).collect();
        let vectors = teacher.run(|| teacher.forward(&rows))?;
        for (&i, v) in batch.iter().zip(vectors) {
            table[i as usize * dims..(i as usize + 1) * dims].copy_from_slice(&v);
        }
        progress(((done + 1) * DISTILL_BATCH).min(ids.len()), ids.len());
    }

    // Centre over the real tokens, then weight each row by log(1 + rank).
    let mut mean = vec![0f64; dims];
    for &i in &ids {
        for (m, x) in mean.iter_mut().zip(&table[i as usize * dims..]) {
            *m += *x as f64;
        }
    }
    mean.iter_mut().for_each(|m| *m /= ids.len().max(1) as f64);
    let variant = std::env::var("QUARRY_DISTILL_VARIANT").unwrap_or_default();
    if variant.contains("nocenter") {
        mean.iter_mut().for_each(|m| *m = 0.0);
    }
    for &i in &ids {
        let weight = if variant.contains("noweight") {
            1.0
        } else {
            (1.0 + i as f64).ln()
        };
        let row = &mut table[i as usize * dims..(i as usize + 1) * dims];
        for (x, m) in row.iter_mut().zip(&mean) {
            *x = ((*x as f64 - m) * weight) as f32;
        }
    }

    let meta = StaticMeta {
        teacher: teacher.fingerprint(),
        dims,
        vocab_size,
        weighting: "centred, zipf log(1+rank)".into(),
    };
    let tmp = out.with_extension("partial");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let bytes: Vec<u8> = table.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(tmp.join(TABLE_FILE), bytes)?;
    std::fs::copy(teacher_dir.tokenizer_path(), tmp.join("tokenizer.json"))?;
    for notice in ["LICENSE", "NOTICE"] {
        let from = teacher_dir.path().join(notice);
        if from.is_file() {
            std::fs::copy(from, tmp.join(notice))?;
        }
    }
    std::fs::write(tmp.join(STATIC_META), serde_json::to_vec_pretty(&meta)?)?;
    let _ = std::fs::remove_dir_all(out);
    std::fs::rename(&tmp, out).with_context(|| format!("cannot create {}", out.display()))?;
    Ok(meta)
}

/// Embeds a text as the normalised mean of its tokens' rows in the distilled table.
pub struct StaticEmbedder {
    tokenizer: Tokenizer,
    table: Vec<f32>,
    meta: StaticMeta,
    fingerprint: String,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    pub fn open(dir: &Path) -> Result<Self> {
        let meta_path = dir.join(STATIC_META);
        let meta: StaticMeta = serde_json::from_slice(
            &std::fs::read(&meta_path)
                .with_context(|| format!("cannot read {}", meta_path.display()))?,
        )
        .with_context(|| format!("{} is not a static model description", meta_path.display()))?;
        let bytes = std::fs::read(dir.join(TABLE_FILE))
            .with_context(|| format!("cannot read {}", dir.join(TABLE_FILE).display()))?;
        if bytes.len() != meta.vocab_size * meta.dims * 4 {
            bail!(
                "{} has {} bytes, not {} × {} floats: distil it again (`quarry model distill`)",
                dir.join(TABLE_FILE).display(),
                bytes.len(),
                meta.vocab_size,
                meta.dims
            );
        }
        let table = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| anyhow!("loading tokenizer in {}: {e}", dir.display()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: STATIC_MAX_TOKENS,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| anyhow!("configuring truncation: {e}"))?;
        // The table is a function of the teacher: its fingerprint names the table.
        let teacher_hash = crate::hex(&<sha2::Sha256 as sha2::Digest>::digest(
            meta.teacher.as_bytes(),
        ))[..16]
            .to_string();
        let fingerprint = format!(
            "static-distilled/teacher:{teacher_hash}/zipf/dims={}",
            meta.dims
        );
        Ok(Self {
            tokenizer,
            table,
            meta,
            fingerprint,
        })
    }

    pub fn meta(&self) -> &StaticMeta {
        &self.meta
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| anyhow!("tokenizing: {e}"))?;
        let dims = self.meta.dims;
        let mut v = vec![0f32; dims];
        for &id in encoding.get_ids() {
            let at = id as usize * dims;
            if let Some(row) = self.table.get(at..at + dims) {
                v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(v)
    }
}

impl Embedder for StaticEmbedder {
    fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }

    fn dims(&self) -> usize {
        self.meta.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        use rayon::prelude::*;
        texts.par_iter().map(|t| self.embed_one(t)).collect()
    }
}
