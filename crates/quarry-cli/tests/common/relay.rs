//! A TCP relay to a test server that can be cut and restored: while it runs, its port is the
//! server; once cut, connections to it are refused and open ones closed, as a server that went
//! down; restored, it relays again on the same port, as the server coming back.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Relay {
    pub port: u16,
    target: u16,
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    /// A relay on a free loopback port to `target` on loopback.
    pub fn to(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay = Relay {
            port: listener.local_addr().unwrap().port(),
            target,
            down: Arc::new(AtomicBool::new(false)),
            open: Arc::new(Mutex::new(Vec::new())),
        };
        relay.accept(listener);
        relay
    }

    fn accept(&self, listener: TcpListener) {
        let (stop, streams, target) = (self.down.clone(), self.open.clone(), self.target);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return; // the listener goes: connections are refused
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let mut kept = streams.lock().unwrap();
                kept.push(client.try_clone().unwrap());
                kept.push(server.try_clone().unwrap());
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
    }

    /// The server goes down: new connections are refused, open ones closed.
    pub fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The server comes back on the same port.
    pub fn restore(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.port)) {
                Ok(listener) => break listener,
                Err(e) if std::time::Instant::now() > deadline => {
                    panic!("the relay's port {} stays taken: {e}", self.port)
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        };
        self.down.store(false, Ordering::SeqCst);
        self.accept(listener);
    }
}
