//! Watching the server run: SLOWLOG, LATENCY, MONITOR and WAIT.

use super::{Args, Cx, int_arg, subcommand_arity, unknown_subcommand};

fn help(cx: &mut Cx<'_, '_>, lines: &[&str]) {
    cx.out.array(lines.len());
    for line in lines {
        cx.out.simple(line);
    }
}

pub fn slowlog(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let observe = &cx.shared.observe;
    match (sub.as_slice(), args.len()) {
        (b"get", 2 | 3) => {
            let mut count = 10usize;
            if args.len() == 3 {
                let Some(n) = int_arg(cx.out, args.get(2)) else {
                    return;
                };
                // Redis 7.0: -1 means every entry; other negatives are refused.
                if n < -1 {
                    cx.out
                        .error("ERR count should be greater than or equal to -1");
                    return;
                }
                count = if n == -1 {
                    usize::MAX
                } else {
                    usize::try_from(n).unwrap_or(usize::MAX)
                };
            }
            let entries: Vec<_> = observe
                .slowlog
                .lock()
                .entries
                .iter()
                .take(count)
                .cloned()
                .collect();
            let out = &mut *cx.out;
            out.array(entries.len());
            for e in entries {
                out.array(6);
                out.int(e.id as i64);
                out.int(e.unix_secs);
                out.int(i64::try_from(e.micros).unwrap_or(i64::MAX));
                out.array(e.args.len());
                for arg in &e.args {
                    out.bulk(arg);
                }
                out.bulk(e.addr.as_bytes());
                out.bulk(&e.name);
            }
        }
        (b"len", 2) => cx.out.int(observe.slowlog.lock().entries.len() as i64),
        (b"reset", 2) => {
            observe.slowlog.lock().entries.clear();
            cx.out.ok();
        }
        (b"help", 2) => help(
            cx,
            &[
                "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GET [<count>]",
                "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                "    Entries are made of:",
                "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                "    client name",
                "LEN",
                "    Return the length of the slowlog.",
                "RESET",
                "    Reset the slowlog.",
                "HELP",
                "    Print this help.",
            ],
        ),
        (b"get" | b"len" | b"reset" | b"help", _) => {
            subcommand_arity(
                cx.out,
                &format!("slowlog|{}", String::from_utf8_lossy(&sub)),
            );
        }
        _ => unknown_subcommand(cx.out, "slowlog", args.get(1)),
    }
}

/// LATENCY: Sluice records no latency events (its latency monitor is always off, as Redis's is
/// with latency-monitor-threshold 0), so the reports are empty.
pub fn latency(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    match (sub.as_slice(), args.len()) {
        (b"latest", 2) => cx.out.array(0),
        (b"history", 3) => cx.out.array(0),
        (b"reset", _) => cx.out.int(0),
        (b"graph", 3) => {
            let event = String::from_utf8_lossy(args.get(2)).into_owned();
            cx.out
                .error(&format!("ERR No samples available for event '{event}'"));
        }
        (b"histogram", _) => cx.out.map(0),
        (b"doctor", 2) => cx.out.verbatim(
            b"No latency events are recorded: the latency monitor is off \
              (latency-monitor-threshold 0), so there is nothing to report.",
        ),
        (b"help", 2) => help(
            cx,
            &[
                "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "DOCTOR",
                "    Return a human readable latency analysis report.",
                "GRAPH <event>",
                "    Return an ASCII latency graph for the <event> class.",
                "HISTORY <event>",
                "    Return time-latency samples for the <event> class.",
                "LATEST",
                "    Return the latest latency samples for all events.",
                "RESET [<event> ...]",
                "    Reset latency data of one or more <event> classes.",
                "    (default: reset all data for all event classes)",
                "HISTOGRAM [COMMAND ...]",
                "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
                "    If no commands are specified then all histograms are replied.",
                "HELP",
                "    Print this help.",
            ],
        ),
        (b"latest" | b"history" | b"graph" | b"doctor" | b"help", _) => {
            subcommand_arity(
                cx.out,
                &format!("latency|{}", String::from_utf8_lossy(&sub)),
            );
        }
        _ => unknown_subcommand(cx.out, "latency", args.get(1)),
    }
}

/// WAIT numreplicas timeout: Sluice has no replicas, so the count acknowledged is 0, at once
/// (Redis would wait out the timeout when asked for replicas it does not have).
pub fn wait(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(_) = int_arg(cx.out, args.get(1)) else {
        return;
    };
    let Some(timeout) = crate::num::parse_i64(args.get(2)) else {
        cx.out
            .error("ERR timeout is not an integer or out of range");
        return;
    };
    if timeout < 0 {
        cx.out.error("ERR timeout is negative");
        return;
    }
    cx.out.int(0);
}

/// MONITOR: from now on this client receives every command the server runs.
pub fn monitor(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    if cx.session.monitor_rx.is_none() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        cx.shared.observe.add_monitor(cx.session.id, tx);
        cx.session.monitor_rx = Some(rx);
    }
    cx.out.ok();
}
