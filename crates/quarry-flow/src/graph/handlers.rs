//! `try` and its kin: the body's statements may raise into the handlers, a raise passes
//! the handlers that name a type (unless one catches everything), `else` runs when nothing
//! was raised, `finally`/`ensure` on every way out that falls through.

use tree_sitter::Node;

use super::{line, Builder, EdgeKind, Exits};

impl<'a> Builder<'a> {
    pub(super) fn try_statement(
        &mut self,
        node: Node<'a>,
        body_field: &str,
        preds: Exits,
    ) -> Exits {
        let mut cursor = node.walk();
        let rest: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| {
                self.spec.handlers.contains(&c.kind()) || self.spec.finallys.contains(&c.kind())
            })
            .collect();
        let body = self.body_of(node, body_field);
        // Python's `try … else`: it runs when the body raised nothing.
        let otherwise = node
            .named_children(&mut cursor)
            .find(|c| self.spec.else_wrappers.contains(&c.kind()));
        self.try_parts(Some(node), body, rest, otherwise, preds)
    }

    /// A `try` (its statement, where it is one: its first line is a statement of its own):
    /// its body's statements, then its handlers and `finally` (in `rest`).
    pub(super) fn try_parts(
        &mut self,
        statement: Option<Node<'a>>,
        body: Vec<Node<'a>>,
        rest: Vec<Node<'a>>,
        otherwise: Option<Node<'a>>,
        preds: Exits,
    ) -> Exits {
        let spec = self.spec;
        let handlers: Vec<Node> = rest
            .iter()
            .copied()
            .filter(|c| spec.handlers.contains(&c.kind()))
            .collect();
        let finally = rest
            .iter()
            .copied()
            .find(|c| spec.finallys.contains(&c.kind()));
        // Handler headers first, so the body's statements can raise into them.
        let heads: Vec<usize> = handlers
            .iter()
            .map(|h| {
                let body = self.handler_body(*h);
                self.header_node(*h, body.first().copied(), &body)
            })
            .collect();
        let catch_all = spec.handlers_catch_all
            || handlers.iter().any(|h| {
                let body = self.handler_body(*h);
                let end = body.first().map_or(h.end_byte(), |b| b.start_byte());
                catches_all(self.src.get(h.start_byte()..end).unwrap_or(""))
            });
        let mut preds = preds;
        let frame = statement.map(|t| {
            let t = self.push(line(t), line(t), Vec::new(), Vec::new(), false);
            self.connect(std::mem::take(&mut preds), t);
            preds = vec![(t, EdgeKind::Next)];
            self.contexts.push(t);
            t
        });
        self.handlers.push((heads.clone(), catch_all));
        let mut exits = self.sequence(&body, preds);
        self.handlers.pop();
        if frame.is_some() {
            self.contexts.pop();
        }
        if let Some(otherwise) = otherwise {
            exits = self.statement(otherwise, exits);
        }
        for (handler, head) in handlers.iter().zip(&heads) {
            let body = self.handler_body(*handler);
            self.contexts.push(*head);
            exits.extend(self.sequence(&body, vec![(*head, EdgeKind::Next)]));
            self.contexts.pop();
        }
        match finally {
            // `finally { … }` holds a block; Ruby's `ensure` is the block itself.
            Some(f) => {
                let block = f
                    .child_by_field_name("body")
                    .or_else(|| last_named(f).filter(|b| spec.blocks.contains(&b.kind())));
                match block {
                    Some(b) => self.statement(b, exits),
                    None => self.statement(f, exits),
                }
            }
            None => exits,
        }
    }
}

impl<'a> Builder<'a> {
    /// What a handler runs: its `body`; its last child when that is a block; Dart's block
    /// written after its `catch`; else its children after its first line (Julia's `catch e`).
    fn handler_body(&self, handler: Node<'a>) -> Vec<Node<'a>> {
        if let Some(body) = handler.child_by_field_name("body") {
            return vec![body];
        }
        if let Some(last) = last_named(handler).filter(|l| self.spec.blocks.contains(&l.kind())) {
            return vec![last];
        }
        if let Some(next) = handler
            .next_named_sibling()
            .filter(|n| self.spec.blocks.contains(&n.kind()))
        {
            return vec![next];
        }
        let mut cursor = handler.walk();
        let first = line(handler);
        handler
            .named_children(&mut cursor)
            .filter(|c| line(*c) > first && !c.kind().contains("comment"))
            .collect()
    }
}

/// Whether a handler's header (`except ValueError as e:`, `catch (IOException e)`) catches
/// whatever is raised: it names no type, or the root of them all.
fn catches_all(header: &str) -> bool {
    let words: Vec<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| !w.is_empty())
        .collect();
    let named: Vec<&&str> = words
        .iter()
        .skip(1) // the keyword
        .filter(|w| !matches!(**w, "as" | "when" | "e" | "err" | "error" | "ex" | "exc"))
        .collect();
    header.contains("...")
        || named.is_empty()
        || named.iter().any(|w| {
            matches!(
                w.rsplit('.').next().unwrap_or(""),
                "Exception" | "BaseException" | "Throwable" | "StandardError" | "object"
            )
        })
}

fn last_named(node: Node) -> Option<Node> {
    let count = node.named_child_count();
    node.named_child(u32::try_from(count.checked_sub(1)?).ok()?)
}
