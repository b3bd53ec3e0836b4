//! Semantic side of the workspace: which embedder it uses (the workspace's settings choose the
//! local model, an OpenAI-compatible endpoint, or none), and the backfill that gives every
//! chunk a vector. Backfill runs after lexical indexing (lexical search works at once), in
//! batches of one transaction each, so it can be interrupted and resumed by the next run.

use crate::progress::Progress;
use crate::workspace::config::{Config, EmbedderChoice, LocalRun};
use crate::workspace::lock::{EmbedLock, WriteLock};
use crate::workspace::Workspace;
use anyhow::Result;
use quarry_core::Embedder;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Distinct texts fetched, embedded and stored per transaction.
const BACKFILL_BATCH: usize = 128;

/// Texts per forward pass on a GPU: a CPU is busy with 16, a GPU is not (bench/gpu_embed.sh).
const GPU_BATCH: usize = 64;

fn local_options(model: &quarry_embed::LocalModel, run: LocalRun) -> quarry_embed::EmbedOptions {
    let defaults = quarry_embed::EmbedOptions::default();
    quarry_embed::EmbedOptions {
        max_tokens: model.index_tokens,
        batch_size: match run.device {
            quarry_embed::Device::Cuda => GPU_BATCH,
            quarry_embed::Device::Cpu => defaults.batch_size,
        },
        runtime: run.runtime,
        precision: run.precision,
        device: run.device,
        ..defaults
    }
}

/// Builds the embedder a choice names (`None` for no embedder). Nothing is sent to an
/// endpoint here.
pub fn build_embedder(choice: &EmbedderChoice) -> Result<Option<Arc<dyn Embedder>>> {
    Ok(match choice {
        EmbedderChoice::None => None,
        EmbedderChoice::Local {
            model,
            model_dir,
            run,
        } => {
            let dir = match model_dir {
                Some(dir) => quarry_embed::ModelDir::open(dir)?,
                None => quarry_embed::ModelDir::locate_model(model)?,
            };
            Some(Arc::new(quarry_embed::LocalEmbedder::from_dir(
                &dir,
                local_options(dir.model(), *run),
            )?))
        }
        EmbedderChoice::Endpoint {
            url,
            model,
            api_key_env,
            timeout,
        } => {
            let mut options = quarry_embed::EndpointOptions::new(url, model);
            options.api_key = std::env::var(api_key_env).ok().filter(|k| !k.is_empty());
            options.timeout = *timeout;
            Some(Arc::new(quarry_embed::EndpointEmbedder::new(options)?))
        }
    })
}

/// Why semantic search is off, when it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderNoteKind {
    /// No model is installed or configured: lexical search, and a hint how to enable it.
    NoModel,
    /// The settings say `embed.provider = none`.
    Disabled,
    /// The configured endpoint did not answer.
    Unreachable,
    /// The index has no vectors, or vectors of another model.
    NoVectors,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbedderNote {
    pub kind: EmbedderNoteKind,
    pub message: String,
}

impl EmbedderNote {
    fn new(kind: EmbedderNoteKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// What the embedder is attached for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedPurpose {
    /// Making vectors: an endpoint is probed first, so an unreachable one costs one timeout,
    /// not one per batch.
    Indexing,
    /// Embedding queries: only a model whose vectors the index holds is attached.
    Searching,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbedReport {
    pub model: String,
    /// Distinct chunk texts embedded by this run.
    pub embedded: u64,
    /// True when vectors of another model were dropped first.
    pub model_changed: bool,
    pub coverage: quarry_core::Coverage,
    pub elapsed_ms: u64,
    /// Set when the embedder failed part-way: what is stored stays, the next run resumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

impl Workspace {
    pub fn set_embedder(&mut self, embedder: Option<Arc<dyn Embedder>>) {
        self.embedder = embedder;
    }

    /// The embedder searches use, when one is attached.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// The workspace's settings (`config.toml` in its folder).
    pub fn config(&self) -> Result<Config> {
        Config::load(&self.dir)
    }

    /// Attaches the embedder the workspace's settings choose. Returns a note for the user
    /// when semantic search stays off; errors are only for broken settings.
    pub fn attach_embedder(&mut self, purpose: EmbedPurpose) -> Result<Option<EmbedderNote>> {
        use EmbedderNoteKind::*;
        let mut choice = self.config()?.embedder_choice()?;
        let stored = self.store().embedding_model()?;
        // A search runs the local model at the precision of the index's vectors: fp32 vectors
        // (made before int8 became the default, or on candle) are searched with fp32 queries
        // until the next index run re-embeds them, and the reverse.
        if let (EmbedPurpose::Searching, EmbedderChoice::Local { run, .. }) = (purpose, &mut choice)
        {
            if let Some(precision) = stored
                .as_deref()
                .and_then(quarry_embed::fingerprint_precision)
            {
                run.precision = precision;
            }
        }
        if purpose == EmbedPurpose::Searching && stored.is_none() {
            return Ok(Some(EmbedderNote::new(
                NoVectors,
                "this index has no vectors yet: run `quarry index PATH` with a model installed (`quarry model install`)",
            )));
        }
        let embedder = match build_embedder(&choice) {
            Ok(Some(e)) => e,
            Ok(None) => {
                return Ok(Some(EmbedderNote::new(
                    Disabled,
                    "semantic search is off (embed.provider = none): `quarry model use all-MiniLM-L6-v2` turns it on",
                )))
            }
            Err(e) => {
                return Ok(Some(EmbedderNote::new(
                    NoModel,
                    format!("semantic search is off: {e:#}"),
                )))
            }
        };
        let fingerprint = embedder.fingerprint();
        match purpose {
            EmbedPurpose::Searching if stored.as_deref() != Some(fingerprint.as_str()) => {
                return Ok(Some(EmbedderNote::new(
                    NoVectors,
                    format!(
                        "the index's vectors come from another model ({}, not {fingerprint}); run `quarry index PATH` to re-embed",
                        stored.unwrap_or_default()
                    ),
                )));
            }
            EmbedPurpose::Indexing if matches!(choice, EmbedderChoice::Endpoint { .. }) => {
                let probe = embedder.embed(&["quarry"]);
                if let Err(e) = probe {
                    return Ok(Some(EmbedderNote::new(
                        Unreachable,
                        format!("{e:#}; run `quarry index` again when the endpoint is up"),
                    )));
                }
            }
            _ => {}
        }
        self.embedder = Some(embedder);
        Ok(None)
    }

    /// After an incremental re-index of `repos`: attaches the configured embedder and embeds
    /// their chunks still without a vector. The note says why nothing was embedded, when
    /// nothing was.
    pub fn embed_changes(
        &mut self,
        repos: &[String],
    ) -> Result<(Option<EmbedReport>, Option<EmbedderNote>)> {
        if let Some(note) = self.attach_embedder(EmbedPurpose::Indexing)? {
            return Ok((None, Some(note)));
        }
        Ok((
            self.embed_pending(&crate::progress::NoProgress, repos)?,
            None,
        ))
    }

    /// Embeds the chunks of `repos` (every repo when empty) that have no vector for the
    /// workspace's embedder: a run embeds what it indexed, never the chunks another repo was
    /// indexed without (`index --no-embed`). A text shared with another repo is embedded once
    /// and serves both.
    pub fn embed_pending(
        &mut self,
        progress: &dyn Progress,
        repos: &[String],
    ) -> Result<Option<EmbedReport>> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(None);
        };
        let Some(_embedding) = self.one_embedder_at_a_time(progress)? else {
            return Ok(None);
        };
        let started = Instant::now();
        let model = embedder.fingerprint();
        let (store, lock) = self.store_and_lock();
        let model_changed = store.set_embedding_model(&model)?;
        let before = store.coverage(repos)?;
        progress.begin("embedding", before.total - before.embedded);
        // Where the last batch ended (texts come in hash order): the next starts after it.
        let mut last: Option<String> = None;
        let (embedded, interrupted) = backfill(
            embedder.as_ref(),
            progress,
            store,
            lock,
            |store| {
                let pending = store.pending_embeddings(BACKFILL_BATCH, last.as_deref(), repos)?;
                if let Some(p) = pending.last() {
                    last = Some(p.hash.clone());
                }
                Ok(pending.into_iter().map(|p| (p.hash, p.text)).collect())
            },
            |store, rows| store.put_embeddings(&rows),
        );
        let embedded = embedded?;
        Ok(Some(EmbedReport {
            model,
            embedded,
            model_changed,
            coverage: store.coverage(repos)?,
            elapsed_ms: started.elapsed().as_millis() as u64,
            interrupted,
        }))
    }
}

impl Workspace {
    /// Waits until no other process embeds this workspace (`EmbedLock`), the write lock lent
    /// by `lock_per_batch` let go meanwhile (the process embedding now stores its batches
    /// under it). `None` when the user stopped the wait.
    pub(crate) fn one_embedder_at_a_time(
        &mut self,
        progress: &dyn Progress,
    ) -> Result<Option<EmbedLock>> {
        if let (_, Some(lock)) = self.store_and_lock() {
            lock.release()?;
        }
        let waited = EmbedLock::acquire(&self.dir, &|text| progress.note(text), &|| {
            progress.cancelled()
        });
        if let (_, Some(lock)) = self.store_and_lock() {
            lock.take(BATCH_LOCK_WAIT)?;
        }
        waited
    }
}

/// How long a backfill waits to store a batch while another process writes the index (a
/// long index run of another repo) before it stops, keeping what it stored.
const BATCH_LOCK_WAIT: Duration = Duration::from_secs(600);

/// The backfill loop shared by chunks and commits: fetch a batch of texts without a vector,
/// embed it, store it (one transaction), until nothing is pending. An embedder failure (an
/// endpoint going down) ends the loop, not the run: every batch stored so far stays, the next
/// run resumes, and the failure is returned as the second value. Returns how many were stored.
pub(crate) fn backfill<K, S: ?Sized>(
    embedder: &dyn Embedder,
    progress: &dyn Progress,
    target: &mut S,
    mut lock: Option<&mut WriteLock>,
    mut fetch: impl FnMut(&mut S) -> Result<Vec<(K, String)>>,
    mut store: impl FnMut(&mut S, Vec<(K, Vec<f32>)>) -> Result<()>,
) -> (Result<u64>, Option<String>) {
    let mut embedded = 0u64;
    let mut result = (|| -> Result<Option<String>> {
        loop {
            if progress.cancelled() {
                return Ok(Some("stopped by Ctrl-C".to_string()));
            }
            let pending = fetch(target)?;
            if pending.is_empty() {
                return Ok(None);
            }
            let texts: Vec<&str> = pending.iter().map(|(_, t)| t.as_str()).collect();
            // The model computes without the lock; the batch is stored under it. A vector
            // whose chunk another writer dropped meanwhile is harmless: keyed by text hash,
            // it is pruned by the next run.
            if let Some(lock) = lock.as_deref_mut() {
                lock.release()?;
            }
            let vectors = match embedder.embed(&texts) {
                Ok(v) => v,
                Err(e) => return Ok(Some(format!("{e:#}"))),
            };
            if let Some(lock) = lock.as_deref_mut() {
                match lock.take(BATCH_LOCK_WAIT) {
                    Err(e) if crate::workspace::lock::is_lock_busy(&e) => {
                        return Ok(Some(format!("{e:#}")))
                    }
                    other => other?,
                }
            }
            let rows: Vec<(K, Vec<f32>)> =
                pending.into_iter().map(|(k, _)| k).zip(vectors).collect();
            let n = rows.len() as u64;
            store(target, rows)?;
            embedded += n;
            progress.advance(n);
        }
    })();
    // The caller gets the lock back as it lent it: held.
    if let Some(lock) = lock {
        if let Err(e) = lock.take(BATCH_LOCK_WAIT) {
            result = result.and(Err(e));
        }
    }
    progress.end();
    match result {
        Ok(interrupted) => (Ok(embedded), interrupted),
        Err(e) => (Err(e), None),
    }
}
