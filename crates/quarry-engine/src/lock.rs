//! One writer per workspace. Index runs take an exclusive OS file lock (released by the OS
//! when the process dies, so a killed run never leaves a stale lock) and write who they are
//! into the lock file, so a second writer can say who it waited for. Searches never take the
//! lock: SQLite's WAL lets them read while a run writes.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Held while a process writes the index; dropping it releases the lock.
pub struct WriteLock {
    _file: File,
}

impl WriteLock {
    /// Takes the lock in `dir`, waiting up to `wait` for another writer to finish.
    pub fn acquire(dir: &Path, wait: Duration) -> Result<WriteLock> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("index.lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open lock file {}", path.display()))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    bail!(
                        "the index in {} is being written by another quarry process ({}); waited {:.1} s. \
                         Let it finish, or stop it, then try again",
                        dir.display(),
                        if holder.is_empty() { "unknown holder" } else { holder },
                        wait.as_secs_f64()
                    );
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
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
        Ok(WriteLock { _file: file })
    }
}
