//! What a refusal says about a node's disk. A cluster refuses writes for want of disk in two
//! ways, and neither names the disk where quarry used to look (the root cause's reason):
//!
//! - past the flood-stage watermark (`cluster.routing.allocation.disk.watermark.flood_stage`,
//!   95% by default) OpenSearch makes every index with a shard on that node read-only
//!   (`index.blocks.read_only_allow_delete`; a write answers 429 `cluster_block_exception`,
//!   "disk usage exceeded flood-stage watermark") and blocks creating indexes (403
//!   `index_create_block_exception`, "cluster create-index blocked"). A 429 there is no busy
//!   queue: sent again for half a minute, it only ended as "the cluster stayed too busy";
//! - a disk that fills before the watermark acts (thresholds off, another process filling
//!   it) fails the write itself: `_refresh answered 500`, the "No space left on device" in a
//!   `caused_by` under `_shards.failures`; the shard then fails, and searches answer 503 "all
//!   shards failed" until there is space again, when the node recovers the shard from its
//!   translog by itself.
//!
//! Measured on OpenSearch 2.19 (a node whose data folder is a full 80 MB tmpfs, and one whose
//! flood stage was set below its free space); the answers' shapes are in the tests below.

use serde_json::Value;

/// Every `type` and `reason` an answer holds, at any depth (root causes, `caused_by` chains,
/// shard failures), one line: what the markers below are looked for in, so that an index or
/// a path that happens to hold "disk" is never read as one.
fn reasons(body: &Value) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("type" | "reason", Value::String(text)) => {
                            out.push_str(text);
                            out.push('\n');
                        }
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    // A body that is not JSON (a proxy's page): all of it.
    if let Value::String(text) = body {
        return text.clone();
    }
    let mut out = String::new();
    walk(body, &mut out);
    out
}

/// Whether an answer's text is the flood-stage block (an index made read-only, or index
/// creation blocked): a refusal to send again only once there is space.
pub(crate) fn blocked(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "flood-stage",
        "flood_stage",
        "read-only-allow-delete",
        "read_only_allow_delete",
        "read-only / allow delete",
        "create-index blocked",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// Whether an answer's text says a write failed for want of space.
fn out_of_space(status: u16, text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "no space left",
        "not enough space",
        "disk full",
        "disk is full",
    ]
    .iter()
    .any(|m| text.contains(m))
        || (status >= 500 && text.contains("disk"))
}

/// The index an answer names: the error's `index`, a shard failure's, or `index [NAME]` in
/// a reason.
fn index_named(body: &Value) -> Option<String> {
    let error = &body["error"];
    let candidates = [
        &error["index"],
        &error["root_cause"][0]["index"],
        &body["_shards"]["failures"][0]["index"],
        &body["_shards"]["failures"][0]["reason"]["index"],
    ];
    if let Some(name) = candidates.iter().find_map(|v| v.as_str()) {
        return Some(name.to_string());
    }
    let text = reasons(body);
    let start = text.find("index [")? + "index [".len();
    let end = text[start..].find(']')?;
    Some(text[start..start + end].to_string())
}

/// The node an answer names (`node [NAME]` in a reason, or a shard failure's `node`), if any.
fn node_named(body: &Value) -> Option<String> {
    if let Some(node) = body["_shards"]["failures"][0]["node"].as_str() {
        return Some(node.to_string());
    }
    let text = reasons(body);
    let start = text.find("node [")? + "node [".len();
    let end = text[start..].find(']')?;
    Some(text[start..start + end].to_string())
}

/// What to say after "answered STATUS: REASON" when the refusal was for want of disk: that
/// the node's disk is full or past its flood-stage watermark, the node and index where the
/// answer names them, and what to do. `None` when the answer says nothing of the disk.
pub(crate) fn explain(status: u16, body: &Value) -> Option<String> {
    let text = reasons(body);
    let index = index_named(body);
    let node = node_named(body);
    let holder = match (&node, &index) {
        (Some(node), _) => format!("node {node}"),
        (None, Some(index)) => format!("node holding {index}"),
        (None, None) => "node".to_string(),
    };
    let lift = format!(
        "PUT {}/_settings {{\"index.blocks.read_only_allow_delete\": null}}",
        index.as_deref().unwrap_or("INDEX")
    );
    if text.to_ascii_lowercase().contains("create-index blocked") {
        return Some(format!(
            "the cluster blocks creating indexes, as OpenSearch does when a node's disk is past its flood-stage watermark: free space on the nodes' disks (or add nodes); OpenSearch lifts the block itself once every disk is below the high watermark, or lift it with PUT _cluster/settings {{\"persistent\": {{\"cluster.blocks.create_index\": null}}}}"
        ));
    }
    if blocked(&text) {
        let what = match &index {
            Some(index) => format!("the index {index} is read-only"),
            None => "the index is read-only".to_string(),
        };
        return Some(format!(
            "{what}: the disk of its {holder} is past the flood-stage watermark (cluster.routing.allocation.disk.watermark.flood_stage, 95% by default); free space on that disk (or add nodes): OpenSearch 2.x lifts the block itself once the disk is below the high watermark, or lift it with {lift}"
        ));
    }
    if out_of_space(status, &text) {
        return Some(format!(
            "the disk of the {holder} is full; free space on it: the node then recovers the shard from its translog by itself (searches answer 503 until then), and if the index stays read-only, lift it with {lift}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `POST /x/_refresh` on OpenSearch 2.19 whose data folder's disk is full (a tmpfs filled
    /// after a `_bulk`): the answer quarry showed as "_refresh answered 500" and a cut body.
    #[test]
    fn a_refresh_on_a_full_disk_names_the_disk_and_the_index() {
        let body = json!({"_shards": {"total": 1, "successful": 0, "failed": 1, "failures": [{
            "shard": 0, "index": "x-v1", "status": "INTERNAL_SERVER_ERROR",
            "reason": {"type": "refresh_failed_engine_exception", "reason": "Refresh failed",
                       "index": "x-v1", "shard": "0", "index_uuid": "iNYOKdFLS0Ox9F9eUnfHAg",
                       "caused_by": {"type": "i_o_exception", "reason": "No space left on device"}}}]}});
        let said = explain(500, &body).expect("the disk is named");
        assert!(
            said.contains("disk of the node holding x-v1 is full"),
            "{said}"
        );
        assert!(said.contains("free space"), "{said}");
        assert!(said.contains("PUT x-v1/_settings"), "{said}");
    }

    /// A write past the flood stage (the same answer whether OpenSearch set the block or a
    /// test did): 429 `cluster_block_exception`.
    #[test]
    fn the_flood_stage_block_says_the_index_is_read_only_and_how_to_lift_it() {
        let reason = "index [q-chunks-v3] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];";
        let body = json!({"error": {"root_cause": [{"type": "cluster_block_exception", "reason": reason}],
                          "type": "cluster_block_exception", "reason": reason}, "status": 429});
        assert!(blocked(&reasons(&body)));
        let said = explain(429, &body).unwrap();
        assert!(said.contains("q-chunks-v3 is read-only"), "{said}");
        assert!(said.contains("flood-stage watermark"), "{said}");
        assert!(
            said.contains(
                r#"PUT q-chunks-v3/_settings {"index.blocks.read_only_allow_delete": null}"#
            ),
            "{said}"
        );
        let create = json!({"error": {"root_cause": [{"type": "index_create_block_exception",
            "reason": "blocked by: [FORBIDDEN/10/cluster create-index blocked (api)];"}]}, "status": 403});
        assert!(explain(403, &create)
            .unwrap()
            .contains("cluster.blocks.create_index"));
        // Not every refusal is the disk.
        let busy = json!({"error": {"root_cause": [{"type": "es_rejected_execution_exception",
            "reason": "rejected execution of coordinating operation"}]}, "status": 429});
        assert!(!blocked(&reasons(&busy)));
        // An index named after disks is not a disk.
        let named = json!({"error": {"root_cause": [{"type": "illegal_state_exception",
            "reason": "something broke", "index": "disk-usage-v3"}]}, "status": 500});
        assert_eq!(explain(500, &named), None);
        assert_eq!(explain(429, &busy), None);
        assert_eq!(
            explain(
                404,
                &json!({"error": {"type": "index_not_found_exception"}})
            ),
            None
        );
    }
}
