//! The OpenAI-compatible endpoint option, against a real HTTP server on loopback that speaks
//! the embeddings protocol (`POST /v1/embeddings`). Its vectors are hashed bags of words, so
//! which chunk is nearest is known from the words alone. Then the server goes away, and then
//! answers garbage: quarry warns, answers lexically, keeps what it has, and never hangs.

mod common;

use common::{result_paths as paths, sample_repo, Env};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIMS: usize = 64;

/// Bag-of-words vector: each lower-cased word (split at non-alphanumerics and camelCase)
/// adds 1 at its hash.
fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMS];
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase();
        spaced.push(if c.is_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            ' '
        });
    }
    for word in spaced.split_whitespace() {
        let h = word.bytes().fold(1469598103934665603u64, |h, b| {
            (h ^ b as u64).wrapping_mul(1099511628211)
        });
        v[(h % DIMS as u64) as usize] += 1.0;
    }
    v
}

struct FakeEndpoint {
    port: u16,
    requests: Arc<AtomicUsize>,
    authorized: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeEndpoint {
    /// `garbage`: answer 200 with a body that is not an embeddings response.
    fn start(garbage: bool) -> FakeEndpoint {
        Self::start_with(garbage, Duration::ZERO)
    }

    /// Each request on a thread of its own; a request of more than one text is answered
    /// after `slow` (a batch takes a while, a probe does not).
    fn start_with(garbage: bool, slow: Duration) -> FakeEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let authorized = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, a, s) = (requests.clone(), authorized.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        r.fetch_add(1, Ordering::SeqCst);
                        let a = a.clone();
                        std::thread::spawn(move || serve(stream, garbage, &a, slow));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeEndpoint {
            port,
            requests,
            authorized,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for FakeEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// Answers one request, counting it in `authorized` when it carried the expected bearer token
/// (before answering: a client may check the count as soon as it has the answer).
fn serve(stream: TcpStream, garbage: bool, authorized_count: &AtomicUsize, slow: Duration) {
    stream.set_nonblocking(false).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let (mut length, mut authorized) = (0usize, false);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap(),
            "authorization" => authorized = value.trim() == "Bearer sk-test",
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let (status, answer) = if !request_line.starts_with("POST /v1/embeddings ") {
        (
            "404 Not Found",
            serde_json::json!({"error": "no such route"}),
        )
    } else if garbage {
        (
            "200 OK",
            serde_json::json!({"object": "list", "nope": true}),
        )
    } else {
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(request["model"], "bow-64");
        if request["input"].as_array().is_some_and(|i| i.len() > 1) {
            std::thread::sleep(slow);
        }
        let data: Vec<serde_json::Value> = request["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"index": i, "embedding": bag_of_words(t.as_str().unwrap())}))
            .collect();
        (
            "200 OK",
            serde_json::json!({"object": "list", "data": data, "model": "bow-64"}),
        )
    };
    if authorized {
        authorized_count.fetch_add(1, Ordering::SeqCst);
    }
    let text = answer.to_string();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )
    .unwrap();
}

#[test]
fn endpoint_embeds_searches_and_falls_back_to_lexical_when_down() {
    let env = Env::new();
    sample_repo(&env);
    let server = FakeEndpoint::start(false);
    env.ok(&["config", "set", "embed.endpoint", &server.url()]);
    env.ok(&["config", "set", "embed.model", "bow-64"]);
    env.ok(&["config", "set", "embed.api_key_env", "QUARRY_TEST_KEY"]);
    env.ok(&["config", "set", "embed.timeout_s", "2"]);
    assert_eq!(env.ok(&["config", "get", "embed.model"]).trim(), "bow-64");

    let report = env.json(&["index", env.repo_path()]);
    assert_eq!(
        report["embedding"]["model"], "openai-api:bow-64",
        "{report}"
    );
    let coverage = &report["embedding"]["coverage"];
    assert_eq!(coverage["embedded"], coverage["total"]);
    assert!(
        server.requests.load(Ordering::SeqCst) >= 2,
        "probe and batches"
    );

    // The query shares words only with the retry policy section and the upload queue.
    let json = env.json(&[
        "search",
        "exponential backoff retry",
        "--mode",
        "semantic",
        "-k",
        "1",
    ]);
    assert_eq!(json["mode"], "semantic");
    assert_eq!(paths(&json), ["docs/guide.md"], "{json}");
    let models = env.json(&["model", "list"]);
    let active: Vec<&serde_json::Value> = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["active"] == true)
        .collect();
    assert_eq!(active.len(), 1, "{models}");
    assert_eq!(active[0]["kind"], "endpoint");
    assert_eq!(models["index"]["model"], "openai-api:bow-64");

    // The key comes from the named environment variable, never from the settings file.
    let before = server.authorized.load(Ordering::SeqCst);
    let out = env
        .quarry()
        .args(["search", "upload queue", "--mode", "hybrid", "--json"])
        .env("QUARRY_TEST_KEY", "sk-test")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(server.authorized.load(Ordering::SeqCst), before + 1);
    let config_text = std::fs::read_to_string(env.index_dir().join("config.toml")).unwrap();
    assert!(!config_text.contains("sk-test"));

    // The endpoint goes away: searches answer lexically with a warning, quickly.
    drop(server);
    let started = Instant::now();
    let out = env.run(&["search", "exponential backoff retry", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "lexical");
    assert!(
        paths(&json).contains(&"docs/guide.md".to_string()),
        "{json}"
    );
    let warning = json["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("127.0.0.1") && warning.contains("lexically"),
        "{warning}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Indexing with the endpoint down: the lexical index is updated, vectors stay as they
    // were, and the run succeeds with a note.
    env.write(
        "app/billing.py",
        "def charge_invoice(invoice):\n    return invoice.total\n",
    );
    let out = env.run(&["index", env.repo_path(), "--json"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("indexing lexically only"));
    let json = env.json(&["search", "charge_invoice", "--mode", "lexical"]);
    assert_eq!(paths(&json)[0], "app/billing.py");
    let status = env.json(&["status"]);
    let (embedded, total) = (
        status["embedding"]["embedded"].as_u64().unwrap(),
        status["embedding"]["total"].as_u64().unwrap(),
    );
    assert!(embedded > 0 && embedded < total, "{status}");

    // An endpoint answering garbage: the same — a clear note, nothing lost.
    let garbage = FakeEndpoint::start(true);
    env.ok(&["config", "set", "embed.endpoint", &garbage.url()]);
    let out = env.run(&["index", env.repo_path()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not an OpenAI embeddings response"),
        "{stderr}"
    );
    let json = env.json(&["search", "charge invoice"]);
    assert_eq!(paths(&json)[0], "app/billing.py");
}

#[test]
fn config_and_model_commands_check_what_they_write() {
    let env = Env::new();
    let err = env.fails(&["config", "set", "search.max_per_file", "none"]);
    assert!(err.contains("whole number"), "{err}");
    let err = env.fails(&["config", "set", "embed.colour", "red"]);
    assert!(
        err.contains("unknown setting") && err.contains("embed.endpoint"),
        "{err}"
    );
    env.ok(&["config", "set", "search.max_per_file", "2"]);
    let list = env.json(&["config", "list"]);
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "search.max_per_file")
        .unwrap();
    assert_eq!(entry["value"], "2");
    assert_eq!(entry["is_set"], true);
    env.ok(&["config", "unset", "search.max_per_file"]);
    assert_eq!(
        env.ok(&["config", "get", "search.max_per_file"]).trim(),
        "3"
    );

    // `model use`: a folder that is not a model is refused and nothing is written.
    let err = env.fails(&["model", "use", env.repo_path()]);
    assert!(err.contains("config.json"), "{err}");
    assert_eq!(
        env.json(&["config", "get", "embed.model_dir"])["is_set"],
        false
    );
    let err = env.fails(&["model", "use", "endpoint"]);
    assert!(err.contains("embed.endpoint"), "{err}");
    // Lexical only, then back to the local model (installed by the test setup).
    env.ok(&["model", "use", "none"]);
    assert_eq!(env.ok(&["config", "get", "embed.provider"]).trim(), "none");
    sample_repo(&env);
    let report = env.json(&["index", env.repo_path()]);
    assert!(report["embedding"].is_null(), "{report}");
    assert!(env
        .fails(&["search", "x", "--mode", "semantic"])
        .contains("no vectors"));
    let used = env.json(&["model", "use", "all-MiniLM-L6-v2"]);
    assert!(
        used["model"]
            .as_str()
            .unwrap()
            .starts_with("all-MiniLM-L6-v2/"),
        "{used}"
    );
    let list = env.json(&["model", "list"]);
    assert_eq!(list["models"][0]["active"], true, "{list}");
    assert_eq!(list["models"][0]["available"], true, "{list}");

    // A broken settings file is an error naming it, for every command that reads it.
    std::fs::write(env.index_dir().join("config.toml"), "[search\n").unwrap();
    let err = env.fails(&["search", "x"]);
    assert!(err.contains("config.toml"), "{err}");
}

/// Two `quarry index` runs of one repo at once: the second waits for the first's embedding,
/// says so, and then finds nothing left to embed (both had embedded everything).
#[test]
fn a_second_run_waits_for_the_one_embedding_and_embeds_only_what_is_left() {
    let env = Env::new();
    sample_repo(&env);
    let server = FakeEndpoint::start_with(false, Duration::from_secs(3));
    env.ok(&["config", "set", "embed.endpoint", &server.url()]);
    env.ok(&["config", "set", "embed.model", "bow-64"]);
    let index = || {
        env.quarry()
            .args(["index", env.repo_path(), "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = index();
    // The first run's batch is at the server (after its probe): it embeds now.
    let started = Instant::now();
    while server.requests.load(Ordering::SeqCst) < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "no batch came");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = index().wait_with_output().unwrap();
    let first = first.wait_with_output().unwrap();
    let report = |out: &std::process::Output| -> serde_json::Value {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (first, second_report) = (report(&first), report(&second));
    let total = first["embedding"]["coverage"]["total"].as_u64().unwrap();
    assert_eq!(
        first["embedding"]["embedded"].as_u64(),
        Some(total),
        "{first}"
    );
    assert_eq!(second_report["embedding"]["embedded"], 0, "{second_report}");
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains("waiting for another quarry process that is embedding"),
        "{said}"
    );
}
