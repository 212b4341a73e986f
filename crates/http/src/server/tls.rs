//! HTTPS on the HTTP listener: the shared certificate loader (sluice-tls), offering HTTP/1.1 by
//! ALPN.

pub use sluice_tls::{Tls, TlsError};

/// The application protocols the HTTP listener offers by ALPN.
pub const ALPN: &[&[u8]] = &[b"http/1.1"];
