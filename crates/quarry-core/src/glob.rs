//! Brace alternatives in path globs (`src/{core,solvers}/**`): the Rust side matches them
//! with globset, but SQLite's GLOB has no braces, so a store expands them into alternatives.
//! Written by hand: globset compiles braces into its own matcher and exposes no expansion.

/// At most this many alternatives; a glob that expands to more is refused by the request
/// check (it would be a query of thousands of GLOBs).
pub const MAX_ALTERNATIVES: usize = 64;

/// Longest path glob accepted (SQLite refuses patterns over 50,000 bytes with a raw error).
pub const MAX_GLOB_BYTES: usize = 4096;

/// The globs `glob`'s braces stand for, in order (`a/{b,c}/*` → `a/b/*`, `a/c/*`; nested
/// braces too); `glob` itself when it has none. `None` when there would be more than
/// [`MAX_ALTERNATIVES`]. A brace without its pair is literal.
pub fn brace_alternatives(glob: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand(glob, &mut out)?;
    Some(out)
}

fn expand(glob: &str, out: &mut Vec<String>) -> Option<()> {
    let Some((open, close, commas)) = first_group(glob) else {
        if out.len() >= MAX_ALTERNATIVES {
            return None;
        }
        out.push(glob.to_string());
        return Some(());
    };
    let (head, tail) = (&glob[..open], &glob[close + 1..]);
    let mut start = open + 1;
    for end in commas.into_iter().chain(std::iter::once(close)) {
        expand(&format!("{head}{}{tail}", &glob[start..end]), out)?;
        start = end + 1;
    }
    Some(())
}

/// The first `{` with its matching `}` and the commas between them at its own depth.
fn first_group(glob: &str) -> Option<(usize, usize, Vec<usize>)> {
    let mut from = 0;
    while let Some(found) = glob[from..].find('{') {
        let open = from + found;
        let mut depth = 0;
        let mut commas = Vec::new();
        for (i, c) in glob[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((open, open + i, commas));
                    }
                }
                ',' if depth == 1 => commas.push(open + i),
                _ => {}
            }
        }
        from = open + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_in_order_nested_and_bounded() {
        assert_eq!(brace_alternatives("src/*.py").unwrap(), ["src/*.py"]);
        assert_eq!(
            brace_alternatives("sympy/{core,solvers}/**").unwrap(),
            ["sympy/core/**", "sympy/solvers/**"]
        );
        assert_eq!(
            brace_alternatives("{a,b{c,d}}/*.{rs,go}").unwrap(),
            ["a/*.rs", "a/*.go", "bc/*.rs", "bc/*.go", "bd/*.rs", "bd/*.go"]
        );
        assert_eq!(brace_alternatives("odd{brace").unwrap(), ["odd{brace"]);
        let many = "{a,b,c,d}{e,f,g,h}{i,j,k,l}{m,n}";
        assert!(brace_alternatives(many).is_none(), "128 alternatives");
    }
}
