//! The providers against real processes and a real HTTP server on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use quarry_llm::{CommandModel, EndpointModel, LanguageModel};

fn command(cmd: &str, timeout_ms: u64) -> CommandModel {
    CommandModel::new(cmd, Duration::from_millis(timeout_ms)).unwrap()
}

fn error(model: &dyn LanguageModel, prompt: &str) -> String {
    format!("{:#}", model.complete(prompt).unwrap_err())
}

#[test]
fn a_command_reads_the_prompt_on_stdin_and_answers_on_stdout() {
    let model = command("tr a-z A-Z", 5_000);
    assert_eq!(model.describe(), "command:tr a-z A-Z");
    assert_eq!(model.complete("rank 3, 1").unwrap(), "RANK 3, 1");
    // A prompt far larger than a pipe's buffer, to a command that never reads it: no deadlock.
    let big = "x".repeat(4 << 20);
    assert_eq!(command("echo 2", 5_000).complete(&big).unwrap().trim(), "2");
    // ... and to one that reads all of it.
    let n = command("wc -c", 5_000).complete(&big).unwrap();
    assert_eq!(n.trim(), (4 << 20).to_string());
}

#[test]
fn command_failures_say_what_to_fix() {
    let err = error(&command("quarry-no-such-llm-command --flag", 5_000), "p");
    assert!(
        err.contains("not found") && err.contains("llm.command"),
        "{err}"
    );
    let err = error(&command("echo 'model overloaded' >&2; exit 3", 5_000), "p");
    assert!(
        err.contains("failed") && err.contains("model overloaded"),
        "{err}"
    );
    let err = error(&command("true", 5_000), "p");
    assert!(err.contains("answered nothing"), "{err}");
    assert!(CommandModel::new("  ", Duration::from_secs(1)).is_err());
}

#[test]
fn a_slow_command_is_killed_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("late");
    // The child of the shell outlives a plain kill of the shell; the process group does not.
    let cmd = format!("(sleep 2; touch {}) & sleep 30", marker.display());
    let started = Instant::now();
    let err = error(&command(&cmd, 300), "p");
    assert!(
        err.contains("no answer within") && err.contains("llm.timeout_s"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(2_500));
    assert!(!marker.exists(), "the command's child was not killed");
}

/// A one-request chat server: answers `status` and `body`, and returns the request it got.
fn serve_once(status: &'static str, body: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let mut request = vec![0u8; length];
        reader.read_exact(&mut request).unwrap();
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        head + &String::from_utf8(request).unwrap()
    });
    (url, handle)
}

#[test]
fn an_endpoint_speaks_the_chat_protocol() {
    let answer = serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": "2, 1" } }]
    });
    let (url, server) = serve_once("200 OK", answer.to_string());
    let model = EndpointModel::new(
        &url,
        "tiny-ranker",
        Some("sk-test".into()),
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(
        model.describe(),
        format!("endpoint:{url}/chat/completions#tiny-ranker")
    );
    assert_eq!(model.complete("which chunk?").unwrap(), "2, 1");
    let request = server.join().unwrap();
    assert!(
        request.starts_with("POST /v1/chat/completions"),
        "{request}"
    );
    assert!(request
        .to_ascii_lowercase()
        .contains("authorization: bearer sk-test"));
    let body: serde_json::Value =
        serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["model"], "tiny-ranker");
    assert_eq!(body["messages"][0]["content"], "which chunk?");
    assert_eq!(body["temperature"], 0);
}

#[test]
fn endpoint_failures_are_errors_naming_the_endpoint() {
    let (url, server) = serve_once("500 Internal Server Error", "{\"error\":\"no GPU\"}".into());
    let model = EndpointModel::new(&url, "m", None, Duration::from_secs(5)).unwrap();
    let err = error(&model, "p");
    assert!(
        err.contains("500") && err.contains("no GPU") && err.contains(&url),
        "{err}"
    );
    server.join().unwrap();

    let (url, server) = serve_once("200 OK", "<html>not json</html>".into());
    let err = error(
        &EndpointModel::new(&url, "m", None, Duration::from_secs(5)).unwrap(),
        "p",
    );
    assert!(err.contains("not a chat completion"), "{err}");
    server.join().unwrap();

    // Nothing listens here: a quick, clear failure.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let started = Instant::now();
    let err = error(
        &EndpointModel::new(&url, "m", None, Duration::from_secs(5)).unwrap(),
        "p",
    );
    assert!(
        err.contains("did not answer") && err.contains(&url),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    assert!(EndpointModel::new("localhost:11434", "m", None, Duration::from_secs(1)).is_err());
    assert!(EndpointModel::new(
        "http://localhost:11434/v1",
        " ",
        None,
        Duration::from_secs(1)
    )
    .is_err());
}
