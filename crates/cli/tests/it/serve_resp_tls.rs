//! `sluice serve` with TLS on the Redis gate (`[resp] cert` and `key`): a client trusting the
//! certificate's CA is served, and on SIGHUP a certificate renewed on disk is served to new
//! connections while a connection opened before goes on.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;

use crate::serve_support::{Running, announced_address};

/// A CA and a server certificate it signed for localhost: (CA file, cert PEM, key PEM).
fn signed_pair(dir: &Path, name: &str) -> (PathBuf, String, String) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA cert");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    let cert = params.signed_by(&key, &issuer).expect("cert");
    let ca = dir.join(format!("{name}-ca.crt"));
    std::fs::write(&ca, ca_cert.pem()).expect("write CA");
    (ca, cert.pem(), key.serialize_pem())
}

/// A TLS connection to `addr` trusting the CA in `ca`, handshake done.
fn connect(
    addr: &str,
    ca: &Path,
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
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
    let tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock)?;
    }
    Ok(stream)
}

fn call<S: Read + Write>(stream: &mut S, command: &[u8]) -> Vec<u8> {
    stream.write_all(command).expect("write");
    stream.flush().expect("flush");
    let mut buf = vec![0; 256];
    let n = stream.read(&mut buf).expect("read");
    buf.truncate(n);
    buf
}

#[test]
fn resp_tls_reloads_its_certificate_on_sighup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (first_ca, first_cert, first_key) = signed_pair(dir.path(), "first");
    let (second_ca, second_cert, second_key) = signed_pair(dir.path(), "second");
    let (cert, key) = (dir.path().join("server.crt"), dir.path().join("server.key"));
    std::fs::write(&cert, &first_cert).expect("write cert");
    std::fs::write(&key, &first_key).expect("write key");

    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command.arg("serve");
    for (name, _) in std::env::vars() {
        if name == "DATABASE_URL" || name.starts_with("SLUICE_") {
            command.env_remove(name);
        }
    }
    let child = command
        .args(["--resp", "127.0.0.1:0", "--resp-key"])
        .arg(&key)
        .env("SLUICE_RESP_CERT", &cert)
        .env("SLUICE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn sluice serve");
    let mut running = Running(child);
    let addr = announced_address(&mut running.0, "sluice: Redis protocol (TLS) on ");

    let mut kept = connect(&addr, &first_ca).expect("a client trusting the first CA");
    assert_eq!(
        call(&mut kept, b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"),
        b"+OK\r\n"
    );
    let mut plain = TcpStream::connect(&addr).expect("plain connect");
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    plain.write_all(b"PING\r\n").expect("write");
    let mut buf = [0u8; 16];
    let answered = plain.read(&mut buf).unwrap_or(0);
    assert!(
        !buf[..answered].starts_with(b"+PONG"),
        "plain TCP was served"
    );

    std::fs::write(&cert, &second_cert).expect("renew cert");
    std::fs::write(&key, &second_key).expect("renew key");
    let pid = running.0.id().to_string();
    let hup = Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .expect("kill");
    assert!(hup.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut renewed = loop {
        match connect(&addr, &second_ca) {
            Ok(stream) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("the renewed certificate was never served: {e}"),
        }
    };
    assert_eq!(
        call(&mut renewed, b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n"),
        b"$1\r\n1\r\n"
    );
    assert!(
        connect(&addr, &first_ca).is_err(),
        "the old certificate is still served"
    );
    // The connection opened before the reload goes on, and the process still runs.
    assert_eq!(call(&mut kept, b"*1\r\n$4\r\nPING\r\n"), b"+PONG\r\n");
    assert!(running.0.try_wait().expect("try_wait").is_none());
}
