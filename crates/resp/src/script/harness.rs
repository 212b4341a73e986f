//! Runs scripts without a socket, as a client's EVAL would run, for the fuzz target and tests.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use crate::Config;
use crate::cmd::{self, Args, Cx, StoreSlot};
use crate::hub::PushQueue;
use crate::reply::Out;
use crate::session::{ClientInfo, Session};
use crate::shared::Shared;

/// A private server state that runs one EVAL at a time; a script still running after
/// `time_limit` is stopped as SCRIPT KILL would, and Lua may use at most `memory_limit` bytes.
pub struct ScriptHarness {
    shared: Arc<Shared>,
    time_limit: Duration,
}

impl ScriptHarness {
    /// A harness on a default configuration; fails when the Lua interpreters cannot be created.
    pub fn new(time_limit: Duration, memory_limit: usize) -> Result<Self, crate::Error> {
        let shared = Shared::new(&Config::default(), 0)?;
        shared.scripting.eval.lock().set_memory_limit(memory_limit);
        Ok(Self {
            shared: Arc::new(shared),
            time_limit,
        })
    }

    /// `EVAL script numkeys keys... args...` as RESP2 or RESP3; returns the reply's bytes.
    pub fn eval(&self, script: &[u8], numkeys: &[u8], rest: &[&[u8]], resp3: bool) -> Vec<u8> {
        let mut data = Vec::new();
        let mut spans = Vec::new();
        for part in [b"EVAL".as_slice(), script, numkeys]
            .into_iter()
            .chain(rest.iter().copied())
        {
            let start = data.len();
            data.extend_from_slice(part);
            spans.push(start..data.len());
        }
        let info = Arc::new(ClientInfo::new(
            0,
            String::new(),
            String::new(),
            self.shared.acl.default_user(),
        ));
        let (push_tx, _push_rx) = PushQueue::new();
        let mut session = Session::new(info, true, push_tx);
        session.inline_scripts = true;
        let mut out = Out {
            buf: Vec::new(),
            resp3,
        };
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let flags = self.shared.scripting.flags.clone();
        let limit = self.time_limit;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                // Until the script is over, keep asking it to stop once the limit has passed.
                if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
                    while let Err(mpsc::RecvTimeoutError::Timeout) =
                        done_rx.recv_timeout(Duration::from_millis(5))
                    {
                        flags
                            .killed
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
            let mut slot = StoreSlot::new(&self.shared.store);
            let args = Args::new(&data, &spans);
            let mut cx = Cx {
                shared: &self.shared,
                session: &mut session,
                out: &mut out,
                store: &mut slot,
            };
            cmd::dispatch(&mut cx, &args);
            slot.release();
            let _ = done_tx.send(());
        });
        out.buf
    }
}
