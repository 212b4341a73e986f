//! Roberto Ierusalimschy's `struct` library: `pack`, `unpack` and `size` of binary records.

use mlua::{Lua, MultiValue, Table, Value};

use super::fail;

const MAX_ALIGN: usize = 8;

/// One parsed format item.
enum Item {
    Int {
        size: usize,
        signed: bool,
    },
    Float,
    Double,
    Pad,
    /// `cN`; N = 0 means "whole string" (pack) or "previous number" (unpack).
    Chars(usize),
    Zstring,
}

struct Format<'a> {
    fmt: &'a [u8],
    at: usize,
    little: bool,
    align: usize,
}

impl Format<'_> {
    fn number(&mut self, default: usize) -> usize {
        let start = self.at;
        while self.fmt.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        if self.at == start {
            return default;
        }
        std::str::from_utf8(&self.fmt[start..self.at])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(usize::MAX)
    }

    /// The next item with its size, or None at the end.
    fn next(&mut self) -> mlua::Result<Option<(Item, usize)>> {
        while let Some(&c) = self.fmt.get(self.at) {
            self.at += 1;
            let item = match c {
                b' ' => continue,
                b'<' => {
                    self.little = true;
                    continue;
                }
                b'>' => {
                    self.little = false;
                    continue;
                }
                b'!' => {
                    let a = self.number(MAX_ALIGN);
                    if !a.is_power_of_two() {
                        return fail(format!("alignment {a} is not a power of 2"));
                    }
                    self.align = a;
                    continue;
                }
                b'x' => (Item::Pad, 1),
                b'b' | b'B' => (
                    Item::Int {
                        size: 1,
                        signed: c == b'b',
                    },
                    1,
                ),
                b'h' | b'H' => (
                    Item::Int {
                        size: 2,
                        signed: c == b'h',
                    },
                    2,
                ),
                b'l' | b'L' | b'T' => (
                    Item::Int {
                        size: 8,
                        signed: c == b'l',
                    },
                    8,
                ),
                b'i' | b'I' => {
                    let size = self.number(4);
                    if !(1..=8).contains(&size) {
                        return fail(format!("integral size {size} is larger than limit of 8"));
                    }
                    (
                        Item::Int {
                            size,
                            signed: c == b'i',
                        },
                        size,
                    )
                }
                b'f' => (Item::Float, 4),
                b'd' => (Item::Double, 8),
                b'c' => {
                    let n = self.number(1);
                    (Item::Chars(n), n)
                }
                b's' => (Item::Zstring, 0),
                other => return fail(format!("invalid format option '{}'", char::from(other))),
            };
            return Ok(Some(item));
        }
        Ok(None)
    }

    /// Padding before an item of `size` at offset `len`.
    fn padding(&self, item: &Item, size: usize, len: usize) -> usize {
        if matches!(item, Item::Chars(_) | Item::Zstring | Item::Pad) || size == 0 {
            return 0;
        }
        let size = size.min(self.align);
        (size - (len & (size - 1))) & (size - 1)
    }
}

fn format(fmt: &[u8]) -> Format<'_> {
    Format {
        fmt,
        at: 0,
        little: cfg!(target_endian = "little"),
        align: 1,
    }
}

fn number_arg(v: Option<&Value>, i: usize) -> mlua::Result<f64> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => match s.to_str().ok().and_then(|s| s.trim().parse().ok()) {
            Some(n) => Ok(n),
            None => fail(format!(
                "bad argument #{i} to 'pack' (number expected, got string)"
            )),
        },
        other => fail(format!(
            "bad argument #{i} to 'pack' (number expected, got {})",
            other.map_or("no value", Value::type_name)
        )),
    }
}

fn pack(fmt: &[u8], args: &[Value]) -> mlua::Result<Vec<u8>> {
    let mut f = format(fmt);
    let mut out = Vec::new();
    let mut arg = 0;
    while let Some((item, size)) = f.next()? {
        let pad = f.padding(&item, size, out.len());
        out.resize(out.len() + pad, 0);
        let i = arg + 2;
        match item {
            Item::Pad => out.push(0),
            Item::Int { size, .. } => {
                let n = number_arg(args.get(arg), i)?;
                arg += 1;
                let v = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                let bytes = v.to_le_bytes();
                let mut part = bytes[..size].to_vec();
                if !f.little {
                    part.reverse();
                }
                out.extend_from_slice(&part);
            }
            Item::Float | Item::Double => {
                let n = number_arg(args.get(arg), i)?;
                arg += 1;
                let mut part = if matches!(item, Item::Float) {
                    (n as f32).to_le_bytes().to_vec()
                } else {
                    n.to_le_bytes().to_vec()
                };
                if !f.little {
                    part.reverse();
                }
                out.extend_from_slice(&part);
            }
            Item::Chars(n) => {
                let Some(Value::String(s)) = args.get(arg) else {
                    return fail(format!("bad argument #{i} to 'pack' (string expected)"));
                };
                arg += 1;
                let bytes = s.as_bytes();
                let n = if n == 0 { bytes.len() } else { n };
                if bytes.len() < n {
                    return fail(format!("bad argument #{i} to 'pack' (string too short)"));
                }
                out.extend_from_slice(&bytes[..n]);
            }
            Item::Zstring => {
                let Some(Value::String(s)) = args.get(arg) else {
                    return fail(format!("bad argument #{i} to 'pack' (string expected)"));
                };
                arg += 1;
                out.extend_from_slice(&s.as_bytes());
                out.push(0);
            }
        }
    }
    Ok(out)
}

fn unpack(lua: &Lua, fmt: &[u8], data: &[u8], init: i64) -> mlua::Result<MultiValue> {
    let mut f = format(fmt);
    let mut pos = usize::try_from(init.max(1) - 1).unwrap_or(0);
    let mut values = Vec::new();
    let mut last_number: Option<f64> = None;
    let short = || fail("bad argument #2 to 'unpack' (data string too short)");
    while let Some((item, size)) = f.next()? {
        pos += f.padding(&item, size, pos);
        match item {
            Item::Pad => pos += 1,
            Item::Int { size, signed } => {
                let Some(bytes) = data.get(pos..pos + size) else {
                    return short();
                };
                let mut be = bytes.to_vec();
                if f.little {
                    be.reverse();
                }
                let mut v = be.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
                if signed && size < 8 && v >> (size * 8 - 1) & 1 == 1 {
                    v |= u64::MAX << (size * 8);
                }
                let n = if signed { v as i64 as f64 } else { v as f64 };
                values.push(Value::Number(n));
                last_number = Some(n);
                pos += size;
            }
            Item::Float | Item::Double => {
                let Some(bytes) = data.get(pos..pos + size) else {
                    return short();
                };
                let mut le = bytes.to_vec();
                if !f.little {
                    le.reverse();
                }
                let n = match le.as_slice().try_into() {
                    Ok(b4) if size == 4 => f64::from(f32::from_le_bytes(b4)),
                    _ => le
                        .as_slice()
                        .try_into()
                        .map(f64::from_le_bytes)
                        .unwrap_or(0.0),
                };
                values.push(Value::Number(n));
                last_number = Some(n);
                pos += size;
            }
            Item::Chars(n) => {
                let n = if n == 0 {
                    match values.pop() {
                        Some(_) if last_number.is_some() => last_number.unwrap_or(0.0) as usize,
                        _ => {
                            return fail(
                                "bad argument #1 to 'unpack' (format 'c0' needs a previous size)",
                            );
                        }
                    }
                } else {
                    n
                };
                let Some(bytes) = data.get(pos..pos.saturating_add(n)) else {
                    return short();
                };
                values.push(Value::String(lua.create_string(bytes)?));
                pos += n;
            }
            Item::Zstring => {
                let rest = data.get(pos..).unwrap_or(&[]);
                let Some(end) = memchr::memchr(0, rest) else {
                    return fail("bad argument #2 to 'unpack' (unfinished string in data)");
                };
                values.push(Value::String(lua.create_string(&rest[..end])?));
                pos += end + 1;
            }
        }
    }
    values.push(Value::Integer(pos as i64 + 1));
    Ok(MultiValue::from_vec(values))
}

fn size(fmt: &[u8]) -> mlua::Result<usize> {
    let mut f = format(fmt);
    let mut total = 0usize;
    while let Some((item, size)) = f.next()? {
        if matches!(item, Item::Zstring | Item::Chars(0)) {
            return fail("bad argument #1 to 'size' (options 'c0' - 's' have undefined sizes)");
        }
        total += f.padding(&item, size, total) + size;
    }
    Ok(total)
}

pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|_, (fmt, args): (mlua::String, MultiValue)| {
            let args: Vec<Value> = args.into_iter().collect();
            Ok(mlua::BString::from(pack(&fmt.as_bytes(), &args)?))
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(
            |lua, (fmt, data, init): (mlua::String, mlua::String, Option<i64>)| {
                unpack(lua, &fmt.as_bytes(), &data.as_bytes(), init.unwrap_or(1))
            },
        )?,
    )?;
    t.set(
        "size",
        lua.create_function(|_, fmt: mlua::String| size(&fmt.as_bytes()))?,
    )?;
    Ok(t)
}
