//! A name's impact (its callers, step by step) drawn as an SVG the page shows inline: one
//! column per step, the name on the left, each caller a box linking to its line in the file
//! view, an edge to what it calls. Drawn on the server so the page carries no graph library,
//! and written by hand because the drawing is a few columns of boxes — a layout crate
//! (graphviz bindings, layout-rs) would be a native dependency or a large one for that.

use quarry_engine::graph::Impact;
use std::collections::HashMap;
use std::fmt::Write;

/// Boxes per column at most; the rest are counted in a last box.
const MAX_PER_COLUMN: usize = 30;
const BOX_W: usize = 230;
const BOX_H: usize = 34;
const GAP_X: usize = 70;
const GAP_Y: usize = 10;
const PAD: usize = 12;

/// Text escaped for XML character data and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A query-string value escaped (the file view's link).
fn url_part(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// At most `max` characters, with an ellipsis when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max - 1).collect();
        cut.push('…');
        cut
    }
}

fn bare(name: &str) -> &str {
    quarry_engine::graph::bare_name(name)
}

/// The SVG document of `impact`.
pub fn render(impact: &Impact) -> String {
    let depth = impact.callers.iter().map(|c| c.depth).max().unwrap_or(0);
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); depth + 1];
    for (i, c) in impact.callers.iter().enumerate() {
        columns[c.depth].push(i);
    }
    let tallest = columns
        .iter()
        .map(|c| c.len().min(MAX_PER_COLUMN + 1))
        .max()
        .unwrap_or(1)
        .max(1);
    let width = PAD * 2 + (depth + 1) * BOX_W + depth * GAP_X;
    let height = PAD * 2 + tallest * (BOX_H + GAP_Y);
    let place = |col: usize, row: usize| (PAD + col * (BOX_W + GAP_X), PAD + row * (BOX_H + GAP_Y));
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="group" aria-label="{}">"#,
        escape(&format!("callers of {}", impact.name))
    );
    // Where each drawn box is: the root by its name, callers by their index.
    let mut at: HashMap<usize, (usize, usize)> = HashMap::new();
    // A caller's bare name at a step -> its box, for the edges of the step after it.
    let mut named: HashMap<(usize, String), (usize, usize)> = HashMap::new();
    let root = place(0, 0);
    named.insert((0, bare(&impact.name).to_string()), root);
    for (col, members) in columns.iter().enumerate().skip(1) {
        for (row, &i) in members.iter().take(MAX_PER_COLUMN).enumerate() {
            let p = place(col, row);
            at.insert(i, p);
            if let Some(caller) = &impact.callers[i].caller {
                named.entry((col, bare(caller).to_string())).or_insert(p);
            }
        }
    }
    // Edges first, under the boxes.
    svg.push_str(r#"<g class="edges">"#);
    for (&i, &(x, y)) in &at {
        let c = &impact.callers[i];
        if let Some(&(tx, ty)) = named.get(&(c.depth - 1, c.calls.clone())) {
            let _ = write!(
                svg,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
                x,
                y + BOX_H / 2,
                tx + BOX_W,
                ty + BOX_H / 2
            );
        }
    }
    svg.push_str("</g>");
    let _ = write!(
        svg,
        r#"<g class="node root"><rect x="{}" y="{}" width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{}" y="{}">{}</text></g>"#,
        root.0,
        root.1,
        root.0 + 10,
        root.1 + 22,
        escape(&clip(&impact.name, 30))
    );
    for (col, members) in columns.iter().enumerate().skip(1) {
        for &i in members.iter().take(MAX_PER_COLUMN) {
            let c = &impact.callers[i];
            let (x, y) = at[&i];
            let label = c.caller.as_deref().unwrap_or("(top level)");
            let href = format!(
                "/?file={}&repo={}#L{}",
                url_part(&c.path),
                url_part(&c.repo),
                c.line
            );
            let _ = write!(
                svg,
                r#"<a href="{}"><g class="node"><title>{}</title><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{}" y="{}">{}</text><text class="where" x="{}" y="{}">{}</text></g></a>"#,
                escape(&href),
                escape(&format!(
                    "{label} — {}:{} calls {}",
                    visible(&c.path),
                    c.line,
                    c.calls
                )),
                x + 8,
                y + 14,
                escape(&clip(label, 32)),
                x + 8,
                y + 28,
                escape(&clip(&format!("{}:{}", visible(&c.path), c.line), 36)),
            );
        }
        if members.len() > MAX_PER_COLUMN {
            let (x, y) = place(col, MAX_PER_COLUMN);
            let _ = write!(
                svg,
                r#"<g class="node more"><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6"/><text x="{}" y="{}">{} more</text></g>"#,
                x + 8,
                y + 22,
                members.len() - MAX_PER_COLUMN
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// A path as it may be drawn: characters that reorder or hide text (bidirectional controls,
/// zero-width ones) written as their code points (`evil\u{202E}txt.py` would read as
/// "evilyp.txt"), as the page's `shown` does.
fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        matches!(c, '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
            | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}')
    };
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if hidden(c) {
                format!("\u{27E6}U+{:04X}\u{27E7}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quarry_engine::graph::ImpactEntry;

    fn entry(depth: usize, calls: &str, caller: &str, path: &str) -> ImpactEntry {
        ImpactEntry {
            depth,
            calls: calls.into(),
            repo: "r".into(),
            path: path.into(),
            caller: Some(caller.into()),
            line: 3,
        }
    }

    #[test]
    fn callers_become_linked_boxes_with_edges_to_what_they_call() {
        let impact = Impact {
            name: "save".into(),
            by_name: true,
            max_depth: 3,
            callers: vec![
                entry(1, "save", "Store.flush", "a.py"),
                entry(2, "flush", "<main>", "b&c.py"),
            ],
            files: vec![],
            truncated: false,
        };
        let svg = render(&impact);
        assert_eq!(svg.matches("<line ").count(), 2, "{svg}");
        assert_eq!(svg.matches("<a href=").count(), 2, "{svg}");
        assert!(svg.contains("/?file=b%26c.py&amp;repo=r#L3"), "{svg}");
        assert!(
            svg.contains("&lt;main&gt;") && !svg.contains("<main>"),
            "{svg}"
        );
    }

    #[test]
    fn names_that_reorder_or_hide_text_are_drawn_marked() {
        let impact = Impact {
            name: "save".into(),
            by_name: true,
            max_depth: 3,
            callers: vec![entry(1, "save", "run", "evil\u{202E}yp.txt")],
            files: vec![],
            truncated: false,
        };
        let svg = render(&impact);
        assert!(!svg.contains('\u{202E}'), "{svg}");
        assert!(svg.contains("evil\u{27E6}U+202E\u{27E7}yp.txt"), "{svg}");
        assert_eq!(visible("plain/a.py"), "plain/a.py");
    }
}
