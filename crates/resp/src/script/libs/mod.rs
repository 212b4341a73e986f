//! The libraries Redis ships to scripts, written in Rust: `bit`, `cjson`, `cmsgpack`, `struct`.

mod bit;
mod cjson;
mod cmsgpack;
mod structlib;

use mlua::{Lua, Table};

/// Installs every library as a global of `globals`.
pub fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    globals.raw_set("bit", bit::open(lua)?)?;
    globals.raw_set("cjson", cjson::open(lua)?)?;
    globals.raw_set("cmsgpack", cmsgpack::open(lua)?)?;
    globals.raw_set("struct", structlib::open(lua)?)?;
    Ok(())
}

/// A Lua error with Redis's message text.
fn fail<T>(msg: impl Into<String>) -> mlua::Result<T> {
    Err(mlua::Error::RuntimeError(msg.into()))
}
