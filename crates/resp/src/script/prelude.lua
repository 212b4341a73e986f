-- Sluice's Lua prelude: the `redis` table and Redis's sandbox with protected globals.
-- Runs once per interpreter, with the real global table; `...` is a table of Rust primitives.
local prims = ...
local run = prims.run
local G = _G
local error, type, select, rawget, tostring, unpack = error, type, select, rawget, tostring, unpack
local real_setmetatable, real_getmetatable = setmetatable, getmetatable
local real_pcall, real_xpcall, real_rawset = pcall, xpcall, rawset
local real_loadstring, real_getfenv, real_setfenv = loadstring, getfenv, setfenv

local protected = real_setmetatable({}, { __mode = "k" })
local function readonly_error() error("Attempt to modify a readonly table", 2) end

-- A read-only view of `t`: reads go to `t`, writes fail as in Redis's readonly tables.
local function readonly(t)
  local proxy = {}
  local mt = { __index = t, __newindex = readonly_error }
  local mt_view = {}
  real_setmetatable(mt_view, { __index = mt, __newindex = readonly_error, __metatable = false })
  protected[mt_view] = true
  mt.__metatable = mt_view
  real_setmetatable(proxy, mt)
  protected[proxy] = true
  return proxy
end

-- luaPushErrorBuff: "-CODE msg" keeps its code, anything else gets ERR.
local function error_table(e)
  local code, msg = "ERR", e
  if e:sub(1, 1) == "-" then
    local space = e:find(" ", 1, true)
    if space then code, msg = e:sub(2, space - 1), e:sub(space + 1) else msg = e:sub(2) end
  end
  msg = msg:gsub("^[\r\n]+", ""):gsub("[\r\n]+$", "")
  return { err = code .. " " .. msg }
end
prims.error_table = error_table

local function need_run(what)
  if not run.active then error(error_table(what .. " can only be called inside a script invocation"), 0) end
end

local redis = {}
-- Arguments go to Rust as they are, on the stack (no table per call); thousands of them (an
-- unpack of a big table) go in one table, as a C function's stack has room for fewer.
local MANY = 4000
local run_call, run_call_many = run.call, run.call_many
redis.call = function(...)
  local n = select("#", ...)
  if not run.active then need_run("redis.call/pcall") end
  local reply, failed
  if n < MANY then
    reply, failed = run_call(...)
  else
    reply, failed = run_call_many(n, { ... })
  end
  if failed then error(reply, 0) end
  return reply
end
redis.pcall = function(...)
  local n = select("#", ...)
  if not run.active then need_run("redis.call/pcall") end
  if n < MANY then return (run_call(...)) end
  return (run_call_many(n, { ... }))
end
redis.sha1hex = prims.sha1hex
redis.log = prims.log
redis.error_reply = function(...)
  local e = ...
  if select("#", ...) ~= 1 or type(e) ~= "string" then return error_table("wrong number or type of arguments") end
  if e:sub(1, 1) ~= "-" then e = "-" .. e end
  return error_table(e)
end
redis.status_reply = function(...)
  local s = ...
  if select("#", ...) ~= 1 or type(s) ~= "string" then return error_table("wrong number or type of arguments") end
  return { ok = s }
end
redis.setresp = function(...)
  need_run("redis.setresp")
  if select("#", ...) ~= 1 then error(error_table("redis.setresp() requires one argument."), 0) end
  local resp = tonumber((...))
  if resp ~= 2 and resp ~= 3 then error(error_table("RESP version must be 2 or 3."), 0) end
  run.resp = resp
end
redis.set_repl = function(...)
  need_run("redis.set_repl")
  if select("#", ...) ~= 1 then error(error_table("redis.set_repl() requires two arguments."), 0) end
  local flags = tonumber((...))
  if flags == nil or flags < 0 or flags > 3 then
    error(error_table("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 0)
  end
end
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.acl_check_cmd = prims.acl_check_cmd
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = "7.0.15", 458767
prims.redis = redis

-- pcall and xpcall hand an error table's message to the script (as Redis's pcall does), and
-- cannot swallow SCRIPT KILL.
local function pcall_result(ok, ...)
  if not ok then
    if run.killed then error((...), 0) end
    local e = ...
    if type(e) == "table" and type(rawget(e, "err")) == "string" then return false, e.err end
  end
  return ok, ...
end
G.pcall = function(f, ...) return pcall_result(real_pcall(f, ...)) end
G.xpcall = function(f, h) return pcall_result(real_xpcall(f, h)) end

G.setmetatable = function(t, mt)
  if protected[t] then error("Attempt to modify a readonly table", 2) end
  return real_setmetatable(t, mt)
end
G.rawset = function(t, k, v)
  if protected[t] then error("Attempt to modify a readonly table", 2) end
  return real_rawset(t, k, v)
end

for _, name in ipairs({ "dofile", "loadfile", "print", "module", "require", "newproxy" }) do G[name] = nil end

-- The globals scripts see: a read-only view of G whose misses are errors.
local globals
real_setmetatable(G, { __index = function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end })
prims.wrap_libraries = function(names)
  for _, name in ipairs(names) do
    local lib = rawget(G, name)
    if type(lib) == "table" then real_rawset(G, name, readonly(lib)) end
  end
end
globals = readonly(G)
real_rawset(G, "_G", globals)
G.loadstring = function(s, name)
  -- Precompiled chunks can break the interpreter: only source is loaded, as in Redis.
  if type(s) == "string" and s:byte(1) == 27 then return nil, "binary chunks are not allowed" end
  local f, e = real_loadstring(s, name)
  if f then real_setfenv(f, globals) end
  return f, e
end
G.getfenv = function(f)
  if f == nil then f = 1 end
  if type(f) == "number" and f > 0 then f = f + 1 end
  local env = real_getfenv(f)
  if env == G then return globals end
  return env
end
prims.globals = globals
prims.G = G

-- Runs a script (no arguments) or a function (keys, args) under the error handler.
prims.invoke = function(f, handler, eval, keys, args)
  if eval then return real_xpcall(f, handler) end
  return real_xpcall(function() return f(keys, args) end, handler)
end

-- A run as the runner starts it, in one call: `packed` holds the keys then the arguments, each
-- a 4-byte little-endian length and its bytes. Sets the run's state (KEYS and ARGV for EVAL),
-- runs, clears it, and returns ok, whether the script asked for RESP3, and the result.
local byte, sub = string.byte, string.sub
local function unpacked(packed, pos, n)
  local t = {}
  for i = 1, n do
    local a, b, c, d = byte(packed, pos, pos + 3)
    local len = a + b * 256 + c * 65536 + d * 16777216
    t[i] = sub(packed, pos + 4, pos + 3 + len)
    pos = pos + 4 + len
  end
  return t, pos
end
local function finished(eval, ok, ...)
  run.active = nil
  local resp3 = run.resp == 3
  run.resp = nil
  if eval then
    real_rawset(G, "KEYS", nil)
    real_rawset(G, "ARGV", nil)
  end
  return ok, resp3, ...
end
prims.invoke_packed = function(f, handler, eval, packed, nkeys, nargs)
  local keys, pos = unpacked(packed, 1, nkeys)
  local args = unpacked(packed, pos, nargs)
  run.active = true
  run.resp = 2
  if eval then
    real_rawset(G, "KEYS", keys)
    real_rawset(G, "ARGV", args)
    return finished(true, real_xpcall(f, handler))
  end
  return finished(false, real_xpcall(function() return f(keys, args) end, handler))
end

-- FUNCTION support: the `redis` table library code sees while FUNCTION LOAD runs it, and the
-- environment functions run in (the full `redis` once loading is over).
local function nonexistent(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
prims.function_env = function(loading)
  local load_redis = {
    register_function = function(...)
      if not run.register then
        error(error_table("redis.register_function can only be called on FUNCTION LOAD command"), 0)
      end
      local failure = run.register(...)
      if failure then error(error_table(failure), 0) end
    end,
    log = redis.log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
  }
  real_setmetatable(load_redis, { __index = nonexistent })
  load_redis = readonly(load_redis)
  local env = {}
  real_setmetatable(env, {
    __index = function(_, k)
      -- While FUNCTION LOAD runs the library, only the library API is visible.
      if loading.on then
        if k == "redis" then return load_redis end
        error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
      end
      local v = rawget(G, k)
      if v == nil then
        error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
      end
      return v
    end,
    __newindex = readonly_error,
    __metatable = false,
  })
  protected[env] = true
  return env
end
