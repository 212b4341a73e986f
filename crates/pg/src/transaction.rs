//! Transactions whose BEGIN travels with their first statement and whose reset after a drop
//! travels with the connection's next request.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
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
        Ok(Transaction { conn: self, finished: false })
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
        if results.first().is_some_and(|r| r.command_tag().as_str() == "ROLLBACK") {
            return Err(Error::new(
                ErrorKind::RolledBack,
                "COMMIT rolled the transaction back because a statement in it failed",
            ));
        }
        Ok(())
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
            TransactionOptions { isolation, read_only, deferrable }.begin_sql().into_owned()
        };
        assert_eq!(o(None, None, None), "BEGIN");
        assert_eq!(o(Some(IsolationLevel::Serializable), None, None), "BEGIN ISOLATION LEVEL SERIALIZABLE");
        assert_eq!(
            o(Some(IsolationLevel::Serializable), Some(true), Some(true)),
            "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE"
        );
        assert_eq!(o(None, Some(false), None), "BEGIN READ WRITE");
    }
}
