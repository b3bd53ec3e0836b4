//! `quarry mcp` driven by a real MCP client (the official Rust SDK, rmcp) over stdio:
//! initialize, list the tools, call each one, and bad arguments, unknown tools and failing
//! calls answered as tool errors while the server keeps serving.

mod common;

use common::git::{commit, init};
use common::{sample_repo, Env};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

type Client = RunningService<RoleClient, ()>;

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: the call itself failed: {e}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    serde_json::from_str(&text(&result)).unwrap()
}

async fn tool_error(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args).await;
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} should fail: {}",
        text(&result)
    );
    text(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_lists_and_calls_every_tool() {
    let env = Env::new();
    sample_repo(&env);
    let dir = env.repo.path();
    init(dir);
    commit(
        dir,
        "Add the user store and upload queue",
        "Alice",
        "2025-01-02T00:00:00Z",
    );
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);

    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_quarry"));
    command.arg("--index-dir").arg(env.index_dir()).arg("mcp");
    let client: Client =
        ().serve(TokioChildProcess::new(command).unwrap())
            .await
            .expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "quarry");

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "search",
            "search_commits",
            "slice",
            "status",
            "summary",
            "touches"
        ]
    );
    for t in &tools {
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 40),
            "{}",
            t.name
        );
        assert_eq!(t.input_schema["type"], "object", "{}", t.name);
    }
    let search_schema = &tools
        .iter()
        .find(|t| t.name == "search")
        .unwrap()
        .input_schema;
    assert!(search_schema["properties"]["query"].is_object());
    assert!(
        search_schema["properties"]["type"].is_object(),
        "{search_schema:?}"
    );
    assert_eq!(search_schema["required"], json!(["query"]));

    let found = ok(
        &client,
        "search",
        json!({"query": "getUserName", "mode": "lexical", "limit": 3}),
    )
    .await;
    assert_eq!(found["results"][0]["path"], "app/users.py", "{found}");
    assert_eq!(found["freshness"][0]["files_changed_since"], 0, "{found}");
    // The router's exact routes hold the filters too: a name's definitions, a literal.
    for query in ["getUserName", "\"getUserName\""] {
        for (filter, admits) in [
            (
                json!({"path": "src/*"}),
                (|p: &str| p.starts_with("src/")) as fn(&str) -> bool,
            ),
            (json!({"type": "docs"}), |p: &str| {
                p.ends_with(".md") || p.ends_with(".txt")
            }),
            (json!({"language": "python"}), |p: &str| p.ends_with(".py")),
        ] {
            let mut args = json!({"query": query, "limit": 20});
            args.as_object_mut()
                .unwrap()
                .extend(filter.as_object().unwrap().clone());
            let found = call(&client, "search", args).await;
            if found.is_error == Some(true) {
                continue; // nothing matched: the tool says so
            }
            let found: Value = serde_json::from_str(&text(&found)).unwrap();
            for r in found["results"].as_array().unwrap() {
                assert!(
                    admits(r["path"].as_str().unwrap()),
                    "{query} {filter}: {found}"
                );
            }
        }
    }
    let docs = ok(
        &client,
        "search",
        json!({"query": "retry backoff", "mode": "lexical", "type": "docs"}),
    )
    .await;
    assert_eq!(docs["results"][0]["path"], "docs/guide.md", "{docs}");
    // What a command-line client sends (the Inspector CLI's `--tool-arg limit=1
    // repos=["…"]`): strings that spell the declared types.
    let repo_name = found["results"][0]["repo"].as_str().unwrap().to_string();
    let typed_as_strings = ok(
        &client,
        "search",
        json!({"query": "getUserName", "mode": "lexical", "limit": "1", "repos": format!("[\"{repo_name}\"]")}),
    )
    .await;
    assert_eq!(
        typed_as_strings["results"].as_array().unwrap().len(),
        1,
        "{typed_as_strings}"
    );
    let commits = ok(&client, "search_commits", json!({"query": "upload queue"})).await;
    assert_eq!(
        commits["commits"][0]["subject"],
        "Add the user store and upload queue"
    );
    let touches = ok(&client, "touches", json!({"path": "app/users.py"})).await;
    assert_eq!(touches["commits"].as_array().unwrap().len(), 1);
    assert_eq!(touches["more"], false);
    let none = ok(&client, "touches", json!({"path": "app/nothing.py"})).await;
    assert!(
        none["hint"]
            .as_str()
            .unwrap()
            .contains("no stored commit changed"),
        "an empty answer says why: {none}"
    );
    let summary = ok(&client, "summary", json!({"file": "app/users.py"})).await;
    // The slice at `return self.users[user_id].name` holds the method's line (its parameters).
    let slice = ok(&client, "slice", json!({"file": "app/users.py", "line": 5})).await;
    assert_eq!(slice["lines"], json!([4, 5]), "{slice}");
    assert_eq!(slice["function"], "getUserName", "{slice}");
    assert!(summary.to_string().contains("getUserName"), "{summary}");
    let status = ok(&client, "status", json!({})).await;
    assert_eq!(status["repos"].as_array().unwrap().len(), 1);
    assert_eq!(status["history"][0]["commits"], 1);

    // An edit on disk shows in the next answer's freshness.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    env.write("app/new.py", "def added(): pass\n");
    let found = ok(
        &client,
        "search",
        json!({"query": "getUserName", "mode": "lexical"}),
    )
    .await;
    assert_eq!(found["freshness"][0]["files_changed_since"], 1, "{found}");

    // Bad input is a tool error the agent can read, and the server goes on serving.
    let e = tool_error(&client, "search", json!({"limit": 3})).await;
    assert!(e.contains("query"), "{e}");
    let e = tool_error(&client, "search", json!({"query": "x", "limit": "many"})).await;
    assert!(e.contains("bad arguments"), "{e}");
    let e = tool_error(&client, "search", json!({"query": "x", "flavour": "red"})).await;
    assert!(e.contains("unknown field `flavour`"), "{e}");
    // A wrong type names the argument at fault.
    let e = tool_error(&client, "search", json!({"query": "x", "colour": "red"})).await;
    assert!(e.contains("colour: invalid type"), "{e}");
    let e = tool_error(&client, "summary", json!({"file": "../../etc/passwd"})).await;
    assert!(e.contains("not a file inside an indexed repo"), "{e}");
    let e = tool_error(&client, "search_commits", json!({"since": "last tuesday"})).await;
    assert!(e.contains("not a date"), "{e}");
    let e = tool_error(&client, "nope", json!({})).await;
    assert!(e.contains("no tool named"), "{e}");
    let again = ok(&client, "status", json!({})).await;
    assert!(again["repos"].is_array());
    client.cancel().await.unwrap();
}

/// A client that breaks the protocol gets JSON-RPC errors, one per request, and the server
/// goes on serving: a line that is not JSON (-32700), a request before `initialize` (-32600),
/// `tools/call` whose arguments are not an object (-32602).
/// `quarry mcp` on the sample repo (indexed lexically), its stdio piped for a raw client.
fn raw_session(env: &Env) -> std::process::Child {
    sample_repo(env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.quarry()
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn protocol_errors_are_answered_and_the_session_goes_on() {
    use std::io::Write;
    let env = Env::new();
    let mut child = raw_session(&env);
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":"getUserName"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"getUserName","mode":"lexical"}}}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Give the last call time to answer, then end the session.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON on stdout: {l} ({e})"))
        })
        .collect();
    let by_id = |id: Value| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(by_id(json!(1))["error"]["code"], -32600, "{replies:?}");
    assert!(
        by_id(json!(2))["result"]["serverInfo"]["name"] == "quarry",
        "{replies:?}"
    );
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700, "{replies:?}");
    assert_eq!(by_id(json!(3))["error"]["code"], -32602, "{replies:?}");
    let answer = by_id(json!(4));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("getUserName"),
        "the session went on: {replies:?}"
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A response sent before `initialize` is ignored (it used to silence the server), and a
/// client that pipelines many calls gets every answer: the guard holds a few with rmcp at a
/// time and reads the rest when they are answered.
#[test]
fn a_stray_response_is_ignored_and_pipelined_calls_are_all_answered() {
    use std::io::{BufRead, Write};
    let env = Env::new();
    let mut child = raw_session(&env);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (seen, replies) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(reply) = serde_json::from_str(&line) {
                let _ = seen.send(reply);
            }
        }
    });
    let mut script = vec![
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
    ];
    let calls = 40;
    for id in 100..100 + calls {
        script.push(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{"query":"getUserName {id}","mode":"lexical"}}}}}}"#
        ));
    }
    // All at once, as a pipelining client sends them.
    stdin
        .write_all((script.join("\n") + "\n").as_bytes())
        .unwrap();
    let mut answered = std::collections::BTreeSet::new();
    let mut initialized = false;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while answered.len() < calls && std::time::Instant::now() < deadline {
        let Ok(reply) = replies.recv_timeout(std::time::Duration::from_secs(1)) else {
            continue;
        };
        match reply["id"].as_i64() {
            Some(2) => initialized = reply["result"]["serverInfo"]["name"] == "quarry",
            Some(id) if id >= 100 => {
                assert!(reply["result"].is_object(), "{reply}");
                answered.insert(id);
            }
            _ => panic!("no reply to a response is expected: {reply}"),
        }
    }
    assert!(
        initialized,
        "initialize was answered after the stray response"
    );
    assert_eq!(answered.len(), calls, "answered: {answered:?}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The official MCP Inspector CLI (npm `@modelcontextprotocol/inspector`, installed by
/// scripts/install-test-clients.sh, part of ./install.sh and CI) drives `quarry mcp` as users'
/// clients do. It sends every `--tool-arg` as text (`limit=1`, `repos=["name"]`): a string
/// that parses as the declared type is accepted.
#[test]
fn the_mcp_inspector_cli_lists_and_calls_the_tools() {
    let inspector = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/clients/node_modules/.bin/mcp-inspector");
    assert!(
        inspector.exists(),
        "the MCP Inspector is not installed: run scripts/install-test-clients.sh (./install.sh does)"
    );
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let repo_name = env.json(&["status"])["repos"][0]["repo"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let inspect = |args: &[&str]| -> Value {
        let out = std::process::Command::new(&inspector)
            .arg("--cli")
            .arg(env!("CARGO_BIN_EXE_quarry"))
            .arg("--index-dir")
            .arg(env.index_dir())
            .arg("mcp")
            .args(args)
            .output()
            .expect("the inspector runs (Node.js installed?)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // The answer comes first; after a tool error the Inspector adds a line of its own.
        serde_json::Deserializer::from_str(&stdout)
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| {
                panic!(
                    "inspector {args:?} printed no JSON: {stdout}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
    };

    let tools = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"search"), "{names:?}");

    let repos = format!("repos=[\"{repo_name}\"]");
    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "search",
        "--tool-arg",
        "query=parse_config_file",
        "--tool-arg",
        "limit=1",
        "--tool-arg",
        &repos,
    ]);
    assert_ne!(called["isError"], true, "{called}");
    let answer: Value =
        serde_json::from_str(called["content"][0]["text"].as_str().unwrap()).unwrap();
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "limit=1 was read as a number: {answer}");
    assert_eq!(results[0]["symbol"], "parse_config_file", "{answer}");
    assert_eq!(results[0]["repo"], repo_name.as_str());

    // A value the schema does not allow is a tool error that says what is allowed.
    let refused = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "search",
        "--tool-arg",
        "query=parse_config_file",
        "--tool-arg",
        "mode=fuzzy",
    ]);
    assert_eq!(refused["isError"], true, "{refused}");
    let why = refused["content"][0]["text"].as_str().unwrap();
    assert!(why.contains("fuzzy") && why.contains("lexical"), "{why}");

    // Every tool declares an output schema (MCP 2025-06-18) and answers with
    // `structuredContent`; the Inspector's client validates that content against the schema
    // on each call, and the answers are checked again here with jsonschema.
    let mut answers = Vec::new();
    for (tool, args) in [
        ("search", vec!["query=parse_config_file"]),
        (
            "search",
            vec!["query=how are settings read", "explain=true"],
        ),
        ("search_commits", vec!["query=config"]),
        ("touches", vec!["path=src/config.rs"]),
        ("summary", vec!["file=src/config.rs"]),
        ("summary", vec!["file=src/config.rs", "mode=extract"]),
        ("status", vec![]),
    ] {
        let mut call = vec!["--method", "tools/call", "--tool-name", tool];
        for arg in &args {
            call.extend(["--tool-arg", arg]);
        }
        let answer = inspect(&call);
        assert_ne!(answer["isError"], true, "{tool} {args:?}: {answer}");
        let structured = answer["structuredContent"].clone();
        assert!(
            structured["freshness"].is_array(),
            "{tool} {args:?}: {answer}"
        );
        let text: Value =
            serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
        // The text is the structured answer (the Inspector prints 1.0 as 1, so keys compare).
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&text), keys(&structured), "{answer}");
        answers.push(serde_json::json!({ "tool": tool, "body": structured }));
    }
    common::check_schemas(&serde_json::json!({ "tools": tools["tools"], "answers": answers }));

    // The Inspector's portability check of the tool schemas finds no error.
    let strict = std::process::Command::new(&inspector)
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_quarry"))
        .arg("--index-dir")
        .arg(env.index_dir())
        .args(["mcp", "--method", "tools/list", "--strict"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&strict.stderr);
    assert!(strict.status.success(), "--strict: {report}");
    // Nor a portability warning: nullable values are `anyOf` branches, not `type` arrays.
    assert!(!report.contains("Warning"), "--strict: {report}");
}
