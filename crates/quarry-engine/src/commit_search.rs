//! Commit search by meaning: the backfill that gives commits of repos with history embedding
//! on a vector (newest first, so a long backfill is useful early), and `log`'s ranking —
//! BM25, kNN, or both fused by reciprocal rank — with the filters applied before ranking.

use crate::answer::{CommitSearch, Mode};
use crate::embedding::backfill;
use crate::progress::Progress;
use crate::workspace::Workspace;
use anyhow::{bail, Result};
use quarry_core::history::{CommitHit, CommitQuery};
use quarry_core::tokens;
use quarry_rank::fusion::FusionConfig;
use quarry_rank::plan::QueryPlan;
use quarry_rank::role::{self, FileRole};
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;

/// Commits fetched, embedded and stored per transaction.
const EMBED_BATCH: usize = 64;
/// Distinct words of an issue text that commit BM25 reads: the title and the opening say what
/// the issue is about, the rest (details, logs, versions) matches any commit. Each word is a
/// posting list read: on commits_dev, lexical MRR 0.355 with every word against 0.404 with the
/// first 32, and hybrid p50 390 ms against 321 ms, hybrid hit@10 0.679 either way.
const ISSUE_TERMS: usize = 32;
/// Candidates each side contributes to the fusion.
const FUSION_DEPTH: usize = 200;
/// The first commits of a ranking whose patches are read for an issue's code (`weigh_by_echoes`):
/// the factor lifts a commit a few dozen places at most, and on commits_dev reading the first
/// 30, 50 or 400 gives the same ranking, where every patch read costs time.
const ECHO_DEPTH: usize = 50;

#[derive(Debug, Clone, Serialize)]
pub struct HistoryEmbedReport {
    pub model: String,
    /// Commits embedded by this run.
    pub embedded: u64,
    /// Commits within the bound that still have no vector (an interrupted run).
    pub pending: u64,
    /// The newest commits per repo this run embedded up to (`history.embed_recent`); absent
    /// when the whole history was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_per_repo: Option<u64>,
    /// Older commits left without a vector by that bound: found by their words only until
    /// `quarry sync --embed-all`.
    pub beyond_bound: u64,
    pub elapsed_ms: u64,
    /// Set when the embedder failed part-way: what is stored stays, `sync --embed-only` resumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

/// Which commits `embed_history` gives a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryEmbedScope {
    /// The newest `history.embed_recent` commits of each repo (the default).
    Recent,
    /// Every commit.
    All,
}

/// Commits of `repos` (all when empty) with embedding on that have no vector, bound or not.
pub fn unembedded_commits(store: &dyn quarry_core::Store, repos: &[String]) -> Result<u64> {
    Ok(store
        .history_stats()?
        .iter()
        .filter(|s| s.embed && (repos.is_empty() || repos.contains(&s.repo)))
        .map(|s| s.commits - s.embedded)
        .sum())
}

impl Workspace {
    /// The per-repo bound on embedded commits for `scope`; `None` = no bound.
    pub fn history_embed_bound(&self, scope: HistoryEmbedScope) -> Result<Option<u64>> {
        Ok(match scope {
            HistoryEmbedScope::All => None,
            HistoryEmbedScope::Recent => self.config()?.history_embed_recent(),
        })
    }

    /// Embeds the commits of `repos` (every repo when empty) with history embedding on that
    /// have no vector yet — the newest first, within `scope`. A run embeds the repos it was
    /// asked about, never another's history that waits. `None` when the workspace has no
    /// embedder attached.
    pub fn embed_history(
        &mut self,
        progress: &dyn Progress,
        scope: HistoryEmbedScope,
        repos: &[String],
    ) -> Result<Option<HistoryEmbedReport>> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(None);
        };
        let Some(_embedding) = self.one_embedder_at_a_time(progress)? else {
            return Ok(None);
        };
        let newest = self.history_embed_bound(scope)?;
        let started = Instant::now();
        let model = embedder.fingerprint();
        let (store, lock) = self.store_and_lock();
        store.set_embedding_model(&model)?;
        progress.begin(
            "embedding history",
            store.waiting_commit_embeddings(newest, repos)?,
        );
        let (embedded, interrupted) = backfill(
            embedder.as_ref(),
            progress,
            store,
            lock,
            |store| {
                let pending = store.pending_commit_embeddings(EMBED_BATCH, newest, repos)?;
                Ok(pending.into_iter().map(|p| (p.id, p.text)).collect())
            },
            |store, rows| store.put_commit_vectors(&rows),
        );
        let embedded = embedded?;
        let interrupted =
            interrupted.map(|e| format!("{e}; `quarry sync --embed-only` embeds the rest later"));
        let pending = store.waiting_commit_embeddings(newest, repos)?;
        Ok(Some(HistoryEmbedReport {
            model,
            embedded,
            pending,
            newest_per_repo: newest,
            beyond_bound: unembedded_commits(&*store, repos)?.saturating_sub(pending),
            elapsed_ms: started.elapsed().as_millis() as u64,
            interrupted,
        }))
    }

    /// Commits ranked for `text`: BM25, kNN or both (reciprocal-rank fusion), every filter in
    /// `query` applied before ranking. No words: newest first.
    pub fn search_commits(
        &self,
        text: &str,
        mut query: CommitQuery,
        mode: Mode,
        fusion: &FusionConfig,
    ) -> Result<CommitSearch> {
        // An issue text is read as code search reads it: its pasted sessions, banners and
        // environment tables are not its words, and its title counts most; and only its first
        // ISSUE_TERMS distinct words are asked for (docs/EVAL.md, issue [19]).
        // Read once: the terms, what the model reads and the fusion weights all come from it.
        let plan = quarry_rank::plan::plan(text);
        query.terms = if plan.issue.is_some() {
            let mut issue = plan.clone();
            issue.terms.truncate(ISSUE_TERMS);
            issue.lexical_terms(
                fusion.files.title_repeat.round() as usize,
                fusion.files.message_repeat.round() as usize,
            )
        } else {
            tokens::query_terms(text)
        };
        // Repos searched whose history is not synced answer nothing: said, not left silent.
        let mut warnings: Vec<String> = self.unsynced_note(&query.repos)?.into_iter().collect();
        if query.terms.is_empty() {
            return Ok(CommitSearch {
                mode: Mode::Lexical,
                commits: self.store().search_commits(&query)?,
                coverage: None,
                warnings,
            });
        }
        let has_vectors = || self.store().has_commit_vectors(&query.repos);
        let mut mode = match (mode, &self.embedder) {
            (Mode::Lexical, _) | (Mode::Auto, None) => Mode::Lexical,
            (Mode::Auto, Some(_)) if has_vectors()? => Mode::Hybrid,
            (Mode::Auto, Some(_)) => Mode::Lexical,
            (m, None) => bail!(
                "{m:?} commit search needs the embedding model and embedded history: `quarry model install`, then `quarry sync --embed-only` (or use --mode lexical)"
            ),
            // How much is embedded (none, possibly) is said by the coverage note below.
            (m, Some(_)) => m,
        };
        let mut vector = None;
        if let (Mode::Semantic | Mode::Hybrid, Some(embedder)) = (mode, &self.embedder) {
            match embedder.embed_queries(&[meaning_of(text, &plan)]) {
                Ok(mut v) => vector = v.pop(),
                Err(e) => {
                    warnings.push(format!("{e:#}; answered lexically"));
                    mode = Mode::Lexical;
                }
            }
        }
        let mut coverage = None;
        if matches!(mode, Mode::Semantic | Mode::Hybrid) {
            let (covered, note) = self.history_coverage(&query.repos, mode)?;
            coverage = Some(covered);
            warnings.extend(note);
        }
        let limit = query.limit.max(1);
        let depth = FUSION_DEPTH.max(limit);
        // The first `depth` of any ranking are weighed by what each commit changed
        // (`weigh_by_paths`) before the first `limit` are kept.
        let lexical = |n: usize| {
            self.store().search_commits(&CommitQuery {
                limit: n,
                ..query.clone()
            })
        };
        // Nearest commits by meaning, those under the floor left out: every commit has *some*
        // cosine to any text, and a query about nothing in the history gets no commits.
        let semantic = |n: usize| -> Result<Vec<CommitHit>> {
            let Some(v) = &vector else {
                return Ok(Vec::new());
            };
            let mut hits = self.store().search_commit_vectors(
                v,
                &CommitQuery {
                    limit: n,
                    ..query.clone()
                },
            )?;
            hits.retain(|h| h.score >= fusion.commit_answer_floor);
            Ok(hits)
        };
        let mut commits = match mode {
            Mode::Semantic => placed(semantic(depth)?, true),
            Mode::Hybrid => {
                let (wl, ws) = commit_weights(text, &plan, fusion);
                let lists = [
                    (wl, false, placed(lexical(depth)?, false)),
                    (ws, true, placed(semantic(depth)?, true)),
                ];
                reciprocal_rank_fusion(&lists, fusion.rrf_k)
            }
            _ => placed(lexical(depth)?, false),
        };
        self.weigh_by_paths(&mut commits, &plan, fusion)?;
        if plan.issue.is_some() && fusion.commit_code_echo > 0.0 {
            self.weigh_by_echoes(&mut commits, text, fusion)?;
        }
        if plan.issue.is_some() && fusion.commit_before_release_prior != 1.0 {
            self.weigh_by_release(&mut commits, text, fusion)?;
        }
        commits.truncate(limit);
        if !query.explain {
            for c in &mut commits {
                c.why = None;
            }
        }
        Ok(CommitSearch {
            mode,
            commits,
            coverage,
            warnings,
        })
    }

    /// Weighs each commit by what it changed, as code search weighs files by their role, and
    /// re-sorts (`commits` comes best first):
    ///
    /// - a commit that changed only tests, docs, changelogs, … (no code the project ships)
    ///   gets the best of its files' role priors (`search.prior_docs` and the rest), unless the
    ///   query names that role ("docs", "tests"): a question about when something changed asks
    ///   about the code, and a release note or a doc page repeats its words (on flask's
    ///   history, "session cookie signing changed" put three doc and changelog commits first);
    /// - for a whole issue text, a commit that changed code and tests (`role::fix_shaped`) is
    ///   raised by `search.commit_fix_prior`: an issue is fixed with its test. On commits_dev,
    ///   hybrid hit@10 0.708 -> 0.764 with 1.25 (docs/EVAL.md, issue [19]).
    fn weigh_by_paths(
        &self,
        commits: &mut [CommitHit],
        plan: &QueryPlan,
        fusion: &FusionConfig,
    ) -> Result<()> {
        let by_repo = shas_by_repo(commits.iter());
        // repo -> sha -> (role prior, fix-shaped)
        let mut factors: HashMap<String, HashMap<String, (f64, bool)>> = HashMap::new();
        for (repo, shas) in by_repo {
            for (sha, paths) in self.store().changed_paths(repo, &shas)? {
                let roles: Vec<FileRole> = paths.iter().map(|p| role::classify(p)).collect();
                let role_prior = roles
                    .iter()
                    .map(|&r| fusion.files.prior_for(r, plan))
                    .reduce(f64::max)
                    .unwrap_or(1.0);
                let fix = plan.issue.is_some() && role::fix_shaped(&roles);
                factors
                    .entry(repo.to_string())
                    .or_default()
                    .insert(sha, (role_prior, fix));
            }
        }
        for c in commits.iter_mut() {
            let Some(&(role, fix)) = factors.get(&c.repo).and_then(|f| f.get(&c.sha)) else {
                continue;
            };
            let fix_prior = if fix { fusion.commit_fix_prior } else { 1.0 };
            c.score *= role * fix_prior;
            if role != 1.0 || fix {
                let why = c.why.get_or_insert_with(Default::default);
                why.role_prior = (role != 1.0).then_some(role);
                why.fix_prior = fix.then_some(fix_prior);
            }
        }
        best_first(commits);
        Ok(())
    }

    /// For a whole issue text: raises each commit whose changed lines repeat the issue's code
    /// (runs of four code tokens, quarry_rank::echo) by `search.commit_code_echo`, and
    /// re-sorts. A report pastes the failing call and its traceback's source lines; the fix
    /// edits those lines and its test repeats the call, where a look-alike commit shares
    /// only words. On commits_dev, hybrid MRR 0.565 -> 0.582 (docs/EVAL.md, issue [19]).
    fn weigh_by_echoes(
        &self,
        commits: &mut [CommitHit],
        text: &str,
        fusion: &FusionConfig,
    ) -> Result<()> {
        let issue = quarry_rank::echo::shingles(text);
        if issue.is_empty() {
            return Ok(());
        }
        let by_repo = shas_by_repo(commits.iter().take(ECHO_DEPTH));
        let mut echoes: HashMap<(String, String), usize> = HashMap::new();
        for (repo, shas) in by_repo {
            for (sha, patch) in self.store().commit_patches(repo, &shas)? {
                let n = quarry_rank::echo::echoes(&issue, &patch);
                if n > 0 {
                    echoes.insert((repo.to_string(), sha), n);
                }
            }
        }
        for c in commits.iter_mut() {
            let Some(&n) = echoes.get(&(c.repo.clone(), c.sha.clone())) else {
                continue;
            };
            let factor = quarry_rank::echo::echo_factor(n, fusion.commit_code_echo);
            c.score *= factor;
            let why = c.why.get_or_insert_with(Default::default);
            why.code_echoes = Some(n);
            why.echo_factor = Some(factor);
        }
        best_first(commits);
        Ok(())
    }

    /// For a whole issue text that says which release of the project it runs ("SymPy 1.10
    /// gives …"): lowers each commit authored before that release was tagged by
    /// `search.commit_before_release_prior`, and re-sorts. The bug was in the release, so its
    /// fix came later (quarry_rank::releases). Tags are read from the repo when its folder is
    /// on this machine (a workspace on PostgreSQL may hold histories synced elsewhere: no
    /// release is known for those, and nothing is lowered). On commits_dev 19 of 106 issues
    /// name a version; hybrid MRR 0.582 -> 0.609 (docs/EVAL.md, issue [19]).
    fn weigh_by_release(
        &self,
        commits: &mut [CommitHit],
        text: &str,
        fusion: &FusionConfig,
    ) -> Result<()> {
        let mut bounds: HashMap<String, (i64, String)> = HashMap::new();
        let infos = self.store().repos()?;
        for info in infos
            .iter()
            .filter(|r| commits.iter().any(|c| c.repo == r.name))
        {
            let folder = std::path::Path::new(&info.root)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let names = quarry_rank::releases::project_names(&[&info.name, &folder]);
            let named = quarry_rank::releases::versions_named(text, &names);
            if named.is_empty() {
                continue;
            }
            let Ok(git) = quarry_history::GitRepo::open(std::path::Path::new(&info.root)) else {
                continue;
            };
            let tags = git.tags().unwrap_or_default();
            if let Some((tag, time)) = quarry_rank::releases::earliest_release(&named, &tags) {
                bounds.insert(info.name.clone(), (*time, tag.clone()));
            }
        }
        if bounds.is_empty() {
            return Ok(());
        }
        let prior = fusion.commit_before_release_prior;
        for c in commits.iter_mut() {
            let Some((time, tag)) = bounds.get(c.repo.as_str()) else {
                continue;
            };
            let authored = humantime::parse_rfc3339_weak(&c.date)
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs() as i64);
            if authored.is_some_and(|a| a < *time) {
                c.score *= prior;
                let why = c.why.get_or_insert_with(Default::default);
                why.release_prior = Some(prior);
                why.before_release = Some(tag.clone());
            }
        }
        best_first(commits);
        Ok(())
    }

    /// How much of the searched repos' history has vectors, and a note when not all of it
    /// does, saying what the ranking did about it and how to finish.
    fn history_coverage(
        &self,
        repos: &[String],
        mode: Mode,
    ) -> Result<(quarry_core::Coverage, Option<String>)> {
        let stats: Vec<_> = self
            .store()
            .history_stats()?
            .into_iter()
            .filter(|s| repos.is_empty() || repos.contains(&s.repo))
            .collect();
        let coverage = quarry_core::Coverage {
            embedded: stats.iter().map(|s| s.embedded).sum(),
            total: stats.iter().map(|s| s.commits).sum(),
        };
        if coverage.embedded >= coverage.total {
            return Ok((coverage, None));
        }
        let off: Vec<&str> = stats
            .iter()
            .filter(|s| !s.embed && s.commits > 0)
            .map(|s| s.repo.as_str())
            .collect();
        let how = if mode == Mode::Semantic {
            "only embedded commits can be found by meaning"
        } else {
            "the others are ranked by their words alone"
        };
        let mut note = format!(
            "{} of {} commits are embedded; {how}",
            coverage.embedded, coverage.total
        );
        let bound = self.history_embed_bound(HistoryEmbedScope::Recent)?;
        if off.is_empty() && self.store().waiting_commit_embeddings(bound, &[])? == 0 {
            note.push_str(&format!(
                " (the newest {} per repo are embedded by default; `quarry sync --embed-all` embeds the rest)",
                bound.unwrap_or_default()
            ));
        } else if off.is_empty() {
            note.push_str(" (`quarry sync --embed-only` embeds the rest)");
        } else {
            note.push_str(&format!(
                " (history embedding is off for {}: `quarry repo update NAME --embed`, then `quarry sync --embed-only`)",
                off.join(", ")
            ));
        }
        Ok((coverage, self.first_time(coverage).then_some(note)))
    }

    /// Whether this coverage is news to this workspace: a note about the same counts is said
    /// once, not on every `log` an agent runs (`status` keeps showing them, JSON answers
    /// carry them as `coverage`). Remembered in `<workspace>/said/history-coverage`; where
    /// that cannot be written, the note is said every time.
    fn first_time(&self, coverage: quarry_core::Coverage) -> bool {
        let file = self.dir.join("said").join("history-coverage");
        let counts = format!("{} of {}", coverage.embedded, coverage.total);
        if std::fs::read_to_string(&file).is_ok_and(|said| said == counts) {
            return false;
        }
        let _ = std::fs::create_dir_all(self.dir.join("said"))
            .and_then(|()| std::fs::write(&file, &counts));
        true
    }
}

/// What the model reads of a commit query: an issue text's prose (its title and sentences),
/// any other query as written. The model reads ~128 tokens, and an issue's pasted session,
/// banner or code block would fill them with what no commit message says; on commits_dev the
/// prose alone found the fix in the top 10 for more issues than the whole text (docs/EVAL.md).
fn meaning_of<'t>(text: &'t str, plan: &'t QueryPlan) -> &'t str {
    match &plan.issue {
        Some(issue) if issue.prose.chars().filter(|c| c.is_alphanumeric()).count() >= 12 => {
            &issue.prose
        }
        _ => text,
    }
}

/// (lexical, semantic) weights for a commit query. Commit messages are prose: a question in
/// words or a whole issue text is matched best by meaning (BM25 over the issue's many words
/// and the commits' patches mostly finds noise), while a short query naming code — an
/// identifier, a path — is matched best by its words. The same two settings as code search
/// (`search.nl_lexical`, `search.code_semantic`), except for a whole issue text, whose code
/// names and pasted expressions its fix's patch and test repeat: its words weigh
/// `search.commit_issue_lexical_weight` (0.4 against 0.2: commits_dev hybrid hit@10 0.67 ->
/// 0.71 before the fix-shape prior, 0.745 -> 0.764 with it).
fn commit_weights(text: &str, plan: &QueryPlan, cfg: &FusionConfig) -> (f64, f64) {
    if plan.issue.is_some() {
        return (cfg.commit_issue_lexical, 1.0);
    }
    let names_code = !plan.identifiers.is_empty() || !plan.file_hints.is_empty();
    // Counted over the raw text: a cleaned issue can be short, and it is still an issue.
    let words = quarry_core::tokens::query_terms(text).len();
    if names_code && words <= quarry_rank::plan::NATURAL_LANGUAGE_MAX_TERMS {
        (1.0, cfg.code_semantic)
    } else {
        (cfg.nl_lexical, 1.0)
    }
}

/// The SHAs of these commits, by repo: what the store's per-repo lookups take.
fn shas_by_repo<'c>(commits: impl Iterator<Item = &'c CommitHit>) -> HashMap<&'c str, Vec<String>> {
    let mut by_repo: HashMap<&str, Vec<String>> = HashMap::new();
    for c in commits {
        by_repo.entry(&c.repo).or_default().push(c.sha.clone());
    }
    by_repo
}

/// Best score first; ties by SHA, so an answer does not change between runs.
fn best_first(commits: &mut [CommitHit]) {
    commits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.sha.cmp(&b.sha)));
}

/// Says where each commit of a ranking stands in it (`CommitHit::why`): by meaning (`semantic`,
/// the score a cosine) or by words (BM25).
fn placed(mut list: Vec<CommitHit>, semantic: bool) -> Vec<CommitHit> {
    for (i, hit) in list.iter_mut().enumerate() {
        let why = hit.why.get_or_insert_with(Default::default);
        if semantic {
            why.semantic_rank = Some(i + 1);
            why.cosine = Some(hit.score);
        } else {
            why.lexical_rank = Some(i + 1);
            why.bm25 = Some(hit.score);
        }
    }
    list
}

/// Fuses weighted ranked lists by reciprocal rank: each list adds w/(k + rank) to a commit's
/// score. Rank, not score, because BM25 and cosine are on scales that do not compare.
///
/// A list marked `needs_vector` can only rank embedded commits. A commit without a vector has
/// no evidence from that side — neither for nor against — so its score is scaled up to the
/// full weight from the lists that could rank it: it competes on what is known of it instead
/// of losing to every embedded commit (an interrupted backfill, or a repo with embedding off).
fn reciprocal_rank_fusion(lists: &[(f64, bool, Vec<CommitHit>)], k: f64) -> Vec<CommitHit> {
    let mut fused: HashMap<(String, String), CommitHit> = HashMap::new();
    for (weight, _, list) in lists {
        for (rank, hit) in list.iter().enumerate() {
            let add = weight / (k + rank as f64 + 1.0);
            fused
                .entry((hit.repo.clone(), hit.sha.clone()))
                .and_modify(|h| {
                    h.score += add;
                    h.embedded |= hit.embedded;
                    // Where the other ranking placed it too.
                    if let (Some(why), Some(more)) = (h.why.as_mut(), &hit.why) {
                        why.lexical_rank = why.lexical_rank.or(more.lexical_rank);
                        why.bm25 = why.bm25.or(more.bm25);
                        why.semantic_rank = why.semantic_rank.or(more.semantic_rank);
                        why.cosine = why.cosine.or(more.cosine);
                    }
                })
                .or_insert_with(|| CommitHit {
                    score: add,
                    ..hit.clone()
                });
        }
    }
    let total: f64 = lists.iter().map(|(w, _, _)| w).sum();
    let without_vectors: f64 = lists.iter().filter(|(_, v, _)| !v).map(|(w, _, _)| w).sum();
    let mut out: Vec<CommitHit> = fused.into_values().collect();
    if without_vectors > 0.0 {
        for hit in out.iter_mut().filter(|h| !h.embedded) {
            hit.score *= total / without_vectors;
        }
    }
    best_first(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(sha: &str) -> CommitHit {
        CommitHit {
            repo: "r".into(),
            sha: sha.into(),
            author: String::new(),
            email: String::new(),
            date: String::new(),
            subject: String::new(),
            files_changed: 0,
            score: 0.0,
            embedded: true,
            why: None,
        }
    }

    #[test]
    fn a_commit_without_a_vector_is_not_ranked_down_for_it() {
        // The exact match "x" has no vector; embedded commits rank middling on both sides.
        let bare = CommitHit {
            embedded: false,
            ..hit("x")
        };
        let lexical = vec![bare, hit("a"), hit("b"), hit("c")];
        let semantic = vec![hit("d"), hit("e"), hit("b"), hit("a")];
        let fused: Vec<String> =
            reciprocal_rank_fusion(&[(1.0, false, lexical), (1.0, true, semantic)], 60.0)
                .into_iter()
                .map(|h| h.sha)
                .collect();
        assert_eq!(fused[0], "x", "{fused:?}");
    }

    #[test]
    fn fusion_prefers_commits_both_lists_rank_well() {
        let lexical = vec![hit("a"), hit("b"), hit("c")];
        let semantic = vec![hit("d"), hit("b"), hit("a")];
        let fused: Vec<String> =
            reciprocal_rank_fusion(&[(1.0, false, lexical), (1.0, true, semantic)], 60.0)
                .into_iter()
                .map(|h| h.sha)
                .collect();
        assert_eq!(fused[..2], ["a".to_string(), "b".to_string()]);
        assert_eq!(fused.len(), 4);
    }
}

#[cfg(test)]
mod weight_tests {
    use super::*;

    #[test]
    fn prose_leans_on_meaning_and_names_of_code_on_words() {
        let cfg = FusionConfig::default();
        let weights = |text: &str| commit_weights(text, &quarry_rank::plan::plan(text), &cfg);
        assert_eq!(
            weights("find work related to rate limiting"),
            (cfg.nl_lexical, 1.0)
        );
        assert_eq!(weights("parse_config_file"), (1.0, cfg.code_semantic));
        assert_eq!(weights("auth/session.go"), (1.0, cfg.code_semantic));
        let issue =
            "Session.resolve_redirects copies the original request for all subsequent requests, \
                     which can cause incorrect method selection when a 303 is followed by a 307 \
                     redirect and the client keeps the POST";
        assert_eq!(weights(issue), (cfg.commit_issue_lexical, 1.0));
    }
}
