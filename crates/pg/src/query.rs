//! Running statements with the extended query protocol: one write per request, automatic
//! preparation, parameters in binary where the server's type allows, rows read in blocks.

use crate::conn::Connection;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::{Message, TransactionStatus, data_row_spans};
use crate::protocol::frontend::{self, BindError, Formats, ParamWriter};
use crate::rows::{Column, Columns, CommandTag, OwnedRow, RowBlock, Rows};
use crate::statement::{Plan, Statement};
use crate::stream::RowStream;
use crate::types::{ConversionError, Format, Oid, ToSql};

/// Query parameters: any mix of types, by reference.
pub type Params<'a> = &'a [&'a (dyn ToSql + 'a)];

fn param_error(index: usize, e: ConversionError) -> Error {
    Error::from(e).context(format!("parameter ${}", index + 1))
}

fn bind_error(e: BindError<Error>) -> Error {
    match e {
        BindError::Encode(e) => e.into(),
        BindError::Param(e) => e,
    }
}

/// Writes every parameter as text; the server infers types from the SQL.
fn put_text_params(w: &mut ParamWriter<'_>, params: Params<'_>) -> Result<()> {
    for (i, p) in params.iter().enumerate() {
        w.put(|buf| p.to_sql_text(buf))
            .map_err(|e| param_error(i, e))?;
    }
    Ok(())
}

/// Binds `statement` with every parameter as text (types not known yet, or left to the server).
fn bind_text(
    w: &mut bytes::BytesMut,
    statement: &str,
    params: Params<'_>,
    format: Format,
) -> Result<()> {
    frontend::bind(
        "",
        statement,
        Formats::All(Format::Text),
        |pw| put_text_params(pw, params),
        Formats::All(format),
        w,
    )
    .map_err(bind_error)
}

/// Writes each parameter in binary when its Rust type can encode the server's type, else as text.
fn put_typed_params(w: &mut ParamWriter<'_>, params: Params<'_>, types: &[Oid]) -> Result<()> {
    for (i, (p, &oid)) in params.iter().zip(types).enumerate() {
        if p.accepts_binary(oid) {
            w.put(|buf| p.to_sql_binary(oid, buf))
        } else {
            w.put(|buf| p.to_sql_text(buf))
        }
        .map_err(|e| param_error(i, e))?;
    }
    Ok(())
}

/// Whether `sql` is a single plain statement that may share an implicit transaction with a
/// session reset: its first keyword is one of the data statements, which never refuse to run
/// in a transaction block or a pipeline (unlike VACUUM, CREATE DATABASE, CALL, BEGIN, ...).
fn is_plain_statement(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    // Skip leading comments.
    loop {
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    let word: &str = rest
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    [
        "SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "VALUES", "TABLE", "MERGE",
    ]
    .iter()
    .any(|k| k.eq_ignore_ascii_case(word))
}

/// Whether `e` says a cached statement went stale: dropped on the server (`26000`), or its result
/// type changed under it (`0A000 cached plan must not change result type`).
pub(crate) fn is_stale_statement(e: &Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        db.code() == crate::sqlstate::INVALID_SQL_STATEMENT_NAME
            || (db.code() == crate::sqlstate::FEATURE_NOT_SUPPORTED
                && db
                    .message()
                    .contains("cached plan must not change result type"))
    })
}

/// What a statement's response begins with.
#[derive(Debug)]
pub(crate) enum Head {
    /// Rows follow, with these columns.
    Rows(Columns),
    /// The statement returns no rows; CommandComplete follows.
    NoRows,
}

impl Connection {
    /// Writes the messages that run `sql` once according to `plan` (no Sync).
    pub(crate) fn write_statement(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
        plan: &Plan,
    ) -> Result<()> {
        let start = self.io.write.len();
        let result = self.write_statement_messages(sql, params, format, plan);
        if result.is_err() {
            // Leave no half-written statement behind to run with the next request.
            self.io.write.truncate(start);
        }
        result
    }

    fn write_statement_messages(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
        plan: &Plan,
    ) -> Result<()> {
        let w = &mut self.io.write;
        match plan {
            Plan::Unprepared => {
                frontend::parse("", sql, &[], w)?;
                bind_text(w, "", params, format)?;
                frontend::describe(frontend::Target::Portal, "", w)?;
            }
            Plan::Prepare(name) => {
                frontend::parse(name, sql, &[], w)?;
                frontend::describe(frontend::Target::Statement, name, w)?;
                bind_text(w, name, params, format)?;
            }
            Plan::Pending(name) => bind_text(w, name, params, format)?,
            Plan::Prepared(statement) => {
                let types = statement.param_types();
                if types.len() != params.len() {
                    return Err(Error::new(
                        ErrorKind::ParameterCount,
                        format!(
                            "the statement takes {} parameters but {} were given",
                            types.len(),
                            params.len()
                        ),
                    ));
                }
                let formats: smallformats::Formats = params
                    .iter()
                    .zip(types)
                    .map(|(p, &oid)| {
                        if p.accepts_binary(oid) {
                            Format::Binary
                        } else {
                            Format::Text
                        }
                    })
                    .collect();
                frontend::bind(
                    "",
                    statement.name(),
                    Formats::Each(formats.as_slice()),
                    |pw| put_typed_params(pw, params, types),
                    Formats::All(format),
                    w,
                )
                .map_err(bind_error)?;
            }
        }
        frontend::execute("", 0, w)?;
        Ok(())
    }

    /// Reads a statement's response up to where its rows begin (or where it ends, for a
    /// statement without rows). Caches the statement when `plan` prepared it.
    pub(crate) async fn read_head(
        &mut self,
        sql: &str,
        plan: &Plan,
        format: Format,
    ) -> Result<Head> {
        let mut columns: Option<Columns> = match plan {
            Plan::Prepared(s) => Some(s.columns_in(format)),
            _ => None,
        };
        let mut param_types: Vec<Oid> = Vec::new();
        let mut no_data = false;
        let mut bound = false;
        loop {
            if bound && (no_data || columns.is_some()) {
                return Ok(match columns {
                    Some(c) if !no_data && !c.is_empty() => Head::Rows(c),
                    _ => Head::NoRows,
                });
            }
            let (tag, len) = self.next_message().await?;
            match tag {
                b'1' | b'3' => self.io.consume(len),
                b't' => {
                    if let Message::ParameterDescription(p) = self.parse_front(tag, len)? {
                        param_types = p.types().collect();
                    }
                    self.io.consume(len);
                }
                b'T' => {
                    let Message::RowDescription(rd) = self.parse_front(tag, len)? else {
                        return Err(self.unexpected("instead of RowDescription", tag));
                    };
                    let described: Vec<Column> = match plan {
                        Plan::Prepare(_) => rd
                            .fields()
                            .map(|f| Column::from_description(&f, Format::Text))
                            .collect(),
                        _ => rd
                            .fields()
                            .map(|f| Column::from_description(&f, f.format))
                            .collect(),
                    };
                    self.io.consume(len);
                    match plan {
                        Plan::Prepare(name) => {
                            columns = Some(self.cache_prepared(
                                name,
                                sql,
                                &mut param_types,
                                described,
                                format,
                            ))
                        }
                        _ => columns = Some(described.into()),
                    }
                }
                b'n' => {
                    self.io.consume(len);
                    no_data = true;
                    if let Plan::Prepare(name) = plan {
                        self.cache_prepared(name, sql, &mut param_types, Vec::new(), format);
                    }
                }
                b'2' => {
                    self.io.consume(len);
                    bound = true;
                    if let Plan::Pending(_) = plan {
                        // The pipeline's earlier statement cached it when its Describe arrived.
                        match self.statements.get(sql) {
                            Some(s) if s.columns().is_empty() => no_data = true,
                            Some(s) => columns = Some(s.columns_in(format)),
                            None => no_data = true,
                        }
                    }
                }
                // The caller reads on to the ReadyForQuery that ends the failed request.
                b'E' => return Err(self.take_error(len)?),
                b'G' | b'H' | b'W' => return Err(self.reject_copy(tag, len).await),
                _ => return Err(self.unexpected("before a statement's rows", tag)),
            }
        }
    }

    /// Caches a statement whose Parse and Describe succeeded (it exists on the server from then
    /// on, whatever happens to its Bind); returns its columns in `format`.
    fn cache_prepared(
        &mut self,
        name: &str,
        sql: &str,
        param_types: &mut Vec<Oid>,
        columns: Vec<Column>,
        format: Format,
    ) -> Columns {
        let statement = Statement::new(name.to_owned(), sql, std::mem::take(param_types), columns);
        let columns = statement.columns_in(format);
        if let Some(evicted) = self.statements.insert(statement) {
            self.prelude.close_statements.push(evicted);
        }
        columns
    }

    /// Sends `sql` as one request and reads up to its rows, retrying once when a cached
    /// statement went stale outside a transaction.
    pub(crate) async fn start_query(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
    ) -> Result<Head> {
        let mut retried = false;
        loop {
            let (prelude, reset) = self.begin_request_fusing(is_plain_statement(sql)).await?;
            let plan = self.statements.plan(sql);
            let before_reset = self.io.write.len();
            let written = match reset {
                Some(reset) => self.write_fused_reset(reset),
                None => Ok(()),
            }
            .and_then(|()| self.write_statement(sql, params, format, &plan));
            if let Err(e) = written {
                // Nothing of this statement is sent; the prelude still goes out, and the reset
                // waits for the next request.
                self.io.write.truncate(before_reset);
                if let Some(reset) = reset {
                    self.prepend_reset(reset);
                }
                self.send_request(prelude, 0, true).await?;
                return Err(e);
            }
            frontend::sync(&mut self.io.write);
            self.send_request(prelude, 1, true).await?;
            let head = match reset {
                Some(reset) => match self.skip_fused_reset(reset).await {
                    Ok(()) => self.read_head(sql, &plan, format).await,
                    Err(e) => Err(e),
                },
                None => self.read_head(sql, &plan, format).await,
            };
            if let Err(e) = &head
                && !e.is_closed()
            {
                self.finish_failed().await;
            }
            match head {
                Err(e) if is_stale_statement(&e) && matches!(plan, Plan::Prepared(_)) => {
                    if let Some(name) = self.statements.invalidate(sql) {
                        self.prelude.close_statements.push(name);
                    }
                    if retried || self.tx_status != TransactionStatus::Idle {
                        return Err(e);
                    }
                    retried = true;
                }
                other => return other,
            }
        }
    }

    /// Runs a statement and streams its rows in blocks as they arrive, in text format.
    pub async fn query_stream(&mut self, sql: &str, params: Params<'_>) -> Result<RowStream<'_>> {
        self.query_stream_with(sql, params, Format::Text).await
    }

    /// Runs a statement and streams its rows in blocks, in the given format.
    pub async fn query_stream_with(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
    ) -> Result<RowStream<'_>> {
        let head = self.start_query(sql, params, format).await?;
        Ok(RowStream::new(self, head, true))
    }

    /// Runs a statement and collects all of its rows (text format).
    pub async fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Rows> {
        self.query_with(sql, params, Format::Text).await
    }

    /// Runs a statement and collects all of its rows in `format`.
    pub async fn query_with(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
    ) -> Result<Rows> {
        self.query_stream_with(sql, params, format)
            .await?
            .collect()
            .await
    }

    /// Runs a statement that must return exactly one row.
    pub async fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<OwnedRow> {
        self.query_one_with(sql, params, Format::Text).await
    }

    /// Runs a statement that must return exactly one row, in `format`.
    pub async fn query_one_with(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
    ) -> Result<OwnedRow> {
        self.query_opt_with(sql, params, format)
            .await?
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::RowCount,
                    "query returned no rows; exactly one was expected",
                )
            })
    }

    /// Runs a statement that returns at most one row.
    pub async fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<OwnedRow>> {
        self.query_opt_with(sql, params, Format::Text).await
    }

    /// Runs a statement that returns at most one row, in `format`.
    pub async fn query_opt_with(
        &mut self,
        sql: &str,
        params: Params<'_>,
        format: Format,
    ) -> Result<Option<OwnedRow>> {
        let mut stream = self.query_stream_with(sql, params, format).await?;
        let mut first: Option<RowBlock> = None;
        let mut count = 0;
        while let Some(block) = stream.next_block().await? {
            count += block.len();
            if first.is_none() {
                first = Some(block);
            }
        }
        match (count, first) {
            (0, _) => Ok(None),
            (1, Some(block)) => Ok(Some(OwnedRow::new(block))),
            (n, _) => Err(Error::new(
                ErrorKind::RowCount,
                format!("query returned {n} rows; at most one was expected"),
            )),
        }
    }

    /// Runs a statement and returns the number of rows it affected (or returned).
    pub async fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        let mut stream = self.query_stream_with(sql, params, Format::Text).await?;
        while stream.next_block().await?.is_some() {}
        Ok(stream.command_tag().map_or(0, CommandTag::rows_affected))
    }

    /// Prepares `sql` (or returns the cached statement) so it runs with one Bind/Execute.
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s);
        }
        let prelude = self.begin_request().await?;
        let name = self.statements.next_name();
        frontend::parse(&name, sql, &[], &mut self.io.write)?;
        frontend::describe(frontend::Target::Statement, &name, &mut self.io.write)?;
        frontend::sync(&mut self.io.write);
        self.send_request(prelude, 1, true).await?;
        let mut params = Vec::new();
        let mut columns = Vec::new();
        let mut failure = None;
        loop {
            let (tag, len) = self.next_message().await?;
            match tag {
                b'1' | b'n' | b'3' => self.io.consume(len),
                b't' => {
                    if let Message::ParameterDescription(p) = self.parse_front(tag, len)? {
                        params = p.types().collect();
                    }
                    self.io.consume(len);
                }
                b'T' => {
                    if let Message::RowDescription(rd) = self.parse_front(tag, len)? {
                        columns = rd
                            .fields()
                            .map(|f| Column::from_description(&f, Format::Text))
                            .collect();
                    }
                    self.io.consume(len);
                }
                b'E' => failure = Some(self.take_error(len)?),
                b'Z' => {
                    self.take_ready(len)?;
                    break;
                }
                _ => return Err(self.unexpected("in response to Parse/Describe", tag)),
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let statement = Statement::new(name, sql, params, columns);
        if let Some(evicted) = self.statements.insert(statement.clone()) {
            self.prelude.close_statements.push(evicted);
        }
        Ok(statement)
    }

    /// Collects the DataRows complete at the front of the read buffer into one block, without
    /// copying them: the block's bytes are a shared slice of the buffer.
    #[inline]
    pub(crate) fn take_block(
        &mut self,
        columns: &Columns,
        spans_hint: usize,
    ) -> Result<Option<RowBlock>> {
        let buf = self.io.buffered();
        let ncols = columns.len();
        let mut pos = 0;
        let mut spans = Vec::new();
        let mut rows = 0;
        while let Some(&[b'D', a, b, c, d]) = buf.get(pos..pos + 5) {
            let total = u32::from_be_bytes([a, b, c, d]) as usize + 1;
            // An invalid length stops the scan; the generic path reports it.
            let Some(body) = buf.get(pos + 5..pos + total).filter(|_| total >= 5) else {
                break;
            };
            if spans.capacity() == 0 {
                spans.reserve(spans_hint.max(ncols * 16));
            }
            if let Err(e) = data_row_spans(body, pos + 5, ncols as u16, &mut spans) {
                self.io.mark_broken();
                return Err(e.into());
            }
            pos += total;
            rows += 1;
        }
        if pos == 0 {
            return Ok(None);
        }
        let data = self.io.take(pos);
        Ok(Some(RowBlock::new(data, spans, rows, columns.clone())))
    }

    /// Applies what a CommandComplete tag implies for the session.
    pub(crate) fn on_command_complete(&mut self, tag: &str) {
        if tag == "DISCARD ALL" || tag == "DEALLOCATE ALL" {
            self.statements.clear();
        }
        if tag == "DISCARD ALL" || tag.starts_with("DEALLOCATE") {
            self.forget_prepared_resets();
        }
    }
}

/// A small inline list of formats, so building a Bind allocates nothing for up to 16 parameters.
mod smallformats {
    use crate::types::Format;

    pub(super) enum Formats {
        Inline([Format; 16], usize),
        Heap(Vec<Format>),
    }

    impl Formats {
        pub(super) fn as_slice(&self) -> &[Format] {
            match self {
                Formats::Inline(a, n) => &a[..*n],
                Formats::Heap(v) => v,
            }
        }
    }

    impl FromIterator<Format> for Formats {
        fn from_iter<I: IntoIterator<Item = Format>>(iter: I) -> Formats {
            let mut inline = [Format::Text; 16];
            let mut n = 0;
            let mut iter = iter.into_iter();
            for f in iter.by_ref() {
                if n == 16 {
                    let mut v = inline.to_vec();
                    v.push(f);
                    v.extend(iter);
                    return Formats::Heap(v);
                }
                inline[n] = f;
                n += 1;
            }
            Formats::Inline(inline, n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_plain_statement;

    #[test]
    fn plain_statements_by_first_keyword() {
        for sql in [
            "SELECT 1",
            "  select 1",
            "-- c\nINSERT INTO t VALUES (1)",
            "/* x */ with a as (select 1) table a",
            "Update t set a = 1",
            "VALUES (1)",
            "MERGE INTO t USING s ON true WHEN MATCHED THEN DO NOTHING",
        ] {
            assert!(is_plain_statement(sql), "{sql}");
        }
        for sql in [
            "VACUUM t",
            "CREATE DATABASE x",
            "BEGIN",
            "CALL p()",
            "",
            "-- only a comment",
            "SET x = 1",
            "selectx",
        ] {
            assert!(!is_plain_statement(sql), "{sql}");
        }
    }
}
