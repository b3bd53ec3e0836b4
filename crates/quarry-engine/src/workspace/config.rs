//! Workspace settings: `config.toml` beside the index, read and written by `quarry config` and
//! `quarry model use`. Every key is declared once in [`KEYS`] (keys.rs) with its kind, so a typo or a
//! bad value is refused when it is set, not discovered at search time. Writing goes through
//! `toml_edit`, which keeps the user's comments and layout.

use anyhow::{bail, Context, Result};
use quarry_rank::fusion::{FusionConfig, FusionMethod};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml_edit::{DocumentMut, Item, Table, Value};

pub use super::keys::{KeyKind, KeySpec, KEYS};

/// Commits per repo embedded by default: 0, every one. The fix an issue asks about is rarely
/// recent (on the commits_dev set 100 of 106 fixes are older than their repo's newest 1000
/// commits, the median is 18,000 commits back), and a commit without a vector is found by its
/// words alone (hit@10 0.36 there, against 0.63 with every commit embedded). The price is
/// paid once, by the first sync: ~120 commits/s on two cores (sympy's 62k commits in ~9 min,
/// most repos in under a minute), interruptible and resumed by the next sync. A bound
/// (`history.embed_recent = N`) keeps only the newest N per repo.
pub const DEFAULT_EMBED_RECENT: u64 = 0;

/// First-stage results a language model reorders by default (`search.rerank_candidates`).
pub const DEFAULT_RERANK_CANDIDATES: usize = 20;

/// Seconds a resident quarry waits for a request before it exits (`daemon.idle_s`).
pub const DEFAULT_DAEMON_IDLE_S: u64 = 900;

/// Default endpoint timeout: long enough for a batch on a busy local server.
const DEFAULT_TIMEOUT_S: f64 = 30.0;
const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";

/// Every key: `KEYS`, then the file-ranking constants quarry-rank declares.
pub fn all_keys() -> Vec<KeySpec> {
    let ranking = quarry_rank::files::SETTINGS
        .iter()
        .map(|&(name, help)| KeySpec {
            name,
            kind: KeyKind::Number,
            help,
        });
    KEYS.iter().copied().chain(ranking).collect()
}

fn spec(key: &str) -> Result<KeySpec> {
    let keys = all_keys();
    keys.iter()
        .find(|k| k.name == key)
        .copied()
        .with_context(|| {
            let names: Vec<&str> = keys.iter().map(|k| k.name).collect();
            format!("unknown setting `{key}` (known: {})", names.join(", "))
        })
}

/// How far a standby may trail the primary and still answer searches, in seconds.
pub const DEFAULT_MAX_LAG_S: f64 = 30.0;

/// `key`'s value among a model's `search_defaults`.
fn find_default(defaults: &[(&str, &str)], key: &str) -> Option<String> {
    defaults
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, value)| value.to_string())
}

/// The default of a key, as `quarry config get` prints it ("" when there is none).
fn default_of(key: &str) -> String {
    let f = FusionConfig::default();
    match key {
        "embed.provider" => "auto".into(),
        "embed.local_model" => quarry_embed::MINILM.name.into(),
        "embed.runtime" => "auto".into(),
        "embed.precision" => "int8".into(),
        "embed.device" => "cpu".into(),
        "embed.api_key_env" => DEFAULT_API_KEY_ENV.into(),
        "history.embed_recent" => DEFAULT_EMBED_RECENT.to_string(),
        "daemon.auto" => "true".into(),
        "daemon.watch" => "false".into(),
        "daemon.idle_s" => DEFAULT_DAEMON_IDLE_S.to_string(),
        "embed.timeout_s" => DEFAULT_TIMEOUT_S.to_string(),
        "store.timeout_s" => quarry_postgres::DEFAULT_TIMEOUT.as_secs().to_string(),
        "store.max_lag_s" => DEFAULT_MAX_LAG_S.to_string(),
        "search.rerank" => "none".into(),
        "search.rerank_candidates" => DEFAULT_RERANK_CANDIDATES.to_string(),
        "llm.command" => "claude -p".into(),
        "llm.api_key_env" => DEFAULT_API_KEY_ENV.into(),
        "llm.timeout_s" => "60".into(),
        "search.fusion" => match f.method {
            FusionMethod::Convex => "convex".into(),
            FusionMethod::Rrf => "rrf".into(),
        },
        "search.lexical_candidates" => f.lexical_candidates.to_string(),
        "search.semantic_candidates" => f.semantic_candidates.to_string(),
        "search.rrf_k" => f.rrf_k.to_string(),
        "search.nl_lexical_weight" => f.nl_lexical.to_string(),
        "search.code_semantic_weight" => f.code_semantic.to_string(),
        "search.symbol_boost" => f.symbol_boost.to_string(),
        "search.path_boost" => f.path_boost.to_string(),
        "search.max_per_file" => f.max_per_file.to_string(),
        "search.answer_floor" => f.answer_floor.to_string(),
        "search.commit_answer_floor" => f.commit_answer_floor.to_string(),
        "search.commit_issue_lexical_weight" => f.commit_issue_lexical.to_string(),
        "search.commit_fix_prior" => f.commit_fix_prior.to_string(),
        "search.commit_code_echo" => f.commit_code_echo.to_string(),
        "search.commit_before_release_prior" => f.commit_before_release_prior.to_string(),
        _ => f.files.get(key).map(|v| v.to_string()).unwrap_or_default(),
    }
}

/// Whether `url` names a store quarry knows by its scheme: `postgres://`, `postgresql://` (or
/// PostgreSQL's `key=value` form), `opensearch+http://`, `opensearch+https://`. Anything else
/// is said here, with the schemes, rather than read as a PostgreSQL string ("invalid
/// connection string: unexpected EOF" for `opensearh+http://…` or a node's `http://…`).
pub(crate) fn check_store_url(url: &str) -> Result<()> {
    const KNOWN: &str = "postgres:// or postgresql:// (PostgreSQL with pgvector) and opensearch+http:// or opensearch+https:// (OpenSearch)";
    let Some((scheme, rest)) = url.split_once("://") else {
        if url.contains('=') {
            return Ok(()); // host=… dbname=…: PostgreSQL's key=value form
        }
        bail!("the store URL (store.url, --db-url or $QUARRY_DB_URL) has no scheme: quarry knows {KNOWN}");
    };
    if [
        "postgres",
        "postgresql",
        "opensearch+http",
        "opensearch+https",
    ]
    .contains(&scheme)
    {
        return Ok(());
    }
    let shown = quarry_opensearch::redact(url);
    let shown_rest = shown.split_once("://").map_or(rest, |(_, r)| r);
    let hint = match scheme.rsplit('+').next() {
        Some(web @ ("http" | "https")) => {
            format!("; for an OpenSearch node write opensearch+{web}://{shown_rest}")
        }
        _ => String::new(),
    };
    bail!("the store URL {shown} (store.url, --db-url or $QUARRY_DB_URL) has the scheme {scheme}://, which quarry does not know: it knows {KNOWN}{hint}")
}

/// Checks `raw` against the key's kind and returns the TOML value to store.
fn parse_value(spec: &KeySpec, raw: &str) -> Result<Value> {
    let raw = raw.trim();
    let bad = |what: &str| anyhow::anyhow!("`{raw}` is not {what} (setting {})", spec.name);
    Ok(match spec.kind {
        KeyKind::Choice(options) => {
            if !options.contains(&raw) {
                bail!(
                    "`{raw}` is not one of {} (setting {})",
                    options.join(", "),
                    spec.name
                );
            }
            raw.into()
        }
        KeyKind::Text => {
            if raw.is_empty() {
                return Err(bad("a name"));
            }
            raw.into()
        }
        KeyKind::PostgresUrl => {
            if !raw.contains("://") {
                return Err(bad("a postgres:// URL or an opensearch+http(s):// URL"));
            }
            check_store_url(raw).with_context(|| format!("setting {}", spec.name))?;
            raw.into()
        }
        KeyKind::PostgresUrls => {
            let urls: Vec<&str> = raw.split(',').map(str::trim).collect();
            if urls
                .iter()
                .any(|u| !(u.starts_with("postgres://") || u.starts_with("postgresql://")))
            {
                return Err(bad("postgres:// URLs separated by commas"));
            }
            urls.join(",").into()
        }
        KeyKind::Url => {
            if !(raw.starts_with("http://") || raw.starts_with("https://")) || raw.len() < 10 {
                return Err(bad("an http(s) URL"));
            }
            raw.into()
        }
        KeyKind::Path => {
            let path = std::path::absolute(raw).map_err(|_| bad("a path"))?;
            path.to_string_lossy().as_ref().into()
        }
        KeyKind::Count => match raw.parse::<i64>() {
            Ok(n) if n >= 1 => n.into(),
            _ => return Err(bad("a whole number ≥ 1")),
        },
        KeyKind::Whole => match raw.parse::<i64>() {
            Ok(n) if n >= 0 => n.into(),
            _ => return Err(bad("a whole number ≥ 0")),
        },
        KeyKind::Number => match raw.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => x.into(),
            _ => return Err(bad("a number ≥ 0")),
        },
    })
}

/// One row of `quarry config list`.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigEntry {
    pub key: &'static str,
    /// The value in effect: the set one, else the default.
    pub value: String,
    pub is_set: bool,
    pub help: &'static str,
}

/// Which embedder the settings ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedderChoice {
    /// No vectors: lexical only.
    None,
    /// The local model: the installed `model`, or this folder, run as `run` says.
    Local {
        model: &'static quarry_embed::LocalModel,
        model_dir: Option<PathBuf>,
        run: LocalRun,
    },
    Endpoint {
        url: String,
        model: String,
        api_key_env: String,
        timeout: Duration,
    },
}

/// How the local model runs: `embed.runtime`, `embed.precision`, `embed.device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalRun {
    pub runtime: quarry_embed::Runtime,
    pub precision: quarry_embed::Precision,
    pub device: quarry_embed::Device,
}

/// The workspace's settings file.
#[derive(Clone)]
pub struct Config {
    path: PathBuf,
    doc: DocumentMut,
}

impl Config {
    pub fn file(dir: &Path) -> PathBuf {
        dir.join("config.toml")
    }

    /// Reads `dir/config.toml`; a missing file is an empty configuration.
    pub fn load(dir: &Path) -> Result<Config> {
        let path = Self::file(dir);
        let doc = match std::fs::read_to_string(&path) {
            Ok(text) => text.parse::<DocumentMut>().with_context(|| {
                format!(
                    "{} is not valid TOML: fix it or remove it (`quarry config list` shows the settings)",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => DocumentMut::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let config = Config { path, doc };
        // Refuse unknown or ill-typed keys now, naming the file.
        for entry in config.set_keys() {
            let spec = spec(&entry).with_context(|| format!("in {}", config.path.display()))?;
            let raw = config.raw(spec.name).unwrap_or_default();
            parse_value(&spec, &raw).with_context(|| format!("in {}", config.path.display()))?;
        }
        Ok(config)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The dotted names of every key set in the file.
    fn set_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for (section, item) in self.doc.iter() {
            match item.as_table() {
                Some(table) => keys.extend(table.iter().map(|(k, _)| format!("{section}.{k}"))),
                None => keys.push(section.to_string()),
            }
        }
        keys
    }

    /// The stored value of a key as text, if set.
    fn raw(&self, key: &str) -> Option<String> {
        let (section, name) = key.split_once('.')?;
        let value = self.doc.get(section)?.as_table()?.get(name)?.as_value()?;
        Some(match value {
            Value::String(s) => s.value().clone(),
            Value::Integer(i) => i.value().to_string(),
            Value::Float(f) => f.value().to_string(),
            other => other.to_string().trim().to_string(),
        })
    }

    /// The value in effect for a key: set, else the local model's own default for it, else
    /// its default.
    pub fn get(&self, key: &str) -> Result<String> {
        let spec = spec(key)?;
        Ok(self
            .raw(spec.name)
            .or_else(|| self.model_default(spec.name))
            .unwrap_or_else(|| default_of(spec.name)))
    }

    /// A `search.*` default the configured local model sets for itself
    /// (`LocalModel::search_defaults`). Only `search.*` keys: the model is read from `embed.*`.
    fn model_default(&self, key: &str) -> Option<String> {
        if !key.starts_with("search.") {
            return None;
        }
        find_default(self.model_search_defaults(), key)
    }

    /// The `search.*` defaults of the configured local model (none for other embedders).
    fn model_search_defaults(&self) -> &'static [(&'static str, &'static str)] {
        match self.embedder_choice() {
            Ok(EmbedderChoice::Local { model, .. }) => model.search_defaults,
            _ => &[],
        }
    }

    /// Whether the key is set in the file.
    pub fn is_set(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    /// Sets a key after checking its value; call `save` to write the file.
    pub fn set(&mut self, key: &str, raw: &str) -> Result<()> {
        let spec = spec(key)?;
        let value = parse_value(&spec, raw)?;
        let (section, name) = spec.name.split_once('.').expect("keys are dotted");
        let table = self
            .doc
            .entry(section)
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .with_context(|| format!("`{section}` in {} is not a table", self.path.display()))?;
        table.insert(name, Item::Value(value));
        Ok(())
    }

    /// Removes a key (back to its default); returns whether it was set.
    pub fn unset(&mut self, key: &str) -> Result<bool> {
        let spec = spec(key)?;
        let (section, name) = spec.name.split_once('.').expect("keys are dotted");
        Ok(self
            .doc
            .get_mut(section)
            .and_then(Item::as_table_mut)
            .and_then(|t| t.remove(name))
            .is_some())
    }

    /// Writes the file atomically (a temporary file renamed over it).
    pub fn save(&self) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, self.doc.to_string())
            .and_then(|_| std::fs::rename(&tmp, &self.path))
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub fn entries(&self) -> Vec<ConfigEntry> {
        all_keys()
            .into_iter()
            .map(|spec| ConfigEntry {
                key: spec.name,
                value: self.get(spec.name).unwrap_or_default(),
                is_set: self.is_set(spec.name),
                help: spec.help,
            })
            .collect()
    }

    pub fn number(&self, key: &str) -> f64 {
        self.get(key)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    /// A `*.timeout_s` key as a duration: at least 0.1 s, and at most a year (a larger
    /// finite number is accepted by `config set` but no `Duration` holds 1e300 seconds).
    pub fn seconds(&self, key: &str) -> Duration {
        Duration::from_secs_f64(self.number(key).clamp(0.1, 365.0 * 86_400.0))
    }

    /// The hybrid pipeline's constants: the defaults with every set `search.*` key applied.
    pub fn fusion(&self) -> FusionConfig {
        // The model's own defaults are read once, not once per key: `get` resolves the
        // embedder for each of some seventy keys, a tenth of a server's path search.
        let model_defaults = self.model_search_defaults();
        let value = |key: &str| -> String {
            debug_assert!(spec(key).is_ok(), "`{key}` is a known setting");
            self.raw(key)
                .or_else(|| find_default(model_defaults, key))
                .unwrap_or_else(|| default_of(key))
        };
        let number = |key: &str| -> f64 { value(key).parse().unwrap_or(0.0) };
        let count = |key| number(key) as usize;
        FusionConfig {
            method: match value("search.fusion").as_str() {
                "rrf" => FusionMethod::Rrf,
                _ => FusionMethod::Convex,
            },
            lexical_candidates: count("search.lexical_candidates"),
            semantic_candidates: count("search.semantic_candidates"),
            rrf_k: number("search.rrf_k"),
            nl_lexical: number("search.nl_lexical_weight"),
            code_semantic: number("search.code_semantic_weight"),
            symbol_boost: number("search.symbol_boost"),
            path_boost: number("search.path_boost"),
            max_per_file: count("search.max_per_file"),
            answer_floor: number("search.answer_floor"),
            commit_answer_floor: number("search.commit_answer_floor"),
            commit_issue_lexical: number("search.commit_issue_lexical_weight"),
            commit_fix_prior: number("search.commit_fix_prior"),
            commit_code_echo: number("search.commit_code_echo"),
            commit_before_release_prior: number("search.commit_before_release_prior"),
            files: {
                let mut files = quarry_rank::FileRankConfig::default();
                for (key, _) in quarry_rank::files::SETTINGS {
                    files.set(key, number(key));
                }
                files
            },
        }
    }

    /// How many of each repo's newest commits get a vector; `None` = all.
    pub fn history_embed_recent(&self) -> Option<u64> {
        match self.number("history.embed_recent") as u64 {
            0 => None,
            n => Some(n),
        }
    }

    /// The embedder the settings ask for; an endpoint provider without a URL or model name is
    /// an error that says which key to set.
    pub fn embedder_choice(&self) -> Result<EmbedderChoice> {
        let endpoint = self.raw("embed.endpoint");
        let provider = self.get("embed.provider")?;
        let provider = match (provider.as_str(), &endpoint) {
            ("auto", Some(_)) => "endpoint",
            ("auto", None) => "local",
            (p, _) => p,
        };
        Ok(match provider {
            "none" => EmbedderChoice::None,
            "local" => EmbedderChoice::Local {
                model: quarry_embed::local_model(&self.get("embed.local_model")?)
                    .unwrap_or(&quarry_embed::MINILM),
                model_dir: self.raw("embed.model_dir").map(PathBuf::from),
                run: LocalRun {
                    runtime: match self.get("embed.runtime")?.as_str() {
                        "onnx" => quarry_embed::Runtime::Onnx,
                        "candle" => quarry_embed::Runtime::Candle,
                        _ => quarry_embed::Runtime::Auto,
                    },
                    precision: match self.get("embed.precision")?.as_str() {
                        "fp32" => quarry_embed::Precision::Fp32,
                        _ => quarry_embed::Precision::Int8,
                    },
                    device: match self.get("embed.device")?.as_str() {
                        "cuda" => quarry_embed::Device::Cuda,
                        _ => quarry_embed::Device::Cpu,
                    },
                },
            },
            _ => {
                let Some(url) = endpoint else {
                    bail!("embed.provider is `endpoint` but no endpoint is set: quarry config set embed.endpoint URL");
                };
                let Some(model) = self.raw("embed.model") else {
                    bail!("the embedding endpoint needs a model name: quarry config set embed.model NAME");
                };
                EmbedderChoice::Endpoint {
                    url,
                    model,
                    api_key_env: self.get("embed.api_key_env")?,
                    timeout: self.seconds("embed.timeout_s"),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_keep_comments_and_refuse_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            Config::file(dir.path()),
            "# my notes\n[search]\nmax_per_file = 2 # fewer\n",
        )
        .unwrap();
        let mut config = Config::load(dir.path()).unwrap();
        assert_eq!(config.fusion().max_per_file, 2);
        assert_eq!(config.get("search.rrf_k").unwrap(), "60");
        assert!(!config.is_set("search.rrf_k"));

        config.set("search.fusion", "rrf").unwrap();
        config
            .set("embed.endpoint", "http://127.0.0.1:11434/v1")
            .unwrap();
        config.set("embed.model", "nomic-embed-text").unwrap();
        config.set("embed.timeout_s", "2.5").unwrap();
        assert!(config.set("search.max_per_file", "0").is_err());
        assert!(config.set("search.fusion", "magic").is_err());
        assert!(config.set("embed.endpoint", "localhost:11434").is_err());
        let err = config
            .set("search.max_per_fil", "2")
            .unwrap_err()
            .to_string();
        assert!(err.contains("search.max_per_file"), "{err}");
        config.save().unwrap();

        let text = std::fs::read_to_string(config.path()).unwrap();
        assert!(
            text.contains("# my notes") && text.contains("# fewer"),
            "{text}"
        );
        let config = Config::load(dir.path()).unwrap();
        assert_eq!(config.fusion().method, FusionMethod::Rrf);
        assert_eq!(
            config.embedder_choice().unwrap(),
            EmbedderChoice::Endpoint {
                url: "http://127.0.0.1:11434/v1".into(),
                model: "nomic-embed-text".into(),
                api_key_env: "OPENAI_API_KEY".into(),
                timeout: Duration::from_millis(2500),
            }
        );
    }

    #[test]
    fn provider_choice_and_broken_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::load(dir.path()).unwrap();
        assert_eq!(
            config.embedder_choice().unwrap(),
            EmbedderChoice::Local {
                model: &quarry_embed::MINILM,
                model_dir: None,
                run: LocalRun::default()
            }
        );
        config
            .set("embed.local_model", "embeddinggemma-300m")
            .unwrap();
        assert!(matches!(
            config.embedder_choice().unwrap(),
            EmbedderChoice::Local { model, .. } if model == &quarry_embed::EMBEDDINGGEMMA
        ));
        assert!(config.set("embed.local_model", "bge-small").is_err());
        // The model's own fusion default, unless the workspace sets the key itself.
        assert_eq!(config.fusion().commit_issue_lexical, 1.0);
        config
            .set("search.commit_issue_lexical_weight", "0.3")
            .unwrap();
        assert_eq!(config.fusion().commit_issue_lexical, 0.3);
        assert!(config.unset("search.commit_issue_lexical_weight").unwrap());
        config.set("embed.local_model", "all-MiniLM-L6-v2").unwrap();
        assert_eq!(
            config.fusion().commit_issue_lexical,
            FusionConfig::default().commit_issue_lexical
        );
        config
            .set("embed.local_model", "embeddinggemma-300m")
            .unwrap();
        config.set("embed.provider", "endpoint").unwrap();
        let err = config.embedder_choice().unwrap_err().to_string();
        assert!(err.contains("embed.endpoint"), "{err}");
        config.set("embed.provider", "none").unwrap();
        assert_eq!(config.embedder_choice().unwrap(), EmbedderChoice::None);
        assert!(config.unset("embed.provider").unwrap());
        assert!(!config.unset("embed.provider").unwrap());

        std::fs::write(Config::file(dir.path()), "[search\n").unwrap();
        let err = format!("{:#}", Config::load(dir.path()).err().unwrap());
        assert!(
            err.contains("config.toml") && err.contains("not valid TOML"),
            "{err}"
        );
        std::fs::write(Config::file(dir.path()), "[search]\nrrf_k = -1\n").unwrap();
        let err = format!("{:#}", Config::load(dir.path()).err().unwrap());
        assert!(err.contains("search.rrf_k"), "{err}");
        std::fs::write(Config::file(dir.path()), "[embed]\ncolour = 1\n").unwrap();
        let err = format!("{:#}", Config::load(dir.path()).err().unwrap());
        assert!(err.contains("embed.colour"), "{err}");
    }
}
