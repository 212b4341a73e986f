//! The owner's change notifications for followers: channel, payload format, follower presence.
//!
//! Followers hold a shared session advisory lock on ([`FOLLOW_CLASS`], `hashtext(schema)`).
//! The owner looks for such locks in `pg_locks` at most once a second, off the flush path, and
//! sends notifications only while one is held, so it pays nothing without followers. When it
//! sees a follower's backend for the first time it notifies `hello:<pid>,...`: a follower that
//! hears its own pid knows that every flush committed from then on is notified.
//!
//! A payload is tokens separated by spaces, in the order the flush applied them:
//! `<db>:*` (database emptied: FLUSHDB, FLUSHALL, SWAPDB), `<db>:<hex of the key>` (a key
//! written or deleted), `p<db>:<hex of the key>` then `/<hex of a member>` for each member
//! (a hash, set or sorted set written in part: these fields or members were set or removed,
//! none when only its expiry changed), `*` (read everything again: a key too long to name in a
//! payload),
//! `hello:<pid>,<pid>` (followers the owner now notifies), `functions` (the function libraries
//! were replaced: FUNCTION LOAD, DELETE, FLUSH, RESTORE). Each payload stays under PostgreSQL's
//! limit of 8000 bytes.

use std::fmt::Write as _;

use sluice_pg::Connection;

use crate::Error;

/// The first half of the followers' advisory lock key: "sluf" in ASCII.
pub const FOLLOW_CLASS: i32 = 0x736c_7566;

/// A payload is cut before it reaches this many bytes (PostgreSQL refuses 8000 and more).
const MAX_PAYLOAD: usize = 7_900;

/// A key written in part whose token would be longer than this is named whole instead: a
/// follower then reads all of it, as it would have to for most of its members anyway.
const MAX_PART: usize = 4_000;

/// Longest channel name PostgreSQL keeps (NAMEDATALEN - 1).
const MAX_CHANNEL: usize = 63;

/// The channel of `schema`'s notifications, `sluice_redis:<schema>`, cut to PostgreSQL's 63
/// bytes (two long schema names may then share a channel: a follower reads a few keys again
/// for nothing).
pub fn channel(schema: &str) -> String {
    let mut name = format!("sluice_redis:{schema}");
    if name.len() > MAX_CHANNEL {
        let mut end = MAX_CHANNEL;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// Payloads being built, each under the limit.
#[derive(Debug, Default)]
pub struct Payloads {
    done: Vec<String>,
    current: String,
}

impl Payloads {
    /// Adds the token of database `db` emptied.
    pub fn cleared(&mut self, db: i32) {
        let mut token = String::with_capacity(8);
        let _ = write!(token, "{db}:*");
        self.push(&token);
    }

    /// Adds the token of the function libraries replaced.
    pub fn functions(&mut self) {
        self.push("functions");
    }

    /// Adds the token of `key` of database `db` written or deleted; a key too long for a
    /// payload asks followers to read everything again.
    pub fn key(&mut self, db: i32, key: &[u8]) {
        if key.len() * 2 + 12 > MAX_PAYLOAD {
            self.push("*");
            return;
        }
        let mut token = String::with_capacity(key.len() * 2 + 12);
        let _ = write!(token, "{db}:");
        crate::codec::push_hex(&mut token, key);
        self.push(&token);
    }

    /// Adds the token of a hash, set or sorted set `key` of database `db` whose `members`
    /// (fields) alone were set or removed (none: only its expiry changed); too many to name
    /// make it the key's whole token.
    pub fn part<'m>(&mut self, db: i32, key: &[u8], members: impl IntoIterator<Item = &'m [u8]>) {
        if key.len() * 2 + 16 > MAX_PART {
            self.key(db, key);
            return;
        }
        let mut token = String::with_capacity(key.len() * 2 + 16);
        let _ = write!(token, "p{db}:");
        crate::codec::push_hex(&mut token, key);
        for member in members {
            if token.len() + 1 + member.len() * 2 > MAX_PART {
                self.key(db, key);
                return;
            }
            token.push('/');
            crate::codec::push_hex(&mut token, member);
        }
        self.push(&token);
    }

    fn push(&mut self, token: &str) {
        if !self.current.is_empty() && self.current.len() + 1 + token.len() >= MAX_PAYLOAD {
            self.done.push(std::mem::take(&mut self.current));
        }
        if !self.current.is_empty() {
            self.current.push(' ');
        }
        self.current.push_str(token);
    }

    /// The payloads, in order.
    pub fn finish(mut self) -> Vec<String> {
        if !self.current.is_empty() {
            self.done.push(self.current);
        }
        self.done
    }
}

/// One token of a payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A key written or deleted.
    Key(i32, Vec<u8>),
    /// A hash, set or sorted set of which only these members were set or removed (and maybe
    /// its expiry changed).
    Part(i32, Vec<u8>, Vec<Vec<u8>>),
    /// A database emptied.
    Cleared(i32),
    /// Everything is to be read again.
    All,
    /// The owner notifies these followers' backends from now on.
    Hello(Vec<i32>),
    /// The function libraries were replaced.
    Functions,
}

/// The tokens of a payload; a token that cannot be read asks for everything to be read again
/// (a newer owner's format, say: reading all is always right).
pub fn parse(payload: &str) -> impl Iterator<Item = Token> + '_ {
    payload
        .split(' ')
        .filter(|t| !t.is_empty())
        .map(|t| parse_token(t).unwrap_or(Token::All))
}

fn parse_token(token: &str) -> Option<Token> {
    match token {
        "*" => return Some(Token::All),
        "functions" => return Some(Token::Functions),
        _ => {}
    }
    let (head, rest) = token.split_once(':')?;
    if head == "hello" {
        let pids = rest
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().ok())
            .collect::<Option<Vec<i32>>>()?;
        return Some(Token::Hello(pids));
    }
    if let Some(db) = head.strip_prefix('p') {
        let db: i32 = db.parse().ok()?;
        let mut parts = rest.split('/');
        let key = unhex(parts.next()?)?;
        let members = parts.map(unhex).collect::<Option<Vec<_>>>()?;
        return Some(Token::Part(db, key, members));
    }
    let db: i32 = head.parse().ok()?;
    if rest == "*" {
        return Some(Token::Cleared(db));
    }
    Some(Token::Key(db, unhex(rest)?))
}

/// The bytes of a token's hex digits.
fn unhex(hex: &str) -> Option<Vec<u8>> {
    let hex = hex.as_bytes();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks_exact(2)
        .map(|pair| {
            let text = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(text, 16).ok()
        })
        .collect()
}

/// The owner's view of its followers: whether to notify, which backends were greeted.
#[derive(Debug, Default)]
pub struct Followers {
    /// Backends holding the follower lock at the last look, sorted.
    seen: Vec<i32>,
    /// Notifications sent since start (one per payload).
    pub sent: u64,
}

impl Followers {
    /// Whether flushes notify (a follower was there at the last look).
    pub fn present(&self) -> bool {
        !self.seen.is_empty()
    }

    /// Looks for followers' locks on `conn` and greets the backends not seen before (one
    /// statement, plus the greeting when there is one). Called at most once a second, between
    /// flushes: every flush after this one returns notifies if a follower was found, and a
    /// follower hears its greeting after every flush committed before it.
    pub async fn look(
        &mut self,
        conn: &mut Connection,
        schema: &str,
        channel: &str,
    ) -> Result<(), Error> {
        let step = "looking for followers";
        let row = conn
            .query_one(
                "SELECT coalesce(string_agg(pid::text, ',' ORDER BY pid), '') FROM pg_locks \
                 WHERE locktype = 'advisory' AND granted AND objsubid = 2 \
                   AND classid = $1::int4::oid AND objid = hashtext($2)::oid \
                   AND database = (SELECT oid FROM pg_database \
                                   WHERE datname = current_database())",
                &[&FOLLOW_CLASS, &schema],
            )
            .await
            .map_err(|e| Error::pg(step, e))?;
        let pids: String = row.get(0).map_err(|e| Error::pg(step, e))?;
        let mut now: Vec<i32> = pids.split(',').filter_map(|p| p.parse().ok()).collect();
        now.sort_unstable();
        now.dedup();
        let new: Vec<String> = now
            .iter()
            .filter(|pid| self.seen.binary_search(pid).is_err())
            .map(i32::to_string)
            .collect();
        if !new.is_empty() {
            let hello = format!("hello:{}", new.join(","));
            conn.query_one("SELECT pg_notify($1, $2)", &[&channel, &hello])
                .await
                .map_err(|e| Error::pg("greeting a follower", e))?;
            self.sent += 1;
            tracing::info!(followers = now.len(), "a Redis store follower is listening");
        }
        self.seen = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        let mut p = Payloads::default();
        p.cleared(3);
        p.key(0, b"");
        p.key(15, &[0, 0xff, b' ', b':']);
        let payloads = p.finish();
        assert_eq!(payloads, ["3:* 0: 15:00ff203a"]);
        let tokens: Vec<Token> = parse(&payloads[0]).collect();
        assert_eq!(
            tokens,
            [
                Token::Cleared(3),
                Token::Key(0, Vec::new()),
                Token::Key(15, vec![0, 0xff, b' ', b':'])
            ]
        );
        assert_eq!(
            parse("hello:12,7").collect::<Vec<_>>(),
            [Token::Hello(vec![12, 7])]
        );
        let mut p = Payloads::default();
        p.functions();
        p.key(0, b"k");
        let payloads = p.finish();
        assert_eq!(
            parse(&payloads[0]).collect::<Vec<_>>(),
            [Token::Functions, Token::Key(0, b"k".to_vec())]
        );
        // What cannot be read means: read everything.
        assert_eq!(
            parse("0:abc x:1 p1:6b/abc").collect::<Vec<_>>(),
            [Token::All, Token::All, Token::All]
        );
        // Members, the empty one too; none when only the expiry changed.
        let mut p = Payloads::default();
        p.part(2, b"h", [&b"f"[..], b""]);
        p.part(0, b"s", []);
        let payloads = p.finish();
        assert_eq!(payloads, ["p2:68/66/ p0:73"]);
        assert_eq!(
            parse(&payloads[0]).collect::<Vec<_>>(),
            [
                Token::Part(2, b"h".to_vec(), vec![b"f".to_vec(), Vec::new()]),
                Token::Part(0, b"s".to_vec(), Vec::new())
            ]
        );
    }

    #[test]
    fn payloads_stay_under_the_limit() {
        let mut p = Payloads::default();
        for i in 0..5_000u32 {
            p.key(1, format!("key:{i}").as_bytes());
        }
        p.key(2, &vec![7u8; 5_000]);
        // Too many members to name: the key is named whole.
        let many: Vec<Vec<u8>> = (0..1_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        p.part(3, b"big", many.iter().map(Vec::as_slice));
        let payloads = p.finish();
        assert!(payloads.len() > 1);
        assert!(payloads.iter().all(|p| p.len() < MAX_PAYLOAD));
        let tokens: Vec<Token> = payloads.iter().flat_map(|p| parse(p)).collect();
        assert_eq!(tokens.len(), 5_002);
        assert_eq!(tokens[4_999], Token::Key(1, b"key:4999".to_vec()));
        assert_eq!(tokens[5_000], Token::All);
        assert_eq!(tokens[5_001], Token::Key(3, b"big".to_vec()));
    }

    proptest::proptest! {
        /// Any text on the channel (anyone who may NOTIFY can send it) parses without panicking,
        /// into tokens that at worst ask for everything to be read again.
        #[test]
        fn any_payload_parses(payload in "\\PC{0,200}") {
            for token in parse(&payload) {
                match token {
                    Token::Key(_, key) => proptest::prop_assert!(key.len() * 2 <= payload.len()),
                    Token::Part(_, key, members) => proptest::prop_assert!(
                        (key.len() + members.iter().map(Vec::len).sum::<usize>()) * 2
                            <= payload.len()
                    ),
                    _ => {}
                }
            }
        }

        /// What the owner writes reads back as the same tokens, in order, whatever the keys.
        #[test]
        fn written_tokens_read_back(
            keys in proptest::collection::vec(
                (0i32..16, proptest::collection::vec(proptest::num::u8::ANY, 0..600)),
                0..40,
            ),
            cleared in proptest::option::of(0i32..16),
            members in proptest::collection::vec(
                proptest::collection::vec(proptest::num::u8::ANY, 0..300),
                0..12,
            ),
        ) {
            let mut p = Payloads::default();
            let mut expected = Vec::new();
            if let Some(db) = cleared {
                p.cleared(db);
                expected.push(Token::Cleared(db));
            }
            for (i, (db, key)) in keys.iter().enumerate() {
                if i % 2 == 0 {
                    p.key(*db, key);
                    expected.push(Token::Key(*db, key.clone()));
                    continue;
                }
                // Every other key written in part: named whole past the token's bound.
                let named = &members[..i.min(members.len())];
                p.part(*db, key, named.iter().map(Vec::as_slice));
                let length = format!("p{db}:").len() + key.len() * 2 + named.iter().map(|m| 1 + m.len() * 2).sum::<usize>();
                expected.push(if length <= MAX_PART {
                    Token::Part(*db, key.clone(), named.to_vec())
                } else {
                    Token::Key(*db, key.clone())
                });
            }
            let payloads = p.finish();
            proptest::prop_assert!(payloads.iter().all(|p| p.len() < MAX_PAYLOAD));
            let tokens: Vec<Token> = payloads.iter().flat_map(|p| parse(p)).collect();
            proptest::prop_assert_eq!(tokens, expected);
        }
    }

    #[test]
    fn long_schemas_give_channels_postgres_keeps() {
        assert_eq!(channel("s"), "sluice_redis:s");
        let long = "é".repeat(40);
        let c = channel(&long);
        assert!(c.len() <= MAX_CHANNEL && c.starts_with("sluice_redis:é"));
    }
}
