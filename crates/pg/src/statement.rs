//! Prepared statements and the per-connection cache that prepares SQL automatically once it
//! has run often enough, evicting the least recently used.

use crate::rows::{Column, Columns};
use crate::types::{Format, Oid};
use std::sync::{Arc, OnceLock};

/// A statement prepared on one connection: its server-side name, parameter types and columns.
#[derive(Clone, Debug)]
pub struct Statement(Arc<StatementInner>);

#[derive(Debug)]
struct StatementInner {
    name: String,
    sql: Box<str>,
    params: Vec<Oid>,
    /// The columns as Describe reported them (text format).
    columns: Columns,
    binary_columns: OnceLock<Columns>,
}

impl Statement {
    pub(crate) fn new(
        name: String,
        sql: &str,
        params: Vec<Oid>,
        columns: Vec<Column>,
    ) -> Statement {
        Statement(Arc::new(StatementInner {
            name,
            sql: sql.into(),
            params,
            columns: columns.into(),
            binary_columns: OnceLock::new(),
        }))
    }

    /// The server-side name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The SQL text.
    pub fn sql(&self) -> &str {
        &self.0.sql
    }

    /// The parameter types the server inferred or was told.
    pub fn param_types(&self) -> &[Oid] {
        &self.0.params
    }

    /// The result columns (in text format).
    pub fn columns(&self) -> &[Column] {
        &self.0.columns
    }

    /// The result columns as they will arrive in `format`.
    pub(crate) fn columns_in(&self, format: Format) -> Columns {
        match format {
            Format::Text => self.0.columns.clone(),
            Format::Binary => self
                .0
                .binary_columns
                .get_or_init(|| {
                    self.0
                        .columns
                        .iter()
                        .map(|c| c.with_format(Format::Binary))
                        .collect()
                })
                .clone(),
        }
    }
}

/// How the next execution of some SQL should go.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Parse it as the unnamed statement (not run often enough yet, or caching is off).
    Unprepared,
    /// Prepare it under this name in the same round trip as running it.
    Prepare(String),
    /// It is prepared.
    Prepared(Statement),
    /// An earlier statement of the same pipeline prepares it under this name; its parameter
    /// types are not known yet, so parameters go as text.
    Pending(String),
}

#[derive(Debug)]
struct Entry {
    uses: u32,
    last_used: u64,
    statement: Option<Statement>,
}

/// Per-connection cache from SQL text to prepared statements.
#[derive(Debug)]
pub(crate) struct StatementCache {
    /// Keyed by Sluice's own SQL texts, looked up at every execution: a fast hash (seeded per
    /// process), not SipHash, which cost as much as the rest of the lookup.
    entries: foldhash::HashMap<Box<str>, Entry>,
    threshold: u32,
    capacity: usize,
    prepared: usize,
    clock: u64,
    next_id: u64,
}

impl StatementCache {
    /// `threshold`: executions before a statement is prepared (0: never automatically).
    /// `capacity`: prepared statements kept before the least recently used is closed.
    pub(crate) fn new(threshold: u32, capacity: usize) -> StatementCache {
        StatementCache {
            entries: foldhash::HashMap::default(),
            threshold,
            capacity: capacity.max(1),
            prepared: 0,
            clock: 0,
            next_id: 0,
        }
    }

    /// A fresh statement name, unique on this connection.
    pub(crate) fn next_name(&mut self) -> String {
        self.next_id += 1;
        format!("sluice_{}", self.next_id)
    }

    /// Counts one execution of `sql` and says how to run it.
    pub(crate) fn plan(&mut self, sql: &str) -> Plan {
        if self.threshold == 0 {
            return Plan::Unprepared;
        }
        self.clock += 1;
        let clock = self.clock;
        if let Some(entry) = self.entries.get_mut(sql) {
            entry.uses = entry.uses.saturating_add(1);
            entry.last_used = clock;
            if let Some(statement) = &entry.statement {
                return Plan::Prepared(statement.clone());
            }
            if entry.uses >= self.threshold {
                return Plan::Prepare(self.next_name());
            }
            return Plan::Unprepared;
        }
        // Unprepared entries only count uses; keep their number bounded too.
        if self.entries.len() >= self.capacity * 4 {
            self.evict_where(|e| e.statement.is_none());
        }
        self.entries.insert(
            sql.into(),
            Entry {
                uses: 1,
                last_used: clock,
                statement: None,
            },
        );
        if self.threshold <= 1 {
            Plan::Prepare(self.next_name())
        } else {
            Plan::Unprepared
        }
    }

    /// The cached statement for `sql`, if prepared.
    pub(crate) fn get(&self, sql: &str) -> Option<Statement> {
        self.entries.get(sql).and_then(|e| e.statement.clone())
    }

    /// Records that `statement` is prepared; returns the name of a statement evicted to make
    /// room, which the caller must close on the server.
    pub(crate) fn insert(&mut self, statement: Statement) -> Option<String> {
        self.clock += 1;
        let clock = self.clock;
        let mut evicted = None;
        if self.prepared >= self.capacity {
            evicted = self.evict_where(|e| e.statement.is_some());
        }
        let entry = self.entries.entry(statement.sql().into()).or_insert(Entry {
            uses: 0,
            last_used: clock,
            statement: None,
        });
        entry.last_used = clock;
        if entry.statement.replace(statement).is_none() {
            self.prepared += 1;
        }
        evicted
    }

    /// Forgets `sql`'s statement (it became invalid); returns its name to close.
    pub(crate) fn invalidate(&mut self, sql: &str) -> Option<String> {
        let statement = self.entries.get_mut(sql)?.statement.take()?;
        self.prepared -= 1;
        Some(statement.name().to_owned())
    }

    /// Forgets everything (after `DISCARD ALL` / `DEALLOCATE ALL` closed the statements).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.prepared = 0;
    }

    /// The number of prepared statements held.
    pub(crate) fn prepared_count(&self) -> usize {
        self.prepared
    }

    /// Removes the least recently used entry matching `filter`; returns its statement's name.
    fn evict_where(&mut self, filter: impl Fn(&Entry) -> bool) -> Option<String> {
        let victim = self
            .entries
            .iter()
            .filter(|(_, e)| filter(e))
            .min_by_key(|(_, e)| e.last_used)
            .map(|(k, _)| k.clone())?;
        let entry = self.entries.remove(&victim)?;
        let statement = entry.statement?;
        self.prepared -= 1;
        Some(statement.name().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(cache: &mut StatementCache, sql: &str) -> Option<String> {
        let name = cache.next_name();
        cache.insert(Statement::new(name, sql, vec![], vec![]))
    }

    #[test]
    fn prepares_after_threshold_uses() {
        let mut cache = StatementCache::new(3, 10);
        assert!(matches!(cache.plan("a"), Plan::Unprepared));
        assert!(matches!(cache.plan("a"), Plan::Unprepared));
        let Plan::Prepare(name) = cache.plan("a") else {
            panic!("third use prepares")
        };
        cache.insert(Statement::new(name.clone(), "a", vec![23], vec![]));
        let Plan::Prepared(s) = cache.plan("a") else {
            panic!("cached")
        };
        assert_eq!((s.name(), s.param_types()), (name.as_str(), &[23][..]));
    }

    #[test]
    fn threshold_zero_never_prepares_and_one_prepares_at_once() {
        let mut off = StatementCache::new(0, 10);
        for _ in 0..10 {
            assert!(matches!(off.plan("a"), Plan::Unprepared));
        }
        let mut eager = StatementCache::new(1, 10);
        assert!(matches!(eager.plan("a"), Plan::Prepare(_)));
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut cache = StatementCache::new(1, 2);
        assert_eq!(prepared(&mut cache, "a"), None);
        assert_eq!(prepared(&mut cache, "b"), None);
        cache.plan("a"); // a is now more recent than b
        let evicted = prepared(&mut cache, "c").expect("full cache evicts");
        assert!(cache.get("b").is_none(), "b was least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        assert!(evicted.starts_with("sluice_"));
        assert_eq!(cache.prepared_count(), 2);
    }

    #[test]
    fn invalidate_and_clear() {
        let mut cache = StatementCache::new(1, 4);
        prepared(&mut cache, "a");
        assert!(cache.invalidate("a").is_some());
        assert!(cache.invalidate("a").is_none());
        assert_eq!(cache.prepared_count(), 0);
        prepared(&mut cache, "b");
        cache.clear();
        assert!(cache.get("b").is_none());
    }

    #[test]
    fn unprepared_entries_stay_bounded() {
        let mut cache = StatementCache::new(100, 2);
        for i in 0..1000 {
            cache.plan(&format!("SELECT {i}"));
        }
        assert!(cache.entries.len() <= 8);
    }
}
