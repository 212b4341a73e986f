//! A connection to PostgreSQL: session state, asynchronous messages, and the bookkeeping that
//! keeps the protocol in step even when an operation's future is dropped halfway.

mod auth;
mod connect;
pub(crate) mod io;
mod stream;
mod tls;

pub use connect::CancelToken;

use crate::config::Config;
use crate::error::{DbError, Error, Result, Severity};
use crate::protocol::backend::{self, Message, TransactionStatus};
use crate::protocol::frontend;
use crate::statement::StatementCache;
use io::Io;
use std::collections::VecDeque;

/// How many notices are kept for [`Connection::take_notices`] before the oldest are dropped.
const MAX_QUEUED_NOTICES: usize = 256;

/// A NOTIFY received on a channel this session LISTENs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The process ID of the notifying backend.
    pub process_id: i32,
    /// The channel.
    pub channel: String,
    /// The payload.
    pub payload: String,
}

/// Work to send in front of the next request, so it costs no round trip of its own.
#[derive(Debug, Default)]
pub(crate) struct Prelude {
    /// Close these prepared statements (evicted from the cache).
    pub(crate) close_statements: Vec<String>,
    /// Roll back the transaction a dropped `Transaction` left open.
    pub(crate) rollback: bool,
    /// Statements queued by the caller, run in order.
    pub(crate) queries: Vec<std::borrow::Cow<'static, str>>,
    /// A session reset: fused into the next request's own Sync group when that is safe, else
    /// sent as a simple query of its own (see [`Connection::prepend_reset`]).
    pub(crate) reset: Option<&'static [&'static str]>,
    /// Open a transaction (the `BEGIN` of `transaction()`, sent with the first statement).
    pub(crate) begin: Option<std::borrow::Cow<'static, str>>,
}

type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// One session with a PostgreSQL server.
///
/// Operations take `&mut self`: one request at a time, written in one system call, its rows read
/// in blocks straight from the socket buffer. Dropping an operation's future or stream part-way is
/// safe: the next operation first reads the rest of the abandoned response (or fails an abandoned
/// `COPY FROM STDIN`), so a connection never carries stale results into the next request.
pub struct Connection {
    pub(crate) io: Io,
    /// ReadyForQuery messages still due for requests already sent.
    pub(crate) pending_syncs: u32,
    /// A `COPY FROM STDIN` is open: the server waits for data.
    pub(crate) copy_in_open: bool,
    /// The reset travelling inside the request in flight's Sync group: queued again if that
    /// group fails, since its effects are rolled back with it.
    fused_reset: Option<&'static [&'static str]>,
    /// An ErrorResponse arrived since the last ReadyForQuery.
    group_failed: bool,
    /// The reset statement sets prepared on the server, by the address and length of their
    /// static slice: a reset then costs Bind/Execute per statement, no parsing.
    prepared_resets: Vec<(usize, usize)>,
    /// `session_authorization` as the server reported it at startup.
    initial_session_authorization: Option<Box<str>>,
    /// The request in flight used the extended protocol. A COPY FROM STDIN met in its response
    /// then needs a Sync after the CopyFail, because the server ignores Syncs sent before.
    pub(crate) extended_in_flight: bool,
    pub(crate) tx_status: TransactionStatus,
    pub(crate) statements: StatementCache,
    pub(crate) prelude: Prelude,
    params: Vec<(Box<str>, Box<str>)>,
    cancel: CancelToken,
    notices: VecDeque<DbError>,
    notice_handler: Option<NoticeHandler>,
    notifications: VecDeque<Notification>,
    /// Types looked up in the catalog ([`Connection::load_types`]).
    pub(crate) types: crate::catalog::TypeCache,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("process_id", &self.cancel.process_id())
            .field("tls", &self.io.is_tls())
            .field("transaction_status", &self.tx_status)
            .field("pending_syncs", &self.pending_syncs)
            .field("broken", &self.io.is_broken())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects with a URL (`postgres://...`) or a conninfo string (`host=... user=...`), filled
    /// in from the `PG*` environment variables and `~/.pgpass` as libpq does.
    pub async fn connect(conninfo: &str) -> Result<Connection> {
        let config = Config::parse(conninfo)?;
        Connection::connect_with(&config).await
    }

    /// Connects with a parsed configuration, trying each host in turn.
    pub async fn connect_with(config: &Config) -> Result<Connection> {
        connect::connect(config).await
    }

    pub(crate) fn new(
        io: Io,
        params: Vec<(Box<str>, Box<str>)>,
        cancel: CancelToken,
        config: &Config,
        notices: VecDeque<DbError>,
    ) -> Connection {
        let initial_session_authorization = params
            .iter()
            .find(|(name, _)| &**name == "session_authorization")
            .map(|(_, value)| value.clone());
        Connection {
            initial_session_authorization,
            io,
            pending_syncs: 0,
            copy_in_open: false,
            extended_in_flight: false,
            fused_reset: None,
            group_failed: false,
            prepared_resets: Vec::new(),
            tx_status: TransactionStatus::Idle,
            statements: StatementCache::new(
                config.prepare_threshold(),
                config.statement_cache_capacity(),
            ),
            prelude: Prelude::default(),
            params,
            cancel,
            notices,
            notice_handler: None,
            notifications: VecDeque::new(),
            types: Default::default(),
        }
    }

    /// A server parameter reported at startup or since: `server_version`, `client_encoding`,
    /// `TimeZone`, `DateStyle`, `integer_datetimes`, `standard_conforming_strings`, ...
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| &**v)
    }

    /// Whether the session's authorization may differ from the one it started with: the server
    /// reports `session_authorization` whenever it changes (even inside a function), so an
    /// unchanged report proves `SET SESSION AUTHORIZATION` left nothing behind. A server that
    /// never reported it gets `true`.
    pub fn session_authorization_changed(&self) -> bool {
        match &self.initial_session_authorization {
            Some(initial) => self.parameter("session_authorization") != Some(&**initial),
            None => true,
        }
    }

    /// The server's version number as `SHOW server_version_num` would say (e.g. 150020).
    pub fn server_version_num(&self) -> Option<u32> {
        let v = self.parameter("server_version")?;
        let mut parts = v
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty());
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(if major >= 10 {
            major * 10_000 + minor
        } else {
            major * 10_000 + minor * 100
        })
    }

    /// The transaction status as of the last ReadyForQuery.
    pub fn transaction_status(&self) -> TransactionStatus {
        self.tx_status
    }

    /// The backend's process ID.
    pub fn process_id(&self) -> i32 {
        self.cancel.process_id()
    }

    /// Whether the session is encrypted with TLS.
    pub fn is_tls(&self) -> bool {
        self.io.is_tls()
    }

    /// Whether the connection broke (I/O error, protocol error, interrupted write) and must be
    /// replaced.
    pub fn is_broken(&self) -> bool {
        self.io.is_broken()
    }

    /// How many prepared statements this connection's cache holds.
    pub fn cached_statements(&self) -> usize {
        self.statements.prepared_count()
    }

    /// Whether a request is still in flight or an abandoned one remains to be read.
    pub fn is_busy(&self) -> bool {
        self.pending_syncs > 0 || self.copy_in_open
    }

    /// A token that cancels this session's running query from anywhere (another task, a
    /// signal handler), over a new connection.
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Notices (warnings, `RAISE NOTICE`) received since the last call, oldest first.
    pub fn take_notices(&mut self) -> Vec<DbError> {
        self.notices.drain(..).collect()
    }

    /// Calls `handler` for each notice as it arrives instead of queueing it.
    pub fn set_notice_handler(&mut self, handler: impl FnMut(&DbError) + Send + 'static) {
        self.notice_handler = Some(Box::new(handler));
    }

    /// Notifications received so far, oldest first (see also [`Connection::wait_for_notification`]).
    pub fn take_notifications(&mut self) -> Vec<Notification> {
        self.notifications.drain(..).collect()
    }

    /// Waits until a notification arrives (after `LISTEN channel`), reading from the socket
    /// while the session is idle. Cancel-safe: dropping the future loses nothing.
    pub async fn wait_for_notification(&mut self) -> Result<Notification> {
        self.settle().await?;
        loop {
            if let Some(n) = self.notifications.pop_front() {
                return Ok(n);
            }
            let (tag, len) = self.io.message().await?;
            if !self.handle_async(tag, len)? {
                return Err(self.unexpected("while idle", tag));
            }
        }
    }

    /// Ends the session politely (Terminate) and closes the socket.
    pub async fn close(mut self) -> Result<()> {
        if self.io.is_broken() {
            return Ok(());
        }
        frontend::terminate(&mut self.io.write);
        self.io.shutdown().await
    }

    /// Handles a message that may arrive at any time; returns false if `tag` is not one.
    pub(crate) fn handle_async(&mut self, tag: u8, len: usize) -> Result<bool> {
        if !matches!(tag, b'N' | b'A' | b'S') {
            return Ok(false);
        }
        let body = &self.io.buffered()[5..len];
        match backend::parse_body(tag, body)? {
            Message::NoticeResponse(fields) => {
                let notice = DbError::from_fields(&fields);
                match &mut self.notice_handler {
                    Some(handler) => handler(&notice),
                    None => {
                        if self.notices.len() == MAX_QUEUED_NOTICES {
                            self.notices.pop_front();
                        }
                        self.notices.push_back(notice);
                    }
                }
            }
            Message::NotificationResponse {
                process_id,
                channel,
                payload,
            } => {
                self.notifications.push_back(Notification {
                    process_id,
                    channel: channel.to_owned(),
                    payload: payload.to_owned(),
                });
            }
            Message::ParameterStatus { name, value } => {
                match self.params.iter_mut().find(|(n, _)| &**n == name) {
                    Some((_, v)) => *v = value.into(),
                    None => self.params.push((name.into(), value.into())),
                }
            }
            _ => {}
        }
        self.io.consume(len);
        Ok(true)
    }

    /// Waits for the next message of the current response, handling notices, notifications and
    /// parameter changes on the way. The message stays buffered; `consume` it when done.
    #[inline]
    pub(crate) async fn next_message(&mut self) -> Result<(u8, usize)> {
        loop {
            let (tag, len) = self.io.message().await?;
            if !self.handle_async(tag, len)? {
                return Ok((tag, len));
            }
        }
    }

    /// The body of the buffered message of total length `len`, parsed.
    #[inline]
    pub(crate) fn parse_front(&mut self, tag: u8, len: usize) -> Result<Message<'_>> {
        self.io.parse_front(tag, len)
    }

    /// The server error in the buffered ErrorResponse of length `len`, consumed. A FATAL or
    /// PANIC error ends the session, so it marks the connection broken.
    pub(crate) fn take_error(&mut self, len: usize) -> Result<Error> {
        let db = match self.parse_front(b'E', len)? {
            Message::ErrorResponse(fields) => DbError::from_fields(&fields),
            _ => return Err(Error::unexpected("instead of an error", b'E')),
        };
        self.io.consume(len);
        if matches!(
            db.parsed_severity(),
            Some(Severity::Fatal | Severity::Panic)
        ) {
            self.io.mark_broken();
        }
        self.group_failed = true;
        Ok(Error::db(db))
    }

    /// After a failed request: reads on to its ReadyForQuery so the session is in step. A
    /// failure here leaves the connection marked broken, which the next request reports.
    pub(crate) async fn finish_failed(&mut self) {
        if !self.io.is_broken() {
            let _ = self.drain(0).await;
        }
    }

    /// Records a ReadyForQuery of length `len` at the front and consumes it.
    pub(crate) fn take_ready(&mut self, len: usize) -> Result<()> {
        let status = match self.parse_front(b'Z', len)? {
            Message::ReadyForQuery(status) => status,
            _ => return Err(Error::unexpected("instead of ReadyForQuery", b'Z')),
        };
        self.io.consume(len);
        self.tx_status = status;
        self.pending_syncs = self.pending_syncs.saturating_sub(1);
        if let Some(reset) = self.fused_reset.take()
            && self.group_failed
            && self.prelude.reset.is_none()
        {
            self.prelude.reset = Some(reset);
        }
        self.group_failed = false;
        Ok(())
    }

    /// Marks the connection broken for an unexpected message and returns the error.
    pub(crate) fn unexpected(&mut self, during: &'static str, tag: u8) -> Error {
        self.io.mark_broken();
        Error::unexpected(during, tag)
    }

    /// Brings the session back in step before a new request: fails an abandoned COPY FROM STDIN
    /// and reads the rest of any abandoned response.
    pub(crate) async fn settle(&mut self) -> Result<()> {
        if self.io.is_broken() {
            return Err(io::broken_error());
        }
        if self.copy_in_open {
            self.copy_in_open = false;
            frontend::copy_fail("COPY abandoned by the client", &mut self.io.write)?;
        }
        // Whatever an abandoned operation left in the write buffer was counted as sent.
        self.io.flush().await?;
        self.drain(0).await
    }

    /// Reads and discards messages until at most `keep` ReadyForQuery messages are still due.
    pub(crate) async fn drain(&mut self, keep: u32) -> Result<()> {
        self.drain_reporting(keep, false).await
    }

    /// [`Connection::drain`] at the end of a group whose statements were all read: an error
    /// the server sends before its ReadyForQuery (the implicit transaction's COMMIT failing at
    /// the Sync: a deferred constraint, a serialization failure) is returned once the
    /// ReadyForQuery was read, the connection usable. Nothing of the group took effect then.
    pub(crate) async fn finish_group(&mut self, keep: u32) -> Result<()> {
        self.drain_reporting(keep, true).await
    }

    async fn drain_reporting(&mut self, keep: u32, report: bool) -> Result<()> {
        let mut failed = None;
        while self.pending_syncs > keep {
            let (tag, len) = self.next_message().await?;
            match tag {
                b'E' if report => {
                    let error = self.take_error(len)?;
                    failed.get_or_insert(error);
                }
                b'Z' => self.take_ready(len)?,
                b'G' => {
                    // An abandoned request turned out to be COPY FROM STDIN.
                    self.io.consume(len);
                    self.fail_copy_in("COPY abandoned by the client")?;
                    self.io.flush().await?;
                }
                _ => self.io.consume(len),
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Starts a request: settles the session and writes the prelude into the write buffer.
    /// Returns how many ReadyForQuery messages the prelude adds (to drain before the request's
    /// own response).
    pub(crate) async fn begin_request(&mut self) -> Result<u32> {
        self.begin_request_fusing(false)
            .await
            .map(|(syncs, _)| syncs)
    }

    /// [`Connection::begin_request`] for a request that can carry a queued session reset in its
    /// own Sync group (`fusable`: a plain statement in autocommit). Returns the reset statements
    /// the caller must write in front of its statement, if they are to travel that way.
    pub(crate) async fn begin_request_fusing(
        &mut self,
        fusable: bool,
    ) -> Result<(u32, Option<&'static [&'static str]>)> {
        self.settle().await?;
        let mut syncs = 0;
        if !self.prelude.close_statements.is_empty() {
            for name in self.prelude.close_statements.drain(..) {
                frontend::close(frontend::Target::Statement, &name, &mut self.io.write)?;
            }
            frontend::sync(&mut self.io.write);
            syncs += 1;
        }
        if std::mem::take(&mut self.prelude.rollback) {
            frontend::query("ROLLBACK", &mut self.io.write)?;
            syncs += 1;
        }
        let mut fused = None;
        if let Some(reset) = self.prelude.reset.take() {
            let idle = self.tx_status == TransactionStatus::Idle && self.prelude.begin.is_none();
            if fusable && idle {
                fused = Some(reset);
            } else {
                frontend::query(&reset.join("; "), &mut self.io.write)?;
                syncs += 1;
            }
        }
        for sql in self.prelude.queries.drain(..) {
            frontend::query(&sql, &mut self.io.write)?;
            syncs += 1;
        }
        if let Some(begin) = self.prelude.begin.take() {
            frontend::query(&begin, &mut self.io.write)?;
            syncs += 1;
        }
        self.pending_syncs += syncs;
        Ok((syncs, fused))
    }

    /// Writes the statements of a fused reset (no Sync: they share the request's). The first time
    /// a set is used it is prepared under names of its own; afterwards only Bind and Execute go.
    pub(crate) fn write_fused_reset(&mut self, reset: &'static [&'static str]) -> Result<()> {
        let set = (reset.as_ptr() as usize, reset.len());
        let known = self.prepared_resets.iter().position(|&s| s == set);
        let id = known.unwrap_or(self.prepared_resets.len());
        for (i, statement) in reset.iter().enumerate() {
            let name = format!("sluice_reset_{id}_{i}");
            if known.is_none() {
                // Some of the set may survive a partial DEALLOCATE; Close is a no-op otherwise.
                frontend::close(frontend::Target::Statement, &name, &mut self.io.write)?;
                frontend::parse(&name, statement, &[], &mut self.io.write)?;
            }
            frontend::bind::<Error>(
                "",
                &name,
                frontend::Formats::All(crate::types::Format::Text),
                |_| Ok(()),
                frontend::Formats::All(crate::types::Format::Text),
                &mut self.io.write,
            )
            .map_err(|e| match e {
                frontend::BindError::Encode(e) => e.into(),
                frontend::BindError::Param(e) => e,
            })?;
            frontend::execute("", 0, &mut self.io.write)?;
        }
        if known.is_none() {
            self.prepared_resets.push(set);
        }
        Ok(())
    }

    /// Forgets that reset statements are prepared (they were deallocated).
    pub(crate) fn forget_prepared_resets(&mut self) {
        self.prepared_resets.clear();
    }

    /// After the request carrying a fused reset was sent: reads the reset's responses, so the
    /// request's own follow. An error here is the reset's; the request was skipped.
    pub(crate) async fn skip_fused_reset(&mut self, reset: &'static [&'static str]) -> Result<()> {
        self.fused_reset = Some(reset);
        let mut done = 0;
        while done < reset.len() {
            let (tag, len) = self.next_message().await?;
            match tag {
                b'1' | b'2' | b'3' | b'T' | b'n' | b'D' => self.io.consume(len),
                b'C' | b'I' => {
                    self.io.consume(len);
                    done += 1;
                }
                b'E' => {
                    // Prepared reset statements may be gone (DEALLOCATE, or their Parse failed):
                    // prepare them afresh next time.
                    self.prepared_resets.clear();
                    return Err(self.take_error(len)?.context("resetting the session"));
                }
                _ => return Err(self.unexpected("in response to a session reset", tag)),
            }
        }
        Ok(())
    }

    /// Writes CopyFail for a COPY FROM STDIN the server started in response to the request in
    /// flight, and the Sync an extended-protocol request needs to end (see
    /// [`Connection::extended_in_flight`]). The request's ReadyForQuery count is unchanged.
    pub(crate) fn fail_copy_in(&mut self, reason: &str) -> Result<()> {
        frontend::copy_fail(reason, &mut self.io.write)?;
        if self.extended_in_flight {
            frontend::sync(&mut self.io.write);
        }
        Ok(())
    }

    /// Sends the write buffer, then reads the prelude's responses. A failed prelude statement (a
    /// BEGIN refused, say) fails the request with the server's error.
    pub(crate) async fn send_request(
        &mut self,
        prelude_syncs: u32,
        request_syncs: u32,
        extended: bool,
    ) -> Result<()> {
        self.pending_syncs += request_syncs;
        self.extended_in_flight = extended;
        self.io.flush().await?;
        let mut failure = None;
        let keep = self.pending_syncs - prelude_syncs;
        while self.pending_syncs > keep {
            let (tag, len) = self.next_message().await?;
            match tag {
                b'Z' => self.take_ready(len)?,
                b'E' => failure = Some(self.take_error(len)?),
                // Rows of a prepended SELECT (a reset's `SELECT pg_advisory_unlock_all()`) are
                // not wanted.
                b'3' | b'C' | b'T' | b'D' | b'I' => self.io.consume(len),
                _ => return Err(self.unexpected("in response to a prepended statement", tag)),
            }
        }
        match failure {
            Some(e) => {
                self.drain(0).await?;
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// Queues SQL (one or more `;`-separated statements, simple protocol) to run in front of the
    /// connection's next request, in the same write: no round trip of its own. A pool uses this
    /// to reset session state when a connection comes back. If it fails, the next request fails
    /// with its error.
    pub fn prepend(&mut self, sql: impl Into<std::borrow::Cow<'static, str>>) {
        self.prelude.queries.push(sql.into());
    }

    /// Queues a session reset in front of the next request (replacing one queued before). When
    /// that request is a single plain statement (`SELECT`, `INSERT`, `UPDATE`, `DELETE`, `WITH`,
    /// `VALUES`, `TABLE`, `MERGE`) run outside a transaction, the reset statements travel as
    /// unnamed statements in the request's own Sync group: one ReadyForQuery and one server flush
    /// for both. They then share its implicit transaction, so if the request fails the reset's
    /// effects are rolled back too and the reset is queued again. Any other request gets the
    /// reset as a simple query of its own in front (one more ReadyForQuery, same round trip).
    /// Each statement must be valid in a transaction block and in a pipeline.
    pub fn prepend_reset(&mut self, statements: &'static [&'static str]) {
        self.prelude.reset = Some(statements);
    }

    /// Forgets statements queued with [`Connection::prepend`] and [`Connection::prepend_reset`]
    /// that have not been sent.
    pub fn clear_prepended(&mut self) {
        self.prelude.queries.clear();
        self.prelude.reset = None;
    }

    /// Queues a ROLLBACK in front of the next request when a transaction is open (a no-op
    /// otherwise), so a connection handed to someone else never carries an open transaction.
    pub fn prepend_rollback_if_open(&mut self) {
        if self.prelude.begin.take().is_none() && self.tx_status != TransactionStatus::Idle {
            self.prelude.rollback = true;
        }
    }

    /// Brings the session back in step now: fails an abandoned COPY FROM STDIN and reads the rest
    /// of any abandoned response. Every request does this first anyway; a pool calls it (after a
    /// cancel, perhaps) before handing the connection out again.
    pub async fn finish_pending(&mut self) -> Result<()> {
        self.settle().await
    }

    /// Runs SQL that returns nothing the caller needs (`SET`, DDL, several `;`-separated
    /// statements) with the simple query protocol.
    pub async fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.simple_query(sql).await.map(drop)
    }
}
