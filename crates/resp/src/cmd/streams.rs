//! Stream commands: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD and XREADGROUP
//! (with BLOCK); the consumer-group commands are in `stream_groups.rs`.

use tokio::sync::oneshot;

use super::common::{typed, value_or};
use super::{Args, Cx, NO_KEY, SYNTAX, WRONGTYPE};
use crate::engine::stream::{AppendError, IdSpec, NodeLimits, Trim};
use crate::engine::stream_read::{GroupRead, deliver_history, deliver_new, write_range};
use crate::engine::{BlockOp, Key, Stream, StreamId, StreamWait, Value, WrongType, now_ms};
use crate::reply::{Aggregate, Out};
use crate::session::{Action, BlockKind, BlockWait};

pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

/// Parses `ms-seq`, `ms` (the sequence is then `missing_seq`), and unless `strict`, `-` and `+`.
pub fn parse_id(arg: &[u8], missing_seq: u64, strict: bool) -> Option<StreamId> {
    if arg.len() > 127 {
        return None;
    }
    match arg {
        b"-" if !strict => return Some(StreamId::MIN),
        b"+" if !strict => return Some(StreamId::MAX),
        b"-" | b"+" => return None,
        _ => {}
    }
    match memchr::memchr(b'-', arg) {
        Some(dash) => Some(StreamId::new(
            parse_u64(&arg[..dash])?,
            parse_u64(&arg[dash + 1..])?,
        )),
        None => Some(StreamId::new(parse_u64(arg)?, missing_seq)),
    }
}

/// Redis's string2ull: decimal digits only, no sign, no leading zeros (except "0").
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || (s.len() > 1 && s[0] == b'0') {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// An ID argument, or None after replying the error.
pub fn id_arg(out: &mut Out, arg: &[u8], missing_seq: u64, strict: bool) -> Option<StreamId> {
    let id = parse_id(arg, missing_seq, strict);
    if id.is_none() {
        out.error(INVALID_ID);
    }
    id
}

/// A range bound: `(id` is exclusive (and then `-`/`+` are invalid). Start bounds fill a
/// missing sequence with 0, end bounds with the maximum.
pub fn interval_arg(out: &mut Out, arg: &[u8], end: bool) -> Option<StreamId> {
    let missing = if end { u64::MAX } else { 0 };
    if arg.len() > 1 && arg[0] == b'(' {
        let id = id_arg(out, &arg[1..], missing, true)?;
        let moved = if end { id.prev() } else { id.next() };
        if moved.is_none() {
            out.error(if end {
                "ERR invalid end ID for the interval"
            } else {
                "ERR invalid start ID for the interval"
            });
        }
        moved
    } else {
        id_arg(out, arg, missing, false)
    }
}

/// Parses a non-negative-or-any i64 with Redis's error.
fn ll_arg(out: &mut Out, arg: &[u8]) -> Option<i64> {
    super::int_arg(out, arg)
}

/// The node limits from `stream-node-max-bytes` and `stream-node-max-entries`.
pub fn node_limits(cx: &Cx<'_, '_>) -> NodeLimits {
    let params = cx.shared.params.read();
    let read = |name: &str, default: usize| {
        params
            .get(name)
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(default)
    };
    NodeLimits {
        max_bytes: read("stream-node-max-bytes", 4096),
        max_entries: read("stream-node-max-entries", 100),
    }
}

/// The options of XADD and XTRIM.
struct TrimArgs {
    trim: Option<Trim>,
    approx: bool,
    limit: u64,
    nomkstream: bool,
    /// XADD: the ID and the position of the first field.
    id: IdSpec,
    fields_at: usize,
}

fn parse_trim_args(cx: &mut Cx<'_, '_>, args: &Args<'_>, xadd: bool) -> Option<TrimArgs> {
    let mut parsed = TrimArgs {
        trim: None,
        approx: false,
        limit: 0,
        nomkstream: false,
        id: IdSpec::Auto,
        fields_at: args.len(),
    };
    let mut limit_given = false;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args.get(i);
        if xadd && opt == b"*" {
            break;
        } else if (args.is(i, "maxlen") || args.is(i, "minid")) && more > 0 {
            if parsed.trim.is_some() {
                cx.out.error(
                    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
                );
                return None;
            }
            let maxlen = args.is(i, "maxlen");
            parsed.approx = false;
            let next = args.get(i + 1);
            if more >= 2 && next == b"~" {
                parsed.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let value = args.get(i + 1);
            parsed.trim = Some(if maxlen {
                let n = ll_arg(cx.out, value)?;
                if n < 0 {
                    cx.out.error("ERR The MAXLEN argument must be >= 0.");
                    return None;
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(id_arg(cx.out, value, 0, true)?)
            });
            i += 1;
        } else if args.is(i, "limit") && more > 0 {
            let n = ll_arg(cx.out, args.get(i + 1))?;
            if n < 0 {
                cx.out.error("ERR The LIMIT argument must be >= 0.");
                return None;
            }
            parsed.limit = n as u64;
            limit_given = true;
            i += 1;
        } else if xadd && args.is(i, "nomkstream") {
            parsed.nomkstream = true;
        } else if xadd {
            let id = match memchr::memrchr(b'-', opt) {
                Some(dash) if &opt[dash + 1..] == b"*" => parse_u64(&opt[..dash]).map(IdSpec::Ms),
                _ => parse_id(opt, 0, true).map(IdSpec::Exact),
            };
            let Some(id) = id else {
                cx.out.error(INVALID_ID);
                return None;
            };
            parsed.id = id;
            break;
        } else {
            cx.out.error(SYNTAX);
            return None;
        }
        i += 1;
    }
    parsed.fields_at = i + 1;
    if parsed.limit != 0 && parsed.trim.is_none() {
        cx.out
            .error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return None;
    }
    if !xadd && parsed.trim.is_none() {
        cx.out
            .error("ERR syntax error, XTRIM must be called with a trimming strategy");
        return None;
    }
    if limit_given {
        if !parsed.approx {
            cx.out
                .error("ERR syntax error, LIMIT cannot be used without the special ~ option");
            return None;
        }
    } else if parsed.approx {
        let per_node = node_limits(cx).max_entries as u64;
        parsed.limit = (100 * per_node).clamp(1, 1_000_000);
        if per_node == 0 {
            parsed.limit = 10_000;
        }
    }
    Some(parsed)
}

pub fn xadd(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(parsed) = parse_trim_args(cx, args, true) else {
        return;
    };
    let n = args.len().saturating_sub(parsed.fields_at);
    if n < 2 || n % 2 == 1 {
        cx.out
            .error("ERR wrong number of arguments for 'xadd' command");
        return;
    }
    if let IdSpec::Exact(id) = parsed.id
        && id.is_zero()
    {
        cx.out
            .error("ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    let limits = node_limits(cx);
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let d = store.db(db);
    let stream = if parsed.nomkstream {
        match d.stream(key) {
            Ok(Some(s)) => s,
            Ok(None) => {
                cx.out.null();
                return;
            }
            Err(WrongType) => {
                cx.out.error(WRONGTYPE);
                return;
            }
        }
    } else {
        let Some(s) = typed(cx.out, d.stream_or_new(key)) else {
            return;
        };
        s
    };
    if stream.last_id == StreamId::MAX {
        cx.out
            .error("ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    let mut pairs: Vec<(&[u8], &[u8])> = Vec::with_capacity(n / 2);
    let mut fields = args.from(parsed.fields_at);
    while let (Some(f), Some(v)) = (fields.next(), fields.next()) {
        pairs.push((f, v));
    }
    let now = u64::try_from(now_ms()).unwrap_or(0);
    match stream.append(parsed.id, &pairs, limits, now) {
        Ok(id) => {
            let mut text = Vec::with_capacity(24);
            id.write(&mut text);
            cx.out.bulk(&text);
        }
        Err(e) => {
            cx.out.error(match e {
                AppendError::NotGreater => {
                    "ERR The ID specified in XADD is equal or smaller than the target stream top item"
                }
                AppendError::SeqExhausted => "ERR Elements are too large to be stored",
            });
            // A stream created for an append that failed is not left behind.
            if stream.length == 0 && stream.entries_added == 0 && stream.groups.is_empty() {
                d.remove(key);
            }
            return;
        }
    }
    if let Some(trim) = parsed.trim {
        stream.trim(trim, parsed.approx, parsed.limit);
    }
    store.touch(db, key);
}

fn xrange_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, rev: bool) {
    let (start_arg, end_arg) = if rev {
        (args.get(3), args.get(2))
    } else {
        (args.get(2), args.get(3))
    };
    let Some(start) = interval_arg(cx.out, start_arg, false) else {
        return;
    };
    let Some(end) = interval_arg(cx.out, end_arg, true) else {
        return;
    };
    let mut count: i64 = -1;
    let mut i = 4;
    while i < args.len() {
        if args.is(i, "count") && i + 1 < args.len() {
            let Some(n) = ll_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            count = n.max(0);
            i += 2;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
    }
    let stream = value_or!(cx, stream, args.get(1), cx.out.array(0));
    if count == 0 {
        cx.out.null_array();
        return;
    }
    let count = usize::try_from(count).unwrap_or(0);
    write_range(cx.out, stream, start, end, count, rev);
}

pub fn xrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    xrange_generic(cx, args, false);
}

pub fn xrevrange(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    xrange_generic(cx, args, true);
}

pub fn xlen(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let stream = value_or!(cx, stream, args.get(1), cx.out.int(0));
    let n = stream.len();
    cx.out.int(i64::try_from(n).unwrap_or(i64::MAX));
}

pub fn xdel(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let stream = super::common::found_or!(cx.out, store.db(db).stream(key), cx.out.int(0));
    let mut ids = Vec::with_capacity(args.len() - 2);
    for arg in args.from(2) {
        let Some(id) = id_arg(cx.out, arg, 0, true) else {
            return;
        };
        ids.push(id);
    }
    let deleted = stream.delete_ids(&ids);
    if deleted > 0 {
        store.touch(db, key);
    }
    cx.out.int(i64::try_from(deleted).unwrap_or(0));
}

pub fn xtrim(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(parsed) = parse_trim_args(cx, args, false) else {
        return;
    };
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let stream = super::common::found_or!(cx.out, store.db(db).stream(key), cx.out.int(0));
    let deleted = match parsed.trim {
        Some(trim) => stream.trim(trim, parsed.approx, parsed.limit),
        None => 0,
    };
    if deleted > 0 {
        store.touch(db, key);
    }
    cx.out.int(i64::try_from(deleted).unwrap_or(0));
}

pub fn xsetid(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let Some(id) = id_arg(cx.out, args.get(2), 0, true) else {
        return;
    };
    let mut entries_added: i64 = -1;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if args.is(i, "entriesadded") && more > 0 {
            let Some(n) = ll_arg(cx.out, args.get(i + 1)) else {
                return;
            };
            if n < 0 {
                cx.out.error("ERR entries_added must be positive");
                return;
            }
            entries_added = n;
        } else if args.is(i, "maxdeletedid") && more > 0 {
            let Some(m) = id_arg(cx.out, args.get(i + 1), 0, true) else {
                return;
            };
            if id < m {
                cx.out.error(
                    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                );
                return;
            }
            max_deleted = m;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 2;
    }
    let db = cx.db();
    let key = args.get(1);
    let store = cx.store.get();
    let stream = super::common::found_or!(cx.out, store.db(db).stream(key), cx.out.error(NO_KEY));
    if stream.length > 0 {
        let top = stream.last_live_id().unwrap_or_default();
        if id < top {
            cx.out
                .error("ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if entries_added != -1 && stream.length > entries_added as u64 {
            cx.out.error(
                "ERR The entries_added specified in XSETID is smaller than the target stream length",
            );
            return;
        }
    }
    stream.last_id = id;
    if entries_added != -1 {
        stream.entries_added = entries_added as u64;
    }
    if !max_deleted.is_zero() {
        stream.max_deleted_id = max_deleted;
    }
    store.touch(db, key);
    cx.out.ok();
}

/// The ID of one stream in XREAD/XREADGROUP.
#[derive(Clone, Copy)]
enum ReadFrom {
    After(StreamId),
    /// `>`: entries never delivered to the group.
    New,
}

/// XREAD and XREADGROUP.
pub fn xread_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, group_read: bool) {
    let mut timeout: Option<i64> = None;
    let mut count: i64 = 0;
    let mut streams_at = 0;
    let mut group: Option<(&[u8], &[u8])> = None;
    let mut noack = false;
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if args.is(i, "block") && more > 0 {
            i += 1;
            let Some(ms) = crate::num::parse_i64(args.get(i)) else {
                cx.out
                    .error("ERR timeout is not an integer or out of range");
                return;
            };
            if ms < 0 {
                cx.out.error("ERR timeout is negative");
                return;
            }
            timeout = Some(ms);
        } else if args.is(i, "count") && more > 0 {
            i += 1;
            let Some(n) = ll_arg(cx.out, args.get(i)) else {
                return;
            };
            count = n.max(0);
        } else if args.is(i, "streams") && more > 0 {
            streams_at = i + 1;
            if !(args.len() - streams_at).is_multiple_of(2) {
                cx.out.error(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                );
                return;
            }
            break;
        } else if args.is(i, "group") && more >= 2 {
            if !group_read {
                cx.out.error(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return;
            }
            group = Some((args.get(i + 1), args.get(i + 2)));
            i += 2;
        } else if args.is(i, "noack") {
            if !group_read {
                cx.out.error(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                );
                return;
            }
            noack = true;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        i += 1;
    }
    if streams_at == 0 {
        cx.out.error(SYNTAX);
        return;
    }
    if group_read && group.is_none() {
        cx.out.error("ERR Missing GROUP option for XREADGROUP");
        return;
    }
    let n = (args.len() - streams_at) / 2;
    let keys: Vec<&[u8]> = args.from(streams_at).take(n).collect();
    let db = cx.db();
    let mut from = Vec::with_capacity(n);
    for (k, key) in keys.iter().enumerate() {
        let arg = args.get(streams_at + n + k);
        let d = cx.store.get().db(db);
        let stream = match d.stream(key) {
            Ok(s) => s,
            Err(WrongType) => {
                cx.out.error(WRONGTYPE);
                return;
            }
        };
        if let Some((g, _)) = group
            && !stream.as_ref().is_some_and(|s| s.groups.contains_key(g))
        {
            cx.out.error(&format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(g)
            ));
            return;
        }
        if arg == b"$" {
            if group_read {
                cx.out.error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.");
                return;
            }
            from.push(ReadFrom::After(stream.map_or(StreamId::MIN, |s| s.last_id)));
        } else if arg == b">" {
            if !group_read {
                cx.out.error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
                return;
            }
            from.push(ReadFrom::New);
        } else {
            let Some(id) = id_arg(cx.out, arg, 0, true) else {
                return;
            };
            from.push(ReadFrom::After(id));
        }
    }
    let count = usize::try_from(count).unwrap_or(0);
    let now = now_ms();
    let resp3 = cx.out.resp3;
    let deferred = cx.out.begin_deferred(if resp3 {
        Aggregate::Map
    } else {
        Aggregate::Array
    });
    let mut served = 0;
    let store = cx.store.get();
    for (k, key) in keys.iter().enumerate() {
        let Ok(Some(stream)) = store.db(db).stream(key) else {
            continue;
        };
        let serve = match (from[k], group) {
            (ReadFrom::After(_), Some(_)) => true,
            (ReadFrom::New, Some((g, _))) => {
                let last = stream.groups.get(g).map_or(StreamId::MAX, |g| g.last_id);
                stream.last_live_id().is_some_and(|m| m > last)
            }
            (ReadFrom::After(gt), None) => stream.last_live_id().is_some_and(|m| m > gt),
            (ReadFrom::New, None) => false,
        };
        if !serve {
            continue;
        }
        served += 1;
        if !resp3 {
            cx.out.array(2);
        }
        cx.out.bulk(key);
        match group {
            Some((g, consumer)) => {
                if let Some(grp) = stream.groups.get_mut(g) {
                    grp.touch_consumer(consumer, now);
                }
                let read = GroupRead {
                    group: g,
                    consumer,
                    noack,
                    count,
                    now,
                };
                match from[k] {
                    ReadFrom::After(id) => match id.next() {
                        Some(start) => {
                            deliver_history(cx.out, stream, start, read);
                        }
                        None => cx.out.array(0),
                    },
                    ReadFrom::New => {
                        let last = stream.groups.get(g).map_or(StreamId::MAX, |g| g.last_id);
                        deliver_new(cx.out, stream, last, read);
                    }
                }
                store.changed_unwatched(db, key, 1);
            }
            None => {
                if let ReadFrom::After(gt) = from[k]
                    && let Some(start) = gt.next()
                {
                    write_range(cx.out, stream, start, StreamId::MAX, count, false);
                } else {
                    cx.out.array(0);
                }
            }
        }
    }
    if served > 0 {
        cx.out.end_deferred(deferred, served);
        return;
    }
    // Nothing was written after the deferred header: nothing to remove.
    let Some(ms) = timeout else {
        cx.out.null_array();
        return;
    };
    if cx.session.in_exec {
        cx.out.null_array();
        return;
    }
    let ids = from
        .iter()
        .map(|f| match f {
            ReadFrom::After(id) => *id,
            ReadFrom::New => StreamId::MAX,
        })
        .collect();
    let wait = StreamWait {
        ids,
        count: if count == 0 { 1000 } else { count },
        group: group.map(|(g, c)| (Key::from(g), Key::from(c), noack)),
        resp3,
    };
    let deadline = if ms == 0 {
        None
    } else {
        tokio::time::Instant::now().checked_add(std::time::Duration::from_millis(ms as u64))
    };
    let (tx, rx) = oneshot::channel();
    let keys: Vec<Key> = keys.into_iter().map(Key::from).collect();
    let id = cx
        .store
        .get()
        .blocking
        .block(db, keys, BlockOp::Stream(Box::new(wait)), tx);
    cx.store.get().blocking.set_owner(id, cx.session.id);
    cx.session.action = Action::Block(BlockWait {
        id,
        rx,
        deadline,
        kind: BlockKind::Pop,
    });
}

pub fn xread(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    xread_generic(cx, args, false);
}

pub fn xreadgroup(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    xread_generic(cx, args, true);
}

/// The stream at `key` for a command that needs it to exist, with Redis's errors.
pub fn existing_stream<'s>(
    out: &mut Out,
    store: &'s mut crate::engine::Store,
    db: usize,
    key: &[u8],
    missing: &str,
) -> Option<&'s mut Stream> {
    match store.db(db).get(key).map(|e| &mut e.value) {
        Some(Value::Stream(s)) => Some(s),
        Some(_) => {
            out.error(WRONGTYPE);
            None
        }
        None => {
            out.error(missing);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_parse_as_redis_does() {
        assert_eq!(parse_id(b"1-2", 0, true), Some(StreamId::new(1, 2)));
        assert_eq!(parse_id(b"5", 7, true), Some(StreamId::new(5, 7)));
        assert_eq!(parse_id(b"-", 0, false), Some(StreamId::MIN));
        assert_eq!(parse_id(b"+", 0, false), Some(StreamId::MAX));
        assert_eq!(parse_id(b"+", 0, true), None);
        assert_eq!(
            parse_id(b"18446744073709551615-18446744073709551615", 0, true),
            Some(StreamId::MAX)
        );
        for bad in [
            &b""[..],
            b"1-",
            b"-1",
            b"01",
            b"1-2-3",
            b"x",
            b"18446744073709551616",
        ] {
            assert_eq!(
                parse_id(bad, 0, true),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_round_trips(bytes in prop::collection::vec(any::<u8>(), 0..40), ms: u64, seq: u64) {
            let _ = parse_id(&bytes, 0, false);
            let id = StreamId::new(ms, seq);
            prop_assert_eq!(parse_id(&id.to_bytes(), 0, true), Some(id));
        }
    }
}
