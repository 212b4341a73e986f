//! `sluice import`: loads CSJ, CSV, TSV or JSON Lines into a table through COPY, streamed, in one
//! transaction: all rows or none. A bad line is reported with its line number and the reason.

use crate::export::{
    CHUNK, Failure, column_kinds, connect, db_failure, format_and_header, parse_format, report,
};
use anyhow::{Context, anyhow};
use clap::Args;
use sluice_formats::decode::{
    CollectFields, CsjDecoder, CsjHeader, CsvScanner, JsonlDecoder, LineMap, MAX_LINE, SkipFields,
    TsvScanner, first_object_keys, parse_text_header,
};
use sluice_formats::{ColumnKind, DecodeError, Format, Oid};
use sluice_pg::{Connection, CopyIn};
use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::PathBuf;

/// How much input is read at a time.
const READ_SIZE: usize = 1024 * 1024;

/// Options of `sluice import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Database URL or conninfo string; without it DATABASE_URL, then the PG* variables and
    /// ~/.pgpass, as psql.
    #[arg(short = 'd', long = "database", env = "DATABASE_URL")]
    pub database: Option<String>,
    /// Input format: csj, csv, tsv or jsonl (default: from FILE's extension, else csj).
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// The input starts with a header line of column names (the default for csj and csv; for
    /// tsv, a header as `sluice export --header` writes it).
    #[arg(long, overrides_with = "no_header")]
    pub header: bool,
    /// No header line: the columns are all of the table's, in order (csv and tsv).
    #[arg(long, overrides_with = "header")]
    pub no_header: bool,
    /// No summary line on standard error.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The table, as SQL names it (`name`, `schema.name`, `"Mixed Case"`).
    pub table: String,
    /// The input file (default: standard input).
    pub file: Option<PathBuf>,
}

pub fn run(args: ImportArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match runtime.block_on(import(&args)) {
        Ok(rows) => {
            if !args.quiet {
                eprintln!("sluice import: {rows} rows into {}", args.table);
            }
            Ok(())
        }
        Err(failure) => {
            let status = report("import", &failure);
            if !matches!(failure, Failure::BrokenPipe) {
                eprintln!("sluice import: nothing was imported");
            }
            drop(runtime);
            std::process::exit(status);
        }
    }
}

/// The input, read in large pieces into one buffer that keeps what is not consumed yet.
struct Input {
    reader: File,
    name: String,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
}

impl Input {
    fn open(path: Option<&PathBuf>) -> anyhow::Result<Input> {
        let (reader, name) = match path {
            Some(path) => (
                File::open(path).with_context(|| format!("opening {}", path.display()))?,
                path.display().to_string(),
            ),
            None => (
                File::from(
                    std::io::stdin()
                        .as_fd()
                        .try_clone_to_owned()
                        .context("opening standard input")?,
                ),
                "standard input".to_owned(),
            ),
        };
        Ok(Input {
            reader,
            name,
            buf: vec![0; READ_SIZE],
            start: 0,
            end: 0,
            eof: false,
        })
    }

    fn data(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Reads more after the unconsumed data, moving it to the front or growing the buffer (for
    /// a line longer than it) as needed. Sets `eof` at the end of the input.
    fn fill(&mut self) -> Result<(), Failure> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0 && self.buf.len() - self.end < READ_SIZE / 2 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < READ_SIZE / 2 {
            if self.buf.len() > MAX_LINE + READ_SIZE {
                return Err(anyhow!("{}: a line is longer than 1 GiB", self.name).into());
            }
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            let space = self.buf.get_mut(self.end..).unwrap_or_default();
            match self.reader.read(space) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("reading {}", self.name))
                        .into());
                }
            }
        }
    }
}

/// A decode error as a failure that names the input.
fn decode_failure(e: DecodeError, input_name: &str) -> Failure {
    Failure::Other(anyhow!("{input_name}: {e}"))
}

/// The table's columns, names and type OIDs, as `SELECT * FROM table` describes them.
async fn table_columns(conn: &mut Connection, table: &str) -> Result<Vec<(String, Oid)>, Failure> {
    let sql = format!("SELECT * FROM {table} LIMIT 0");
    let statement = conn.prepare(&sql).await.map_err(|e| db_failure(e, &sql))?;
    Ok(statement
        .columns()
        .iter()
        .map(|c| (c.name().to_owned(), c.type_oid()))
        .collect())
}

/// The kinds of the named columns of `table`; an unknown name fails before anything loads.
async fn kinds_for(
    conn: &mut Connection,
    table: &str,
    names: &[String],
) -> Result<Vec<ColumnKind>, Failure> {
    let columns = table_columns(conn, table).await?;
    let mut oids = Vec::with_capacity(names.len());
    for name in names {
        match columns.iter().find(|(n, _)| n == name) {
            Some(&(_, oid)) => oids.push(oid),
            None => {
                let list: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
                return Err(anyhow!(
                    "column {name:?} of the input is not a column of {table} (its columns: {})",
                    list.join(", ")
                )
                .into());
            }
        }
    }
    column_kinds(conn, &oids).await
}

/// How a server error's `COPY t, line N` maps back to a line of the input.
enum Lines<'a> {
    /// The input's line is COPY's plus this offset.
    Offset(u64),
    /// Rows were converted: look the row up.
    Map(&'a LineMap),
}

/// Why a COPY stopped: the server refused data, or something on our side.
enum Stop {
    Server(sluice_pg::Error),
    Local(Failure),
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Local(f)
    }
}

impl Stop {
    /// The failure to report, with COPY's line number turned into the input's.
    fn into_failure(self, sql: &str, input_name: &str, lines: Lines<'_>) -> Failure {
        match self {
            Stop::Local(f) => f,
            Stop::Server(error) => copy_failure(error, sql, input_name, lines),
        }
    }
}

/// A server error during the COPY, placed on a line of the input when its context names one.
fn copy_failure(error: sluice_pg::Error, sql: &str, input_name: &str, lines: Lines<'_>) -> Failure {
    let Some(db) = error.as_db_error() else {
        return Failure::Other(anyhow::Error::new(error));
    };
    let context = db.where_().unwrap_or_default();
    let copy_line = context
        .split_once(", line ")
        .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u64>().ok());
    let Some(copy_line) = copy_line else {
        return Failure::Db {
            error,
            sql: sql.to_owned(),
        };
    };
    let column = context
        .split_once(", column ")
        .map(|(_, rest)| rest.split_once(": ").map_or(rest, |(c, _)| c));
    let line = match lines {
        Lines::Offset(offset) => Some(copy_line + offset),
        Lines::Map(map) => map.line_of(copy_line),
    };
    let place = match line {
        Some(line) => format!("line {line}"),
        None => format!("row {copy_line}"),
    };
    let mut message = format!("{input_name}: {place}");
    if let Some(column) = column {
        message.push_str(&format!(", column {column}"));
    }
    message.push_str(&format!(": {} (SQLSTATE {})", db.message(), db.code()));
    if let Some(detail) = db.detail() {
        message.push_str(&format!("\nDETAIL:  {detail}"));
    }
    if let Some(hint) = db.hint() {
        message.push_str(&format!("\nHINT:  {hint}"));
    }
    Failure::Other(anyhow!(message))
}

async fn import(args: &ImportArgs) -> Result<u64, Failure> {
    let (format, header) =
        format_and_header(args.format, args.file.as_ref(), args.header, args.no_header);
    match format {
        Format::Json => {
            return Err(anyhow!(
                "import reads csj, csv, tsv or jsonl; for JSON, write one object per line (jsonl)"
            )
            .into());
        }
        Format::Csj | Format::JsonLines if args.no_header => {
            return Err(anyhow!(
                "{format} input names its columns in the data: --no-header does not apply"
            )
            .into());
        }
        _ => {}
    }
    let mut input = Input::open(args.file.as_ref())?;
    let mut conn = connect(args.database.as_deref()).await?;
    let table = args.table.as_str();
    match format {
        Format::Csv => import_csv(&mut conn, table, header, &mut input).await,
        Format::Tsv => import_tsv(&mut conn, table, header, &mut input).await,
        Format::Csj => import_csj(&mut conn, table, &mut input).await,
        Format::JsonLines | Format::Json => import_jsonl(&mut conn, table, &mut input).await,
    }
}

/// Runs `sql` (a COPY FROM STDIN) in a transaction, feeding it with `feed`; commits only when
/// every row loaded, rolls back otherwise.
async fn copy_in_transaction<F>(conn: &mut Connection, sql: &str, feed: F) -> Result<u64, Stop>
where
    F: AsyncFnOnce(&mut CopyIn<'_>) -> Result<(), Stop>,
{
    let mut tx = conn.transaction().map_err(Stop::Server)?;
    let outcome = {
        let mut copy = tx.copy_in(sql).await.map_err(Stop::Server)?;
        match feed(&mut copy).await {
            Ok(()) => copy.finish().await.map_err(Stop::Server),
            Err(Stop::Local(failure)) => {
                // The server has not seen the bad data: tell it to throw the rest away.
                let _ = copy.abort("sluice import stopped on bad input").await;
                Err(Stop::Local(failure))
            }
            Err(stop) => Err(stop),
        }
    };
    match outcome {
        Ok(rows) => {
            tx.commit().await.map_err(Stop::Server)?;
            Ok(rows)
        }
        Err(stop) => {
            let _ = tx.rollback().await;
            Err(stop)
        }
    }
}

/// Reads the input through `decode` (a line decoder that consumes complete lines and appends
/// COPY text rows) and sends the rows in large chunks.
async fn feed_decoded(
    copy: &mut CopyIn<'_>,
    input: &mut Input,
    mut decode: impl FnMut(&[u8], bool, &mut Vec<u8>) -> Result<usize, DecodeError>,
) -> Result<(), Stop> {
    let mut out: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    loop {
        let used = decode(input.data(), input.eof, &mut out)
            .map_err(|e| Stop::Local(decode_failure(e, &input.name)))?;
        input.consume(used);
        if out.len() >= CHUNK {
            copy.write(&out).await.map_err(Stop::Server)?;
            out.clear();
        }
        if input.eof {
            break;
        }
        input.fill()?;
    }
    copy.write(&out).await.map_err(Stop::Server)
}

/// Reads the input until `header` finds what it needs at its start.
fn read_header<T>(
    input: &mut Input,
    mut header: impl FnMut(&[u8], bool) -> Result<Option<T>, DecodeError>,
) -> Result<T, Failure> {
    loop {
        if let Some(found) =
            header(input.data(), input.eof).map_err(|e| decode_failure(e, &input.name))?
        {
            return Ok(found);
        }
        if input.eof {
            return Err(anyhow!("{}: no header line", input.name).into());
        }
        input.fill()?;
    }
}

async fn import_csj(conn: &mut Connection, table: &str, input: &mut Input) -> Result<u64, Failure> {
    let header = read_header(input, CsjHeader::read)?;
    input.consume(header.consumed);
    let kinds = kinds_for(conn, table, &header.names).await?;
    let sql = copy_sql(table, Some(&header.names), "");
    let mut decoder = CsjDecoder::new(kinds, header.next_line);
    let result = copy_in_transaction(conn, &sql, async |copy| {
        feed_decoded(copy, input, |data, eof, out| decoder.decode(data, eof, out)).await
    })
    .await;
    result.map_err(|stop| stop.into_failure(&sql, &input.name, Lines::Map(decoder.line_map())))
}

async fn import_jsonl(
    conn: &mut Connection,
    table: &str,
    input: &mut Input,
) -> Result<u64, Failure> {
    let names = match read_header(input, first_object_keys) {
        Ok(names) => names,
        // Empty input (or blank lines only): nothing to load, and nothing wrong.
        Err(_) if input.eof && lines_are_blank(input.data()) => return Ok(0),
        Err(e) => return Err(e),
    };
    let kinds = kinds_for(conn, table, &names).await?;
    let sql = copy_sql(table, Some(&names), "");
    let mut decoder = JsonlDecoder::new(&names, kinds);
    let result = copy_in_transaction(conn, &sql, async |copy| {
        feed_decoded(copy, input, |data, eof, out| decoder.decode(data, eof, out)).await
    })
    .await;
    result.map_err(|stop| stop.into_failure(&sql, &input.name, Lines::Map(decoder.line_map())))
}

/// `COPY table (columns) FROM STDIN options`.
fn copy_sql(table: &str, columns: Option<&[String]>, options: &str) -> String {
    let mut sql = format!("COPY {table}");
    if let Some(columns) = columns {
        let list: Vec<String> = columns
            .iter()
            .map(|c| sluice_pg::sql::quote_ident(c))
            .collect();
        sql.push_str(&format!(" ({})", list.join(", ")));
    }
    sql.push_str(" FROM STDIN");
    sql.push_str(options);
    sql
}

/// CSV goes to COPY as it is (header included, COPY skips it); it is scanned on the way for
/// the field count of every record and for `\.` lines, with physical line numbers.
async fn import_csv(
    conn: &mut Connection,
    table: &str,
    header: bool,
    input: &mut Input,
) -> Result<u64, Failure> {
    let mut scanner = CsvScanner::new();
    // How much of the buffered input the scanner has seen.
    let mut scanned = 0;
    let names = if header {
        let mut sink = CollectFields::new(Some(1));
        loop {
            let data = input.data().get(scanned..).unwrap_or_default();
            scanned += scanner
                .scan(data, &mut sink)
                .map_err(|e| decode_failure(e, &input.name))?;
            if !sink.records.is_empty() {
                break;
            }
            if input.eof {
                scanner
                    .finish(&mut sink)
                    .map_err(|e| decode_failure(e, &input.name))?;
                break;
            }
            input.fill()?;
        }
        let Some(record) = sink.records.into_iter().next() else {
            return Err(anyhow!("{}: no header line", input.name).into());
        };
        let mut names = Vec::with_capacity(record.len());
        for (i, field) in record.into_iter().enumerate() {
            match field {
                Some(name) if !name.is_empty() => {
                    names.push(String::from_utf8_lossy(&name).into_owned())
                }
                _ => {
                    return Err(anyhow!(
                        "{}: line 1: the header's field {} is empty; every column needs a name",
                        input.name,
                        i + 1
                    )
                    .into());
                }
            }
        }
        scanner.expect_fields(names.len());
        Some(names)
    } else {
        None
    };
    let options = if header {
        " (FORMAT csv, HEADER)"
    } else {
        " (FORMAT csv)"
    };
    let sql = copy_sql(table, names.as_deref(), options);
    let name = input.name.clone();
    let result = copy_in_transaction(conn, &sql, async |copy| {
        loop {
            let data = input.data();
            scanner
                .scan(data.get(scanned..).unwrap_or_default(), &mut SkipFields)
                .map_err(|e| Stop::Local(decode_failure(e, &name)))?;
            scanned = 0;
            copy.write(data).await.map_err(Stop::Server)?;
            let len = data.len();
            input.consume(len);
            if input.eof {
                return scanner
                    .finish(&mut SkipFields)
                    .map_err(|e| Stop::Local(decode_failure(e, &name)));
            }
            input.fill()?;
        }
    })
    .await;
    // PostgreSQL counts CSV lines physically, quoted newlines included.
    result.map_err(|stop| stop.into_failure(&sql, &name, Lines::Offset(0)))
}

/// COPY text goes as it is; a header line (optional) names the columns and is not sent.
async fn import_tsv(
    conn: &mut Connection,
    table: &str,
    header: bool,
    input: &mut Input,
) -> Result<u64, Failure> {
    let names = if header {
        let line = read_header(input, |data, eof| {
            Ok(match memchr_newline(data) {
                Some(end) => Some(end),
                None if eof && !data.is_empty() => Some(data.len()),
                None => None,
            })
        })?;
        let names = parse_text_header(input.data().get(..line).unwrap_or_default())
            .map_err(|e| decode_failure(e, &input.name))?;
        input.consume(line + 1);
        Some(names)
    } else {
        None
    };
    let offset = u64::from(header);
    let sql = copy_sql(table, names.as_deref(), "");
    let mut scanner = TsvScanner::new(1 + offset);
    let name = input.name.clone();
    let result = copy_in_transaction(conn, &sql, async |copy| {
        loop {
            let data = input.data();
            scanner
                .scan(data)
                .map_err(|e| Stop::Local(decode_failure(e, &name)))?;
            copy.write(data).await.map_err(Stop::Server)?;
            let len = data.len();
            input.consume(len);
            if input.eof {
                return scanner
                    .finish()
                    .map_err(|e| Stop::Local(decode_failure(e, &name)));
            }
            input.fill()?;
        }
    })
    .await;
    result.map_err(|stop| stop.into_failure(&sql, &name, Lines::Offset(offset)))
}

fn lines_are_blank(data: &[u8]) -> bool {
    data.iter().all(|b| b.is_ascii_whitespace())
}

fn memchr_newline(data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == b'\n')
}
