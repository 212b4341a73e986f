#!/usr/bin/env python3
"""Writes crates/resp/src/acl/catalog_data.rs from a running redis-server 7.0's COMMAND reply:
each command's and subcommand's ACL categories and key specs (the access each key is taken
with), which Sluice's ACLs use as Redis 7.0 assigns them.

    scripts/redis-acl-catalog.py [PORT] > crates/resp/src/acl/catalog_data.rs

Talks RESP over a socket with the standard library only (no client to install)."""
import socket
import sys

CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
              "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
              "blocking", "dangerous", "connection", "transaction", "scripting"]


def read_reply(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-"):
        return rest.decode()
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data.decode()
    if kind in (b"*", b"~", b"%"):
        n = int(rest)
        if kind == b"%":
            n *= 2
        return [read_reply(f) for _ in range(n)]
    raise SystemExit(f"unexpected reply {line!r}")


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def spec_rust(spec):
    spec = pairs(spec)
    flags = spec["flags"]
    if "not_key" in flags:
        return None
    access = []
    if "access" in flags:
        access.append("KEY_READ")
    if {"insert", "delete", "update"} & set(flags):
        access.append("KEY_WRITE")
    access = " | ".join(access) or "0"
    kind, bs = spec["begin_search"][1], pairs(spec["begin_search"][3])
    if kind == "index":
        begin = f"Begin::Index({bs['index']})"
    elif kind == "keyword":
        begin = f"Begin::Keyword({bs['keyword']!r}, {bs['startfrom']})".replace("'", '"')
    else:
        begin = "Begin::Unknown"
    kind, fk = spec["find_keys"][1], pairs(spec["find_keys"][3])
    if kind == "range":
        find = f"Find::Range {{ last: {fk['lastkey']}, step: {fk['keystep']}, limit: {fk['limit']} }}"
    elif kind == "keynum":
        find = (f"Find::Keynum {{ index: {fk['keynumidx']}, first: {fk['firstkey']}, "
                f"step: {fk['keystep']} }}")
    else:
        find = "Find::Unknown"
    incomplete = "incomplete" in flags or "variable_flags" in flags
    return f"Spec {{ access: {access}, begin: {begin}, find: {find}, exact: {str(not incomplete).lower()} }}"


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 6379
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"*1\r\n$7\r\nCOMMAND\r\n")
    commands = read_reply(sock.makefile("rb"))
    rows = []

    def walk(c):
        name, arity, cats = c[0], c[1], c[6]
        specs = [s for s in (spec_rust(s) for s in c[8]) if s]
        bits = " | ".join(x[1:].upper() for x in cats) or "0"
        rows.append((name, arity, bits, specs))
        for sub in c[9]:
            walk(sub)

    for c in commands:
        walk(c)
    rows.sort()
    print("//! Redis 7.0's command catalog for ACLs: every command and subcommand with its ACL")
    print("//! categories and key specs, written by scripts/redis-acl-catalog.py from redis-server")
    print("//! 7.0.15's COMMAND reply (regenerate rather than edit).")
    print()
    print("use super::catalog::{Begin, Entry, Find, KEY_READ, KEY_WRITE, Spec};")
    print("use super::categories::*;")
    print()
    print("#[rustfmt::skip]")
    print("pub(super) const ENTRIES: &[Entry] = &[")
    for name, arity, bits, specs in rows:
        print(f'    Entry {{ name: "{name}", arity: {arity}, categories: {bits}, '
              f'keys: &[{", ".join(specs)}] }},')
    print("];")


main()
