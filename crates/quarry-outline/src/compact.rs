//! Shorter forms of the outline's text, for when a file's outline is over its budget: docs cut
//! at a word, signatures down to their parameter names, members down to their names. Each keeps
//! what an agent asks the next Read by (the name, the parameters it would pass); what goes
//! (types, defaults, the rest of a sentence) is one Read of the listed lines away.

use quarry_core::Language;

/// `s` in at most `max` characters, cut at a word where one is near, `…` marking the cut.
pub(crate) fn clip_words(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max.saturating_sub(1)).collect();
    let cut = match head.rfind(' ') {
        Some(at) if at >= head.len() / 2 => head[..at].trim_end_matches([',', ';', ':', ' ']),
        _ => head.as_str(),
    };
    format!("{cut}…")
}

/// A signature without the block opener it ends with.
pub(crate) fn trim_signature(sig: &str) -> &str {
    let sig = sig.trim_end();
    // A Python stub's body on its line (`def f(x: int) -> str: ...`).
    let sig = sig.strip_suffix("...").unwrap_or(sig).trim_end();
    sig.trim_end_matches('{').trim_end_matches(':').trim_end()
}

/// A member line without visibility and the separator it ends with.
pub(crate) fn trim_member(m: &str) -> &str {
    let m = m.trim_end_matches([',', ';']).trim();
    m.strip_prefix("pub ").unwrap_or(m)
}

/// A Python method's signature without the `self`/`cls` every method has.
pub(crate) fn without_receiver(sig: &str) -> std::borrow::Cow<'_, str> {
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

fn is_c_like(language: Language) -> bool {
    matches!(
        language,
        Language::C | Language::Cpp | Language::Java | Language::CSharp
    )
}

/// Whether `c` opens a string here (in Rust `'` is a lifetime's mark far more often than a
/// char literal's).
fn opens_quote(c: char, language: Language) -> bool {
    c == '"' || c == '`' || (c == '\'' && language != Language::Rust)
}

/// `params`' top-level comma-separated parts (brackets and quotes nest).
fn split_top_level(params: &str, language: Language) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut quote) = (0i32, 0usize, None::<char>);
    let mut prev = ' ';
    for (i, c) in params.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (Some(_), _) => {}
            (None, c) if opens_quote(c, language) => quote = Some(c),
            (None, '(' | '[' | '{' | '<') => depth += 1,
            (None, '>') if matches!(prev, '-' | '=') => {}
            (None, ')' | ']' | '}' | '>') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&params[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        prev = c;
    }
    parts.push(&params[start..]);
    parts
}

/// Where the parameter list opened at byte `open` closes, if on this line.
fn matching_close(sig: &str, open: usize, language: Language) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote = None::<char>;
    let mut prev = ' ';
    for (i, c) in sig[open..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (Some(_), _) => {}
            (None, c) if opens_quote(c, language) => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
        prev = c;
    }
    None
}

/// Byte offset of the first `=` in `p` that is an assignment (not `==`, `=>`, `<=`, …) outside
/// brackets.
fn default_at(p: &str) -> Option<usize> {
    let bytes = p.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'>' if i > 0 && matches!(bytes[i - 1], b'-' | b'=') => {}
            b'>' => depth -= 1,
            b'=' if depth <= 0 => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1);
                if !matches!(before, Some(b'=' | b'!' | b'<' | b'>'))
                    && !matches!(after, Some(b'=' | b'>'))
                {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A parameter's name: `name: Type = x` → `name=…`, Go's `name Type` → `name`, C's
/// `const Type *name` → `name`.
fn param_name(param: &str, language: Language) -> String {
    let p = param.trim();
    let (head, default) = match default_at(p) {
        Some(at) => (p[..at].trim(), true),
        None => (p, false),
    };
    let colon = head
        .char_indices()
        .find(|&(i, c)| c == ':' && !head[i..].starts_with("::") && !head[..i].ends_with(':'))
        .map(|(i, _)| i);
    let name = match colon {
        Some(at) => head[..at].trim(),
        None if language == Language::Go => head.split_whitespace().next().unwrap_or(head),
        None if is_c_like(language) && head.contains(char::is_whitespace) => head
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or(head)
            .trim_start_matches(['*', '&']),
        None => head,
    };
    if default {
        format!("{name}=…")
    } else {
        name.to_string()
    }
}

/// The signature with its parameters down to their names and the return type left out:
/// `def register(tag_class: type[JSONTag], force: bool = False) -> None` →
/// `def register(tag_class, force=…)`. What comes before the parameters (a Go receiver,
/// generics, `pub async fn`) stays. `None` when that is not shorter.
pub(crate) fn shorten_signature(sig: &str, name: &str, language: Language) -> Option<String> {
    if language == Language::ObjectiveC && sig.starts_with(['-', '+']) {
        // `- (BOOL)application:(UIApplication *)app didFinishLaunching…:(…)options` is
        // `- (BOOL)application:didFinishLaunching…:` — its selector is its name.
        let close = sig.find(')')?;
        return Some(format!("{} {name}", sig[..=close].trim_end()));
    }
    let from = sig.find(name).map_or(0, |i| i + name.len());
    let open = from + sig[from..].find('(')?;
    let close = matching_close(sig, open, language);
    let params = &sig[open + 1..close.unwrap_or(sig.len())];
    let mut parts = split_top_level(params, language);
    if close.is_none() {
        // The signature is cut inside its parameters: the last one may be cut too.
        parts.pop();
    }
    let names: Vec<String> = parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| param_name(p, language))
        .collect();
    let open_end = if close.is_some() { ")" } else { ", …)" };
    let short = if names.is_empty() && close.is_none() {
        format!("{}(…)", &sig[..open])
    } else {
        format!("{}({}{open_end}", &sig[..open], names.join(", "))
    };
    (short.chars().count() < sig.chars().count()).then_some(short)
}

/// A member's name: the field, variant or attribute it declares (`pub root: PathBuf,` → `root`,
/// `max_attempts = 5` → `max_attempts`, Java's `private final int size;` → `size`).
pub(crate) fn member_name(member: &str, language: Language) -> String {
    let m = trim_member(member);
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    if is_c_like(language) {
        let head = m.split(['=', ';', '(', '{']).next().unwrap_or(m).trim();
        if let Some(last) = head.rsplit(|c: char| !is_ident(c)).find(|w| !w.is_empty()) {
            return last.to_string();
        }
    }
    let mut rest = m;
    for keyword in [
        "pub(crate) ",
        "pub(super) ",
        "readonly ",
        "private ",
        "public ",
        "protected ",
        "static ",
        "export ",
        "declare ",
        "const ",
        "let ",
        "var ",
        "final ",
        "case ",
    ] {
        rest = rest.strip_prefix(keyword).unwrap_or(rest).trim_start();
    }
    let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
    if name.is_empty() {
        clip_words(m, 24)
    } else {
        name
    }
}

/// Names of `members` (whose last may be the source's `… N more`), the first `shown` of them,
/// and how many are left out, the source's own count included.
pub(crate) fn members_shown(members: &[String], shown: usize) -> (Vec<&str>, usize) {
    let (listed, counted) = match members.last().and_then(|m| {
        m.strip_prefix("… ")?
            .strip_suffix(" more")?
            .parse::<usize>()
            .ok()
    }) {
        Some(n) => (&members[..members.len() - 1], n),
        None => (members, 0),
    };
    let kept: Vec<&str> = listed.iter().take(shown).map(String::as_str).collect();
    let left = listed.len() - kept.len() + counted;
    (kept, left)
}
