//! The two things a pool asks of a connection beyond its public API: a liveness check that costs
//! no round trip, and dropping a reset queued at an earlier return.

use crate::conn::Connection;
use crate::protocol::backend;

impl Connection {
    /// Reads what the socket holds while the session is idle, without waiting, and says whether
    /// the connection is still usable. A server that ended the session (restart, shutdown,
    /// `pg_terminate_backend`, idle timeout) sent a FATAL ErrorResponse and closed the socket;
    /// either one marks the connection broken. Notices, notifications and parameter changes stay
    /// buffered for the next request to handle as usual.
    pub(crate) fn check_idle(&mut self) -> bool {
        if self.is_broken() {
            return false;
        }
        if self.is_busy() {
            // A response is due: what the socket holds belongs to it.
            return true;
        }
        if self.io.fill_now().is_err() {
            return false;
        }
        let buffered = self.io.buffered();
        let mut pos = 0;
        while let Some(rest) = buffered.get(pos..) {
            match backend::header(rest) {
                Ok(Some((b'E', _))) | Err(_) => {
                    // An idle session only gets an ErrorResponse when the server ends it.
                    self.io.mark_broken();
                    return false;
                }
                Ok(Some((_, len))) if len <= rest.len() => pos += len,
                _ => break,
            }
        }
        true
    }

    /// Drops the statements queued with [`Connection::prepend`] that have not been sent, so a
    /// reset queued at an earlier return is not queued twice.
    pub(crate) fn clear_prepended(&mut self) {
        self.prelude.queries.clear();
    }
}
