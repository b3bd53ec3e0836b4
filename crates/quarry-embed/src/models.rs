//! The local models quarry can run, and what differs between them: the network (BERT or
//! Gemma 3), the vector length, how long an input may be, the prompts a model was trained to
//! read queries and documents with, and which runtimes can run it.
//!
//! Why two: all-MiniLM-L6-v2 (22M parameters) embeds ~120 chunk texts/s on two cores and is the
//! default; EmbeddingGemma-300m finds code by meaning far better (cosqa_dev semantic MRR 0.72
//! vs 0.52, docs/EVAL.md) at a sixth of the speed (20 texts/s) and four times the memory, so
//! a first index of a large repository takes a user's hour, not minutes. Both come from PyPI
//! packages (`scripts/install-model.sh`), never from a model hub.

/// The network a model folder holds, read from its `config.json` (`model_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// BERT sentence models (all-MiniLM-L6-v2, or any BERT folder): candle or onnxruntime;
    /// the graph answers token states, pooled here.
    Bert,
    /// Gemma 3 with bidirectional attention (EmbeddingGemma): onnxruntime only. candle has
    /// Gemma 3 only as a causal language model, so a candle fallback would be another model.
    /// The graph answers the pooled, projected, unit-length sentence vector.
    Gemma3,
}

/// A model quarry knows by name.
#[derive(Debug, PartialEq, Eq)]
pub struct LocalModel {
    /// The folder name under the models directory, and the fingerprint's first part.
    pub name: &'static str,
    /// Other names `quarry model install` and `quarry model use` accept.
    pub aliases: &'static [&'static str],
    pub architecture: Architecture,
    pub dims: usize,
    /// The longest input in tokens (the position table, or what the graph was built for).
    pub max_positions: usize,
    /// Tokens a chunk's embedding text is cut to when quarry indexes with this model (part of
    /// the fingerprint): what each model measured best at for its cost (docs/EVAL.md).
    pub index_tokens: usize,
    /// Put before every query.
    pub query_prompt: &'static str,
    /// Put before every document (chunk, commit).
    pub document_prompt: &'static str,
    /// The licence, as the user must be told before installing.
    pub licence: &'static str,
    /// What installing it downloads and keeps, for the user to decide.
    pub size: &'static str,
    /// `search.*` settings this model measured best at where they differ from the defaults
    /// (docs/EVAL.md): a stronger model changes what the words beside it should weigh. A
    /// workspace's own setting wins.
    pub search_defaults: &'static [(&'static str, &'static str)],
}

/// The default: small and fast.
pub const MINILM: LocalModel = LocalModel {
    name: "all-MiniLM-L6-v2",
    aliases: &["minilm", "local"],
    architecture: Architecture::Bert,
    dims: 384,
    max_positions: 512,
    index_tokens: 128,
    query_prompt: "",
    document_prompt: "",
    licence: "Apache-2.0",
    size: "a 90 MB download, 250 MB installed",
    search_defaults: &[],
};

/// The strong one. Prompts: the model card's document prompt; for queries, the card's code
/// retrieval task, which measured best for code search when the model was chosen (issue [21]).
pub const EMBEDDINGGEMMA: LocalModel = LocalModel {
    name: "embeddinggemma-300m",
    aliases: &["embeddinggemma", "gemma"],
    architecture: Architecture::Gemma3,
    dims: 768,
    max_positions: 512,
    index_tokens: 128,
    query_prompt: "task: code retrieval | query: ",
    document_prompt: "title: none | text: ",
    licence: "Gemma Terms of Use (https://ai.google.dev/gemma/terms) and the Gemma Prohibited \
              Use Policy (https://ai.google.dev/gemma/prohibited_use_policy)",
    size: "a 1.15 GB download, 1.6 GB installed",
    // commits_dev hybrid (106 issues, five whole histories), hit@10 / MRR with this model: 0.4
    // (MiniLM's best) 0.811 / 0.610, 0.7 0.821 / 0.617, 1.0 0.849 / 0.627, 1.25 0.849 / 0.634,
    // 1.5 0.821 / 0.616 (since commit BM25 weighs the patch 0.25 and length with b 0.9; before
    // that, 0.7 was best: 0.811 / 0.625).
    search_defaults: &[("search.commit_issue_lexical_weight", "1")],
};

/// Every model quarry knows, the default first.
pub const LOCAL_MODELS: [&LocalModel; 2] = [&MINILM, &EMBEDDINGGEMMA];

/// The model called `name` (its name or an alias, any case).
pub fn local_model(name: &str) -> Option<&'static LocalModel> {
    LOCAL_MODELS.into_iter().find(|m| {
        m.name.eq_ignore_ascii_case(name) || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// The network of a folder's `config.json` (`model_type`), `None` for one quarry cannot run.
pub fn architecture_of(model_type: &str) -> Option<Architecture> {
    match model_type {
        "bert" => Some(Architecture::Bert),
        "gemma3_text" => Some(Architecture::Gemma3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_found_by_name_and_alias() {
        assert_eq!(local_model("all-minilm-l6-v2"), Some(&MINILM));
        assert_eq!(local_model("local"), Some(&MINILM));
        assert_eq!(local_model("EmbeddingGemma"), Some(&EMBEDDINGGEMMA));
        assert_eq!(local_model("embeddinggemma-300m"), Some(&EMBEDDINGGEMMA));
        assert_eq!(local_model("bge-small"), None);
        assert_eq!(architecture_of("gemma3_text"), Some(Architecture::Gemma3));
        assert_eq!(architecture_of("llama"), None);
    }
}
