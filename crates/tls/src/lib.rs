//! TLS for a listener: the certificate chain and key read from PEM files, reloaded without
//! dropping connections (connections keep the configuration they began with).
//!
//! The HTTP gate (HTTPS) and the Redis gate (Redis 6's TLS) share it; `sluice serve` reads the
//! files again on SIGHUP.

#![warn(missing_docs)]

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use tokio_rustls::TlsAcceptor;
pub use tokio_rustls::server::TlsStream;

/// Why a certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file could not be read or holds no certificate.
    #[error("reading the TLS certificate {path}: {reason}")]
    Certificate {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The key file could not be read or holds no key.
    #[error("reading the TLS key {path}: {reason}")]
    Key {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The two do not go together (the key is not the certificate's, say).
    #[error("the TLS certificate {cert} and key {key} do not make a configuration: {reason}")]
    Config {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What rustls said.
        reason: String,
    },
}

/// A listener's TLS configuration: the files it comes from and the current acceptor.
pub struct Tls {
    cert: PathBuf,
    key: PathBuf,
    /// Application protocols offered by ALPN (empty: none negotiated).
    alpn: Vec<Vec<u8>>,
    current: RwLock<TlsAcceptor>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish()
    }
}

impl Tls {
    /// Reads `cert` (a PEM chain, the server's certificate first) and `key` (PEM, PKCS#8,
    /// PKCS#1 or SEC1); `alpn` lists the application protocols offered (HTTP offers
    /// `http/1.1`; Redis offers none, as redis-server).
    pub fn from_files(cert: &Path, key: &Path, alpn: &[&[u8]]) -> Result<Arc<Tls>, TlsError> {
        let alpn: Vec<Vec<u8>> = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = acceptor(cert, key, &alpn)?;
        Ok(Arc::new(Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            alpn,
            current: RwLock::new(acceptor),
        }))
    }

    /// Reads the files again; new connections use them, open ones keep theirs. On an error the
    /// configuration in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let acceptor = acceptor(&self.cert, &self.key, &self.alpn)?;
        if let Ok(mut current) = self.current.write() {
            *current = acceptor;
        }
        Ok(())
    }

    /// The acceptor for a new connection.
    pub fn acceptor(&self) -> Option<TlsAcceptor> {
        self.current.read().ok().map(|current| current.clone())
    }

    /// The certificate file.
    pub fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// The key file.
    pub fn key_path(&self) -> &Path {
        &self.key
    }
}

fn acceptor(cert: &Path, key: &Path, alpn: &[Vec<u8>]) -> Result<TlsAcceptor, TlsError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError::Certificate {
            path: cert.to_path_buf(),
            reason: e.to_string(),
        })?;
    if chain.is_empty() {
        return Err(TlsError::Certificate {
            path: cert.to_path_buf(),
            reason: "no CERTIFICATE in the file".into(),
        });
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.to_path_buf(),
        reason: e.to_string(),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| {
            builder
                .with_no_client_auth()
                .with_single_cert(chain, private)
        })
        .map_err(|e| TlsError::Config {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            reason: e.to_string(),
        })?;
    config.alpn_protocols = alpn.to_vec();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let key = rcgen::KeyPair::generate().expect("key");
        let params = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        let cert = params.self_signed(&key).expect("cert");
        let (cert_path, key_path) = (
            dir.join(format!("{name}.crt")),
            dir.join(format!("{name}.key")),
        );
        std::fs::write(&cert_path, cert.pem()).expect("write cert");
        std::fs::write(&key_path, key.serialize_pem()).expect("write key");
        (cert_path, key_path)
    }

    #[test]
    fn errors_name_the_file_and_a_bad_reload_keeps_the_configuration() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = write_pair(dir.path(), "a");
        let (_, other_key) = write_pair(dir.path(), "b");
        let missing = dir.path().join("missing.crt");
        let error = Tls::from_files(&missing, &key, &[]).expect_err("missing cert");
        assert!(error.to_string().contains("missing.crt"), "{error}");
        let empty = dir.path().join("empty.crt");
        std::fs::write(&empty, "").expect("write");
        let error = Tls::from_files(&empty, &key, &[]).expect_err("empty cert");
        assert!(error.to_string().contains("no CERTIFICATE"), "{error}");
        let error = Tls::from_files(&cert, &other_key, &[]).expect_err("mismatched key");
        assert!(matches!(error, TlsError::Config { .. }), "{error}");

        let tls = Tls::from_files(&cert, &key, &[b"http/1.1"]).expect("load");
        std::fs::write(&cert, "garbage").expect("break the file");
        assert!(tls.reload().is_err());
        assert!(tls.acceptor().is_some(), "the acceptor in use stays");
    }
}
