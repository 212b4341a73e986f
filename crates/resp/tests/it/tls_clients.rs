//! TLS on the Redis listener (Redis 6's TLS): redis-cli `--tls --cacert`, redis-py
//! `ssl=True, ssl_ca_certs=...`, a plain client refused, and a certificate renewed on disk served
//! to new connections after a reload while open ones go on.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::{Sluice, have};
use sluice_embedded::clients;

/// A certificate authority and a server certificate it signed for `localhost` and 127.0.0.1,
/// written as `<name>-ca.crt`, `<name>.crt` and `<name>.key`.
pub struct TestCerts {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The server certificate's DER bytes (what a client is presented).
    pub der: Vec<u8>,
}

impl TestCerts {
    pub fn make(dir: &Path, name: &str) -> Self {
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("{name} test CA"));
        let ca_cert = ca_params.self_signed(&ca_key).expect("CA cert");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().expect("server key");
        let mut params =
            rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
                .expect("server params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let cert = params.signed_by(&key, &issuer).expect("server cert");
        let certs = Self {
            ca: dir.join(format!("{name}-ca.crt")),
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
            der: cert.der().to_vec(),
        };
        std::fs::write(&certs.ca, ca_cert.pem()).expect("write CA");
        std::fs::write(&certs.cert, cert.pem()).expect("write cert");
        std::fs::write(&certs.key, key.serialize_pem()).expect("write key");
        certs
    }

    /// Copies this certificate and key over `cert` and `key` (a renewal on disk).
    pub fn install(&self, cert: &Path, key: &Path) {
        std::fs::copy(&self.cert, cert).expect("copy cert");
        std::fs::copy(&self.key, key).expect("copy key");
    }
}

/// A blocking TLS client trusting `ca`.
pub struct TlsClient {
    stream: rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
}

impl TlsClient {
    pub fn connect(port: u16, ca: &Path) -> std::io::Result<Self> {
        let mut roots = rustls::RootCertStore::empty();
        let pem = std::fs::read(ca)?;
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
            roots
                .add(cert.map_err(std::io::Error::other)?)
                .map_err(std::io::Error::other)?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(std::io::Error::other)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name =
            rustls::pki_types::ServerName::try_from("localhost").map_err(std::io::Error::other)?;
        let conn =
            rustls::ClientConnection::new(Arc::new(config), name).map_err(std::io::Error::other)?;
        let tcp = TcpStream::connect(("127.0.0.1", port))?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        // The handshake runs on first use: finish it now so a refusal shows here.
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock)?;
        }
        Ok(Self { stream })
    }

    /// The certificate the server presented.
    pub fn presented(&self) -> Vec<u8> {
        self.stream
            .conn
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.to_vec())
            .unwrap_or_default()
    }

    /// Sends one command; the reply's first chunk of bytes.
    pub fn call(&mut self, args: &[&str]) -> std::io::Result<Vec<u8>> {
        self.stream.write_all(&common::RawClient::encode(args))?;
        self.stream.flush()?;
        let mut buf = vec![0; 4096];
        let n = self.stream.read(&mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}

use rustls::pki_types::pem::PemObject;

fn tls_server(certs: &TestCerts, io_threads: usize) -> (Sluice, Arc<sluice_tls::Tls>) {
    let tls = sluice_tls::Tls::from_files(&certs.cert, &certs.key, &[]).expect("load TLS");
    let server = Sluice::start_with(sluice_resp::Config {
        tls: Some(tls.clone()),
        io_threads,
        ..sluice_resp::Config::default()
    });
    (server, tls)
}

#[test]
fn redis_cli_over_tls_with_cacert() {
    if !have("redis-cli") {
        eprintln!("SKIP: redis-cli is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let certs = TestCerts::make(dir.path(), "cli");
    // Connection threads: the handshake runs on the thread that owns the connection.
    let (server, _tls) = tls_server(&certs, 1);
    let port = server.port.to_string();
    let ca = certs.ca.to_string_lossy().into_owned();
    let cli = |args: &[&str]| {
        let out = Command::new("redis-cli")
            .args(["-p", &port, "--tls", "--cacert", &ca])
            .args(args)
            .output()
            .expect("redis-cli");
        (
            String::from_utf8_lossy(&out.stdout).trim_end().to_owned(),
            String::from_utf8_lossy(&out.stderr).trim_end().to_owned(),
        )
    };
    assert_eq!(cli(&["SET", "name", "sluice"]).0, "OK");
    assert_eq!(cli(&["GET", "name"]).0, "sluice");
    assert_eq!(cli(&["RPUSH", "l", "a", "b"]).0, "2");
    assert_eq!(cli(&["LRANGE", "l", "0", "-1"]).0, "a\nb");
    // A large value crosses many TLS records both ways.
    let big = "x".repeat(100_000);
    assert_eq!(cli(&["SET", "big", &big]).0, "OK");
    assert_eq!(cli(&["STRLEN", "big"]).0, "100000");
    assert_eq!(cli(&["GET", "big"]).0.len(), 100_000);

    // A CA that did not sign the certificate: redis-cli refuses the server.
    let stranger = TestCerts::make(dir.path(), "stranger");
    let out = Command::new("redis-cli")
        .args(["-p", &port, "--tls", "--cacert"])
        .arg(&stranger.ca)
        .arg("PING")
        .output()
        .expect("redis-cli");
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("PONG"), "{said}");
    assert!(said.contains("certificate verify failed"), "{said}");

    // Plain RESP on the TLS port gets no answer: the connection is closed.
    let mut plain = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    plain.write_all(b"*1\r\n$4\r\nPING\r\n").expect("write");
    let mut buf = [0u8; 64];
    let n = plain.read(&mut buf).unwrap_or(0);
    assert!(!buf[..n].starts_with(b"+PONG"), "plain TCP was answered");
}

const REDIS_PY_TLS: &str = r#"
import sys, redis
port, ca, proto = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
r = redis.Redis(host="localhost", port=port, ssl=True, ssl_ca_certs=ca, protocol=proto,
                decode_responses=True)
assert r.ping()
r.set("k", "v")
assert r.get("k") == "v"
r.delete("n")
p = r.pipeline(transaction=True)
for i in range(500):
    p.incr("n")
assert p.execute()[-1] == 500
# Pub/sub over TLS: the message is pushed on the subscriber's encrypted stream.
s = r.pubsub()
s.subscribe("ch")
assert s.get_message(timeout=5)["type"] == "subscribe"
assert r.publish("ch", "hello") == 1
m = s.get_message(timeout=5)
assert m and m["data"] == "hello", m
s.close()
# Without the CA the server is not trusted.
try:
    redis.Redis(host="localhost", port=port, ssl=True).ping()
    raise SystemExit("an untrusted certificate was accepted")
except redis.ConnectionError as e:
    assert "CERTIFICATE_VERIFY_FAILED" in str(e), e
print("ok")
"#;

#[test]
fn redis_py_over_tls_resp2_and_resp3() {
    let Some(python) = clients::require(clients::python(), "redis-py") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let certs = TestCerts::make(dir.path(), "py");
    let (server, _tls) = tls_server(&certs, 0);
    for proto in ["2", "3"] {
        let port = server.port.to_string();
        let ca = certs.ca.to_string_lossy();
        common::assert_python(
            &python,
            REDIS_PY_TLS,
            &[&port, &ca, proto],
            &format!("redis-py over TLS (RESP{proto})"),
        );
    }
}

#[test]
fn a_reloaded_certificate_serves_new_connections_and_open_ones_go_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = TestCerts::make(dir.path(), "first");
    let second = TestCerts::make(dir.path(), "second");
    let (cert, key) = (dir.path().join("server.crt"), dir.path().join("server.key"));
    first.install(&cert, &key);
    let tls = sluice_tls::Tls::from_files(&cert, &key, &[]).expect("load TLS");
    let server = Sluice::start_with(sluice_resp::Config {
        tls: Some(tls.clone()),
        io_threads: 1,
        ..sluice_resp::Config::default()
    });

    let mut kept = TlsClient::connect(server.port, &first.ca).expect("first connection");
    assert_eq!(kept.presented(), first.der);
    assert_eq!(kept.call(&["SET", "a", "1"]).expect("SET"), b"+OK\r\n");

    second.install(&cert, &key);
    // Nothing changes until the reload.
    let before = TlsClient::connect(server.port, &first.ca).expect("before the reload");
    assert_eq!(before.presented(), first.der);
    tls.reload().expect("reload");

    let renewed = TlsClient::connect(server.port, &second.ca).expect("after the reload");
    assert_eq!(renewed.presented(), second.der);
    assert!(
        TlsClient::connect(server.port, &first.ca).is_err(),
        "the old certificate is still served"
    );
    // The connection opened before goes on with what it began with.
    assert_eq!(kept.call(&["GET", "a"]).expect("GET"), b"$1\r\n1\r\n");
    assert_eq!(kept.presented(), first.der);

    // A broken file at reload keeps the certificate in use.
    std::fs::write(&cert, "not a certificate").expect("break");
    assert!(tls.reload().is_err());
    let still = TlsClient::connect(server.port, &second.ca).expect("after a failed reload");
    assert_eq!(still.presented(), second.der);
}
