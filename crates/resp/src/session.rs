//! Per-connection state: selected database, auth, MULTI queue, WATCHes, subscriptions, blocking.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicU64, AtomicUsize};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::cmd::Command;
use crate::engine::{BlockedReply, Key, WatchFlag};
use crate::hub::PushQueue;

/// What a connection shows of itself to others (CLIENT LIST, INFO clients).
#[derive(Debug)]
pub struct ClientInfo {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub created: Instant,
    pub db: AtomicUsize,
    /// Index in the command table of the last command run.
    pub last_command: AtomicUsize,
    /// Milliseconds since server start of the last request.
    pub last_active_ms: AtomicU64,
    pub name: Mutex<Option<Vec<u8>>>,
    pub lib_name: Mutex<Option<Vec<u8>>>,
    pub lib_ver: Mutex<Option<Vec<u8>>>,
    pub resp: AtomicU8,
    pub subs: AtomicUsize,
    pub psubs: AtomicUsize,
    /// Shard channels subscribed (CLIENT LIST ssub=).
    pub ssubs: AtomicUsize,
    /// Commands queued in MULTI, -1 outside MULTI.
    pub multi: AtomicI64,
    /// The subcommand of the last command, when it has subcommands (CLIENT LIST's
    /// `cmd=client|list`).
    pub last_subcommand: Mutex<Vec<u8>>,
    /// CLIENT KILL asked this connection to close.
    pub killed: AtomicBool,
    /// Wakes the connection when it is killed.
    pub kill_notify: tokio::sync::Notify,
    /// The connection's push queue, for invalidations other clients' writes send it
    /// (client-side caching), set once the connection has one.
    pub push: std::sync::OnceLock<PushQueue>,
    /// The ACL user the connection is authenticated as (others read it: CLIENT LIST, ACL
    /// DELUSER); the session keeps its own handle for the permission check.
    pub user: Mutex<Arc<crate::acl::User>>,
}

impl ClientInfo {
    pub fn new(id: u64, addr: String, laddr: String, user: Arc<crate::acl::User>) -> Self {
        Self {
            id,
            addr,
            laddr,
            created: Instant::now(),
            db: AtomicUsize::new(0),
            last_command: AtomicUsize::new(usize::MAX),
            last_active_ms: AtomicU64::new(0),
            name: Mutex::new(None),
            lib_name: Mutex::new(None),
            lib_ver: Mutex::new(None),
            resp: AtomicU8::new(2),
            subs: AtomicUsize::new(0),
            psubs: AtomicUsize::new(0),
            ssubs: AtomicUsize::new(0),
            multi: AtomicI64::new(-1),
            last_subcommand: Mutex::new(Vec::new()),
            killed: AtomicBool::new(false),
            kill_notify: tokio::sync::Notify::new(),
            push: std::sync::OnceLock::new(),
            user: Mutex::new(user),
        }
    }

    /// CLIENT KILL: the connection closes once its current batch is answered.
    pub fn kill(&self) {
        self.killed
            .store(true, std::sync::atomic::Ordering::Release);
        self.kill_notify.notify_one();
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// CLIENT REPLY: whether the client's commands are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyMode {
    #[default]
    On,
    Off,
    /// The next command is not answered, then On again.
    SkipNext,
    /// Set by CLIENT REPLY SKIP while its own reply is dropped; the next command is skipped.
    Skip,
}

/// A command queued between MULTI and EXEC, with its own copy of the arguments.
#[derive(Debug)]
pub struct Queued {
    pub cmd: &'static Command,
    pub data: Vec<u8>,
    pub spans: Vec<Range<usize>>,
}

/// An open transaction.
#[derive(Debug, Default)]
pub struct Multi {
    pub queued: Vec<Queued>,
    /// A command failed to queue: EXEC answers EXECABORT.
    pub error: bool,
}

/// How the reply of a blocked command is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// BLPOP/BRPOP: `[key, element]`, null array on timeout.
    Pop,
    /// BLMOVE/BRPOPLPUSH: the element, null on timeout.
    Move,
}

/// A command waiting for a list element.
#[derive(Debug)]
pub struct BlockWait {
    pub id: u64,
    pub rx: oneshot::Receiver<BlockedReply>,
    pub deadline: Option<tokio::time::Instant>,
    pub kind: BlockKind,
}

/// What the connection does after the current command.
#[derive(Debug, Default)]
pub enum Action {
    #[default]
    Continue,
    /// Reply, then close (QUIT, protocol errors).
    Close,
    /// Stop processing input until the blocked command is served or times out.
    Block(BlockWait),
    /// Run a script off the connection's thread, then reply (see `script::runner`).
    Script(Box<crate::script::ScriptJob>),
    /// CLIENT PAUSE holds the next command back until this instant (or until it is lifted).
    Paused(std::time::Instant),
}

/// The state of one client connection.
#[derive(Debug)]
pub struct Session {
    pub id: u64,
    pub db: usize,
    pub authenticated: bool,
    pub multi: Option<Multi>,
    pub watch_flag: WatchFlag,
    pub watched: Vec<(usize, Key)>,
    /// Watched keys that had a TTL when watched; EXEC fails if one has expired since.
    pub watched_volatile: Vec<(usize, Key)>,
    pub channels: HashSet<Key>,
    pub patterns: HashSet<Key>,
    /// Shard channels subscribed with SSUBSCRIBE.
    pub shard_channels: HashSet<Key>,
    pub push_tx: PushQueue,
    pub info: Arc<ClientInfo>,
    pub action: Action,
    /// True while EXEC runs its queue: blocking commands do not block.
    pub in_exec: bool,
    /// Commands run in the current read batch; added to the server total once per batch so
    /// connections on different cores do not fight over one counter per command.
    pub commands_run: u64,
    /// Scripts run here and now (connections on a multi-thread runtime, the script thread's own
    /// session, EXEC), not deferred.
    pub inline_scripts: bool,
    /// The client a script's redis.call runs as (Redis's CLIENT_SCRIPT).
    pub script_client: bool,
    /// CLIENT REPLY ON|OFF|SKIP.
    pub reply_mode: ReplyMode,
    /// MONITOR lines for this client to write out, once it ran MONITOR.
    pub monitor_rx: Option<tokio::sync::mpsc::UnboundedReceiver<bytes::Bytes>>,
    /// CLIENT TRACKING is on (the options live in the store's `Tracking`).
    pub tracking: bool,
    /// CLIENT CACHING YES/NO, for the next command only.
    pub caching: Option<bool>,
    /// SAVE ran in this batch: the replies wait until this store generation is committed.
    pub save_waits: Option<u64>,
    /// The ACL user commands are checked against (also in `info.user`).
    pub user: Arc<crate::acl::User>,
    /// The script that just ran failed with an error a command inside it counted already.
    pub error_counted: bool,
}

impl Session {
    pub fn new(info: Arc<ClientInfo>, authenticated: bool, push_tx: PushQueue) -> Self {
        let user = info.user.lock().clone();
        Self {
            id: info.id,
            db: 0,
            authenticated,
            multi: None,
            watch_flag: Arc::new(AtomicBool::new(false)),
            watched: Vec::new(),
            watched_volatile: Vec::new(),
            channels: HashSet::new(),
            patterns: HashSet::new(),
            shard_channels: HashSet::new(),
            push_tx,
            info,
            action: Action::Continue,
            in_exec: false,
            commands_run: 0,
            inline_scripts: false,
            script_client: false,
            reply_mode: ReplyMode::On,
            monitor_rx: None,
            tracking: false,
            caching: None,
            save_waits: None,
            user,
            error_counted: false,
        }
    }

    /// Authenticates the connection as `user`.
    pub fn set_user(&mut self, user: Arc<crate::acl::User>) {
        *self.info.user.lock() = user.clone();
        self.user = user;
        self.authenticated = true;
    }

    /// The subscribed patterns when `pattern`, else the channels.
    pub fn names(&mut self, pattern: bool) -> &mut HashSet<Key> {
        if pattern {
            &mut self.patterns
        } else {
            &mut self.channels
        }
    }

    /// Channels, patterns and shard channels subscribed (a RESP2 client with any is in
    /// pub/sub mode).
    pub fn subscriptions(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard_channels.len()
    }
}
