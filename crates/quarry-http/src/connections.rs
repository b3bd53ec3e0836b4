//! Which connections the server holds, and which one gives way when it is full. A cap on
//! connections alone let idle clients starve everyone: 1,100 idle connections, reopened as the
//! server closed them, kept every slot, and 256 clients trickling a body at a byte a second
//! held them for good. So each connection is known by what it does — idle (no request, or
//! headers still coming), reading a request's body, or at work — and when a new one arrives at
//! the cap, the connection that has been idle or stalled longest gives way (first among those
//! of the peer holding the most): a connection at work is never closed for another. One peer
//! holds at most its share of the cap (a quarter; loopback clients, which are the user's own,
//! share the whole), so a peer reopening what was closed only churns its own slots. A new
//! connection that nothing can make room for is answered 503 with `Retry-After`, never closed
//! bare.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// How long a connection must have been idle before it gives way ahead of the others (a
/// client that has just connected is about to send its request). Within it, an idle
/// connection still gives way when nothing else can: 1,100 idle connections opened in a burst
/// were all within it, and the server answered most new clients 503.
const IDLE_GRACE: Duration = Duration::from_millis(200);
/// How long a request's body may stall before its connection may give way.
const STALL_GRACE: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Doing {
    /// No request in progress: just connected, between requests, or headers still coming.
    Idle,
    /// A request's headers came; its body is being read.
    Reading,
    /// The request is being answered.
    Working,
}

struct Conn {
    peer: IpAddr,
    doing: Doing,
    since: Instant,
    give_way: Arc<Notify>,
}

#[derive(Default)]
struct Held {
    next: u64,
    conns: HashMap<u64, Conn>,
}

/// The connections held, shared by the accept loop and the connections themselves.
pub(crate) struct Registry {
    cap: usize,
    held: Mutex<Held>,
}

/// One held connection's place in the registry; dropping it lets the place go.
#[derive(Clone)]
pub(crate) struct Place {
    id: u64,
    registry: Arc<Registry>,
}

impl Place {
    /// What the connection does now.
    pub(crate) fn doing(&self, doing: Doing) {
        if let Ok(mut held) = self.registry.held.lock() {
            if let Some(conn) = held.conns.get_mut(&self.id) {
                conn.doing = doing;
                conn.since = Instant::now();
            }
        }
    }
}

/// Lets the place go when the connection's task ends (the last clone of it).
pub(crate) struct Leave(pub Place);

impl Drop for Leave {
    fn drop(&mut self) {
        if let Ok(mut held) = self.0.registry.held.lock() {
            held.conns.remove(&self.0.id);
        }
    }
}

impl Registry {
    pub(crate) fn new(cap: usize) -> Arc<Registry> {
        Arc::new(Registry {
            cap: cap.max(1),
            held: Mutex::new(Held::default()),
        })
    }

    /// How many connections one peer may hold.
    fn share(&self, peer: IpAddr) -> usize {
        if peer.is_loopback() {
            self.cap
        } else {
            (self.cap / 4).max(1)
        }
    }

    /// A place for a new connection from `peer` (and what tells it to give way later), making
    /// room when full by telling the longest idle or stalled connection to give way; `None`
    /// when every connection that could give way is at work.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<(Place, Arc<Notify>)> {
        let mut held = self.held.lock().ok()?;
        let now = Instant::now();
        let of_peer = held.conns.values().filter(|c| c.peer == peer).count();
        let full = held.conns.len() >= self.cap;
        if of_peer >= self.share(peer) || full {
            // Who gives way: of this peer when it is over its share, else of anyone — the
            // peer holding the most first, then the longest idle or stalled.
            let mut counts: HashMap<IpAddr, usize> = HashMap::new();
            for c in held.conns.values() {
                *counts.entry(c.peer).or_default() += 1;
            }
            let victim = held
                .conns
                .iter()
                .filter(|(_, c)| of_peer < self.share(peer) || c.peer == peer)
                .filter(|(_, c)| match c.doing {
                    Doing::Idle => true,
                    Doing::Reading => now.duration_since(c.since) >= STALL_GRACE,
                    Doing::Working => false,
                })
                .max_by_key(|(_, c)| {
                    let age = now.duration_since(c.since);
                    let past_grace = c.doing != Doing::Idle || age >= IDLE_GRACE;
                    (counts[&c.peer], past_grace, age)
                })
                .map(|(id, _)| *id)?;
            if let Some(gone) = held.conns.remove(&victim) {
                gone.give_way.notify_one();
            }
        }
        let id = held.next;
        held.next += 1;
        let give_way = Arc::new(Notify::new());
        held.conns.insert(
            id,
            Conn {
                peer,
                doing: Doing::Idle,
                since: now,
                give_way: give_way.clone(),
            },
        );
        Some((
            Place {
                id,
                registry: self.clone(),
            },
            give_way,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_idle_gives_way_and_work_never_does() {
        let registry = Registry::new(2);
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let (_a, a_go) = registry.admit(local).unwrap();
        let (b, _) = registry.admit(local).unwrap();
        // Both just came: the older idle one gives way all the same.
        let (fresh, _) = registry.admit(local).expect("an idle connection gives way");
        assert!(tokio_test_notified(&a_go));
        drop(Leave(fresh));
        let (a, a_go) = registry.admit(local).unwrap();
        std::thread::sleep(IDLE_GRACE + Duration::from_millis(20));
        b.doing(Doing::Working);
        let (c, _) = registry.admit(local).expect("a gives way");
        // `a` was told (a permit is stored for it), and its place is gone.
        assert!(tokio_test_notified(&a_go));
        drop(Leave(a));
        assert_eq!(registry.held.lock().unwrap().conns.len(), 2);
        // `b` and `c` work: nothing gives way.
        c.doing(Doing::Working);
        assert!(registry.admit(local).is_none());
        // A remote peer holds at most a quarter of the cap, and churns only its own.
        let registry = Registry::new(8);
        let remote: IpAddr = "192.0.2.7".parse().unwrap();
        let (_r1, _) = registry.admit(remote).unwrap();
        let (r2, _) = registry.admit(remote).unwrap();
        r2.doing(Doing::Working);
        let (r3, _) = registry.admit(remote).expect("its idle one gives way");
        r3.doing(Doing::Working);
        assert!(
            registry.admit(remote).is_none(),
            "its share is full and at work"
        );
        assert!(registry.admit(local).is_some(), "others still come in");
    }

    /// Whether `notify` holds a permit (it was told to give way), without a runtime.
    fn tokio_test_notified(notify: &Notify) -> bool {
        let waiter = notify.notified();
        let mut waiter = std::pin::pin!(waiter);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        std::future::Future::poll(waiter.as_mut(), &mut cx).is_ready()
    }
}
