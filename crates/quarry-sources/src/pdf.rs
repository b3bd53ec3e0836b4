//! PDF text, page by page, with the headings found on each page.
//!
//! Extraction uses `pdf-extract` over `lopdf`, both pure Rust (nothing to install, nothing
//! unsafe to link). `pdf-extract` was picked over lopdf's own `extract_text` because it
//! decodes what real documents use (ToUnicode maps, Type1/CFF encodings, CID fonts) and hands
//! every glyph to an [`OutputDev`] with its position and size: that is what lays out lines,
//! tells a heading by its font size, and lets extraction stop at a deadline. Over the 424
//! PDFs of Debian's LaTeX manuals it read 421; the other three panicked, which is caught here.
//!
//! A document is never trusted to end: each page runs under `catch_unwind` (a panic costs
//! that page), the glyph callback checks a deadline (a slow document stops with
//! `pdf-timeout`), and the caller waits on a thread of its own with a hard limit, so even a
//! parse that never returns only costs a thread, never the index run.

use quarry_core::{PageHeading, PageText, PagedText};
use rayon::prelude::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// Why a PDF is not indexed, as counted in `quarry status`.
pub mod reason {
    /// The document needs a password to read (an owner password alone does not stop
    /// reading, as in every viewer).
    pub const ENCRYPTED: &str = "pdf-encrypted";
    /// No text layer: a scan or an image-only document.
    pub const NO_TEXT: &str = "pdf-no-text";
    /// Not a PDF that can be parsed (truncated, damaged, not a PDF at all).
    pub const CORRUPT: &str = "pdf-corrupt";
    /// Extraction ran past `PdfLimits::timeout`.
    pub const TIMEOUT: &str = "pdf-timeout";
}

/// Bounds on one PDF's extraction.
#[derive(Debug, Clone)]
pub struct PdfLimits {
    pub timeout: Duration,
    /// Pages past this are left out.
    pub max_pages: usize,
    /// Text past this many bytes is left out.
    pub max_text_bytes: usize,
}

impl Default for PdfLimits {
    fn default() -> Self {
        PdfLimits {
            timeout: Duration::from_secs(60),
            max_pages: 5000,
            max_text_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Extracts `bytes` on a thread of its own and waits at most `timeout` (plus a grace second
/// for the cooperative stop): the bound holds even for a parse that loops.
pub fn extract_bounded(bytes: Vec<u8>, limits: &PdfLimits) -> Result<PagedText, &'static str> {
    let (send, receive) = std::sync::mpsc::channel();
    let limits_for_thread = limits.clone();
    let spawned = std::thread::Builder::new()
        .name("quarry-pdf".into())
        // Deeply nested objects recurse; a big stack makes an overflow (which no
        // catch_unwind stops) far less likely.
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            let _ = send.send(extract(&bytes, &limits_for_thread));
        });
    if spawned.is_err() {
        // No thread to be had (the process is at its limit): better to skip the file than to
        // risk an unbounded parse on the caller's thread.
        return Err(reason::TIMEOUT);
    }
    receive
        .recv_timeout(limits.timeout + Duration::from_secs(1))
        .unwrap_or(Err(reason::TIMEOUT))
}

thread_local! {
    /// Set while a page is extracted, so the panic hook stays quiet about a broken document
    /// (its page is skipped and counted, not a crash to report).
    static EXTRACTING: Cell<bool> = const { Cell::new(false) };
}

fn install_quiet_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXTRACTING.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f` with panics caught and not printed.
fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    install_quiet_panic_hook();
    EXTRACTING.with(|e| e.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    EXTRACTING.with(|e| e.set(false));
    result
}

/// The pool pages are read on: its own, never rayon's global one. The indexer reads files on
/// the global pool and each waits (bounded) for its PDF's thread; pages queued behind those
/// waiting workers would never run.
fn page_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("quarry-pdf-page-{i}"))
            .stack_size(64 * 1024 * 1024)
            .build()
            .expect("a thread pool for PDF pages")
    })
}

/// Extracts every page's text and headings on this thread (pages in parallel on a pool of
/// their own). Prefer [`extract_bounded`], which bounds the parse too.
pub fn extract(bytes: &[u8], limits: &PdfLimits) -> Result<PagedText, &'static str> {
    let deadline = Instant::now() + limits.timeout;
    let doc = match quietly(|| lopdf::Document::load_mem(bytes)) {
        Some(Ok(doc)) => doc,
        Some(Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword)) => {
            return Err(reason::ENCRYPTED)
        }
        _ if looks_encrypted(bytes) => return Err(reason::ENCRYPTED),
        _ => return Err(reason::CORRUPT),
    };
    // lopdf decrypts with the empty user password while loading; a document still encrypted
    // afterwards needs a password we do not have.
    if doc.is_encrypted() {
        return Err(reason::ENCRYPTED);
    }
    let page_numbers: Vec<u32> = quietly(|| {
        doc.get_pages()
            .into_keys()
            .take(limits.max_pages)
            .collect::<Vec<u32>>()
    })
    .ok_or(reason::CORRUPT)?;
    if page_numbers.is_empty() {
        return Err(reason::CORRUPT);
    }
    // Each page's lines, or `None` when its glyphs ran past the deadline. A page whose
    // content cannot be read keeps what was read before the error; one that panics, nothing.
    let pages: Vec<Option<(u32, Vec<Line>)>> = page_pool().install(|| {
        page_numbers
            .par_iter()
            .map(|&n| {
                let read = quietly(|| {
                    let mut lines = LineCollector::new(deadline);
                    let result = pdf_extract::output_doc_page(&doc, &mut lines, n);
                    (!(result.is_err() && lines.timed_out)).then(|| lines.finish())
                });
                Some((n, read.unwrap_or(Some(Vec::new()))?))
            })
            .collect()
    });
    let pages: Vec<(u32, Vec<Line>)> = match pages.into_iter().collect::<Option<_>>() {
        Some(pages) if Instant::now() <= deadline => pages,
        _ => return Err(reason::TIMEOUT),
    };
    let text_chars: usize = pages
        .iter()
        .flat_map(|(_, lines)| lines.iter())
        .map(|l| l.text.chars().filter(|c| c.is_alphanumeric()).count())
        .sum();
    if text_chars < 16 {
        return Err(reason::NO_TEXT);
    }
    let outline = quietly(|| doc.get_toc().ok()).flatten();
    let outline = outline
        .map(|t| {
            t.toc
                .into_iter()
                .map(|e| (e.level, e.title, e.page as u32))
                .collect()
        })
        .unwrap_or_default();
    Ok(assemble(pages, outline, limits.max_text_bytes))
}

/// A PDF whose trailer names an `/Encrypt` dictionary.
fn looks_encrypted(bytes: &[u8]) -> bool {
    bytes.windows(8).any(|w| w == b"/Encrypt")
}

/// One laid-out line: its text and its largest font size.
#[derive(Debug, Clone, Default)]
struct Line {
    text: String,
    size: f64,
}

/// An `OutputDev` that lays glyphs out into lines the way `pdf-extract`'s plain-text output
/// does (a new line when the baseline moves, a space when a gap opens), and also keeps each
/// line's font size and a blank line at paragraph gaps.
struct LineCollector {
    lines: Vec<Line>,
    current: Line,
    flip: Transform,
    last_end: f64,
    last_y: f64,
    first_char: bool,
    deadline: Instant,
    glyphs: u32,
    timed_out: bool,
}

impl LineCollector {
    fn new(deadline: Instant) -> LineCollector {
        LineCollector {
            lines: Vec::new(),
            current: Line::default(),
            flip: Transform::identity(),
            last_end: 100_000.0,
            last_y: 0.0,
            first_char: false,
            deadline,
            glyphs: 0,
            timed_out: false,
        }
    }

    fn break_line(&mut self, paragraph: bool) {
        let line = std::mem::take(&mut self.current);
        let text = line.text.trim_end().to_string();
        if !text.trim().is_empty() {
            self.lines.push(Line {
                text,
                size: line.size,
            });
        }
        if paragraph && self.lines.last().is_some_and(|l| !l.text.is_empty()) {
            self.lines.push(Line::default());
        }
    }

    fn finish(mut self) -> Vec<Line> {
        self.break_line(false);
        while self.lines.last().is_some_and(|l| l.text.is_empty()) {
            self.lines.pop();
        }
        self.lines
    }
}

impl OutputDev for LineCollector {
    fn begin_page(
        &mut self,
        _page: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.flip = Transform::row_major(1., 0., 0., -1., 0., media_box.ury - media_box.lly);
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        ch: &str,
    ) -> Result<(), OutputError> {
        self.glyphs += 1;
        if self.glyphs % 512 == 0 && Instant::now() > self.deadline {
            self.timed_out = true;
            return Err(OutputError::IoError(std::io::ErrorKind::TimedOut.into()));
        }
        let position = trm.post_transform(&self.flip);
        let scaled = trm.transform_vector(euclid::vec2(font_size, font_size));
        let size = (scaled.x * scaled.y).abs().sqrt();
        let (x, y) = (position.m31, position.m32);
        if self.first_char {
            let dy = (y - self.last_y).abs();
            if dy > size * 1.9 {
                self.break_line(true);
            } else if dy > size * 1.5 || (x < self.last_end && dy > size * 0.5) {
                self.break_line(false);
            } else if x > self.last_end + size * 0.1 && !self.current.text.ends_with(' ') {
                self.current.text.push(' ');
            }
        }
        self.current.text.push_str(ch);
        if ch.chars().any(|c| !c.is_whitespace()) {
            self.current.size = self.current.size.max(size);
        }
        self.first_char = false;
        self.last_y = y;
        self.last_end = x + width * size;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.first_char = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Pages with their headings: the document's outline (bookmarks) where it has one, found on
/// the page it points to; otherwise lines set clearly larger than the body text.
fn assemble(
    pages: Vec<(u32, Vec<Line>)>,
    outline: Vec<(usize, String, u32)>,
    max_text_bytes: usize,
) -> PagedText {
    let mut by_page: BTreeMap<u32, Vec<(usize, String)>> = BTreeMap::new();
    for (level, title, page) in outline {
        by_page.entry(page).or_default().push((level.max(1), title));
    }
    let sized = if by_page.is_empty() {
        heading_sizes(&pages)
    } else {
        Vec::new()
    };
    let mut budget = max_text_bytes;
    let mut out = PagedText::default();
    for (number, lines) in pages {
        if budget == 0 {
            break;
        }
        let headings = match by_page.get(&number) {
            Some(entries) => outline_headings(&lines, entries),
            None => sized_headings(&lines, &sized),
        };
        let mut text = lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if text.len() > budget {
            let mut end = budget;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        budget -= text.len();
        out.pages.push(PageText {
            number,
            text,
            headings,
        });
    }
    out
}

/// The lines of a page that its outline entries (level, title; in document order) name.
fn outline_headings(lines: &[Line], entries: &[(usize, String)]) -> Vec<PageHeading> {
    let normalised: Vec<String> = lines.iter().map(|l| normalise(&l.text)).collect();
    let mut headings = Vec::new();
    let mut from = 0;
    for (level, title) in entries {
        let wanted = normalise(title);
        if wanted.is_empty() {
            continue;
        }
        let matches = |i: &usize| {
            let have = &normalised[*i];
            !have.is_empty()
                && (have.contains(&wanted)
                    || wanted.starts_with(have.as_str()) && have.len() * 2 >= wanted.len())
        };
        // A page's first line is often its running head, which repeats the title
        // (`11.4. TABLES`): a later line that matches is the heading itself.
        let found = (from.max(1)..lines.len())
            .find(matches)
            .or_else(|| (from..lines.len()).find(matches));
        if let Some(i) = found {
            headings.push(PageHeading {
                line: i as u32 + 1,
                level: *level,
                text: lines[i].text.trim().to_string(),
            });
            from = i + 1;
        }
    }
    headings
}

/// The lines of a page set in one of the heading `sizes` that read like titles.
fn sized_headings(lines: &[Line], sizes: &[i64]) -> Vec<PageHeading> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            sized_heading(line, sizes).map(|level| PageHeading {
                line: i as u32 + 1,
                level,
                text: line.text.trim().to_string(),
            })
        })
        .collect()
}

/// Lower-case letters and digits only, for matching an outline title to a line.
fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Font sizes (rounded to half points) that mark headings, largest first: sizes at least 15%
/// above the body's (the size most characters are set in) that set at most a fifth of the
/// characters (more is a second body size, such as a large-print part).
fn heading_sizes(pages: &[(u32, Vec<Line>)]) -> Vec<i64> {
    let mut chars_by_size: BTreeMap<i64, usize> = BTreeMap::new();
    for line in pages.iter().flat_map(|(_, lines)| lines) {
        *chars_by_size.entry(half_points(line.size)).or_default() += line.text.len();
    }
    let total: usize = chars_by_size.values().sum();
    let Some((&body, _)) = chars_by_size.iter().max_by_key(|(_, &n)| n) else {
        return Vec::new();
    };
    let mut sizes: Vec<i64> = chars_by_size
        .iter()
        .filter(|(&size, &n)| size * 100 >= body * 115 && n * 5 <= total)
        .map(|(&size, _)| size)
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.truncate(4);
    sizes
}

fn half_points(size: f64) -> i64 {
    (size * 2.0).round() as i64
}

/// The heading level of a line set in one of the heading sizes, if it reads like a title:
/// short, with a letter, not ending like a sentence.
fn sized_heading(line: &Line, sizes: &[i64]) -> Option<usize> {
    let level = sizes.iter().position(|&s| s == half_points(line.size))? + 1;
    let text = line.text.trim();
    let reads_like_title = text.chars().count() <= 120
        && text.chars().any(char::is_alphabetic)
        && !text.ends_with([',', ';']);
    reads_like_title.then_some(level)
}

/// PDFs whose text is known, for tests and benches: written with lopdf (already what reads
/// them), so no fixture is a binary checked in without the code that made it.
pub mod fixture {
    use lopdf::content::{Content, Operation};
    use lopdf::{
        dictionary, Document, EncryptionState, EncryptionVersion, Object, Permissions, Stream,
    };

    /// One line of a page: its text and font size in points.
    pub type Line<'a> = (&'a str, f64);

    /// A document of `pages`, each a list of lines set top-down in Helvetica (a heading is
    /// just a line in a larger size); `outline` adds bookmarks (level, title, page).
    pub fn document(pages: &[Vec<Line>], outline: &[(usize, &str, u32)]) -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let resources_id =
            doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
        let mut kids = Vec::new();
        for lines in pages {
            let mut ops = vec![Operation::new("BT", vec![])];
            let mut y = 800.0;
            for (text, size) in lines {
                y -= size * 1.6;
                ops.push(Operation::new("Tf", vec!["F1".into(), (*size).into()]));
                ops.push(Operation::new(
                    "Tm",
                    vec![1.into(), 0.into(), 0.into(), 1.into(), 60.into(), y.into()],
                ));
                ops.push(Operation::new("Tj", vec![Object::string_literal(*text)]));
            }
            ops.push(Operation::new("ET", vec![]));
            let content = Content { operations: ops };
            let content_id = doc.add_object(Stream::new(
                dictionary! {},
                content.encode().unwrap_or_default(),
            ));
            let page_id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            });
            kids.push(Object::from(page_id));
        }
        let count = kids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids.clone(), "Count" => count,
                "Resources" => resources_id,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
        if !outline.is_empty() {
            catalog.set("Outlines", outlines(&mut doc, &kids, outline));
        }
        let catalog_id = doc.add_object(catalog);
        doc.trailer.set("Root", catalog_id);
        doc
    }

    /// A flat-or-nested bookmark tree: each entry's parent is the last entry of a lower level.
    fn outlines(
        doc: &mut Document,
        kids: &[Object],
        entries: &[(usize, &str, u32)],
    ) -> lopdf::ObjectId {
        let root = doc.new_object_id();
        let ids: Vec<lopdf::ObjectId> = entries.iter().map(|_| doc.new_object_id()).collect();
        let parent_of = |i: usize| {
            (0..i)
                .rev()
                .find(|&j| entries[j].0 < entries[i].0)
                .map_or(root, |j| ids[j])
        };
        let children = |parent: lopdf::ObjectId| -> Vec<usize> {
            (0..entries.len())
                .filter(|&i| parent_of(i) == parent)
                .collect()
        };
        for (i, (_, title, page)) in entries.iter().enumerate() {
            let siblings = children(parent_of(i));
            let at = siblings.iter().position(|&s| s == i).unwrap_or(0);
            let page_ref = kids
                .get(*page as usize - 1)
                .cloned()
                .unwrap_or(Object::Null);
            let mut item = dictionary! {
                "Title" => Object::string_literal(*title),
                "Parent" => parent_of(i),
                "Dest" => vec![page_ref, "Fit".into()],
            };
            if at > 0 {
                item.set("Prev", ids[siblings[at - 1]]);
            }
            if let Some(&next) = siblings.get(at + 1) {
                item.set("Next", ids[next]);
            }
            let mine = children(ids[i]);
            if let (Some(&first), Some(&last)) = (mine.first(), mine.last()) {
                item.set("First", ids[first]);
                item.set("Last", ids[last]);
                item.set("Count", mine.len() as i64);
            }
            doc.objects.insert(ids[i], Object::Dictionary(item));
        }
        let top = children(root);
        let mut dict = dictionary! { "Type" => "Outlines", "Count" => top.len() as i64 };
        if let (Some(&first), Some(&last)) = (top.first(), top.last()) {
            dict.set("First", ids[first]);
            dict.set("Last", ids[last]);
        }
        doc.objects.insert(root, Object::Dictionary(dict));
        root
    }

    /// The document's bytes.
    pub fn bytes(mut doc: Document) -> Vec<u8> {
        let mut out = Vec::new();
        doc.save_to(&mut out).expect("writing to memory");
        out
    }

    /// The document encrypted (RC4, 128-bit) so that opening it needs `user_password`; an
    /// empty one only restricts what a viewer allows, as most "protected" PDFs do.
    pub fn encrypted(mut doc: Document, user_password: &str) -> Vec<u8> {
        // The file identifier keys the encryption.
        let id = Object::String(
            b"quarry-test-pdf!".to_vec(),
            lopdf::StringFormat::Hexadecimal,
        );
        doc.trailer.set("ID", vec![id.clone(), id]);
        let version = EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password,
            key_length: 128,
            permissions: Permissions::PRINTABLE,
        };
        let state = EncryptionState::try_from(version).expect("encryption parameters");
        doc.encrypt(&state).expect("encrypting");
        bytes(doc)
    }
}
