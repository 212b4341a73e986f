//! What the command families share: typed lookups, optional COUNT, pops, removals, random picks.

use super::{Args, Cx, SYNTAX, WRONGTYPE, int_arg};
use crate::engine::{Db, Key, WrongType};
use crate::reply::Out;

/// Unwraps a typed lookup (`Result<Option<&mut T>, WrongType>`) or returns from the handler:
/// after replying WRONGTYPE for another type, or after running `$missing` (the command's answer
/// for a key that does not exist).
macro_rules! found_or {
    ($out:expr, $lookup:expr, $missing:expr) => {
        match $lookup {
            Ok(Some(value)) => value,
            Ok(None) => {
                $missing;
                return;
            }
            Err($crate::engine::WrongType) => {
                $out.error($crate::cmd::WRONGTYPE);
                return;
            }
        }
    };
}

/// `found_or!` for `$key` in the selected database; `$kind` names the typed access of
/// [`crate::engine::Db`] (`list`, `hash`, `set_value`, `zset`). A macro because the value
/// borrows `cx.store` while `$missing` and the caller go on writing to `cx.out`.
macro_rules! value_or {
    ($cx:expr, $kind:ident, $key:expr, $missing:expr) => {{
        let db = $cx.db();
        $crate::cmd::common::found_or!($cx.out, $cx.store.get().db(db).$kind($key), $missing)
    }};
}

pub(crate) use {found_or, value_or};

/// What a typed lookup found (`hash_or_new`'s value, `hash`'s Option), or None after replying
/// WRONGTYPE.
pub fn typed<T>(out: &mut Out, lookup: Result<T, WrongType>) -> Option<T> {
    match lookup {
        Ok(value) => Some(value),
        Err(WrongType) => {
            out.error(WRONGTYPE);
            None
        }
    }
}

/// The optional count of `KEY [count]` commands (LPOP, RPOP, SPOP, SRANDMEMBER, ZPOPMIN,
/// ZPOPMAX) at argument 2: Some(None) when absent; None after replying `too_many` (more
/// arguments) or `parse`'s error.
pub fn optional_count<T>(
    out: &mut Out,
    args: &Args<'_>,
    too_many: &str,
    parse: fn(&mut Out, &[u8]) -> Option<T>,
) -> Option<Option<T>> {
    match args.len() {
        0..=2 => Some(None),
        3 => parse(out, args.get(2)).map(Some),
        _ => {
            out.error(too_many);
            None
        }
    }
}

/// The `key [count [option]]` of HRANDFIELD and ZRANDMEMBER: the count (None: one bare pick) and
/// whether `option` (WITHVALUES, WITHSCORES) was given; None after replying Redis's error.
pub fn random_count(out: &mut Out, args: &Args<'_>, option: &str) -> Option<(Option<i64>, bool)> {
    match args.len() {
        2 => Some((None, false)),
        3 | 4 => {
            if args.len() == 4 && !args.is(3, option) {
                out.error(SYNTAX);
                return None;
            }
            let n = int_arg(out, args.get(2))?;
            if !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n) {
                out.error("ERR value is out of range");
                return None;
            }
            Some((Some(n), args.len() == 4))
        }
        _ => {
            out.error(SYNTAX);
            None
        }
    }
}

/// Positions in a collection of `len` for a random-members reply: distinct ones (at most `len`)
/// for a non-negative `count`, `|count|` drawn with repetition for a negative one.
pub fn random_picks(count: i64, len: usize) -> Vec<usize> {
    if count >= 0 {
        let mut idx: Vec<usize> = (0..len).collect();
        fastrand::shuffle(&mut idx);
        idx.truncate(usize::try_from(count).unwrap_or(usize::MAX).min(len));
        idx
    } else {
        (0..count.unsigned_abs())
            .map(|_| crate::engine::random_index(len))
            .collect()
    }
}

/// Writes members, each followed by its value when `with_values` (HRANDFIELD WITHVALUES, ZRANGE
/// WITHSCORES): flat in RESP2, as `[member, value]` pairs in RESP3. `n` is how many `members`
/// yields.
pub fn members_reply<'m, V>(
    out: &mut Out,
    n: usize,
    members: impl Iterator<Item = (&'m [u8], V)>,
    with_values: bool,
    value: impl Fn(&mut Out, V),
) {
    let nested = with_values && out.resp3;
    out.array(if with_values && !nested { n * 2 } else { n });
    for (member, v) in members {
        if nested {
            out.array(2);
        }
        out.bulk(member);
        if with_values {
            value(out, v);
        }
    }
}

/// One reply per member named from argument 2 (HMGET, ZMSCORE, SMISMEMBER): `reply` gets what
/// `get` finds for it in `value` (None for every member when the key does not exist).
pub fn per_member<'v, T, V>(
    out: &mut Out,
    args: &Args<'_>,
    value: Option<&'v T>,
    get: impl Fn(&'v T, &[u8]) -> Option<V>,
    reply: impl Fn(&mut Out, Option<V>),
) {
    out.array(args.len() - 2);
    for member in args.from(2) {
        reply(out, value.and_then(|v| get(v, member)));
    }
}

/// A typed access of [`Db`] (`Db::hash`, `Db::set_value`, `Db::zset`) as a function value.
pub type Lookup<T> = for<'d> fn(&'d mut Db, &[u8]) -> Result<Option<&'d mut T>, WrongType>;

/// HDEL, SREM, ZREM: `remove`s each member named from argument 2 from the value at the key
/// `lookup` finds, drops the key once empty and replies how many went.
pub fn remove_each<T>(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    lookup: Lookup<T>,
    remove: impl Fn(&mut T, &[u8]) -> bool,
) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let value = found_or!(cx.out, lookup(d, key), cx.out.int(0));
    let removed = args.from(2).filter(|m| remove(value, m)).count();
    d.remove_if_empty(key);
    if removed > 0 {
        store.touch_members(db, key, args.from(2));
    }
    cx.out.int(removed as i64);
}

/// The answer for a missing key of a command with an optional count: an empty array with one,
/// a null without.
pub fn empty_or_null(out: &mut Out, counted: bool) {
    if counted { out.array(0) } else { out.null() }
}

/// HRANDFIELD, SRANDMEMBER, ZRANDMEMBER once the value of `len` entries is found: one bare member
/// without a count, else [`random_picks`] (with values when `with_values`). `entry` gets a
/// position below `len`.
pub fn random_reply<'m, V>(
    out: &mut Out,
    count: Option<i64>,
    len: usize,
    with_values: bool,
    entry: impl Fn(usize) -> Option<(&'m [u8], V)>,
    value: impl Fn(&mut Out, V),
) {
    let Some(count) = count else {
        if let Some((member, _)) = entry(crate::engine::random_index(len)) {
            out.bulk(member);
        }
        return;
    };
    let picks = random_picks(count, len);
    let members = picks.iter().filter_map(|&i| entry(i));
    members_reply(out, picks.len(), members, with_values, value);
}

/// LPOP, RPOP, SPOP, ZPOPMIN, ZPOPMAX: reads `KEY [count]` (`too_many` is the error for more
/// arguments), finds the value with `lookup` (`missing` answers for an absent key, told whether
/// a count was given), then `pop` replies what it takes and says how many; the key goes once
/// empty and is touched if anything went.
pub fn pop_command<T>(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    too_many: &str,
    lookup: Lookup<T>,
    missing: fn(&mut Out, bool),
    mark: impl FnOnce(&mut crate::engine::Store, usize, &[u8], usize),
    pop: impl FnOnce(&mut Out, &mut T, Option<usize>) -> usize,
) {
    let Some(count) = optional_count(cx.out, args, too_many, super::positive_arg) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let value = found_or!(cx.out, lookup(d, key), missing(cx.out, count.is_some()));
    let taken = pop(cx.out, value, count);
    d.remove_if_empty(key);
    if taken > 0 {
        mark(store, db, key, taken);
    }
}

/// The `pop` of [`pop_command`] for LPOP, RPOP and SPOP: one bare element without a count, else
/// `header` (array or set) and up to `count` of `len` elements, each taken by `take`.
pub fn pop_elements<T>(
    out: &mut Out,
    value: &mut T,
    count: Option<usize>,
    len: usize,
    header: fn(&mut Out, usize),
    mut take: impl FnMut(&mut T) -> Option<Key>,
) -> usize {
    let Some(count) = count else {
        let Some(element) = take(value) else {
            return 0;
        };
        out.bulk(&element);
        return 1;
    };
    let n = count.min(len);
    header(out, n);
    for _ in 0..n {
        if let Some(element) = take(value) {
            out.bulk(&element);
        }
    }
    n
}

/// The `start stop` indexes at arguments 2 and 3 (LRANGE, LTRIM, ZREMRANGEBYRANK), or None after
/// replying Redis's error.
pub fn index_pair(out: &mut Out, args: &Args<'_>) -> Option<(i64, i64)> {
    let start = int_arg(out, args.get(2))?;
    let stop = int_arg(out, args.get(3))?;
    Some((start, stop))
}
