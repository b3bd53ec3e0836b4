//! A line guard between stdin and rmcp's transport, for the parts of JSON-RPC that rmcp
//! leaves to the application: a line that is not JSON gets a -32700 reply (rmcp drops it
//! without a word, and the client waits forever), `tools/call` whose params are not an object
//! with a tool name gets -32602 (rmcp answers "method not found"), and a request before
//! `initialize` gets -32600 saying what to send first, and a response sent before `initialize`
//! (there is no request of the server's it could answer) is dropped — forwarded, it ended
//! rmcp's handshake and the server never answered again. Every other line goes to rmcp as it
//! came; rmcp's replies and the guard's share one writer, a line at a time.
//!
//! The guard also bounds the work at hand: at most [`max_in_flight`] requests are with rmcp
//! at once (each is released by its reply, or by the client cancelling it); until one is,
//! the guard reads no further line, so a client that pipelines a thousand searches waits for
//! them in its own pipe instead of in this process's memory.

use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Longest message accepted (bytes). A search query is at most 32,768 characters; a line far
/// longer is a mistake or an abuse, refused with an error instead of being read whole.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// One line of input, or the size of one that was over the limit (its bytes discarded).
enum Line {
    Text(String),
    TooLong(usize),
}

/// Reads up to the next newline, holding at most `MAX_LINE_BYTES` of it in memory; `None` at
/// the end of input. Hand-written because tokio's `lines()` has no bound.
async fn next_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let mut seen = 0usize;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match (seen, buf.is_empty()) {
                (0, _) => None,
                (n, _) if n > MAX_LINE_BYTES => Some(Line::TooLong(n)),
                _ => Some(Line::Text(String::from_utf8_lossy(&buf).into_owned())),
            });
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        seen += part.len();
        if seen <= MAX_LINE_BYTES {
            buf.extend_from_slice(part);
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(if seen > MAX_LINE_BYTES {
                Line::TooLong(seen)
            } else {
                Line::Text(String::from_utf8_lossy(&buf).into_owned())
            }));
        }
    }
}

/// What the guard decides for one line.
enum Verdict {
    /// To rmcp, taking or freeing a turn as it says.
    Forward(Turn),
    Reply(Value),
    Drop,
}

/// What a forwarded line does to the turns at work.
enum Turn {
    /// A request: it waits for a turn, held until the reply with this id.
    Take(Value),
    /// The client cancelled this request, which may never be answered: its turn is free.
    Free(Value),
    Keep,
}

/// The turn a forwarded message with `method` and `id` takes or frees.
fn turn_of(method: &str, id: Option<Value>, object: &serde_json::Map<String, Value>) -> Turn {
    match id {
        Some(id) if !id.is_null() => Turn::Take(id),
        _ if method == "notifications/cancelled" => object
            .get("params")
            .and_then(|p| p.get("requestId"))
            .map_or(Turn::Keep, |id| Turn::Free(id.clone())),
        _ => Turn::Keep,
    }
}

fn error_reply(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// Reads one line of a client's stream; `initialized` is whether `initialize` has come.
fn check(line: &str, initialized: &mut bool) -> Verdict {
    let message: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Reply(error_reply(
                Value::Null,
                -32700,
                format!("parse error: not JSON ({e})"),
            ))
        }
    };
    let Some(object) = message.as_object() else {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32600,
            "invalid request: a JSON-RPC message is an object",
        ));
    };
    let id = object.get("id").cloned();
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        // A response to the server: before `initialize` there is nothing it can answer.
        return if *initialized {
            Verdict::Forward(Turn::Keep)
        } else {
            Verdict::Drop
        };
    };
    if method == "initialize" {
        *initialized = true;
        return Verdict::Forward(turn_of(method, id, object));
    }
    if !*initialized && method != "ping" {
        return match id {
            Some(id) => Verdict::Reply(error_reply(
                id,
                -32600,
                format!("`{method}` before `initialize`: send `initialize` first"),
            )),
            None => Verdict::Drop, // a notification has no one to answer
        };
    }
    if method == "tools/call" {
        if let Some(id) = id.clone() {
            let params = object.get("params");
            let named = params
                .and_then(|p| p.get("name"))
                .is_some_and(Value::is_string);
            let arguments_ok = params
                .and_then(|p| p.get("arguments"))
                .is_none_or(|a| a.is_object() || a.is_null());
            if !params.is_some_and(Value::is_object) || !named || !arguments_ok {
                return Verdict::Reply(error_reply(
                    id,
                    -32602,
                    "invalid params: tools/call takes {\"name\": TOOL, \"arguments\": {…}}",
                ));
            }
        }
    }
    Verdict::Forward(turn_of(method, id, object))
}

/// Requests with rmcp at once: two per CPU (a search is mostly one CPU's work), at least 2.
pub fn max_in_flight() -> usize {
    2 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A request's id as a key (ids are numbers or strings).
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The requests with rmcp, each holding a turn until its reply passes.
#[derive(Default, Clone)]
struct InFlight(
    std::sync::Arc<
        std::sync::Mutex<std::collections::HashMap<String, tokio::sync::OwnedSemaphorePermit>>,
    >,
);

impl InFlight {
    fn hold(&self, id: &Value, turn: tokio::sync::OwnedSemaphorePermit) {
        if let Ok(mut held) = self.0.lock() {
            held.insert(id_key(id), turn);
        }
    }

    fn release(&self, id: &Value) {
        if let Ok(mut held) = self.0.lock() {
            held.remove(&id_key(id));
        }
    }
}

/// The id of a reply line, read without building the rest (a reply may be a large result).
fn reply_id(line: &str) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<Value>,
    }
    serde_json::from_str::<Id>(line).ok()?.id
}

/// Serves `server` on stdin/stdout through the guard until the client closes stdin.
pub async fn serve_stdio<S>(server: S) -> anyhow::Result<()>
where
    S: rmcp::ServerHandler,
{
    use rmcp::ServiceExt;
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(1 << 20);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 20);
    let (lines_out, mut outbox) = tokio::sync::mpsc::unbounded_channel::<String>();

    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = outbox.recv().await {
            stdout.write_all(line.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
            stdout.flush().await?;
        }
        Ok::<_, std::io::Error>(())
    });
    let replies = lines_out.clone();
    let in_flight = InFlight::default();
    let turns = std::sync::Arc::new(tokio::sync::Semaphore::new(max_in_flight()));
    let answered = in_flight.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(id) = reply_id(&line) {
                answered.release(&id);
            }
            if replies.send(line).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        let mut initialized = false;
        while let Ok(Some(line)) = next_line(&mut input).await {
            let line = match line {
                Line::Text(line) => line,
                Line::TooLong(size) => {
                    let reply = error_reply(
                        Value::Null,
                        -32600,
                        format!(
                            "invalid request: a message of {size} bytes is over the limit of {MAX_LINE_BYTES}"
                        ),
                    );
                    let _ = lines_out.send(reply.to_string());
                    continue;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            match check(&line, &mut initialized) {
                Verdict::Forward(turn) => {
                    match turn {
                        Turn::Take(id) => {
                            let Ok(turn) = turns.clone().acquire_owned().await else {
                                break;
                            };
                            in_flight.hold(&id, turn);
                        }
                        Turn::Free(id) => in_flight.release(&id),
                        Turn::Keep => {}
                    }
                    let sent = async {
                        to_rmcp.write_all(line.as_bytes()).await?;
                        to_rmcp.write_all(b"\n").await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                }
                Verdict::Reply(reply) => {
                    let _ = lines_out.send(reply.to_string());
                }
                Verdict::Drop => {}
            }
        }
        // End of input: closing `to_rmcp` (dropped here) ends the session.
    });

    let result = match server.serve((rmcp_in, rmcp_out)).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(anyhow::Error::from),
        Err(e) => Err(anyhow::anyhow!(
            "MCP session ended before `initialize`: {e}"
        )),
    };
    // Let the writer flush what is queued (the guard's replies included).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(line: &str, initialized: bool) -> Option<Value> {
        let mut state = initialized;
        match check(line, &mut state) {
            Verdict::Reply(v) => Some(v),
            _ => None,
        }
    }

    #[test]
    fn bad_lines_get_json_rpc_errors_and_good_ones_pass() {
        assert_eq!(verdict("not json", true).unwrap()["error"]["code"], -32700);
        assert_eq!(verdict("[1,2]", true).unwrap()["error"]["code"], -32600);
        let before = verdict(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#, false).unwrap();
        assert_eq!(
            (before["id"].clone(), before["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        let bad_args = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":"bad"}}"#;
        assert_eq!(verdict(bad_args, true).unwrap()["error"]["code"], -32602);
        let good = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}"#;
        assert!(verdict(good, true).is_none());
        let mut state = false;
        assert!(matches!(
            check(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                &mut state
            ),
            Verdict::Forward(_)
        ));
        assert!(state, "initialize opens the session");
        // A response before `initialize` answers nothing: dropped, not forwarded.
        let response = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(matches!(check(response, &mut false), Verdict::Drop));
        assert!(matches!(check(response, &mut true), Verdict::Forward(_)));
    }

    #[test]
    fn an_oversized_line_is_measured_and_dropped_and_the_next_one_read() {
        let big = "x".repeat(MAX_LINE_BYTES + 10);
        let input = format!("{{\"a\":1}}\n{big}\nlast");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut reader = BufReader::new(input.as_bytes());
            let mut seen = Vec::new();
            while let Some(line) = next_line(&mut reader).await.unwrap() {
                seen.push(match line {
                    Line::Text(t) => t,
                    Line::TooLong(n) => format!("too long: {n}"),
                });
            }
            assert_eq!(
                seen,
                [
                    "{\"a\":1}".to_string(),
                    format!("too long: {}", MAX_LINE_BYTES + 10),
                    "last".to_string()
                ]
            );
        });
    }

    proptest::proptest! {
        /// Whatever a client sends, each line gets a verdict and the guard never panics;
        /// a line that is not JSON is always answered (-32700), never dropped.
        #[test]
        fn every_line_gets_a_verdict(line in "(\\PC|[{}\\[\\]\":,0-9a-z ])*", initialized: bool) {
            let mut state = initialized;
            let parsed = serde_json::from_str::<Value>(&line).is_ok();
            match check(&line, &mut state) {
                Verdict::Reply(reply) if !parsed => {
                    proptest::prop_assert_eq!(&reply["error"]["code"], -32700)
                }
                Verdict::Drop | Verdict::Forward(_) if !parsed => {
                    proptest::prop_assert!(false, "a line that is not JSON went unanswered")
                }
                _ => {}
            }
        }
    }
}
