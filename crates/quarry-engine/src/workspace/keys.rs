//! Every setting quarry reads, declared once: its dotted name, the kind of value it takes and
//! the help `quarry config list` shows. config.rs checks values against these kinds when they
//! are set and reads them back with their defaults.

/// What a key's value may be.
#[derive(Debug, Clone, Copy)]
pub enum KeyKind {
    Choice(&'static [&'static str]),
    Text,
    Url,
    Path,
    /// A whole number ≥ 1.
    Count,
    /// A whole number ≥ 0.
    Whole,
    /// A number ≥ 0.
    Number,
    /// A store server's URL: PostgreSQL (`postgres://` or `postgresql://`) or OpenSearch
    /// (`opensearch+http://`, `opensearch+https://`).
    PostgresUrl,
    /// PostgreSQL connection URLs, separated by commas.
    PostgresUrls,
}

/// One setting.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    pub name: &'static str,
    pub kind: KeyKind,
    pub help: &'static str,
}

/// Every setting quarry reads.
pub const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "store.url",
        kind: KeyKind::PostgresUrl,
        help: "keep the index on PostgreSQL with pgvector (postgres://user:password@host:5432/db) or on an OpenSearch cluster with k-NN (opensearch+https://user:password@host:9200/PREFIX, ?ca=FILE for a private CA, the password also from $QUARRY_OPENSEARCH_PASSWORD) instead of the embedded SQLite file; $QUARRY_DB_URL and --db-url override it (lists show the password as ***)",
    },
    KeySpec {
        name: "store.read_urls",
        kind: KeyKind::PostgresUrls,
        help: "hot standbys of store.url (streaming replicas), comma-separated: searches read from the first that answers and trails the primary by at most store.max_lag_s, else from the primary; index runs always write to the primary; $QUARRY_DB_READ_URLS and --db-read-url override it",
    },
    KeySpec {
        name: "store.max_lag_s",
        kind: KeyKind::Number,
        help: "seconds of the primary's changes a standby may not have replayed yet and still answer searches",
    },
    KeySpec {
        name: "store.timeout_s",
        kind: KeyKind::Number,
        help: "seconds PostgreSQL may take to accept a connection or answer one call before quarry gives up with an error (the server is also asked to stop the statement then)",
    },
    KeySpec {
        name: "embed.provider",
        kind: KeyKind::Choice(&["auto", "local", "endpoint", "none"]),
        help: "which embedder makes vectors: auto = the endpoint when embed.endpoint is set, else the local model; none = lexical only",
    },
    KeySpec {
        name: "embed.local_model",
        kind: KeyKind::Choice(&["all-MiniLM-L6-v2", "embeddinggemma-300m"]),
        help: "the local model: all-MiniLM-L6-v2 (fast, the default) or embeddinggemma-300m (finds code by meaning better, ~6x slower to index, 1 GB of memory; `quarry model install embeddinggemma`); changing it re-embeds",
    },
    KeySpec {
        name: "embed.model_dir",
        kind: KeyKind::Path,
        help: "folder of a local sentence model (a BERT one: config.json, tokenizer.json, model.safetensors; or an EmbeddingGemma install) [default: the installed embed.local_model]",
    },
    KeySpec {
        name: "embed.runtime",
        kind: KeyKind::Choice(&["auto", "onnx", "candle"]),
        help: "what runs the local model: onnx = onnxruntime (installed by `quarry model install`; about 3x faster), candle = pure Rust fp32, auto = onnx when installed, else candle",
    },
    KeySpec {
        name: "embed.precision",
        kind: KeyKind::Choice(&["int8", "fp32"]),
        help: "weights onnxruntime runs: int8 (fastest; vectors within cosine 0.99 of fp32) or fp32 (the same vectors as candle); changing it re-embeds",
    },
    KeySpec {
        name: "embed.device",
        kind: KeyKind::Choice(&["cpu", "cuda"]),
        help: "where onnxruntime runs the local model: cuda needs the GPU build of onnxruntime (QUARRY_ORT_LIB) and the CUDA libraries",
    },
    KeySpec {
        name: "embed.endpoint",
        kind: KeyKind::Url,
        help: "OpenAI-compatible API base, e.g. http://localhost:11434/v1 (Ollama) or https://api.openai.com/v1",
    },
    KeySpec {
        name: "embed.model",
        kind: KeyKind::Text,
        help: "the model name the endpoint serves, e.g. nomic-embed-text",
    },
    KeySpec {
        name: "embed.api_key_env",
        kind: KeyKind::Text,
        help: "environment variable holding the endpoint's API key (the key itself is never stored)",
    },
    KeySpec {
        name: "embed.timeout_s",
        kind: KeyKind::Number,
        help: "seconds one endpoint request may take before quarry gives up and answers lexically",
    },
    KeySpec {
        name: "search.rerank",
        kind: KeyKind::Choice(&["none", "llm"]),
        help: "second stage: llm = a language model (llm.*) reorders the top search.rerank_candidates results; none = the first stage's order",
    },
    KeySpec {
        name: "search.rerank_candidates",
        kind: KeyKind::Count,
        help: "first-stage results a language model reorders",
    },
    KeySpec {
        name: "llm.command",
        kind: KeyKind::Text,
        help: "command that reads a prompt on stdin and answers on stdout (run with sh -c), used when llm.endpoint is not set",
    },
    KeySpec {
        name: "llm.endpoint",
        kind: KeyKind::Url,
        help: "OpenAI-compatible chat API base, e.g. http://localhost:11434/v1 (Ollama); wins over llm.command",
    },
    KeySpec {
        name: "llm.model",
        kind: KeyKind::Text,
        help: "the model name llm.endpoint serves, e.g. qwen2.5-coder:7b",
    },
    KeySpec {
        name: "llm.api_key_env",
        kind: KeyKind::Text,
        help: "environment variable holding llm.endpoint's API key (the key itself is never stored)",
    },
    KeySpec {
        name: "llm.timeout_s",
        kind: KeyKind::Number,
        help: "seconds one language-model call may take before quarry keeps the first-stage order",
    },
    KeySpec {
        name: "search.fusion",
        kind: KeyKind::Choice(&["convex", "rrf"]),
        help: "hybrid fusion: convex (weighted normalised scores) or rrf (weighted reciprocal ranks)",
    },
    KeySpec {
        name: "search.lexical_candidates",
        kind: KeyKind::Count,
        help: "BM25 hits fused in hybrid mode",
    },
    KeySpec {
        name: "search.semantic_candidates",
        kind: KeyKind::Count,
        help: "nearest neighbours fused in hybrid mode",
    },
    KeySpec {
        name: "search.rrf_k",
        kind: KeyKind::Number,
        help: "k of reciprocal rank fusion",
    },
    KeySpec {
        name: "search.nl_lexical_weight",
        kind: KeyKind::Number,
        help: "lexical weight for natural-language queries (semantic weight 1)",
    },
    KeySpec {
        name: "search.code_semantic_weight",
        kind: KeyKind::Number,
        help: "semantic weight for queries naming identifiers or files (lexical weight 1)",
    },
    KeySpec {
        name: "search.symbol_boost",
        kind: KeyKind::Number,
        help: "added when a query identifier is a chunk's primary symbol",
    },
    KeySpec {
        name: "search.path_boost",
        kind: KeyKind::Number,
        help: "added when a file named in the query matches a chunk's path",
    },
    KeySpec {
        name: "search.max_per_file",
        kind: KeyKind::Count,
        help: "chunks kept per file in hybrid results",
    },
    KeySpec {
        name: "search.answer_floor",
        kind: KeyKind::Number,
        help: "cosine below which a result with no matching words is not an answer",
    },
    KeySpec {
        name: "search.commit_answer_floor",
        kind: KeyKind::Number,
        help: "cosine below which a commit found by meaning alone (no matching words) is not an answer",
    },
    KeySpec {
        name: "search.commit_issue_lexical_weight",
        kind: KeyKind::Number,
        help: "weight of words beside meaning (1) when a whole issue text ranks commits",
    },
    KeySpec {
        name: "search.commit_fix_prior",
        kind: KeyKind::Number,
        help: "factor on a commit that changed code and its tests when an issue text ranks commits (1 = none)",
    },
    KeySpec {
        name: "search.commit_before_release_prior",
        kind: KeyKind::Number,
        help: "factor on a commit authored before the release an issue text says it runs (`SymPy 1.10 gives …`, read from the repo's tags; 1 = none)",
    },
    KeySpec {
        name: "search.commit_code_echo",
        kind: KeyKind::Number,
        help: "how much a commit gains when its changed lines repeat an issue text's code: score × (1 + w·ln(1 + runs of four code tokens echoed)); 0 = none",
    },
    KeySpec {
        name: "daemon.auto",
        kind: KeyKind::Choice(&["true", "false"]),
        help: "start the workspace's resident quarry (`quarry daemon`) on the first search that needs the model, so later searches answer warm; false = only `quarry daemon start` starts it",
    },
    KeySpec {
        name: "daemon.watch",
        kind: KeyKind::Choice(&["true", "false"]),
        help: "the resident quarry also keeps the index current: it re-indexes (and embeds) files as they change, as `quarry watch` does",
    },
    KeySpec {
        name: "daemon.idle_s",
        kind: KeyKind::Count,
        help: "seconds without a request after which the resident quarry exits",
    },
    KeySpec {
        name: "history.embed_recent",
        kind: KeyKind::Whole,
        help: "newest commits per repo that get a vector (0 = all); older ones are found by their words, `quarry sync --embed-all` embeds them",
    },
];
