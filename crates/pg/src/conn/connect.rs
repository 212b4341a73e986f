//! Opening a session: sockets, TLS negotiation, startup, authentication, and cancellation.

use super::io::Io;
use super::stream::Stream;
use super::tls::{self, TlsSetup};
use super::{Connection, auth};
use crate::config::{Config, Host, SslMode, Target, TargetSessionAttrs};
use crate::error::{DbError, Error, ErrorKind, Result};
use crate::protocol::backend::Message;
use crate::protocol::frontend;
use bytes::BytesMut;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

/// Where a connection went, so a cancel request can follow it.
#[derive(Clone, Debug)]
enum PeerAddr {
    Tcp(SocketAddr),
    Unix(PathBuf),
    Abstract(Vec<u8>),
}

/// Cancels the query running on a session, from any task (see [`Connection::cancel_token`]).
#[derive(Clone, Debug)]
pub struct CancelToken {
    peer: PeerAddr,
    process_id: i32,
    secret_key: Vec<u8>,
}

impl CancelToken {
    /// The backend process ID this token cancels queries of.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }

    /// Asks the server to cancel the session's current query (if any) and waits until the server
    /// has taken the request. The query then fails with SQLSTATE 57014.
    pub async fn cancel(&self) -> Result<()> {
        let mut buf = BytesMut::with_capacity(16);
        let key: [u8; 4] = self.secret_key.get(..4).and_then(|k| k.try_into().ok()).ok_or_else(|| {
            Error::new(ErrorKind::Usage, "this server's cancel key is not a 4-byte key")
        })?;
        frontend::cancel_request(self.process_id, i32::from_be_bytes(key), &mut buf);
        let mut stream = match &self.peer {
            PeerAddr::Tcp(addr) => Stream::Tcp(TcpStream::connect(addr).await.map_err(|e| {
                Error::with_source(ErrorKind::Connect, format!("cancel request to {addr} failed"), e)
            })?),
            PeerAddr::Unix(path) => Stream::Unix(UnixStream::connect(path).await.map_err(|e| {
                Error::with_source(
                    ErrorKind::Connect,
                    format!("cancel request to \"{}\" failed", path.display()),
                    e,
                )
            })?),
            PeerAddr::Abstract(name) => Stream::Unix(connect_abstract(name).map_err(|e| {
                Error::with_source(ErrorKind::Connect, "cancel request to an abstract socket failed", e)
            })?),
        };
        stream.write_all(&buf).await.map_err(Error::io)?;
        // The server closes the connection once it has read the request.
        let mut sink = [0u8; 16];
        while stream.read(&mut sink).await.map_err(Error::io)? > 0 {}
        Ok(())
    }
}

/// Tries each target in turn; the error lists why each one failed.
pub(super) async fn connect(config: &Config) -> Result<Connection> {
    let tls = tls::setup(config)?;
    let mut failures = Vec::new();
    let targets = config.targets();
    let prefer_standby = config.target_session_attrs() == TargetSessionAttrs::PreferStandby;
    let passes: &[TargetSessionAttrs] = if prefer_standby {
        &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
    } else {
        &[config.target_session_attrs()]
    };
    for &wanted in passes {
        for target in &targets {
            let attempt = connect_target(config, target, tls.as_ref());
            let result = match config.connect_timeout() {
                Some(limit) => tokio::time::timeout(limit, attempt).await.unwrap_or_else(|_| {
                    Err(Error::new(
                        ErrorKind::Timeout,
                        format!("timeout expired after {} s", limit.as_secs_f64()),
                    ))
                }),
                None => attempt.await,
            };
            match result {
                Ok(mut conn) => match session_matches(&mut conn, wanted).await {
                    Ok(true) => return Ok(conn),
                    Ok(false) => failures.push(format!(
                        "{}: server is not {}",
                        describe(target),
                        attrs_name(wanted)
                    )),
                    Err(e) => failures.push(format!("{}: {e}", describe(target))),
                },
                Err(e) if targets.len() == 1 && passes.len() == 1 => {
                    return Err(e.context(describe(target)));
                }
                Err(e) => failures.push(format!("{}: {e}", describe(target))),
            }
        }
    }
    Err(Error::new(ErrorKind::Connect, failures.join("\n")))
}

fn describe(target: &Target) -> String {
    match (target.socket_path(), target.hostaddr) {
        (Some(path), _) => format!("connection to server on socket \"{}\"", path.display()),
        (None, Some(ip)) => {
            format!("connection to server at \"{}\" ({ip}), port {}", target.host, target.port)
        }
        (None, None) => format!("connection to server at \"{}\", port {}", target.host, target.port),
    }
}

fn attrs_name(attrs: TargetSessionAttrs) -> &'static str {
    match attrs {
        TargetSessionAttrs::Any => "any",
        TargetSessionAttrs::ReadWrite => "read-write",
        TargetSessionAttrs::ReadOnly => "read-only",
        TargetSessionAttrs::Primary => "a primary",
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => "a standby",
    }
}

/// Checks `target_session_attrs` from the reported parameters, asking the server when an older
/// one does not report them.
async fn session_matches(conn: &mut Connection, wanted: TargetSessionAttrs) -> Result<bool> {
    if wanted == TargetSessionAttrs::Any {
        return Ok(true);
    }
    let flag = |conn: &Connection, name: &str| conn.parameter(name).map(|v| v == "on");
    let standby = match flag(conn, "in_hot_standby") {
        Some(v) => v,
        None => {
            let rows = conn.simple_query("SELECT pg_catalog.pg_is_in_recovery()").await?;
            rows.first().and_then(|r| r.get(0)).and_then(|r| r.raw(0)) == Some(b"t")
        }
    };
    let read_only = standby
        || match flag(conn, "default_transaction_read_only") {
            Some(v) => v,
            None => {
                let rows = conn.simple_query("SHOW transaction_read_only").await?;
                rows.first().and_then(|r| r.get(0)).and_then(|r| r.raw(0)) == Some(b"on")
            }
        };
    Ok(match wanted {
        TargetSessionAttrs::Any => true,
        TargetSessionAttrs::ReadWrite => !read_only,
        TargetSessionAttrs::ReadOnly => read_only,
        TargetSessionAttrs::Primary => !standby,
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => standby,
    })
}

/// Opens the socket to one target: the socket file, or each resolved address in turn for TCP.
async fn open_socket(config: &Config, target: &Target) -> Result<(Stream, PeerAddr)> {
    if let Some(path) = target.socket_path() {
        let not_there = |e| {
            Error::with_source(
                ErrorKind::Connect,
                "is the server running locally and accepting connections on that socket?",
                e,
            )
        };
        if target.host.is_abstract_socket() {
            let name = abstract_name(&path);
            let s = connect_abstract(&name).map_err(not_there)?;
            return Ok((Stream::Unix(s), PeerAddr::Abstract(name)));
        }
        let s = UnixStream::connect(&path).await.map_err(not_there)?;
        return Ok((Stream::Unix(s), PeerAddr::Unix(path)));
    }
    let addrs: Vec<SocketAddr> = match (&target.hostaddr, &target.host) {
        (Some(ip), _) => vec![SocketAddr::new(*ip, target.port)],
        (None, Host::Tcp(host)) => tokio::net::lookup_host((host.as_str(), target.port))
            .await
            .map_err(|e| {
                Error::with_source(
                    ErrorKind::Connect,
                    format!("could not translate host name \"{host}\" to an address"),
                    e,
                )
            })?
            .collect(),
        (None, Host::Unix(_)) => Vec::new(),
    };
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => {
                configure_tcp(&s, config)?;
                return Ok((Stream::Tcp(s), PeerAddr::Tcp(*addr)));
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((addr, e)) => Error::with_source(
            ErrorKind::Connect,
            format!("({addr}) is the server running on that host and accepting TCP/IP connections?"),
            e,
        ),
        None => Error::new(ErrorKind::Connect, format!("host \"{}\" has no address", target.host)),
    })
}

/// The abstract-namespace name of a socket path written `@dir/.s.PGSQL.port`.
fn abstract_name(path: &std::path::Path) -> Vec<u8> {
    path.as_os_str().as_encoded_bytes().get(1..).unwrap_or_default().to_vec()
}

/// Connects to a socket in Linux's abstract namespace (which tokio cannot name directly).
fn connect_abstract(name: &[u8]) -> std::io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    let s = std::os::unix::net::UnixStream::connect_addr(&addr)?;
    s.set_nonblocking(true)?;
    UnixStream::from_std(s)
}

fn configure_tcp(s: &TcpStream, config: &Config) -> Result<()> {
    let sock = socket2::SockRef::from(s);
    sock.set_tcp_nodelay(true).map_err(Error::io)?;
    if config.keepalives() {
        let mut keepalive = socket2::TcpKeepalive::new();
        if let Some(idle) = config.keepalives_idle() {
            keepalive = keepalive.with_time(idle);
        }
        if let Some(interval) = config.keepalives_interval() {
            keepalive = keepalive.with_interval(interval);
        }
        if let Some(count) = config.keepalives_count() {
            keepalive = keepalive.with_retries(count);
        }
        sock.set_tcp_keepalive(&keepalive).map_err(Error::io)?;
    }
    if let Some(timeout) = config.tcp_user_timeout() {
        sock.set_tcp_user_timeout(Some(timeout)).map_err(Error::io)?;
    }
    Ok(())
}

/// Connects to one target, negotiating TLS per sslmode (with libpq's fallbacks for `allow` and
/// `prefer`).
async fn connect_target(config: &Config, target: &Target, tls: Option<&TlsSetup>) -> Result<Connection> {
    let tcp = target.socket_path().is_none();
    // libpq ignores sslmode on unix sockets.
    let mode = if tcp { config.ssl_mode() } else { SslMode::Disable };
    match (mode, tls) {
        (SslMode::Disable, _) | (_, None) => start(config, target, None).await,
        (SslMode::Allow, Some(tls)) => match start(config, target, None).await {
            Err(e) if e.kind() == ErrorKind::Auth || e.is_db() => start(config, target, Some(tls)).await,
            other => other,
        },
        (SslMode::Prefer, Some(tls)) => match start(config, target, Some(tls)).await {
            Err(e) if e.kind() == ErrorKind::Tls => start(config, target, None).await,
            other => other,
        },
        (_, Some(tls)) => start(config, target, Some(tls)).await,
    }
}

/// Opens the socket, negotiates TLS when `tls` is given, and runs the startup handshake.
async fn start(config: &Config, target: &Target, tls: Option<&TlsSetup>) -> Result<Connection> {
    let (mut stream, peer) = open_socket(config, target).await?;
    let mut channel_binding = None;
    if let Some(tls) = tls {
        let mut buf = BytesMut::with_capacity(8);
        frontend::ssl_request(&mut buf);
        stream.write_all(&buf).await.map_err(Error::io)?;
        let mut answer = [0u8; 1];
        stream.read_exact(&mut answer).await.map_err(Error::io)?;
        match answer[0] {
            b'S' => {
                let Stream::Tcp(tcp) = stream else {
                    return Err(Error::new(ErrorKind::Tls, "TLS is only used over TCP"));
                };
                let host = match (&target.host, target.hostaddr) {
                    (Host::Tcp(h), _) => h.clone(),
                    (Host::Unix(_), Some(ip)) => ip.to_string(),
                    (Host::Unix(_), None) => "localhost".to_owned(),
                };
                let name = tls::server_name(&host)?;
                let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                let tls_stream = connector.connect(name, tcp).await.map_err(|e| {
                    Error::with_source(ErrorKind::Tls, "TLS handshake failed", e)
                })?;
                channel_binding = tls_stream
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .and_then(|c| tls::server_end_point(c));
                stream = Stream::Tls(Box::new(tls_stream));
            }
            b'N' if config.ssl_mode() == SslMode::Prefer || config.ssl_mode() == SslMode::Allow => {}
            b'N' => {
                return Err(Error::new(
                    ErrorKind::Tls,
                    "server does not support SSL, but SSL was required",
                ));
            }
            other => {
                return Err(Error::new(
                    ErrorKind::Tls,
                    format!("received invalid response to SSL negotiation: {}", other.escape_ascii()),
                ));
            }
        }
    }
    let mut io = Io::new(stream, config.read_buffer_size());
    let mut params: Vec<(&str, &str)> =
        vec![("user", config.user()), ("database", config.dbname()), ("client_encoding", "UTF8")];
    if let Some(name) = config.application_name() {
        params.push(("application_name", name));
    }
    if let Some(options) = config.options() {
        params.push(("options", options));
    }
    frontend::startup(&params, &mut io.write)?;
    io.flush().await?;

    let password = config.password_for(target);
    let auth = auth::authenticate(&mut io, config, password.as_deref(), channel_binding).await?;
    let (server_params, key, notices) = read_until_ready(&mut io).await?;
    auth::check_channel_binding(config, auth)?;
    let (process_id, secret_key) = key.unwrap_or((0, Vec::new()));
    let cancel = CancelToken { peer, process_id, secret_key };
    Ok(Connection::new(io, server_params, cancel, config, notices))
}

type StartupState = (Vec<(Box<str>, Box<str>)>, Option<(i32, Vec<u8>)>, VecDeque<DbError>);

/// After authentication: parameters, the cancel key, notices, up to ReadyForQuery.
async fn read_until_ready(io: &mut Io) -> Result<StartupState> {
    let mut params = Vec::new();
    let mut key = None;
    let mut notices = VecDeque::new();
    loop {
        let (tag, len) = io.message().await?;
        let body = &io.buffered()[5..len];
        match crate::protocol::backend::parse_body(tag, body)? {
            Message::ParameterStatus { name, value } => params.push((name.into(), value.into())),
            Message::BackendKeyData { process_id, secret_key } => {
                key = Some((process_id, secret_key.to_vec()));
            }
            Message::NoticeResponse(fields) => notices.push_back(DbError::from_fields(&fields)),
            Message::ErrorResponse(fields) => return Err(Error::db(DbError::from_fields(&fields))),
            Message::ReadyForQuery(_) => {
                io.consume(len);
                return Ok((params, key, notices));
            }
            Message::NegotiateProtocolVersion { .. } => {}
            _ => return Err(Error::unexpected("during startup", tag)),
        }
        io.consume(len);
    }
}
