//! Semantic side of the workspace: which embedder it uses, and the backfill that gives every
//! chunk a vector. Backfill runs after lexical indexing (lexical search works at once), in
//! batches of one transaction each, so it can be interrupted and resumed by the next run.

use crate::{Progress, Workspace};
use anyhow::Result;
use quarry_core::Embedder;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Distinct texts fetched, embedded and stored per transaction.
const BACKFILL_BATCH: usize = 128;

/// Loads the local model installed by `scripts/install-model.sh`; the error says how to
/// install it when it is missing.
pub fn load_local_embedder() -> Result<Arc<dyn Embedder>> {
    let options = quarry_embed::EmbedOptions {
        max_tokens: EMBED_MAX_TOKENS,
        ..Default::default()
    };
    Ok(Arc::new(quarry_embed::LocalEmbedder::new(options)?))
}

/// Tokens per embedded chunk: the length MiniLM was trained at; the embedding text
/// (`quarry_core::embed_text`) is cut to fit it.
pub const EMBED_MAX_TOKENS: usize = 128;

#[derive(Debug, Clone, Serialize)]
pub struct EmbedReport {
    pub model: String,
    /// Distinct chunk texts embedded by this run.
    pub embedded: u64,
    /// True when vectors of another model were dropped first.
    pub model_changed: bool,
    pub coverage: quarry_core::Coverage,
    pub elapsed_ms: u64,
}

impl Workspace {
    pub fn set_embedder(&mut self, embedder: Option<Arc<dyn Embedder>>) {
        self.embedder = embedder;
    }

    /// Attaches the local model when it is installed. For searching (`for_search`), a model whose
    /// fingerprint differs from the stored vectors' is not attached (its vectors would not be
    /// comparable). Returns a note for the user when semantic search stays off.
    pub fn attach_local_embedder(&mut self, for_search: bool) -> Result<Option<String>> {
        let stored = if for_search {
            self.store().embedding_model()?
        } else {
            None
        };
        if for_search && stored.is_none() {
            return Ok(Some(
                "this index has no vectors yet: run `quarry index PATH` with the model installed"
                    .into(),
            ));
        }
        let embedder = match load_local_embedder() {
            Ok(e) => e,
            Err(e) => return Ok(Some(format!("semantic search is off: {e:#}"))),
        };
        if for_search && stored.as_deref() != Some(embedder.fingerprint().as_str()) {
            return Ok(Some(format!(
                "the index's vectors come from another model ({}); run `quarry index PATH` to re-embed",
                stored.unwrap_or_default()
            )));
        }
        self.embedder = Some(embedder);
        Ok(None)
    }

    /// Embeds every chunk that has no vector for the workspace's embedder.
    pub fn embed_pending(&mut self, progress: &dyn Progress) -> Result<Option<EmbedReport>> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(None);
        };
        let started = Instant::now();
        let model = embedder.fingerprint();
        let store = self.store_mut();
        let model_changed = store.set_embedding_model(&model)?;
        let before = store.coverage(&[])?;
        progress.begin("embedding", before.total - before.embedded);
        let mut embedded = 0u64;
        let result = (|| -> Result<()> {
            loop {
                let pending = store.pending_embeddings(BACKFILL_BATCH)?;
                if pending.is_empty() {
                    return Ok(());
                }
                let texts: Vec<&str> = pending.iter().map(|p| p.text.as_str()).collect();
                let vectors = embedder.embed(&texts)?;
                let rows: Vec<(String, Vec<f32>)> = pending
                    .iter()
                    .map(|p| p.hash.clone())
                    .zip(vectors)
                    .collect();
                store.put_embeddings(&rows)?;
                embedded += rows.len() as u64;
                progress.advance(rows.len() as u64);
            }
        })();
        progress.end();
        result?;
        Ok(Some(EmbedReport {
            model,
            embedded,
            model_changed,
            coverage: store.coverage(&[])?,
            elapsed_ms: started.elapsed().as_millis() as u64,
        }))
    }
}
