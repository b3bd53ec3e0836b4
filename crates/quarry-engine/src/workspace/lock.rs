//! One writer per workspace. Index runs take an exclusive OS file lock (released by the OS
//! when the process dies, so a killed run never leaves a stale lock) and write who they are
//! into the lock file, so a second writer can say who it waited for. Searches never take the
//! lock: SQLite's WAL lets them read while a run writes.
//!
//! Embedding is the slow part of a run (minutes), and it needs the lock only to store a batch:
//! a run hands its lock to the workspace (`Workspace::lock_per_batch`), which lets it go while
//! the model computes and takes it back for each batch's transaction, so another repo's index,
//! a sync or an edit's re-index interleave instead of waiting for the whole backfill.

use anyhow::{Context, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held while a process writes the index; dropping it releases the lock.
pub struct WriteLock {
    file: File,
    dir: PathBuf,
    held: bool,
}

/// Another process holds the write lock: who (pid, command, since when), as it wrote it.
/// The HTTP API answers 409 with it; the CLI says to wait or stop that process.
#[derive(Debug)]
pub struct LockBusy {
    pub dir: PathBuf,
    pub holder: String,
    pub waited: Duration,
}

impl std::fmt::Display for LockBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the index in {} is being written by another process ({}); waited {:.1} s. \
             Let it finish, or stop it, then try again",
            self.dir.display(),
            if self.holder.is_empty() {
                "unknown holder"
            } else {
                &self.holder
            },
            self.waited.as_secs_f64()
        )
    }
}

impl std::error::Error for LockBusy {}

impl WriteLock {
    /// Takes the lock in `dir`, waiting up to `wait` for another writer to finish.
    pub fn acquire(dir: &Path, wait: Duration) -> Result<WriteLock> {
        let file = open_lock_file(dir, "index.lock")?;
        let mut lock = WriteLock {
            file,
            dir: dir.to_path_buf(),
            held: false,
        };
        lock.take(wait)?;
        Ok(lock)
    }

    /// Lets the lock go (kept in hand: `take` gets it back).
    pub fn release(&mut self) -> Result<()> {
        if self.held {
            self.file
                .unlock()
                .context("cannot release the index lock")?;
            self.held = false;
        }
        Ok(())
    }

    /// Takes the lock again after `release`, waiting up to `wait` (`LockBusy` past that).
    pub fn take(&mut self, wait: Duration) -> Result<()> {
        if self.held {
            return Ok(());
        }
        let started = Instant::now();
        loop {
            match self.file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(LockBusy {
                        dir: self.dir.clone(),
                        holder: holder_of(&mut self.file, &self.dir.join("index.lock")),
                        waited: wait,
                    }
                    .into());
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!("cannot lock {}", self.dir.join("index.lock").display())
                    });
                }
            }
        }
        self.held = true;
        write_holder(&mut self.file)
    }
}

/// The lock file `name` in `dir` (made with the folder when missing).
fn open_lock_file(dir: &Path, name: &str) -> Result<File> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open lock file {}", path.display()))
}

/// Who holds a lock just taken, written into its file for whoever waits on it next.
fn write_holder(file: &mut File) -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    write!(
        file,
        "pid {}, `{}`, since {}",
        std::process::id(),
        args.join(" "),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    )?;
    file.flush()?;
    Ok(())
}

/// Who holds the lock on `file` (at `path`): what the file says of its last quarry holder,
/// checked against the process that holds the lock now (another program — a backup tool, an
/// editor — may hold it, and the file then names a quarry process long gone).
fn holder_of(file: &mut File, path: &Path) -> String {
    let mut recorded = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut recorded);
    let recorded = recorded.trim().to_string();
    match quarry_store::lock_holders(path).into_iter().next() {
        None => recorded,
        Some((pid, _)) if recorded.starts_with(&format!("pid {pid},")) => recorded,
        Some((pid, command)) if command.contains("quarry") => format!("pid {pid}, `{command}`"),
        Some((pid, command)) => format!("pid {pid}, `{command}`, not a quarry process"),
    }
}

/// Held while a process embeds a workspace's waiting texts (chunks or commits). Embedding a
/// text twice only repeats work, but a repeat costs minutes: two `quarry index` runs of one
/// repo started together both embedded everything (2 × 473 s). The second waits for the first,
/// says whom it waits for, and then finds what is left (usually nothing). Separate from the
/// write lock, which embedding holds only per batch so that other writers interleave.
pub struct EmbedLock {
    _file: File,
}

impl EmbedLock {
    /// Takes the embedding lock of `dir`, waiting as long as another process holds it; who
    /// holds it is told to `waiting` once. `None` when `cancelled` says the user stopped the
    /// wait (Ctrl-C).
    pub fn acquire(
        dir: &Path,
        waiting: &dyn Fn(&str),
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<EmbedLock>> {
        let mut file = open_lock_file(dir, "embed.lock")?;
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if !told {
                        let holder = holder_of(&mut file, &dir.join("embed.lock"));
                        waiting(&format!(
                            "waiting for another quarry process that is embedding this workspace ({}); then this run embeds whatever is left",
                            if holder.is_empty() { "unknown holder" } else { &holder }
                        ));
                        told = true;
                    }
                    if cancelled() {
                        return Ok(None);
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!("cannot lock {}", dir.join("embed.lock").display())
                    });
                }
            }
        }
        write_holder(&mut file)?;
        Ok(Some(EmbedLock { _file: file }))
    }
}

/// Whether an error is a busy write lock (`LockBusy`).
pub fn is_lock_busy(e: &anyhow::Error) -> bool {
    e.downcast_ref::<LockBusy>().is_some()
}
