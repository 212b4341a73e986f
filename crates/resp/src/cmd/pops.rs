//! Pops from the first non-empty of several keys: ZMPOP, LMPOP and the blocking BZPOPMIN,
//! BZPOPMAX, BZMPOP, BLMPOP; and CLIENT UNBLOCK, which ends any client's blocking command.

use tokio::sync::oneshot;

use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::{BlockOp, Key};
use crate::session::{Action, BlockKind, BlockWait};

/// The MIN|MAX [COUNT n] tail of ZMPOP/BZMPOP and LEFT|RIGHT of LMPOP/BLMPOP: (the first
/// option, count). `sides` names the two accepted words (true for the second).
pub fn mpop_args(
    cx: &mut Cx<'_, '_>,
    args: &Args<'_>,
    numkeys_at: usize,
    sides: (&str, &str),
) -> Option<(Vec<Key>, bool, usize)> {
    let n = match crate::num::parse_i64(args.get(numkeys_at)) {
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => {
            cx.out.error("ERR numkeys should be greater than 0");
            return None;
        }
    };
    let where_at = numkeys_at.saturating_add(n).saturating_add(1);
    if where_at >= args.len() {
        cx.out.error(SYNTAX);
        return None;
    }
    let second = if args.is(where_at, sides.0) {
        false
    } else if args.is(where_at, sides.1) {
        true
    } else {
        cx.out.error(SYNTAX);
        return None;
    };
    let mut count: Option<usize> = None;
    let mut j = where_at + 1;
    while j < args.len() {
        if count.is_none() && args.is(j, "count") && j + 1 < args.len() {
            match crate::num::parse_i64(args.get(j + 1)) {
                Some(c) if c >= 1 => count = Some(usize::try_from(c).unwrap_or(usize::MAX)),
                _ => {
                    cx.out.error("ERR count should be greater than 0");
                    return None;
                }
            }
            j += 2;
        } else {
            cx.out.error(SYNTAX);
            return None;
        }
    }
    let keys = args.from(numkeys_at + 1).take(n).map(Key::from).collect();
    Some((keys, second, count.unwrap_or(1)))
}

/// Pops from the first non-empty sorted set of `keys`; None when all are empty or missing,
/// Err(()) after a WRONGTYPE reply. `count` None is the BZPOPMIN shape.
fn zpop_first(
    cx: &mut Cx<'_, '_>,
    keys: &[Key],
    max: bool,
    count: Option<usize>,
) -> Result<bool, ()> {
    let db = cx.db();
    let store = cx.store.get();
    for key in keys {
        let d = store.db(db);
        let zset = match d.zset(key) {
            Ok(Some(z)) if !z.is_empty() => z,
            Ok(_) => continue,
            Err(_) => {
                cx.out.error(WRONGTYPE);
                return Err(());
            }
        };
        match count {
            None => {
                if let Some((m, s)) = zset.pop(max) {
                    cx.out.array(3);
                    cx.out.bulk(key);
                    cx.out.bulk(&m);
                    cx.out.double(s);
                }
            }
            Some(n) => {
                let n = n.min(zset.len());
                cx.out.array(2);
                cx.out.bulk(key);
                cx.out.array(n);
                for _ in 0..n {
                    if let Some((m, s)) = zset.pop(max) {
                        cx.out.array(2);
                        cx.out.bulk(&m);
                        cx.out.double(s);
                    }
                }
            }
        }
        d.remove_if_empty(key);
        store.touch(db, key);
        return Ok(true);
    }
    Ok(false)
}

pub fn zmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((keys, max, count)) = mpop_args(cx, args, 1, ("min", "max")) else {
        return;
    };
    if let Ok(false) = zpop_first(cx, &keys, max, Some(count)) {
        cx.out.null_array();
    }
}

/// Blocks the client on `keys` with `op` (or answers the null array inside MULTI).
pub fn block_on(
    cx: &mut Cx<'_, '_>,
    keys: Vec<Key>,
    op: BlockOp,
    deadline: Option<tokio::time::Instant>,
) {
    if cx.session.in_exec {
        cx.out.null_array();
        return;
    }
    let (tx, rx) = oneshot::channel();
    let db = cx.db();
    let id = cx.store.get().blocking.block(db, keys, op, tx);
    cx.store.get().blocking.set_owner(id, cx.session.id);
    cx.session.action = Action::Block(BlockWait {
        id,
        rx,
        deadline,
        kind: BlockKind::Pop,
    });
}

fn bzpop(cx: &mut Cx<'_, '_>, args: &Args<'_>, max: bool) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(args.len() - 1)) else {
        return;
    };
    let keys: Vec<Key> = args.from(1).take(args.len() - 2).map(Key::from).collect();
    match zpop_first(cx, &keys, max, None) {
        Ok(true) | Err(()) => {}
        Ok(false) => {
            let resp3 = cx.out.resp3;
            let op = BlockOp::ZPop {
                max,
                count: None,
                resp3,
            };
            block_on(cx, keys, op, deadline);
        }
    }
}

pub fn bzpopmin(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bzpop(cx, args, false);
}

pub fn bzpopmax(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    bzpop(cx, args, true);
}

pub fn bzmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(1)) else {
        return;
    };
    let Some((keys, max, count)) = mpop_args(cx, args, 2, ("min", "max")) else {
        return;
    };
    if let Ok(false) = zpop_first(cx, &keys, max, Some(count)) {
        let resp3 = cx.out.resp3;
        let op = BlockOp::ZPop {
            max,
            count: Some(count),
            resp3,
        };
        block_on(cx, keys, op, deadline);
    }
}

fn lmpop_first(cx: &mut Cx<'_, '_>, keys: &[Key], left: bool, count: usize) -> Result<bool, ()> {
    let db = cx.db();
    let store = cx.store.get();
    for key in keys {
        let d = store.db(db);
        let list = match d.list(key) {
            Ok(Some(l)) if !l.is_empty() => l,
            Ok(_) => continue,
            Err(_) => {
                cx.out.error(WRONGTYPE);
                return Err(());
            }
        };
        let n = count.min(list.len());
        cx.out.array(2);
        cx.out.bulk(key);
        cx.out.array(n);
        for _ in 0..n {
            if let Some(v) = if left {
                list.pop_front()
            } else {
                list.pop_back()
            } {
                cx.out.bulk(&v);
            }
        }
        d.remove_if_empty(key);
        store.touch_list(db, key, &[crate::engine::ListEdit::Pop { left, n }]);
        return Ok(true);
    }
    Ok(false)
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking command.
pub fn client_unblock(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() != 3 && args.len() != 4 {
        super::subcommand_arity(cx.out, "client|unblock");
        return;
    }
    let Some(id) = super::int_arg(cx.out, args.get(2)) else {
        return;
    };
    let error = if args.len() == 4 {
        if args.is(3, "timeout") {
            false
        } else if args.is(3, "error") {
            true
        } else {
            cx.out
                .error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    } else {
        false
    };
    let reply = if error {
        crate::engine::BlockedReply::Encoded(
            b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n".to_vec(),
        )
    } else {
        crate::engine::BlockedReply::TimedOut
    };
    let done = u64::try_from(id).is_ok_and(|id| cx.store.get().blocking.unblock_client(id, reply));
    cx.out.int(i64::from(done));
}

pub fn lmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some((keys, right, count)) = mpop_args(cx, args, 1, ("left", "right")) else {
        return;
    };
    if let Ok(false) = lmpop_first(cx, &keys, !right, count) {
        cx.out.null_array();
    }
}

pub fn blmpop(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(deadline) = super::lists::timeout_arg(cx, args.get(1)) else {
        return;
    };
    let Some((keys, right, count)) = mpop_args(cx, args, 2, ("left", "right")) else {
        return;
    };
    if let Ok(false) = lmpop_first(cx, &keys, !right, count) {
        let resp3 = cx.out.resp3;
        let op = BlockOp::LMPop {
            left: !right,
            count,
            resp3,
        };
        block_on(cx, keys, op, deadline);
    }
}
