//! Reading a whole issue text (a bug report, a pasted error) for what points at code.
//!
//! An issue is not a bag of words. Its stack trace names files and functions outright; its code
//! blocks call the functions it is about (`expr.subs(x, 1)`, `from astropy.io import fits`);
//! backticked words and dotted module paths are names; a quoted error message is a phrase the
//! code contains. And much of it is template and environment noise that only looks like
//! evidence: "Steps to reproduce" headings, IPython banners ("Type 'copyright', 'credits' or
//! 'license'…" ranked LICENSE first for one issue), version tables, pip listings, prompts and
//! printed results. This module separates the two with rules about the *shape* of text every
//! tracker shares; nothing here knows any project.
//!
//! Frames are read in the formats of Python (classic and IPython), Rust, JavaScript/Node, Java
//! and Go, and as plain `path/to/file.ext:LINE` references; the engine matches their paths to
//! indexed files by suffix (a frame says `/usr/lib/python3/site-packages/pkg/a.py`, the index
//! has `pkg/a.py`).

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// One frame of a stack trace, or a `file:line` reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Frame {
    /// As written (absolute, relative, or a bare file name); matched to indexed paths by suffix.
    pub path: String,
    pub line: Option<u32>,
    /// The function the frame is in, when the format names it (`<module>` and the like are
    /// dropped).
    pub function: Option<String>,
}

/// What an issue text says about code, and its text without the noise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IssueReading {
    /// The first line, when the text has several: an issue's title.
    pub title: Option<String>,
    /// The text minus boilerplate lines, prompts and URLs: what BM25 reads.
    pub text: String,
    /// Stack frames and `file:line` references, innermost last as printed.
    pub frames: Vec<Frame>,
    /// Names the code blocks call, import or access (`subs` from `expr.subs(x)`, `fits` and
    /// `astropy.io` from `from astropy.io import fits`).
    pub code_names: Vec<String>,
    /// Dotted module paths (`astropy.io.fits`, `sympy.core.mul`), as path fragments
    /// (`astropy/io/fits`).
    pub modules: Vec<String>,
    /// File paths named by links to a repository browser (`…/blob/main/src/a.py#L10`).
    pub linked_paths: Vec<String>,
    /// Error messages: the text after `SomeError:` / `error:` lines, and quoted sentences.
    pub messages: Vec<String>,
    /// Pieces for a model that reads ~128 tokens: the title, then each paragraph and each code
    /// block of the cleaned text, in order.
    pub passages: Vec<String>,
    /// The title and the issue's own sentences (error messages included), without code
    /// blocks, indented code, prompts, traces or noise: what the issue says in words, for a
    /// model matching it with other words (commit messages) that reads only ~128 tokens.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prose: String,
}

macro_rules! re {
    ($name:ident, $pat:expr) => {
        fn $name() -> &'static Regex {
            static R: OnceLock<Regex> = OnceLock::new();
            R.get_or_init(|| Regex::new($pat).expect("valid regex"))
        }
    };
}

// Python: `File "x.py", line 10, in f`; IPython 8: `File ~/x.py:52, in f(a, b)`;
// IPython 7: `~/x.py in f(a, b)` on its own line.
re!(
    py_frame,
    r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<][\w<>.]*))?"#
);
re!(
    ipy_frame,
    r"File (\S+\.py):(\d+)(?:, in ([A-Za-z_<][\w<>.]*))?"
);
re!(ipy7_frame, r"^\s*(\S+\.py) in ([A-Za-z_<][\w<>.]*)\(");
// Rust panics and backtraces: `at src/lib.rs:12:9`, `panicked at src/main.rs:10:5`.
// JS: `at fn (path/file.js:10:15)`, `at path/file.js:10:15`.
re!(
    at_frame,
    r"\bat (?:([\w$.<>\[\] ]+?) \()?((?:[\w.~-]*/)*[\w.-]+\.[A-Za-z]{1,5}):(\d+)(?::\d+)?\)?"
);
// Java: `at com.foo.Bar.method(Bar.java:123)`.
re!(
    java_frame,
    r"\bat ([\w$.]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)"
);
// Plain `path/file.ext:LINE` (Go traces, compiler errors, grep output).
re!(
    file_line,
    r"(?:^|[\s(\[])((?:~?/)?(?:[\w.~-]+/)+[\w.-]+\.[A-Za-z]{1,5}):(\d+)\b"
);
// `SomeError: message` / `error: message` / `error[E0308]: message`.
re!(
    error_line,
    r"^\s*(?:[A-Z]\w*(?:Error|Exception|Warning)|error(?:\[\w+\])?|panic(?:ked)?)\b[^:\n]*:\s*(.+)$"
);
re!(url, r#"https?://[^\s)>\]"'`]+"#);
re!(
    blob_url,
    r"/(?:blob|tree|raw|src)/[^/\s]+/([^\s#?)]+\.[A-Za-z]{1,5})"
);
re!(
    dotted,
    r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){2,})\b"
);
re!(
    import_line,
    r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w., ()*]+)|import\s+([\w., ]+))"
);
re!(call, r"(?:\.|\b)([A-Za-z_][A-Za-z0-9_]*)\s*\(");
re!(attribute, r"\.([A-Za-z_][A-Za-z0-9_]*)");
re!(
    prompt,
    r"^\s*(?:In \[\d*\]:|Out\[\d*\]:|>>>|\.\.\.(?:\s|$)|\$ |[-=]{2,}>\s*\d*)\s?"
);
re!(
    version_kv,
    r"^\s*[-*]?\s*[\w .()/-]{1,40}\s*(?::|==)\s*v?\d+(?:\.\d+)+\S*\s*$"
);
re!(pip_row, r"^\s*[A-Za-z][\w.-]*\s+v?\d+(?:\.\d+)+\S*\s*$");
re!(
    banner,
    r"(?i)(type .?help.?, .?copyright|enhanced interactive python|for more information\.?$|^\s*\?\s+->|%quickref|object\?\s+->|help\s+->|\[(?:gcc|clang|msc)\b|\|(?:anaconda|continuum)|^python \d\.\d+\.\d+ )"
);
re!(heading, r"^\s*(?:#{1,6}\s*|\*\*)(.*?)(?:\*\*)?:?\s*$");

/// Words of issue-template headings ("Steps to reproduce", "Expected behavior", …); a heading
/// made only of them carries no evidence.
const TEMPLATE_WORDS: &[&str] = &[
    "actual",
    "additional",
    "behavior",
    "behaviour",
    "bug",
    "case",
    "code",
    "context",
    "current",
    "describe",
    "description",
    "details",
    "environment",
    "example",
    "expected",
    "info",
    "information",
    "installation",
    "minimal",
    "os",
    "outcome",
    "output",
    "problem",
    "reproduce",
    "reproducible",
    "reproduction",
    "result",
    "results",
    "steps",
    "summary",
    "system",
    "the",
    "to",
    "version",
    "versions",
    "what",
    "happened",
    "you",
    "expect",
    "did",
    "a",
    "for",
    "of",
    "and",
    "issue",
    "solution",
    "proposed",
    "feature",
    "request",
    "other",
    "comments",
    "operating",
    "python",
    "platform",
    "checklist",
    "traceback",
    "error",
    "log",
    "logs",
    "screenshots",
    "possible",
    "fix",
    "alternatives",
    "considered",
    "motivation",
    "workaround",
    "note",
    "notes",
];

/// Section headings after which lines are environment listings until the next blank line.
fn is_environment_heading(words: &[String]) -> bool {
    let env = [
        "environment",
        "versions",
        "version",
        "installed",
        "system",
        "platform",
        "details",
        "os",
    ];
    !words.is_empty()
        && words.iter().any(|w| env.contains(&w.as_str()))
        && words
            .iter()
            .all(|w| TEMPLATE_WORDS.contains(&w.as_str()) || env.contains(&w.as_str()))
}

fn lower_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Function names that say "no function": module level, comprehensions, lambdas.
fn real_function(name: &str) -> Option<String> {
    let name = name.trim();
    (!name.is_empty() && !name.starts_with('<') && name != "module")
        .then(|| name.trim_end_matches("()").to_string())
}

/// `'text'` → `text`, when the same quote opens and closes it.
fn unquote(s: &str) -> &str {
    for q in ['\'', '"', '`'] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

fn push_unique<T: PartialEq>(list: &mut Vec<T>, v: T) {
    if !list.contains(&v) {
        list.push(v);
    }
}

/// Reads frames and `file:line` references from one line.
fn frames_in(line: &str, frames: &mut Vec<Frame>) {
    let mut add = |path: &str, line_no: Option<&str>, function: Option<&str>| {
        let path = path.trim();
        if path.is_empty() || path.starts_with('<') {
            return; // `<stdin>`, `<ipython-input-3>`
        }
        let frame = Frame {
            path: path.to_string(),
            line: line_no.and_then(|n| n.parse().ok()),
            function: function.and_then(real_function),
        };
        // The same frame printed twice (chained exceptions) counts once.
        if !frames
            .iter()
            .any(|f| f.path == frame.path && f.line == frame.line)
        {
            frames.push(frame);
        }
    };
    if let Some(c) = py_frame().captures(line) {
        return add(&c[1], Some(&c[2]), c.get(3).map(|m| m.as_str()));
    }
    if let Some(c) = ipy_frame().captures(line) {
        return add(&c[1], Some(&c[2]), c.get(3).map(|m| m.as_str()));
    }
    if let Some(c) = ipy7_frame().captures(line) {
        return add(&c[1], None, Some(&c[2]));
    }
    if let Some(c) = java_frame().captures(line) {
        // The class's package is its folder: `com.acme.Index` → `com/acme/Index.java`.
        let (package, class) = c[1].rsplit_once('.').unwrap_or(("", &c[1]));
        let function = format!("{class}.{}", &c[2]);
        let path = if package.is_empty() {
            c[3].to_string()
        } else {
            format!("{}/{}", package.replace('.', "/"), &c[3])
        };
        return add(&path, Some(&c[4]), Some(&function));
    }
    if let Some(c) = at_frame().captures(line) {
        let function = c
            .get(1)
            .map(|m| m.as_str().trim())
            .filter(|f| !f.contains(' ') || f.starts_with("async "));
        return add(
            &c[2],
            Some(&c[3]),
            function.map(|f| f.trim_start_matches("async ")),
        );
    }
    for c in file_line().captures_iter(line) {
        add(&c[1], Some(&c[2]), None);
    }
}

/// Names a code line calls, imports or reads an attribute of.
fn code_names_in(line: &str, names: &mut Vec<String>, modules: &mut Vec<String>) {
    if let Some(c) = import_line().captures(line) {
        if let Some(module) = c.get(1) {
            add_module(module.as_str(), modules);
            for n in c[2]
                .split([',', '(', ')', ' '])
                .filter(|n| !n.is_empty() && *n != "as")
            {
                if n != "*" {
                    push_unique(names, n.to_string());
                }
            }
        } else if let Some(list) = c.get(3) {
            for m in list.as_str().split(',').map(str::trim) {
                let m = m.split_whitespace().next().unwrap_or(m);
                add_module(m, modules);
            }
        }
        return;
    }
    // Names of two characters (`np`, `df`, `x`) are aliases and loop variables, not evidence.
    for c in call()
        .captures_iter(line)
        .chain(attribute().captures_iter(line))
    {
        if c[1].chars().count() > 2 {
            push_unique(names, c[1].to_string());
        }
    }
}

fn add_module(dotted: &str, modules: &mut Vec<String>) {
    let dotted = dotted.trim_matches('.');
    if dotted.contains('.') {
        push_unique(modules, dotted.replace('.', "/"));
    }
}

/// Reads an issue text.
pub fn read(text: &str) -> IssueReading {
    let mut r = IssueReading::default();
    let mut kept: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut code_block = String::new();
    let mut paragraph = String::new();
    let mut in_environment = false;
    let mut passages: Vec<String> = Vec::new();
    let mut prose: Vec<String> = Vec::new();
    let flush = |buf: &mut String, passages: &mut Vec<String>| {
        let t = buf.trim();
        if t.chars().filter(|c| c.is_alphanumeric()).count() >= 12 {
            passages.push(t.to_string());
        }
        buf.clear();
    };

    let lines: Vec<&str> = text.lines().collect();
    let title_line = lines.iter().position(|l| !l.trim().is_empty());
    if lines.iter().filter(|l| !l.trim().is_empty()).count() > 1 {
        r.title = title_line.map(|i| lines[i].trim().to_string());
    }

    for (i, raw) in lines.iter().enumerate() {
        let trimmed = raw.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            if in_code {
                flush(&mut code_block, &mut passages);
            } else {
                flush(&mut paragraph, &mut passages);
            }
            in_code = !in_code;
            continue;
        }
        let frames_before = r.frames.len();
        frames_in(raw, &mut r.frames);
        // Trace lines are evidence as frames; their words are not the issue's code.
        let trace_line = r.frames.len() > frames_before
            || trimmed.starts_with("Traceback")
            || error_line().is_match(raw);
        for c in blob_url().captures_iter(raw) {
            push_unique(&mut r.linked_paths, c[1].to_string());
        }
        if let Some(c) = error_line().captures(raw) {
            let msg = unquote(c[1].trim()).to_string();
            if msg.split_whitespace().count() >= 2 {
                push_unique(&mut r.messages, msg);
            }
        }
        if trimmed.is_empty() {
            in_environment = false;
            if !in_code {
                flush(&mut paragraph, &mut passages);
            }
            continue;
        }
        // Noise: banners, environment listings, template headings.
        if banner().is_match(raw) || version_kv().is_match(raw) || pip_row().is_match(raw) {
            continue;
        }
        if Some(i) != title_line {
            if let Some(h) = heading()
                .captures(raw)
                .filter(|_| trimmed.starts_with(['#', '*']))
            {
                let words = lower_words(&h[1]);
                if is_environment_heading(&words) {
                    in_environment = true;
                    continue;
                }
                if words.iter().all(|w| TEMPLATE_WORDS.contains(&w.as_str())) {
                    continue;
                }
            }
        }
        if in_environment && !in_code {
            continue;
        }
        if trimmed.starts_with("<details")
            || trimmed.starts_with("</details")
            || trimmed.starts_with("<summary")
        {
            continue;
        }
        if trimmed.starts_with("Traceback")
            || (r.frames.len() == frames_before && py_frame().is_match(raw))
        {
            continue; // the trace's header, and frames outside any file (`<stdin>`)
        }
        // A frame's words are its file and function, not the folders of someone's machine.
        if r.frames.len() > frames_before && !error_line().is_match(raw) {
            let f = &r.frames[r.frames.len() - 1];
            let tail: Vec<&str> = f.path.rsplit(['/', '\\']).take(2).collect();
            let mut words: Vec<&str> = tail.into_iter().rev().collect();
            words.extend(f.function.as_deref());
            kept.push(words.join(" "));
            continue;
        }
        // Prompts are not words of the issue; the code after them is.
        let line = prompt().replace(raw, "");
        let line = url().replace_all(&line, " ");
        let is_code = in_code || raw.starts_with("    ") || prompt().is_match(raw);
        if is_code && !trace_line {
            code_names_in(&line, &mut r.code_names, &mut r.modules);
        }
        for c in dotted().captures_iter(&line) {
            let d = &c[1];
            // `self.x.y`, `np.array.shape` are attribute chains, not modules; a module path has
            // lowercase segments and is not a number (`1.2.3`).
            if d.split('.').all(|s| {
                s.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            }) && !d.starts_with("self.")
            {
                add_module(d, &mut r.modules);
            }
        }
        if !is_code {
            prose.push(line.trim().to_string());
        }
        if in_code {
            code_block.push_str(&line);
            code_block.push('\n');
        } else {
            paragraph.push_str(&line);
            paragraph.push('\n');
        }
        kept.push(line.into_owned());
    }
    flush(&mut code_block, &mut passages);
    flush(&mut paragraph, &mut passages);
    r.text = kept.join("\n");
    if let Some(t) = &r.title {
        if passages.first().is_none_or(|p| !p.starts_with(t.as_str())) {
            passages.insert(0, t.clone());
        }
    }
    r.passages = passages;
    r.prose = prose.join("\n");
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_traceback_frames() {
        let r = read(
            "Crash on write\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n  File \"/usr/lib/python3/dist-packages/astropy/io/ascii/ui.py\", line 856, in write\n    writer = get_writer(Writer=Writer)\n  File \"/usr/lib/python3/dist-packages/astropy/io/ascii/core.py\", line 1719, in _get_writer\nTypeError: RST.__init__() got an unexpected keyword argument 'header_rows'\n",
        );
        assert_eq!(r.frames.len(), 2, "{:?}", r.frames);
        assert_eq!(
            r.frames[1].path,
            "/usr/lib/python3/dist-packages/astropy/io/ascii/core.py"
        );
        assert_eq!(r.frames[1].line, Some(1719));
        assert_eq!(r.frames[1].function.as_deref(), Some("_get_writer"));
        assert_eq!(
            r.messages,
            ["RST.__init__() got an unexpected keyword argument 'header_rows'"]
        );
        assert_eq!(r.title.as_deref(), Some("Crash on write"));
        assert!(
            !r.code_names.iter().any(|n| n == "py" || n == "RST"),
            "{:?}",
            r.code_names
        );
        assert!(
            !r.text.contains("dist-packages") && !r.text.contains("Traceback"),
            "{}",
            r.text
        );
        assert!(r.text.contains("ascii core.py _get_writer"), "{}", r.text);
        assert!(!r.text.contains("stdin"), "{}", r.text);
    }

    #[test]
    fn ipython_and_other_languages_frames() {
        let r = read("File ~/envs/py310/lib/python3.10/site-packages/astropy/io/registry/base.py:313, in _UnifiedIORegistryBase.identify_format(self, origin)");
        assert_eq!(
            r.frames[0].path,
            "~/envs/py310/lib/python3.10/site-packages/astropy/io/registry/base.py"
        );
        assert_eq!(
            r.frames[0].function.as_deref(),
            Some("_UnifiedIORegistryBase.identify_format")
        );
        let r = read(
            "~/anaconda3/lib/python3.6/site-packages/sympy/core/expr.py in __lt__(self, other)\n",
        );
        assert_eq!(r.frames[0].function.as_deref(), Some("__lt__"));
        let r = read("thread 'main' panicked at src/store/schema.rs:42:9:\nindex out of bounds");
        assert_eq!(r.frames[0].path, "src/store/schema.rs");
        assert_eq!(r.frames[0].line, Some(42));
        let r = read("    at parseConfig (/app/src/config/loader.js:10:15)\n    at Object.<anonymous> (lib/main.js:3:1)");
        assert_eq!(r.frames[0].function.as_deref(), Some("parseConfig"));
        assert_eq!(r.frames[0].path, "/app/src/config/loader.js");
        let r = read("\tat com.acme.store.Index.open(Index.java:88)");
        assert_eq!(r.frames[0].path, "com/acme/store/Index.java");
        assert_eq!(r.frames[0].function.as_deref(), Some("Index.open"));
        let r =
            read("goroutine 1 [running]:\nmain.run()\n\t/home/u/proj/cmd/server/main.go:27 +0x1d");
        assert_eq!(r.frames[0].path, "/home/u/proj/cmd/server/main.go");
    }

    #[test]
    fn boilerplate_is_dropped_and_code_names_kept() {
        let issue = "Wrong result with apart\n```\nPython 3.6.0 |Continuum Analytics, Inc.| (default, Dec 23 2016, 12:22:00)\nType \"copyright\", \"credits\" or \"license\" for more information.\n\nIPython 5.1.0 -- An enhanced Interactive Python.\n?         -> Introduction and overview of IPython's features.\n\nIn [1]: from sympy.polys.partfrac import apart_list\n\nIn [4]: bug = a * (-t + 1) / (2 * t - 1)\n\nIn [6]: bug.subs(a, 1).apart()\nOut[6]: -t + 1/2\n```\n\n### Steps to reproduce\n\n**Versions**\nnumpy: 1.19.2\nscipy 1.5.0\n\nSee https://example.org/x for more.\n";
        let r = read(issue);
        assert!(
            !r.text.contains("copyright") && !r.text.contains("Continuum"),
            "{}",
            r.text
        );
        assert!(
            !r.text.contains("In [") && !r.text.contains("Steps") && !r.text.contains("numpy"),
            "{}",
            r.text
        );
        assert!(!r.text.contains("example.org"));
        assert!(r.text.contains("bug.subs(a, 1).apart()"));
        for n in ["apart_list", "subs", "apart"] {
            assert!(
                r.code_names.contains(&n.to_string()),
                "{n}: {:?}",
                r.code_names
            );
        }
        assert_eq!(r.modules, ["sympy/polys/partfrac"]);
        assert_eq!(r.passages[0], "Wrong result with apart");
    }

    #[test]
    fn prose_is_the_title_and_the_sentences_without_code() {
        let r = read("Wrong result with apart\n```\nIn [1]: from sympy import apart\nOut[1]: 1/2\n```\nThe partial fraction of a function with a parameter is wrong.\n\n    x = apart(e)\n>>> apart(f)\nValueError: cannot decompose this\n");
        assert_eq!(
            r.prose,
            "Wrong result with apart\nThe partial fraction of a function with a parameter is wrong.\nValueError: cannot decompose this"
        );
    }

    #[test]
    fn dotted_modules_links_and_passages() {
        let r = read("io.fits.fitsrec drops the D exponent\n\nThe code in `astropy.io.fits.fitsrec` (see https://github.com/astropy/astropy/blob/main/astropy/io/fits/fitsrec.py#L1262) replaces in a copy.\n\nSecond paragraph about output_field and replace.");
        assert!(
            r.modules.contains(&"astropy/io/fits/fitsrec".to_string()),
            "{:?}",
            r.modules
        );
        assert!(r.modules.contains(&"io/fits/fitsrec".to_string()));
        assert_eq!(r.linked_paths, ["astropy/io/fits/fitsrec.py"]);
        assert_eq!(r.passages.len(), 3, "{:?}", r.passages);
        let r = read("self.data.shape is wrong; version 1.2.3 fails");
        assert!(r.modules.is_empty(), "{:?}", r.modules);
    }
}
