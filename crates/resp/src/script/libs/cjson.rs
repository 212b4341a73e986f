//! lua-cjson's `cjson` library: `encode`, `decode`, `null` and its settings functions.

use mlua::{Lua, Table, Value};

use super::fail;

const MAX_DEPTH: usize = 1000;

pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "encode",
        lua.create_function(|_, v: Value| {
            let mut text = Vec::new();
            encode(&mut text, &v, 0)?;
            Ok(mlua::BString::from(text))
        })?,
    )?;
    t.set(
        "decode",
        lua.create_function(|lua, s: mlua::String| {
            let parsed: serde_json::Value = match serde_json::from_slice(&s.as_bytes()) {
                Ok(v) => v,
                Err(e) => {
                    return fail(format!(
                        "Expected value but found invalid token at character {}",
                        e.column().max(1)
                    ));
                }
            };
            decode(lua, &parsed)
        })?,
    )?;
    t.set("null", Value::NULL)?;
    // Settings are accepted (and report their value) as lua-cjson's; behaviour stays default.
    for name in [
        "encode_keep_buffer",
        "encode_max_depth",
        "decode_max_depth",
        "encode_invalid_numbers",
        "decode_invalid_numbers",
        "encode_number_precision",
        "encode_sparse_array",
    ] {
        t.set(
            name,
            lua.create_function(|_, args: mlua::MultiValue| Ok(args))?,
        )?;
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

fn encode_number(out: &mut Vec<u8>, n: f64) -> mlua::Result<()> {
    if !n.is_finite() {
        return fail("Cannot serialise number: must not be NaN or Inf");
    }
    out.extend_from_slice(crate::script::lua_number_text(n).as_bytes());
    Ok(())
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

fn encode(out: &mut Vec<u8>, v: &Value, depth: usize) -> mlua::Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Number(n) => encode_number(out, *n)?,
        Value::String(s) => encode_string(out, &s.as_bytes()),
        Value::Table(t) => {
            if depth >= MAX_DEPTH {
                return fail(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                ));
            }
            match array_length(t)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        encode(out, &t.raw_get::<Value>(i)?, depth + 1)?;
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.clone().pairs::<Value, Value>() {
                        let (k, val) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(s) => encode_string(out, &s.as_bytes()),
                            Value::Integer(n) => encode_string(out, n.to_string().as_bytes()),
                            Value::Number(n) => {
                                encode_string(out, crate::script::lua_number_text(*n).as_bytes())
                            }
                            _ => {
                                return fail(
                                    "Cannot serialise table: table key must be a number or string",
                                );
                            }
                        }
                        out.push(b':');
                        encode(out, &val, depth + 1)?;
                    }
                    out.push(b'}');
                }
            }
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
