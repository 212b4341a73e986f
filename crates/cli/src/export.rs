//! `sluice export`: runs a query and streams its rows to standard output or a file as CSJ, CSV,
//! TSV, JSON Lines or JSON, with memory bounded whatever the row count. Also the pieces `sluice
//! import` shares: connecting, learning column kinds from the catalog, reporting server errors.

use anyhow::Context;
use clap::Args;
use sluice_formats::kind;
use sluice_formats::{ColumnKind, ColumnSpec, Encoder, Format, Oid};
use sluice_pg::{Config, Connection};
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Output is gathered into chunks of about this size, each written with one system call.
pub(crate) const CHUNK: usize = 256 * 1024;

/// Options of `sluice export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Database URL or conninfo string; without it DATABASE_URL, then the PG* variables and
    /// ~/.pgpass, as psql.
    #[arg(short = 'd', long = "database", env = "DATABASE_URL")]
    pub database: Option<String>,
    /// Output format: csj, csv, tsv, jsonl or json (default: from the -o file's extension, else
    /// csj).
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Write a header line of column names (the default for csj and csv).
    #[arg(long, overrides_with = "no_header")]
    pub header: bool,
    /// Leave the header line out (the default for tsv, which COPY writes without one).
    #[arg(long, overrides_with = "header")]
    pub no_header: bool,
    /// No progress line on standard error (it is shown only when standard error is a terminal).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Print `peak_rss_kib=N` on standard error at the end (for benchmarks).
    #[arg(long, hide = true)]
    pub report_peak_rss: bool,
    /// Read from a streaming replica instead of the primary: the URL given (--replica=URL), or,
    /// without one, the configured replicas (`[database] replicas` of --config, else
    /// SLUICE_DATABASE_REPLICAS), the first that answers and is in recovery. A server that is
    /// not in recovery is refused: it is a primary.
    #[arg(
        long,
        value_name = "URL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub replica: Option<String>,
    /// The config file (sluice.toml) whose `[database] replicas` --replica reads from.
    #[arg(long = "config", value_name = "FILE", requires = "replica")]
    pub config: Option<PathBuf>,
    /// The query: any statement that returns rows (SELECT, VALUES, TABLE, ... RETURNING).
    pub sql: String,
}

/// Parses a `--format` value.
pub(crate) fn parse_format(s: &str) -> Result<Format, String> {
    s.parse::<Format>().map_err(|e| e.to_string())
}

/// Why a command stopped.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server refused a statement; shown as psql shows it, with a caret under `sql`.
    Db {
        error: sluice_pg::Error,
        sql: String,
    },
    /// Anything else, with its context.
    Other(anyhow::Error),
    /// Standard output was closed by the reader (`| head`): not an error.
    BrokenPipe,
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::Other(e)
    }
}

/// Wraps a driver error: a server error keeps the SQL it is about.
pub(crate) fn db_failure(error: sluice_pg::Error, sql: &str) -> Failure {
    if error.as_db_error().is_some() {
        Failure::Db {
            error,
            sql: sql.to_owned(),
        }
    } else {
        Failure::Other(anyhow::Error::new(error))
    }
}

/// A server error as psql shows it with `VERBOSITY verbose`'s SQLSTATE: `ERROR:  42601: syntax
/// error at or near "x"`, the query line with a caret, DETAIL and HINT.
pub(crate) fn describe_db_error(error: &sluice_pg::Error, sql: &str) -> String {
    match error.as_db_error() {
        Some(db) => {
            let pretty = db.pretty(sql);
            match pretty.split_once(":  ") {
                Some((severity, rest)) => format!("{severity}:  {}: {rest}", db.code()),
                None => pretty,
            }
        }
        None => error.to_string(),
    }
}

/// Connects with `database`, or the environment's defaults (PG* variables, ~/.pgpass) as psql.
pub(crate) async fn connect(database: Option<&str>) -> anyhow::Result<Connection> {
    let mut config =
        Config::parse(database.unwrap_or("")).context("reading the connection settings")?;
    if config.application_name().is_none() {
        config.set_fallback_application_name("sluice");
    }
    Connection::connect_with(&config).await.with_context(|| {
        format!(
            "connecting to database {:?} as {:?}",
            config.dbname(),
            config.user()
        )
    })
}

/// A connection to a streaming replica: `url`, or when it is empty the configured replicas
/// (`[database] replicas` of `config`, else SLUICE_DATABASE_REPLICAS), the first that answers
/// and is in recovery. A server that is not in recovery is refused.
async fn connect_replica(
    url: &str,
    config: Option<&std::path::Path>,
) -> anyhow::Result<Connection> {
    let urls = if url.is_empty() {
        let settings = crate::settings::resolve(config, |name| std::env::var(name).ok(), &[], &[])
            .context("reading the configured replicas")?;
        let urls = settings.database.replicas;
        if urls.is_empty() {
            anyhow::bail!(
                "--replica without a URL reads from the configured replicas, and none is \
                 configured: give --replica URL, [database] replicas in --config FILE, or \
                 SLUICE_DATABASE_REPLICAS"
            );
        }
        urls
    } else {
        vec![url.to_owned()]
    };
    let mut refusals = Vec::new();
    for (index, url) in urls.iter().enumerate() {
        let mut config = Config::parse(url)
            .with_context(|| format!("replica {index}: reading its connection settings"))?;
        config.set_application_name("sluice-export-replica");
        let host = config
            .targets()
            .iter()
            .map(|t| format!("{}:{}", t.host, t.port))
            .collect::<Vec<_>>()
            .join(",");
        let mut conn = match Connection::connect_with(&config).await {
            Ok(conn) => conn,
            Err(error) => {
                refusals.push(format!("replica {index} ({host}): {error}"));
                continue;
            }
        };
        let in_recovery = conn
            .query_one("SELECT pg_catalog.pg_is_in_recovery()", &[])
            .await
            .with_context(|| format!("asking replica {index} ({host}) whether it is in recovery"))?
            .get::<bool>(0)?;
        if in_recovery {
            return Ok(conn);
        }
        refusals.push(format!(
            "replica {index} ({host}) is not a replica: pg_is_in_recovery() is false there, so \
             it is a primary"
        ));
    }
    anyhow::bail!(
        "no replica to read from ({}); leave out --replica to read from the primary",
        refusals.join("; ")
    )
}

/// The JSON kinds of columns of types `oids` (types that are not built in are looked up in the
/// catalog once per connection).
pub(crate) async fn column_kinds(
    conn: &mut Connection,
    oids: &[Oid],
) -> Result<Vec<ColumnKind>, Failure> {
    kind::column_kinds(conn, oids)
        .await
        .map_err(|e| Failure::Other(anyhow::Error::new(e).context("looking up column types")))
}

/// The process's peak resident set size in KiB (VmHWM), 0 if unknown.
pub(crate) fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Prints a failure for `command` and returns the exit status.
pub(crate) fn report(command: &str, failure: &Failure) -> i32 {
    match failure {
        Failure::BrokenPipe => 0,
        Failure::Db { error, sql } => {
            eprintln!("{}", describe_db_error(error, sql));
            1
        }
        Failure::Other(e) => {
            eprintln!("sluice {command}: {e:#}");
            1
        }
    }
}

pub fn run(args: ExportArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(export(&args));
    if args.report_peak_rss {
        eprintln!("peak_rss_kib={}", peak_rss_kib());
    }
    if let Err(failure) = result {
        let status = report("export", &failure);
        drop(runtime);
        std::process::exit(status);
    }
    Ok(())
}

/// Where the output goes: a file, or a duplicate of standard output's descriptor (so chunks go
/// straight to the kernel, not through Rust's line buffering).
fn open_output(path: Option<&PathBuf>) -> anyhow::Result<File> {
    match path {
        Some(path) => File::create(path).with_context(|| format!("creating {}", path.display())),
        None => {
            let fd = std::io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .context("opening standard output")?;
            Ok(File::from(fd))
        }
    }
}

/// Writes a chunk; a closed pipe ends the export quietly.
fn write_chunk(out: &mut File, chunk: &[u8], path: Option<&PathBuf>) -> Result<(), Failure> {
    out.write_all(chunk).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            let target = path.map_or("standard output".to_owned(), |p| p.display().to_string());
            Failure::Other(anyhow::Error::new(e).context(format!("writing {target}")))
        }
    })
}

/// The format (given, else from the file's extension, else CSJ) and whether a header line
/// goes with it (`--no-header` wins over `--header` and over the format's default).
pub(crate) fn format_and_header(
    format: Option<Format>,
    path: Option<&PathBuf>,
    header: bool,
    no_header: bool,
) -> (Format, bool) {
    let format = format
        .or_else(|| path.and_then(|p| Format::from_extension(&p.to_string_lossy())))
        .unwrap_or(Format::Csj);
    (format, !no_header && (header || format.header_by_default()))
}

async fn export(args: &ExportArgs) -> Result<(), Failure> {
    let (format, header) = format_and_header(
        args.format,
        args.output.as_ref(),
        args.header,
        args.no_header,
    );
    let sql = args.sql.as_str();
    let mut conn = match &args.replica {
        None => connect(args.database.as_deref()).await?,
        Some(url) => connect_replica(url, args.config.as_deref()).await?,
    };

    // Describe first: the columns' names and types decide the encoding before any row arrives.
    let statement = conn.prepare(sql).await.map_err(|e| db_failure(e, sql))?;
    if statement.columns().is_empty() {
        return Err(Failure::Other(anyhow::anyhow!(
            "the statement returns no columns: export needs a query (SELECT, VALUES, TABLE, or ... RETURNING)"
        )));
    }
    let oids: Vec<Oid> = statement.columns().iter().map(|c| c.type_oid()).collect();
    let kinds = column_kinds(&mut conn, &oids).await?;
    let specs: Vec<ColumnSpec> = statement
        .columns()
        .iter()
        .zip(kinds)
        .map(|(c, k)| ColumnSpec::new(c.name(), k))
        .collect();

    let mut out = open_output(args.output.as_ref())?;
    let mut encoder = Encoder::new(format, &specs, header);
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + CHUNK / 2);
    let mut progress = Progress::new(!args.quiet && std::io::stderr().is_terminal());
    let mut written: u64 = 0;
    encoder.begin(&mut buf);

    let mut stream = conn
        .query_stream(sql, &[])
        .await
        .map_err(|e| db_failure(e, sql))?;
    loop {
        let block = match stream.next_block().await {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(e) => {
                // Rows encoded before the error still go out, so the output shows where it stopped.
                let _ = write_chunk(&mut out, &buf, args.output.as_ref());
                progress.finish(encoder.rows(), written + buf.len() as u64);
                return Err(db_failure(e, sql));
            }
        };
        for row in block.iter() {
            encoder.row(row.raw_fields(), &mut buf);
            if buf.len() >= CHUNK {
                write_chunk(&mut out, &buf, args.output.as_ref())?;
                written += buf.len() as u64;
                buf.clear();
            }
        }
        drop(block);
        progress.update(encoder.rows(), written + buf.len() as u64);
    }
    encoder.finish(&mut buf);
    write_chunk(&mut out, &buf, args.output.as_ref())?;
    written += buf.len() as u64;
    progress.finish(encoder.rows(), written);
    Ok(())
}

/// The progress line on standard error: rows, bytes and rate, redrawn a few times a second.
pub(crate) struct Progress {
    enabled: bool,
    start: Instant,
    last: Instant,
}

impl Progress {
    pub(crate) fn new(enabled: bool) -> Progress {
        let now = Instant::now();
        Progress {
            enabled,
            start: now,
            last: now,
        }
    }

    pub(crate) fn update(&mut self, rows: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last) < Duration::from_millis(250) {
            return;
        }
        self.last = now;
        self.draw(rows, bytes, "");
    }

    pub(crate) fn finish(&mut self, rows: u64, bytes: u64) {
        if self.enabled {
            self.draw(rows, bytes, "\n");
        }
    }

    fn draw(&self, rows: u64, bytes: u64, end: &str) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        eprint!(
            "\r\x1b[K{rows} rows, {:.1} MiB, {:.0} rows/s{end}",
            bytes as f64 / (1024.0 * 1024.0),
            rows as f64 / secs
        );
    }
}
