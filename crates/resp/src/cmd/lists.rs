//! List commands: pushes, pops, ranges, LINSERT/LREM/LTRIM/LPOS, LMOVE and the blocking pops.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::sync::oneshot;

use super::common::{
    empty_or_null, found_or, index_pair, pop_command, pop_elements, typed, value_or,
};
use super::{Args, Cx, NO_KEY, OUT_OF_RANGE, SYNTAX, WRONGTYPE, int_arg};
use crate::engine::{BlockOp, Db, Key, ListEdit, WrongType};
use crate::reply::Out;
use crate::session::{Action, BlockKind, BlockWait};

fn push(cx: &mut Cx<'_, '_>, args: &Args<'_>, left: bool, only_existing: bool) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let list = if only_existing {
        found_or!(cx.out, d.list(key), cx.out.int(0))
    } else {
        let Some(list) = typed(cx.out, d.list_or_new(key)) else {
            return;
        };
        list
    };
    for element in args.from(2) {
        if left {
            list.push_front(element.into())
        } else {
            list.push_back(element.into())
        }
    }
    let n = list.len();
    let pushed = args.len() - 2;
    store.touch_list(db, key, &[ListEdit::Push { left, n: pushed }]);
    store.list_pushed(db, key);
    cx.out.int(n as i64);
}

pub fn lpush(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    push(cx, args, true, false);
}

pub fn rpush(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    push(cx, args, false, false);
}

pub fn lpushx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    push(cx, args, true, true);
}

pub fn rpushx(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    push(cx, args, false, true);
}

fn pop(cx: &mut Cx<'_, '_>, args: &Args<'_>, left: bool) {
    let too_many = if left {
        "ERR wrong number of arguments for 'lpop' command"
    } else {
        "ERR wrong number of arguments for 'rpop' command"
    };
    let missing = |out: &mut Out, counted: bool| {
        if counted {
            out.null_array()
        } else {
            out.null()
        }
    };
    let mark = move |store: &mut crate::engine::Store, db: usize, key: &[u8], n: usize| {
        store.touch_list(db, key, &[ListEdit::Pop { left, n }]);
    };
    pop_command(
        cx,
        args,
        too_many,
        Db::list,
        missing,
        mark,
        |out, list, count| {
            let take = |l: &mut VecDeque<Key>| if left { l.pop_front() } else { l.pop_back() };
            pop_elements(out, list, count, list.len(), Out::array, take)
        },
    );
}

pub fn lpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    pop(cx, args, true);
}

pub fn rpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    pop(cx, args, false);
}

pub fn llen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    match cx.store.get().db(db).list(args.get(1)) {
        Ok(l) => cx.out.int(l.map_or(0, |l| l.len()) as i64),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

/// Clamps Redis start/stop indexes (negative from the end) to a range of a `len` collection.
pub fn clamp_range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop as usize))
}

pub fn lrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((start, stop)) = index_pair(cx.out, args) else {
        return;
    };
    let list = value_or!(cx, list, args.get(1), cx.out.array(0));
    match clamp_range(start, stop, list.len()) {
        None => cx.out.array(0),
        Some((a, b)) => {
            cx.out.array(b - a + 1);
            for v in list.range(a..=b) {
                cx.out.bulk(v);
            }
        }
    }
}

/// A Redis list index (negative from the end) as a position, if in range.
fn position(index: i64, len: usize) -> Option<usize> {
    let i = if index < 0 { len as i64 + index } else { index };
    (0..len as i64).contains(&i).then_some(i as usize)
}

pub fn lindex(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(index) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    let list = value_or!(cx, list, args.get(1), cx.out.null());
    match position(index, list.len()).and_then(|i| list.get(i)) {
        Some(v) => cx.out.bulk(v),
        None => cx.out.null(),
    }
}

pub fn lset(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(index) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    match store.db(db).list(key) {
        Ok(Some(list)) => match position(index, list.len()).and_then(|i| list.get_mut(i)) {
            Some(slot) => {
                *slot = args.get(3).into();
                store.touch(db, key);
                cx.out.ok();
            }
            None => cx.out.error(OUT_OF_RANGE),
        },
        Ok(None) => cx.out.error(NO_KEY),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn linsert(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let before = if args.is(2, "before") {
        true
    } else if args.is(2, "after") {
        false
    } else {
        cx.out.error(SYNTAX);
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let list = found_or!(cx.out, store.db(db).list(key), cx.out.int(0));
    let pivot = args.get(3);
    let Some(at) = list.iter().position(|e| &e[..] == pivot) else {
        cx.out.int(-1);
        return;
    };
    list.insert(if before { at } else { at + 1 }, args.get(4).into());
    let n = list.len();
    store.touch(db, key);
    store.list_pushed(db, key);
    cx.out.int(n as i64);
}

pub fn lrem(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(count) = int_arg(cx.out, args.get(2)) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let target = args.get(3);
    let store = cx.store.get();
    let d = store.db(db);
    let list = found_or!(cx.out, d.list(key), cx.out.int(0));
    let limit = if count == 0 {
        usize::MAX
    } else {
        count.unsigned_abs() as usize
    };
    let mut removed = 0usize;
    if count >= 0 {
        let mut i = 0;
        while i < list.len() && removed < limit {
            if list.get(i).is_some_and(|e| &e[..] == target) {
                list.remove(i);
                removed += 1;
            } else {
                i += 1;
            }
        }
    } else {
        let mut i = list.len();
        while i > 0 && removed < limit {
            i -= 1;
            if list.get(i).is_some_and(|e| &e[..] == target) {
                list.remove(i);
                removed += 1;
            }
        }
    }
    d.remove_if_empty(key);
    if removed > 0 {
        store.touch(db, key);
    }
    cx.out.int(removed as i64);
}

pub fn ltrim(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((start, stop)) = index_pair(cx.out, args) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    match d.list(key) {
        Ok(Some(list)) => {
            let len = list.len();
            let (from_left, from_right) = match clamp_range(start, stop, len) {
                Some((a, b)) => {
                    list.truncate(b + 1);
                    list.drain(..a);
                    (a, len - 1 - b)
                }
                None => {
                    list.clear();
                    (len, 0)
                }
            };
            d.remove_if_empty(key);
            // Trimming is popping at both ends.
            let trimmed = [
                ListEdit::Pop {
                    left: true,
                    n: from_left,
                },
                ListEdit::Pop {
                    left: false,
                    n: from_right,
                },
            ];
            store.touch_list(db, key, &trimmed);
            cx.out.ok();
        }
        Ok(None) => cx.out.ok(),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn lpos(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let mut rank: i64 = 1;
    let mut count: Option<i64> = None;
    let mut maxlen: i64 = 0;
    let mut i = 3;
    while i < args.len() {
        if i + 1 >= args.len() {
            cx.out.error(SYNTAX);
            return;
        }
        let Some(n) = int_arg(cx.out, args.get(i + 1)) else {
            return;
        };
        if args.is(i, "rank") {
            if n == 0 {
                cx.out.error(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... \
                     or use negative to start from the end of the list",
                );
                return;
            }
            if n == i64::MIN {
                cx.out.error(
                    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                );
                return;
            }
            rank = n;
        } else if args.is(i, "count") {
            if n < 0 {
                cx.out.error("ERR COUNT can't be negative");
                return;
            }
            count = Some(n);
        } else if args.is(i, "maxlen") {
            if n < 0 {
                cx.out.error("ERR MAXLEN can't be negative");
                return;
            }
            maxlen = n;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 2;
    }
    let target = args.get(2);
    let list = value_or!(
        cx,
        list,
        args.get(1),
        empty_or_null(cx.out, count.is_some())
    );
    let len = list.len();
    let scan_limit = if maxlen == 0 {
        len
    } else {
        (maxlen as usize).min(len)
    };
    let wanted = match count {
        Some(0) => usize::MAX,
        Some(n) => n as usize,
        None => 1,
    };
    let mut skip = rank.unsigned_abs() - 1;
    let mut found = Vec::new();
    let mut check = |idx: usize, e: &Key| {
        if &e[..] == target {
            if skip > 0 {
                skip -= 1;
            } else {
                found.push(idx as i64);
            }
        }
        found.len() < wanted
    };
    if rank > 0 {
        for (idx, e) in list.iter().enumerate().take(scan_limit) {
            if !check(idx, e) {
                break;
            }
        }
    } else {
        for (k, e) in list.iter().rev().enumerate().take(scan_limit) {
            if !check(len - 1 - k, e) {
                break;
            }
        }
    }
    if count.is_some() {
        cx.out.array(found.len());
        for p in found {
            cx.out.int(p);
        }
    } else {
        match found.first() {
            Some(&p) => cx.out.int(p),
            None => cx.out.null(),
        }
    }
}

/// Parses LEFT/RIGHT.
fn side(args: &Args<'_>, i: usize) -> Option<bool> {
    if args.is(i, "left") {
        Some(true)
    } else if args.is(i, "right") {
        Some(false)
    } else {
        None
    }
}

/// Moves one element between lists; Ok(None) when the source is empty or missing.
fn move_element(
    cx: &mut Cx<'_, '_>,
    src: &[u8],
    dst: &[u8],
    from_left: bool,
    to_left: bool,
) -> Result<Option<Key>, WrongType> {
    let db = cx.db();
    let store = cx.store.get();
    let d = store.db(db);
    if d.list(src)?.is_none_or(|l| l.is_empty()) {
        return Ok(None);
    }
    d.list(dst)?;
    let Some(list) = d.list(src)? else {
        return Ok(None);
    };
    let Some(value) = (if from_left {
        list.pop_front()
    } else {
        list.pop_back()
    }) else {
        return Ok(None);
    };
    d.remove_if_empty(src);
    let target = d.list_or_new(dst)?;
    if to_left {
        target.push_front(value.clone())
    } else {
        target.push_back(value.clone())
    }
    store.touch_list(
        db,
        src,
        &[ListEdit::Pop {
            left: from_left,
            n: 1,
        }],
    );
    store.touch_list(
        db,
        dst,
        &[ListEdit::Push {
            left: to_left,
            n: 1,
        }],
    );
    store.list_pushed(db, dst);
    Ok(Some(value))
}

fn lmove_reply(cx: &mut Cx<'_, '_>, r: Result<Option<Key>, WrongType>) {
    match r {
        Ok(Some(v)) => cx.out.bulk(&v),
        Ok(None) => cx.out.null(),
        Err(WrongType) => cx.out.error(WRONGTYPE),
    }
}

pub fn rpoplpush(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let r = move_element(cx, args.get(1), args.get(2), false, true);
    lmove_reply(cx, r);
}

pub fn lmove(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (Some(from_left), Some(to_left)) = (side(args, 3), side(args, 4)) else {
        cx.out.error(SYNTAX);
        return;
    };
    let r = move_element(cx, args.get(1), args.get(2), from_left, to_left);
    lmove_reply(cx, r);
}

/// Parses a blocking timeout in seconds (fractions allowed); None after replying the error.
pub(super) fn timeout_arg(cx: &mut Cx<'_, '_>, arg: &[u8]) -> Option<Option<tokio::time::Instant>> {
    let Some(secs) = crate::num::parse_f64(arg).filter(|s| s.is_finite()) else {
        cx.out.error("ERR timeout is not a float or out of range");
        return None;
    };
    if secs < 0.0 {
        cx.out.error("ERR timeout is negative");
        return None;
    }
    if secs == 0.0 {
        return Some(None);
    }
    let wait =
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::from_secs(u64::from(u32::MAX)));
    // A timeout past what the clock can represent blocks forever, like 0.
    Some(tokio::time::Instant::now().checked_add(wait))
}

fn block(
    cx: &mut Cx<'_, '_>,
    keys: Vec<Key>,
    op: BlockOp,
    deadline: Option<tokio::time::Instant>,
    kind: BlockKind,
) {
    let (tx, rx) = oneshot::channel();
    let db = cx.db();
    let id = cx.store.get().blocking.block(db, keys, op, tx);
    cx.store.get().blocking.set_owner(id, cx.session.id);
    cx.session.action = Action::Block(BlockWait {
        id,
        rx,
        deadline,
        kind,
    });
}

fn bpop(cx: &mut Cx<'_, '_>, args: &Args<'_>, left: bool) {
    let Some(deadline) = timeout_arg(cx, args.get(args.len() - 1)) else {
        return;
    };
    let keys: Vec<&[u8]> = args.from(1).take(args.len() - 2).collect();
    let db = cx.db();
    let store = cx.store.get();
    for key in &keys {
        match store.db(db).list(key) {
            Ok(Some(list)) => {
                let Some(v) = (if left {
                    list.pop_front()
                } else {
                    list.pop_back()
                }) else {
                    continue;
                };
                store.db(db).remove_if_empty(key);
                store.touch_list(db, key, &[ListEdit::Pop { left, n: 1 }]);
                cx.out.array(2);
                cx.out.bulk(key);
                cx.out.bulk(&v);
                return;
            }
            Ok(None) => {}
            Err(WrongType) => {
                cx.out.error(WRONGTYPE);
                return;
            }
        }
    }
    if cx.session.in_exec {
        cx.out.null_array();
        return;
    }
    let keys = keys.into_iter().map(Key::from).collect();
    block(cx, keys, BlockOp::Pop { left }, deadline, BlockKind::Pop);
}

pub fn blpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bpop(cx, args, true);
}

pub fn brpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bpop(cx, args, false);
}

fn bmove(
    cx: &mut Cx<'_, '_>,
    src: &[u8],
    dst: &[u8],
    from_left: bool,
    to_left: bool,
    timeout: &[u8],
) {
    let Some(deadline) = timeout_arg(cx, timeout) else {
        return;
    };
    match move_element(cx, src, dst, from_left, to_left) {
        Ok(None) if !cx.session.in_exec => {
            let op = BlockOp::Move {
                dst: dst.into(),
                from_left,
                to_left,
            };
            block(cx, vec![src.into()], op, deadline, BlockKind::Move);
        }
        r => lmove_reply(cx, r),
    }
}

pub fn blmove(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (Some(from_left), Some(to_left)) = (side(args, 3), side(args, 4)) else {
        cx.out.error(SYNTAX);
        return;
    };
    bmove(
        cx,
        args.get(1),
        args.get(2),
        from_left,
        to_left,
        args.get(5),
    );
}

pub fn brpoplpush(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bmove(cx, args.get(1), args.get(2), false, true, args.get(3));
}
