//! LuaBitOp's `bit` library: 32-bit operations on Lua numbers.

use mlua::{Lua, MultiValue, Table, Value};

use super::fail;

/// A Lua number as LuaBitOp normalizes it: modulo 2^32, as a signed 32-bit integer.
fn to_bits(v: &Value) -> mlua::Result<i32> {
    let n = match v {
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        Value::String(s) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) => n,
            None => return fail("bad argument (number expected)"),
        },
        _ => return fail("bad argument (number expected)"),
    };
    // LuaBitOp adds 2^52+2^51 and takes the low word: round to nearest, wrap modulo 2^32.
    let rounded = n.round_ties_even();
    let wrapped = rounded.rem_euclid(4_294_967_296.0);
    Ok(wrapped as u32 as i32)
}

fn args_bits(args: &MultiValue) -> mlua::Result<Vec<i32>> {
    if args.is_empty() {
        return fail("bad argument #1 (number expected, got no value)");
    }
    args.iter().map(to_bits).collect()
}

pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("tobit", lua.create_function(|_, v: Value| to_bits(&v))?)?;
    t.set(
        "tohex",
        lua.create_function(|_, (v, n): (Value, Option<Value>)| {
            let x = to_bits(&v)? as u32;
            let mut n = match n {
                Some(n) => to_bits(&n)?,
                None => 8,
            };
            let upper = n < 0;
            if upper {
                n = -n;
            }
            let n = n.clamp(0, 8) as usize;
            let text = if upper {
                format!("{x:08X}")
            } else {
                format!("{x:08x}")
            };
            Ok(text[8 - n..].to_owned())
        })?,
    )?;
    t.set(
        "bnot",
        lua.create_function(|_, v: Value| Ok(!to_bits(&v)?))?,
    )?;
    let fold = |lua: &Lua, op: fn(i32, i32) -> i32| {
        lua.create_function(move |_, args: MultiValue| {
            let bits = args_bits(&args)?;
            Ok(bits.iter().skip(1).fold(bits[0], |a, b| op(a, *b)))
        })
    };
    t.set("band", fold(lua, |a, b| a & b)?)?;
    t.set("bor", fold(lua, |a, b| a | b)?)?;
    t.set("bxor", fold(lua, |a, b| a ^ b)?)?;
    let shift = |lua: &Lua, op: fn(i32, u32) -> i32| {
        lua.create_function(move |_, (v, n): (Value, Value)| {
            Ok(op(to_bits(&v)?, (to_bits(&n)? & 31) as u32))
        })
    };
    t.set("lshift", shift(lua, |x, n| ((x as u32) << n) as i32)?)?;
    t.set("rshift", shift(lua, |x, n| ((x as u32) >> n) as i32)?)?;
    t.set("arshift", shift(lua, |x, n| x >> n)?)?;
    t.set("rol", shift(lua, |x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.set("ror", shift(lua, |x, n| (x as u32).rotate_right(n) as i32)?)?;
    t.set(
        "bswap",
        lua.create_function(|_, v: Value| Ok(to_bits(&v)?.swap_bytes()))?,
    )?;
    Ok(t)
}
