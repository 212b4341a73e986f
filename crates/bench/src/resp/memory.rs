//! `sluice-bench resp rss` and `types-rss`: each server's RSS after the same `redis-cli --pipe` load.

use super::{RssArgs, Server, TypesRssArgs, redis_cli, redis_cli_input, start_pair, tools_present};
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The RESP encoding of one command, as `redis-cli --pipe` expects.
fn resp_command(out: &mut impl Write, args: &[&[u8]]) -> std::io::Result<()> {
    write!(out, "*{}\r\n", args.len())?;
    for a in args {
        write!(out, "${}\r\n", a.len())?;
        out.write_all(a)?;
        out.write_all(b"\r\n")?;
    }
    Ok(())
}

/// Writes a file of commands made by `command(n)` for `n` in `0..count`.
pub(super) fn command_file(
    dir: &Path,
    name: &str,
    count: u64,
    command: impl Fn(u64) -> Vec<Vec<u8>>,
) -> Result<PathBuf> {
    let path = dir.join(name);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    for n in 0..count {
        let args = command(n);
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        resp_command(&mut out, &refs)?;
    }
    out.flush()?;
    Ok(path)
}

/// Loads `file` into `server` through `redis-cli --pipe`; its RSS before and after, in KiB.
fn load(server: &Server, file: &Path) -> Result<(u64, u64)> {
    let before = server.rss_kib()?;
    let mut input = std::fs::File::open(file)?;
    redis_cli_input(server.port, &["--pipe"], &mut input)?;
    Ok((before, server.rss_kib()?))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub(super) fn rss(args: RssArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-cli"]) {
        return Ok(());
    }
    let (sluice, redis) = start_pair(&args.server, &args.server.sluice_args)?;
    let dir = tempfile::tempdir()?;
    // SET key:<n> <10 bytes>.
    let file = command_file(dir.path(), "set.resp", args.keys, |n| {
        vec![
            b"SET".to_vec(),
            format!("key:{n}").into_bytes(),
            format!("{n:010}").into_bytes(),
        ]
    })?;
    let mut rows = Vec::new();
    for (name, server) in [("sluice", &sluice), ("redis-server", &redis)] {
        let (before, after) = load(server, &file)?;
        let keys = redis_cli(server.port, &["dbsize"])?;
        rows.push((name, keys.trim().to_owned(), before, after));
    }
    println!("| server | keys | RSS before (MiB) | RSS after (MiB) |\n|---|---|---|---|");
    for (name, keys, before, after) in &rows {
        println!(
            "| {name} | {keys} | {:.1} | {:.1} |",
            mib(*before),
            mib(*after)
        );
    }
    println!(
        "RSS ratio sluice/redis-server after {} keys: {:.2} (bar: at most 1.2)",
        args.keys,
        rows[0].3 as f64 / rows[1].3 as f64
    );
    Ok(())
}

pub(super) fn types_rss(args: TypesRssArgs) -> Result<()> {
    if !tools_present(&["redis-server", "redis-cli"]) {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let keys = args.hll_keys.max(1);
    let files = [
        command_file(dir.path(), "stream.resp", args.entries, |i| {
            vec![
                b"XADD".to_vec(),
                b"bench:stream".to_vec(),
                b"*".to_vec(),
                b"field".to_vec(),
                format!("{i:010}").into_bytes(),
            ]
        })?,
        command_file(dir.path(), "hll_sparse.resp", args.entries, |i| {
            vec![
                b"PFADD".to_vec(),
                format!("hll:{}", i % keys).into_bytes(),
                format!("element:{i}").into_bytes(),
            ]
        })?,
        command_file(dir.path(), "hll_dense.resp", args.entries, |i| {
            vec![
                b"PFADD".to_vec(),
                b"bench:hll".to_vec(),
                format!("element:{i}").into_bytes(),
            ]
        })?,
    ];
    println!(
        "| data | sluice RSS growth (MiB) | redis-server RSS growth (MiB) | ratio |\n|---|---|---|---|"
    );
    for (data, file) in ["stream", "hll_sparse", "hll_dense"].iter().zip(&files) {
        // Fresh servers for each data set.
        let (sluice, redis) = start_pair(&args.server, &args.server.sluice_args)?;
        let (sb, sa) = load(&sluice, file)?;
        let (rb, ra) = load(&redis, file)?;
        let s = sa.saturating_sub(sb);
        let r = ra.saturating_sub(rb);
        let check_s = redis_cli(sluice.port, &["dbsize"])?;
        let check_r = redis_cli(redis.port, &["dbsize"])?;
        println!(
            "| {data} ({}/{} keys each) | {:.1} | {:.1} | {:.2} |",
            check_s.trim(),
            check_r.trim(),
            mib(s),
            mib(r),
            s as f64 / (r as f64 + 0.0001)
        );
    }
    println!(
        "bar: at most 1.2 (RSS growth after {} stream entries / PFADDs)",
        args.entries
    );
    Ok(())
}
