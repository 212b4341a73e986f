//! TLS material for a cluster: a private CA and a server certificate for DNS name `localhost`.
//!
//! The server certificate names `localhost` only, not `127.0.0.1`, so a client connecting to
//! 127.0.0.1 passes `sslmode=verify-ca` but fails `verify-full` (host name mismatch), and one
//! connecting to `localhost` passes both.

#[cfg(feature = "test-support")]
use std::fs;
#[cfg(feature = "test-support")]
use std::io::Write as _;
#[cfg(feature = "test-support")]
use std::os::unix::fs::OpenOptionsExt;
#[cfg(feature = "test-support")]
use std::path::{Path, PathBuf};

#[cfg(feature = "test-support")]
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

#[cfg(feature = "test-support")]
use crate::error::{EmbeddedError, Result};
#[cfg(feature = "test-support")]
use crate::user::{ServerUser, give_to};

/// Server certificate file name in the data directory.
#[cfg(feature = "test-support")]
pub const SERVER_CERT: &str = "server.crt";
/// Server key file name in the data directory.
#[cfg(feature = "test-support")]
pub const SERVER_KEY: &str = "server.key";
/// CA certificate file name in the data directory.
pub const CA_CERT: &str = "sluice-ca.crt";

/// PEM texts of a fresh CA and a server certificate it signed.
#[cfg(feature = "test-support")]
pub struct GeneratedTls {
    /// The CA certificate (clients trust this one).
    pub ca_cert_pem: String,
    /// The server certificate.
    pub server_cert_pem: String,
    /// The server's private key.
    pub server_key_pem: String,
}

/// Generates a CA and a server certificate for DNS name `localhost`.
#[cfg(feature = "test-support")]
pub fn generate() -> Result<GeneratedTls> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.distinguished_name = name("sluice-embedded test CA");
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate()?;
    let mut server_params = CertificateParams::new(vec!["localhost".to_owned()])?;
    server_params.distinguished_name = name("localhost");
    server_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server_params.signed_by(&server_key, &issuer)?;

    Ok(GeneratedTls {
        ca_cert_pem: ca_cert.pem(),
        server_cert_pem: server_cert.pem(),
        server_key_pem: server_key.serialize_pem(),
    })
}

#[cfg(feature = "test-support")]
fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn.push(DnType::OrganizationName, "sluice-embedded");
    dn
}

/// Writes server.crt, server.key (0600) and sluice-ca.crt (0644) into `data_dir`, owned by the
/// server user, unless all three exist already. Returns the CA certificate path.
#[cfg(feature = "test-support")]
pub fn ensure_files(data_dir: &Path, user: Option<&ServerUser>) -> Result<PathBuf> {
    let ca_path = data_dir.join(CA_CERT);
    let cert_path = data_dir.join(SERVER_CERT);
    let key_path = data_dir.join(SERVER_KEY);
    if ca_path.is_file() && cert_path.is_file() && key_path.is_file() {
        return Ok(ca_path);
    }
    let generated = generate()?;
    write_file(&key_path, &generated.server_key_pem, 0o600, user)?;
    write_file(&cert_path, &generated.server_cert_pem, 0o644, user)?;
    write_file(&ca_path, &generated.ca_cert_pem, 0o644, user)?;
    Ok(ca_path)
}

#[cfg(feature = "test-support")]
fn write_file(path: &Path, text: &str, mode: u32, user: Option<&ServerUser>) -> Result<()> {
    // Remove first so the mode applies to a fresh file.
    let _ = fs::remove_file(path);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| EmbeddedError::io("create", path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| EmbeddedError::io("write", path, e))?;
    give_to(path, user)
}

#[cfg(all(test, feature = "test-support"))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn writes_private_key_and_certificates_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = ensure_files(dir.path(), None).expect("tls files");
        let key_mode = fs::metadata(dir.path().join(SERVER_KEY))
            .expect("key")
            .permissions()
            .mode();
        assert_eq!(key_mode & 0o777, 0o600);
        let first = fs::read_to_string(&ca).expect("ca");
        assert!(first.starts_with("-----BEGIN CERTIFICATE-----"));
        let again = ensure_files(dir.path(), None).expect("tls files");
        assert_eq!(
            fs::read_to_string(again).expect("ca"),
            first,
            "kept, not regenerated"
        );
    }
}
