//! The fast runtime: the model's ONNX graph (int8 weights by default) run by onnxruntime, loaded at run time from the shared library the
//! installer took from the PyPI `onnxruntime` wheel (`ort`'s `load-dynamic`: nothing is
//! downloaded at build or run time, and a quarry without the library still runs, on candle).
//!
//! Why onnxruntime and not candle alone: on the same 2-core CPU it runs the fp32 graph about
//! twice as fast as candle's BERT, and its int8 kernels (VNNI dot products) about twice as fast
//! again (bench/embed.sh; docs/EVAL.md has the figures and the cosines to fp32).

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use anyhow::{anyhow, Context, Result};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;

use crate::models::Architecture;
use crate::{right_pad, Device};

pub(crate) struct OnnxGraph {
    // `Session::run` takes `&mut self`; batches run one at a time anyway.
    session: Mutex<Session>,
    dims: usize,
    architecture: Architecture,
}

/// onnxruntime allows one environment per process, and the library is loaded once: the
/// first load's outcome (or its error) is kept. A missing file is checked before and never
/// kept, so a later load with the file in place still works.
fn environment(library: &Path) -> Result<Environment> {
    static ENV: OnceLock<std::result::Result<Environment, String>> = OnceLock::new();
    if ENV.get().is_none() && !library.is_file() {
        anyhow::bail!(
            "cannot load onnxruntime: {} does not exist",
            library.display()
        );
    }
    ENV.get_or_init(|| {
        ort::init_from(library)
            .map_err(|e| e.to_string())?
            .with_name("quarry")
            // onnxruntime's Linux build carries Microsoft's 1DS telemetry, on unless turned
            // off (here, and by ORT_DISABLE_TELEMETRY, which the quarry binary sets so that
            // not even its event store is created): quarry sends nothing anywhere.
            .with_telemetry(false)
            .build()
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(|e| anyhow!("cannot load onnxruntime: {e}"))
}

impl OnnxGraph {
    pub(crate) fn load(
        library: &Path,
        graph: &Path,
        threads: Option<usize>,
        device: Device,
        dims: usize,
        architecture: Architecture,
    ) -> Result<Self> {
        if !graph.is_file() {
            anyhow::bail!("{} does not exist", graph.display());
        }
        let env = environment(library)?;
        let builder = |e: ort::Error<ort::session::builder::SessionBuilder>| {
            anyhow!("configuring onnxruntime: {e}")
        };
        let mut session = Session::builder(&env)
            .context("starting an onnxruntime session")?
            .with_optimization_level(GraphOptimizationLevel::All)
            .map_err(builder)?
            .with_inter_threads(1)
            .map_err(builder)?;
        // Unset, onnxruntime uses the physical cores (as candle does): hyper-threads share
        // the vector units and slow matrix products down.
        if let Some(n) = threads {
            session = session.with_intra_threads(n).map_err(builder)?;
        }
        if device == Device::Cuda {
            session = session
                .with_execution_providers([ort::ep::CUDA::default().build().error_on_failure()])
                .map_err(|e| {
                    let e = e.to_string();
                    anyhow!(
                        "onnxruntime cannot use CUDA ({}): it needs onnxruntime's GPU build \
                         (or QUARRY_ORT_LIB naming one), NVIDIA's driver, and CUDA 13's cuBLAS, \
                         cudart and cuRAND on the library path",
                        e.trim_end()
                    )
                })?;
        }
        let session = session
            .commit_from_file(graph)
            .with_context(|| format!("loading {}", graph.display()))?;
        Ok(Self {
            session: Mutex::new(session),
            dims,
            architecture,
        })
    }

    /// One batch of token ids (right-padded here) through the graph: unit-length sentence
    /// vectors, one per row.
    pub(crate) fn forward(&self, rows: &[&[u32]], pad_id: u32) -> Result<Vec<Vec<f32>>> {
        match self.architecture {
            Architecture::Bert => self.forward_bert(rows, pad_id),
            Architecture::Gemma3 => self.forward_sentences(rows, pad_id),
        }
    }

    /// A graph that answers `sentence_embedding` ([batch, dims]; pooled, projected and
    /// normalised inside, scripts/build-onnx-gemma.py) from int64 ids and mask.
    fn forward_sentences(&self, rows: &[&[u32]], pad_id: u32) -> Result<Vec<Vec<f32>>> {
        let padded = right_pad(rows, pad_id);
        let shape = [padded.batch, padded.seq];
        let ids: Vec<i64> = padded.ids.into_iter().map(i64::from).collect();
        let mask: Vec<i64> = padded.mask.into_iter().map(i64::from).collect();
        let mut session = self
            .session
            .lock()
            .map_err(|_| anyhow!("the onnxruntime session was poisoned by a panic"))?;
        let outputs = session.run(ort::inputs![
            "input_ids" => Tensor::from_array((shape, ids))?,
            "attention_mask" => Tensor::from_array((shape, mask))?,
        ])?;
        let (out_shape, vectors) = outputs["sentence_embedding"].try_extract_tensor::<f32>()?;
        anyhow::ensure!(
            out_shape.len() == 2
                && out_shape[0] as usize == padded.batch
                && out_shape[1] as usize == self.dims,
            "the model answered a tensor of shape {out_shape:?}, not [{}, {}]",
            padded.batch,
            self.dims
        );
        Ok(vectors
            .chunks_exact(self.dims)
            .map(<[f32]>::to_vec)
            .collect())
    }

    /// A BERT graph (onnxruntime's fused transformer operators, scripts/build-onnx-model.py)
    /// answers token states: mean-pooled over the real tokens and L2-normalised here, the same
    /// pooling as the candle runtime.
    fn forward_bert(&self, rows: &[&[u32]], pad_id: u32) -> Result<Vec<Vec<f32>>> {
        let padded = right_pad(rows, pad_id);
        let (batch, seq) = (padded.batch, padded.seq);
        // The graph takes int32 ids and mask (EmbedLayerNormalization's inputs).
        let input_ids: Vec<i32> = padded.ids.into_iter().map(|t| t as i32).collect();
        let mask: Vec<i32> = padded.mask.into_iter().map(|m| m as i32).collect();
        let shape = [batch, seq];
        let input_ids = Tensor::from_array((shape, input_ids))?;
        let attention_mask = Tensor::from_array((shape, mask))?;
        let mut session = self
            .session
            .lock()
            .map_err(|_| anyhow!("the onnxruntime session was poisoned by a panic"))?;
        let outputs = session.run(ort::inputs![
            "input_ids" => input_ids,
            "attention_mask" => attention_mask,
        ])?;
        let (out_shape, hidden) = outputs["last_hidden_state"].try_extract_tensor::<f32>()?;
        anyhow::ensure!(
            out_shape.len() == 3
                && out_shape[0] as usize == batch
                && out_shape[1] as usize == seq
                && out_shape[2] as usize == self.dims,
            "the model answered a tensor of shape {out_shape:?}, not [{batch}, {seq}, {}]",
            self.dims
        );
        Ok(rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let tokens = &hidden[r * seq * self.dims..][..row.len() * self.dims];
                mean_l2(tokens, self.dims)
            })
            .collect())
    }
}

/// The mean of `tokens` (row-major, `dims` wide), L2-normalised.
fn mean_l2(tokens: &[f32], dims: usize) -> Vec<f32> {
    let mut sum = vec![0f32; dims];
    let n = (tokens.len() / dims).max(1);
    for token in tokens.chunks_exact(dims) {
        for (s, x) in sum.iter_mut().zip(token) {
            *s += x;
        }
    }
    for s in &mut sum {
        *s /= n as f32;
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for s in &mut sum {
        *s /= norm;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::mean_l2;

    #[test]
    fn mean_pooling_then_unit_length() {
        let v = mean_l2(&[1.0, 0.0, 3.0, 4.0], 2);
        // mean (2, 2) → unit (0.7071, 0.7071)
        assert!((v[0] - 0.70710677).abs() < 1e-6 && (v[1] - 0.70710677).abs() < 1e-6);
        assert_eq!(mean_l2(&[0.0, 0.0], 2), vec![0.0, 0.0]);
    }
}
