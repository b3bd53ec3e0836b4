//! Who is on the other end of a loopback connection. A loopback TCP connection carries no
//! user the way a Unix socket does (SO_PEERCRED), yet every local user can reach 127.0.0.1:
//! without this, `runuser -u nobody -- curl 127.0.0.1:PORT/...` read whatever the serving user
//! indexed. On Linux the kernel's socket table (/proc/net/tcp and tcp6) names the owner of
//! each socket, the client's end included; that is the rule quarry serves by: a loopback
//! client known to be another user is answered only with the token (`--token`). Where the
//! owner cannot be read (no /proc, another OS, a connection gone before it was looked up),
//! nothing is refused on that ground — documented in the README.
//!
//! Written by hand: the rows are a documented kernel format of a few fixed columns, and the
//! crates that read them (procfs) bring far more than this one lookup needs.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The user id owning the socket at `client` connected to `server`, when the kernel says.
pub(crate) fn owner_uid(client: SocketAddr, server: SocketAddr) -> Option<u32> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            find_owner(&text, client, server)
        })
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
        // The server's own row (local = server) is not the client's.
        assert_eq!(
            owner_uid(server.local_addr().unwrap(), server.local_addr().unwrap()),
            None
        );
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
