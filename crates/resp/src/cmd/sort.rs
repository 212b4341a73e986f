//! SORT and SORT_RO: lists, sets and sorted sets sorted numerically or by bytes (ALPHA), BY and
//! GET patterns (`*` replaced by the element, `->field` reading a hash field), LIMIT, STORE.

use std::cmp::Ordering;

use super::{Args, Cx, SYNTAX, WRONGTYPE};
use crate::engine::{Db, Key, Value};

/// What a BY or GET pattern finds for `element`: `#` is the element itself.
fn lookup_pattern(d: &mut Db, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    if pattern == b"#" {
        return Some(element.to_vec());
    }
    let star = memchr::memchr(b'*', pattern)?;
    let after = &pattern[star + 1..];
    let (postfix, field) = match memchr::memmem::find(after, b"->") {
        Some(arrow) if arrow + 2 < after.len() => (&after[..arrow], Some(&after[arrow + 2..])),
        _ => (after, None),
    };
    let mut key = Vec::with_capacity(star + element.len() + postfix.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(postfix);
    match (d.get(&key).map(|e| &e.value), field) {
        (Some(Value::Str(s)), None) => Some(s.to_vec()),
        (Some(Value::Hash(h)), Some(f)) => h.get(f).map(|v| v.to_vec()),
        _ => None,
    }
}

/// A sort weight as strtod reads it (leading spaces allowed, nothing after, no NaN).
fn parse_weight(bytes: &[u8]) -> Option<f64> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let text = &bytes[start..];
    if text.is_empty() {
        return Some(0.0);
    }
    crate::num::parse_f64(text)
}

struct Item {
    element: Key,
    score: f64,
    by: Option<Vec<u8>>,
}

fn sort_generic(cx: &mut Cx<'_, '_>, args: &Args<'_>, read_only: bool) {
    let (mut desc, mut alpha) = (false, false);
    let (mut limit_start, mut limit_count) = (0i64, -1i64);
    let mut store: Option<&[u8]> = None;
    let mut by: Option<&[u8]> = None;
    let mut dont_sort = false;
    let mut gets: Vec<&[u8]> = Vec::new();
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        if args.is(j, "asc") {
            desc = false;
        } else if args.is(j, "desc") {
            desc = true;
        } else if args.is(j, "alpha") {
            alpha = true;
        } else if args.is(j, "limit") && left >= 2 {
            let Some(a) = super::int_arg(cx.out, args.get(j + 1)) else {
                return;
            };
            let Some(b) = super::int_arg(cx.out, args.get(j + 2)) else {
                return;
            };
            limit_start = a;
            limit_count = b;
            j += 2;
        } else if !read_only && args.is(j, "store") && left >= 1 {
            store = Some(args.get(j + 1));
            j += 1;
        } else if args.is(j, "by") && left >= 1 {
            let pattern = args.get(j + 1);
            by = Some(pattern);
            dont_sort = memchr::memchr(b'*', pattern).is_none();
            // A real pattern reads keys the command does not name: it needs read access to all.
            if !dont_sort && !super::acl::reads_every_key(cx, args) {
                cx.out
                    .error("ERR BY option of SORT denied due to insufficient ACL permissions.");
                return;
            }
            j += 1;
        } else if args.is(j, "get") && left >= 1 {
            if !super::acl::reads_every_key(cx, args) {
                cx.out
                    .error("ERR GET option of SORT denied due to insufficient ACL permissions.");
                return;
            }
            gets.push(args.get(j + 1));
            j += 1;
        } else {
            cx.out.error(SYNTAX);
            return;
        }
        j += 1;
    }
    let db = cx.db();
    let store_slot = cx.store.get();
    let d = store_slot.db(db);
    let key = args.get(1);
    enum Kind {
        List,
        Set,
        ZSet,
    }
    let (kind, mut elements): (Kind, Vec<Key>) = match d.get(key).map(|e| &e.value) {
        None => (Kind::List, Vec::new()),
        Some(Value::List(l)) => (Kind::List, l.iter().cloned().collect()),
        Some(Value::Set(s)) => (Kind::Set, s.iter().cloned().collect()),
        Some(Value::ZSet(z)) => (Kind::ZSet, z.iter().map(|(m, _)| Key::from(m)).collect()),
        Some(_) => {
            cx.out.error(WRONGTYPE);
            return;
        }
    };
    if dont_sort && matches!(kind, Kind::Set) && (store.is_some() || cx.session.script_client) {
        // A set has no order of its own: sorting makes a stored result (or what a script
        // sees) deterministic, as Redis does.
        dont_sort = false;
        alpha = true;
        by = None;
    }
    let len = elements.len() as i64;
    let start = limit_start.max(0).min(len);
    let count = limit_count.max(-1).min(len);
    let (mut start, mut end) = (
        start,
        if count < 0 {
            len - 1
        } else {
            start + count - 1
        },
    );
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    if end >= len {
        end = len - 1;
    }
    if dont_sort {
        if desc && !matches!(kind, Kind::Set) {
            elements.reverse();
        }
    } else {
        let mut items: Vec<Item> = elements
            .drain(..)
            .map(|element| Item {
                element,
                score: 0.0,
                by: None,
            })
            .collect();
        let mut conversion_error = false;
        for item in &mut items {
            let weight = match by {
                Some(pattern) => match lookup_pattern(d, pattern, &item.element) {
                    Some(v) => v,
                    None => continue,
                },
                None => item.element.to_vec(),
            };
            if alpha {
                if by.is_some() {
                    item.by = Some(weight);
                }
            } else {
                match parse_weight(&weight) {
                    Some(s) => item.score = s,
                    None => conversion_error = true,
                }
            }
        }
        if conversion_error {
            cx.out
                .error("ERR One or more scores can't be converted into double");
            return;
        }
        let by_pattern = by.is_some();
        items.sort_by(|a, b| {
            let cmp = if !alpha {
                a.score
                    .partial_cmp(&b.score)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| a.element.cmp(&b.element))
            } else if by_pattern {
                match (&a.by, &b.by) {
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                    (Some(x), Some(y)) => x.cmp(y),
                }
            } else {
                a.element.cmp(&b.element)
            };
            if desc { cmp.reverse() } else { cmp }
        });
        elements = items.into_iter().map(|i| i.element).collect();
    }
    let window: &[Key] = if end >= start && start >= 0 {
        &elements[start as usize..=end as usize]
    } else {
        &[]
    };
    let per = gets.len().max(1);
    let output_len = window.len() * per;
    match store {
        None => {
            cx.out.array(output_len);
            for element in window {
                if gets.is_empty() {
                    cx.out.bulk(element);
                }
                for pattern in &gets {
                    match lookup_pattern(d, pattern, element) {
                        Some(v) => cx.out.bulk(&v),
                        None => cx.out.null(),
                    }
                }
            }
        }
        Some(dest) => {
            let mut list = std::collections::VecDeque::with_capacity(output_len);
            for element in window {
                if gets.is_empty() {
                    list.push_back(element.clone());
                }
                for pattern in &gets {
                    let v = lookup_pattern(d, pattern, element).unwrap_or_default();
                    list.push_back(Key::from(v));
                }
            }
            if output_len > 0 {
                d.set(dest, Value::List(Box::new(list)));
                store_slot.touch(db, dest);
                store_slot.list_pushed(db, dest);
            } else if d.remove(dest).is_some() {
                store_slot.touch(db, dest);
            }
            cx.out.int(output_len as i64);
        }
    }
}

pub fn sort(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    sort_generic(cx, args, false);
}

pub fn sort_ro(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    sort_generic(cx, args, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_like_strtod() {
        assert_eq!(parse_weight(b" 1.5"), Some(1.5));
        assert_eq!(parse_weight(b""), Some(0.0));
        assert_eq!(parse_weight(b"1x"), None);
        assert_eq!(parse_weight(b"nan"), None);
    }

    #[test]
    fn patterns_read_strings_and_hash_fields() {
        let mut d = Db::default();
        d.set(b"w_a", Value::Str(b"3".into()));
        let mut h = crate::engine::Hash::default();
        h.insert(Key::from(&b"f"[..]), Key::from(&b"9"[..]));
        d.set(b"h_a", Value::Hash(Box::new(h)));
        assert_eq!(lookup_pattern(&mut d, b"w_*", b"a"), Some(b"3".to_vec()));
        assert_eq!(lookup_pattern(&mut d, b"h_*->f", b"a"), Some(b"9".to_vec()));
        assert_eq!(lookup_pattern(&mut d, b"h_*->", b"a"), None);
        assert_eq!(lookup_pattern(&mut d, b"#", b"a"), Some(b"a".to_vec()));
        assert_eq!(lookup_pattern(&mut d, b"nostar", b"a"), None);
    }
}
