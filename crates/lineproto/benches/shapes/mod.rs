//! The input shapes the benchmarks parse: deterministic bodies of line protocol.

// Shared by the criterion bench and the comparison example, which use different parts.
#![allow(dead_code)]

use std::fmt::Write;

/// A named body.
pub struct Shape {
    pub name: &'static str,
    pub body: String,
    pub lines: usize,
}

/// A small deterministic generator (xorshift), so every run parses the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A float as Telegraf prints one: the shortest form that reads back to the same double,
    /// usually 15 to 17 digits (`97.48743718592964`).
    fn float(&mut self) -> String {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        format!("{}", unit * 1000.0)
    }
}

const TS: u64 = 1_700_000_000_000_000_000;

/// What Telegraf's cpu, mem and disk inputs send: sorted tags, float and integer fields.
fn telegraf(lines: usize) -> String {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut body = String::new();
    for i in 0..lines {
        let host = rng.below(64);
        let ts = TS + i as u64 * 10_000_000;
        match i % 3 {
            0 => {
                let _ = writeln!(
                    body,
                    "cpu,cpu=cpu{},host=server{host:02},region=eu-west-1 usage_guest=0,usage_guest_nice=0,usage_idle={},usage_iowait={},usage_irq=0,usage_nice=0,usage_softirq={},usage_steal=0,usage_system={},usage_user={} {ts}",
                    rng.below(16),
                    rng.float(),
                    rng.float(),
                    rng.float(),
                    rng.float(),
                    rng.float()
                );
            }
            1 => {
                let _ = writeln!(
                    body,
                    "mem,host=server{host:02},region=eu-west-1 active={}i,available={}i,available_percent={},buffered={}i,cached={}i,free={}i,total=17179869184i,used={}i,used_percent={} {ts}",
                    rng.below(1 << 33),
                    rng.below(1 << 33),
                    rng.float(),
                    rng.below(1 << 30),
                    rng.below(1 << 32),
                    rng.below(1 << 33),
                    rng.below(1 << 33),
                    rng.float()
                );
            }
            _ => {
                let _ = writeln!(
                    body,
                    "disk,device=nvme0n1p{},fstype=ext4,host=server{host:02},mode=rw,path=/var/lib/data{} free={}i,inodes_free={}i,inodes_total=30531584i,inodes_used={}i,total=491199545344i,used={}i,used_percent={} {ts}",
                    rng.below(4),
                    rng.below(4),
                    rng.below(1 << 38),
                    rng.below(1 << 24),
                    rng.below(1 << 20),
                    rng.below(1 << 38),
                    rng.float()
                );
            }
        }
    }
    body
}

/// Wide rows: 60 float fields a line, no tags.
fn many_fields(lines: usize) -> String {
    let mut rng = Rng(7);
    let mut body = String::new();
    for i in 0..lines {
        body.push_str("sensors ");
        for f in 0..60 {
            if f > 0 {
                body.push(',');
            }
            let _ = write!(body, "channel_{f:02}={}", rng.float());
        }
        let _ = writeln!(body, " {}", TS + i as u64);
    }
    body
}

/// Escapes everywhere: spaces and commas in the measurement, tags and field keys, quotes and
/// backslashes in strings.
fn escapes(lines: usize) -> String {
    let mut rng = Rng(11);
    let mut body = String::new();
    for i in 0..lines {
        let _ = writeln!(
            body,
            r#"my\ app\,events,host\ name=web\ {},path=C:\\logs\\app,user\=id=u\,{} message="user \"{}\" logged in from C:\\Users",error\ count={}i {}"#,
            rng.below(100),
            rng.below(1000),
            rng.below(1000),
            rng.below(10),
            TS + i as u64
        );
    }
    body
}

/// String fields: log-like lines with a few short strings and a long one.
fn strings(lines: usize) -> String {
    let mut rng = Rng(13);
    let mut body = String::new();
    for i in 0..lines {
        let _ = writeln!(
            body,
            r#"logs,app=api,level=info method="GET",path="/api/v1/users/{}/orders",agent="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",msg="request served in {} ms with status 200 and {} bytes written to the client" {}"#,
            rng.below(100_000),
            rng.below(1000),
            rng.below(100_000),
            TS + i as u64
        );
    }
    body
}

/// Integer fields: counters as InfluxDB `i` integers and `u` unsigned.
fn ints(lines: usize) -> String {
    let mut rng = Rng(17);
    let mut body = String::new();
    for i in 0..lines {
        let _ = writeln!(
            body,
            "net,host=server{:02},interface=eth0 bytes_recv={}i,bytes_sent={}i,packets_recv={}i,packets_sent={}i,err_in={}i,err_out={}i,drop_in={}u,drop_out={}u {}",
            rng.below(64),
            rng.below(1 << 50),
            rng.below(1 << 50),
            rng.below(1 << 40),
            rng.below(1 << 40),
            rng.below(100),
            rng.below(100),
            rng.below(1000),
            rng.below(1000),
            TS + i as u64
        );
    }
    body
}

/// Many short lines: one tag, one float field, a timestamp; about 40 bytes a line.
fn short_lines(lines: usize) -> String {
    let mut rng = Rng(19);
    let mut body = String::new();
    for i in 0..lines {
        let _ = writeln!(
            body,
            "cpu,h=s{:02} v={}.{} {}",
            rng.below(100),
            rng.below(100),
            rng.below(10),
            TS + i as u64
        );
    }
    body
}

/// Tag-heavy lines: a dozen tags (Kubernetes-style series keys) and two small fields.
fn tag_heavy(lines: usize) -> String {
    let mut rng = Rng(23);
    let mut body = String::new();
    for i in 0..lines {
        let _ = writeln!(
            body,
            "kube_pod,app=payments-api,cluster=prod-eu-{},container=api,env=production,namespace=payments,node=ip-10-0-{}-{}.eu-west-1.compute.internal,owner=team-billing,pod=payments-api-7d9f8c-{:05},tier=backend,version=v2.{}.3,zone=eu-west-1{} restarts={}i,ready=true {}",
            rng.below(4),
            rng.below(256),
            rng.below(256),
            rng.below(100_000),
            rng.below(20),
            ["a", "b", "c"][rng.below(3) as usize],
            rng.below(10),
            TS + i as u64
        );
    }
    body
}

/// Every shape, `lines` lines each.
pub fn all(lines: usize) -> Vec<Shape> {
    [
        ("short_lines", short_lines(lines)),
        ("tag_heavy", tag_heavy(lines)),
        ("telegraf", telegraf(lines)),
        ("many_fields", many_fields(lines)),
        ("escapes", escapes(lines)),
        ("strings", strings(lines)),
        ("ints", ints(lines)),
    ]
    .into_iter()
    .map(|(name, body)| Shape { name, body, lines })
    .collect()
}
