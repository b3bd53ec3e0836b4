//! A secured cluster as quarry's client meets it, for the TLS and basic-auth tests: HTTPS with
//! a certificate of a private CA (made here with `openssl`) and basic auth, in front of the
//! test node (tls_proxy.py, run by `python3`). The test distribution has no security plugin,
//! so the front stands in for it: what quarry sends and checks is the same.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running HTTPS front; stopped and its folder removed when dropped.
pub struct TlsFront {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// The PEM file of the CA that signed its certificate.
    pub ca: PathBuf,
    dir: PathBuf,
    child: Child,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `openssl` with `args` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Starts an HTTPS front for the test node ([`crate::server`]) that asks for `user` and
/// `password`; its certificate is for 127.0.0.1, signed by a CA of its own ([`TlsFront::ca`]).
pub fn tls_front(user: &str, password: &str) -> TlsFront {
    let dir = std::env::temp_dir().join(crate::index_prefix("tls-front"));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.as_path();
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=quarry test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "node.key",
            "-out",
            "node.csr",
        ],
    );
    std::fs::write(
        d.join("san.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "node.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "node.pem",
        ],
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tls_proxy.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .args(["node.pem", "node.key", user, password])
        .arg(crate::server().http_port.to_string())
        .current_dir(d)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the TLS front");
    let mut port = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let port = port
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the TLS front did not start: {port:?}"));
    TlsFront {
        port,
        ca: dir.join("ca.pem"),
        dir,
        child,
    }
}
