//! `sluice lp`: InfluxDB line protocol tools; `lp parse` prints each point on standard input as JSON.

use std::io::{Read, Write};

use anyhow::Context;
use clap::{Args, Subcommand};
use sluice_lineproto::{Options, Parser, Precision, write_point_json};

/// Options of `sluice lp`.
#[derive(Debug, Args)]
pub struct LpArgs {
    #[command(subcommand)]
    command: LpCommand,
}

#[derive(Debug, Subcommand)]
enum LpCommand {
    /// Read line protocol on standard input and print one JSON object per point.
    ///
    /// On a bad line nothing is printed on standard output, `line L:C: message` goes to
    /// standard error and the exit status is 1.
    Parse(ParseArgs),
}

#[derive(Debug, Args)]
struct ParseArgs {
    /// Unit of the timestamps: ns, us, ms or s.
    #[arg(long, default_value = "ns")]
    precision: Precision,
    /// Time in nanoseconds since the epoch for lines without a timestamp (default: now),
    /// truncated to the precision.
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    default_time: Option<i64>,
}

pub fn run(args: LpArgs) -> anyhow::Result<()> {
    match args.command {
        LpCommand::Parse(args) => parse(args),
    }
}

fn parse(args: ParseArgs) -> anyhow::Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .context("reading standard input")?;
    let options = match args.default_time {
        Some(time) => Options::new(time),
        None => Options::now(),
    }
    .with_precision(args.precision);

    // The whole output is held until the last line parsed: a bad line prints nothing.
    let mut out = Vec::with_capacity(input.len() * 2);
    let mut parser = Parser::new(&input, options);
    while let Some(point) = parser.next_point() {
        match point {
            Ok(point) => {
                write_point_json(&point, &mut out);
                out.push(b'\n');
            }
            Err(error) => {
                eprintln!("{error}");
                std::process::exit(1);
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out).context("writing standard output")?;
    stdout.flush().context("writing standard output")?;
    Ok(())
}
