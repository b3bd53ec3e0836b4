//! The outline's text is made of units: a top-level definition and everything that belongs to
//! it. Belonging is by parent, not by position: a Go method (`func (f *Filter) Add`) may stand
//! anywhere after its type, between other functions, and still belongs under `Filter`, as
//! Rust's methods stand under their `impl`. Grouping by position would fold it into whatever
//! function came before it and hide it there as a nested function.

use crate::OutlineItem;
use quarry_core::Language;
use std::collections::HashMap;

/// The items grouped into units, each unit its top-level item first and then its descendants
/// depth first, in file order at every level; depths are the tree's (an item whose parent is
/// not in the file is top-level). Units are in the order of their first item.
///
/// A namespace (C#, C++, PHP, TypeScript) or a Ruby or TypeScript module is a line of its own,
/// not a unit holding the file: what it contains are units of their own at its depth. A file
/// that is one `namespace Slim;` or `module Sinatra` would otherwise be one unit whose classes'
/// methods go first when the budget bites (`App 34 (+10 nested)`).
pub(crate) fn units(items: &[OutlineItem], language: Language) -> Vec<Vec<OutlineItem>> {
    if !language.is_code() || language == Language::Pdf {
        // Documents and notebooks nest by heading level, which their depths already say
        // (a notebook's code sits under the heading above it, whatever its name).
        return by_position(items);
    }
    let mut parents = parents(items);
    let transparent = |item: &OutlineItem| {
        item.kind == "namespace" || (item.kind == "module" && language != Language::Rust)
    };
    for i in 0..items.len() {
        // Up past every transparent ancestor (parents come before or after; no cycles).
        let mut parent = parents[i];
        while let Some(p) = parent.filter(|&p| transparent(&items[p])) {
            parent = parents[p];
        }
        parents[i] = parent;
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    let mut roots = Vec::new();
    for (i, parent) in parents.iter().enumerate() {
        match parent {
            Some(p) => children[*p].push(i),
            None => roots.push(i),
        }
    }
    let mut units = Vec::with_capacity(roots.len());
    for root in roots {
        let mut unit = Vec::new();
        // Depth first, iteratively: a pathological file may nest deeply.
        let mut stack = vec![(root, 0u32)];
        while let Some((i, depth)) = stack.pop() {
            unit.push(OutlineItem {
                depth,
                ..items[i].clone()
            });
            stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
        }
        units.push(unit);
    }
    units
}

/// Each item with the items after it that are deeper, as the depths say.
fn by_position(items: &[OutlineItem]) -> Vec<Vec<OutlineItem>> {
    let mut units: Vec<Vec<OutlineItem>> = Vec::new();
    for item in items {
        match units.last_mut() {
            Some(unit) if item.depth > 0 => unit.push(item.clone()),
            _ => units.push(vec![item.clone()]),
        }
    }
    units
}

/// Each item's parent: the item its qualified name names as parent — of several with that
/// name (a Rust struct and its `impl` blocks), the nearest before it that holds its lines,
/// else the nearest before it, else the first after it.
fn parents(items: &[OutlineItem]) -> Vec<Option<usize>> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        by_name
            .entry(item.qualified_name.as_str())
            .or_default()
            .push(i);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let parent_name = item
                .qualified_name
                .strip_suffix(item.name.as_str())?
                .strip_suffix('.')?;
            let candidates = by_name.get(parent_name)?;
            let before = candidates.partition_point(|&c| c < i);
            let holds = |&&c: &&usize| {
                items[c].start_line <= item.start_line && item.end_line <= items[c].end_line
            };
            candidates[..before]
                .iter()
                .rev()
                .take(64)
                .find(holds)
                .or(candidates[..before].last())
                .or(candidates[before..].iter().find(|&&c| c != i))
                .copied()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(qualified: &str, start: u32, end: u32) -> OutlineItem {
        OutlineItem {
            name: qualified.rsplit('.').next().unwrap().to_string(),
            qualified_name: qualified.to_string(),
            kind: if qualified == "Slim" {
                "namespace"
            } else {
                "function"
            }
            .into(),
            start_line: start,
            end_line: end,
            signature: None,
            doc: None,
            depth: qualified.matches('.').count() as u32,
            members: Vec::new(),
            page: None,
            cell: None,
        }
    }

    fn shape(units: &[Vec<OutlineItem>]) -> Vec<Vec<(String, u32)>> {
        units
            .iter()
            .map(|u| {
                u.iter()
                    .map(|i| (i.qualified_name.clone(), i.depth))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn methods_join_their_type_wherever_they_stand() {
        // Go: a type, a constructor, then the type's methods; one method of a type declared
        // in another file.
        let items = [
            item("Filter", 1, 5),
            item("New", 7, 10),
            item("Filter.Add", 12, 14),
            item("Filter.Exists", 16, 20),
            item("Other.Reset", 22, 24),
        ];
        let s = |q: &str, d| (q.to_string(), d);
        assert_eq!(
            shape(&units(&items, Language::Go)),
            [
                vec![s("Filter", 0), s("Filter.Add", 1), s("Filter.Exists", 1)],
                vec![s("New", 0)],
                vec![s("Other.Reset", 0)],
            ]
        );
        // Rust: a struct and two impl blocks of one name; methods stay in the block that
        // holds them.
        let items = [
            item("Foo", 1, 3),
            item("Foo", 5, 9),
            item("Foo.new", 6, 8),
            item("Foo", 11, 15),
            item("Foo.len", 12, 14),
        ];
        let units = units(&items, Language::Rust);
        assert_eq!(units.len(), 3);
        // PHP's `namespace Slim;` holds the file: a line of its own, the class a unit.
        let items = [
            item("Slim", 11, 11),
            item("Slim.App", 34, 216),
            item("Slim.App.run", 40, 60),
            item("Slim.App.handle", 62, 80),
        ];
        assert_eq!(
            shape(&super::units(&items, Language::Php)),
            [
                vec![s("Slim", 0)],
                vec![
                    s("Slim.App", 0),
                    s("Slim.App.run", 1),
                    s("Slim.App.handle", 1)
                ],
            ]
        );
        assert_eq!(units[1].len(), 2);
        assert_eq!((units[2][1].name.as_str(), units[2][1].depth), ("len", 1));
    }
}
