//! A line guard between stdin and rmcp's transport, for the parts of JSON-RPC that rmcp
//! leaves to the application: a line that is not JSON gets a -32700 reply (rmcp drops it
//! without a word, and the client waits forever), `tools/call` whose params are not an object
//! with a tool name gets -32602 (rmcp answers "method not found"), and a request before
//! `initialize` gets -32600 saying what to send first. Every other line goes to rmcp as it
//! came; rmcp's replies and the guard's share one writer, a line at a time.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What the guard decides for one line.
enum Verdict {
    Forward,
    Reply(Value),
    Drop,
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
        return Verdict::Forward; // a response to the server, or rmcp's to refuse
    };
    if method == "initialize" {
        *initialized = true;
        return Verdict::Forward;
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
        if let Some(id) = id {
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
    Verdict::Forward
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
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if replies.send(line).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut initialized = false;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            match check(&line, &mut initialized) {
                Verdict::Forward => {
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
            Verdict::Forward
        ));
        assert!(state, "initialize opens the session");
    }
}
