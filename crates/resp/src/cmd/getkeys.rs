//! COMMAND GETKEYS: the key arguments of a command, from the table's key positions or, for
//! commands whose keys move (SORT, XREAD, ZUNION, LMPOP ...), from their own syntax.

use super::{Args, Cx, lookup};

/// Positions of the keys in `argv` (the command name at 0), or an error text.
pub(crate) fn key_positions(argv: &[&[u8]]) -> Result<Vec<usize>, &'static str> {
    let name = argv[0].to_ascii_lowercase();
    let Some(cmd) = lookup(&name) else {
        return Err("ERR Invalid command specified");
    };
    let argc = argv.len() as i64;
    let arity = i64::from(cmd.arity);
    if (arity > 0 && argc != arity) || argc < -arity {
        return Err("ERR Invalid number of arguments specified for command");
    }
    let is = |i: usize, word: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()))
    };
    let numkeys_at = |at: usize| -> Vec<usize> {
        let n = argv
            .get(at)
            .and_then(|a| crate::num::parse_i64(a))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        (at + 1..(at + 1 + n).min(argv.len())).collect()
    };
    let keys = match cmd.name {
        "sort" | "sort_ro" => {
            let mut keys = vec![1];
            // The last STORE wins, as Redis's sortGetKeys reads it.
            let mut store = None;
            let mut i = 2;
            while i < argv.len() {
                let skip = if is(i, "limit") {
                    2
                } else if is(i, "get") || is(i, "by") {
                    1
                } else if is(i, "store") && cmd.name == "sort" {
                    store = Some(i + 1);
                    1
                } else {
                    0
                };
                i += 1 + skip;
            }
            keys.extend(store.filter(|&s| s < argv.len()));
            keys
        }
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => numkeys_at(2),
        "xread" | "xreadgroup" => {
            let at = (1..argv.len()).find(|&i| is(i, "streams"));
            match at {
                Some(at) => {
                    let n = (argv.len() - at - 1) / 2;
                    (at + 1..at + 1 + n).collect()
                }
                None => Vec::new(),
            }
        }
        "zunion" | "zinter" | "zdiff" | "zintercard" | "zmpop" | "lmpop" | "sintercard" => {
            numkeys_at(1)
        }
        "bzmpop" | "blmpop" => numkeys_at(2),
        "zunionstore" | "zinterstore" | "zdiffstore" => {
            let mut keys = vec![1];
            keys.extend(numkeys_at(2));
            keys
        }
        _ => {
            if cmd.first_key == 0 {
                Vec::new()
            } else {
                let first = cmd.first_key as i64;
                let last = if cmd.last_key < 0 {
                    argc + i64::from(cmd.last_key)
                } else {
                    i64::from(cmd.last_key)
                };
                let step = i64::from(cmd.step.max(1));
                (first..=last.min(argc - 1))
                    .step_by(step as usize)
                    .map(|i| i as usize)
                    .collect()
            }
        }
    };
    if keys.is_empty() {
        return Err("ERR The command has no key arguments");
    }
    Ok(keys)
}

/// COMMAND GETKEYS command arg ...
pub fn getkeys(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() < 4 {
        super::subcommand_arity(cx.out, "command|getkeys");
        return;
    }
    let argv: Vec<&[u8]> = args.from(2).collect();
    match key_positions(&argv) {
        Ok(keys) => {
            cx.out.array(keys.len());
            for k in keys {
                cx.out.bulk(argv[k]);
            }
        }
        Err(msg) => cx.out.error(msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(cmd: &str) -> Result<Vec<String>, &'static str> {
        let argv: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
        key_positions(&argv).map(|p| {
            p.into_iter()
                .map(|i| String::from_utf8_lossy(argv[i]).into_owned())
                .collect()
        })
    }

    #[test]
    fn movable_keys() {
        assert_eq!(
            keys("sort abc store invalid store stillbad store def").unwrap(),
            ["abc", "def"]
        );
        assert_eq!(keys("sort_ro abc").unwrap(), ["abc"]);
        assert_eq!(keys("xread count 1 streams a b 0 0").unwrap(), ["a", "b"]);
        assert_eq!(
            keys("zunionstore d 2 a b weights 1 2").unwrap(),
            ["d", "a", "b"]
        );
        assert_eq!(keys("mset a 1 b 2").unwrap(), ["a", "b"]);
        assert!(keys("nosuch a").is_err());
        assert!(keys("ping").is_err());
    }
}
