//! The embedder seam. Semantic search plugs a local model or an HTTP endpoint in here; the
//! store records `fingerprint()` so a model change re-embeds instead of mixing vectors.

/// Turns texts into fixed-size vectors.
pub trait Embedder: Send + Sync {
    /// Identifies the model and its settings (name, revision, dims, pooling). Vectors made by
    /// embedders with different fingerprints are never compared.
    fn fingerprint(&self) -> String;
    /// Vector length.
    fn dims(&self) -> usize;
    /// Embeds a batch of texts to be found (chunks, commits); the result has one vector per
    /// input, in order.
    fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>>;
    /// Embeds search queries. A model trained with a query prompt apart from its document
    /// prompt (EmbeddingGemma) reads queries differently; the others as documents.
    fn embed_queries(&self, queries: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.embed(queries)
    }
}

/// The key a stored chunk's vector is kept under (every store uses it): the hash of its
/// embedding text, so a chunk whose text is unchanged is never embedded twice.
pub fn chunk_embed_hash(path: &str, chunk: &crate::Chunk) -> String {
    crate::content_hash(
        embed_text(&EmbedSource {
            path,
            kind: &chunk.kind,
            symbol: chunk.symbol.as_deref(),
            signature: chunk.signature.as_deref(),
            text: &chunk.text,
        })
        .as_bytes(),
    )
}

/// The fields of a chunk that its embedding is made from.
#[derive(Debug, Clone, Copy)]
pub struct EmbedSource<'a> {
    pub path: &'a str,
    pub kind: &'a str,
    pub symbol: Option<&'a str>,
    pub signature: Option<&'a str>,
    pub text: &'a str,
}

/// How many characters of a chunk's body go into its embedding text. MiniLM-class models are
/// trained on ~128 tokens, and code runs ~3–4 characters a token, so about 600 characters of
/// body after the header fill the window: the head of a definition (signature, doc comment,
/// first statements) says most about what it does; BM25 still sees the whole body.
pub const EMBED_BODY_CHARS: usize = 600;

/// The text embedded for a chunk — the same template for every store and every embedder:
///
/// ```text
/// {path}
/// {kind} {symbol}          (when the chunk is a definition)
/// {signature}              (when it is not already the body's first line)
/// {body, first 600 characters, blank lines dropped}
/// ```
pub fn embed_text(src: &EmbedSource) -> String {
    let mut out = String::with_capacity(EMBED_BODY_CHARS + 200);
    out.push_str(src.path);
    out.push('\n');
    if let Some(symbol) = src.symbol {
        out.push_str(src.kind);
        out.push(' ');
        out.push_str(symbol);
        out.push('\n');
    }
    let first_line = src
        .text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if let Some(sig) = src.signature.filter(|s| !s.is_empty() && *s != first_line) {
        out.push_str(sig);
        out.push('\n');
    }
    let mut body_chars = 0;
    for line in src
        .text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
    {
        if body_chars >= EMBED_BODY_CHARS {
            break;
        }
        let line: String = line.chars().take(EMBED_BODY_CHARS - body_chars).collect();
        body_chars += line.chars().count() + 1;
        out.push_str(&line);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_has_path_symbol_signature_and_head_of_body() {
        let body = format!(
            "/// Reads it.\nfn parse_config(p: &Path) -> Config {{\n\n{}\n}}",
            "    let x = 1;\n".repeat(100)
        );
        let text = embed_text(&EmbedSource {
            path: "src/config.rs",
            kind: "function",
            symbol: Some("parse_config"),
            signature: Some("fn parse_config(p: &Path) -> Config {"),
            text: &body,
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "src/config.rs");
        assert_eq!(lines[1], "function parse_config");
        assert_eq!(
            lines[2], "fn parse_config(p: &Path) -> Config {",
            "signature differs from the first line"
        );
        assert_eq!(lines[3], "/// Reads it.");
        assert!(!lines.iter().any(|l| l.trim().is_empty()));
        assert!(text.len() < 600 + 120, "{}", text.len());
        let plain = embed_text(&EmbedSource {
            path: "a.txt",
            kind: "text",
            symbol: None,
            signature: None,
            text: "hello",
        });
        assert_eq!(plain, "a.txt\nhello");
    }
}
