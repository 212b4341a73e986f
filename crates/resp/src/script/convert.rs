//! Conversions between RESP replies and Lua values, as Redis's scripting engine does them.

use mlua::{Lua, Table, Value};

use crate::reply::Out;

/// How deep a returned table may nest before the reply stops with an error (Redis stops
/// where its Lua stack runs out).
const MAX_DEPTH: usize = 400;

/// A Lua number as Lua 5.1 prints it (`%.14g`).
pub fn lua_number_text(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if n.is_infinite() {
        return if n < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if n == n.trunc() && n.abs() < 1e15 {
        return format!("{}", n as i64);
    }
    let sci = format!("{n:.13e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..14).contains(&exp) {
        let decimals = usize::try_from(13 - exp).unwrap_or(0);
        let fixed = format!("{n:.decimals$}");
        trim_zeros(&fixed).to_owned()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exp.abs())
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Appends a redis.call argument to `out`: strings as they are, numbers as Lua prints them;
/// false for any other type.
pub fn arg_into(v: &Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::String(s) => out.extend_from_slice(&s.as_bytes()),
        Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Number(n) => out.extend_from_slice(lua_number_text(*n).as_bytes()),
        _ => return false,
    }
    true
}

/// Converts one encoded reply (as a command wrote it) into the Lua value Redis gives scripts.
pub fn reply_to_lua(lua: &Lua, reply: &[u8]) -> mlua::Result<Value> {
    let mut parser = ReplyReader { buf: reply, at: 0 };
    parser.value(lua, 0)
}

struct ReplyReader<'a> {
    buf: &'a [u8],
    at: usize,
}

fn bad_reply() -> mlua::Error {
    mlua::Error::RuntimeError("ERR malformed reply from command".to_owned())
}

impl ReplyReader<'_> {
    fn line(&mut self) -> mlua::Result<&[u8]> {
        let rest = self.buf.get(self.at..).ok_or_else(bad_reply)?;
        let end = memchr::memmem::find(rest, b"\r\n").ok_or_else(bad_reply)?;
        self.at += end + 2;
        Ok(&rest[..end])
    }

    fn len(line: &[u8]) -> mlua::Result<i64> {
        crate::num::parse_i64(line).ok_or_else(bad_reply)
    }

    fn bulk(&mut self, n: i64) -> mlua::Result<&[u8]> {
        let n = usize::try_from(n).map_err(|_| bad_reply())?;
        let data = self.buf.get(self.at..self.at + n).ok_or_else(bad_reply)?;
        self.at += n + 2;
        Ok(data)
    }

    fn value(&mut self, lua: &Lua, depth: usize) -> mlua::Result<Value> {
        if depth > MAX_DEPTH {
            return Err(bad_reply());
        }
        let tag = *self.buf.get(self.at).ok_or_else(bad_reply)?;
        self.at += 1;
        let line = self.line()?.to_vec();
        let single = |key: &str, v: Value| -> mlua::Result<Value> {
            let t = lua.create_table()?;
            t.raw_set(key, v)?;
            Ok(Value::Table(t))
        };
        Ok(match tag {
            b'+' => single("ok", Value::String(lua.create_string(&line)?))?,
            b'-' => single("err", Value::String(lua.create_string(&line)?))?,
            b':' => Value::Number(Self::len(&line)? as f64),
            b'$' => match Self::len(&line)? {
                n if n < 0 => Value::Boolean(false),
                n => Value::String(lua.create_string(self.bulk(n)?)?),
            },
            b'*' | b'>' => match Self::len(&line)? {
                n if n < 0 => Value::Boolean(false),
                n => {
                    let t = lua.create_table()?;
                    for i in 0..n {
                        t.raw_set(i + 1, self.value(lua, depth + 1)?)?;
                    }
                    Value::Table(t)
                }
            },
            b'%' => {
                let t = lua.create_table()?;
                for _ in 0..Self::len(&line)? {
                    let k = self.value(lua, depth + 1)?;
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(k, v)?;
                }
                single("map", Value::Table(t))?
            }
            b'~' => {
                let t = lua.create_table()?;
                for _ in 0..Self::len(&line)? {
                    t.raw_set(self.value(lua, depth + 1)?, true)?;
                }
                single("set", Value::Table(t))?
            }
            b'_' => Value::Nil,
            b'#' => Value::Boolean(line == b"t"),
            b',' => {
                let n = crate::num::parse_f64(&line).unwrap_or(f64::NAN);
                single("double", Value::Number(n))?
            }
            b'(' => single("big_number", Value::String(lua.create_string(&line)?))?,
            b'=' => {
                let data = self.bulk(Self::len(&line)?)?;
                let (format, text) = data.split_at(data.len().min(4));
                let inner = lua.create_table()?;
                inner.raw_set("format", lua.create_string(&format[..format.len().min(3)])?)?;
                inner.raw_set("string", lua.create_string(text)?)?;
                single("verbatim_string", Value::Table(inner))?
            }
            b'|' => {
                // Attributes are skipped; the value that follows is the reply.
                for _ in 0..Self::len(&line)? * 2 {
                    self.value(lua, depth + 1)?;
                }
                self.value(lua, depth)?
            }
            _ => return Err(bad_reply()),
        })
    }
}

/// Writes a script's return value as Redis replies it; `script_resp3` is the protocol the
/// script chose with `redis.setresp` (it decides how booleans are sent).
pub fn lua_to_reply(out: &mut Out, v: &Value, script_resp3: bool) {
    write_value(out, v, script_resp3, 0);
}

fn string_field(t: &Table, key: &str) -> Option<mlua::String> {
    match t.raw_get::<Value>(key) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn one_line(s: &mlua::String) -> String {
    s.to_string_lossy().replace(['\r', '\n'], " ")
}

fn write_value(out: &mut Out, v: &Value, script_resp3: bool, depth: usize) {
    match v {
        Value::String(s) => out.bulk(&s.as_bytes()),
        Value::Boolean(b) => {
            if script_resp3 {
                out.boolean(*b);
            } else if *b {
                out.int(1);
            } else {
                out.null();
            }
        }
        Value::Integer(n) => out.int(*n),
        Value::Number(n) => out.int(*n as i64),
        Value::Table(t) => {
            if depth >= MAX_DEPTH {
                out.error("ERR reached lua stack limit");
                return;
            }
            write_table(out, t, script_resp3, depth);
        }
        _ => out.null(),
    }
}

fn write_table(out: &mut Out, t: &Table, script_resp3: bool, depth: usize) {
    if let Some(err) = string_field(t, "err") {
        out.error(&err.to_string_lossy());
        return;
    }
    if let Some(ok) = string_field(t, "ok") {
        out.simple(&one_line(&ok));
        return;
    }
    if let Ok(Value::Number(n)) = t.raw_get::<Value>("double") {
        out.double(n);
        return;
    }
    if let Ok(Value::Integer(n)) = t.raw_get::<Value>("double") {
        out.double(n as f64);
        return;
    }
    if let Some(big) = string_field(t, "big_number") {
        let text = one_line(&big);
        if out.resp3 {
            out.buf.push(b'(');
            out.buf.extend_from_slice(text.as_bytes());
            out.buf.extend_from_slice(b"\r\n");
        } else {
            out.bulk(text.as_bytes());
        }
        return;
    }
    if let Ok(Value::Table(verbatim)) = t.raw_get::<Value>("verbatim_string")
        && let (Some(format), Some(text)) = (
            string_field(&verbatim, "format"),
            string_field(&verbatim, "string"),
        )
    {
        let text = text.as_bytes();
        if out.resp3 {
            let format = format.as_bytes();
            out.buf.push(b'=');
            out.buf
                .extend_from_slice((text.len() + 4).to_string().as_bytes());
            out.buf.extend_from_slice(b"\r\n");
            out.buf.extend_from_slice(&format[..format.len().min(3)]);
            out.buf.push(b':');
            out.buf.extend_from_slice(&text);
            out.buf.extend_from_slice(b"\r\n");
        } else {
            out.bulk(&text);
        }
        return;
    }
    // Counted first, then written: Lua 5.1 limits how many values Rust may hold at once.
    if let Ok(Value::Table(map)) = t.raw_get::<Value>("map") {
        out.map(map.clone().pairs::<Value, Value>().flatten().count());
        for (k, v) in map.pairs::<Value, Value>().flatten() {
            write_value(out, &k, script_resp3, depth + 1);
            write_value(out, &v, script_resp3, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(set)) = t.raw_get::<Value>("set") {
        out.set(set.clone().pairs::<Value, Value>().flatten().count());
        for (k, _) in set.pairs::<Value, Value>().flatten() {
            write_value(out, &k, script_resp3, depth + 1);
        }
        return;
    }
    let len = (1..)
        .take_while(|i| !matches!(t.raw_get::<Value>(*i), Ok(Value::Nil) | Err(_)))
        .count();
    out.array(len);
    for i in 1..=len {
        let item = t.raw_get::<Value>(i).unwrap_or(Value::Nil);
        write_value(out, &item, script_resp3, depth + 1);
    }
}
