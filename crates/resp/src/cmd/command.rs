//! COMMAND: COUNT, LIST (FILTERBY), INFO, DOCS, GETKEYS, GETKEYSANDFLAGS and HELP, from the
//! command table and Redis 7.0's command info.

use super::command_info::{Begin, Find, Info, infos};
use super::{Args, Cx, unknown_subcommand};
use crate::reply::Out;

/// One command's COMMAND INFO entry, its subcommands nested as Redis nests them. Key specs
/// carry no `notes` (Redis's free-text remarks on a few of them).
fn reply_info(out: &mut Out, info: &Info) {
    out.array(10);
    out.bulk(info.name.as_bytes());
    out.int(i64::from(info.arity));
    out.set(info.flags.len());
    for flag in &info.flags {
        out.simple(flag);
    }
    out.int(i64::from(info.first_key));
    out.int(i64::from(info.last_key));
    out.int(i64::from(info.step));
    out.set(info.categories.len());
    for category in &info.categories {
        out.simple(&format!("@{category}"));
    }
    out.set(info.tips.len());
    for tip in &info.tips {
        out.bulk(tip.as_bytes());
    }
    out.set(info.specs.len());
    for spec in &info.specs {
        out.map(3);
        out.bulk(b"flags");
        out.set(spec.flags.len());
        for flag in &spec.flags {
            out.simple(flag);
        }
        out.bulk(b"begin_search");
        out.map(2);
        out.bulk(b"type");
        match spec.begin {
            Begin::Index(pos) => {
                out.bulk(b"index");
                out.bulk(b"spec");
                out.map(1);
                out.bulk(b"index");
                out.int(i64::from(pos));
            }
            Begin::Keyword(keyword, from) => {
                out.bulk(b"keyword");
                out.bulk(b"spec");
                out.map(2);
                out.bulk(b"keyword");
                out.bulk(keyword.as_bytes());
                out.bulk(b"startfrom");
                out.int(i64::from(from));
            }
            Begin::Unknown => {
                out.bulk(b"unknown");
                out.bulk(b"spec");
                out.map(0);
            }
        }
        out.bulk(b"find_keys");
        out.map(2);
        out.bulk(b"type");
        match spec.find {
            Find::Range { last, step, limit } => {
                out.bulk(b"range");
                out.bulk(b"spec");
                out.map(3);
                for (name, n) in [("lastkey", last), ("keystep", step), ("limit", limit)] {
                    out.bulk(name.as_bytes());
                    out.int(i64::from(n));
                }
            }
            Find::Keynum { index, first, step } => {
                out.bulk(b"keynum");
                out.bulk(b"spec");
                out.map(3);
                for (name, n) in [("keynumidx", index), ("firstkey", first), ("keystep", step)] {
                    out.bulk(name.as_bytes());
                    out.int(i64::from(n));
                }
            }
            Find::Unknown => {
                out.bulk(b"unknown");
                out.bulk(b"spec");
                out.map(0);
            }
        }
    }
    let all = &infos().all;
    out.array(info.subcommands.len());
    for &sub in &info.subcommands {
        reply_info(out, &all[sub]);
    }
}

/// The commands and subcommands COMMAND LIST names, with FILTERBY applied to each.
fn listed(filter: Option<(&[u8], &[u8])>) -> Vec<&'static str> {
    let infos = infos();
    let keep = |info: &Info| match filter {
        None => true,
        Some((kind, arg)) if kind.eq_ignore_ascii_case(b"aclcat") => info
            .categories
            .iter()
            .any(|c| c.as_bytes().eq_ignore_ascii_case(arg)),
        Some((kind, arg)) if kind.eq_ignore_ascii_case(b"pattern") => {
            crate::glob::matches(arg, info.name.as_bytes(), true)
        }
        // FILTERBY MODULE: Sluice loads no modules.
        Some(_) => false,
    };
    let mut names = Vec::new();
    for &i in &infos.top {
        let info = &infos.all[i];
        if keep(info) {
            names.push(info.name);
        }
        for &sub in &info.subcommands {
            if keep(&infos.all[sub]) {
                names.push(infos.all[sub].name);
            }
        }
    }
    names
}

pub fn command(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let infos = infos();
    if args.len() == 1 {
        cx.out.array(infos.top.len());
        for &i in &infos.top {
            reply_info(cx.out, &infos.all[i]);
        }
        return;
    }
    let sub = args.get(1).to_ascii_lowercase();
    match sub.as_slice() {
        b"count" if args.len() == 2 => cx.out.int(infos.top.len() as i64),
        b"list" => {
            let filter = match args.len() {
                2 => None,
                5 if args.is(2, "filterby")
                    && ["module", "aclcat", "pattern"]
                        .iter()
                        .any(|k| args.is(3, k)) =>
                {
                    Some((args.get(3), args.get(4)))
                }
                _ => {
                    cx.out.error(super::SYNTAX);
                    return;
                }
            };
            let names = listed(filter);
            cx.out.array(names.len());
            for name in names {
                cx.out.bulk(name.as_bytes());
            }
        }
        b"info" => {
            if args.len() == 2 {
                cx.out.array(infos.top.len());
                for &i in &infos.top {
                    reply_info(cx.out, &infos.all[i]);
                }
                return;
            }
            cx.out.array(args.len() - 2);
            for name in args.from(2) {
                let name = String::from_utf8_lossy(name).to_ascii_lowercase();
                match infos.get(&name) {
                    Some(info) => reply_info(cx.out, info),
                    None => cx.out.null(),
                }
            }
        }
        b"docs" => docs(cx, args),
        b"getkeys" => super::getkeys::getkeys(cx, args, false),
        b"getkeysandflags" => super::getkeys::getkeys(cx, args, true),
        b"help" if args.len() == 2 => {
            const LINES: &[&str] = &[
                "COMMAND <subcommand> [<arg> ...]. Subcommands are:",
                "(no subcommand)",
                "    Every command this server answers, with its details.",
                "COUNT",
                "    How many commands this server answers.",
                "LIST [FILTERBY (MODULE <name>|ACLCAT <category>|PATTERN <glob>)]",
                "    The names of the commands and subcommands, filtered.",
                "INFO [<command-name> ...]",
                "    The details of the named commands (or of all).",
                "DOCS [<command-name> ...]",
                "    The documentation fields of the named commands (or of all).",
                "GETKEYS <full-command>",
                "    The keys a full command would touch.",
                "GETKEYSANDFLAGS <full-command>",
                "    The keys a full command would touch, with how it uses each.",
                "HELP",
                "    This list.",
            ];
            cx.out.array(LINES.len());
            for line in LINES {
                cx.out.simple(line);
            }
        }
        b"count" | b"help" => {
            super::subcommand_arity(
                cx.out,
                &format!("command|{}", String::from_utf8_lossy(&sub)),
            );
        }
        _ => unknown_subcommand(cx.out, "command", args.get(1)),
    }
}

/// COMMAND DOCS: each command's group, and its subcommands' (Sluice ships no summaries).
fn docs(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let infos = infos();
    let wanted: Vec<&Info> = if args.len() == 2 {
        infos.top.iter().map(|&i| &infos.all[i]).collect()
    } else {
        args.from(2)
            .filter_map(|n| infos.get(&String::from_utf8_lossy(n).to_ascii_lowercase()))
            .collect()
    };
    cx.out.map(wanted.len());
    for info in wanted {
        cx.out.bulk(info.name.as_bytes());
        doc_entry(cx.out, info);
    }
}

fn doc_entry(out: &mut Out, info: &Info) {
    let top = info.name.split('|').next().unwrap_or(info.name);
    let group = super::lookup(top.as_bytes()).map_or("server", |c| c.group);
    let subs = &info.subcommands;
    out.map(if subs.is_empty() { 1 } else { 2 });
    out.bulk(b"group");
    out.bulk(group.as_bytes());
    if !subs.is_empty() {
        out.bulk(b"subcommands");
        out.map(subs.len());
        for &sub in subs {
            let sub = &infos().all[sub];
            out.bulk(sub.name.as_bytes());
            doc_entry(out, sub);
        }
    }
}
