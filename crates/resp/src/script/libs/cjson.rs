//! lua-cjson's `cjson` library: `encode`, `decode`, `null` and its settings functions.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mlua::{Lua, MultiValue, Table, Value};

use super::fail;

/// lua-cjson's settings (they last across scripts, as in Redis).
struct Settings {
    encode_max_depth: AtomicUsize,
    decode_max_depth: AtomicUsize,
    encode_invalid_numbers: AtomicBool,
}

fn depth_arg(args: &MultiValue) -> Option<usize> {
    match args.front() {
        Some(Value::Integer(n)) if *n >= 1 => usize::try_from(*n).ok(),
        Some(Value::Number(n)) if *n >= 1.0 => Some(*n as usize),
        _ => None,
    }
}

/// The depth of a decoded document.
fn depth_of(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        serde_json::Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let settings = Arc::new(Settings {
        encode_max_depth: AtomicUsize::new(1000),
        decode_max_depth: AtomicUsize::new(1000),
        encode_invalid_numbers: AtomicBool::new(false),
    });
    let t = lua.create_table()?;
    let s = settings.clone();
    t.set(
        "encode",
        lua.create_function(move |_, v: Value| {
            let mut enc = Encoder {
                out: Vec::new(),
                max_depth: s.encode_max_depth.load(Ordering::Relaxed),
                invalid_numbers: s.encode_invalid_numbers.load(Ordering::Relaxed),
            };
            enc.encode(&v, 0)?;
            Ok(mlua::BString::from(enc.out))
        })?,
    )?;
    let s = settings.clone();
    t.set(
        "decode",
        lua.create_function(move |lua, text: mlua::String| {
            let parsed: serde_json::Value = match serde_json::from_slice(&text.as_bytes()) {
                Ok(v) => v,
                Err(e) => {
                    return fail(format!(
                        "Expected value but found invalid token at character {}",
                        e.column().max(1)
                    ));
                }
            };
            let depth = depth_of(&parsed);
            if depth > s.decode_max_depth.load(Ordering::Relaxed) {
                return fail(format!("Found too many nested data structures ({depth})"));
            }
            decode(lua, &parsed)
        })?,
    )?;
    t.set("null", Value::NULL)?;
    let s = settings.clone();
    t.set(
        "encode_max_depth",
        lua.create_function(move |_, args: MultiValue| {
            if let Some(d) = depth_arg(&args) {
                s.encode_max_depth.store(d, Ordering::Relaxed);
            }
            Ok(s.encode_max_depth.load(Ordering::Relaxed))
        })?,
    )?;
    let s = settings.clone();
    t.set(
        "decode_max_depth",
        lua.create_function(move |_, args: MultiValue| {
            if let Some(d) = depth_arg(&args) {
                s.decode_max_depth.store(d, Ordering::Relaxed);
            }
            Ok(s.decode_max_depth.load(Ordering::Relaxed))
        })?,
    )?;
    let s = settings;
    t.set(
        "encode_invalid_numbers",
        lua.create_function(move |_, args: MultiValue| {
            if let Some(Value::Boolean(b)) = args.front() {
                s.encode_invalid_numbers.store(*b, Ordering::Relaxed);
            }
            Ok(s.encode_invalid_numbers.load(Ordering::Relaxed))
        })?,
    )?;
    // These only tune lua-cjson's buffers and formats; accepted and reported as given.
    for name in [
        "encode_keep_buffer",
        "decode_invalid_numbers",
        "encode_number_precision",
        "encode_sparse_array",
    ] {
        t.set(name, lua.create_function(|_, args: MultiValue| Ok(args))?)?;
    }
    t.set("_NAME", "cjson")?;
    t.set("_VERSION", "2.1.0")?;
    Ok(t)
}

fn encode_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// The array length of `t` if all its keys are positive integers (None for objects).
fn array_length(t: &Table) -> mlua::Result<Option<usize>> {
    let mut max = 0usize;
    let mut count = 0usize;
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let index = match k {
            Value::Integer(i) if i >= 1 => i as usize,
            Value::Number(n) if n >= 1.0 && n == n.floor() => n as usize,
            _ => return Ok(None),
        };
        max = max.max(index);
        count += 1;
    }
    if max > 10 && max > count * 2 {
        return fail("Cannot serialise table: excessively sparse array");
    }
    Ok(Some(max))
}

struct Encoder {
    out: Vec<u8>,
    max_depth: usize,
    invalid_numbers: bool,
}

impl Encoder {
    fn number(&mut self, n: f64) -> mlua::Result<()> {
        if !n.is_finite() && !self.invalid_numbers {
            return fail("Cannot serialise number: must not be NaN or Inf");
        }
        let text = if n.is_nan() {
            "nan".to_owned()
        } else {
            crate::script::lua_number_text(n)
        };
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    fn encode(&mut self, v: &Value, depth: usize) -> mlua::Result<()> {
        match v {
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Boolean(b) => self
                .out
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Integer(n) => self.out.extend_from_slice(n.to_string().as_bytes()),
            Value::Number(n) => self.number(*n)?,
            Value::String(s) => encode_string(&mut self.out, &s.as_bytes()),
            Value::Table(t) => {
                if depth >= self.max_depth {
                    return fail(format!(
                        "Cannot serialise, excessive nesting ({})",
                        depth + 1
                    ));
                }
                self.table(t, depth)?;
            }
            other => {
                return fail(format!(
                    "Cannot serialise {}: type not supported",
                    other.type_name()
                ));
            }
        }
        Ok(())
    }

    fn table(&mut self, t: &Table, depth: usize) -> mlua::Result<()> {
        if let Some(len) = array_length(t)?.filter(|len| *len > 0) {
            self.out.push(b'[');
            for i in 1..=len {
                if i > 1 {
                    self.out.push(b',');
                }
                self.encode(&t.raw_get::<Value>(i)?, depth + 1)?;
            }
            self.out.push(b']');
            return Ok(());
        }
        self.out.push(b'{');
        let mut first = true;
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, val) = pair?;
            if !first {
                self.out.push(b',');
            }
            first = false;
            match &k {
                Value::String(s) => encode_string(&mut self.out, &s.as_bytes()),
                Value::Integer(n) => encode_string(&mut self.out, n.to_string().as_bytes()),
                Value::Number(n) => {
                    encode_string(&mut self.out, crate::script::lua_number_text(*n).as_bytes())
                }
                _ => return fail("Cannot serialise table: table key must be a number or string"),
            }
            self.out.push(b':');
            self.encode(&val, depth + 1)?;
        }
        self.out.push(b'}');
        Ok(())
    }
}

fn decode(lua: &Lua, v: &serde_json::Value) -> mlua::Result<Value> {
    Ok(match v {
        serde_json::Value::Null => Value::NULL,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::String(lua.create_string(s)?),
        serde_json::Value::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, decode(lua, item)?)?;
            }
            Value::Table(t)
        }
        serde_json::Value::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, item) in map {
                t.raw_set(k.as_str(), decode(lua, item)?)?;
            }
            Value::Table(t)
        }
    })
}
