//! The index pipeline for one repo: discover files, skip the unchanged ones (size and mtime,
//! then content hash), read and chunk the rest in parallel, and write them in batches of one
//! transaction each. A run killed at any point leaves every finished batch in place; the next
//! run finds those files unchanged and does only what is left.
//!
//! A rebuild (`--rebuild`) is built beside the old files and switched to at the end where the
//! store can (`Store::begin_rebuild`): searches meanwhile see the old repo, never a half-built
//! one, and a rebuild stopped before its switch (Ctrl-C, an error, kill -9) did not happen:
//! the old repo stays, and the report says the rebuild must be run again.

use crate::answer::{FileChange, IndexReport};
use crate::progress::Progress;
use crate::workspace::Workspace;
use anyhow::{bail, Context, Result};
use quarry_chunk::ChunkOptions;
use quarry_core::store::{IndexBatch, IndexedFile, SkipCounts};
use quarry_core::{FileState, Language};
use quarry_sources::{Candidate, DiscoverOptions, FileText};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    pub discover: DiscoverOptions,
    pub chunk: ChunkOptions,
    /// Drop what is stored for the repo and index it from scratch.
    pub rebuild: bool,
    /// The repo's name in the workspace (default: the folder's name).
    pub name: Option<String>,
    /// Keep vectors that no chunk refers to any more (evaluation walks a repo through many
    /// commits and would otherwise re-embed what an older commit had).
    pub keep_unused_vectors: bool,
    /// Time, page and text bounds on each PDF's extraction.
    pub pdf: quarry_sources::pdf::PdfLimits,
}

/// How many files one write transaction holds: big enough to amortise the commit, small
/// enough that an interrupted run loses little.
const BATCH_FILES: usize = 256;

/// The most per-file changes a report lists (the counts are always complete).
const MAX_LISTED_CHANGES: usize = 1000;

enum Outcome {
    Upsert(IndexedFile, bool),
    Touched(String, FileState),
    Skipped(String, &'static str),
}

/// What reading a file gave, before knowing whether it changed.
enum Read {
    /// A PDF's bytes: extracted only when they changed.
    Pdf(Vec<u8>),
    Text {
        text: String,
        lossy: bool,
    },
}

fn process(candidate: &Candidate, previous: Option<&FileState>, opts: &IndexOptions) -> Outcome {
    let skip = |reason| Outcome::Skipped(candidate.rel_path.clone(), reason);
    let max_size = opts.discover.size_limit(candidate.language);
    let (hash, read) = if candidate.language == Language::Pdf {
        match quarry_sources::read_bytes(&candidate.abs_path, max_size) {
            Ok(bytes) => (quarry_core::content_hash(&bytes), Read::Pdf(bytes)),
            Err(reason) => return skip(reason),
        }
    } else {
        match quarry_sources::read_text_as(&candidate.abs_path, max_size, candidate.language) {
            FileText::Text { text, hash, lossy } => (hash, Read::Text { text, lossy }),
            FileText::Skipped(reason) => return skip(reason),
        }
    };
    let state = FileState {
        hash,
        size: candidate.size,
        mtime_ns: candidate.mtime_ns,
    };
    if previous.is_some_and(|p| p.hash == state.hash) {
        return Outcome::Touched(candidate.rel_path.clone(), state);
    }
    let (content, grep_text, lossy) = match read {
        // A PDF's text comes from the bounded extractor, page by page; it has no trigram row
        // (grep reads text files only).
        Read::Pdf(bytes) => match quarry_sources::pdf::extract_bounded(bytes, &opts.pdf) {
            Ok(pages) => (quarry_chunk::chunk_pdf(&pages, &opts.chunk), None, false),
            Err(reason) => return skip(reason),
        },
        Read::Text { text, lossy } => {
            let content = quarry_chunk::chunk_file(candidate.language, &text, &opts.chunk);
            // A notebook's JSON is mostly base64 outputs: megabytes of trigrams that no one
            // greps for. Without a row, grep reads the file itself.
            let grep_text = (!lossy && candidate.language != Language::Notebook).then_some(text);
            (content, grep_text, lossy)
        }
    };
    Outcome::Upsert(
        IndexedFile {
            path: candidate.rel_path.clone(),
            language: candidate.language,
            state,
            content,
            // Found here, on the indexing threads, not by the store's one writer.
            grep_trigrams: grep_text
                .as_deref()
                .map(quarry_core::trigrams::distinct_trigrams),
            grep_text,
        },
        lossy,
    )
}

/// What `index_files` needs of the run `index_repo` started.
struct Run<'a> {
    repo: &'a quarry_core::RepoInfo,
    root: &'a Path,
    moved_from: Option<String>,
    /// The store builds the rebuild beside the old files (`Store::begin_rebuild`).
    beside: bool,
    started: Instant,
}

impl Workspace {
    /// Re-indexes the changed files of the workspace's indexed repos (only those named, when
    /// `names` is not empty), each under its stored name and root. The caller holds the lock.
    pub fn reindex_repos(&mut self, names: &[String]) -> Result<Vec<IndexReport>> {
        let targets: Vec<_> = self
            .store()
            .repos()?
            .into_iter()
            .filter(|r| r.indexed_at.is_some() && (names.is_empty() || names.contains(&r.name)))
            .collect();
        let mut reports = Vec::new();
        for repo in targets {
            let opts = IndexOptions {
                name: Some(repo.name),
                ..Default::default()
            };
            reports.push(self.index_repo(
                Path::new(&repo.root),
                &opts,
                &crate::progress::NoProgress,
            )?);
        }
        Ok(reports)
    }

    /// Indexes (or updates) the repo at `root`. The caller holds the write lock.
    pub fn index_repo(
        &mut self,
        root: &Path,
        opts: &IndexOptions,
        progress: &dyn Progress,
    ) -> Result<IndexReport> {
        let started = Instant::now();
        let root = root
            .canonicalize()
            .with_context(|| format!("cannot index {}: no such folder", root.display()))?;
        // Checked before the repo is registered: a file named by mistake leaves no empty repo.
        if !root.is_dir() {
            bail!(
                "cannot index {}: it is a file, and quarry indexes a repository folder (`quarry index FOLDER`; `quarry summary FILE` outlines one file)",
                root.display()
            );
        }
        let root_str = root.to_string_lossy().into_owned();
        let default_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".into());
        let name = opts.name.clone().unwrap_or(default_name);

        let (repo, moved_from) = self.register_repo(&name, &root_str, &|_| false)?;
        // The files start over; the synced history stays (the tree cannot give it back).
        let beside = opts.rebuild && self.store_mut().begin_rebuild(repo.id)?;
        let run = Run {
            repo: &repo,
            root: &root,
            moved_from,
            beside,
            started,
        };
        match self.index_files(run, opts, progress) {
            Ok(mut report) if beside && report.interrupted => {
                // Stopped before the switch: the old files stay, whole.
                let store = self.store_mut();
                store.abandon_rebuild(repo.id)?;
                report.rebuild_undone = true;
                if let Some(info) = store.repos()?.into_iter().find(|r| r.id == repo.id) {
                    report.files = info.files;
                    report.chunks = info.chunks;
                }
                Ok(report)
            }
            Ok(report) => Ok(report),
            Err(e) => {
                if beside {
                    // Best effort: the store drops an unfinished rebuild by itself anyway.
                    let _ = self.store_mut().abandon_rebuild(repo.id);
                }
                Err(e)
            }
        }
    }

    /// Reads, chunks and writes the files of `run.repo`, then finishes the run (and switches
    /// to a rebuild built beside, unless it was stopped: its caller then gives it up).
    fn index_files(
        &mut self,
        run: Run<'_>,
        opts: &IndexOptions,
        progress: &dyn Progress,
    ) -> Result<IndexReport> {
        let Run {
            repo,
            root,
            moved_from,
            beside,
            started,
        } = run;
        let root_str = root.to_string_lossy().into_owned();
        let store = self.store_mut();
        let previous = store.file_states(repo.id)?;
        progress.begin("discovering files", 0);
        // `--max-files` counts the files indexed before; new files fill what is left of it.
        let limits = quarry_sources::DiscoverOptions {
            max_files: opts.discover.max_files.saturating_sub(previous.len()),
            ..opts.discover.clone()
        };
        let found =
            quarry_sources::discover_beside(root, &limits, &|path| previous.contains_key(path))?;
        progress.end();
        let mut skipped = found.skipped;

        let mut report = IndexReport {
            repo: repo.name.clone(),
            root: root_str,
            added: 0,
            changed: 0,
            removed: 0,
            unchanged: 0,
            files: 0,
            chunks: 0,
            chunks_written: 0,
            skipped: SkipCounts::new(),
            lossy_utf8: 0,
            elapsed_ms: 0,
            changes: Vec::new(),
            moved_from,
            interrupted: false,
            rebuild_undone: false,
            kept_as_text: crate::answer::KeptAsText::of(
                found.files.iter().map(|c| c.rel_path.as_str()),
            ),
        };
        let note = |report: &mut IndexReport, path: &str, change: &'static str| {
            if report.changes.len() < MAX_LISTED_CHANGES {
                report.changes.push(FileChange {
                    path: path.to_string(),
                    change,
                });
            }
        };

        let present: HashSet<&str> = found.files.iter().map(|c| c.rel_path.as_str()).collect();
        let mut to_read = Vec::new();
        for candidate in &found.files {
            match previous.get(&candidate.rel_path) {
                Some(p) if p.size == candidate.size && p.mtime_ns == candidate.mtime_ns => {
                    report.unchanged += 1
                }
                p => to_read.push((candidate, p)),
            }
        }

        let mut batch = IndexBatch::default();
        for path in previous.keys().filter(|p| !present.contains(p.as_str())) {
            batch.deleted.push(path.clone());
            report.removed += 1;
            note(&mut report, path, "removed");
        }

        progress.begin("indexing", to_read.len() as u64);
        let to_take = to_read.len();
        let mut taken = 0;
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Outcome>(BATCH_FILES * 2);
        let store = self.store_mut();
        let write_result = std::thread::scope(|scope| -> Result<()> {
            // Owned here so that an early return drops it and unblocks the readers.
            let receiver = receiver;
            scope.spawn(move || {
                to_read
                    .par_iter()
                    .for_each_with(sender, |tx, (candidate, prev)| {
                        if progress.cancelled() {
                            return;
                        }
                        // A closed channel means the writer failed; its error is reported.
                        let _ = tx.send(process(candidate, *prev, opts));
                    });
            });
            for outcome in receiver.iter() {
                if progress.cancelled() {
                    report.interrupted = true;
                    break;
                }
                progress.advance(1);
                taken += 1;
                match outcome {
                    Outcome::Upsert(file, lossy) => {
                        let change = if previous.contains_key(&file.path) {
                            "changed"
                        } else {
                            "added"
                        };
                        if change == "changed" {
                            report.changed += 1;
                        } else {
                            report.added += 1;
                        }
                        note(&mut report, &file.path, change);
                        report.lossy_utf8 += lossy as u64;
                        report.chunks_written += file.content.chunks.len() as u64;
                        batch.upserts.push(file);
                    }
                    Outcome::Touched(path, state) => {
                        report.unchanged += 1;
                        batch.touched.push((path, state));
                    }
                    Outcome::Skipped(path, reason) => {
                        *skipped.entry(reason.to_string()).or_insert(0) += 1;
                        if previous.contains_key(&path) {
                            report.removed += 1;
                            note(&mut report, &path, "removed");
                            batch.deleted.push(path);
                        }
                    }
                }
                if batch.len() >= BATCH_FILES {
                    store.apply(repo.id, &std::mem::take(&mut batch))?;
                }
            }
            // A rebuild stopped before its switch is given up whole: no last batch.
            let given_up = beside && report.interrupted;
            if !batch.is_empty() && !given_up {
                store.apply(repo.id, &batch)?;
            }
            Ok(())
        });
        progress.end();
        write_result?;
        // Stopped before the first file came back (Ctrl-C while the old files were cleared or
        // the tree walked), the loop above saw nothing to stop: the run is interrupted all
        // the same (a rebuild committed here would be an empty repo).
        if taken < to_take && progress.cancelled() {
            report.interrupted = true;
        }
        if beside && report.interrupted {
            report.skipped = skipped;
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }

        store.finish_run(repo.id, &skipped)?;
        if beside {
            store.commit_rebuild(repo.id)?;
        }
        if !opts.keep_unused_vectors {
            store.prune_vectors()?;
        }
        let info = store.repos()?.into_iter().find(|r| r.id == repo.id);
        if let Some(info) = info {
            report.files = info.files;
            report.chunks = info.chunks;
        }
        report.skipped = skipped;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// Asks to stop once `after` files were taken, as Ctrl-C does.
    struct StopAfter {
        after: u64,
        taken: AtomicU64,
    }

    impl Progress for StopAfter {
        fn advance(&self, steps: u64) {
            self.taken.fetch_add(steps, Ordering::SeqCst);
        }
        fn cancelled(&self) -> bool {
            self.taken.load(Ordering::SeqCst) >= self.after
        }
    }

    fn write_files(root: &Path, prefix: &str) {
        for i in 0..600 {
            let dir = root.join("pkg");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join(format!("m{i}.py")),
                format!("def {prefix}{i}(value):\n    return value * {i}\n"),
            )
            .unwrap();
        }
    }

    fn finds(ws: &Workspace, name: &str) -> bool {
        let query = quarry_core::LexicalQuery {
            terms: quarry_core::tokens::query_terms(name),
            limit: 1,
            ..Default::default()
        };
        !ws.store().search_lexical(&query).unwrap().is_empty()
    }

    #[test]
    fn a_rebuild_stopped_before_its_switch_leaves_the_old_index_and_says_so() {
        let repo = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_files(repo.path(), "walrus");
        {
            let (mut ws, _lock) =
                Workspace::open_for_writing(dir.path(), Duration::ZERO, false).unwrap();
            let report = ws
                .index_repo(
                    repo.path(),
                    &IndexOptions::default(),
                    &crate::progress::NoProgress,
                )
                .unwrap();
            assert_eq!(report.files, 600);
        }
        write_files(repo.path(), "penguin");
        let rebuild = IndexOptions {
            rebuild: true,
            ..Default::default()
        };
        let (mut ws, _lock) =
            Workspace::open_for_writing(dir.path(), Duration::ZERO, true).unwrap();
        // Stopped after a batch of 256 was written inside the rebuild, and before any file
        // was read (Ctrl-C while the old files were cleared).
        let reader = Workspace::open_existing(dir.path()).unwrap();
        for after in [300, 0] {
            let stop = StopAfter {
                after,
                taken: AtomicU64::new(0),
            };
            let report = ws.index_repo(repo.path(), &rebuild, &stop).unwrap();
            assert!(report.interrupted && report.rebuild_undone, "{after}");
            assert_eq!((report.files, report.chunks), (600, 600), "{after}");
            // The old index, whole, for this connection and for a reader.
            for ws in [&ws, &reader] {
                assert!(finds(ws, "walrus599") && finds(ws, "walrus3"), "{after}");
                assert!(!finds(ws, "penguin3"), "{after}");
                assert_eq!(ws.store().stats().unwrap()[0].files, 600, "{after}");
            }
        }
        // Run again to its end, it switches.
        let report = ws
            .index_repo(repo.path(), &rebuild, &crate::progress::NoProgress)
            .unwrap();
        assert!(!report.interrupted && !report.rebuild_undone);
        assert!(finds(&reader, "penguin3") && !finds(&reader, "walrus3"));
        assert_eq!(reader.store().repos().unwrap()[0].files, 600);
    }
}
