//! lua-cmsgpack's `cmsgpack` library: `pack`, `unpack`, `unpack_one`, `unpack_limit`.

use mlua::{Lua, MultiValue, Table, Value};

use super::fail;

/// Tables nested deeper than this are packed as nil, as lua-cmsgpack does.
const MAX_NESTING: usize = 16;
/// Unpacking stops (with an error) past this depth, so hostile input cannot exhaust the stack.
const MAX_UNPACK_DEPTH: usize = 1000;

pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|_, args: MultiValue| {
            if args.is_empty() {
                return fail("MessagePack pack needs input.");
            }
            let mut out = Vec::new();
            for v in &args {
                pack(&mut out, v, 0)?;
            }
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| unpack_limit(lua, &s.as_bytes(), 0, 0))?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            unpack_limit(lua, &s.as_bytes(), 1, offset.unwrap_or(0))
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(
            |lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
                unpack_limit(lua, &s.as_bytes(), limit, offset.unwrap_or(0))
            },
        )?,
    )?;
    t.set("_NAME", "cmsgpack")?;
    t.set("_VERSION", "lua-cmsgpack 0.4.0")?;
    Ok(t)
}

fn pack_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        match n {
            0..=127 => out.push(n as u8),
            128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
            0x100..=0xffff => {
                out.push(0xcd);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0xce);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            _ => {
                out.push(0xcf);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn pack_len(out: &mut Vec<u8>, len: usize, fix: (u8, usize), tags: [u8; 3]) {
    if len < fix.1 {
        out.push(fix.0 | len as u8);
    } else if tags[0] != 0 && len <= 0xff {
        out.extend_from_slice(&[tags[0], len as u8]);
    } else if len <= 0xffff {
        out.push(tags[1]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(tags[2]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn pack_number(out: &mut Vec<u8>, n: f64) {
    if n.is_finite() && n == n.floor() && n.abs() < 9.2e18 {
        pack_int(out, n as i64);
    } else if f64::from(n as f32) == n || n.is_nan() {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// The length of `t` as an array (keys exactly 1..n), or None.
fn array_len(t: &Table) -> mlua::Result<Option<usize>> {
    let mut count = 0usize;
    let mut max = 0usize;
    for pair in t.clone().pairs::<Value, Value>() {
        match pair?.0 {
            Value::Integer(i) if i >= 1 => max = max.max(i as usize),
            Value::Number(n) if n >= 1.0 && n == n.floor() => max = max.max(n as usize),
            _ => return Ok(None),
        }
        count += 1;
    }
    Ok((count == max).then_some(max))
}

fn pack(out: &mut Vec<u8>, v: &Value, depth: usize) -> mlua::Result<()> {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => pack_int(out, *n),
        Value::Number(n) => pack_number(out, *n),
        Value::String(s) => {
            let bytes = s.as_bytes();
            pack_len(out, bytes.len(), (0xa0, 32), [0xd9, 0xda, 0xdb]);
            out.extend_from_slice(&bytes);
        }
        Value::Table(t) if depth < MAX_NESTING => match array_len(t)? {
            Some(n) => {
                pack_len(out, n, (0x90, 16), [0, 0xdc, 0xdd]);
                for i in 1..=n {
                    pack(out, &t.raw_get::<Value>(i)?, depth + 1)?;
                }
            }
            None => {
                // Two passes: Lua 5.1 limits how many values Rust may hold at once.
                let count = t.clone().pairs::<Value, Value>().count();
                pack_len(out, count, (0x80, 16), [0, 0xde, 0xdf]);
                for pair in t.clone().pairs::<Value, Value>() {
                    let (k, val) = pair?;
                    pack(out, &k, depth + 1)?;
                    pack(out, &val, depth + 1)?;
                }
            }
        },
        _ => out.push(0xc0),
    }
    Ok(())
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

fn truncated<T>() -> mlua::Result<T> {
    fail("Missing bytes in input.")
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> mlua::Result<&[u8]> {
        let Some(bytes) = self.buf.get(self.at..self.at.saturating_add(n)) else {
            return truncated();
        };
        self.at += n;
        Ok(bytes)
    }

    fn uint(&mut self, n: usize) -> mlua::Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |a, b| (a << 8) | u64::from(*b)))
    }

    fn value(&mut self, lua: &Lua, depth: usize) -> mlua::Result<Value> {
        if depth > MAX_UNPACK_DEPTH {
            return fail("Too many nested data structures.");
        }
        let tag = self.take(1)?[0];
        let num = |n: f64| Ok(Value::Number(n));
        match tag {
            0x00..=0x7f => num(f64::from(tag)),
            0xe0..=0xff => num(f64::from(tag as i8)),
            0xc0 => Ok(Value::Nil),
            0xc2 => Ok(Value::Boolean(false)),
            0xc3 => Ok(Value::Boolean(true)),
            0xcc => num(self.uint(1)? as f64),
            0xcd => num(self.uint(2)? as f64),
            0xce => num(self.uint(4)? as f64),
            0xcf => num(self.uint(8)? as f64),
            0xd0 => num(f64::from(self.uint(1)? as u8 as i8)),
            0xd1 => num(f64::from(self.uint(2)? as u16 as i16)),
            0xd2 => num(f64::from(self.uint(4)? as u32 as i32)),
            0xd3 => num(self.uint(8)? as i64 as f64),
            0xca => num(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => num(f64::from_bits(self.uint(8)?)),
            0xa0..=0xbf => self.string(lua, usize::from(tag & 0x1f)),
            0xd9 | 0xc4 => {
                let n = self.uint(1)? as usize;
                self.string(lua, n)
            }
            0xda | 0xc5 => {
                let n = self.uint(2)? as usize;
                self.string(lua, n)
            }
            0xdb | 0xc6 => {
                let n = self.uint(4)? as usize;
                self.string(lua, n)
            }
            0x90..=0x9f => self.array(lua, usize::from(tag & 0x0f), depth),
            0xdc => {
                let n = self.uint(2)? as usize;
                self.array(lua, n, depth)
            }
            0xdd => {
                let n = self.uint(4)? as usize;
                self.array(lua, n, depth)
            }
            0x80..=0x8f => self.map(lua, usize::from(tag & 0x0f), depth),
            0xde => {
                let n = self.uint(2)? as usize;
                self.map(lua, n, depth)
            }
            0xdf => {
                let n = self.uint(4)? as usize;
                self.map(lua, n, depth)
            }
            _ => fail("Bad data format in input."),
        }
    }

    fn string(&mut self, lua: &Lua, n: usize) -> mlua::Result<Value> {
        let bytes = self.take(n)?;
        Ok(Value::String(lua.create_string(bytes)?))
    }

    fn array(&mut self, lua: &Lua, n: usize, depth: usize) -> mlua::Result<Value> {
        // Each element takes at least one byte: a huge count with little input is truncated.
        if n > self.buf.len() - self.at {
            return truncated();
        }
        let t = lua.create_table_with_capacity(n, 0)?;
        for i in 1..=n {
            t.raw_set(i, self.value(lua, depth + 1)?)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, lua: &Lua, n: usize, depth: usize) -> mlua::Result<Value> {
        if n > self.buf.len() - self.at {
            return truncated();
        }
        let t = lua.create_table_with_capacity(0, n)?;
        for _ in 0..n {
            let k = self.value(lua, depth + 1)?;
            let v = self.value(lua, depth + 1)?;
            if !matches!(k, Value::Nil) {
                t.raw_set(k, v)?;
            }
        }
        Ok(Value::Table(t))
    }
}

/// Unpacks up to `limit` values (0: all) from `offset`; unpack_one/limit also return the offset
/// of what follows (-1 at the end).
fn unpack_limit(lua: &Lua, buf: &[u8], limit: i64, offset: i64) -> mlua::Result<MultiValue> {
    let Ok(start) = usize::try_from(offset) else {
        return fail("Invalid request to unpack with offset of negative value and limit of value.");
    };
    if start > buf.len() {
        return fail("Start offset greater than input length.");
    }
    let mut reader = Reader { buf, at: start };
    let mut values = Vec::new();
    while reader.at < buf.len() && (limit <= 0 || (values.len() as i64) < limit) {
        values.push(reader.value(lua, 0)?);
    }
    if limit > 0 {
        let next = if reader.at >= buf.len() {
            -1
        } else {
            reader.at as i64
        };
        values.insert(0, Value::Integer(next));
    }
    Ok(MultiValue::from_vec(values))
}
