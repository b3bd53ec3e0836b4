//! A real OpenSearch for the test suite: OpenSearch 2.19.1 with the k-NN plugin, from Maven
//! Central (scripts/install-test-opensearch.sh). The first test that asks for it starts one
//! node ([`server`]: a fresh data folder under the temp dir, loopback ports picked free, a heap
//! of 512 MB); the tests that distribute an index ask for a three-node cluster ([`cluster`]).
//! Nodes stop when the test process ends, whatever way it ends: each is started with a
//! parent-death signal tied to a thread that lives as long as the process (as
//! quarry-test-postgres does). Each test names its indexes with a prefix of its own
//! ([`index_prefix`], [`store_url`]), so tests share a node without meeting.
//!
//! OpenSearch refuses to run as root, so as root the nodes run as the system user
//! `quarry-search` the install script creates (through `setpriv`). A missing install is a
//! panic that says what to run: these tests never skip.
//!
//! [`tls_front`] (tls.rs) puts HTTPS with a private CA and basic auth in front of the node, for
//! the tests of a secured cluster.

mod tls;
pub use tls::{tls_front, TlsFront};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The user the nodes run as when the tests run as root.
const SERVER_USER: &str = "quarry-search";
/// Every node's JVM: a heap small enough for four nodes beside the suite on a laptop, the
/// serial collector (no GC threads fighting the tests for two cores) and the client compiler
/// only (a node starts in about half the time; its searches are small).
const JAVA_OPTS: &str = "-Xms512m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1";

/// One running node (of the single server or of a cluster).
pub struct Node {
    pub name: String,
    pub http_port: u16,
    pub transport_port: u16,
    /// The node's folder: its config, data and logs.
    pub dir: PathBuf,
    /// The settings it is started with (`-E...`), kept for a restart.
    settings: Vec<String>,
    /// The process id of the node's JVM while it runs.
    pid: Mutex<Option<u32>>,
}

impl Node {
    /// The node's HTTP address, `http://127.0.0.1:PORT`.
    pub fn http(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    /// The JVM's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        *self.pid.lock().unwrap()
    }

    /// Kills the node at once (SIGKILL: no shutdown, connections cut) and waits until the
    /// process is gone.
    pub fn kill(&self) {
        let Some(pid) = self.pid.lock().unwrap().take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the node again on its own data (after [`Node::kill`]) and waits until it
    /// answers HTTP.
    pub fn restart(&self) {
        let home = install().unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
        let pid = launch(&home, &self.dir, &self.settings)
            .unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
        *self.pid.lock().unwrap() = Some(pid);
        wait_until_answering(self).unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
    }

    /// The node's log so far, after what its launcher printed (for failure messages).
    pub fn log(&self) -> String {
        let logs = self.dir.join("logs");
        let mut out = std::fs::read_to_string(launcher_output(&self.dir)).unwrap_or_default();
        if let Ok(entries) = std::fs::read_dir(&logs) {
            for entry in entries.flatten() {
                if entry.path().extension().is_some_and(|e| e == "log") {
                    out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
                }
            }
        }
        let tail: Vec<&str> = out.lines().rev().take(60).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }
}

/// The single node of this test process, started on first use.
pub fn server() -> &'static Node {
    static SERVER: OnceLock<Node> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut nodes = start_nodes("single", 1).unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
        nodes.remove(0)
    })
}

/// Several nodes forming one cluster.
pub struct Cluster {
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// The HTTP addresses of the nodes, in order.
    pub fn http(&self) -> Vec<String> {
        self.nodes.iter().map(Node::http).collect()
    }

    /// Waits until the cluster has all its nodes and every shard copy is assigned (green),
    /// asking any node that answers.
    pub fn wait_for_green(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let path = format!(
            "/_cluster/health?wait_for_nodes={}&wait_for_status=green&timeout=5s",
            self.nodes.len()
        );
        let mut last = String::new();
        while Instant::now() < deadline {
            for node in &self.nodes {
                if node.pid().is_none() {
                    continue;
                }
                match request(node, "GET", &path, None) {
                    Ok((200, body)) if body.contains("\"timed_out\":false") => return Ok(()),
                    Ok((_, body)) => last = body,
                    Err(e) => last = e,
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!("the cluster is not green: {last}"))
    }
}

/// The cluster of this test process, `size` nodes (the first call's size), started on first
/// use and green when returned.
pub fn cluster(size: usize) -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| {
        let nodes = start_nodes("cluster", size).unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
        Cluster { nodes }
    });
    assert_eq!(
        cluster.nodes.len(),
        size,
        "one cluster size per test process"
    );
    cluster
        .wait_for_green(Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("test OpenSearch: {e}"));
    cluster
}

/// A prefix for one test's indexes, unique in this process and among processes.
pub fn index_prefix(hint: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "t{}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        hint.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(30)
            .collect::<String>()
            .to_lowercase(),
    )
}

/// A quarry store URL (`opensearch+http://127.0.0.1:PORT/PREFIX`) on the shared node, with
/// a fresh index prefix named after `hint`.
pub fn store_url(hint: &str) -> String {
    let node = server();
    format!(
        "opensearch+http://127.0.0.1:{}/{}",
        node.http_port,
        index_prefix(hint)
    )
}

/// One HTTP request to `node`: its status and body. JSON bodies; for tests.
pub fn request(
    node: &Node,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let url = format!("{}{path}", node.http());
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(&url)
        .header("Content-Type", "application/json")
        .body(body.unwrap_or("").to_string())
        .map_err(|e| e.to_string())?;
    let mut response = agent.run(request).map_err(|e| format!("{url}: {e}"))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    Ok((status, text))
}

/// The installed server and the Java it runs on.
struct Install {
    server: PathBuf,
    java: PathBuf,
}

/// Where the install script put OpenSearch (QUARRY_TEST_OPENSEARCH_HOME overrides).
fn install() -> Result<Install, String> {
    let home = match std::env::var_os("QUARRY_TEST_OPENSEARCH_HOME") {
        Some(home) => PathBuf::from(home),
        None if is_root() => PathBuf::from("/opt/quarry/test-opensearch"),
        None => std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share")))
            .unwrap_or_default()
            .join("quarry/test-opensearch"),
    };
    let server = home.join("opensearch");
    if !server.join("bin/opensearch").exists() || !server.join("plugins/opensearch-knn").exists() {
        return Err(format!(
            "no OpenSearch in {}: run scripts/install-test-opensearch.sh (OpenSearch 2.19.1 with k-NN from Maven Central; needs Java 17 and mvn)",
            server.display()
        ));
    }
    let java = match std::env::var_os("OPENSEARCH_JAVA_HOME") {
        Some(java) => PathBuf::from(java),
        None => PathBuf::from(
            std::fs::read_to_string(home.join("java-home"))
                .map_err(|e| {
                    format!(
                        "{}: {e}: run scripts/install-test-opensearch.sh again",
                        home.join("java-home").display()
                    )
                })?
                .trim(),
        ),
    };
    Ok(Install { server, java })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Starts `count` nodes named `{tag}-{i}` (one: a single-node cluster; more: one cluster of
/// them all) and waits until each answers HTTP.
fn start_nodes(tag: &str, count: usize) -> Result<Vec<Node>, String> {
    let home = install()?;
    remove_stale_folders();
    let root = std::env::temp_dir().join(format!("quarry-os-{}", std::process::id()));
    let ports: Vec<(u16, u16)> = (0..count)
        .map(|_| Ok((free_port()?, free_port()?)))
        .collect::<Result<_, String>>()?;
    let names: Vec<String> = (0..count).map(|i| format!("{tag}-{i}")).collect();
    let mut nodes = Vec::new();
    for (i, (http_port, transport_port)) in ports.iter().copied().enumerate() {
        let dir = root.join(&names[i]);
        prepare_folder(&home, &dir)?;
        let mut settings = vec![
            format!("cluster.name=quarry-test-{}-{tag}", std::process::id()),
            format!("node.name={}", names[i]),
            "network.host=127.0.0.1".to_string(),
            format!("http.port={http_port}"),
            format!("transport.port={transport_port}"),
            format!("path.data={}", dir.join("data").display()),
            format!("path.logs={}", dir.join("logs").display()),
            // The disk may be fuller than the default watermarks allow (85%): shards and
            // their replicas must be assigned whatever the test machine's disk holds.
            "cluster.routing.allocation.disk.threshold_enabled=false".to_string(),
        ];
        if count == 1 {
            settings.push("discovery.type=single-node".to_string());
        } else {
            let seeds: Vec<String> = ports
                .iter()
                .map(|(_, t)| format!("127.0.0.1:{t}"))
                .collect();
            settings.push(format!("discovery.seed_hosts={}", seeds.join(",")));
            settings.push(format!(
                "cluster.initial_cluster_manager_nodes={}",
                names.join(",")
            ));
        }
        let pid = launch(&home, &dir, &settings)?;
        nodes.push(Node {
            name: names[i].clone(),
            http_port,
            transport_port,
            dir,
            settings,
            pid: Mutex::new(Some(pid)),
        });
    }
    for node in &nodes {
        wait_until_answering(node)?;
    }
    Ok(nodes)
}

/// The node's folder: a copy of the server's config (the JVM options that name paths
/// relative to the install, which the node's user may not write, and the G1 collector's left
/// out: `JAVA_OPTS` has its own), owned by the server's user when the tests run as root.
fn prepare_folder(home: &Install, dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    let config = dir.join("config");
    for sub in ["config/jvm.options.d", "data", "logs", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for file in ["opensearch.yml", "log4j2.properties"] {
        std::fs::copy(home.server.join("config").join(file), config.join(file))
            .map_err(|e| format!("{file}: {e}"))?;
    }
    let options = std::fs::read_to_string(home.server.join("config/jvm.options"))
        .map_err(|e| format!("jvm.options: {e}"))?;
    let kept: Vec<&str> = options
        .lines()
        .filter(|l| {
            ![
                "-Xlog:gc",
                "Xloggc",
                "HeapDumpPath",
                "ErrorFile",
                "-Xms",
                "-Xmx",
                "G1GC",
                "G1Reserve",
                "InitiatingHeapOccupancy",
            ]
            .iter()
            .any(|dropped| l.contains(dropped))
        })
        .collect();
    std::fs::write(config.join("jvm.options"), kept.join("\n") + "\n")
        .map_err(|e| format!("jvm.options: {e}"))?;
    if is_root() {
        let owned = Command::new("chown")
            .args(["-R", SERVER_USER])
            .arg(dir)
            .status()
            .map_err(|e| e.to_string())?;
        if !owned.success() {
            return Err(format!(
                "cannot give {} to {SERVER_USER}: run scripts/install-test-opensearch.sh, which creates the user",
                dir.display()
            ));
        }
        // The folder above the nodes must be passable by the server's user.
        let _ = Command::new("chmod")
            .arg("a+x")
            .arg(dir.parent().unwrap())
            .status();
    }
    Ok(())
}

/// Starts OpenSearch in `dir` with `settings` (as the server's user when root, through
/// `setpriv`, which also arms the parent-death signal after the switch, where it would
/// otherwise be cleared); returns the JVM's process id (bin/opensearch execs it). The node
/// ends with the test process.
fn launch(home: &Install, dir: &Path, settings: &[String]) -> Result<u32, String> {
    let mut command = Command::new("setpriv");
    if is_root() {
        command.args([
            &format!("--reuid={SERVER_USER}"),
            &format!("--regid={SERVER_USER}"),
            "--clear-groups",
        ]);
    }
    command
        .args(["--pdeathsig", "KILL", "--"])
        .arg(home.server.join("bin/opensearch"));
    for setting in settings {
        command.arg(format!("-E{setting}"));
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(launcher_output(dir))
        .map_err(|e| e.to_string())?;
    command
        .current_dir(dir)
        .env("OPENSEARCH_JAVA_HOME", &home.java)
        .env("OPENSEARCH_JAVA_OPTS", JAVA_OPTS)
        .env("OPENSEARCH_PATH_CONF", dir.join("config"))
        .env("OPENSEARCH_TMPDIR", dir.join("tmp"))
        .env_remove("JAVA_TOOL_OPTIONS")
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(|e| e.to_string())?)
        .stderr(out);
    // The parent-death signal fires when the thread that started the node ends: start it
    // from a thread that lives as long as the process.
    let (started, outcome) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("test-opensearch".into())
        .spawn(move || match command.spawn() {
            Ok(mut child) => {
                let _ = started.send(Ok(child.id()));
                let _ = child.wait();
                loop {
                    std::thread::park();
                }
            }
            Err(e) => {
                let _ = started.send(Err(format!("cannot start opensearch: {e}")));
            }
        })
        .map_err(|e| e.to_string())?;
    outcome.recv().map_err(|e| e.to_string())?
}

/// Where a node's launcher (bin/opensearch) writes: beside the node's folder, which belongs
/// to the server's user.
fn launcher_output(dir: &Path) -> PathBuf {
    std::env::temp_dir().join(format!(
        "quarry-os-{}-{}.out",
        std::process::id(),
        dir.file_name().unwrap().to_string_lossy()
    ))
}

fn wait_until_answering(node: &Node) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match request(node, "GET", "/", None) {
            Ok((200, _)) => return Ok(()),
            _ if Instant::now() > deadline => {
                return Err(format!(
                    "node {} did not answer on port {} within 120 s:\n{}",
                    node.name,
                    node.http_port,
                    node.log()
                ));
            }
            _ => {
                let gone = node
                    .pid()
                    .is_none_or(|pid| !Path::new(&format!("/proc/{pid}")).exists());
                if gone {
                    return Err(format!(
                        "node {} exited while starting:\n{}",
                        node.name,
                        node.log()
                    ));
                }
                std::thread::sleep(Duration::from_millis(100))
            }
        }
    }
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Folders of earlier test processes whose nodes are gone (a process killed before its
/// nodes' data could be removed).
fn remove_stale_folders() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("quarry-os-"))
            .and_then(|p| p.split(['-', '.']).next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let path = entry.path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}
