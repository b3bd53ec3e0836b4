//! The embedder seam. Semantic search plugs a local model or an HTTP endpoint in here; the
//! store records `fingerprint()` so a model change re-embeds instead of mixing vectors.

/// Turns texts into fixed-size vectors.
pub trait Embedder: Send + Sync {
    /// Identifies the model and its settings (name, revision, dims, pooling). Vectors made by
    /// embedders with different fingerprints are never compared.
    fn fingerprint(&self) -> String;
    /// Vector length.
    fn dims(&self) -> usize;
    /// Embeds a batch of texts; the result has one vector per input, in order.
    fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>>;
}
