//! One client connection: read a batch, run every complete command, write all replies at once.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use crate::cmd::{self, Args, Cx, StoreSlot};
use crate::engine::BlockedReply;
use crate::frame::{Parsed, RequestParser};
use crate::hub::{PushKind, PushMsg, PushQueue};
use crate::reply::Out;
use crate::session::{Action, BlockKind, BlockWait, ClientInfo, ReplyMode, Session};
use crate::shared::Shared;

/// Initial read buffer; grows for big arguments.
const READ_CHUNK: usize = 16 * 1024;
/// Replies are written out mid-batch once they exceed this, to bound memory.
const OUT_FLUSH: usize = 256 * 1024;

struct Conn {
    rbuf: BytesMut,
    out: Out,
    parser: RequestParser,
    scratch: Vec<u8>,
    /// Bytes the parser needs before it can make progress.
    want: usize,
    /// Requests answered in `out` since it was last written (each gets an error instead when
    /// their writes could not be made durable under `appendfsync always`).
    replies: usize,
    /// The store generation of the last change made by the requests in `out`.
    wrote: Option<u64>,
}

/// Why a batch stopped.
enum Batch {
    /// All complete commands ran.
    Drained,
    /// The output buffer is large: write it, then continue with buffered input.
    OutputFull,
}

/// Serves one plain-TCP client until it quits, disconnects, breaks the protocol or the server
/// stops.
pub async fn serve(
    stream: TcpStream,
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let laddr = prepare(&stream)?;
    serve_stream(stream, addr, laddr, shared, stop).await
}

/// Sets up an accepted socket; returns its local address for CLIENT LIST.
fn prepare(stream: &TcpStream) -> io::Result<String> {
    stream.set_nodelay(true)?;
    Ok(stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default())
}

/// Runs the TLS handshake of an accepted socket; the stream and its local address.
pub async fn accept_tls(
    stream: TcpStream,
    acceptor: &sluice_tls::TlsAcceptor,
) -> io::Result<(sluice_tls::TlsStream<TcpStream>, String)> {
    let laddr = prepare(&stream)?;
    Ok((acceptor.accept(stream).await?, laddr))
}

/// Serves one client on `stream` (plain TCP or TLS: the code is made once per kind, so the
/// plain path pays nothing for TLS).
pub async fn serve_stream<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    addr: SocketAddr,
    laddr: String,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
    let info = Arc::new(ClientInfo::new(
        id,
        addr.to_string(),
        laddr,
        shared.acl.default_user(),
    ));
    shared.clients.lock().insert(id, info.clone());
    shared.stats.connections.fetch_add(1, Ordering::Relaxed);
    let (push_tx, push_rx) = PushQueue::new();
    let _ = info.push.set(push_tx.clone());
    let mut session = Session::new(info, shared.acl.default_authenticates(), push_tx);
    // On a multi-thread runtime a script runs here, inline: if it runs long, its thread hands
    // the other connections to another (see `script::runner`). Elsewhere scripts are deferred
    // to the blocking pool, which costs a hand-off per script.
    session.inline_scripts = crate::script::can_hand_off();
    let result = drive(&mut stream, &shared, &mut session, push_rx, stop).await;
    cleanup(&shared, &mut session).await;
    result
}

async fn drive<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    shared: &Arc<Shared>,
    session: &mut Session,
    mut push_rx: mpsc::UnboundedReceiver<PushMsg>,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let info = session.info.clone();
    let mut conn = Conn {
        rbuf: BytesMut::with_capacity(READ_CHUNK),
        out: Out::new(),
        parser: RequestParser::new(shared.bulk_max.load(Ordering::Relaxed)),
        scratch: Vec::new(),
        want: 0,
        replies: 0,
        wrote: None,
    };
    loop {
        crate::busy_poll::note_activity();
        if starts_with_publish(&conn.rbuf) {
            // PUBLISH depends on other clients' subscriptions: let the connections whose bytes
            // came in the same wake-up run first (the runtime polls the last woken task first),
            // so that a SUBSCRIBE or UNSUBSCRIBE sent before it counts, as it does in Redis.
            // Twice: the first yield's own wake-up can again come before theirs (with one, 1 to
            // 5 % of 200 rounds of clients::publish_sees_subscriptions_sent_before_it still
            // published first; with none, about 40 %; with two, none in 2,000).
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        }
        let batch = conn.process(shared, session);
        conn.await_durable(shared, session).await;
        if !conn.out.buf.is_empty() {
            if session.subscriptions() > 0 {
                // A subscriber that stopped reading is closed once it overflows its limit, even
                // while this write waits on it.
                let backlog = session.push_tx.backlog.clone();
                tokio::select! {
                    written = write_out(stream, &conn.out.buf) => written?,
                    () = backlog.overflow.notified() => return Ok(()),
                }
            } else {
                write_out(stream, &conn.out.buf).await?;
            }
            conn.out.buf.clear();
        }
        if info.is_killed() {
            return Ok(());
        }
        match std::mem::take(&mut session.action) {
            Action::Close => return Ok(()),
            Action::Paused(until) => {
                tokio::select! {
                    () = tokio::time::sleep_until(until.into()) => {}
                    () = shared.pause.lifted.notified() => {}
                    () = info.kill_notify.notified() => return Ok(()),
                    _ = stop.changed() => return Ok(()),
                }
                continue;
            }
            Action::Block(wait) => {
                if !wait_blocked(stream, &mut conn, shared, &info, wait, &mut stop).await? {
                    return Ok(());
                }
                continue;
            }
            Action::Script(job) => {
                let runner = shared.clone();
                let mut reply =
                    tokio::task::spawn_blocking(move || crate::script::run_job(&runner, *job))
                        .await
                        .map_err(io::Error::other)?;
                if let Some(durability) = &shared.durability
                    && durability.policy() == crate::durable::AppendFsync::Always
                {
                    // The script ran under its own lock: wait for everything up to now.
                    let generation = store_async(shared).await.generation();
                    if durability.committed() < generation {
                        durability.wake_writer(false);
                        if let Err(e) = durability.wait_committed(generation, false).await {
                            let mut out = crate::reply::Out::new();
                            out.error(&e.to_string());
                            reply = out.buf;
                        }
                    }
                }
                write_out(stream, &reply).await?;
                continue;
            }
            Action::Continue => {}
        }
        if matches!(batch, Batch::OutputFull) {
            continue;
        }
        let free = conn.rbuf.capacity() - conn.rbuf.len();
        let needed = conn.want.saturating_sub(conn.rbuf.len());
        if free < needed.max(READ_CHUNK / 4) {
            conn.rbuf.reserve(needed.max(READ_CHUNK));
        }
        // Tokio clears the socket's readiness after a short read, so a drained socket costs one
        // recv per request, not a second one that would hit EAGAIN.
        tokio::select! {
            read = stream.read_buf(&mut conn.rbuf) => {
                if read? == 0 {
                    return Ok(());
                }
            }
            Some(msg) = push_rx.recv() => {
                let backlog = &session.push_tx.backlog;
                let mut drained = msg.size();
                encode_push(&mut conn.out, &msg);
                while let Ok(msg) = push_rx.try_recv() {
                    drained += msg.size();
                    encode_push(&mut conn.out, &msg);
                }
                backlog.bytes.fetch_sub(drained, Ordering::Relaxed);
                if backlog.overflowed.load(Ordering::Relaxed) {
                    tracing::debug!(client = session.id, "pub/sub subscriber fell behind its output limit; closing");
                    return Ok(());
                }
            }
            Some(line) = monitor_line(&mut session.monitor_rx) => {
                conn.out.buf.extend_from_slice(&line);
                if let Some(rx) = session.monitor_rx.as_mut() {
                    while conn.out.buf.len() < OUT_FLUSH && let Ok(line) = rx.try_recv() {
                        conn.out.buf.extend_from_slice(&line);
                    }
                }
            }
            () = info.kill_notify.notified() => return Ok(()),
            _ = stop.changed() => return Ok(()),
        }
    }
}

/// Writes `bytes` out whole. The flush sends what TLS still holds once the socket took part of
/// it; on plain TCP it returns at once.
async fn write_out<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// Whether the first request in `buf` is PUBLISH or SPUBLISH (the array header, then the
/// command name's bulk).
fn starts_with_publish(buf: &[u8]) -> bool {
    let Some(rest) = buf.strip_prefix(b"*") else {
        return false;
    };
    let Some(at) = memchr::memchr(b'\n', rest) else {
        return false;
    };
    let rest = &rest[at + 1..];
    let name = match rest {
        [b'$', b'7', b'\r', b'\n', name @ ..] => name.get(..7),
        [b'$', b'8', b'\r', b'\n', name @ ..] => name.get(..8),
        _ => None,
    };
    name.is_some_and(|n| n.eq_ignore_ascii_case(b"publish") || n.eq_ignore_ascii_case(b"spublish"))
}

/// The next MONITOR line for a monitoring client; never resolves for the others.
async fn monitor_line(
    rx: &mut Option<mpsc::UnboundedReceiver<bytes::Bytes>>,
) -> Option<bytes::Bytes> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

impl Conn {
    /// Runs every complete command in the read buffer, under one store lock taken lazily.
    fn process(&mut self, shared: &Shared, session: &mut Session) -> Batch {
        let batch = self.process_batch(shared, session);
        if session.commands_run > 0 {
            shared
                .stats
                .commands
                .fetch_add(session.commands_run, Ordering::Relaxed);
            session.commands_run = 0;
        }
        batch
    }

    fn process_batch(&mut self, shared: &Shared, session: &mut Session) -> Batch {
        if self.rbuf.is_empty() {
            return Batch::Drained;
        }
        let mut slot = StoreSlot::new(&shared.store);
        let batch = self.run_commands(shared, session, &mut slot);
        if let Some(generation) = slot.finish() {
            self.wrote = Some(generation);
        }
        batch
    }

    /// Under `appendfsync always`, waits until the writes of the replies in `out` are
    /// committed (waking the writer), or answers each of those requests with the error.
    /// SAVE waits the same way under every policy.
    async fn await_durable(&mut self, shared: &Shared, session: &mut Session) {
        let replies = std::mem::take(&mut self.replies);
        let wrote = self.wrote.take();
        let Some(durability) = &shared.durability else {
            return;
        };
        let save = session.save_waits.take();
        if save.is_none()
            && wrote.is_some()
            && let Some(flushing) = durability.lagging_flush()
        {
            durability.wait_lagging_flush(flushing).await;
            return;
        }
        let wait = match durability.policy() {
            crate::durable::AppendFsync::Always => wrote.max(save),
            _ => save,
        };
        let Some(generation) = wait else {
            return;
        };
        if durability.committed() >= generation {
            return;
        }
        durability.wake_writer(save.is_some());
        if let Err(e) = durability.wait_committed(generation, save.is_some()).await {
            let message = e.to_string();
            self.out.buf.clear();
            for _ in 0..replies.max(1) {
                self.out.error(&message);
            }
        }
    }

    fn run_commands(
        &mut self,
        shared: &Shared,
        session: &mut Session,
        slot: &mut StoreSlot<'_>,
    ) -> Batch {
        session
            .info
            .last_active_ms
            .store(shared.uptime_ms(), Ordering::Relaxed);
        self.parser
            .set_bulk_max(shared.bulk_max.load(Ordering::Relaxed));
        loop {
            self.parser.set_unauthenticated(!session.authenticated);
            if !matches!(session.action, Action::Continue) {
                return Batch::Drained;
            }
            if self.out.buf.len() > OUT_FLUSH {
                return Batch::OutputFull;
            }
            match self.parser.parse(&self.rbuf, &mut self.scratch) {
                Ok(Parsed::Command { consumed, inline }) => {
                    let buf: &[u8] = if inline { &self.scratch } else { &self.rbuf };
                    let args = Args::new(buf, self.parser.spans());
                    if let Some(until) = cmd::held_by_pause(shared, session, &args) {
                        // Left in the buffer: it runs when the pause ends.
                        session.action = Action::Paused(until);
                        return Batch::Drained;
                    }
                    let replies = session.reply_mode;
                    let mark = self.out.buf.len();
                    let mut cx = Cx {
                        shared,
                        session,
                        out: &mut self.out,
                        store: slot,
                    };
                    cmd::dispatch(&mut cx, &args);
                    if (replies != ReplyMode::On || session.reply_mode != ReplyMode::On)
                        && !cmd::is_subscription_command(args.get(0))
                    {
                        apply_reply_mode(replies, session, &mut self.out, mark);
                    }
                    self.replies += 1;
                    self.rbuf.advance(consumed);
                    self.want = 0;
                }
                Ok(Parsed::Empty { consumed }) => self.rbuf.advance(consumed),
                Ok(Parsed::Incomplete { want }) => {
                    self.want = want;
                    return Batch::Drained;
                }
                Err(e) => {
                    self.out.error(&format!("ERR {e}"));
                    session.action = Action::Close;
                    return Batch::Drained;
                }
            }
        }
    }
}

/// CLIENT REPLY OFF|SKIP: drops the reply of the command just run (from `mark` on) when the
/// mode it ran under says so, and moves SKIP along.
fn apply_reply_mode(before: ReplyMode, session: &mut Session, out: &mut Out, mark: usize) {
    match (before, session.reply_mode) {
        // CLIENT REPLY ON while off or skipping: its OK is sent.
        (ReplyMode::Off | ReplyMode::Skip, ReplyMode::On) => {}
        (ReplyMode::Off, _) => out.buf.truncate(mark),
        (ReplyMode::Skip, after) => {
            out.buf.truncate(mark);
            if after == ReplyMode::Skip {
                session.reply_mode = ReplyMode::On;
            }
        }
        // CLIENT REPLY SKIP itself: no reply, and the next command's is dropped.
        (_, ReplyMode::SkipNext) => {
            out.buf.truncate(mark);
            session.reply_mode = ReplyMode::Skip;
        }
        _ => {}
    }
}

/// Waits for a blocked command's element, its timeout, the client leaving or shutdown. Returns
/// false when the connection should close.
async fn wait_blocked<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    conn: &mut Conn,
    shared: &Shared,
    info: &ClientInfo,
    wait: BlockWait,
    stop: &mut watch::Receiver<bool>,
) -> io::Result<bool> {
    let BlockWait {
        id,
        mut rx,
        deadline,
        kind,
    } = wait;
    let timeout = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timeout);
    let reply = loop {
        tokio::select! {
            got = &mut rx => break got.ok(),
            () = &mut timeout => {
                let still_blocked = store_async(shared).await.blocking.unblock(id);
                // Not blocked any more means it was served just now: the reply is in the channel.
                break if still_blocked { None } else { rx.try_recv().ok() };
            }
            read = stream.read_buf(&mut conn.rbuf) => {
                if read? == 0 {
                    store_async(shared).await.blocking.unblock(id);
                    return Ok(false);
                }
            }
            () = conn_killed(info) => {
                store_async(shared).await.blocking.unblock(id);
                return Ok(false);
            }
            _ = stop.changed() => return Ok(false),
        }
    };
    let out = &mut conn.out;
    match (reply, kind) {
        (Some(BlockedReply::Popped { key, value }), _) => {
            out.array(2);
            out.bulk(&key);
            out.bulk(&value);
        }
        (Some(BlockedReply::Moved(value)), _) => out.bulk(&value),
        (Some(BlockedReply::WrongType), _) => out.error(cmd::WRONGTYPE),
        (Some(BlockedReply::Encoded(reply)), _) => out.buf.extend_from_slice(&reply),
        (Some(BlockedReply::TimedOut), _) => out.null_array(),
        (None, BlockKind::Pop) => out.null_array(),
        // Redis 7.0 answers a timed-out BLMOVE with the null array too.
        (None, BlockKind::Move) => out.null_array(),
    }
    if let Some((b'-', error)) = out.buf.split_first() {
        let blocked_command = info.last_command.load(Ordering::Relaxed);
        shared.observe.failed_when_unblocked(blocked_command, error);
    }
    write_out(stream, &conn.out.buf).await?;
    conn.out.buf.clear();
    Ok(true)
}

/// Resolves when CLIENT KILL closes this client (a blocked one included).
async fn conn_killed(info: &ClientInfo) {
    if !info.is_killed() {
        info.kill_notify.notified().await;
    }
}

/// The store, awaited without blocking the connection's thread (a long script may hold it, and
/// this thread must go on serving others, SCRIPT KILL included).
async fn store_async(shared: &Shared) -> parking_lot::MutexGuard<'_, crate::engine::Store> {
    loop {
        if let Some(store) = shared.store.try_lock() {
            return store;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

fn encode_push(out: &mut Out, msg: &PushMsg) {
    match &msg.kind {
        PushKind::PMessage(pattern) => {
            out.push(4);
            out.bulk(b"pmessage");
            out.bulk(pattern);
        }
        PushKind::Message => {
            out.push(3);
            out.bulk(b"message");
        }
        PushKind::SMessage => {
            out.push(3);
            out.bulk(b"smessage");
        }
        PushKind::Invalidate(keys) => {
            if out.resp3 {
                out.push(2);
                out.bulk(b"invalidate");
            } else {
                out.push(3);
                out.bulk(b"message");
                out.bulk(&msg.channel);
            }
            match keys {
                Some(keys) => {
                    out.array(keys.len());
                    for k in keys {
                        out.bulk(k);
                    }
                }
                None => out.null(),
            }
            return;
        }
    }
    out.bulk(&msg.channel);
    out.bulk(&msg.payload);
}

/// Drops everything the client left behind: registry entry, subscriptions, WATCHes.
async fn cleanup(shared: &Shared, session: &mut Session) {
    shared.clients.lock().remove(&session.id);
    if session.monitor_rx.is_some() {
        shared.observe.remove_monitor(session.id);
    }
    if session.subscriptions() > 0 {
        shared.hub.lock().leave(
            session.id,
            &mut session.channels,
            &mut session.patterns,
            &mut session.shard_channels,
        );
    }
    if session.tracking {
        store_async(shared).await.tracking.disable(session.id);
    }
    if !session.watched.is_empty() {
        store_async(shared)
            .await
            .unwatch(&session.watched, &session.watch_flag);
        session.watched.clear();
    }
}
