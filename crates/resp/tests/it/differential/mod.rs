//! Differential tests against redis-server: the shared harness and the script driver.
//! The same command scripts go to a real redis-server and to Sluice; the replies must be
//! equal byte for byte (errors included). Skips when redis-server is absent. The scripts and
//! the topic tests live in the submodules.

mod bitmaps_hll;
mod collections;
mod geo_zsets;
mod protocol;
mod sort_config;
mod streams;
mod strings_keys;

use crate::common;

use common::{RawClient, RedisServer, Sluice, split_aggregate};

/// A redis-server and a Sluice side by side.
pub(super) struct Pair {
    redis: RedisServer,
    sluice: Sluice,
}

impl Pair {
    /// Both servers; None (the test passes by) when redis-server is absent.
    pub(super) fn start() -> Option<Pair> {
        let redis = RedisServer::start()?;
        Some(Pair {
            redis,
            sluice: Sluice::start(),
        })
    }

    /// A new client of each: redis-server's, then Sluice's.
    pub(super) fn clients(&self) -> (RawClient, RawClient) {
        (
            RawClient::connect(self.redis.port).expect("connect redis"),
            RawClient::connect(self.sluice.port).expect("connect sluice"),
        )
    }
}

/// One script per block (blank line between blocks); each starts from FLUSHALL.
/// A line is a command; `~ ` compares the reply's elements as a multiset (unordered replies),
/// `? ` sends the command but ignores the reply. Double quotes group an argument with spaces.
/// The blocks are split over the topic modules; this is their original order.
const SCRIPTS: [&str; 7] = [
    strings_keys::SCRIPTS,
    collections::SCRIPTS,
    protocol::SCRIPTS,
    streams::SCRIPTS,
    bitmaps_hll::SCRIPTS,
    geo_zsets::SCRIPTS,
    sort_config::SCRIPTS,
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Exact,
    Unordered,
    Ignore,
}

/// `\xHH` inside a quoted argument stands for that byte.
fn unescape(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\\'
            && text.get(i + 1) == Some(&b'x')
            && i + 3 < text.len() + 1
            && let Some(b) = std::str::from_utf8(&text[i + 2..i + 4])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 4;
            continue;
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

fn tokenize(line: &str) -> Vec<Vec<u8>> {
    let mut args = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').expect("closing quote");
            args.push(unescape(&quoted.as_bytes()[..end]));
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            args.push(rest.as_bytes()[..end].to_vec());
            rest = rest[end..].trim_start();
        }
    }
    args
}

fn normalized(reply: &[u8], mode: Mode) -> Vec<u8> {
    match mode {
        Mode::Exact => reply.to_vec(),
        Mode::Ignore => Vec::new(),
        Mode::Unordered => match split_aggregate(reply) {
            Some((header, mut elements)) => {
                elements.sort();
                let mut out = header;
                for e in elements {
                    out.extend_from_slice(&e);
                }
                out
            }
            None => reply.to_vec(),
        },
    }
}

#[test]
fn replies_match_redis_byte_for_byte() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for script in SCRIPTS.iter().flat_map(|part| part.split("\n\n")) {
        let (mut theirs, mut ours) = pair.clients();
        theirs.call(&["FLUSHALL"]);
        ours.call(&["FLUSHALL"]);
        for line in script.lines().filter(|l| !l.trim().is_empty()) {
            let (mode, text) = if let Some(t) = line.strip_prefix("~ ") {
                (Mode::Unordered, t)
            } else if let Some(t) = line.strip_prefix("? ") {
                (Mode::Ignore, t)
            } else if line.starts_with("HELLO 3") {
                (Mode::Ignore, line)
            } else {
                (Mode::Exact, line)
            };
            let args = tokenize(text);
            let a = normalized(&theirs.call(&args), mode);
            if std::env::var_os("DIFF_TRACE").is_some() {
                eprintln!("> {text}");
            }
            let b = normalized(&ours.call(&args), mode);
            checked += 1;
            if a != b {
                mismatches.push(format!(
                    "{text}\n   redis:  {:?}\n   sluice: {:?}",
                    String::from_utf8_lossy(&a),
                    String::from_utf8_lossy(&b)
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} replies differ from redis-server:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    eprintln!("{checked} replies identical to redis-server's");
}

/// A small deterministic generator (no dependency needed for the random scripts).
pub(super) struct Lcg(pub(super) u64);

impl Lcg {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Sends each command to both servers and collects the ones whose replies differ.
pub(super) fn compare_random(
    theirs: &mut RawClient,
    ours: &mut RawClient,
    commands: &[Vec<String>],
) -> Vec<String> {
    let mut mismatches = Vec::new();
    for cmd in commands {
        let a = theirs.call(cmd);
        let b = ours.call(cmd);
        if a != b {
            mismatches.push(format!(
                "{}\n   redis:  {:?}\n   sluice: {:?}",
                cmd.join(" "),
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b)
            ));
        }
    }
    eprintln!(
        "{} random commands compared, {} differ",
        commands.len(),
        mismatches.len()
    );
    mismatches
}
