//! MIGRATE: keys sent to another Redis (or Sluice) as RESTORE commands of their DUMP payloads.
//!
//! As in Redis, the transfer runs inside the command: the store stays held until the target
//! answered or `timeout` passed, so the keys cannot change in between.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::{Args, Cx, SYNTAX, int_arg};
use crate::engine::{now_ms, rdb};
use crate::reply::Out;

const CONNECT_ERROR: &str = "IOERR error or timeout connecting to the client";
const WRITE_ERROR: &str = "IOERR error or timeout writing to target instance";
const READ_ERROR: &str = "IOERR error or timeout reading to target instance";

/// How the target is logged in to before the keys are sent.
enum Login<'a> {
    None,
    Password(&'a [u8]),
    User(&'a [u8], &'a [u8]),
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
/// [AUTH password | AUTH2 username password] [KEYS key ...]
pub fn migrate(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (mut copy, mut replace, mut login) = (false, false, Login::None);
    let mut keys_from = None;
    let mut i = 6;
    while i < args.len() {
        let more = args.len() - i - 1;
        if args.is(i, "copy") {
            copy = true;
        } else if args.is(i, "replace") {
            replace = true;
        } else if args.is(i, "auth") && more >= 1 {
            login = Login::Password(args.get(i + 1));
            i += 1;
        } else if args.is(i, "auth2") && more >= 2 {
            login = Login::User(args.get(i + 1), args.get(i + 2));
            i += 2;
        } else if args.is(i, "keys") {
            if !args.get(3).is_empty() {
                cx.out.error(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                );
                return;
            }
            keys_from = Some(i + 1);
            break;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 1;
    }
    let Some(db) = int_arg(cx.out, args.get(4)) else {
        return;
    };
    let Some(timeout) = int_arg(cx.out, args.get(5)) else {
        return;
    };
    let timeout = Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 });
    let wanted: Vec<&[u8]> = match keys_from {
        Some(from) => args.from(from).collect(),
        None => vec![args.get(3)],
    };
    let here = cx.db();
    let store = cx.store.get();
    let now = now_ms();
    // Each key that exists, with its payload and the milliseconds it has left (0: no expiry).
    let mut found = Vec::with_capacity(wanted.len());
    for key in wanted {
        if let Some(entry) = store.db(here).peek(key) {
            let ttl = match entry.expire_at {
                0 => 0,
                at => (at - now).max(1),
            };
            found.push((key, ttl, rdb::dump(&entry.value)));
        }
    }
    if found.is_empty() {
        cx.out.simple("NOKEY");
        return;
    }
    let host = String::from_utf8_lossy(args.get(1)).into_owned();
    let port = String::from_utf8_lossy(args.get(2)).into_owned();
    let Some(mut target) = connect(&host, &port, timeout) else {
        cx.out.error(CONNECT_ERROR);
        return;
    };
    // Commands are arrays of bulk strings, as RESP2 replies of that shape are.
    let mut request = Out::default();
    match login {
        Login::None => {}
        Login::Password(password) => {
            request.array(2);
            request.bulk(b"AUTH");
            request.bulk(password);
        }
        Login::User(user, password) => {
            request.array(3);
            request.bulk(b"AUTH");
            request.bulk(user);
            request.bulk(password);
        }
    }
    request.array(2);
    request.bulk(b"SELECT");
    request.bulk_int(db);
    for (key, ttl, payload) in &found {
        request.array(if replace { 5 } else { 4 });
        request.bulk(b"RESTORE");
        request.bulk(key);
        request.bulk_int(*ttl);
        request.bulk(payload);
        if replace {
            request.bulk(b"REPLACE");
        }
    }
    if target.get_mut().write_all(&request.buf).is_err() {
        cx.out.error(WRITE_ERROR);
        return;
    }
    let logins = usize::from(!matches!(login, Login::None));
    for _ in 0..logins + 1 {
        match read_reply(&mut target) {
            Some(Reply::Ok) => {}
            Some(Reply::Error(e)) => {
                cx.out
                    .error(&format!("ERR Target instance replied with error: {e}"));
                return;
            }
            None => {
                cx.out.error(READ_ERROR);
                return;
            }
        }
    }
    let mut last_error = None;
    for (key, _, _) in &found {
        match read_reply(&mut target) {
            Some(Reply::Ok) => {
                if !copy && store.db(here).remove(key).is_some() {
                    store.touch(here, key);
                    store.key_event(here, crate::engine::notify::GENERIC, b"del", key);
                }
            }
            Some(Reply::Error(e)) => last_error = Some(e),
            None => {
                cx.out.error(READ_ERROR);
                return;
            }
        }
    }
    match last_error {
        Some(e) => cx
            .out
            .error(&format!("ERR Target instance replied with error: {e}")),
        None => cx.out.ok(),
    }
}

/// A connection to the target with `timeout` on the connect and on each read and write.
fn connect(host: &str, port: &str, timeout: Duration) -> Option<BufReader<TcpStream>> {
    let port: u16 = port.parse().ok()?;
    let address = (host, port).to_socket_addrs().ok()?.next()?;
    let stream = TcpStream::connect_timeout(&address, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    stream.set_nodelay(true).ok()?;
    Some(BufReader::new(stream))
}

/// What the target answered to one command.
#[derive(Debug, PartialEq)]
enum Reply {
    Ok,
    Error(String),
}

/// Reads one reply: an error line is an error, any other one-line reply counts as success
/// (AUTH, SELECT and RESTORE answer `+OK`). None on a broken or timed-out connection, or a reply
/// of another shape.
fn read_reply(target: &mut impl BufRead) -> Option<Reply> {
    let mut line = Vec::new();
    target.read_until(b'\n', &mut line).ok()?;
    let line = line.strip_suffix(b"\r\n")?;
    match line.first()? {
        b'-' => Some(Reply::Error(
            String::from_utf8_lossy(&line[1..]).into_owned(),
        )),
        b'+' | b':' => Some(Reply::Ok),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_line_by_line() {
        let mut input = &b"+OK\r\n-ERR bad\r\n:1\r\n$3\r\n"[..];
        assert_eq!(read_reply(&mut input), Some(Reply::Ok));
        assert_eq!(read_reply(&mut input), Some(Reply::Error("ERR bad".into())));
        assert_eq!(read_reply(&mut input), Some(Reply::Ok));
        assert_eq!(
            read_reply(&mut input),
            None,
            "a bulk reply is not one RESTORE answers"
        );
        assert_eq!(
            read_reply(&mut &b"+OK"[..]),
            None,
            "a line cut before its CRLF"
        );
        assert_eq!(read_reply(&mut &b""[..]), None, "a closed connection");
    }
}
