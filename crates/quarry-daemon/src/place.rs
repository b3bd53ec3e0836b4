//! Where a workspace's daemon lives: `<workspace>/daemon/`, the user's alone (0700), holding
//! the socket (`sock`, 0600) and the lock its daemon holds while it runs (`lock`: the OS drops
//! it when the process dies, so a daemon killed with -9 leaves nothing that looks alive).

use std::path::{Path, PathBuf};

pub struct Place {
    pub folder: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
}

/// Unix socket paths are limited to 107 bytes; a workspace deeper than that has no daemon.
const MAX_SOCKET_PATH: usize = 100;

impl Place {
    pub fn of(workspace: &Path) -> Place {
        let folder = workspace.join("daemon");
        Place {
            socket: folder.join("sock"),
            lock: folder.join("lock"),
            folder,
        }
    }

    /// Whether the socket's path fits a Unix socket address.
    pub fn usable(&self) -> bool {
        self.socket.as_os_str().len() <= MAX_SOCKET_PATH
    }

    /// Creates the folder, the user's alone.
    #[cfg(unix)]
    pub fn prepare(&self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&self.folder)?;
        std::fs::set_permissions(&self.folder, std::fs::Permissions::from_mode(0o700))
    }

    /// The lock file (created when missing); its daemon holds an exclusive lock on it.
    pub fn open_lock(&self) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)
    }

    /// The pid the daemon holding the lock wrote into it (the last one to run, when none
    /// holds it now).
    pub fn holder_pid(&self) -> Option<u32> {
        std::fs::read_to_string(&self.lock)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Whether a daemon holds the lock now (running, or starting).
    pub fn is_held(&self) -> bool {
        let Ok(file) = self.open_lock() else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => false,
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(_) => false,
        }
    }
}

/// This binary's build: its version, size and modification time. A rebuilt or upgraded
/// quarry differs, so a daemon of the old binary is never spoken to.
pub fn build_id() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| build_id_of(own_executable().as_deref()))
        .clone()
}

/// Where this process's binary was when it started (read once, before it can be replaced).
pub fn own_executable() -> Option<std::path::PathBuf> {
    static EXE: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok()).clone()
}

/// The build id of the binary at `path` now (what a process started from it would say).
pub fn build_id_of(path: Option<&Path>) -> String {
    let meta = path.map(std::fs::metadata);
    let (len, modified) = match meta {
        Some(Ok(m)) => (
            m.len(),
            m.modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        ),
        _ => (0, 0),
    };
    format!("{}-{len:x}-{modified:x}", env!("CARGO_PKG_VERSION"))
}
