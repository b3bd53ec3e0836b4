//! `quarry search` in `auto` mode asks the router (quarry-rank's route.rs) what the query is
//! and lets the engine that answers that kind exactly answer it: a name's definitions first, a
//! path's files, grep for literal text and regexes, ast-grep for structural patterns; questions
//! and issue texts go to ranked search. An exact engine that finds nothing hands the query to
//! ranked search, saying so. `--mode` bypasses the router.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use quarry_core::Language;
use quarry_grep::{GrepRequest, IndexedFiles};
use quarry_rank::route::{classify, Route};

use crate::answer::{fit_to_request, Mode, RouteReport, SearchResponse, SearchResult};
use crate::filter::PathFilter;
use crate::request::{check_request, Engine, SearchRequest};
use crate::workspace::Workspace;

/// Whether answering `request` may embed its query. The exact routes never do (a name, a path,
/// grep, ast-grep), so a short-lived process answering them need not load the model; when one
/// finds nothing and hands over to ranked search (`RouteReport::note`), its caller may attach
/// the model and ask again.
pub fn may_embed(request: &SearchRequest) -> bool {
    match (request.mode, request.engine) {
        (Mode::Lexical, _) => false,
        (Mode::Semantic | Mode::Hybrid, _) => true,
        (Mode::Auto, Some(engine)) => engine == Engine::Ranked,
        (Mode::Auto, None) => classify(&request.query).route() == Route::Ranked,
    }
}

impl Workspace {
    /// `request`, routed by what its query is when its mode is `auto`.
    pub fn search_routed(&self, request: &SearchRequest) -> Result<SearchResponse> {
        check_request(request)?;
        let (route, class) = match request.engine {
            Some(engine) => (engine.route(), None),
            None if request.mode == Mode::Auto => {
                let class = classify(&request.query);
                (class.route(), Some(class))
            }
            None => return self.search(request),
        };
        let mut report = RouteReport {
            class,
            route,
            note: None,
            languages: Vec::new(),
        };
        let exact = match route {
            Route::Ranked => None,
            Route::Symbol => {
                if let Some(definitions) = self.definition_results(request)? {
                    if !definitions.is_empty() {
                        let mut response = if request.mentions {
                            self.with_references(request, definitions)?
                        } else {
                            self.definitions_alone(request, definitions)?
                        };
                        response.route = Some(report);
                        return Ok(response);
                    }
                    report.note =
                        Some("no definition of that name matches; ranked search answered".into());
                }
                let mut response = self.search(request)?;
                response.route = Some(report);
                return Ok(response);
            }
            Route::Path => Some(self.path_results(request)?),
            Route::Location => Some(self.location_results(request)?),
            Route::GrepLiteral | Route::GrepRegex => Some(self.grep_results(request, route)?),
            Route::Structural => Some(self.structural_results(request, &mut report.languages)?),
        };
        let mut response = match exact {
            Some(Ok(results)) if !results.is_empty() => self.exact_answer(request, results)?,
            Some(Ok(_)) => {
                report.note = Some("the exact engine found nothing; ranked search answered".into());
                self.search(request)?
            }
            Some(Err(e)) => {
                report.note = Some(format!("{e:#}; ranked search answered"));
                self.search(request)?
            }
            None => self.search(request)?,
        };
        response.route = Some(report);
        Ok(response)
    }

    /// The repos a request searches.
    pub(crate) fn searched_repos(
        &self,
        request: &SearchRequest,
    ) -> Result<Vec<quarry_core::RepoInfo>> {
        Ok(self
            .store()
            .repos()?
            .into_iter()
            .filter(|r| request.repos.is_empty() || request.repos.contains(&r.name))
            .collect())
    }

    /// The code language most of the searched repos' files are in (a pattern that names none,
    /// `{ $$$A }`, is read in it; Python when the repos hold no code).
    fn most_common_language(&self, request: &SearchRequest) -> Result<Language> {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for repo in self.store().stats()? {
            if request.repos.is_empty() || request.repos.contains(&repo.repo.name) {
                for (language, files) in repo.languages {
                    *counts.entry(language).or_default() += files;
                }
            }
        }
        Ok(counts
            .into_iter()
            .filter_map(|(name, files)| Some((Language::from_name(&name)?, files)))
            .filter(|(language, _)| language.is_code())
            .max_by_key(|&(language, files)| (files, std::cmp::Reverse(language.name())))
            .map_or(Language::Python, |(language, _)| language))
    }

    /// The searched repos' roots, by name.
    fn searched_roots(&self, request: &SearchRequest) -> Result<Vec<(String, PathBuf)>> {
        Ok(self
            .searched_repos(request)?
            .into_iter()
            .map(|r| (r.name, PathBuf::from(r.root)))
            .collect())
    }

    /// A name's definitions, then its other mentions by lexical rank (never the model: a
    /// name lookup needs no embedding), each place once.
    fn with_references(
        &self,
        request: &SearchRequest,
        mut definitions: Vec<SearchResult>,
    ) -> Result<SearchResponse> {
        let mut lexical = request.clone();
        lexical.mode = Mode::Lexical;
        lexical.full_text = usize::MAX;
        let mut response = self.search(&lexical)?;
        response.plan = None;
        response.files.clear();
        let mut references: Vec<SearchResult> = std::mem::take(&mut response.results)
            .into_iter()
            .filter(|r| {
                !definitions.iter().any(|d| {
                    d.repo == r.repo
                        && d.path == r.path
                        && d.page == r.page
                        && r.start_line <= d.end_line
                        && d.start_line <= r.end_line
                })
            })
            .collect();
        // Mentions rank below every definition: their BM25 is scaled under the last one's score.
        let floor = definitions.last().map_or(1.0, |d| d.score) * 0.99;
        let top = references
            .iter()
            .map(|r| r.score)
            .fold(f64::MIN_POSITIVE, f64::max);
        // The search marked its results' lines; only a text it cut is marked again (as cut).
        let colour = request.colour_lines;
        crate::answer::mark_matched_lines(&mut definitions, &request.query, colour);
        for r in references.iter_mut().filter(|r| r.text_cut_from.is_some()) {
            crate::answer::mark_matched_lines(std::slice::from_mut(r), &request.query, colour);
        }
        let references = references.into_iter().map(|mut r| {
            r.reason = Some(format!("mentions the name (BM25 {:.2})", r.score));
            r.score = floor * r.score / top;
            r
        });
        response.results = definitions;
        response.results.extend(references);
        fit_to_request(&mut response.results, request.limit, request.full_text);
        Ok(response)
    }

    /// A name's definitions as the whole answer (`mentions` off), marked as every answer is.
    fn definitions_alone(
        &self,
        request: &SearchRequest,
        mut results: Vec<SearchResult>,
    ) -> Result<SearchResponse> {
        crate::answer::mark_matched_lines(&mut results, &request.query, request.colour_lines);
        fit_to_request(&mut results, request.limit, request.full_text);
        self.exact_answer(request, results)
    }

    /// A response of an exact engine's `results`: its frame is what the index holds (no ranked
    /// search — on sympy it was most of a literal search's time — and no query embedding).
    fn exact_answer(
        &self,
        request: &SearchRequest,
        results: Vec<SearchResult>,
    ) -> Result<SearchResponse> {
        Ok(SearchResponse {
            query: request.query.clone(),
            mode: Mode::Lexical,
            results,
            index: self.index_summary(request)?,
            coverage: None,
            plan: None,
            files: Vec::new(),
            warnings: Vec::new(),
            rerank: None,
            agentic: None,
            route: None,
        })
    }

    /// A repo's indexed paths that contain `part`, that `keep` wants and the request's filters
    /// admit, sorted.
    fn indexed_paths(
        &self,
        repo: &quarry_core::RepoInfo,
        filter: &PathFilter,
        part: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<String>> {
        let mut paths: Vec<String> = self
            .store()
            .file_paths_containing(repo.id, part)?
            .into_iter()
            .filter(|p| keep(p) && filter.admits(p))
            .collect();
        paths.sort();
        Ok(paths)
    }

    /// Files whose repo-relative path contains the query (or matches it as a glob): each
    /// file's first chunk.
    fn path_results(&self, request: &SearchRequest) -> Result<Result<Vec<SearchResult>>> {
        let wanted = request.query.trim().trim_start_matches("./");
        let filter = PathFilter::new(request)?;
        let mut results = Vec::new();
        for repo in self.searched_repos(request)? {
            for path in self.indexed_paths(&repo, &filter, wanted, |_| true)? {
                if results.len() >= request.limit {
                    return Ok(Ok(results));
                }
                if let Some(first) = self.store().first_chunk(&repo.name, &path)? {
                    let mut result = SearchResult::from(first);
                    result.score = 1.0;
                    result.reason = Some(format!("path contains `{wanted}`"));
                    results.push(result);
                }
            }
        }
        Ok(Ok(results))
    }

    /// `path:line[:column]`: the innermost chunk (a definition, where one encloses the line)
    /// holding that line of each file whose path ends with `path`.
    fn location_results(&self, request: &SearchRequest) -> Result<Result<Vec<SearchResult>>> {
        let Some((wanted, line)) = quarry_rank::route::location(&request.query) else {
            return Ok(Ok(Vec::new()));
        };
        let wanted = wanted.trim_start_matches("./").replace('\\', "/");
        let filter = PathFilter::new(request)?;
        let suffix = format!("/{wanted}");
        let mut results = Vec::new();
        for repo in self.searched_repos(request)? {
            let named = |p: &str| p == wanted || p.ends_with(&suffix);
            for path in self.indexed_paths(&repo, &filter, &wanted, named)? {
                if let Some(result) = enclosing_definition(self, &repo, &path, line) {
                    results.push(result);
                    continue;
                }
                let chunks = self.store().file_chunks(&repo.name, &path)?;
                if let Some(chunk) = crate::name_lookup::innermost_chunk(&chunks, line) {
                    let mut result = SearchResult::from(chunk.clone());
                    result.score = 1.0;
                    result.reason = Some(match &result.symbol {
                        Some(symbol) => format!("{symbol} encloses line {line}"),
                        None => format!("holds line {line}"),
                    });
                    results.push(result);
                }
            }
        }
        results.truncate(request.limit);
        Ok(Ok(results))
    }

    /// grep over the searched repos, each matching line a result.
    fn grep_results(
        &self,
        request: &SearchRequest,
        route: Route,
    ) -> Result<Result<Vec<SearchResult>>> {
        let literal = route == Route::GrepLiteral;
        let mut pattern = request.query.trim();
        // `"connection refused"`: the quotes say "as written"; they are not part of the text.
        for quote in ['"', '\'', '`'] {
            if literal
                && pattern.len() >= 2
                && pattern.starts_with(quote)
                && pattern.ends_with(quote)
            {
                pattern = &pattern[1..pattern.len() - 1];
                break;
            }
        }
        let roots = self.searched_roots(request)?;
        let paths = PathFilter::new(request)?;
        let grep = GrepRequest {
            patterns: vec![pattern.to_string()],
            paths: roots
                .iter()
                .map(|(_, root)| paths.scan_root(request, root))
                .collect(),
            fixed_strings: literal,
            language: request.language,
            listing_cache: Some(Workspace::listing_cache(&self.dir)),
            ..Default::default()
        };
        // A resident process (the servers, the daemon) keeps the tree's lists and states and
        // the indexed files' states between searches; a short-lived one reads them now.
        let (filter, tree): (_, &dyn quarry_grep::TreeMemory) = match &self.exact_memory {
            Some(memory) => (memory.files(&self.dir, &grep.requirement())?, memory.tree()),
            None => (
                self.trigram_filter(&grep.requirement())?.0,
                &quarry_grep::Cold,
            ),
        };
        let lines = match quarry_grep::scan::matching_lines(
            &grep,
            &filter,
            paths.scan_limit(request.limit),
            tree,
        ) {
            Ok(lines) => lines,
            Err(e) => return Ok(Err(e)),
        };
        Ok(Ok(lines
            .into_iter()
            .filter_map(|m| {
                let (repo, root) = roots.iter().find(|(_, root)| m.path.starts_with(root))?;
                let path = m
                    .path
                    .strip_prefix(root)
                    .ok()?
                    .to_string_lossy()
                    .into_owned();
                if !paths.admits(&path) {
                    return None;
                }
                let mut result = line_result(repo, &path, m.line_number as u32, m.line);
                result.reason = Some(format!(
                    "line {} `{pattern}`",
                    if literal { "contains" } else { "matches" }
                ));
                Some(result)
            })
            .take(request.limit)
            .collect()))
    }

    /// The languages a structural pattern is searched in when the request names none: every
    /// code language of the searched repos whose grammar parses the pattern (`console.warn($$$)`
    /// is JavaScript and TypeScript alike: read as JavaScript alone, vuejs/core gave 1 match of
    /// 14), most files first; the language it looks written in, or the repos' most common one,
    /// when none parses it.
    fn pattern_languages(&self, request: &SearchRequest, pattern: &str) -> Result<Vec<Language>> {
        if let Some(language) = request.language {
            return Ok(vec![language]);
        }
        let mut counts: HashMap<Language, u64> = HashMap::new();
        for repo in self.store().stats()? {
            if request.repos.is_empty() || request.repos.contains(&repo.repo.name) {
                for (name, files) in repo.languages {
                    if let Some(language) = Language::from_name(&name).filter(|l| l.is_code()) {
                        *counts.entry(language).or_default() += files;
                    }
                }
            }
        }
        let mut present: Vec<(Language, u64)> = counts.into_iter().collect();
        present.sort_by_key(|&(language, files)| (std::cmp::Reverse(files), language.name()));
        let parsing: Vec<Language> = present
            .into_iter()
            .map(|(language, _)| language)
            .filter(|&language| quarry_grep::structural::parses_as(pattern, language))
            .collect();
        if !parsing.is_empty() {
            return Ok(parsing);
        }
        Ok(vec![match guess_language(pattern) {
            Some(language) => language,
            None => self.most_common_language(request)?,
        }])
    }

    /// ast-grep over the searched repos, in `--lang`'s files or every language of theirs the
    /// pattern parses in (named in `languages`), merged in path order.
    fn structural_results(
        &self,
        request: &SearchRequest,
        languages: &mut Vec<Language>,
    ) -> Result<Result<Vec<SearchResult>>> {
        let pattern = request.query.trim();
        *languages = self.pattern_languages(request, pattern)?;
        let mut all = Vec::new();
        for &language in languages.iter() {
            match self.structural_results_in(request, language)? {
                Ok(found) => all.extend(found),
                // A pattern one language cannot compile is that language's to skip, unless
                // it was the only one.
                Err(e) if languages.len() == 1 => return Ok(Err(e)),
                Err(_) => {}
            }
        }
        all.sort_by(|a, b| (&a.repo, &a.path, a.start_line).cmp(&(&b.repo, &b.path, b.start_line)));
        all.truncate(request.limit);
        Ok(Ok(all))
    }

    /// ast-grep over the searched repos in `language`'s files.
    fn structural_results_in(
        &self,
        request: &SearchRequest,
        language: Language,
    ) -> Result<Result<Vec<SearchResult>>> {
        let pattern = request.query.trim();
        let roots = self.searched_roots(request)?;
        let admitted = PathFilter::new(request)?;
        let paths: Vec<PathBuf> = roots
            .iter()
            .map(|(_, root)| admitted.scan_root(request, root))
            .collect();
        let filter: IndexedFiles = self
            .trigram_filter(&quarry_grep::structural::requirement(pattern))?
            .0;
        let listing_cache = Workspace::listing_cache(&self.dir);
        // A routed answer keeps at most `limit` matches and 64 KB of text: its search holds
        // 8 MiB of matches, not the CLI's 48 (four `$A` searches at once held 734 MiB).
        let found = quarry_grep::structural::search_holding(
            pattern,
            language,
            &paths,
            &filter,
            admitted.scan_limit(request.limit),
            Some(&listing_cache),
            ROUTE_HELD_BYTES,
        );
        Ok(found.map(|(matches, _)| {
            matches
                .into_iter()
                .filter_map(|m| {
                    let full = PathBuf::from(&m.path);
                    let (repo, root) = roots.iter().find(|(_, root)| full.starts_with(root))?;
                    let path = full.strip_prefix(root).ok()?.to_string_lossy().into_owned();
                    if !admitted.admits(&path) {
                        return None;
                    }
                    let mut result = line_result(repo, &path, m.start_line as u32, m.text);
                    result.reason = Some(format!("ast-grep match of `{pattern}`"));
                    result.end_line = m.end_line as u32;
                    result.id = format!("{repo}:{path}:{}-{}", m.start_line, m.end_line);
                    result.kind = "structural match".into();
                    Some(result)
                })
                .take(request.limit)
                .collect()
        }))
    }
}

/// The innermost definition enclosing `line` of a file as it is now, among its definitions
/// (not its chunks: the index's chunks may merge small neighbours, so their symbol is not
/// always the line's).
fn enclosing_definition(
    ws: &Workspace,
    repo: &quarry_core::RepoInfo,
    path: &str,
    line: u32,
) -> Option<SearchResult> {
    let full = Path::new(&repo.root).join(path);
    let language = Language::detect(&full);
    if !language.is_code() {
        return None;
    }
    let quarry_sources::FileText::Text { text, .. } = quarry_sources::read_text(&full, 4 << 20)
    else {
        return None;
    };
    // The index's definitions when the file is as indexed: the same ones without the parse,
    // which was nearly all of the answer's time (sympy's 4,000-line numbers.py: 45 ms).
    let symbols = ws
        .symbols_as_indexed(&repo.name, path, &full)
        .unwrap_or_else(|| {
            quarry_chunk::chunk_file(language, &text, &quarry_chunk::ChunkOptions::default())
                .symbols
        });
    let def = symbols
        .iter()
        .filter(|s| s.start_line <= line && line <= s.end_line)
        .min_by_key(|s| s.end_line - s.start_line)?;
    let body: Vec<&str> = text
        .lines()
        .skip(def.start_line as usize - 1)
        .take((def.end_line - def.start_line + 1) as usize)
        .collect();
    let name = def.qualified_name();
    Some(SearchResult {
        id: format!("{}:{path}:{}-{}", repo.name, def.start_line, def.end_line),
        repo: repo.name.clone(),
        path: path.to_string(),
        start_line: def.start_line,
        end_line: def.end_line,
        page: None,
        cell: None,
        kind: def.kind.clone(),
        language,
        score: 1.0,
        text: Some(body.join("\n")),
        text_cut_from: None,
        score_parts: None,
        matched_lines: Vec::new(),
        more_matched: 0,
        reason: Some(format!("{name} encloses line {line}")),
        symbol: Some(name),
    })
}

fn line_result(repo: &str, path: &str, line: u32, text: String) -> SearchResult {
    SearchResult {
        id: format!("{repo}:{path}:{line}-{line}"),
        repo: repo.to_string(),
        path: path.to_string(),
        start_line: line,
        end_line: line,
        page: None,
        cell: None,
        symbol: None,
        kind: "match".into(),
        language: Language::detect(Path::new(path)),
        score: 1.0,
        text: Some(text),
        text_cut_from: None,
        score_parts: None,
        matched_lines: Vec::new(),
        more_matched: 0,
        reason: None,
    }
}

/// Bytes of matches a routed structural search holds (see `structural_results_in`).
const ROUTE_HELD_BYTES: usize = 8 << 20;

/// The language a structural pattern is written in, by its keywords (Python by default).
fn guess_language(pattern: &str) -> Option<Language> {
    let has = |s: &str| pattern.contains(s);
    if has("fn ") || has("::") || has(".unwrap()") || has("let ") || has("impl ") {
        Some(Language::Rust)
    } else if has("console.") || has("function ") || has("=>") || has("const ") {
        Some(Language::JavaScript)
    } else if has("func ") || has(":=") {
        Some(Language::Go)
    } else if has("def ") || has("self.") || pattern.trim_end().ends_with(':') {
        Some(Language::Python)
    } else {
        None
    }
}
