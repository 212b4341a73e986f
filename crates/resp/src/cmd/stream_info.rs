//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS and XINFO CONSUMERS.

use super::stream_groups::{help, subcommand_syntax, text};
use super::streams::existing_stream;
use super::{Args, Cx, int_arg};
use crate::engine::stream::Group;
use crate::engine::stream_read::{write_entry, write_id, write_range};
use crate::engine::{Stream, StreamId, now_ms};
use crate::reply::Out;

fn lag_reply(out: &mut Out, stream: &Stream, group: &Group) {
    match stream.group_lag(group) {
        Some(lag) => out.int(lag),
        None => out.null(),
    }
}

fn entries_read_reply(out: &mut Out, group: &Group) {
    if group.entries_read >= 0 {
        out.int(group.entries_read);
    } else {
        out.null();
    }
}

pub fn xinfo(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let sub = args.get(1).to_ascii_lowercase();
    let arity_ok = match sub.as_slice() {
        b"consumers" => args.len() == 4,
        b"groups" => args.len() == 3,
        b"stream" => args.len() >= 3,
        b"help" => args.len() == 2,
        _ => {
            super::unknown_subcommand(cx.out, "xinfo", args.get(1));
            return;
        }
    };
    if !arity_ok {
        super::subcommand_arity(cx.out, &format!("xinfo|{}", String::from_utf8_lossy(&sub)));
        return;
    }
    if sub == b"help" {
        help(
            cx.out,
            "XINFO",
            &[
                "CONSUMERS <key> <groupname>",
                "    Show consumers of <groupname>.",
                "GROUPS <key>",
                "    Show the stream consumer groups.",
                "STREAM <key> [FULL [COUNT <count>]",
                "    Show information about the stream.",
            ],
        );
        return;
    }
    let key = args.get(2);
    let db = cx.db();
    let store = cx.store.get();
    let Some(stream) = existing_stream(cx.out, store, db, key, super::NO_KEY) else {
        return;
    };
    let out = &mut *cx.out;
    let now = now_ms();
    match sub.as_slice() {
        b"consumers" => {
            let Some(group) = stream.groups.get(args.get(3)) else {
                out.error(&format!(
                    "NOGROUP No such consumer group '{}' for key name '{}'",
                    text(args.get(3)),
                    text(key)
                ));
                return;
            };
            out.array(group.consumers.len());
            for (name, c) in &group.consumers {
                out.map(3);
                out.bulk(b"name");
                out.bulk(name);
                out.bulk(b"pending");
                out.int(c.pel.len() as i64);
                out.bulk(b"idle");
                out.int((now - c.seen_time).max(0));
            }
        }
        b"groups" => {
            out.array(stream.groups.len());
            for (name, g) in &stream.groups {
                out.map(6);
                out.bulk(b"name");
                out.bulk(name);
                out.bulk(b"consumers");
                out.int(g.consumers.len() as i64);
                out.bulk(b"pending");
                out.int(g.pel.len() as i64);
                out.bulk(b"last-delivered-id");
                write_id(out, g.last_id);
                out.bulk(b"entries-read");
                entries_read_reply(out, g);
                out.bulk(b"lag");
                lag_reply(out, stream, g);
            }
        }
        _ => xinfo_stream(out, args, stream),
    }
}

fn xinfo_stream(out: &mut Out, args: &Args<'_>, stream: &Stream) {
    let extra = args.len() - 3;
    let full = extra > 0;
    let mut count: i64 = 10;
    if full {
        if (extra != 1 && extra != 3) || !args.is(3, "full") || (extra == 3 && !args.is(4, "count"))
        {
            subcommand_syntax(out, "XINFO", args.get(1));
            return;
        }
        if extra == 3 {
            let Some(n) = int_arg(out, args.get(5)) else {
                return;
            };
            count = if n < 0 { 10 } else { n };
        }
    }
    let count = usize::try_from(count).unwrap_or(10);
    out.map(if full { 9 } else { 10 });
    out.bulk(b"length");
    out.int(i64::try_from(stream.length).unwrap_or(i64::MAX));
    out.bulk(b"radix-tree-keys");
    out.int(stream.node_count() as i64);
    out.bulk(b"radix-tree-nodes");
    out.int(stream.node_count() as i64 + 1);
    out.bulk(b"last-generated-id");
    write_id(out, stream.last_id);
    out.bulk(b"max-deleted-entry-id");
    write_id(out, stream.max_deleted_id);
    out.bulk(b"entries-added");
    out.int(i64::try_from(stream.entries_added).unwrap_or(i64::MAX));
    out.bulk(b"recorded-first-entry-id");
    write_id(out, stream.first_id);
    if !full {
        out.bulk(b"groups");
        out.int(stream.groups.len() as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (b"last-entry", true)] {
            out.bulk(name);
            let mut found = false;
            stream.walk(StreamId::MIN, StreamId::MAX, rev, |e| {
                write_entry(out, &e);
                found = true;
                false
            });
            if !found {
                out.null();
            }
        }
        return;
    }
    out.bulk(b"entries");
    write_range(out, stream, StreamId::MIN, StreamId::MAX, count, false);
    out.bulk(b"groups");
    out.array(stream.groups.len());
    let limit = if count == 0 { usize::MAX } else { count };
    for (name, g) in &stream.groups {
        out.map(7);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"last-delivered-id");
        write_id(out, g.last_id);
        out.bulk(b"entries-read");
        entries_read_reply(out, g);
        out.bulk(b"lag");
        lag_reply(out, stream, g);
        out.bulk(b"pel-count");
        out.int(g.pel.len() as i64);
        out.bulk(b"pending");
        let shown = g.pel.len().min(limit);
        out.array(shown);
        for (id, nack) in g.pel.iter().take(shown) {
            out.array(4);
            write_id(out, *id);
            out.bulk(&nack.consumer);
            out.int(nack.delivery_time);
            out.int(i64::try_from(nack.delivery_count).unwrap_or(i64::MAX));
        }
        out.bulk(b"consumers");
        out.array(g.consumers.len());
        for (cname, c) in &g.consumers {
            out.map(4);
            out.bulk(b"name");
            out.bulk(cname);
            out.bulk(b"seen-time");
            out.int(c.seen_time);
            out.bulk(b"pel-count");
            out.int(c.pel.len() as i64);
            out.bulk(b"pending");
            let shown = c.pel.len().min(limit);
            out.array(shown);
            for id in c.pel.iter().take(shown) {
                out.array(3);
                write_id(out, *id);
                let nack = g.pel.get(id);
                out.int(nack.map_or(0, |n| n.delivery_time));
                out.int(nack.map_or(0, |n| n.delivery_count as i64));
            }
        }
    }
}
