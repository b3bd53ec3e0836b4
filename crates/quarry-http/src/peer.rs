//! Who is on the other end of a loopback connection. A loopback TCP connection carries no
//! user the way a Unix socket does (SO_PEERCRED), yet every local user can reach 127.0.0.1:
//! without this, `runuser -u nobody -- curl 127.0.0.1:PORT/...` read whatever the serving user
//! indexed. On Linux the kernel's socket table (/proc/net/tcp and tcp6) names the owner of
//! each socket, the client's end included; that is the rule quarry serves by: a loopback
//! client known to be another user is answered only with the token (`--token`). Where the
//! owner cannot be read (no /proc, another OS, a connection gone before it was looked up),
//! nothing is refused on that ground — documented in the README.
//!
//! The kernel is asked for the one socket through sock_diag (netlink's `inet_diag` exact
//! lookup, with the rust-netlink crates): reading /proc/net/tcp walks every bucket of the
//! kernel's connection table, 5 ms per connection on a machine whose table is large, where the
//! lookup takes tens of microseconds. The table is still read where the lookup cannot be made
//! or finds nothing (a kernel without sock_diag, a sandbox that refuses netlink), so no client
//! is taken for this user's that the table would name another's. Its rows are a documented
//! kernel format of a few fixed columns, read by hand: the crates that read them (procfs)
//! bring far more than this one lookup needs.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The user id owning the socket at `client` connected to `server`, when the kernel says.
pub(crate) fn owner_uid(client: SocketAddr, server: SocketAddr) -> Option<u32> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    #[cfg(target_os = "linux")]
    if let Some(uid) = diag::owner_uid(client, server) {
        return Some(uid);
    }
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            find_owner(&text, client, server)
        })
}

/// The exact lookup of one TCP socket through sock_diag.
#[cfg(target_os = "linux")]
mod diag {
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_REQUEST};
    use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use netlink_packet_sock_diag::SockDiagMessage;
    use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket};
    use std::net::{IpAddr, SocketAddr};

    /// The owner of the socket whose local end is `client` and remote end is `server`; `None`
    /// when the kernel cannot be asked or holds no such socket.
    pub(super) fn owner_uid(client: SocketAddr, server: SocketAddr) -> Option<u32> {
        // A v4-mapped IPv6 end is hashed with the IPv4 sockets: asked as IPv4.
        let (source, destination) = (client.ip().to_canonical(), server.ip().to_canonical());
        let family = match (source, destination) {
            (IpAddr::V4(_), IpAddr::V4(_)) => AF_INET,
            (IpAddr::V6(_), IpAddr::V6(_)) => AF_INET6,
            _ => return None,
        };
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST;
        let mut request = NetlinkMessage::new(
            header,
            SockDiagMessage::InetRequest(InetRequest {
                family,
                protocol: IPPROTO_TCP,
                extensions: ExtensionFlags::empty(),
                states: StateFlags::all(),
                socket_id: SocketId {
                    source_port: client.port(),
                    destination_port: server.port(),
                    source_address: source,
                    destination_address: destination,
                    interface_id: 0,
                    // INET_DIAG_NOCOOKIE: any socket with these ends.
                    cookie: [0xff; 8],
                },
            })
            .into(),
        );
        request.finalize();
        let mut bytes = vec![0; request.buffer_len()];
        request.serialize(&mut bytes);
        let socket = Socket::new(NETLINK_SOCK_DIAG).ok()?;
        socket.send(&bytes, 0).ok()?;
        let mut answer = vec![0; 8192];
        let read = socket.recv(&mut &mut answer[..], 0).ok()?;
        let reply = NetlinkMessage::<SockDiagMessage>::deserialize(&answer[..read]).ok()?;
        match reply.payload {
            // The lookup falls back to a listening socket on the port: only the socket with
            // both ends asked for is the client's.
            NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => {
                let found = &response.header.socket_id;
                let same = |ip: IpAddr, port: u16, want: SocketAddr| {
                    port == want.port() && ip.to_canonical() == want.ip().to_canonical()
                };
                (same(found.source_address, found.source_port, client)
                    && same(found.destination_address, found.destination_port, server))
                .then_some(response.header.uid)
            }
            _ => None,
        }
    }
}

/// The uid column of the row whose local end is `client` and remote end is `server`.
fn find_owner(table: &str, client: SocketAddr, server: SocketAddr) -> Option<u32> {
    table.lines().skip(1).find_map(|row| {
        let columns: Vec<&str> = row.split_whitespace().collect();
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
        let (local, remote, uid) = (columns.get(1)?, columns.get(2)?, columns.get(7)?);
        let same = |a: &str, b: SocketAddr| parse_address(a).is_some_and(|a| same_end(a, b));
        (same(local, client) && same(remote, server))
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// Two ends are the same when their ports and addresses agree, an IPv4 address and its
/// IPv4-mapped IPv6 form being one address.
fn same_end(a: SocketAddr, b: SocketAddr) -> bool {
    a.port() == b.port() && a.ip().to_canonical() == b.ip().to_canonical()
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): the kernel prints each 32-bit
/// word of the address in the machine's byte order, the port as a number.
fn parse_address(field: &str) -> Option<SocketAddr> {
    let (address, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match address.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(address)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(&address[i * 8..i * 8 + 8])?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// This process's effective user id, as the kernel reports it for its own sockets.
pub(crate) fn own_uid() -> Option<u32> {
    static OWN: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *OWN.get_or_init(|| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata("/proc/self").ok().map(|m| m.uid())
        }
        #[cfg(not(unix))]
        {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_owned_by_the_uid_of_the_clients_row() {
        // A real connection on loopback: the client's row names this process's user.
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (_accepted, peer) = server.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let owner = owner_uid(peer, server.local_addr().unwrap());
        if cfg!(target_os = "linux") {
            assert_eq!(owner, own_uid(), "the client's socket is this user's");
        }
        #[cfg(target_os = "linux")]
        if std::path::Path::new("/proc/net/tcp").exists() {
            // The kernel's lookup and its table agree.
            let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
            let server = server.local_addr().unwrap();
            assert_eq!(
                diag::owner_uid(peer, server),
                find_owner(&table, peer, server)
            );
            assert_eq!(diag::owner_uid(server, server), None);
        }
        // The server's own row (local = server) is not the client's.
        assert_eq!(
            owner_uid(server.local_addr().unwrap(), server.local_addr().unwrap()),
            None
        );
    }

    #[test]
    fn an_ipv6_connection_is_owned_by_this_user() {
        // Where the machine has no IPv6 loopback there is nothing to look up.
        let Ok(server) = std::net::TcpListener::bind("[::1]:0") else {
            return;
        };
        let _client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (_accepted, peer) = server.accept().unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(owner_uid(peer, server.local_addr().unwrap()), own_uid());
            #[cfg(target_os = "linux")]
            assert_eq!(
                diag::owner_uid(peer, server.local_addr().unwrap()),
                own_uid(),
                "the kernel's lookup finds an IPv6 socket"
            );
        }
    }

    #[test]
    fn rows_are_read_in_the_kernels_spelling() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000    65534        0 1 1 0000000000000000 100 0 0 10 0\n";
        let word = u32::from_ne_bytes([127, 0, 0, 1]);
        let table = table.replace("0100007F", &format!("{word:08X}"));
        let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let server: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(find_owner(&table, client, server), Some(65534));
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:40000".parse().unwrap();
        assert_eq!(find_owner(&table, mapped, server), Some(65534));
        assert_eq!(find_owner(&table, server, client), None);
    }
}
