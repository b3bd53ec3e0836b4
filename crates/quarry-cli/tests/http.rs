//! `quarry serve` as a real server on loopback, driven over HTTP: every operation of its
//! OpenAPI document answers, bad requests get JSON errors with the right status, the token
//! is checked on every request, and a non-loopback address is refused without one.

mod common;

use common::git::{commit, init};
use common::{sample_repo, Env, Server};
use serde_json::{json, Value};

fn start(env: &Env, extra: &[&str]) -> Server {
    common::serve(env, extra)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// (status, JSON body)
fn get(server: &Server, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = agent().get(format!("{}{path}", server.base));
    if let Some(t) = token {
        request = request.header("Authorization", format!("Bearer {t}"));
    }
    let mut response = request.call().unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_json().unwrap())
}

fn post(server: &Server, path: &str, body: &str) -> (u16, Value) {
    let mut response = agent()
        .post(format!("{}{path}", server.base))
        .content_type("application/json")
        .send(body)
        .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_json().unwrap())
}

fn indexed_repo(env: &Env) {
    sample_repo(env);
    // Skipped by every run (binary): never counted as changed since indexing.
    env.write("assets/blob.txt", b"\x00\x01\x02 not text\n".as_slice());
    let dir = env.repo.path();
    init(dir);
    commit(dir, "Add the user store", "Alice", "2025-01-02T00:00:00Z");
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    env.ok(&["sync", env.repo_path(), "--no-embed"]);
}

#[test]
fn every_documented_operation_answers_and_bad_requests_are_json_errors() {
    let env = Env::new();
    indexed_repo(&env);
    let sha = common::git::head(env.repo.path());
    let server = start(&env, &[]);

    let (status, doc) = get(&server, "/api/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 9, "{doc}");
    // Every answer below is checked against the schema its operation documents.
    let mut answers = Vec::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let mut query = Vec::new();
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["required"] == true {
                    let name = p["name"].as_str().unwrap();
                    let value = match name {
                        "file" | "path" => "app/users.py",
                        "line" => "5",
                        "sha" => &sha[..10],
                        _ => "user",
                    };
                    query.push(format!("{name}={value}"));
                }
            }
            let target = format!("{path}?{}", query.join("&"));
            // A documented JSON body gets its required properties.
            let mut body = serde_json::Map::new();
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            for name in schema["required"].as_array().into_iter().flatten() {
                body.insert(name.as_str().unwrap().to_string(), Value::from("user"));
            }
            let body = if body.is_empty() {
                String::new()
            } else {
                Value::Object(body).to_string()
            };
            let (status, body) = match method.as_str() {
                "get" => get(&server, &target, None),
                "post" => post(&server, &target, &body),
                other => panic!("undocumented method {other}"),
            };
            assert_eq!(status, 200, "{method} {target}: {body}");
            assert!(body.is_object(), "{method} {target}");
            answers.push(json!({ "operation": format!("{method} {path}"), "body": body }));
        }
    }
    // The answers' other shapes: an explained hybrid-less search with its plan and file
    // ranking, a name's definitions, grep lines, a symbol's context and a call graph.
    for (path, target) in [
        (
            "/api/search/code",
            "/api/search/code?query=getUserName&explain=true",
        ),
        (
            "/api/search/code",
            "/api/search/code?query=def%20get&engine=grep",
        ),
        (
            "/api/summary",
            "/api/summary?file=app/users.py&mode=context&symbol=getUserName",
        ),
        (
            "/api/summary",
            "/api/summary?file=app/users.py&mode=extract",
        ),
        ("/api/touches", "/api/touches?path=app/users.py"),
        ("/api/impact", "/api/impact?name=getUserName&depth=2"),
        ("/api/file", "/api/file?path=src/config.rs&repo="),
    ] {
        let (status, body) = get(&server, target, None);
        assert_eq!(status, 200, "{target}: {body}");
        answers.push(json!({ "operation": format!("get {path}"), "body": body }));
    }
    common::check_schemas(&json!({ "openapi": doc, "answers": answers }));

    let (_, found) = get(
        &server,
        "/api/search/code?query=getUserName&mode=lexical&limit=2&repo=",
        None,
    );
    assert_eq!(found["results"][0]["path"], "app/users.py", "{found}");
    assert_eq!(found["freshness"][0]["files_changed_since"], 0);
    // `type` keeps code and documents apart.
    let (_, docs) = get(
        &server,
        "/api/search/code?query=retry%20backoff&mode=lexical&type=docs",
        None,
    );
    let docs = docs["results"].as_array().unwrap().clone();
    assert_eq!(docs[0]["path"], "docs/guide.md", "{docs:?}");
    assert!(docs.iter().all(|r| r["language"] == "markdown"), "{docs:?}");
    let (_, code) = get(
        &server,
        "/api/search/code?query=retry%20backoff&mode=lexical&type=code",
        None,
    );
    assert!(
        code["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["language"] != "markdown"),
        "{code}"
    );
    let (_, commits) = get(
        &server,
        "/api/search/commits?query=user%20store&since=2025-01-01",
        None,
    );
    assert_eq!(commits["commits"][0]["subject"], "Add the user store");
    let (_, files) = get(&server, "/api/code-files/list", None);
    let listed = files["repos"][0]["files"].as_array().unwrap();
    assert!(listed
        .iter()
        .any(|f| f["path"] == "app/users.py" && f["language"] == "python"));

    // Sync picks up an edit and says what changed; search sees it at once.
    env.write(
        "app/billing.py",
        "def charge_customer_card(amount):\n    return amount\n",
    );
    // Another process writing the index: the sync answers at once, 409, naming the holder.
    {
        use std::io::Write;
        let mut held = std::fs::OpenOptions::new()
            .write(true)
            .open(env.index_dir().join("index.lock"))
            .unwrap();
        held.lock().unwrap();
        held.set_len(0).unwrap();
        // The holder as a quarry writer writes itself down (this process holds the lock).
        let me = std::process::id();
        write!(held, "pid {me}, `quarry index big-repo`").unwrap();
        let started = std::time::Instant::now();
        let (status, busy) = post(&server, "/api/code-files/sync", "");
        assert_eq!(status, 409, "{busy}");
        assert!(
            busy["error"]
                .as_str()
                .unwrap()
                .contains(&format!("pid {me}, `quarry index big-repo`")),
            "{busy}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(3));
    }
    let (status, synced) = post(&server, "/api/code-files/sync", "");
    assert_eq!(status, 200, "{synced}");
    assert_eq!(synced["repos"][0]["added"], 1, "{synced}");
    assert_eq!(synced["repos"][0]["changes"][0]["path"], "app/billing.py");
    // Vectors for the change are made after the answer, never before it.
    let state = synced["embedding"]["state"].as_str().unwrap();
    assert!(["done", "started", "running"].contains(&state), "{synced}");
    let (_, found) = get(
        &server,
        "/api/search/code?query=charge_customer_card&mode=lexical",
        None,
    );
    assert_eq!(found["results"][0]["path"], "app/billing.py");

    // Bad requests: JSON errors with a status that says whose fault it is.
    let cases = [
        ("/api/search/code", 400, "query"),
        ("/api/search/code?query=x&limit=lots", 400, "bad parameters"),
        ("/api/search/code?query=x&limit=0", 400, "at least 1"),
        ("/api/search/commits?query=x&limit=0", 400, "at least 1"),
        ("/api/search/code?query=x&colour=red", 400, "colour"),
        (
            "/api/search/code?query=x&type=pictures",
            400,
            "bad parameters",
        ),
        (
            "/api/search/code?query=x&language=klingon",
            400,
            "unknown language",
        ),
        ("/api/search/commits?since=yesterday", 400, "not a date"),
        (
            "/api/summary?file=../../../../etc/passwd",
            400,
            "not a file inside an indexed repo",
        ),
        (
            "/api/summary?file=/etc/passwd",
            400,
            "not a file inside an indexed repo",
        ),
        (
            "/api/code-files/list?repo=nope",
            400,
            "no indexed repo named",
        ),
        (
            "/api/summary?file=app/users.py&mode=context&symbol=noSuchThing",
            400,
            "defines no `noSuchThing`",
        ),
        (
            "/api/file?path=../../../../etc/passwd",
            400,
            "not a file inside an indexed repo",
        ),
        ("/api/file?path=assets/blob.txt", 400, "not in the index"),
        (
            "/api/file?path=app/users.py&repo=nope",
            400,
            "no indexed repo",
        ),
        ("/api/commit?sha=zz", 400, "not a commit SHA"),
        ("/api/commit?sha=ffff", 400, "no stored commit"),
        ("/api/impact?name=%20", 400, "`name` is empty"),
        ("/api/nothing", 404, "no route"),
    ];
    for (target, want, says) in cases {
        let (status, body) = get(&server, target, None);
        assert_eq!(status, want, "{target}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(says),
            "{target}: {body}"
        );
    }
    // Whole issue texts are queries: 9,000 characters in a URL, more in a JSON body; past
    // the service's limit it is a bad request, not a search.
    let long = format!("/api/search/code?query={}", "a".repeat(9000));
    let (status, body) = get(&server, &long, None);
    assert_eq!(status, 200, "{body}");
    let issue = "getUserName returns the wrong user\n\nTraceback (most recent call last):\n  File \"/site-packages/app/users.py\", line 2, in getUserName\nKeyError: 'name'\n".repeat(80);
    let (status, body) = post(
        &server,
        "/api/search/code",
        &json!({"query": issue, "mode": "lexical"}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["path"], "app/users.py", "{body}");
    // `k`, as on the command line, is `limit`.
    let (status, body) = post(
        &server,
        "/api/search/code",
        &json!({"query": issue, "mode": "lexical", "k": 1}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"].as_array().unwrap().len(), 1, "{body}");
    // A body names its repos as the query string does (`repo`), or as `repos`; an unknown
    // one is the caller's mistake.
    let repo_name = env.repo.path().file_name().unwrap().to_str().unwrap();
    for (repos, status_wanted) in [
        (json!({"repo": "no-such-repo"}), 400),
        (json!({"repos": ["no-such-repo"]}), 400),
        (json!({"repo": repo_name}), 200),
        (json!({"repo": format!("{repo_name}, {repo_name}")}), 200),
        (json!({"repos": [repo_name]}), 200),
    ] {
        let mut asked = json!({"query": "getUserName returns the wrong user", "mode": "lexical"});
        asked
            .as_object_mut()
            .unwrap()
            .extend(repos.as_object().unwrap().clone());
        let (status, body) = post(&server, "/api/search/code", &asked.to_string());
        assert_eq!(status, status_wanted, "{asked}: {body}");
        if status == 400 {
            assert!(
                body["error"].as_str().unwrap().contains(repo_name),
                "{body}"
            );
        } else {
            assert_eq!(body["results"][0]["path"], "app/users.py", "{body}");
        }
    }
    let too_long = json!({"query": "word ".repeat(7000)}).to_string();
    let (status, body) = post(&server, "/api/search/code", &too_long);
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("longer than"),
        "{body}"
    );
    let huge = format!("/api/search/code?query={}", "a".repeat(20_000));
    assert_eq!(get(&server, &huge, None).0, 414);
    let (status, _) = post(&server, "/api/code-files/sync", &"x".repeat(100_000));
    assert_eq!(status, 413);
}

#[test]
fn a_token_is_checked_on_every_request_and_remote_binding_needs_one() {
    let env = Env::new();
    indexed_repo(&env);
    let server = start(&env, &["--token", "s3cret"]);
    for path in [
        "/healthz",
        "/api/status",
        "/api/openapi.json",
        "/api/file?path=app/users.py",
        "/api/impact.svg?name=getUserName",
    ] {
        let (status, body) = get(&server, path, None);
        assert_eq!(status, 401, "{path}: {body}");
        assert_eq!(get(&server, path, Some("wrong")).0, 401);
        let answer = agent()
            .get(format!("{}{path}", server.base))
            .header("Authorization", "Bearer s3cret")
            .call()
            .unwrap();
        assert_eq!(answer.status().as_u16(), 200, "{path}");
    }
    // The search page holds no data: it loads without the token, then asks for it.
    for path in ["/", "/assets/app.js", "/assets/app.css"] {
        let page = agent()
            .get(format!("{}{path}", server.base))
            .call()
            .unwrap();
        assert_eq!(page.status().as_u16(), 200, "{path}");
    }

    let refused = env.fails(&["serve", "--addr", "0.0.0.0:0"]);
    assert!(refused.contains("--allow-remote"), "{refused}");
    let refused = env.fails(&["serve", "--addr", "0.0.0.0:0", "--allow-remote"]);
    assert!(refused.contains("needs a token"), "{refused}");
}

#[test]
fn killing_the_server_in_the_middle_of_a_sync_leaves_an_index_that_opens() {
    let env = Env::new();
    indexed_repo(&env);
    let server = start(&env, &[]);
    for i in 0..400 {
        env.write(
            &format!("gen/m{i}.py"),
            format!("def function_number_{i}():\n    return {i}\n"),
        );
    }
    let base = server.base.clone();
    std::thread::spawn(move || {
        let _ = agent()
            .post(format!("{base}/api/code-files/sync"))
            .content_type("application/json")
            .send("");
    });
    std::thread::sleep(std::time::Duration::from_millis(150));
    drop(server); // SIGKILL
    let status = env.json(&["status"]);
    assert_eq!(status["repos"].as_array().unwrap().len(), 1, "{status}");
    let found = env.json(&["search", "getUserName", "--mode", "lexical"]);
    assert_eq!(found["results"][0]["path"], "app/users.py");
    // And the next sync finishes the job.
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let found = env.json(&["search", "function_number_399", "--mode", "lexical"]);
    assert_eq!(found["results"][0]["path"], "gen/m399.py");
}

/// Raw HTTP/1.1 with a chosen Host header; returns the status code.
fn status_with_host(server: &Server, host: &str) -> u16 {
    raw_status(server, &format!("Host: {host}\r\n"))
}

/// Raw HTTP/1.1 with the given header lines; returns the status code.
fn raw_status(server: &Server, headers: &str) -> u16 {
    use std::io::{Read, Write};
    let addr = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /api/status HTTP/1.1\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_loopback_server_refuses_other_host_names() {
    let env = Env::new();
    sample_repo(&env);
    env.ok(&["index", env.repo_path(), "--no-embed"]);
    let server = start(&env, &[]);
    let port = server.base.rsplit(':').next().unwrap().to_string();
    // A page on another site, its name rebound to 127.0.0.1, sends its own Host.
    assert_eq!(
        status_with_host(&server, &format!("evil.example:{port}")),
        403
    );
    assert_eq!(status_with_host(&server, "evil.example"), 403);
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "localhost".to_string(),
        format!("[::1]:{port}"),
    ] {
        assert_eq!(status_with_host(&server, &host), 200, "{host}");
    }
    // A loopback address with a name glued after it, a second Host, or none at all.
    for host in ["[::1]evil.example", "[::1]:80evil", "[::1"] {
        assert_eq!(status_with_host(&server, host), 403, "{host}");
    }
    let two = format!("Host: 127.0.0.1:{port}\r\nHost: evil.example\r\n");
    assert_eq!(raw_status(&server, &two), 400);
    assert_eq!(raw_status(&server, ""), 400);
}

/// Connections past the cap are closed, a client that never finishes its headers is dropped,
/// and searches past the turns and the queue are answered 503 with Retry-After — while the
/// server keeps answering.
#[test]
fn a_server_holds_a_bounded_number_of_connections_and_requests() {
    use std::io::{Read, Write};
    let env = Env::new();
    indexed_repo(&env);
    let server = start(
        &env,
        &[
            "--max-connections",
            "4",
            "--header-timeout",
            "0.5",
            "--max-concurrent",
            "1",
        ],
    );
    let addr = server.base.trim_start_matches("http://").to_string();
    let raw = |request: &[u8]| -> String {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let _ = s.write_all(request);
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    };
    let probe = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    // Four slow clients that have just come hold every slot, their headers unfinished: the
    // oldest gives way to a fifth at once (1,100 idle connections opened in a burst had left
    // new clients 503 while every one was within its grace).
    let slow: Vec<_> = (0..4)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /api/status HTTP/1.1\r\nHo").unwrap();
            s
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let answer = raw(probe);
    assert!(answer.starts_with("HTTP/1.1 200"), "over the cap: {answer}");
    // Idle a moment, they give way to a new request, which is answered.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        raw(probe).starts_with("HTTP/1.1 200"),
        "an idle one gave way"
    );
    // The slow ones are dropped (given way, or after the header timeout).
    for mut s in slow {
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut rest = Vec::new();
        let started = std::time::Instant::now();
        let _ = s.read_to_end(&mut rest);
        assert!(started.elapsed() < std::time::Duration::from_secs(4));
    }
    assert_eq!(get(&server, "/healthz", None).0, 200);
    // Bodies trickled a byte at a time fill every slot: stalled, they give way too, and a
    // trickled body is answered 408 when its time is up.
    let trickling: Vec<_> = (0..4)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.write_all(b"POST /api/search/code HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
                .unwrap();
            s
        })
        .collect();
    // Reading their bodies and not yet stalled, nothing can give way: a new client is told
    // to come back (503, Retry-After), not closed bare. (Half the header timeout, which bounds
    // a body too: time for a loaded server to have read their headers, well before their
    // bodies' time is up and they are answered 408. At the whole timeout the probe raced
    // those answers, and lost once accepting a connection no longer read /proc/net/tcp.)
    std::thread::sleep(std::time::Duration::from_millis(250));
    let answer = raw(probe);
    assert!(
        answer.starts_with("HTTP/1.1 503") && answer.contains("Retry-After: 1\r\n"),
        "over the cap: {answer}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(
        raw(probe).starts_with("HTTP/1.1 200"),
        "a stalled one gave way"
    );
    let answered: Vec<String> = trickling
        .into_iter()
        .map(|mut s| {
            s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
            String::from_utf8_lossy(&rest).into_owned()
        })
        .collect();
    assert!(
        answered.iter().any(|a| a.starts_with("HTTP/1.1 408")),
        "{answered:?}"
    );

    // A flood of searches, on a server with room for the connections and one turn at work:
    // each gets 200 or 503 with Retry-After (64 may wait), none waits forever.
    drop(server);
    let server = start(&env, &["--max-concurrent", "1"]);
    let base = server.base.clone();
    let flood: Vec<_> = (0..120)
        .map(|i| {
            let base = base.clone();
            std::thread::spawn(move || {
                let response = agent()
                    .get(format!(
                        "{base}/api/search/code?query=user%20name%20{i}&mode=lexical"
                    ))
                    .call()
                    .unwrap();
                let retry = response.headers().get("retry-after").is_some();
                (response.status().as_u16(), retry)
            })
        })
        .collect();
    let outcomes: Vec<(u16, bool)> = flood.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        outcomes
            .iter()
            .all(|(status, retry)| *status == 200 || (*status == 503 && *retry)),
        "{outcomes:?}"
    );
    assert!(outcomes.iter().any(|(status, _)| *status == 200));
    assert_eq!(get(&server, "/api/status", None).0, 200);
}

#[test]
fn code_search_takes_rerank_and_says_how_it_went() {
    let env = Env::new();
    env.write(
        "net/one.py",
        "def retry_connect(host):\n    return dial(host)\n",
    );
    env.write(
        "net/two.py",
        "def retry_upload(blob):\n    return send(blob)\n",
    );
    indexed_repo(&env);
    // A "model" that always puts the second candidate first.
    env.ok(&["config", "set", "llm.command", "echo 'chunk 2 first'"]);
    let server = start(&env, &[]);
    let query = "/api/search/code?query=retry&mode=lexical";
    let (status, first) = get(&server, query, None);
    assert_eq!(status, 200, "{first}");
    assert!(first.get("rerank").is_none());
    let ids = result_ids(&first);
    assert!(ids.len() >= 2, "{first}");

    let (status, json) = get(&server, &format!("{query}&rerank=true&explain=1"), None);
    assert_eq!(status, 200, "{json}");
    assert!(
        json["plan"].is_object(),
        "explain=1 is read as a switch: {json}"
    );
    assert_eq!(json["rerank"]["applied"], true, "{json}");
    assert_eq!(json["rerank"]["provider"], "command:echo 'chunk 2 first'");
    assert_eq!(json["results"][0]["id"], ids[1]);
    assert_eq!(json["results"][1]["id"], ids[0]);

    // A broken command: the first-stage order, a note, still 200.
    env.ok(&["config", "set", "llm.command", "exit 9"]);
    let (status, json) = post(
        &server,
        "/api/search/code",
        r#"{"query": "retry", "mode": "lexical", "rerank": true}"#,
    );
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["rerank"]["applied"], false);
    assert_eq!(result_ids(&json), ids);

    // Agentic search, offline: its rounds are reported; a bad mode is a 400 naming the choices.
    let (status, json) = get(&server, &format!("{query}&agentic=offline"), None);
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["agentic"]["provider"], "offline", "{json}");
    assert!(json["agentic"]["rounds"].is_array(), "{json}");
    let (status, json) = get(&server, &format!("{query}&agentic=sometimes"), None);
    assert_eq!(status, 400, "{json}");
    assert!(json.to_string().contains("offline"), "{json}");
}

#[test]
fn code_search_routes_by_the_query_or_by_the_engine_asked() {
    let env = Env::new();
    env.write(
        "net/one.py",
        "def retry_connect(host):\n    return dial(host, timeout=30)\n",
    );
    env.write(
        "net/two.py",
        "def retry_upload(blob):\n    return send(blob, timeout=30)\n",
    );
    env.write(
        "net/three.py",
        "def probe():\n    \"\"\"Checks the link.\n    flaky_uplink stays quiet here.\n    \"\"\"\n    return 1\n",
    );
    indexed_repo(&env);
    let server = start(&env, &[]);
    // A regex is grep's: matching lines, and the route says so.
    let (status, json) = post(
        &server,
        "/api/search/code",
        r#"{"query": "def retry_\\w+\\(", "explain": true}"#,
    );
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["route"]["class"], "regex", "{json}");
    assert_eq!(json["route"]["route"], "grep_regex", "{json}");
    let lines: Vec<(String, u64)> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["start_line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        vec![("net/one.py".to_string(), 1), ("net/two.py".to_string(), 1)]
    );
    // A structural pattern, asked for by name with its language.
    let (status, json) = post(
        &server,
        "/api/search/code",
        r#"{"query": "send($B, timeout=$T)", "engine": "structural", "language": "python"}"#,
    );
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["results"][0]["path"], "net/two.py", "{json}");
    assert_eq!(json["results"][0]["kind"], "structural match", "{json}");
    // An identifier: its definition first, with why.
    let (_, json) = get(&server, "/api/search/code?query=retry_upload", None);
    assert_eq!(json["route"]["route"], "symbol", "{json}");
    assert_eq!(json["results"][0]["symbol"], "retry_upload", "{json}");
    assert!(
        json["results"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("definition"),
        "{json}"
    );
    // Without mentions: the definitions alone.
    let (_, alone) = get(
        &server,
        "/api/search/code?query=retry_upload&mentions=false",
        None,
    );
    let results = alone["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{alone}");
    assert!(
        results
            .iter()
            .all(|r| r["reason"].as_str().unwrap().starts_with("definition")),
        "{alone}"
    );
    assert_eq!(results[0], json["results"][0], "{alone}");
    // Asked for colour (the page's snippets), matched lines carry the file view's spans,
    // coloured in the context of the whole result: a docstring's line is a string.
    let (_, json) = get(
        &server,
        "/api/search/code?query=retry_upload&colour=true",
        None,
    );
    let line = &json["results"][0]["matched_lines"][0];
    let spans = line["spans"].as_array().expect("spans when asked");
    let joined: String = spans.iter().map(|s| s["text"].as_str().unwrap()).collect();
    assert_eq!(joined, line["text"].as_str().unwrap(), "{line}");
    assert_eq!(spans[0]["text"], "def", "{line}");
    assert_eq!(spans[0]["class"], "keyword", "{line}");
    let (_, json) = get(
        &server,
        "/api/search/code?query=flaky_uplink&colour=true",
        None,
    );
    let lines = json["results"][0]["matched_lines"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(lines.len(), 1, "{json}");
    assert_eq!(lines[0]["line"], 3, "{json}");
    for span in lines[0]["spans"].as_array().unwrap() {
        assert_eq!(span["class"], "string", "{json}");
    }
    // Not asked, no spans: an agent reads the text alone.
    let (_, json) = get(&server, "/api/search/code?query=retry_upload", None);
    assert!(
        json["results"][0]["matched_lines"][0]
            .get("spans")
            .is_none(),
        "{json}"
    );
    // Filters hold on the exact routes: grep and the symbol table answer only from net/one.py.
    for query in ["timeout%3D30", "retry_upload", "def%20retry_%5Cw%2B%5C%28"] {
        let (status, json) = get(
            &server,
            &format!("/api/search/code?query={query}&path=net/one.py"),
            None,
        );
        assert_eq!(status, 200, "{json}");
        for r in json["results"].as_array().unwrap() {
            assert_eq!(r["path"], "net/one.py", "{query}: {json}");
        }
    }
    // An engine that does not exist is a 400 naming the choices.
    let (status, json) = get(&server, "/api/search/code?query=x&engine=telepathy", None);
    assert_eq!(status, 400, "{json}");
    assert!(json.to_string().contains("structural"), "{json}");
}

fn result_ids(json: &Value) -> Vec<Value> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect()
}

/// The server keeps its readers open between requests (engine pool.rs): an index updated in
/// place, and one rebuilt into a new file, are both what the next answer reads.
#[test]
fn a_server_reads_the_index_as_it_is_now_updated_or_rebuilt() {
    let env = Env::new();
    env.write("src/alpha.py", "def alpha_marker():\n    return 1\n");
    env.ok(&["index", env.repo_path()]);
    let server = start(&env, &[]);
    let found = |q: &str| -> Vec<String> {
        let (status, body) = get(
            &server,
            &format!("/api/search/code?query={q}&engine=literal"),
            None,
        );
        assert_eq!(status, 200, "{body}");
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(found("alpha_marker"), ["src/alpha.py"]);
    // Updated in place: the same file, a new file in it.
    env.write("src/beta.py", "def beta_marker():\n    return 2\n");
    env.ok(&["index", env.repo_path()]);
    assert_eq!(found("beta_marker"), ["src/beta.py"]);
    // Rebuilt: a new index file; the readers opened on the old one are not lent again.
    std::fs::remove_file(env.repo.path().join("src/alpha.py")).unwrap();
    env.write("src/gamma.py", "def gamma_marker():\n    return 3\n");
    env.ok(&["index", "--rebuild", env.repo_path()]);
    assert_eq!(found("gamma_marker"), ["src/gamma.py"]);
    let (_, status) = get(&server, "/api/status", None);
    assert_eq!(status["repos"][0]["files"], 2, "{status}");
    // A literal search reads the files as they are on disk (the server keeps their list and
    // states, kept true by inotify): an edit not indexed yet is seen at once, both ways.
    let gamma = env.repo.path().join("src/gamma.py");
    std::fs::write(&gamma, "def gamma_marker():\n    return 'delta_marker'\n").unwrap();
    assert_eq!(found("delta_marker"), ["src/gamma.py"]);
    std::fs::write(&gamma, "def gamma_marker():\n    return 3\n").unwrap();
    let (_, body) = get(
        &server,
        "/api/search/code?query=delta_marker&engine=literal",
        None,
    );
    assert!(
        body["route"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("the exact engine found nothing")),
        "{body}"
    );
}
