//! Reading git history with gix (gitoxide, pure Rust; no `git` process): the commits
//! reachable from HEAD, newest first, each diffed against its first parent (renames detected
//! like git's default, 50% similarity), with per-file line counts and a unified patch cut at a
//! byte limit. Missing objects (partial snapshots) cost a file its patch or a commit its file
//! list, never the ingest. Checked against `git log --numstat`/`-p` on the full histories of
//! flask and pytest: identical counts except mode-only binary changes.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, ByteSlice};
use gix::diff::blob::platform::prepare_diff::Operation;
use gix::diff::blob::unified_diff::{ConsumeHunk, ContextSize, DiffLineKind, HunkHeader};
use gix::diff::blob::{Diff, InternedInput, UnifiedDiff};
use gix::diff::tree_with_rewrites::Change; // == gix::object::tree::diff::ChangeDetached

/// What to compute per commit.
#[derive(Debug, Clone)]
pub struct Options {
    /// Also render a unified patch (implies `files`).
    pub patch: bool,
    /// Byte cap for the per-commit patch text.
    pub patch_cap: usize,
    /// git-style rename detection (50% similarity, no copies). Costs blob reads.
    pub renames: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            patch: true,
            patch_cap: 64 * 1024,
            renames: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed { old_path: String },
    Copied { old_path: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub status: FileStatus,
    /// Either side was detected as binary (NUL in first 8 KiB, or gitattributes `-diff`).
    pub binary: bool,
    /// `None` for binary, submodule, or missing blobs.
    pub lines_added: Option<u32>,
    pub lines_removed: Option<u32>,
    /// A blob of this change is absent from the object database (partial clone / corrupt).
    pub missing_blob: bool,
    /// Either side is a gitlink (submodule); counts are git's 1-line "Subproject commit" convention.
    pub submodule: bool,
    /// A merge commit's change that came with a merged branch: the merge has the file as one of
    /// its other parents has it (git's "TREESAME" to that parent, which `git log -- PATH`
    /// leaves out for the branch's own commits).
    pub merged_in: bool,
}

#[derive(Debug, Clone, Default)]
pub struct CommitRecord {
    pub sha: String,
    pub parents: Vec<String>,
    pub author_name: String,
    pub author_email: String,
    pub author_time: i64,
    pub committer_time: i64,
    /// First line of the message (not git's first *paragraph*).
    pub subject: String,
    /// Everything after the first line, trimmed.
    pub body: String,
    pub files: Vec<FileChange>,
    pub patch: String,
    pub patch_truncated: bool,
    /// The tree diff itself failed (e.g. a missing *tree* object); `files` is empty.
    pub diff_error: Option<String>,
}

#[derive(Debug)]
pub enum IngestError {
    Open {
        path: PathBuf,
        source: gix::Error,
    },
    /// HEAD points to an unborn branch: the repository has no commits.
    EmptyRepository,
    /// HEAD exists but could not be peeled to a commit (points at a tree/blob, or object missing).
    HeadNotACommit(gix::Error),
    Git(gix::Error),
}

impl std::fmt::Display for IngestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IngestError::Open { path, source } => {
                write!(f, "cannot open repository {}: {source}", path.display())
            }
            IngestError::EmptyRepository => write!(f, "repository has no commits (HEAD is unborn)"),
            IngestError::HeadNotACommit(e) => write!(f, "HEAD does not resolve to a commit: {e}"),
            IngestError::Git(e) => write!(f, "git error: {e}"),
        }
    }
}
impl std::error::Error for IngestError {}
impl From<gix::Error> for IngestError {
    fn from(e: gix::Error) -> Self {
        IngestError::Git(e)
    }
}

fn lossy(b: &BStr) -> String {
    String::from_utf8_lossy(b.as_bytes()).into_owned()
}

/// subject = first line (sans `\r`), body = remainder trimmed.
pub fn split_message(msg: &[u8]) -> (String, String) {
    let (first, rest) = match msg.find_byte(b'\n') {
        Some(i) => (&msg[..i], &msg[i + 1..]),
        None => (msg, &b""[..]),
    };
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    (
        String::from_utf8_lossy(first.trim()).into_owned(),
        String::from_utf8_lossy(rest.trim()).into_owned(),
    )
}

pub struct History {
    repo: gix::Repository,
}

impl History {
    /// Opens a bare repo / `.git` dir / worktree root (no upward discovery).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, IngestError> {
        let path = path.as_ref();
        let mut repo = gix::open(path).map_err(|source| IngestError::Open {
            path: path.to_owned(),
            source,
        })?;
        // Each commit's tree and its parent's tree get decoded twice (once as "new", once as "old");
        // an object cache turns the second read into a memcpy.
        repo.object_cache_size_if_unset(32 * 1024 * 1024);
        Ok(History { repo })
    }

    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    /// Resolve HEAD (symbolic or detached) to a commit id.
    pub fn head_commit_id(&self) -> Result<gix::ObjectId, IngestError> {
        let mut head = self.repo.head()?;
        if head.is_unborn() {
            return Err(IngestError::EmptyRepository);
        }
        let commit = head.peel_to_commit().map_err(IngestError::HeadNotACommit)?;
        Ok(commit.id)
    }
}

pub(crate) fn commit_metadata(commit: &gix::Commit<'_>) -> Result<CommitRecord, IngestError> {
    let c = commit.decode()?; // gix_object::CommitRef, borrows commit.data
    let author = c.author()?; // gix_actor::SignatureRef (name/email: &BStr, time: &str raw)
    let committer = c.committer()?;
    let (subject, body) = split_message(c.message.as_bytes());
    Ok(CommitRecord {
        sha: commit.id.to_string(),
        parents: c.parents().map(|p| p.to_string()).collect(),
        author_name: lossy(author.name),
        author_email: lossy(author.email),
        // `.time()` parses the raw "<secs> <tz>" lazily; malformed dates -> 0 rather than failing
        author_time: author.time().map(|t| t.seconds).unwrap_or(0),
        committer_time: committer.time().map(|t| t.seconds).unwrap_or(0),
        subject,
        body,
        ..Default::default()
    })
}

pub(crate) struct Differ<'r> {
    repo: &'r gix::Repository,
    cache: gix::diff::blob::Platform,
    renames: Option<gix::diff::Rewrites>,
    patch: bool,
    cap: usize,
    changes: Vec<Change>,
    patch_buf: Vec<u8>,
    /// A partial clone lacks blobs by design: a missing one is not damage there.
    partial_clone: bool,
    /// Why a change of the commit at hand could not be read (a damaged blob, or a missing
    /// one outside a partial clone): the commit is then reported, not stored as complete.
    unreadable: Option<String>,
}

impl<'r> Differ<'r> {
    pub(crate) fn new(repo: &'r gix::Repository, opts: &Options) -> Result<Self, IngestError> {
        Ok(Differ {
            repo,
            // blob::Platform configured from git config (diff.algorithm, drivers, bigFileThreshold);
            // ToGit mode = compare object content as stored, no worktree filters.
            cache: repo.diff_resource_cache_for_tree_diff()?,
            renames: opts.renames.then(gix::diff::Rewrites::default),
            patch: opts.patch,
            cap: opts.patch_cap,
            changes: Vec::new(),
            patch_buf: Vec::new(),
            partial_clone: repo
                .config_snapshot()
                .string("extensions.partialClone")
                .is_some(),
            unreadable: None,
        })
    }

    fn tree_changes(
        &mut self,
        old: &gix::Tree<'_>,
        new: &gix::Tree<'_>,
        renames: Option<gix::diff::Rewrites>,
    ) -> gix::Result<()> {
        self.changes.clear();
        let changes = &mut self.changes;
        let mut platform = old.changes()?;
        platform.options(|o| {
            o.track_path().track_rewrites(renames);
        });
        platform.for_each_to_obtain_tree_with_cache(new, &mut self.cache, |ch| {
            if !ch.entry_mode().is_tree() {
                changes.push(ch.detach());
            }
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(())
    }

    pub(crate) fn diff_first_parent(&mut self, commit: &gix::Commit<'_>, rec: &mut CommitRecord) {
        if let Err(e) = self.try_diff(commit, rec) {
            rec.diff_error = Some(format!("{e:?}")); // Debug = message + "Caused by:" chain ({:#} is less readable)
            rec.files.clear();
        }
        self.cache.clear_resource_cache_keep_allocation();
    }

    fn try_diff(&mut self, commit: &gix::Commit<'_>, rec: &mut CommitRecord) -> gix::Result<()> {
        let repo = self.repo;
        let new_tree = commit.tree()?;
        let old_tree = match commit.parent_ids().next() {
            Some(p) => repo.find_commit(p)?.tree()?,
            None => repo.empty_tree(),
        };
        // Rename detection reads blobs; if one is missing the whole tree diff errors out.
        // Fall back to a pure tree diff (which only needs tree objects).
        if let Err(e) = self.tree_changes(&old_tree, &new_tree, self.renames) {
            if self.renames.is_none() {
                return Err(e);
            }
            self.cache.clear_resource_cache_keep_allocation();
            self.tree_changes(&old_tree, &new_tree, None)?;
        }

        self.patch_buf.clear();
        let mut truncated = false;
        let mut changes = std::mem::take(&mut self.changes);
        // The tree diff emits breadth-first (all top-level entries, then subtrees); git orders
        // by full path, which plain byte order on the path reproduces.
        changes.sort_by(|a, b| a.location().cmp(b.location()));
        self.unreadable = None;
        // A merge's other parents: a change that leaves the file as one of them has it came
        // with that branch.
        let others: Vec<gix::Tree<'_>> = commit
            .parent_ids()
            .skip(1)
            .filter_map(|p| repo.find_commit(p).ok()?.tree().ok())
            .collect();
        for ch in &changes {
            let mut fc = self.file_change(ch, &mut truncated);
            fc.merged_in = !others.is_empty() && same_in_another_parent(ch, &others);
            rec.files.push(fc);
        }
        self.changes = changes;
        if let Some(why) = self.unreadable.take() {
            // The files stay (stored as they are under `--keep-going`); the commit is
            // reported as incomplete.
            rec.diff_error = Some(why);
        }
        if self.patch {
            let mut s = String::from_utf8_lossy(&self.patch_buf).into_owned();
            if s.len() > self.cap {
                let mut cut = self.cap;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
                truncated = true;
            }
            rec.patch = s;
            rec.patch_truncated = truncated;
        }
        Ok(())
    }

    /// A change whose blob could not be read: noted as the commit's damage when it is one,
    /// and said in the patch.
    fn blob_unavailable(
        &mut self,
        path: &str,
        error: &dyn std::fmt::Display,
        damage: bool,
        want_patch: bool,
    ) {
        if damage {
            self.unreadable
                .get_or_insert_with(|| format!("a blob of {path} cannot be read: {error}"));
        }
        if want_patch {
            self.patch_buf
                .extend_from_slice(b"(blob unavailable, no patch)\n");
        }
    }

    fn file_change(&mut self, ch: &Change, truncated: &mut bool) -> FileChange {
        let (path, status) = match ch {
            Change::Addition { location, .. } => (lossy(location.as_ref()), FileStatus::Added),
            Change::Deletion { location, .. } => (lossy(location.as_ref()), FileStatus::Deleted),
            Change::Modification { location, .. } => {
                (lossy(location.as_ref()), FileStatus::Modified)
            }
            Change::Rewrite {
                source_location,
                location,
                copy,
                ..
            } => {
                let old_path = lossy(source_location.as_ref());
                let st = if *copy {
                    FileStatus::Copied { old_path }
                } else {
                    FileStatus::Renamed { old_path }
                };
                (lossy(location.as_ref()), st)
            }
        };
        let mut fc = FileChange {
            path,
            status,
            binary: false,
            lines_added: None,
            lines_removed: None,
            missing_blob: false,
            submodule: false,
            merged_in: false,
        };
        let want_patch = self.patch && !*truncated;
        if want_patch {
            write_git_header(&mut self.patch_buf, ch);
        }
        // Submodules (gitlinks) have no blob; git renders them as a one-line "Subproject commit <id>" file.
        let (mode, id) = ch.entry_mode_and_id();
        let (src_mode, src_id) = ch.source_entry_mode_and_id();
        if mode.is_commit() || src_mode.is_commit() {
            fc.submodule = true;
            if mode.is_commit() != src_mode.is_commit() && matches!(ch, Change::Modification { .. })
            {
                return fc; // blob <-> gitlink type change: no counts
            }
            let old = (!matches!(ch, Change::Addition { .. })).then(|| src_id.to_owned());
            let new = (!matches!(ch, Change::Deletion { .. })).then(|| id.to_owned());
            fc.lines_removed = Some(old.is_some() as u32);
            fc.lines_added = Some(new.is_some() as u32);
            if want_patch && old != new {
                let buf = &mut self.patch_buf;
                match &old {
                    Some(_) => buf
                        .extend_from_slice(format!("--- a/{}\n", ch.source_location()).as_bytes()),
                    None => buf.extend_from_slice(b"--- /dev/null\n"),
                }
                match &new {
                    Some(_) => {
                        buf.extend_from_slice(format!("+++ b/{}\n", ch.location()).as_bytes())
                    }
                    None => buf.extend_from_slice(b"+++ /dev/null\n"),
                }
                let r = |x: &Option<gix::ObjectId>| if x.is_some() { "1" } else { "0,0" };
                buf.extend_from_slice(format!("@@ -{} +{} @@\n", r(&old), r(&new)).as_bytes());
                if let Some(o) = old {
                    buf.extend_from_slice(format!("-Subproject commit {o}\n").as_bytes());
                }
                if let Some(n) = new {
                    buf.extend_from_slice(format!("+Subproject commit {n}\n").as_bytes());
                }
            }
            return fc;
        }
        // NB: for Addition/Deletion `source_entry_mode_and_id()` returns the entry's own id.
        if id == src_id && matches!(ch, Change::Modification { .. } | Change::Rewrite { .. }) {
            // pure mode change or 100% rename: nothing to diff (and no blob read needed)
            fc.lines_added = Some(0);
            fc.lines_removed = Some(0);
            return fc;
        }
        if let Err(e) = self
            .cache
            .set_resource_by_change(ch.to_ref(), &self.repo.objects)
        {
            // Missing blob -> set_resource::Error::ConvertToDiffable with a NotFound cause; a
            // damaged one fails with another cause (zlib, size).
            let e: gix::Error = e.into();
            fc.missing_blob = e.is_not_found();
            let damage = !fc.missing_blob || !self.partial_clone;
            self.blob_unavailable(&fc.path, &e, damage, want_patch);
            return fc;
        }
        let prep = match self.cache.prepare_diff() {
            Ok(p) => p,
            // The blobs are read here: a damaged one fails now.
            Err(e) => {
                self.blob_unavailable(&fc.path, &e, true, want_patch);
                return fc;
            }
        };
        match prep.operation {
            Operation::InternalDiff { algorithm } => {
                // NOT prep.interned_input(): that strips line terminators, so CRLF<->LF and
                // "no newline at EOF" changes become invisible and counts diverge from git.
                let input = InternedInput::new(prep.old.intern_source(), prep.new.intern_source());
                let mut diff = Diff::compute(algorithm, &input);
                fc.lines_added = Some(diff.count_additions());
                fc.lines_removed = Some(diff.count_removals());
                if want_patch && (fc.lines_added != Some(0) || fc.lines_removed != Some(0)) {
                    let old_missing = prep.old.data.as_slice().is_none();
                    let new_missing = prep.new.data.as_slice().is_none();
                    let buf = &mut self.patch_buf;
                    buf.extend_from_slice(if old_missing {
                        b"--- /dev/null\n".as_slice()
                    } else {
                        b"--- a/"
                    });
                    if !old_missing {
                        buf.extend_from_slice(prep.old.rela_path);
                        buf.push(b'\n');
                    }
                    buf.extend_from_slice(if new_missing {
                        b"+++ /dev/null\n".as_slice()
                    } else {
                        b"+++ b/"
                    });
                    if !new_missing {
                        buf.extend_from_slice(prep.new.rela_path);
                        buf.push(b'\n');
                    }
                    diff.postprocess_lines(&input); // git-like slider heuristics
                    let hunks = GitHunks {
                        out: buf,
                        input: &input,
                    };
                    // Our sink never returns Err, so the io::Result can be ignored.
                    let _ = UnifiedDiff::new(&diff, &input, hunks, ContextSize::symmetrical(3))
                        .consume();
                }
            }
            Operation::SourceOrDestinationIsBinary => {
                fc.binary = true;
                if want_patch {
                    let buf = &mut self.patch_buf;
                    buf.extend_from_slice(b"Binary files ");
                    match ch {
                        Change::Addition { .. } => buf.extend_from_slice(b"/dev/null"),
                        _ => {
                            buf.extend_from_slice(b"a/");
                            buf.extend_from_slice(ch.source_location());
                        }
                    }
                    buf.extend_from_slice(b" and ");
                    match ch {
                        Change::Deletion { .. } => buf.extend_from_slice(b"/dev/null"),
                        _ => {
                            buf.extend_from_slice(b"b/");
                            buf.extend_from_slice(ch.location());
                        }
                    }
                    buf.extend_from_slice(b" differ\n");
                }
            }
            Operation::ExternalCommand { .. } => {} // not produced: skip_internal_diff_if_external_is_configured=false
        }
        if want_patch && self.patch_buf.len() > self.cap {
            *truncated = true; // stop rendering further files; counts continue
        }
        fc
    }
}

/// Renders hunks exactly like `git diff`: gix's `HunkHeader` Display prints `-1,0` for an empty side
/// (git: `-0,0`) and always prints the `,len` (git omits it when len == 1); each header ends with
/// git's function context (`@@ -995,6 +995,17 @@ class Flask(App):`), which also tells a
/// commit's embedding which definitions it changed.
struct GitHunks<'a> {
    out: &'a mut Vec<u8>,
    /// The diff's lines: the old file's are where the function context is looked up.
    input: &'a InternedInput<&'a [u8]>,
}

/// Bytes of a function-context line git keeps (xdiff's buffer).
const FUNCNAME_BYTES: usize = 80;

/// git's default function context for a hunk starting at old line `start` (1-based, with its
/// context): the nearest line above it that begins with a letter, `_` or `$` (xdiff's
/// `def_ff`, used when no diff driver is configured), cut to 80 bytes, trailing space trimmed.
/// Written by hand: gix renders hunks but leaves this out.
fn funcname<'l>(input: &InternedInput<&'l [u8]>, start: u32) -> Option<&'l [u8]> {
    let above = (start as usize).saturating_sub(1).min(input.before.len());
    input.before[..above].iter().rev().find_map(|&token| {
        let line: &'l [u8] = input.interner[token];
        let first = *line.first()?;
        if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
            return None;
        }
        let mut text = &line[..line.len().min(FUNCNAME_BYTES)];
        while let [rest @ .., last] = text {
            if !last.is_ascii_whitespace() {
                break;
            }
            text = rest;
        }
        Some(text)
    })
}

impl ConsumeHunk for GitHunks<'_> {
    type Out = ();
    fn consume_hunk(
        &mut self,
        h: HunkHeader,
        lines: &[(DiffLineKind, &[u8])],
    ) -> std::io::Result<()> {
        fn range(start: u32, len: u32) -> String {
            match len {
                0 => format!("{},0", start.saturating_sub(1)),
                1 => format!("{start}"),
                _ => format!("{start},{len}"),
            }
        }
        let context = funcname(self.input, h.before_hunk_start);
        let out = &mut *self.out;
        out.extend_from_slice(
            format!(
                "@@ -{} +{} @@",
                range(h.before_hunk_start, h.before_hunk_len),
                range(h.after_hunk_start, h.after_hunk_len)
            )
            .as_bytes(),
        );
        if let Some(context) = context {
            out.push(b' ');
            out.extend_from_slice(context);
        }
        out.push(b'\n');
        for (kind, line) in lines {
            out.push(kind.to_prefix() as u8);
            out.extend_from_slice(line); // tokens keep their terminator (`\n` or `\r\n`)
            if !line.ends_with(b"\n") {
                out.extend_from_slice(b"\n\\ No newline at end of file\n");
            }
        }
        Ok(())
    }
    fn finish(self) -> Self::Out {}
}

fn write_git_header(buf: &mut Vec<u8>, ch: &Change) {
    let (a, b) = (ch.source_location(), ch.location());
    buf.extend_from_slice(b"diff --git a/");
    buf.extend_from_slice(a);
    buf.extend_from_slice(b" b/");
    buf.extend_from_slice(b);
    buf.push(b'\n');
    match ch {
        Change::Addition { entry_mode, .. } => {
            buf.extend_from_slice(format!("new file mode {:o}\n", entry_mode.value()).as_bytes())
        }
        Change::Deletion { entry_mode, .. } => buf
            .extend_from_slice(format!("deleted file mode {:o}\n", entry_mode.value()).as_bytes()),
        Change::Modification {
            previous_entry_mode,
            entry_mode,
            ..
        } if previous_entry_mode != entry_mode => buf.extend_from_slice(
            format!(
                "old mode {:o}\nnew mode {:o}\n",
                previous_entry_mode.value(),
                entry_mode.value()
            )
            .as_bytes(),
        ),
        Change::Rewrite {
            source_location,
            location,
            copy,
            ..
        } => {
            let word = if *copy { "copy" } else { "rename" };
            buf.extend_from_slice(format!("{word} from ").as_bytes());
            buf.extend_from_slice(source_location);
            buf.extend_from_slice(format!("\n{word} to ").as_bytes());
            buf.extend_from_slice(location);
            buf.push(b'\n');
        }
        _ => {}
    }
}

/// Whether a merge's change leaves the path as one of `others` (the merge's other parents)
/// has it: the same blob there, or, for a deletion, no file there either.
fn same_in_another_parent(ch: &Change, others: &[gix::Tree<'_>]) -> bool {
    let path = lossy(ch.location());
    let merged: Option<gix::ObjectId> = match ch {
        Change::Deletion { .. } => None,
        _ => Some(ch.entry_mode_and_id().1.to_owned()),
    };
    others
        .iter()
        .any(|tree| match tree.lookup_entry_by_path(path.as_str()) {
            Ok(found) => found.map(|entry| entry.object_id()) == merged,
            Err(_) => false,
        })
}
