//! Laying out evaluation corpora as folders the indexer can read.
//!
//! Git trees are written with the `git` command (`ls-tree` + `cat-file --batch`): this is a
//! measurement tool over repositories a developer fetched, and snapshots may lack large blobs,
//! which `git archive` refuses but a blob-by-blob copy simply skips.

use super::{EvalOptions, EvalQuery};
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug)]
pub enum Source {
    /// A JSONL file of `{"path", "text"}` documents.
    Documents(PathBuf),
    /// A repository at a commit.
    Git {
        git_dir: Option<PathBuf>,
        repo: String,
        commit: String,
    },
}

/// Queries that share one corpus.
#[derive(Debug)]
pub struct Group {
    pub label: String,
    /// The repo's name in the evaluation workspace (one per document file or git repo, so
    /// successive commits of a repo re-index incrementally).
    pub repo_name: String,
    pub source: Source,
    pub queries: Vec<usize>,
}

pub(crate) fn find_git_dir(repos_dir: &Path, repo: &str) -> Option<PathBuf> {
    let flat = repo.replace('/', "+");
    let name = repo.rsplit('/').next().unwrap_or(repo);
    [
        repos_dir.join(&flat).join("repo"),
        repos_dir.join(&flat),
        repos_dir.join(name),
        repos_dir.join(format!("{name}.git")),
    ]
    .into_iter()
    .find(|p| p.join("HEAD").exists() || p.join(".git").exists())
    .map(|p| {
        if p.join(".git").is_dir() {
            p.join(".git")
        } else {
            p
        }
    })
}

/// Commit times, to visit a repo's commits in history order (fewer files change per step).
fn commit_times(git_dir: &Path, commits: &[&str]) -> HashMap<String, i64> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["log", "--no-walk=unsorted", "--format=%H %ct"])
        .args(commits)
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return HashMap::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.split_once(' ')
                .and_then(|(h, t)| Some((h.to_string(), t.parse().ok()?)))
        })
        .collect()
}

/// Groups queries by corpus, in an order that keeps re-indexing small.
pub fn plan(queries: &[EvalQuery], base: &Path, opts: &EvalOptions) -> Result<Vec<Group>> {
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for (i, q) in queries.iter().enumerate() {
        let (key, group) = if let Some(corpus) = &q.corpus {
            let path = base.join(corpus);
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| corpus.clone());
            (
                (stem.clone(), String::new()),
                Group {
                    label: stem.clone(),
                    repo_name: stem,
                    source: Source::Documents(path),
                    queries: Vec::new(),
                },
            )
        } else {
            let (Some(repo), Some(commit)) = (&q.repo, &q.commit) else {
                bail!(
                    "query {} names neither a `corpus` file nor a `repo` and `commit`",
                    q.id
                );
            };
            let git_dir = opts
                .repos_dir
                .as_deref()
                .and_then(|d| find_git_dir(d, repo));
            (
                (repo.clone(), commit.clone()),
                Group {
                    label: format!("{repo}@{}", &commit[..commit.len().min(10)]),
                    repo_name: repo.replace('/', "+"),
                    source: Source::Git {
                        git_dir,
                        repo: repo.clone(),
                        commit: commit.clone(),
                    },
                    queries: Vec::new(),
                },
            )
        };
        groups.entry(key).or_insert(group).queries.push(i);
    }
    let mut ordered: Vec<Group> = groups.into_values().collect();
    // Within a repo, oldest commit first.
    let mut times = HashMap::new();
    let mut by_repo: BTreeMap<PathBuf, Vec<&str>> = BTreeMap::new();
    for g in &ordered {
        if let Source::Git {
            git_dir: Some(dir),
            commit,
            ..
        } = &g.source
        {
            by_repo.entry(dir.clone()).or_default().push(commit);
        }
    }
    for (dir, commits) in by_repo {
        times.extend(commit_times(&dir, &commits));
    }
    ordered.sort_by_key(|g| match &g.source {
        Source::Documents(_) => (g.repo_name.clone(), 0),
        Source::Git { commit, .. } => {
            (g.repo_name.clone(), times.get(commit).copied().unwrap_or(0))
        }
    });
    Ok(ordered)
}

/// A repo-relative path that stays inside its folder.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| p.to_path_buf())
}

/// Writes the group's corpus to a folder (reusing what is there) and returns the folder.
pub fn lay_out(group: &Group, opts: &EvalOptions) -> Result<PathBuf> {
    match &group.source {
        Source::Documents(file) => {
            lay_out_documents(file, &opts.work_dir.join("corpora").join(&group.repo_name))
        }
        Source::Git {
            git_dir: None,
            repo,
            ..
        } => match &opts.repos_dir {
            None => bail!("repo {repo} is needed: fetch it and pass --repos DIR"),
            Some(d) => bail!("repo {repo} not found under {}", d.display()),
        },
        Source::Git {
            git_dir: Some(git_dir),
            commit,
            ..
        } => {
            let trees = opts.work_dir.join("trees");
            lay_out_commit(
                git_dir,
                commit,
                &trees.join(&group.repo_name),
                &trees.join(format!("{}.manifest", group.repo_name)),
            )
        }
    }
}

fn lay_out_documents(file: &Path, dest: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(file)
        .with_context(|| format!("cannot read corpus {}", file.display()))?;
    let stamp = format!("{} {:?}", meta.len(), meta.modified().ok());
    let marker = dest.with_extension("done");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == stamp) && dest.is_dir() {
        return Ok(dest.to_path_buf());
    }
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    #[derive(serde::Deserialize)]
    struct Doc {
        path: String,
        text: String,
    }
    let reader = BufReader::new(std::fs::File::open(file)?);
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let doc: Doc = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a document", file.display(), n + 1))?;
        let rel = safe_relative(&doc.path)
            .with_context(|| format!("{}:{}: unsafe path {:?}", file.display(), n + 1, doc.path))?;
        let target = dest.join(rel);
        std::fs::create_dir_all(target.parent().unwrap_or(dest))?;
        std::fs::write(&target, doc.text)?;
    }
    std::fs::write(&marker, stamp)?;
    Ok(dest.to_path_buf())
}

fn git(git_dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(git_dir);
    cmd
}

fn lay_out_commit(
    git_dir: &Path,
    commit: &str,
    dest: &Path,
    manifest_path: &Path,
) -> Result<PathBuf> {
    let listing = git(git_dir)
        .args(["ls-tree", "-r", "-z", commit])
        .output()
        .context("cannot run git")?;
    if !listing.status.success() {
        bail!(
            "git cannot list commit {commit} in {}: {}",
            git_dir.display(),
            String::from_utf8_lossy(&listing.stderr).trim()
        );
    }
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for entry in listing.stdout.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let fields: Vec<&str> = meta.split(' ').collect();
        if fields.len() == 3
            && fields[1] == "blob"
            && (fields[0] == "100644" || fields[0] == "100755")
        {
            wanted.insert(path.to_string(), fields[2].to_string());
        }
    }
    let old: BTreeMap<String, String> = std::fs::read_to_string(manifest_path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            l.split_once('\t')
                .map(|(sha, p)| (p.to_string(), sha.to_string()))
        })
        .collect();
    if !dest.is_dir() && !old.is_empty() {
        let _ = std::fs::remove_file(manifest_path);
        return lay_out_commit(git_dir, commit, dest, manifest_path);
    }
    for path in old.keys().filter(|p| !wanted.contains_key(*p)) {
        if let Some(rel) = safe_relative(path) {
            let _ = std::fs::remove_file(dest.join(rel));
        }
    }
    let to_write: Vec<(&String, &String)> = wanted
        .iter()
        .filter(|(p, sha)| old.get(*p) != Some(*sha))
        .collect();
    let mut written: BTreeMap<String, String> = wanted
        .iter()
        .filter(|(p, sha)| old.get(*p) == Some(*sha))
        .map(|(p, s)| (p.clone(), s.clone()))
        .collect();

    let mut cat = git(git_dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run git cat-file")?;
    let mut stdin = cat.stdin.take().context("git stdin")?;
    let requests: Vec<String> = to_write.iter().map(|(_, sha)| format!("{sha}\n")).collect();
    let feeder = std::thread::spawn(move || {
        for r in requests {
            if stdin.write_all(r.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut out = BufReader::new(cat.stdout.take().context("git stdout")?);
    let mut header = String::new();
    for (path, sha) in &to_write {
        header.clear();
        out.read_line(&mut header)?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        if fields.len() < 3 {
            continue; // `<sha> missing`: a blob the snapshot lacks
        }
        let size: usize = fields[2].parse()?;
        let mut data = vec![0u8; size + 1];
        out.read_exact(&mut data)?;
        data.truncate(size);
        let Some(rel) = safe_relative(path) else {
            continue;
        };
        let target = dest.join(rel);
        std::fs::create_dir_all(target.parent().unwrap_or(dest))?;
        let _ = std::fs::remove_file(&target);
        std::fs::write(&target, &data)?;
        written.insert((*path).clone(), (*sha).clone());
    }
    let _ = feeder.join();
    let _ = cat.wait();
    let manifest: String = written
        .iter()
        .map(|(p, sha)| format!("{sha}\t{p}\n"))
        .collect();
    std::fs::write(manifest_path, manifest)?;
    Ok(dest.to_path_buf())
}
