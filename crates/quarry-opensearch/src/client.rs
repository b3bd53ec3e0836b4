//! Talking to OpenSearch over its REST API: one `ureq` agent (basic auth, a CA file for TLS,
//! every call bounded by `store.timeout_s`), errors that name the server without its password
//! and say what it answered, and the three shapes quarry's reads and writes take: a JSON call,
//! `_bulk` in bounded batches that resends what the cluster turned away for being busy (429),
//! and a scan that pages a sorted search with `search_after` past the result window.
//!
//! 429 is OpenSearch saying a thread pool's queue is full (an indexing burst, a node
//! recovering): the request is sound and must be sent again after a pause, whole or — in a
//! `_bulk` answer — item by item, since the other items were applied.

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};

/// Most actions in one `_bulk` request, and most bytes: OpenSearch's advice is 5–15 MB, and a
/// request over `http.max_content_length` (100 MB) is refused whole. Most documents are small
/// (a call site, a definition: ~200 bytes), so the byte bound is the one that usually holds.
const BULK_ACTIONS: usize = 5000;
const BULK_BYTES: usize = 8 * 1024 * 1024;
/// `_bulk` requests in flight at once: a node indexes one request to one shard on one write
/// thread, so a second keeps another core busy while the first is parsed and written.
const BULK_IN_FLIGHT: usize = 2;
/// How often a request or a bulk item turned away with 429 is sent again, and the first
/// pause (doubled each time, at most 5 s): about half a minute in all.
const BUSY_RETRIES: u32 = 10;
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// Rows per page of a scan.
const PAGE: usize = 5000;
/// The longest a search waits for an index that has no shard copy started (a node
/// restarting recovers its shards in seconds), bounded further by `store.timeout_s`.
const RECOVERY_WAIT: Duration = Duration::from_secs(5);

pub(crate) struct Client {
    agent: ureq::Agent,
    /// `http(s)://host:port` of each node the URL names, without credentials.
    bases: Vec<String>,
    /// The node asked now: the next one when it does not answer.
    current: std::sync::atomic::AtomicUsize,
    /// `Basic …` when a user is given.
    auth: Option<String>,
    /// The store URL with its password as `***`, for messages.
    pub shown: String,
    /// How long a search that met an index with no shard copy started (a node restarting)
    /// waits for it to recover before saying so ([`Client::wait_for_recovery`]).
    recovery_wait: Duration,
    /// Indexes written by `_bulk` since they were last refreshed: a read of this process
    /// refreshes them first (`send`), so it sees its own writes without a refresh per batch.
    unrefreshed: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// A batch's writes sent in the background ([`Client::write_behind`]) and the indexes
    /// they write: a read naming one of those waits for them first.
    writing: std::sync::Mutex<Option<Writing>>,
}

struct Writing {
    job: std::thread::JoinHandle<Result<()>>,
    indexes: Vec<String>,
}

/// How a call ended when it did not succeed.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub status: u16,
    pub body: Value,
}

/// The calls that search: a part of their answer is never an answer ([`Client::send`]).
const SEARCHES: [&str; 3] = ["/_search", "/_count", "/_msearch"];

impl Client {
    pub fn new(
        bases: &[String],
        user: Option<&str>,
        password: Option<&str>,
        ca_file: Option<&std::path::Path>,
        timeout: Duration,
        shown: &str,
    ) -> Result<Client> {
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(5))))
            .http_status_as_error(false)
            .max_idle_connections_per_host(8);
        if let Some(ca) = ca_file {
            let pem = std::fs::read(ca)
                .with_context(|| format!("cannot read the CA file {}", ca.display()))?;
            let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                bail!("the CA file {} holds no certificate", ca.display());
            }
            config = config.tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
                    .build(),
            );
        }
        let auth = user.map(|u| {
            format!(
                "Basic {}",
                base64(format!("{u}:{}", password.unwrap_or("")).as_bytes())
            )
        });
        Ok(Client {
            agent: config.build().into(),
            bases: bases
                .iter()
                .map(|b| b.trim_end_matches('/').to_string())
                .collect(),
            current: Default::default(),
            auth,
            shown: shown.to_string(),
            recovery_wait: timeout
                .saturating_sub(Duration::from_secs(1))
                .clamp(Duration::from_secs(1), RECOVERY_WAIT),
            unrefreshed: Default::default(),
            writing: Default::default(),
        })
    }

    /// One request, sent again while the cluster answers 429, and to the next node the URL
    /// names when one does not answer (killed, restarting); the status and the body read as
    /// JSON (`Null` when empty). A search that some shards failed to answer (a node lost
    /// while it ran: its copies are being promoted elsewhere) is asked again, so an answer is
    /// never a part of one; so is one whose index went away under its alias (a schema move).
    fn send(&self, method: &str, path: &str, body: Option<(&str, String)>) -> Result<(u16, Value)> {
        let by_query = ["/_delete_by_query", "/_update_by_query"];
        if SEARCHES.iter().chain(&by_query).any(|r| path.contains(r)) {
            let named = path.trim_start_matches('/').split('/').next().unwrap_or("");
            self.refresh_written(&named.split(',').collect::<Vec<_>>())?;
        }
        self.send_as_is(method, path, body)
    }

    /// [`Client::send`] without first refreshing what this process wrote.
    fn send_as_is(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, String)>,
    ) -> Result<(u16, Value)> {
        use std::sync::atomic::Ordering;
        let mut pause = FIRST_PAUSE;
        let (mut unreachable, mut partial, mut busy) = (0, 0, 0);
        let mut waited_for_recovery = false;
        let started = trace().then(std::time::Instant::now);
        loop {
            let node = self.current.load(Ordering::Relaxed) % self.bases.len();
            let mut request = ureq::http::Request::builder()
                .method(method)
                .uri(format!("{}{path}", self.bases[node]));
            if let Some(auth) = &self.auth {
                request = request.header("Authorization", auth);
            }
            let (content_type, text) = body.clone().unwrap_or(("application/json", String::new()));
            let request = request
                .header("Content-Type", content_type)
                .body(text)
                .map_err(|e| anyhow!("{e}"))?;
            let answered = self.agent.run(request).and_then(|mut response| {
                let status = response.status().as_u16();
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(1 << 30)
                    .read_to_string()?;
                Ok((status, text))
            });
            let (status, text) = match answered {
                Ok(answer) => answer,
                Err(e) => {
                    // Every node tried once, then once more after a pause (a restart).
                    unreachable += 1;
                    if unreachable >= 2 * self.bases.len() {
                        return Err(unavailable(format!(
                            "OpenSearch at {}: {method} {path}: {e}",
                            self.shown
                        )));
                    }
                    self.current.store(node + 1, Ordering::Relaxed);
                    if unreachable % self.bases.len() == 0 {
                        std::thread::sleep(Duration::from_millis(500));
                    }
                    continue;
                }
            };
            // A full disk's block (429 too) lifts only once there is space: said at once.
            if status == 429 && busy < BUSY_RETRIES && !crate::disk::blocked(&text) {
                busy += 1;
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(5));
                continue;
            }
            let size = text.len();
            let value = if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            let reading = SEARCHES.iter().any(|r| path.contains(r));
            // An `_msearch` answers each of its searches apart inside one 200: each is judged
            // as a search of its own would be, and all are asked again together.
            let answers: Vec<(u64, &Value)> = match value["responses"].as_array() {
                Some(each) if path.contains("/_msearch") => each
                    .iter()
                    .map(|r| (r["status"].as_u64().unwrap_or(200), r))
                    .collect(),
                _ => vec![(status as u64, &value)],
            };
            let failed_shards = answers
                .iter()
                .map(|(_, v)| v["_shards"]["failed"].as_u64().unwrap_or(0))
                .max()
                .unwrap_or(0);
            // The index behind an alias removed while the search ran (a schema version moved
            // in: the next search finds the new index), or every copy of a shard lost at once:
            // asked again, a few times for an index not found.
            let index_gone = answers
                .iter()
                .any(|(s, v)| *s == 404 && v["error"]["type"] == "index_not_found_exception")
                && partial < 4;
            let unavailable = answers.iter().any(|(s, _)| *s == 503);
            // No copy of some shard started (all shards failed): an index recovering after a
            // node restart, waited for a few seconds once, and named if it does not come back.
            // `_analyze` (the stems of a query's tokens) and reads by id are answered by a
            // shard too.
            let needs_shards = reading
                || path.contains("/_analyze")
                || path.contains("/_mget")
                || (method == "GET" && path.contains("/_doc/"));
            if needs_shards && unavailable && !waited_for_recovery {
                waited_for_recovery = true;
                let named = path.trim_start_matches('/').split('/').next().unwrap_or("");
                if let Some(still) = self.wait_for_recovery(named) {
                    return Err(still);
                }
                continue;
            }
            if needs_shards && (unavailable || index_gone) && partial < 20 {
                partial += 1;
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            if (200..300).contains(&status) && failed_shards > 0 && reading {
                partial += 1;
                if partial > 20 {
                    let failure = json!({"error": answers
                        .iter()
                        .find_map(|(_, v)| v["_shards"]["failures"].get(0))
                        .map(|f| f["reason"].clone())
                        .unwrap_or_default()});
                    bail!(
                        "OpenSearch at {}: {failed_shards} shards kept failing to answer {path}: {}{}",
                        self.shown,
                        reason(&failure),
                        crate::disk::explain(500, &failure)
                            .map(|disk| format!(": {disk}"))
                            .unwrap_or_default()
                    );
                }
                std::thread::sleep(Duration::from_millis(250));
                continue;
            }
            if let Some(started) = started {
                eprintln!(
                    "quarry-opensearch: {method} {path} -> {status}, {} bytes, {:.1} ms",
                    size,
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
            return Ok((status, value));
        }
    }

    /// Waits up to `recovery_wait` for every shard of `indexes` (as a search names them) to
    /// have a copy started (`_cluster/health?wait_for_status=yellow`): `None` when they have
    /// or the cluster could not say (the search is asked again), else the error naming the
    /// indexes still recovering.
    fn wait_for_recovery(&self, indexes: &str) -> Option<anyhow::Error> {
        let wait = self.recovery_wait;
        let scope = if indexes.is_empty() || indexes.starts_with('_') {
            String::new()
        } else {
            format!("/{indexes}")
        };
        let path = format!(
            "/_cluster/health{scope}?wait_for_status=yellow&timeout={}ms&level=indices",
            wait.as_millis()
        );
        let (status, health) = self.send_as_is("GET", &path, None).ok()?;
        let timed_out = status == 408 || health["timed_out"] == true;
        if (200..300).contains(&status) && !timed_out {
            return None;
        }
        let red: Vec<&String> = health["indices"]
            .as_object()?
            .iter()
            .filter(|(_, i)| i["status"] == "red")
            .map(|(name, _)| name)
            .collect();
        let names = red
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let (which, is) = match red.len() {
            0 => return None,
            1 => (format!("the index {names}"), "is"),
            _ => (format!("the indexes {names}"), "are"),
        };
        Some(unavailable(format!(
            "OpenSearch at {}: {which} {is} recovering (no copy of a shard started yet: a node restarting, or down) and did not come back within {} s; try again shortly (GET _cluster/health/{}?level=shards shows its shards)",
            self.shown,
            wait.as_secs(),
            red.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(",")
        )))
    }

    /// A call whose answer may be a refusal the caller handles (`Err(Refusal)`), or an error
    /// when the server was not reached.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Result<Value, Refusal>> {
        let (status, value) = self.send(
            method,
            path,
            body.map(|b| ("application/json", b.to_string())),
        )?;
        Ok(if (200..300).contains(&status) {
            Ok(value)
        } else {
            Err(Refusal {
                status,
                body: value,
            })
        })
    }

    /// A call that must succeed; a refusal is an error saying what the server answered.
    pub fn json(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value> {
        match self.call(method, path, body)? {
            Ok(v) => Ok(v),
            Err(refusal) => Err(self.refused(method, path, &refusal)),
        }
    }

    /// Several searches of `index` in one `_msearch`; their answers in order. A search the
    /// cluster refused is an error; one that met failed shards or an index gone under its
    /// alias was asked again ([`Client::send`]).
    pub fn msearch(&self, index: &str, bodies: &[Value]) -> Result<Vec<Value>> {
        let mut text = String::new();
        for body in bodies {
            text.push_str("{}\n");
            text.push_str(&body.to_string());
            text.push('\n');
        }
        let path = format!("/{index}/_msearch");
        let answer = self.accepted(
            "POST",
            &path,
            self.send("POST", &path, Some(("application/x-ndjson", text)))?,
        )?;
        let responses = answer["responses"].as_array().cloned().unwrap_or_default();
        if responses.len() != bodies.len() {
            bail!(
                "OpenSearch at {}: {path} answered {} searches of {}",
                self.shown,
                responses.len(),
                bodies.len()
            );
        }
        for response in &responses {
            if response["error"].is_object() {
                let status = response["status"].as_u64().unwrap_or(500) as u16;
                return Err(self.refused(
                    "POST",
                    &path,
                    &Refusal {
                        status,
                        body: response.clone(),
                    },
                ));
            }
        }
        Ok(responses)
    }

    /// A sent request's answer when it succeeded; otherwise the error saying what the server
    /// answered.
    fn accepted(&self, method: &str, path: &str, (status, body): (u16, Value)) -> Result<Value> {
        if (200..300).contains(&status) {
            Ok(body)
        } else {
            Err(self.refused(method, path, &Refusal { status, body }))
        }
    }

    pub fn refused(&self, method: &str, path: &str, refusal: &Refusal) -> anyhow::Error {
        let reason = reason(&refusal.body);
        let hint = match (refusal.status, crate::disk::explain(refusal.status, &refusal.body)) {
            (_, Some(disk)) => format!(": {disk}"),
            (401 | 403, None) => {
                ": check the user and password of store.url (or $QUARRY_OPENSEARCH_PASSWORD)"
                    .to_string()
            }
            // No copy of some shard answered (a search asked again for two seconds), or no
            // cluster manager is elected.
            (503, None) => ": the cluster cannot answer now (no copy of a shard, or no elected cluster manager: a node down, or one whose data disk is full); see GET _cluster/health and the nodes' logs".to_string(),
            _ => String::new(),
        };
        let said = format!(
            "OpenSearch at {}: {method} {path} answered {}: {reason}{hint}",
            self.shown, refusal.status
        );
        if refusal.status == 503 {
            unavailable(said)
        } else {
            anyhow!(said)
        }
    }

    /// Sends `actions` (each an action line and, but for deletes, a document line) through
    /// `_bulk` in batches of at most `BULK_ACTIONS` actions and `BULK_BYTES` bytes; items the
    /// cluster turned away with 429 are sent again, any other failed item is an error.
    pub fn bulk(&self, actions: &[(Value, Option<Value>)], refresh: bool) -> Result<()> {
        let mut requests: Vec<Vec<String>> = Vec::new();
        let mut start = 0;
        while start < actions.len() {
            let mut end = start;
            let mut bytes = 0;
            let mut lines: Vec<String> = Vec::new();
            while end < actions.len()
                && end - start < BULK_ACTIONS
                && (bytes < BULK_BYTES || end == start)
            {
                let (action, doc) = &actions[end];
                let mut text = action.to_string();
                text.push('\n');
                if let Some(doc) = doc {
                    text.push_str(&doc.to_string());
                    text.push('\n');
                }
                bytes += text.len();
                lines.push(text);
                end += 1;
            }
            requests.push(lines);
            start = end;
        }
        if !refresh {
            let mut unrefreshed = self.unrefreshed.lock().unwrap_or_else(|e| e.into_inner());
            for (action, _) in actions {
                if let Some(index) = action
                    .as_object()
                    .and_then(|o| o.values().next())
                    .and_then(|a| a["_index"].as_str())
                {
                    if !unrefreshed.contains(index) {
                        unrefreshed.insert(index.to_string());
                    }
                }
            }
        }
        // Requests taken in turn by `BULK_IN_FLIGHT` senders; the first error ends the rest.
        let several = requests.len() > 1;
        let queue = std::sync::Mutex::new(requests.into_iter());
        let failed = std::sync::atomic::AtomicBool::new(false);
        let send = || -> Result<()> {
            use std::sync::atomic::Ordering;
            while !failed.load(Ordering::Relaxed) {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some(lines) = next else {
                    return Ok(());
                };
                if let Err(e) = self.bulk_batch(lines, refresh) {
                    failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Ok(())
        };
        if !several {
            return send();
        }
        std::thread::scope(|scope| {
            let senders: Vec<_> = (0..BULK_IN_FLIGHT).map(|_| scope.spawn(send)).collect();
            senders
                .into_iter()
                .map(|s| {
                    s.join()
                        .unwrap_or_else(|_| Err(anyhow!("a bulk sender panicked")))
                })
                .collect::<Result<Vec<()>>>()
                .map(|_| ())
        })
    }

    /// Runs `job` (writes into `indexes`) on a thread of its own once the previous one has
    /// ended, and returns: the caller prepares its next batch while the cluster indexes this
    /// one. The previous job's error, if any, is returned instead of starting this one.
    pub fn write_behind(
        self: &std::sync::Arc<Self>,
        indexes: Vec<String>,
        job: impl FnOnce(&Client) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.wait_for_writes()?;
        let client = std::sync::Arc::clone(self);
        let job = std::thread::spawn(move || job(&client));
        *self.writing.lock().unwrap_or_else(|e| e.into_inner()) = Some(Writing { job, indexes });
        Ok(())
    }

    /// Waits for the writes sent by [`Client::write_behind`], if any; their error is this one.
    pub fn wait_for_writes(&self) -> Result<()> {
        self.wait_for_writes_into(None)
    }

    /// [`Client::wait_for_writes`], only when they write one of `indexes` (all: `None`). The
    /// lock is held until they end: a read on another thread (the statistics beside the
    /// candidate search, bm25.rs) waits too, rather than reading before they are done.
    fn wait_for_writes_into(&self, indexes: Option<&[&str]>) -> Result<()> {
        let mut writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let wanted = writing.as_ref().is_some_and(|w| {
            indexes.is_none_or(|named| w.indexes.iter().any(|i| named.contains(&i.as_str())))
        });
        match if wanted { writing.take() } else { None } {
            Some(w) => w
                .job
                .join()
                .unwrap_or_else(|_| Err(anyhow!("the thread writing a batch panicked"))),
            None => Ok(()),
        }
    }

    /// Refreshes those of `indexes` (as a read names them) that this process wrote without
    /// refreshing (`bulk`), before the read; writes still in flight to one of them are
    /// waited for first.
    pub fn refresh_written(&self, indexes: &[&str]) -> Result<()> {
        self.wait_for_writes_into(Some(indexes))?;
        // Held through the refresh: a read on another thread (the statistics beside the
        // candidate search, bm25.rs) waits for it rather than reading before it is done.
        let mut unrefreshed = self.unrefreshed.lock().unwrap_or_else(|e| e.into_inner());
        let written: Vec<&str> = indexes
            .iter()
            .copied()
            .filter(|i| unrefreshed.contains(*i))
            .collect();
        if !written.is_empty() {
            self.json("POST", &format!("/{}/_refresh", written.join(",")), None)?;
            for index in written {
                unrefreshed.remove(index);
            }
        }
        Ok(())
    }

    fn bulk_batch(&self, mut lines: Vec<String>, refresh: bool) -> Result<()> {
        // Only each item's status, and an error's reason: the whole answer (index, id,
        // version, shards of every line) was most of what quarry parsed while indexing.
        let path = if refresh {
            "/_bulk?refresh=true&filter_path=errors,items.*.status,items.*.error"
        } else {
            "/_bulk?filter_path=errors,items.*.status,items.*.error"
        };
        let mut pause = FIRST_PAUSE;
        for attempt in 0.. {
            let body: String = lines.concat();
            let answer = self.accepted(
                "POST",
                path,
                self.send("POST", path, Some(("application/x-ndjson", body)))?,
            )?;
            if answer["errors"] != Value::Bool(true) {
                return Ok(());
            }
            let items = answer["items"].as_array().cloned().unwrap_or_default();
            let mut again = Vec::new();
            for (item, line) in items.iter().zip(&lines) {
                let result = item
                    .as_object()
                    .and_then(|o| o.values().next())
                    .unwrap_or(item);
                let status = result["status"].as_u64().unwrap_or(0);
                match status {
                    200..=299 => {}
                    // A delete or an update of a document already gone: nothing to do.
                    404 if !line.starts_with("{\"index\"") => {}
                    // A `create` of a document already there: the first copy stays.
                    409 if line.starts_with("{\"create\"") => {}
                    429 if !crate::disk::blocked(&result.to_string()) => again.push(line.clone()),
                    _ => bail!(
                        "OpenSearch at {}: a bulk write failed ({status}): {}{}",
                        self.shown,
                        reason(&result.clone()),
                        crate::disk::explain(status as u16, result)
                            .map(|disk| format!(": {disk}"))
                            .unwrap_or_default()
                    ),
                }
            }
            if again.is_empty() {
                return Ok(());
            }
            if attempt >= BUSY_RETRIES {
                bail!(
                    "OpenSearch at {}: the cluster stayed too busy to take {} writes (429) after {BUSY_RETRIES} tries",
                    self.shown,
                    again.len()
                );
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(5));
            lines = again;
        }
        unreachable!()
    }

    /// Every document of `index` matching `query`, in `id` order, page by page (`search_after`
    /// on the `id` field every quarry index keeps), each passed to `each` with its `_source`
    /// limited to `source`.
    pub fn scan(
        &self,
        index: &str,
        query: Value,
        source: &[&str],
        mut each: impl FnMut(&Value) -> Result<()>,
    ) -> Result<()> {
        let mut after: Option<Value> = None;
        loop {
            let mut body = json!({
                "size": PAGE,
                "query": query,
                "_source": source,
                "sort": [{"id": "asc"}],
                "track_total_hits": false,
            });
            if let Some(after) = &after {
                body["search_after"] = after.clone();
            }
            let answer = self.json("POST", &format!("/{index}/_search"), Some(&body))?;
            let hits = answer["hits"]["hits"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for hit in &hits {
                each(&hit["_source"])?;
            }
            if hits.len() < PAGE {
                return Ok(());
            }
            after = hits.last().map(|h| h["sort"].clone());
        }
    }

    /// How many documents of `index` match `query`.
    pub fn count(&self, index: &str, query: Value) -> Result<u64> {
        let answer = self.json(
            "POST",
            &format!("/{index}/_count"),
            Some(&json!({ "query": query })),
        )?;
        Ok(answer["count"].as_u64().unwrap_or(0))
    }

    /// As [`Client::count`], without first making this process's own unrefreshed writes
    /// visible: for a question they cannot change the answer of (the rows of paths this
    /// process has not written since its last read).
    pub fn count_before_own_writes(&self, index: &str, query: Value) -> Result<u64> {
        let body = json!({ "query": query }).to_string();
        let path = format!("/{index}/_count");
        let answer = self.accepted(
            "POST",
            &path,
            self.send_as_is("POST", &path, Some(("application/json", body)))?,
        )?;
        Ok(answer["count"].as_u64().unwrap_or(0))
    }

    /// Deletes what matches `query` in `indexes` (comma-separated) and makes it visible.
    pub fn delete_where(&self, indexes: &str, query: Value) -> Result<u64> {
        let answer = self.json(
            "POST",
            &format!("/{indexes}/_delete_by_query?refresh=true&conflicts=proceed&slices=auto"),
            Some(&json!({ "query": query })),
        )?;
        if let Some(failure) = answer["failures"].as_array().and_then(|f| f.first()) {
            bail!("OpenSearch at {}: a delete failed: {failure}", self.shown);
        }
        Ok(answer["deleted"].as_u64().unwrap_or(0))
    }

    /// Makes every write to `indexes` so far visible to searches.
    pub fn refresh(&self, indexes: &str) -> Result<()> {
        self.json("POST", &format!("/{indexes}/_refresh"), None)?;
        let mut unrefreshed = self.unrefreshed.lock().unwrap_or_else(|e| e.into_inner());
        for index in indexes.split(',') {
            unrefreshed.remove(index);
        }
        Ok(())
    }
}

/// An error saying the cluster cannot answer now ([`quarry_core::store::Unavailable`]: HTTP
/// answers it 503 with `Retry-After`).
pub(crate) fn unavailable(message: String) -> anyhow::Error {
    anyhow::Error::new(quarry_core::store::Unavailable(message))
}

/// Whether each request is written to stderr with its status, size and time
/// (`QUARRY_OPENSEARCH_TRACE=1`): where a command's time goes.
fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("QUARRY_OPENSEARCH_TRACE").is_some_and(|v| v != "0"))
}

/// What an OpenSearch error body says: its root cause's type and reason (or the first shard
/// failure's, where the answer is a partial one: a `_refresh` that failed on a shard), and the
/// innermost `caused_by` under it when that says more ("Refresh failed" is said by an
/// `i_o_exception: No space left on device` under it).
pub(crate) fn reason(body: &Value) -> String {
    let error = &body["error"];
    let cause = match error["root_cause"].get(0) {
        Some(cause) => cause,
        None if error.is_object() => error,
        None => &body["_shards"]["failures"][0]["reason"],
    };
    match (cause["type"].as_str(), cause["reason"].as_str()) {
        (Some(kind), Some(reason)) => {
            let mut said = format!("{kind}: {reason}");
            let mut inner = &error["caused_by"];
            if !inner.is_object() {
                inner = &cause["caused_by"];
            }
            while inner["caused_by"].is_object() {
                inner = &inner["caused_by"];
            }
            if let (Some(kind), Some(reason)) = (inner["type"].as_str(), inner["reason"].as_str()) {
                if !said.contains(reason) {
                    said.push_str(&format!(" ({kind}: {reason})"));
                }
            }
            said
        }
        _ => {
            let text = body.to_string();
            text.chars().take(300).collect()
        }
    }
}

/// Standard base64 (RFC 4648, padded), for the basic-auth header.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The answer of `_refresh` on a node whose disk is full (OpenSearch 2.19, disk.rs): the
    /// error names the disk, the index and what to do, not only "answered 500".
    #[test]
    fn a_refresh_refused_for_a_full_disk_says_so() {
        let client = super::Client::new(
            &["http://127.0.0.1:1".to_string()],
            None,
            None,
            None,
            std::time::Duration::from_secs(1),
            "opensearch+http://h:9200/q",
        )
        .unwrap();
        let body = serde_json::json!({"_shards": {"total": 1, "successful": 0, "failed": 1, "failures": [{
            "shard": 0, "index": "q-chunks-v3", "status": "INTERNAL_SERVER_ERROR",
            "reason": {"type": "refresh_failed_engine_exception", "reason": "Refresh failed",
                       "index": "q-chunks-v3", "shard": "0", "index_uuid": "iNYOKdFLS0Ox9F9eUnfHAg",
                       "caused_by": {"type": "i_o_exception", "reason": "No space left on device"}}}]}});
        let said = format!(
            "{}",
            client.refused(
                "POST",
                "/q-chunks/_refresh",
                &super::Refusal { status: 500, body }
            )
        );
        assert_eq!(
            said,
            "OpenSearch at opensearch+http://h:9200/q: POST /q-chunks/_refresh answered 500: \
             refresh_failed_engine_exception: Refresh failed (i_o_exception: No space left on device): \
             the disk of the node holding q-chunks-v3 is full; free space on it: the node then \
             recovers the shard from its translog by itself (searches answer 503 until then), and \
             if the index stays read-only, lift it with \
             PUT q-chunks-v3/_settings {\"index.blocks.read_only_allow_delete\": null}"
        );
    }

    #[test]
    fn base64_pads_as_the_rfc_says() {
        assert_eq!(super::base64(b"admin:secret"), "YWRtaW46c2VjcmV0");
        assert_eq!(super::base64(b"a"), "YQ==");
        assert_eq!(super::base64(b"ab"), "YWI=");
        assert_eq!(super::base64(b""), "");
    }
}
