//! Authentication: cleartext, MD5 and SCRAM-SHA-256 (with channel binding over TLS), using the
//! `postgres-protocol` crate's implementations rather than hand-written crypto.

use super::io::Io;
use crate::config::{ChannelBinding, Config};
use crate::error::{DbError, Error, ErrorKind, Result};
use crate::protocol::backend::{Authentication, Message, parse_body};
use crate::protocol::frontend;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ScramSha256};

/// Which method the server made us use, for the channel-binding check afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    /// The server asked for nothing (trust, peer, cert).
    None,
    /// A password in clear text.
    Cleartext,
    /// An MD5 digest.
    Md5,
    /// SCRAM-SHA-256 without channel binding.
    Scram,
    /// SCRAM-SHA-256-PLUS, bound to the TLS session.
    ScramPlus,
}

/// One authentication message from the server, owned.
enum Request {
    Ok,
    Cleartext,
    Md5([u8; 4]),
    Sasl(Vec<Vec<u8>>),
    SaslContinue(Vec<u8>),
    SaslFinal(Vec<u8>),
}

async fn next_request(io: &mut Io) -> Result<Request> {
    loop {
        let (tag, len) = io.message().await?;
        let body = &io.buffered()[5..len];
        let request = match parse_body(tag, body)? {
            Message::Authentication(a) => match a {
                Authentication::Ok => Request::Ok,
                Authentication::CleartextPassword => Request::Cleartext,
                Authentication::Md5Password { salt } => Request::Md5(salt),
                Authentication::Sasl { mechanisms } => Request::Sasl(
                    Authentication::sasl_mechanisms(mechanisms).map(<[u8]>::to_vec).collect(),
                ),
                Authentication::SaslContinue(d) => Request::SaslContinue(d.to_vec()),
                Authentication::SaslFinal(d) => Request::SaslFinal(d.to_vec()),
                Authentication::Unsupported(code) => {
                    let name = match code {
                        2 => "Kerberos V5",
                        6 => "SCM credentials",
                        7 | 8 => "GSSAPI",
                        9 => "SSPI",
                        _ => "an unknown method",
                    };
                    return Err(Error::new(
                        ErrorKind::Auth,
                        format!(
                            "the server asks for {name} authentication (code {code}), which \
                             Sluice does not support; use password, md5 or scram-sha-256 in \
                             pg_hba.conf"
                        ),
                    ));
                }
            },
            Message::ErrorResponse(fields) => {
                let db = DbError::from_fields(&fields);
                io.consume(len);
                return Err(auth_error(db));
            }
            Message::NoticeResponse(_) | Message::NegotiateProtocolVersion { .. } => {
                io.consume(len);
                continue;
            }
            _ => return Err(Error::unexpected("during authentication", tag)),
        };
        io.consume(len);
        return Ok(request);
    }
}

/// Server errors during authentication: 28xxx (invalid authorization) become `ErrorKind::Auth`
/// while keeping the server's fields.
fn auth_error(db: DbError) -> Error {
    let auth = db.code().starts_with("28");
    let e = Error::db(db);
    if auth { e.context("authentication failed") } else { e }
}

fn need_password(password: Option<&str>) -> Result<&str> {
    password.ok_or_else(|| {
        Error::new(
            ErrorKind::Auth,
            "the server requires a password but none was supplied: set it in the URL, with \
             password=, PGPASSWORD or ~/.pgpass",
        )
    })
}

/// Runs the authentication exchange until AuthenticationOk.
pub(super) async fn authenticate(
    io: &mut Io,
    config: &Config,
    password: Option<&str>,
    tls_end_point: Option<Vec<u8>>,
) -> Result<Method> {
    let mut method = Method::None;
    loop {
        match next_request(io).await? {
            Request::Ok => return Ok(method),
            Request::Cleartext => {
                frontend::password(need_password(password)?.as_bytes(), &mut io.write)?;
                io.flush().await?;
                method = Method::Cleartext;
            }
            Request::Md5(salt) => {
                let pw = need_password(password)?;
                let hash = md5_hash(config.user().as_bytes(), pw.as_bytes(), salt);
                frontend::password(hash.as_bytes(), &mut io.write)?;
                io.flush().await?;
                method = Method::Md5;
            }
            Request::Sasl(mechanisms) => {
                let pw = need_password(password)?;
                method = scram(io, config, pw, &mechanisms, tls_end_point.clone()).await?;
            }
            Request::SaslContinue(_) | Request::SaslFinal(_) => {
                return Err(Error::new(ErrorKind::Protocol, "SASL message outside a SASL exchange"));
            }
        }
    }
}

async fn scram(
    io: &mut Io,
    config: &Config,
    password: &str,
    mechanisms: &[Vec<u8>],
    tls_end_point: Option<Vec<u8>>,
) -> Result<Method> {
    let offers = |m: &str| mechanisms.iter().any(|x| x == m.as_bytes());
    let want_binding = config.channel_binding() != ChannelBinding::Disable;
    let (mechanism, binding, method) = match tls_end_point {
        Some(data) if want_binding && offers(sasl::SCRAM_SHA_256_PLUS) => (
            sasl::SCRAM_SHA_256_PLUS,
            sasl::ChannelBinding::tls_server_end_point(data),
            Method::ScramPlus,
        ),
        // We could bind but the server did not offer it: say so ("y"), per RFC 5802.
        Some(_) if offers(sasl::SCRAM_SHA_256) => {
            (sasl::SCRAM_SHA_256, sasl::ChannelBinding::unrequested(), Method::Scram)
        }
        None if offers(sasl::SCRAM_SHA_256) => {
            (sasl::SCRAM_SHA_256, sasl::ChannelBinding::unsupported(), Method::Scram)
        }
        _ => {
            let offered: Vec<_> = mechanisms.iter().map(|m| String::from_utf8_lossy(m)).collect();
            return Err(Error::new(
                ErrorKind::Auth,
                format!("none of the server's SASL mechanisms ({}) is supported", offered.join(", ")),
            ));
        }
    };
    if method == Method::Scram && config.channel_binding() == ChannelBinding::Require {
        return Err(Error::new(
            ErrorKind::Auth,
            "channel binding is required, but the connection does not support it (it needs TLS \
             and SCRAM-SHA-256-PLUS)",
        ));
    }
    let mut scram = ScramSha256::new(password.as_bytes(), binding);
    frontend::sasl_initial_response(mechanism, scram.message(), &mut io.write)?;
    io.flush().await?;
    let Request::SaslContinue(challenge) = next_request(io).await? else {
        return Err(Error::new(ErrorKind::Protocol, "expected a SASL challenge"));
    };
    scram
        .update(&challenge)
        .map_err(|e| Error::with_source(ErrorKind::Auth, "SCRAM exchange failed", e))?;
    frontend::sasl_response(scram.message(), &mut io.write)?;
    io.flush().await?;
    let Request::SaslFinal(outcome) = next_request(io).await? else {
        return Err(Error::new(ErrorKind::Protocol, "expected the SASL outcome"));
    };
    scram.finish(&outcome).map_err(|e| {
        Error::with_source(ErrorKind::Auth, "the server's SCRAM signature is invalid", e)
    })?;
    Ok(method)
}

/// libpq refuses a session that was not bound to the TLS channel when `channel_binding=require`,
/// whatever method the server chose (trust included).
pub(super) fn check_channel_binding(config: &Config, method: Method) -> Result<()> {
    if config.channel_binding() == ChannelBinding::Require && method != Method::ScramPlus {
        return Err(Error::new(
            ErrorKind::Auth,
            "channel binding required, but server authenticated client without channel binding",
        ));
    }
    Ok(())
}
