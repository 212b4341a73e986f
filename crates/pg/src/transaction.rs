//! Transactions whose BEGIN travels with their first statement and whose reset after a drop
//! travels with the connection's next request.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::lsn::Lsn;

use crate::pipeline::SyncMode;
use crate::protocol::backend::TransactionStatus;
use std::borrow::Cow;
use std::ops::{Deref, DerefMut};

/// Isolation levels of `BEGIN ISOLATION LEVEL ...`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationLevel {
    /// READ UNCOMMITTED (behaves as READ COMMITTED in PostgreSQL).
    ReadUncommitted,
    /// READ COMMITTED, PostgreSQL's default.
    ReadCommitted,
    /// REPEATABLE READ.
    RepeatableRead,
    /// SERIALIZABLE.
    Serializable,
}

/// Options of a transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransactionOptions {
    /// The isolation level, or the session's default.
    pub isolation: Option<IsolationLevel>,
    /// READ ONLY (`Some(true)`) or READ WRITE (`Some(false)`).
    pub read_only: Option<bool>,
    /// DEFERRABLE (only meaningful for serializable read-only transactions).
    pub deferrable: Option<bool>,
}

impl IsolationLevel {
    fn as_sql(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }
}

impl TransactionOptions {
    fn begin_sql(&self) -> Cow<'static, str> {
        if *self == TransactionOptions::default() {
            return Cow::Borrowed("BEGIN");
        }
        let mut sql = String::from("BEGIN");
        if let Some(level) = self.isolation {
            sql.push_str(" ISOLATION LEVEL ");
            sql.push_str(level.as_sql());
        }
        sql.push_str(match self.read_only {
            Some(true) => " READ ONLY",
            Some(false) => " READ WRITE",
            None => "",
        });
        sql.push_str(match self.deferrable {
            Some(true) => " DEFERRABLE",
            Some(false) => " NOT DEFERRABLE",
            None => "",
        });
        Cow::Owned(sql)
    }
}

/// An open transaction. Statements run through it (it dereferences to the connection). Ends
/// with [`Transaction::commit`] or [`Transaction::rollback`]; dropped without either, it rolls
/// back — the ROLLBACK is prepended to the connection's next request rather than sent alone.
#[derive(Debug)]
pub struct Transaction<'c> {
    conn: &'c mut Connection,
    finished: bool,
}

impl Connection {
    /// Starts a transaction. Nothing is sent yet: the BEGIN goes out with the first statement.
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        self.transaction_with(TransactionOptions::default())
    }

    /// Starts a transaction with an isolation level and access mode.
    pub fn transaction_with(&mut self, options: TransactionOptions) -> Result<Transaction<'_>> {
        let already = self.prelude.begin.is_some()
            || (self.tx_status != TransactionStatus::Idle && !self.prelude.rollback);
        if already {
            return Err(Error::new(
                ErrorKind::Usage,
                "a transaction is already open on this connection; commit or roll it back first",
            ));
        }
        self.prelude.begin = Some(options.begin_sql());
        Ok(Transaction {
            conn: self,
            finished: false,
        })
    }
}

impl Transaction<'_> {
    /// Commits. Fails with `ErrorKind::RolledBack` when the server rolled back instead (an
    /// earlier statement in the transaction failed), so a lost transaction is never silent.
    pub async fn commit(mut self) -> Result<()> {
        self.finished = true;
        if self.conn.prelude.begin.take().is_some() {
            return Ok(()); // Nothing ran: nothing to send.
        }
        let results = self.conn.simple_query("COMMIT").await?;
        if results
            .first()
            .is_some_and(|r| r.command_tag().as_str() == "ROLLBACK")
        {
            return Err(Error::new(
                ErrorKind::RolledBack,
                "COMMIT rolled the transaction back because a statement in it failed",
            ));
        }
        Ok(())
    }

    /// Commits, and answers the commit's WAL position read in the same round trip (see
    /// [`crate::lsn`]): `None` when nothing ran (there was nothing to commit) or the position
    /// could not be read (the commit stands; see [`Connection::commit_lsn`]).
    pub async fn commit_lsn(mut self) -> Result<Option<Lsn>> {
        self.finished = true;
        if self.conn.prelude.begin.take().is_some() {
            return Ok(None);
        }
        self.conn.commit_lsn().await
    }

    /// Rolls back.
    pub async fn rollback(mut self) -> Result<()> {
        self.finished = true;
        if self.conn.prelude.begin.take().is_some() {
            return Ok(());
        }
        self.conn.simple_query("ROLLBACK").await.map(drop)
    }
}

impl Connection {
    /// Commits the transaction block open on this connection (one begun with a `BEGIN`
    /// statement) and reads the commit's WAL position after it, both in one round trip (a
    /// pipeline of two groups: the COMMIT, then [`crate::lsn::COMMIT_POSITION_SQL`]).
    ///
    /// Fails, as [`Transaction::commit`] does, when the COMMIT fails or rolls back instead
    /// (`ErrorKind::RolledBack`). When the COMMIT succeeded but the position cannot be read
    /// (the server is a standby, or refuses the function), the commit stands and the answer is
    /// `Ok(None)`, with a warning in the log.
    pub async fn commit_lsn(&mut self) -> Result<Option<Lsn>> {
        let mut batch = self.pipeline(SyncMode::Groups).await?;
        batch.query("COMMIT", &[])?;
        batch.commit_position()?;
        let mut results = batch.run().await?.into_iter();
        let committed = results
            .next()
            .unwrap_or_else(|| Err(Error::new(ErrorKind::Protocol, "COMMIT gave no result")))?;
        if committed.command_tag().as_str() == "ROLLBACK" {
            return Err(Error::new(
                ErrorKind::RolledBack,
                "COMMIT rolled the transaction back because a statement in it failed",
            ));
        }
        Ok(Lsn::from_commit_result(results.next().as_ref()))
    }
}

impl Deref for Transaction<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl DerefMut for Transaction<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if self.conn.prelude.begin.take().is_none() {
            self.conn.prelude.rollback = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_statements() {
        let o = |isolation, read_only, deferrable| {
            TransactionOptions {
                isolation,
                read_only,
                deferrable,
            }
            .begin_sql()
            .into_owned()
        };
        assert_eq!(o(None, None, None), "BEGIN");
        assert_eq!(
            o(Some(IsolationLevel::Serializable), None, None),
            "BEGIN ISOLATION LEVEL SERIALIZABLE"
        );
        assert_eq!(
            o(Some(IsolationLevel::Serializable), Some(true), Some(true)),
            "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE"
        );
        assert_eq!(o(None, Some(false), None), "BEGIN READ WRITE");
    }
}
