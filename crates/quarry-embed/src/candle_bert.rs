//! The pure-Rust runtime: BERT in candle, fp32 on the CPU. Always available (nothing to
//! install beyond the weights), and the reference the ONNX graphs are checked against; about a
//! third of the ONNX int8 runtime's speed on a 2-core machine (docs/EVAL.md, bench/embed.sh).

use anyhow::{Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};

use crate::{right_pad, ModelDir};

pub(crate) struct CandleBert {
    model: BertModel,
    device: Device,
}

impl CandleBert {
    pub(crate) fn load(dir: &ModelDir, config: &BertConfig, weights: Vec<u8>) -> Result<Self> {
        let device = Device::Cpu;
        let weights_path = dir.weights_path();
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .with_context(|| format!("{} is not a safetensors file", weights_path.display()))?;
        let model = BertModel::load(vb, config)
            .with_context(|| format!("loading BERT weights from {}", weights_path.display()))?;
        Ok(Self { model, device })
    }

    /// One batch (token ids, right-padded here with `pad_id`) through BERT, mean-pooled over
    /// the real tokens and L2-normalised.
    pub(crate) fn forward(&self, rows: &[&[u32]], pad_id: u32) -> Result<Vec<Vec<f32>>> {
        let padded = right_pad(rows, pad_id);
        let (batch, seq) = (padded.batch, padded.seq);
        let input_ids = Tensor::from_vec(padded.ids, (batch, seq), &self.device)?;
        let mask = Tensor::from_vec(padded.mask, (batch, seq), &self.device)?;
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
