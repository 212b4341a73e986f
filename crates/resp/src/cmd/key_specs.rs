//! Where a call's keys are: Redis's key-spec search, and the key finders of MIGRATE and BITFIELD,
//! shared by ACL key checks and COMMAND GETKEYS.

use std::ops::Range;

use super::command_info::{Begin, Find};

/// A call's arguments by position (the command name at 0): the count and an accessor, so that
/// a parsed request and a vector of slices are read alike.
#[derive(Clone, Copy)]
pub(crate) struct Argv<'x, F: Fn(usize) -> &'x [u8]> {
    pub count: usize,
    pub arg: F,
}

impl<'x, F: Fn(usize) -> &'x [u8]> Argv<'x, F> {
    fn get(&self, i: usize) -> &'x [u8] {
        (self.arg)(i)
    }
}

/// The arguments of a call held as a slice of slices (an argument past the end reads empty).
pub(crate) fn slice_argv<'x>(line: &'x [&'x [u8]]) -> Argv<'x, impl Fn(usize) -> &'x [u8]> {
    Argv {
        count: line.len(),
        arg: move |i| line.get(i).copied().unwrap_or(&[]),
    }
}

/// The keys a call's key specs give, as Redis's getKeysUsingKeySpecs finds them: each key's
/// position and the index of the spec that found it. `of` gives a spec's search and whether it
/// is incomplete, or None to pass it by (a spec of non-key arguments). None when a spec cannot
/// say (unknown, a key count that is not a count, keys past the arguments, or none at all) or may
/// miss keys (incomplete): the command's own key finder decides then.
pub(crate) fn spec_positions<'x, S>(
    specs: &[S],
    of: impl Fn(&S) -> Option<(Begin, Find, bool)>,
    argv: Argv<'x, impl Fn(usize) -> &'x [u8]>,
) -> Option<Vec<(usize, usize)>> {
    let argc = argv.count as i64;
    let mut keys = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let Some((begin, find, incomplete)) = of(spec) else {
            continue;
        };
        let first = match begin {
            Begin::Index(pos) => i64::from(pos),
            Begin::Keyword(word, from) => {
                let from = i64::from(from);
                let start = if from > 0 { from } else { argc + from };
                let is_word = |i: &i64| argv.get(*i as usize).eq_ignore_ascii_case(word.as_bytes());
                // As Redis searches: never the last argument forwards, nor the first backwards.
                let found = if from > 0 {
                    (start..argc - 1).find(is_word)
                } else {
                    (2..=start).rev().take_while(|i| *i < argc).find(is_word)
                };
                match found {
                    Some(i) => i + 1,
                    // No keyword, no keys of this spec.
                    None => continue,
                }
            }
            Begin::Unknown => return None,
        };
        let (first, last, step) = match find {
            Find::Range { last, step, limit } => {
                let last = i64::from(last);
                let end = if last >= 0 {
                    first + last
                } else if limit == 0 {
                    argc + last
                } else {
                    first + ((argc - first) / i64::from(limit) + last)
                };
                (first, end, i64::from(step.max(1)))
            }
            Find::Keynum {
                index: at,
                first: offset,
                step,
            } => {
                let at = usize::try_from(first + i64::from(at))
                    .ok()
                    .filter(|at| *at < argv.count)?;
                let count = crate::num::parse_i64(argv.get(at)).filter(|n| *n >= 0)?;
                let start = first + i64::from(offset);
                (start, start + count - 1, i64::from(step.max(1)))
            }
            Find::Unknown => return None,
        };
        // Out of bounds, or no key: a syntax error the command reports.
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let mut pos = first;
        while pos <= last {
            keys.push((pos as usize, index));
            pos += step;
        }
        if incomplete {
            return None;
        }
    }
    Some(keys)
}

/// MIGRATE's keys, as Redis's migrateGetKeys finds them: the key argument, or with KEYS (past
/// AUTH's and AUTH2's passwords) the arguments after it, and none when both are given.
pub(crate) fn migrate_positions<'x>(argv: Argv<'x, impl Fn(usize) -> &'x [u8]>) -> Range<usize> {
    let n = argv.count;
    let mut i = 6;
    while i < n {
        let arg = argv.get(i);
        if arg.eq_ignore_ascii_case(b"auth") {
            i += 1;
        } else if arg.eq_ignore_ascii_case(b"auth2") {
            i += 2;
        } else if arg.eq_ignore_ascii_case(b"keys") {
            if !argv.get(3).is_empty() {
                return 0..0;
            }
            return i + 1..n;
        }
        i += 1;
    }
    3..4.min(n)
}

/// Whether a BITFIELD call may write (Redis's bitfieldGetKeys): it only reads when every
/// operation is a GET or OVERFLOW with its arguments.
pub(crate) fn bitfield_writes<'x>(argv: Argv<'x, impl Fn(usize) -> &'x [u8]>) -> bool {
    let mut i = 2;
    while i < argv.count {
        let more = argv.count - i - 1;
        let op = argv.get(i);
        if op.eq_ignore_ascii_case(b"get") && more >= 2 {
            i += 3;
        } else if op.eq_ignore_ascii_case(b"overflow") && more >= 1 {
            i += 2;
        } else {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(specs: &[(Begin, Find, bool)], line: &str) -> Option<Vec<(usize, usize)>> {
        let line: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        spec_positions(specs, |s| Some(*s), slice_argv(&line))
    }

    const ONE: Find = Find::Range {
        last: 0,
        step: 1,
        limit: 0,
    };

    #[test]
    fn a_keyword_is_searched_as_redis_does() {
        let after_store = [(Begin::Keyword("store", 2), ONE, false)];
        assert_eq!(
            positions(&after_store, "sort k store d"),
            Some(vec![(3, 0)])
        );
        // Never the last argument forwards: no keyword, no keys of this spec.
        assert_eq!(positions(&after_store, "sort k d store"), Some(vec![]));
        let backwards = [(Begin::Keyword("streams", -2), ONE, false)];
        assert_eq!(
            positions(&backwards, "xread count 1 streams s 0"),
            Some(vec![(4, 0)])
        );
        // Backwards from the end, but never the command's first argument.
        assert_eq!(positions(&backwards, "xread streams s"), Some(vec![]));
        // Redis's search from 0 starts past the last argument and finds nothing.
        let from_zero = [(Begin::Keyword("k", 0), ONE, false)];
        assert_eq!(positions(&from_zero, "cmd k a b"), Some(vec![]));
    }

    #[test]
    fn a_key_count_that_does_not_fit_leaves_it_to_the_command() {
        let counted = [(
            Begin::Index(2),
            Find::Keynum {
                index: 0,
                first: 1,
                step: 1,
            },
            false,
        )];
        assert_eq!(
            positions(&counted, "eval s 2 a b x"),
            Some(vec![(3, 0), (4, 0)])
        );
        assert_eq!(positions(&counted, "eval s 0"), None, "no key");
        assert_eq!(positions(&counted, "eval s 3 a b"), None, "past the end");
        assert_eq!(positions(&counted, "eval s -1 a"), None, "negative");
        assert_eq!(positions(&counted, "eval s x a"), None, "not a number");
    }

    #[test]
    fn an_incomplete_or_unknown_spec_leaves_it_to_the_command() {
        let incomplete = [(Begin::Index(1), ONE, true)];
        assert_eq!(positions(&incomplete, "cmd k"), None);
        let unknown = [(Begin::Unknown, ONE, false)];
        assert_eq!(positions(&unknown, "cmd k"), None);
        let ranges = [
            (Begin::Index(1), ONE, false),
            (
                Begin::Index(2),
                Find::Range {
                    last: -1,
                    step: 2,
                    limit: 0,
                },
                false,
            ),
        ];
        assert_eq!(
            positions(&ranges, "cmd k a 1 b 2"),
            Some(vec![(1, 0), (2, 1), (4, 1)])
        );
    }

    #[test]
    fn migrate_and_bitfield_as_their_key_finders_read_them() {
        let keys = |line: &str| {
            let line: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
            migrate_positions(slice_argv(&line))
        };
        assert_eq!(keys("migrate h 1 k 0 10"), 3..4);
        assert_eq!(keys("migrate h 1  0 10 auth keys keys a b"), 9..11);
        assert_eq!(keys("migrate h 1  0 10 auth2 u keys keys a"), 10..11);
        assert_eq!(keys("migrate h 1 k 0 10 keys a b"), 0..0, "both is none");
        let writes = |line: &str| {
            let line: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
            bitfield_writes(slice_argv(&line))
        };
        assert!(!writes("bitfield k get u8 0 overflow sat get i4 8"));
        assert!(writes("bitfield k get u8 0 incrby u8 0 1"));
        assert!(writes("bitfield k get u8"), "a syntax error may write");
    }
}
