//! The files both outline measurements read: every code file over 100 lines that the indexer
//! would take under a folder (.gitignore etc. respected), with its outline rendered.

use quarry_core::Language;
use quarry_sources::{discover, read_text, DiscoverOptions, FileText};

/// One measured file: its path under the folder, its text and its rendered outline.
pub struct Outlined {
    pub rel_path: String,
    pub text: String,
    pub rendered: String,
}

pub fn outlined_files(dir: &str) -> anyhow::Result<Vec<Outlined>> {
    let found = discover(std::path::Path::new(dir), &DiscoverOptions::default())?;
    let mut out = Vec::new();
    for file in &found.files {
        let language = Language::detect(&file.abs_path);
        if !language.is_code() {
            continue;
        }
        let FileText::Text { text, .. } = read_text(&file.abs_path, 1 << 20) else {
            continue;
        };
        if text.lines().count() <= 100 {
            continue;
        }
        let rendered =
            quarry_outline::render(&quarry_outline::outline(&file.rel_path, language, &text));
        out.push(Outlined {
            rel_path: file.rel_path.clone(),
            text,
            rendered,
        });
    }
    Ok(out)
}
