//! Names and lines before any signature or doc (issue 64, "Outlines lost names"): whatever
//! the budget, every definition is named with its start line while the names fit the outline's
//! hard bound — nested functions, test functions and a type's members included.

use super::*;

/// Whether `text` names `name` with `line`: an item line whose range starts there and that
/// holds the name, or `name line` in a listed run.
fn named(text: &str, name: &str, line: u32) -> bool {
    let word = |s: &str| {
        s.match_indices(name).any(|(at, _)| {
            let before = s[..at].chars().next_back();
            let after = s[at + name.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !ident(before) && !ident(after)
        })
    };
    let listed = format!("{name} {line}");
    text.lines().any(|l| {
        let l = l.trim_start();
        let starts = l.starts_with(&format!("{line}-")) || l.starts_with(&format!("{line} "));
        (starts && word(l))
            || l.match_indices(&listed).any(|(at, _)| {
                let after = l[at + listed.len()..].chars().next();
                let before = l[..at].chars().next_back();
                matches!(after, None | Some(',' | ')' | ' '))
                    && matches!(before, None | Some(' ' | '('))
            })
    })
}

/// Every definition of `o` is named in `text` with its start line.
fn assert_every_item_named(o: &Outline, text: &str) {
    for item in &o.items {
        assert!(
            named(text, &item.name, item.start_line),
            "{} {} is not named: {text}",
            item.qualified_name,
            item.start_line
        );
    }
}

/// The file: 60 documented functions, 19.5 kB. Their names alone take a tenth of the
/// budget, so every one is named with its line; none is counted.
#[test]
fn sixty_functions_are_all_named_with_their_lines() {
    let mut py = String::from("import logging\nimport os\n\n\n");
    for i in 0..60 {
        py.push_str(&format!(
            "def handler_{i}(request: Request, session: Session, retries: int = 3) -> Response:\n    \"\"\"Handles request kind {i}: validates it, logs it and answers.\"\"\"\n    log = logging.getLogger('handler_{i}')\n    if retries < 0:\n        raise ValueError('negative')\n    result = session.process(request, kind={i})\n    return Response(result)\n\n\n"
        ));
    }
    assert!((19_000..20_000).contains(&py.len()), "{}", py.len());
    let o = outline("app/handlers.py", Language::Python, &py);
    assert_eq!(o.items.len(), 60);
    let text = render(&o);
    assert_every_item_named(&o, &text);
    assert!(!text.contains("more definitions"), "{text}");
    let budget = py.chars().count() * 8 / 100;
    assert!(body(&text) <= budget, "{} > {budget}: {text}", body(&text));
}

/// A Rust module with nested functions and a `mod tests`: over its budget, every function is
/// still named with its line, the nested ones and the tests too.
#[test]
fn nested_functions_and_test_functions_are_named_with_their_lines() {
    let mut rs = String::from("use std::collections::HashMap;\n\n");
    for i in 0..12 {
        rs.push_str(&format!(
            "/// Parses part {i} of the input, with a long explanation of what it does.\npub fn parse_part_{i}(input: &str, options: &HashMap<String, u32>) -> Result<Vec<u32>, String> {{\n    fn digit_{i}(c: char) -> Option<u32> {{\n        c.to_digit(10)\n    }}\n    fn sep_{i}(c: char) -> bool {{\n        c == ','\n    }}\n    let _ = options;\n    Ok(input.chars().filter(|c| !sep_{i}(*c)).filter_map(digit_{i}).collect())\n}}\n\n"
        ));
    }
    rs.push_str("#[cfg(test)]\nmod tests {\n    use super::*;\n\n");
    for i in 0..12 {
        rs.push_str(&format!(
            "    #[test]\n    fn parses_part_{i}_of_a_line() {{\n        let options = HashMap::new();\n        assert_eq!(parse_part_{i}(\"1,2\", &options), Ok(vec![1, 2]));\n    }}\n\n"
        ));
    }
    rs.push_str("}\n");
    let o = outline("src/parse.rs", Language::Rust, &rs);
    assert_eq!(o.items.len(), 12 * 3 + 1 + 12, "{:#?}", o.items);
    let text = render(&o);
    assert_every_item_named(&o, &text);
    assert!(!text.contains("nested)"), "{text}");
    // Names may take the outline past its budget, not past its hard bound.
    let bound = (rs.chars().count() * 20 / 100).max(1200);
    assert!(body(&text) <= bound, "{} > {bound}: {text}", body(&text));
}

/// A C++ class whose member functions, and a nested class's, are more than the budget holds
/// with signatures: each is named with its line, none counted.
#[test]
fn members_of_a_class_are_named_with_their_lines() {
    let mut cpp =
        String::from("#include <string>\n\nnamespace app {\n\nclass Registry {\n public:\n");
    for i in 0..40 {
        cpp.push_str(&format!(
            "  // Looks up entry {i} by its key.\n  const std::string& lookup_entry_{i}(const std::string& key, int flags) const {{\n    return entries_[key + std::to_string(flags + {i})];\n  }}\n\n"
        ));
    }
    cpp.push_str("  class Iterator {\n   public:\n");
    for i in 0..6 {
        cpp.push_str(&format!(
            "    bool step_{i}(int n) {{\n      pos_ += n + {i};\n      return pos_ < 10;\n    }}\n"
        ));
    }
    cpp.push_str("   private:\n    int pos_ = 0;\n  };\n\n private:\n  std::map<std::string, std::string> entries_;\n};\n\n}  // namespace app\n");
    let o = outline("src/registry.hpp", Language::Cpp, &cpp);
    let text = render(&o);
    assert!(o.items.len() >= 48, "{:#?}", o.items);
    assert_every_item_named(&o, &text);
    assert!(!text.contains("more ("), "{text}");
    assert!(!text.contains("nested)"), "{text}");
}
