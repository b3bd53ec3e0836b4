//! `quarry serve` is a door into the user's files: it serves only what the index holds, answers
//! only the user who started it (other local users need the token), takes writes from no
//! other origin, and answers no request line naming a foreign host. Each attack here ran
//! against a real server and succeeded before its fix (issue 63's campaign).

mod common;

use common::git::{commit, init};
use common::{sample_repo, Env, Server};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    let mut response = agent()
        .get(format!("{}{path}", server.base))
        .call()
        .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_json().unwrap())
}

/// A repo with a secret beside its code: `.env` (mode 600, hidden), an ignored file, git's
/// own files.
fn repo_with_secrets(env: &Env) {
    sample_repo(env);
    env.write(".env", "SECRET=hunter2\n");
    env.write(".gitignore", "local.py\n");
    env.write("local.py", "PASSWORD = 'hunter2'\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let env_file = env.repo.path().join(".env");
        std::fs::set_permissions(env_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    init(env.repo.path());
    commit(env.repo.path(), "Start", "Alice", "2025-01-02T00:00:00Z");
    env.ok(&["index", env.repo_path(), "--no-embed", "--name", "repo"]);
}

#[test]
fn only_files_the_index_holds_are_served() {
    let env = Env::new();
    repo_with_secrets(&env);
    let server = common::serve(&env, &[]);
    let (status, view) = get(&server, "/api/file?path=app/users.py");
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["path"], "app/users.py", "{view}");
    for path in [".env", ".git/config", "local.py", ".git/HEAD", ".gitignore"] {
        for route in ["/api/file?path=", "/api/summary?file="] {
            let (status, answer) = get(&server, &format!("{route}{path}"));
            assert_eq!(status, 400, "{route}{path}: {answer}");
            let text = answer.to_string();
            assert!(!text.contains("hunter2"), "{route}{path}: {text}");
            assert!(text.contains("not in the index"), "{route}{path}: {text}");
        }
    }
    // A link inside the repo pointing at the secret is the secret.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(".env", env.repo.path().join("settings.txt")).unwrap();
        let (status, answer) = get(&server, "/api/file?path=settings.txt");
        assert_eq!(status, 400, "{answer}");
        assert!(!answer.to_string().contains("hunter2"), "{answer}");
    }
    // A new file is served once indexed.
    env.write("app/new.py", "def fresh():\n    return 1\n");
    assert_eq!(get(&server, "/api/file?path=app/new.py").0, 400);
    env.ok(&["index", env.repo_path(), "--no-embed", "--name", "repo"]);
    assert_eq!(get(&server, "/api/file?path=app/new.py").0, 200);
}

/// `curl` as another local user (`runuser -u nobody`): the HTTP status it got.
fn status_as_nobody(url: &str, token: Option<&str>) -> Option<u16> {
    let root = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    if !matches!(root, Ok(true)) || Command::new("runuser").arg("--help").output().is_err() {
        return None;
    }
    let mut curl = Command::new("runuser");
    curl.args(["-u", "nobody", "--", "curl", "-s", "-o", "/dev/null"]);
    curl.args(["-w", "%{http_code}"]);
    if let Some(token) = token {
        curl.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = curl.arg(url).output().expect("runuser runs curl");
    Some(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap())
}

#[test]
fn another_local_user_is_answered_only_with_the_token() {
    let env = Env::new();
    repo_with_secrets(&env);
    let server = common::serve(&env, &[]);
    let url = format!("{}/api/search/code?query=UserStore", server.base);
    // The serving user is answered.
    assert_eq!(agent().get(&url).call().unwrap().status().as_u16(), 200);
    let Some(status) = status_as_nobody(&url, None) else {
        eprintln!("skipped: another user can be tried only as root with runuser");
        return;
    };
    assert_eq!(status, 403, "another user read the index");
    assert_eq!(
        status_as_nobody(&format!("{}/api/file?path=app/users.py", server.base), None),
        Some(403)
    );
    drop(server);
    // Shared on purpose: the token opens it to whoever holds it.
    let server = common::serve(&env, &["--token", "s3cret-token"]);
    let url = format!("{}/api/search/code?query=UserStore", server.base);
    assert_eq!(status_as_nobody(&url, Some("s3cret-token")), Some(200));
    assert_eq!(status_as_nobody(&url, None), Some(401));
}

/// Raw HTTP/1.1: the status line's code.
fn raw(server: &Server, request: &str) -> u16 {
    use std::io::{Read, Write};
    let addr = server.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// What `/api/code-files/list` holds of the repo.
fn listed(server: &Server) -> Vec<String> {
    let (_, list) = get(server, "/api/code-files/list");
    list["repos"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn writes_come_only_from_this_origin_with_a_json_body() {
    let env = Env::new();
    repo_with_secrets(&env);
    let server = common::serve(&env, &[]);
    let host = server.base.trim_start_matches("http://").to_string();
    env.write("app/added.py", "def added():\n    return 2\n");
    let sync = |headers: &str| {
        raw(
            &server,
            &format!("POST /api/code-files/sync HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: 15\r\nConnection: close\r\n\r\n{{\"repo\":\"repo\"}}"),
        )
    };
    // What a page on another site can send without asking: a text/plain body.
    assert_eq!(sync("Content-Type: text/plain\r\n"), 415);
    assert_eq!(sync(""), 415);
    let foreign = "Content-Type: application/json\r\nOrigin: http://evil.example\r\n";
    assert_eq!(sync(foreign), 403);
    let site = "Content-Type: application/json\r\nSec-Fetch-Site: cross-site\r\n";
    assert_eq!(sync(site), 403);
    assert_eq!(sync("Content-Type: text/plain\r\nOrigin: null\r\n"), 403);
    assert!(!listed(&server).contains(&"app/added.py".to_string()));
    // The request line naming another host is not this server's request.
    let absolute = format!(
        "GET http://evil.example/api/status HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(&server, &absolute), 403);
    let own = format!(
        "GET http://{host}/api/status HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(&server, &own), 200);
    // The page's own origin, and a local client, write.
    let own_origin = format!("Content-Type: application/json\r\nOrigin: http://{host}\r\n");
    assert_eq!(sync(&own_origin), 200);
    assert!(listed(&server).contains(&"app/added.py".to_string()));
}

/// The campaign's attack itself: a page on another origin, in chromium, posts a sync as
/// `no-cors` text (and as a form, and a beacon); the index must not change. The same
/// request from the server's own page, with a JSON body, does sync.
#[test]
fn a_page_on_another_origin_cannot_start_a_sync_in_a_real_browser() {
    let env = Env::new();
    repo_with_secrets(&env);
    let server = common::serve(&env, &[]);
    env.write("app/added.py", "def added():\n    return 2\n");
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/cross_origin.mjs");
    let run = |which: &str| {
        let out = Command::new("node")
            .arg(&script)
            .arg(&server.base)
            .arg(which)
            .env("QUARRY_TEST_CLIENTS", &clients)
            .output()
            .expect("node runs (scripts/install-test-clients.sh installs it)");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        stdout
    };
    let foreign = run("foreign");
    assert!(foreign.contains("\"sent\":3"), "{foreign}");
    assert!(
        !listed(&server).contains(&"app/added.py".to_string()),
        "a foreign page synced: {foreign}"
    );
    let own = run("own");
    assert!(own.contains("\"status\":200"), "{own}");
    assert!(listed(&server).contains(&"app/added.py".to_string()));
}
