//! HTTPS on the HTTP listener: the certificate chain and key read from PEM files, reloaded
//! without dropping connections (connections keep the configuration they began with).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

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

/// The listener's TLS configuration: the files it comes from and the current acceptor.
pub struct Tls {
    cert: PathBuf,
    key: PathBuf,
    current: RwLock<tokio_rustls::TlsAcceptor>,
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
    /// PKCS#1 or SEC1).
    pub fn from_files(cert: &Path, key: &Path) -> Result<Arc<Tls>, TlsError> {
        let acceptor = acceptor(cert, key)?;
        Ok(Arc::new(Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            current: RwLock::new(acceptor),
        }))
    }

    /// Reads the files again; new connections use them, open ones keep theirs. On an error the
    /// configuration in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let acceptor = acceptor(&self.cert, &self.key)?;
        if let Ok(mut current) = self.current.write() {
            *current = acceptor;
        }
        Ok(())
    }

    /// The acceptor for a new connection.
    pub(crate) fn acceptor(&self) -> Option<tokio_rustls::TlsAcceptor> {
        self.current.read().ok().map(|current| current.clone())
    }
}

fn acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, TlsError> {
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
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
