//! COMMAND GETKEYS and GETKEYSANDFLAGS: the key arguments of a call, found with the command's
//! key specs (`command_info`), or with its own rule where Redis uses one (SORT, SET, BITFIELD).

use super::command_info::key_refs;
use super::{Args, Cx};

/// Positions of the keys in `argv` (the command name at 0), or an error text.
pub(crate) fn key_positions(argv: &[&[u8]]) -> Result<Vec<usize>, &'static str> {
    key_refs(argv).map(|refs| refs.into_iter().map(|(i, _)| i).collect())
}

/// COMMAND GETKEYS command arg ... and, `with_flags`, COMMAND GETKEYSANDFLAGS.
pub fn getkeys(cx: &mut Cx<'_, '_>, args: &Args<'_>, with_flags: bool) {
    if args.len() < 4 {
        let name = if with_flags {
            "command|getkeysandflags"
        } else {
            "command|getkeys"
        };
        super::subcommand_arity(cx.out, name);
        return;
    }
    let argv: Vec<&[u8]> = args.from(2).collect();
    match key_refs(&argv) {
        Ok(keys) => {
            cx.out.array(keys.len());
            for (i, flags) in keys {
                if with_flags {
                    cx.out.array(2);
                    cx.out.bulk(argv[i]);
                    cx.out.set(flags.len());
                    for flag in flags {
                        cx.out.simple(flag);
                    }
                } else {
                    cx.out.bulk(argv[i]);
                }
            }
        }
        Err(msg) => cx.out.error(msg),
    }
}
