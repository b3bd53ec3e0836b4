//! A folder's file list as ripgrep's walk gives it, kept between runs so that a search need
//! not walk the tree again. On a tree of a few thousand files the walk (reading every folder
//! and matching every name against the ignore rules) costs as much as the whole search of the
//! files the index leaves; checking a kept list costs one `stat` per folder.
//!
//! A kept list is used only when nothing that decides the walk's answer has changed since it
//! was taken:
//! - every folder it entered has the modification time it had then (creating, deleting or
//!   renaming an entry changes its folder's time);
//! - every ignore file that was read (`.gitignore`, `.ignore`, `.git/info/exclude` in those
//!   folders and in the folders above, and the user's git configuration and global ignore
//!   file) has the size and time it had, or is still absent (a change to a file's content
//!   leaves its folder's time alone, so these are checked one by one).
//!
//! A folder changed within [`RACY_NS`] of the walk is not trusted (file times are taken from a
//! coarse clock, so a change in the same tick would go unseen): the list is then not kept, and
//! the next run walks again. Files changed in place are not this module's concern: the caller
//! stats every listed file anyway, for the index's "is this the file I indexed" check.
//!
//! A kept list also names the hidden files the walk skipped only for being hidden (no ignore
//! rule names them): ripgrep lets such a file through when a selected type (`-t`) names it,
//! and a typed search filters the kept list instead of walking again (see types.rs).
//!
//! No crate keeps a walk between processes; the format is a few length-prefixed byte strings,
//! written to a temporary file and renamed into place.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{anyhow, Result};
use ignore::overrides::Override;
use ignore::types::Types;
use ignore::{WalkBuilder, WalkState};

const MAGIC: &[u8] = b"quarry-listing 2\n";
/// A folder or ignore file changed less than this before the walk started is not trusted.
const RACY_NS: i64 = 2_000_000_000;
/// The time recorded for a file that does not exist.
const ABSENT: i64 = i64::MIN;
/// The time recorded for a path whose presence alone counts (`.git`, whose own time changes
/// with every git command).
const PRESENT: i64 = i64::MIN + 1;

/// ripgrep's walk switches: the default skips hidden files and what ignore files name; `-u`
/// reads ignored files, `-uu` hidden ones too, `-uuu` binary files as text as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct WalkRules {
    pub hidden: bool,
    pub no_ignore: bool,
    /// Search binary files found by the walk as text (`--binary`, `-uuu`).
    pub binary: bool,
    /// Follow symbolic links (`-L`).
    #[serde(default)]
    pub follow: bool,
}

/// A walked folder's files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderFiles {
    /// What the walk gives (absolute, sorted).
    pub files: Vec<PathBuf>,
    /// The hidden files it skipped only for being hidden (absolute, sorted); `None` when the
    /// walk did not record them (a walk with globs, types or other rules, which were applied
    /// by the walk itself).
    pub hidden: Option<Vec<PathBuf>>,
}

/// Threads for walking and searching: the CPUs this process may use, asked once (in a
/// container the standard library reads cgroup files to answer, about a millisecond each time).
pub(crate) fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// The files of one walked folder (`root` joined to each), sorted by path; `cache` is where
/// lists are kept between runs (none: walk every time). Globs (`overrides`) and `types` are
/// applied by the walk, as ripgrep's walk applies them.
pub(crate) fn folder_files(
    root: &Path,
    overrides: Option<&Override>,
    types: Option<&Types>,
    cache: Option<&Path>,
    rules: WalkRules,
) -> Result<FolderFiles> {
    // Globs and types can prune the walk, other rules change it: the kept list, taken without
    // them, cannot answer.
    let plain = overrides.is_none() && types.is_none() && rules == WalkRules::default();
    let Some(cache) = cache.filter(|_| plain) else {
        let listing = walk(root, overrides, types, false, rules)?;
        return Ok(FolderFiles {
            files: under(root, listing.files),
            hidden: None,
        });
    };
    let key = Key::new(root);
    let file = key.file_in(cache);
    if let Some(listing) = Listing::read(&file, &key) {
        if listing.still_true(&key.root) {
            return Ok(listing.under(root));
        }
    }
    let listing = walk(root, None, None, true, WalkRules::default())?;
    if !listing.racy {
        // A list that cannot be kept costs the next run a walk, never this one its answer.
        let _ = listing.write(&file, &key);
    }
    Ok(listing.under(root))
}

fn under(root: &Path, files: Vec<PathBuf>) -> Vec<PathBuf> {
    files.into_iter().map(|file| root.join(file)).collect()
}

/// A walk of one folder, with everything its answer depended on, for a process that keeps
/// the answer in memory and watches what it depended on ([`crate::memory::WarmTree`]).
pub(crate) struct WalkedTree {
    root: PathBuf,
    listing: Listing,
    /// The files found, and the hidden files skipped (absolute), sorted.
    pub files: FolderFiles,
    /// The folders entered (absolute).
    pub folders: Vec<PathBuf>,
    /// Files outside those folders whose change, creation or removal changes the walk (the
    /// ignore files and `.git` above the root, the user's git configuration).
    pub depends_on: Vec<PathBuf>,
}

impl WalkedTree {
    /// True when no folder changed between the walk and now (nor too close to the walk to
    /// tell).
    pub fn still_true(&self) -> bool {
        !self.listing.racy && self.listing.still_true(&self.root)
    }
}

pub(crate) fn walk_with_dependencies(root: &Path) -> Result<WalkedTree> {
    let mut listing = walk(root, None, None, true, WalkRules::default())?;
    let files = FolderFiles {
        files: under(root, std::mem::take(&mut listing.files)),
        hidden: Some(under(root, std::mem::take(&mut listing.hidden))),
    };
    let folders = listing
        .folders
        .iter()
        .map(|(folder, _)| root.join(folder).components().collect())
        .collect::<Vec<PathBuf>>();
    let depends_on = listing
        .watched
        .iter()
        .map(|(path, _, _)| path.clone())
        .collect();
    Ok(WalkedTree {
        root: root.to_path_buf(),
        listing,
        files,
        folders,
        depends_on,
    })
}

/// Walks `root` and keeps its list in `cache` (after an index run, so the first search after
/// it need not walk).
pub fn refresh(root: &Path, cache: &Path) -> Result<()> {
    let key = Key::new(root);
    let listing = walk(root, None, None, true, WalkRules::default())?;
    if !listing.racy {
        listing.write(&key.file_in(cache), &key)?;
    }
    Ok(())
}

/// What a kept list is for: the folder, and what else decides the walk (the user's
/// configuration, found through these variables).
struct Key {
    root: PathBuf,
    bytes: Vec<u8>,
}

impl Key {
    fn new(root: &Path) -> Key {
        let root = absolute(root);
        let mut bytes = path_bytes(&root).to_vec();
        for var in ["HOME", "XDG_CONFIG_HOME"] {
            bytes.push(0);
            bytes.extend(
                std::env::var_os(var)
                    .map(|v| path_bytes(Path::new(&v)).to_vec())
                    .unwrap_or_default(),
            );
        }
        Key { root, bytes }
    }

    /// The file in `cache` its list is kept in.
    fn file_in(&self, cache: &Path) -> PathBuf {
        cache.join(format!(
            "{:016x}.list",
            xxhash_rust::xxh3::xxh3_64(&self.bytes)
        ))
    }
}

/// A walk's answer and what it depended on.
#[derive(Debug, Default)]
struct Listing {
    /// Ignore files (absolute) with their time ([`ABSENT`] if missing) and size.
    watched: Vec<(PathBuf, i64, u64)>,
    /// Folders entered, relative to the root ("" is the root), with their time.
    folders: Vec<(PathBuf, i64)>,
    files: Vec<PathBuf>,
    /// Hidden files skipped only for being hidden.
    hidden: Vec<PathBuf>,
    /// Something changed too close to the walk for the list to be trusted later.
    racy: bool,
}

fn stamp(path: &Path) -> (i64, u64) {
    match std::fs::metadata(path) {
        Ok(meta) => (quarry_core::mtime_ns(&meta), meta.len()),
        Err(_) => (ABSENT, 0),
    }
}

impl Listing {
    /// Its files under `root`.
    fn under(self, root: &Path) -> FolderFiles {
        FolderFiles {
            files: under(root, self.files),
            hidden: Some(under(root, self.hidden)),
        }
    }

    /// True when every folder and ignore file is as it was.
    fn still_true(&self, root: &Path) -> bool {
        self.watched.iter().all(|(path, time, size)| {
            if *time == PRESENT {
                return path.exists();
            }
            let (now, len) = stamp(path);
            now == *time && (now == ABSENT || len == *size)
        }) && self.folders.iter().all(|(folder, time)| {
            std::fs::metadata(root.join(folder)).is_ok_and(|m| quarry_core::mtime_ns(&m) == *time)
        })
    }

    fn read(file: &Path, key: &Key) -> Option<Listing> {
        let mut bytes = Vec::new();
        std::fs::File::open(file)
            .ok()?
            .read_to_end(&mut bytes)
            .ok()?;
        let mut input = Decoder(bytes.strip_prefix(MAGIC)?);
        if input.bytes()? != key.bytes.as_slice() {
            return None;
        }
        let mut listing = Listing::default();
        for _ in 0..input.u64()? {
            let path = input.path()?;
            listing
                .watched
                .push((path, input.u64()? as i64, input.u64()?));
        }
        for _ in 0..input.u64()? {
            let path = input.path()?;
            listing.folders.push((path, input.u64()? as i64));
        }
        for _ in 0..input.u64()? {
            listing.files.push(input.path()?);
        }
        for _ in 0..input.u64()? {
            listing.hidden.push(input.path()?);
        }
        Some(listing)
    }

    fn write(&self, file: &Path, key: &Key) -> Result<()> {
        let mut out = MAGIC.to_vec();
        put_bytes(&mut out, &key.bytes);
        out.extend((self.watched.len() as u64).to_le_bytes());
        for (path, time, size) in &self.watched {
            put_bytes(&mut out, path_bytes(path));
            out.extend((*time as u64).to_le_bytes());
            out.extend(size.to_le_bytes());
        }
        out.extend((self.folders.len() as u64).to_le_bytes());
        for (path, time) in &self.folders {
            put_bytes(&mut out, path_bytes(path));
            out.extend((*time as u64).to_le_bytes());
        }
        for list in [&self.files, &self.hidden] {
            out.extend((list.len() as u64).to_le_bytes());
            for path in list {
                put_bytes(&mut out, path_bytes(path));
            }
        }
        write_atomically(file, &out)
    }
}

/// Writes `bytes` to a file beside `file` that no other process writes, then renames it into
/// place: a reader sees the old content or the new, never part of it.
pub(crate) fn write_atomically(file: &Path, bytes: &[u8]) -> Result<()> {
    let dir = file
        .parent()
        .ok_or_else(|| anyhow!("no folder for {}", file.display()))?;
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let written = std::fs::File::create(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&temp, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    Ok(written?)
}

/// The walk ripgrep makes (its ignore rules, hidden files skipped, links not followed unless
/// `rules` say so), in parallel; with `record`, also what it depended on and the hidden files
/// it skipped only for being hidden.
fn walk(
    root: &Path,
    overrides: Option<&Override>,
    types: Option<&Types>,
    record: bool,
    rules: WalkRules,
) -> Result<Listing> {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let mut builder = WalkBuilder::new(root);
    builder.threads(threads());
    builder.hidden(!rules.hidden);
    builder.follow_links(rules.follow);
    if rules.no_ignore {
        // ripgrep's --no-ignore: no .gitignore, .ignore, .rgignore or global excludes.
        builder
            .ignore(false)
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .parents(false);
    }
    if let Some(overrides) = overrides {
        builder.overrides(overrides.clone());
    }
    if let Some(types) = types {
        builder.types(types.clone());
    } else if record && !rules.hidden {
        // A type selecting every file lets hidden files through (types whitelist before the
        // hidden rule, as for `-t`), and changes nothing else: ignore rules come first, and
        // types never apply to folders. Those files are kept apart below.
        builder.types(any_file());
    }
    let found = Mutex::new(Listing::default());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if kind.is_dir() && record {
                let time = entry
                    .metadata()
                    .map_or(ABSENT, |m| quarry_core::mtime_ns(&m));
                let watched = ignore_files(entry.path());
                if let Ok(mut found) = found.lock() {
                    found.racy |= time == ABSENT || time > started - RACY_NS;
                    found.folders.push((relative.to_path_buf(), time));
                    found
                        .watched
                        .extend(watched.into_iter().filter(|w| w.1 != ABSENT));
                }
            } else if kind.is_file() {
                let hidden = record
                    && !rules.hidden
                    && entry.depth() > 0
                    && entry.file_name().as_encoded_bytes().starts_with(b".");
                if let Ok(mut found) = found.lock() {
                    match hidden {
                        true => found.hidden.push(relative.to_path_buf()),
                        false => found.files.push(relative.to_path_buf()),
                    }
                }
            }
            WalkState::Continue
        })
    });
    let mut listing = found
        .into_inner()
        .map_err(|_| anyhow!("the walk panicked"))?;
    if record {
        // The folders above the root, and the user's git configuration: absent files are
        // recorded too (creating one changes the walk, and these folders' times change for
        // unrelated reasons, so they cannot stand in).
        for folder in absolute(root).ancestors().skip(1) {
            listing.watched.extend(ignore_files(folder));
            let git = folder.join(".git");
            let presence = if git.exists() { PRESENT } else { ABSENT };
            listing.watched.push((git, presence, 0));
        }
        listing
            .watched
            .extend(git_config_files().into_iter().map(with_stamp));
        listing.racy |= listing
            .watched
            .iter()
            .any(|(_, time, _)| *time > started - RACY_NS);
        // A hidden file an ignore rule lets through (`!.env`) is walked by ripgrep: with a
        // negated rule in any ignore file read, the plain walk says which hidden files it
        // takes (rare; otherwise every hidden file found was skipped for being hidden).
        if !listing.hidden.is_empty() && listing.watched.iter().any(|w| negates(&w.0)) {
            let plain = walk(root, None, None, false, rules)?;
            let taken: std::collections::HashSet<&PathBuf> = plain.files.iter().collect();
            let (taken, skipped) = std::mem::take(&mut listing.hidden)
                .into_iter()
                .partition(|h| taken.contains(h));
            listing.hidden = skipped;
            listing.files.extend::<Vec<PathBuf>>(taken);
        }
    }
    listing.files.sort();
    listing.hidden.sort();
    Ok(listing)
}

/// A file type matcher that selects every file.
fn any_file() -> Types {
    static ANY: std::sync::OnceLock<Types> = std::sync::OnceLock::new();
    ANY.get_or_init(|| {
        let mut builder = ignore::types::TypesBuilder::new();
        builder.add("any", "*").expect("a valid glob");
        builder.select("any");
        builder.build().expect("a valid type")
    })
    .clone()
}

/// Whether the ignore file `path` has a negated (whitelisting) rule.
fn negates(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|text| {
        text.split(|&b| b == b'\n')
            .any(|line| line.trim_ascii_start().starts_with(b"!"))
    })
}

/// `root` from the current folder, `.` components dropped (the index names its roots so, and
/// `quarry grep` run in a root must find the list the index run kept).
fn absolute(root: &Path) -> PathBuf {
    let joined = std::env::current_dir()
        .map(|cwd| cwd.join(root))
        .unwrap_or_else(|_| root.to_path_buf());
    joined.components().collect()
}

fn with_stamp(path: PathBuf) -> (PathBuf, i64, u64) {
    let (time, size) = stamp(&path);
    (path, time, size)
}

/// The ignore files a folder may hold, with their stamps.
fn ignore_files(folder: &Path) -> Vec<(PathBuf, i64, u64)> {
    [".gitignore", ".ignore", ".git/info/exclude"]
        .into_iter()
        .map(|name| with_stamp(folder.join(name)))
        .collect()
}

/// Git's configuration files, and the global ignore file they name (or the default one).
fn git_config_files() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut files = Vec::new();
    files.extend(home.as_ref().map(|h| h.join(".gitconfig")));
    files.extend(config_home.as_ref().map(|c| c.join("git/config")));
    files.extend(config_home.as_ref().map(|c| c.join("git/ignore")));
    for config in files.clone() {
        let Ok(text) = std::fs::read_to_string(&config) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim();
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            if name.trim().eq_ignore_ascii_case("excludesfile") {
                let value = value.trim().trim_matches('"');
                let path = match (value.strip_prefix("~/"), &home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ => PathBuf::from(value),
                };
                files.push(path);
            }
        }
    }
    files
}

#[cfg(unix)]
pub(crate) fn path_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

#[cfg(not(unix))]
pub(crate) fn path_bytes(path: &Path) -> &[u8] {
    // Windows paths are kept as their UTF-8 form; one that has none reads back changed, so
    // its listing never matches its key and is walked each time.
    path.to_str().map(str::as_bytes).unwrap_or(b"")
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend((bytes.len() as u64).to_le_bytes());
    out.extend(bytes);
}

pub(crate) struct Decoder<'a>(pub(crate) &'a [u8]);

impl<'a> Decoder<'a> {
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(head)
    }

    #[cfg(unix)]
    pub(crate) fn path(&mut self) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(self.bytes()?)))
    }

    #[cfg(not(unix))]
    pub(crate) fn path(&mut self) -> Option<PathBuf> {
        Some(PathBuf::from(std::str::from_utf8(self.bytes()?).ok()?))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Sets the modification time of `path` (a file or a folder) an hour back, so that a walk
    /// of it is not "racy" and its list is kept.
    fn age(path: &Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    fn age_tree(root: &Path) {
        for entry in walkdir(root) {
            age(&entry);
        }
    }

    fn walkdir(root: &Path) -> Vec<PathBuf> {
        let mut all = vec![root.to_path_buf()];
        for entry in std::fs::read_dir(root).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                all.extend(walkdir(&path));
            } else {
                all.push(path);
            }
        }
        all
    }

    fn names(root: &Path, cache: &Path) -> Vec<String> {
        folder_files(root, None, None, Some(cache), WalkRules::default())
            .unwrap()
            .files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_kept_list_answers_until_a_folder_or_an_ignore_file_changes() {
        let tree = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let root = tree.path().join("repo");
        write(&root.join("a/x.py"), "x = 1\n");
        write(&root.join("b/y.py"), "y = 2\n");
        write(&root.join("b/z.log"), "log\n");
        write(&root.join(".gitignore"), "*.log\n");
        std::fs::create_dir(root.join(".git")).unwrap();
        age_tree(&root);

        assert_eq!(names(&root, cache.path()), ["a/x.py", "b/y.py"]);
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1);

        // The kept list answers: a file slipped in with its folder's time put back is not
        // seen (a walk would see it), which shows no walk was made.
        let before = std::fs::metadata(root.join("a"))
            .unwrap()
            .modified()
            .unwrap();
        write(&root.join("a/hidden_from_list.py"), "");
        std::fs::File::open(root.join("a"))
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(names(&root, cache.path()), ["a/x.py", "b/y.py"]);

        // A folder whose time moved is walked again.
        write(&root.join("b/new.py"), "");
        assert_eq!(
            names(&root, cache.path()),
            ["a/hidden_from_list.py", "a/x.py", "b/new.py", "b/y.py"]
        );

        // An ignore file edited in place (its folder's time unchanged) is walked again too.
        age_tree(&root);
        assert_eq!(names(&root, cache.path()).len(), 4);
        let before = std::fs::metadata(&root).unwrap().modified().unwrap();
        write(&root.join(".gitignore"), "*.log\nnew.py\n");
        std::fs::File::open(&root)
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(
            names(&root, cache.path()),
            ["a/hidden_from_list.py", "a/x.py", "b/y.py"]
        );

        // A file deleted changes its folder: gone from the list.
        std::fs::remove_file(root.join("a/x.py")).unwrap();
        assert_eq!(
            names(&root, cache.path()),
            ["a/hidden_from_list.py", "b/y.py"]
        );
    }

    #[test]
    fn hidden_files_skipped_only_for_being_hidden_are_kept_apart() {
        let tree = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let root = tree.path().join("repo");
        write(&root.join("a.py"), "");
        write(&root.join(".b.py"), "");
        write(&root.join("src/.c.py"), "");
        write(&root.join(".hidden/d.py"), "");
        write(&root.join(".e.log"), "");
        write(&root.join(".ignore"), "*.log\n");
        let hidden = |root: &Path| {
            let found =
                folder_files(root, None, None, Some(cache.path()), WalkRules::default()).unwrap();
            let names = |files: &[PathBuf]| -> Vec<String> {
                files
                    .iter()
                    .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
                    .collect()
            };
            (names(&found.files), names(&found.hidden.unwrap()))
        };
        // Ignored ones are not hidden ones; nothing in a hidden folder.
        assert_eq!(
            hidden(&root),
            (
                vec!["a.py".into()],
                vec![".b.py".into(), ".ignore".into(), "src/.c.py".into()]
            )
        );
        // A negated rule lets a hidden file through: it is walked, not kept apart.
        write(&root.join(".ignore"), "*.log\n!.b.py\n");
        assert_eq!(
            hidden(&root),
            (
                vec![".b.py".into(), "a.py".into()],
                vec![".ignore".into(), "src/.c.py".into()]
            )
        );
    }

    #[test]
    fn a_tree_changed_just_now_is_walked_every_time() {
        let tree = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        write(&tree.path().join("a.py"), "");
        assert_eq!(names(tree.path(), cache.path()), ["a.py"]);
        // Its folder changed within the racy window: no list was kept.
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
        write(&tree.path().join("b.py"), "");
        assert_eq!(names(tree.path(), cache.path()), ["a.py", "b.py"]);
    }

    #[test]
    fn a_damaged_list_is_walked_again() {
        let tree = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        write(&tree.path().join("a.py"), "");
        age_tree(tree.path());
        assert_eq!(names(tree.path(), cache.path()), ["a.py"]);
        let kept = std::fs::read_dir(cache.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let bytes = std::fs::read(&kept).unwrap();
        std::fs::write(&kept, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(names(tree.path(), cache.path()), ["a.py"]);
    }
}
