//! The outline as text for an agent: one line per definition (`start-end signature — doc`),
//! indented by nesting, type members under their type, imports collapsed to one line.

use crate::Outline;
use std::fmt::Write;

/// Longest import line, in characters.
const MAX_IMPORT_LINE: usize = 200;
/// Longest doc line shown, in characters.
const MAX_DOC: usize = 64;
/// Longest members line (a type's fields on one line), in characters.
const MAX_MEMBERS_LINE: usize = 240;

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    s.chars().take(max - 1).collect::<String>() + "…"
}

/// A signature without the block opener it ends with.
fn trim_signature(sig: &str) -> &str {
    sig.trim_end()
        .trim_end_matches('{')
        .trim_end_matches(':')
        .trim_end()
}

/// A member line without visibility and the separator it ends with.
fn trim_member(m: &str) -> &str {
    let m = m.trim_end_matches([',', ';']).trim();
    m.strip_prefix("pub ").unwrap_or(m)
}

/// A Python method's signature without the `self`/`cls` every method has.
fn without_receiver(sig: &str) -> std::borrow::Cow<'_, str> {
    for receiver in ["(self, ", "(cls, "] {
        if sig.contains(receiver) {
            return sig.replacen(receiver, "(", 1).into();
        }
    }
    for receiver in ["(self)", "(cls)"] {
        if sig.contains(receiver) {
            return sig.replacen(receiver, "()", 1).into();
        }
    }
    sig.into()
}

fn is_test_module(item: &crate::OutlineItem) -> bool {
    matches!(item.kind.as_str(), "module" | "mod" | "namespace")
        && (item.name == "tests" || item.name == "test" || item.name.ends_with("_tests"))
}

pub fn render(outline: &Outline) -> String {
    let mut out = String::new();
    let size = match outline.pages {
        Some(pages) => format!("{pages} pages"),
        None => format!("{} lines", outline.total_lines),
    };
    let what = if outline.language.is_docs() {
        "headings"
    } else {
        "definitions"
    };
    let _ = writeln!(
        out,
        "{} — {}, {size}, {} {what}{}",
        outline.path,
        outline.language.name(),
        outline.items.len(),
        if outline.heuristic {
            " (heuristic outline)"
        } else {
            ""
        }
    );
    for block in &outline.imports {
        let mut unique: Vec<&str> = Vec::new();
        for name in &block.names {
            if !unique.contains(&name.as_str()) {
                unique.push(name);
            }
        }
        let mut names = unique.join(", ");
        if names.chars().count() > MAX_IMPORT_LINE {
            names = names.chars().take(MAX_IMPORT_LINE - 1).collect::<String>() + "…";
        }
        let _ = writeln!(
            out,
            "{}-{} imports ({}): {names}",
            block.start_line,
            block.end_line,
            block.names.len()
        );
    }
    let mut skip_under: Option<String> = None;
    for item in &outline.items {
        if let Some(prefix) = &skip_under {
            if item.qualified_name.starts_with(prefix.as_str()) {
                continue;
            }
            skip_under = None;
        }
        let indent = "  ".repeat(item.depth as usize);
        if let Some(page) = item.page {
            let _ = write!(out, "{indent}p.{page} ");
        } else if let Some(cell) = item.cell {
            let _ = write!(
                out,
                "{indent}cell {cell}:{}-{} ",
                item.start_line, item.end_line
            );
        } else if item.start_line == item.end_line {
            let _ = write!(out, "{indent}{} ", item.start_line);
        } else {
            let _ = write!(out, "{indent}{}-{} ", item.start_line, item.end_line);
        }
        // Test modules are listed as one line: an agent asks for them by name when it needs them.
        if is_test_module(item) {
            let prefix = format!("{}.", item.qualified_name);
            let inner = outline
                .items
                .iter()
                .filter(|i| i.qualified_name.starts_with(&prefix))
                .count();
            let _ = writeln!(out, "{} {} ({inner} definitions)", item.kind, item.name);
            skip_under = Some(prefix);
            continue;
        }
        match &item.signature {
            Some(sig) => out.push_str(&without_receiver(trim_signature(sig))),
            None => {
                let _ = write!(out, "{} {}", item.kind, item.name);
            }
        }
        if let Some(doc) = &item.doc {
            let _ = write!(out, " — {}", clip(doc, MAX_DOC));
        }
        out.push('\n');
        if !item.members.is_empty() {
            let members: Vec<&str> = item.members.iter().map(|m| trim_member(m)).collect();
            let _ = writeln!(
                out,
                "{indent}  {{ {} }}",
                clip(&members.join("; "), MAX_MEMBERS_LINE)
            );
        }
    }
    out
}
