//! Who holds a lock on a file now: the processes in the kernel's table of locks (Linux's
//! `/proc/locks`: flock and POSIX locks, each with its pid, device and inode), with their
//! command lines. A busy index is reported by who holds it (`sqlite3` open in a shell, a backup
//! tool, another quarry), never as damage; a lock file's own record of its last holder may name
//! a process long gone. Read by hand: no crate reads that table. Elsewhere than Linux the list
//! is empty and messages say "another connection".

use std::path::Path;

/// (pid, command line) of each process holding a lock on `path` now, this process left out.
pub fn lock_holders(path: &Path) -> Vec<(u32, String)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(path) else {
            return Vec::new();
        };
        let dev = meta.dev();
        // glibc's major()/minor() of a dev_t; the table prints them in hex.
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let wanted = format!("{major:02x}:{minor:02x}:{}", meta.ino());
        let Ok(table) = std::fs::read_to_string("/proc/locks") else {
            return Vec::new();
        };
        let me = std::process::id();
        let mut pids: Vec<u32> = Vec::new();
        // "1: FLOCK  ADVISORY  WRITE 8656 fe:00:10011021 0 EOF"; a waiter's line has "->".
        for line in table.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() >= 6 && fields[1] != "->" && fields[5] == wanted {
                if let Ok(pid) = fields[4].parse::<u32>() {
                    if pid != me && !pids.contains(&pid) {
                        pids.push(pid);
                    }
                }
            }
        }
        pids.into_iter()
            .map(|pid| (pid, command_line(pid)))
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Vec::new()
    }
}

/// A process's command line, its arguments joined by spaces ("" when it cannot be read).
fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_held_by_another_process_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held");
        std::fs::write(&path, b"").unwrap();
        assert!(lock_holders(&path).is_empty());
        // util-linux's flock holds it (`-o`: not the command it runs).
        let mut child = std::process::Command::new("flock")
            .arg("-o")
            .arg(&path)
            .args(["sleep", "20"])
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let holders = loop {
            let holders = lock_holders(&path);
            if !holders.is_empty() || started.elapsed().as_secs() > 10 {
                break holders;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        child.kill().unwrap();
        let _ = child.wait();
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert_eq!(holders[0].0, child.id());
        assert!(holders[0].1.starts_with("flock"), "{holders:?}");
    }
}
