//! CLIENT PAUSE: while a pause is on, connections hold back the commands it covers (every
//! command, or only those that may write) until it ends or CLIENT UNPAUSE lifts it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::cmd::{Command, flags};

/// The pause in force, if any.
#[derive(Debug, Default)]
pub struct Pause {
    /// Fast check for connections: false when no pause was ever set or it was lifted.
    on: AtomicBool,
    state: Mutex<Option<(Instant, bool)>>,
    /// Wakes held-back connections when the pause is lifted early.
    pub lifted: tokio::sync::Notify,
}

impl Pause {
    /// Pauses for `span`, all commands or only writes; a longer or stricter pause in force
    /// stays (as Redis keeps the latest end and the strictest mode).
    pub fn pause(&self, span: Duration, all: bool) {
        let until = Instant::now() + span;
        let mut state = self.state.lock();
        let merged = match *state {
            Some((end, was_all)) if end > Instant::now() => (end.max(until), was_all || all),
            _ => (until, all),
        };
        *state = Some(merged);
        self.on.store(true, Ordering::Release);
    }

    /// Whether a pause may be in force (cheap: one atomic load).
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    pub fn unpause(&self) {
        *self.state.lock() = None;
        self.on.store(false, Ordering::Release);
        self.lifted.notify_waiters();
    }

    /// When `cmd` is held back now, the instant the pause ends.
    pub(crate) fn holds(&self, cmd: &Command, args: &crate::cmd::Args<'_>) -> Option<Instant> {
        if !self.on.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.state.lock();
        let (until, all) = (*state)?;
        if Instant::now() >= until {
            *state = None;
            self.on.store(false, Ordering::Release);
            return None;
        }
        // CLIENT UNPAUSE always runs, so a pause of everything can still be lifted early.
        if cmd.name == "client" && args.is(1, "unpause") {
            return None;
        }
        let writes = cmd.flags & flags::WRITE != 0
            || matches!(
                cmd.name,
                "eval" | "evalsha" | "fcall" | "publish" | "pfcount" | "exec"
            );
        (all || writes).then_some(until)
    }
}
