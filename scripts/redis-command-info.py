#!/usr/bin/env python3
"""Writes crates/resp/redis-7.0-command-info.txt: what Redis 7.0's COMMAND INFO says of every
command and subcommand (arity, flags, legacy key range, ACL categories, tips, key specs), one line
each, read from a running redis-server 7.0 (started here on a free port).

    scripts/redis-command-info.py [redis-server] > crates/resp/redis-7.0-command-info.txt

Sluice's COMMAND replies from this file for the commands it answers; the key specs also drive
COMMAND GETKEYS/GETKEYSANDFLAGS. Key-spec notes (free text) are left out.
"""
import socket
import subprocess
import sys
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Resp:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(65536)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"("):
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n).decode()
        if kind == b"=":
            return self.exact(int(rest)).decode()[4:]
        if kind in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if kind == b"%":
            return {self.read(): self.read() for _ in range(int(rest))}
        if kind == b"_":
            return None
        raise RuntimeError(f"unexpected reply {line!r}")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()


def spec_text(spec):
    flags = "+".join(spec["flags"]) or "-"
    bs = spec["begin_search"]
    if bs["type"] == "index":
        begin = "i%d" % bs["spec"]["index"]
    elif bs["type"] == "keyword":
        begin = "k%s@%d" % (bs["spec"]["keyword"], bs["spec"]["startfrom"])
    else:
        begin = "u"
    fk = spec["find_keys"]
    if fk["type"] == "range":
        find = "r%d,%d,%d" % (fk["spec"]["lastkey"], fk["spec"]["keystep"], fk["spec"]["limit"])
    elif fk["type"] == "keynum":
        s = fk["spec"]
        find = "n%d,%d,%d" % (s["keynumidx"], s["firstkey"], s["keystep"])
    else:
        find = "u"
    return f"{flags}/{begin}/{find}"


def lines(info):
    name, arity, flags, first, last, step, cats, tips, specs, subs = info
    joined = lambda xs: ",".join(xs) if xs else "-"
    cats = [c.lstrip("@") for c in cats]
    specs = ";".join(spec_text(s) for s in specs) or "-"
    yield f"{name} {arity} {joined(flags)} {first} {last} {step} {joined(cats)} {joined(tips)} {specs}"
    for sub in sorted(subs or [], key=lambda s: s[0]):
        yield from lines(sub)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "redis-server"
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                conn = Resp(port)
                break
            except OSError:
                time.sleep(0.05)
        conn.call("HELLO", "3")
        version = conn.call("INFO", "server").split("redis_version:")[1].split("\r\n")[0]
        print(f"# What Redis {version}'s COMMAND INFO says of each command and subcommand, written by")
        print("# scripts/redis-command-info.py; do not edit by hand. Fields: name arity flags first-key")
        print("# last-key step acl-categories tips key-specs; lists are comma-separated, '-' is empty;")
        print("# a key spec is flags/begin-search/find-keys: iN (index N) or kWORD@FROM (keyword),")
        print("# rLAST,STEP,LIMIT (range) or nIDX,FIRST,STEP (keynum), u (unknown).")
        for info in sorted(conn.call("COMMAND"), key=lambda c: c[0]):
            for line in lines(info):
                print(line)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
