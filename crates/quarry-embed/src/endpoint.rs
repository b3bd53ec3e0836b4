//! An embedder that calls an OpenAI-compatible HTTP endpoint (`POST {base}/embeddings`, as
//! served by OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio …). It is an option, never
//! the default: quarry works without it, and when the endpoint is down callers fall back to
//! lexical search instead of failing (every call is bounded by a timeout, so nothing hangs).
//!
//! The fingerprint is `openai-api:{model}`: the same model served from another host gives
//! comparable vectors (moving Ollama to another machine re-embeds nothing), a different model
//! name never does.

use anyhow::{bail, Context, Result};
use quarry_core::Embedder;
use serde::Deserialize;
use std::sync::OnceLock;
use std::time::Duration;

/// Settings of an endpoint embedder.
#[derive(Debug, Clone)]
pub struct EndpointOptions {
    /// The API base (`http://localhost:11434/v1`) or the full embeddings URL.
    pub url: String,
    /// The model name the endpoint knows (`nomic-embed-text`, `text-embedding-3-small`).
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<String>,
    /// Bound on one whole request (connect, send, answer).
    pub timeout: Duration,
    /// Texts per request; larger calls are split.
    pub batch_size: usize,
}

impl EndpointOptions {
    pub fn new(url: &str, model: &str) -> Self {
        Self {
            url: url.to_string(),
            model: model.to_string(),
            api_key: None,
            timeout: Duration::from_secs(30),
            batch_size: 64,
        }
    }
}

pub struct EndpointEmbedder {
    url: String,
    options: EndpointOptions,
    agent: ureq::Agent,
    /// Learned from the first answer (or `probe`).
    dims: OnceLock<usize>,
}

impl std::fmt::Debug for EndpointEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointEmbedder")
            .field("url", &self.url)
            .field("model", &self.options.model)
            .finish()
    }
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// The fingerprint an endpoint model's vectors are stored under.
pub fn endpoint_fingerprint(model: &str) -> String {
    format!("openai-api:{model}")
}

impl EndpointEmbedder {
    /// Builds the client; no request is made until the first `embed` (or `probe`).
    pub fn new(options: EndpointOptions) -> Result<Self> {
        let trimmed = options.url.trim().trim_end_matches('/');
        if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
            bail!(
                "embedding endpoint `{}` is not an http(s) URL (e.g. http://localhost:11434/v1)",
                options.url
            );
        }
        if options.model.trim().is_empty() {
            bail!("the embedding endpoint needs a model name: quarry config set embed.model NAME");
        }
        let url = if trimmed.ends_with("/embeddings") {
            trimmed.to_string()
        } else {
            format!("{trimmed}/embeddings")
        };
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.timeout.min(Duration::from_secs(3))))
            .http_status_as_error(false)
            .build();
        Ok(Self {
            url,
            agent: config.into(),
            options,
            dims: OnceLock::new(),
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Embeds one short text to check the endpoint answers and learn the vector length.
    pub fn probe(&self) -> Result<usize> {
        self.embed(&["quarry"])?;
        Ok(self.dims())
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let body = serde_json::json!({ "model": self.options.model, "input": texts });
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.options.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(&body)
            .with_context(|| format!("embedding endpoint {} did not answer", self.url))?;
        let status = response.status();
        if !status.is_success() {
            let text = response
                .body_mut()
                .read_to_string()
                .unwrap_or_default()
                .chars()
                .take(300)
                .collect::<String>();
            bail!(
                "embedding endpoint {} answered {status}: {}",
                self.url,
                text.trim()
            );
        }
        let parsed: EmbeddingsResponse = response.body_mut().read_json().with_context(|| {
            format!(
                "embedding endpoint {} answered something that is not an OpenAI embeddings response",
                self.url
            )
        })?;
        order_vectors(parsed.data, texts.len()).with_context(|| {
            format!(
                "embedding endpoint {} answered a malformed response",
                self.url
            )
        })
    }
}

/// Puts the answer's vectors in input order (by `index` when given) and L2-normalises them, so
/// the store's dot product is cosine similarity whatever the server does.
fn order_vectors(items: Vec<EmbeddingItem>, expected: usize) -> Result<Vec<Vec<f32>>> {
    if items.len() != expected {
        bail!("{} vectors for {expected} texts", items.len());
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in items.into_iter().enumerate() {
        let at = item.index.unwrap_or(position);
        match slots.get_mut(at) {
            Some(slot @ None) => *slot = Some(normalise(item.embedding)),
            Some(Some(_)) => bail!("index {at} answered twice"),
            None => bail!("index {at} is out of range"),
        }
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
    let dims = vectors.first().map_or(0, Vec::len);
    if dims == 0 || vectors.iter().any(|v| v.len() != dims) {
        bail!("vectors are empty or of different lengths");
    }
    Ok(vectors)
}

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

impl Embedder for EndpointEmbedder {
    fn fingerprint(&self) -> String {
        endpoint_fingerprint(&self.options.model)
    }

    fn dims(&self) -> usize {
        self.dims.get().copied().unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.options.batch_size.max(1)) {
            let vectors = self.request(batch)?;
            let dims = *self.dims.get_or_init(|| vectors[0].len());
            if vectors[0].len() != dims {
                bail!(
                    "embedding endpoint {} changed its vector length from {dims} to {}",
                    self.url,
                    vectors[0].len()
                );
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(v: &[f32], index: Option<usize>) -> EmbeddingItem {
        EmbeddingItem {
            embedding: v.to_vec(),
            index,
        }
    }

    #[test]
    fn answers_are_put_in_input_order_and_normalised() {
        let got = order_vectors(
            vec![item(&[0.0, 2.0], Some(1)), item(&[3.0, 4.0], Some(0))],
            2,
        )
        .unwrap();
        assert_eq!(got, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        // Without indices, the answer's order is the input's.
        let got = order_vectors(vec![item(&[1.0, 0.0], None), item(&[0.0, 5.0], None)], 2).unwrap();
        assert_eq!(got, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    }

    #[test]
    fn malformed_answers_are_errors() {
        assert!(order_vectors(vec![item(&[1.0], Some(0))], 2).is_err());
        assert!(order_vectors(vec![item(&[1.0], Some(0)), item(&[1.0], Some(0))], 2).is_err());
        assert!(order_vectors(vec![item(&[1.0], Some(5))], 1).is_err());
        assert!(order_vectors(vec![item(&[1.0], None), item(&[1.0, 2.0], None)], 2).is_err());
        assert!(order_vectors(vec![item(&[], None)], 1).is_err());
    }

    #[test]
    fn urls_are_checked_and_completed() {
        let e =
            EndpointEmbedder::new(EndpointOptions::new("http://localhost:11434/v1/", "m")).unwrap();
        assert_eq!(e.url(), "http://localhost:11434/v1/embeddings");
        let e = EndpointEmbedder::new(EndpointOptions::new(
            "https://api.example.com/v1/embeddings",
            "m",
        ))
        .unwrap();
        assert_eq!(e.url(), "https://api.example.com/v1/embeddings");
        assert_eq!(e.fingerprint(), "openai-api:m");
        assert!(EndpointEmbedder::new(EndpointOptions::new("localhost:11434", "m")).is_err());
        assert!(EndpointEmbedder::new(EndpointOptions::new("http://x/v1", " ")).is_err());
    }

    #[test]
    fn an_unreachable_endpoint_fails_fast_with_its_url() {
        // Port 9 (discard) on loopback: nothing listens there, so the connection is refused.
        let mut options = EndpointOptions::new("http://127.0.0.1:9/v1", "m");
        options.timeout = Duration::from_secs(2);
        let e = EndpointEmbedder::new(options).unwrap();
        let started = std::time::Instant::now();
        let err = format!("{:#}", e.probe().unwrap_err());
        assert!(err.contains("127.0.0.1:9"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}
