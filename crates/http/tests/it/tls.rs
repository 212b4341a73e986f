//! HTTPS on the HTTP listener: a client that trusts the certificate's CA is served, plain HTTP
//! on the port is not, curl with `--cacert` gets its answer, and a certificate renewed on disk is
//! used by new connections after a reload while open ones keep theirs.
#![allow(clippy::unwrap_used)]

use crate::server_support;

use server_support::{Server, bounded};
use sluice_http::{Router, ServerOptions, Tls};
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A self-signed certificate for localhost and 127.0.0.1 named `name`, written as PEM files.
fn certificate(dir: &Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    let cert_path = dir.join(format!("{name}.crt"));
    let key_path = dir.join(format!("{name}.key"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    (cert_path, key_path, cert.der().to_vec())
}

/// A TLS client trusting `roots` (DER certificates).
fn client(roots: &[&[u8]]) -> tokio_rustls::TlsConnector {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store
            .add(rustls::pki_types::CertificateDer::from(root.to_vec()))
            .unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// Connects over TLS; the server's certificate and a stream for requests.
async fn connect(
    addr: std::net::SocketAddr,
    roots: &[&[u8]],
) -> std::io::Result<(
    Vec<u8>,
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
)> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let stream = client(roots).connect(name, tcp).await?;
    let presented = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default();
    Ok((presented, stream))
}

/// `GET /-/live` on an open stream (keep-alive); the status line.
async fn live<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(stream: &mut S) -> String {
    stream
        .write_all(b"GET /-/live HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0; 4096];
    let n = stream.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

// Two worker threads: curl runs as a blocking child process while the server answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_serves_trusting_clients_and_reloads_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, first) = certificate(dir.path(), "first");
    let tls = Tls::from_files(&cert, &key, sluice_http::ALPN).unwrap();
    let options = ServerOptions {
        tls: Some(tls.clone()),
        ..ServerOptions::default()
    };
    let mut server = Server::start(Router::new(), options).await;

    let (presented, mut kept) = bounded(connect(server.addr, &[&first])).await.unwrap();
    assert_eq!(presented, first);
    assert_eq!(bounded(live(&mut kept)).await, "HTTP/1.1 200 OK");

    // A client that does not trust the certificate is refused by its own check.
    let (_, _, stranger) = certificate(dir.path(), "stranger");
    assert!(bounded(connect(server.addr, &[&stranger])).await.is_err());

    // Plain HTTP on the HTTPS port gets no HTTP answer.
    let mut plain = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    plain
        .write_all(b"GET /-/live HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = bounded(plain.read_to_end(&mut answer)).await;
    assert!(!String::from_utf8_lossy(&answer).contains("200 OK"));

    // curl, trusting the certificate as a CA file.
    match std::process::Command::new("curl")
        .args(["-sS", "--fail", "--cacert"])
        .arg(&cert)
        .arg(format!("https://localhost:{}/-/live", server.addr.port()))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "curl: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(error) if std::env::var_os("CI").is_some() => panic!("curl: {error}"),
        Err(error) => eprintln!("skipping the curl check: {error}"),
    }

    // A renewed certificate in the same files: used from the next connection on.
    let (renewed_cert, renewed_key, second) = certificate(dir.path(), "second");
    std::fs::rename(&renewed_cert, &cert).unwrap();
    std::fs::rename(&renewed_key, &key).unwrap();
    tls.reload().unwrap();
    let (presented, mut fresh) = bounded(connect(server.addr, &[&second])).await.unwrap();
    assert_eq!(presented, second);
    assert_eq!(bounded(live(&mut fresh)).await, "HTTP/1.1 200 OK");
    // The connection opened before the reload goes on.
    assert_eq!(bounded(live(&mut kept)).await, "HTTP/1.1 200 OK");

    // A broken file: the reload fails, naming it, and the certificate in use stays.
    std::fs::write(&key, "not a key").unwrap();
    let error = tls.reload().unwrap_err().to_string();
    assert!(
        error.contains("second.key") || error.contains(&key.display().to_string()),
        "{error}"
    );
    let (presented, _) = bounded(connect(server.addr, &[&second])).await.unwrap();
    assert_eq!(presented, second);
    server.stop();
    bounded(server.task).await.unwrap().unwrap();
}
