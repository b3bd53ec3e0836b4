//! The test node itself: it starts, has the plugins quarry's store needs, analyses as the
//! store's mappings ask, and answers a filtered kNN query.

use quarry_test_opensearch::{index_prefix, request, server};

fn ok(method: &str, path: &str, body: Option<&str>) -> String {
    let (status, text) = request(server(), method, path, body).unwrap();
    assert!(status < 300, "{method} {path}: {status} {text}");
    text
}

#[test]
fn the_node_answers_with_the_plugins_the_store_needs() {
    let plugins = ok("GET", "/_cat/plugins?h=component", None);
    for plugin in [
        "opensearch-knn",
        "lang-painless",
        "analysis-common",
        "reindex",
    ] {
        assert!(plugins.contains(plugin), "{plugin} missing: {plugins}");
    }
    // quarry's tokens go through whitespace and Porter's stemmer, as FTS5's porter tokenizer.
    let analysed = ok(
        "POST",
        "/_analyze",
        Some(
            r#"{"tokenizer":"whitespace","filter":["asciifolding","porter_stem"],"text":"getusername reads caf\u00e9"}"#,
        ),
    );
    for token in ["\"getusernam\"", "\"read\"", "\"cafe\""] {
        assert!(analysed.contains(token), "{token}: {analysed}");
    }
    let index = index_prefix("node");
    ok(
        "PUT",
        &format!("/{index}"),
        Some(
            r#"{"settings":{"index":{"knn":true,"number_of_replicas":0}},
                "mappings":{"properties":{"repo":{"type":"keyword"},
                  "v":{"type":"knn_vector","dimension":2,
                       "method":{"name":"hnsw","engine":"lucene","space_type":"cosinesimil"}}}}}"#,
        ),
    );
    for (id, repo, v) in [(1, "a", "[1,0]"), (2, "b", "[0.9,0.1]"), (3, "a", "[0,1]")] {
        ok(
            "PUT",
            &format!("/{index}/_doc/{id}?refresh=true"),
            Some(&format!(r#"{{"repo":"{repo}","v":{v}}}"#)),
        );
    }
    let found = ok(
        "POST",
        &format!("/{index}/_search"),
        Some(
            r#"{"size":1,"query":{"knn":{"v":{"vector":[1,0.05],"k":1,
                 "filter":{"term":{"repo":"b"}}}}}}"#,
        ),
    );
    assert!(found.contains("\"_id\":\"2\""), "{found}");
}
