//! The pieces an outline's text is assembled from: each part's text with its length, and what
//! it left out for the closing `(shortened: …)` line. Shared by render.rs, which shortens
//! parts, and fold.rs, which lists definitions by name once parts cannot shorten further.

/// What a part of the outline left out, for the closing line.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Elided {
    pub(crate) docs: usize,
    pub(crate) signatures: usize,
    pub(crate) by_name: usize,
    /// Definitions past the bound even by name: counted with their lines.
    pub(crate) left_out: usize,
}

impl Elided {
    pub(crate) fn add(&mut self, other: Elided) {
        self.docs += other.docs;
        self.signatures += other.signatures;
        self.by_name += other.by_name;
        self.left_out += other.left_out;
    }
}

pub(crate) struct Part {
    pub(crate) text: String,
    pub(crate) chars: usize,
    pub(crate) elided: Elided,
}

impl Part {
    pub(crate) fn new(text: String, elided: Elided) -> Self {
        Part {
            chars: text.chars().count(),
            text,
            elided,
        }
    }
}
