//! TLS with rustls: libpq's sslmode semantics, certificate verifiers, channel-binding data.

use crate::config::{Config, SslMode};
use crate::error::{Error, ErrorKind, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a certificate is checked, derived from sslmode and whether a root certificate exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verification {
    /// Encrypt only (prefer, allow, require without a root certificate).
    None,
    /// The chain must lead to a trusted root; any host name.
    Chain,
    /// The chain and the host name.
    Full,
}

/// The TLS settings of a connection attempt.
#[derive(Clone, Debug)]
pub(crate) struct TlsSetup {
    pub(crate) config: Arc<ClientConfig>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn default_postgresql_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".postgresql"))
}

/// Builds the rustls configuration for `config`'s sslmode, or `None` for `disable`.
pub(crate) fn setup(config: &Config) -> Result<Option<TlsSetup>> {
    let mode = config.ssl_mode();
    if mode == SslMode::Disable {
        return Ok(None);
    }
    let root = config
        .ssl_root_cert()
        .map(Path::to_path_buf)
        .or_else(|| default_postgresql_dir().map(|d| d.join("root.crt")))
        .filter(|p| p.exists());
    let system = config.ssl_uses_system_roots();
    let verification = match mode {
        SslMode::VerifyFull => Verification::Full,
        SslMode::VerifyCa => Verification::Chain,
        // libpq: "if a root CA file exists, sslmode=require behaves like verify-ca".
        SslMode::Require if root.is_some() || system => Verification::Chain,
        _ => Verification::None,
    };
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::with_source(ErrorKind::Tls, "TLS setup failed", e))?;
    let verifier: Arc<dyn ServerCertVerifier> = match verification {
        Verification::None => Arc::new(AcceptAnyCertificate(provider)),
        Verification::Chain | Verification::Full if system => {
            let roots = system_roots()?;
            let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| Error::with_source(ErrorKind::Tls, "TLS verifier setup failed", e))?;
            if verification == Verification::Full { inner } else { Arc::new(ChainOnly(inner)) }
        }
        Verification::Chain | Verification::Full => {
            let path = root.ok_or_else(|| {
                Error::new(
                    ErrorKind::Tls,
                    format!(
                        "sslmode={} needs a root certificate: set sslrootcert, or put the CA \
                         certificate in ~/.postgresql/root.crt",
                        if mode == SslMode::VerifyFull { "verify-full" } else { "verify-ca" }
                    ),
                )
            })?;
            let roots = load_roots(&path)?;
            let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| Error::with_source(ErrorKind::Tls, "TLS verifier setup failed", e))?;
            if verification == Verification::Full {
                inner
            } else {
                Arc::new(ChainOnly(inner))
            }
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let client = client_certificate(config)?;
    let mut tls = match client {
        Some((certs, key)) => builder.with_client_auth_cert(certs, key).map_err(|e| {
            Error::with_source(ErrorKind::Tls, "the client certificate or key is not usable", e)
        })?,
        None => builder.with_no_client_auth(),
    };
    tls.enable_sni = true;
    Ok(Some(TlsSetup { config: Arc::new(tls) }))
}

/// The operating system's trusted roots (`sslrootcert=system`).
fn system_roots() -> Result<RootCertStore> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(Error::new(
            ErrorKind::Tls,
            "sslrootcert=system, but no trusted root certificate was found on this system \
             (install ca-certificates, or set sslrootcert to a file)",
        ));
    }
    Ok(roots)
}

fn load_roots(path: &Path) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| {
        Error::with_source(
            ErrorKind::Tls,
            format!("cannot read root certificate file \"{}\"", path.display()),
            e,
        )
    })?;
    for cert in certs {
        let cert = cert.map_err(|e| {
            Error::with_source(ErrorKind::Tls, format!("bad PEM in \"{}\"", path.display()), e)
        })?;
        roots.add(cert).map_err(|e| {
            Error::with_source(
                ErrorKind::Tls,
                format!("unusable root certificate in \"{}\"", path.display()),
                e,
            )
        })?;
    }
    if roots.is_empty() {
        return Err(Error::new(
            ErrorKind::Tls,
            format!("root certificate file \"{}\" holds no certificate", path.display()),
        ));
    }
    Ok(roots)
}

type ClientAuth = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// sslcert/sslkey, defaulting to ~/.postgresql/postgresql.{crt,key} when both exist.
fn client_certificate(config: &Config) -> Result<Option<ClientAuth>> {
    let dir = default_postgresql_dir();
    let cert = config
        .ssl_cert()
        .map(Path::to_path_buf)
        .or_else(|| dir.as_ref().map(|d| d.join("postgresql.crt")))
        .filter(|p| p.exists());
    let key = config
        .ssl_key()
        .map(Path::to_path_buf)
        .or_else(|| dir.as_ref().map(|d| d.join("postgresql.key")))
        .filter(|p| p.exists());
    let (Some(cert), Some(key)) = (cert, key) else {
        return Ok(None);
    };
    let read_err = |what: &str, p: &Path, e: rustls::pki_types::pem::Error| {
        Error::with_source(ErrorKind::Tls, format!("cannot read {what} \"{}\"", p.display()), e)
    };
    let certs = CertificateDer::pem_file_iter(&cert)
        .map_err(|e| read_err("client certificate", &cert, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read_err("client certificate", &cert, e))?;
    let key_der = PrivateKeyDer::from_pem_file(&key).map_err(|e| read_err("client key", &key, e))?;
    Ok(Some((certs, key_der)))
}

/// The rustls server name for a host: its IP address when it is one, else its DNS name.
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>> {
    ServerName::try_from(host.to_owned()).map_err(|e| {
        Error::with_source(ErrorKind::Tls, format!("\"{host}\" is not a valid TLS server name"), e)
    })
}

/// Accepts any certificate but still checks the handshake signatures (libpq's `require`).
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Verifies the chain but not the host name (libpq's `verify-ca`).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The name is checked only after the chain validated, so a name error means the chain
        // is good.
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The `tls-server-end-point` channel-binding data (RFC 5929) of a server certificate: its hash
/// with the hash function of its signature algorithm (SHA-256 for MD5 and SHA-1). `None` when
/// the algorithm has no such hash (Ed25519, RSA-PSS), as PostgreSQL also refuses those.
pub(crate) fn server_end_point(cert_der: &[u8]) -> Option<Vec<u8>> {
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    let oid = signature_algorithm_oid(cert_der)?;
    let (prefix, last) = oid.split_last().map(|(l, p)| (p, *l))?;
    let bits = match (prefix, last) {
        (RSA, 4 | 5 | 11) | (ECDSA, 1 | 2) => 256,
        (RSA, 12) | (ECDSA, 3) => 384,
        (RSA, 13) | (ECDSA, 4) => 512,
        _ => return None,
    };
    Some(match bits {
        256 => sha2::Sha256::digest(cert_der).to_vec(),
        384 => sha2::Sha384::digest(cert_der).to_vec(),
        _ => sha2::Sha512::digest(cert_der).to_vec(),
    })
}

/// Reads one DER element at the start of `der`: (tag, contents, rest).
fn der_element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let (bytes, rest) = rest.split_at_checked(n)?;
        (bytes.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize), rest)
    };
    let (contents, rest) = rest.split_at_checked(len)?;
    Some((tag, contents, rest))
}

/// The signatureAlgorithm OID of an X.509 certificate:
/// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }`.
fn signature_algorithm_oid(cert_der: &[u8]) -> Option<&[u8]> {
    let (0x30, cert, _) = der_element(cert_der)? else { return None };
    let (0x30, _tbs, rest) = der_element(cert)? else { return None };
    let (0x30, algorithm, _) = der_element(rest)? else { return None };
    let (0x06, oid, _) = der_element(algorithm)? else { return None };
    Some(oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_point_hash_follows_the_signature_algorithm() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let hash = server_end_point(cert.der()).unwrap();
        assert_eq!(hash, sha2::Sha384::digest(cert.der()).to_vec());

        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(server_end_point(cert.der()).unwrap().len(), 32);

        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(server_end_point(cert.der()), None);
    }

    #[test]
    fn garbage_certificates_give_none() {
        assert_eq!(server_end_point(b""), None);
        assert_eq!(server_end_point(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(server_end_point(&[0x30, 0x02, 0x30, 0x00]), None);
    }
}
