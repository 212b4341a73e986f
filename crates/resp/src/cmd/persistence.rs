//! SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE and INFO persistence, answered by the persistence sink.

use std::fmt::Write as _;

use super::{Args, Cx};

const NO_SINK: &str =
    "ERR this server keeps its data in memory only ([resp] store = \"memory\"); nothing to save";

/// SAVE: flushes every change to the sink and answers once it is committed.
pub fn save(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    if cx.shared.durability.is_none() {
        cx.out.error(NO_SINK);
        return;
    }
    // The connection waits for this generation before it sends the reply (see conn.rs).
    let generation = cx.store.get().generation();
    cx.session.save_waits = Some(generation);
    cx.out.ok();
}

/// BGSAVE [SCHEDULE]: asks for a flush now and answers at once.
pub fn bgsave(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if args.len() > 2 || (args.len() == 2 && !args.is(1, "schedule")) {
        cx.out.error(super::SYNTAX);
        return;
    }
    match &cx.shared.durability {
        Some(durability) => {
            durability.wake_writer(true);
            cx.out.simple("Background saving started");
        }
        None => cx.out.error(NO_SINK),
    }
}

/// BGREWRITEAOF: the tables are always compact (one row per element), so this is a flush.
pub fn bgrewriteaof(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    match &cx.shared.durability {
        Some(durability) => {
            durability.wake_writer(true);
            cx.out
                .simple("Background append only file rewriting started");
        }
        None => cx.out.error(NO_SINK),
    }
}

/// LASTSAVE: the Unix time of the last commit to the sink (the start time without one).
pub fn lastsave(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let secs = match &cx.shared.durability {
        Some(durability) => durability.last_save_unix(),
        None => {
            let started = std::time::SystemTime::now() - cx.shared.started.elapsed();
            started
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        }
    };
    cx.out.int(secs);
}

/// The `# Persistence` section of INFO.
pub fn info_section(cx: &mut Cx<'_, '_>, text: &mut String) {
    let (changes, queued) = {
        let store = cx.store.get();
        (store.dirty, store.dirty_len())
    };
    let Some(durability) = &cx.shared.durability else {
        let _ = write!(
            text,
            "# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_changes_since_last_save:{changes}\r\n\
             rdb_bgsave_in_progress:0\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\n\
             sluice_store:memory\r\n\r\n"
        );
        return;
    };
    let (last, commits, keys, rows) = durability.stats();
    let failure = durability.failure();
    let status = if failure.is_some() { "err" } else { "ok" };
    let _ = write!(
        text,
        "# Persistence\r\nloading:0\r\nasync_loading:0\r\nrdb_changes_since_last_save:{queued}\r\n\
         rdb_bgsave_in_progress:0\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{status}\r\n\
         aof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_last_write_status:{status}\r\n\
         aof_delayed_fsync:{}\r\n\
         sluice_store:{}\r\nsluice_appendfsync:{}\r\nsluice_queue_keys:{queued}\r\n\
         sluice_commits:{commits}\r\nsluice_keys_written:{keys}\r\nsluice_rows_written:{rows}\r\n\
         sluice_last_commit_lsn:{}\r\nsluice_last_commit_keys:{}\r\nsluice_last_commit_rows:{}\r\n\
         sluice_last_commit_usec:{}\r\nsluice_last_error:{}\r\n\r\n",
        durability.last_save_unix(),
        durability.delayed_writes(),
        cx.shared.sink,
        durability.policy().name(),
        last.lsn,
        last.keys,
        last.rows,
        last.micros,
        failure.unwrap_or_default().replace(['\r', '\n'], " "),
    );
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: stops the gate, and with it `sluice serve`
/// (as SIGTERM does). The store's last changes are committed on the way out whatever the
/// flags, as Redis fsyncs its AOF at shutdown even with NOSAVE. The client gets no reply: its
/// connection closes, which is what Redis clients take as success.
pub fn shutdown(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    let (mut save, mut nosave, mut abort, mut other) = (false, false, false, false);
    for i in 1..args.len() {
        if args.is(i, "save") {
            save = true;
        } else if args.is(i, "nosave") {
            nosave = true;
        } else if args.is(i, "abort") {
            abort = true;
        } else if args.is(i, "now") || args.is(i, "force") {
            other = true;
        } else {
            cx.out.error(super::SYNTAX);
            return;
        }
    }
    if (save && nosave) || (abort && (save || nosave || other)) {
        cx.out.error(super::SYNTAX);
        return;
    }
    if abort {
        // A shutdown here never waits (no replicas to catch up), so none is ever in progress.
        cx.out.error("ERR No shutdown in progress.");
        return;
    }
    cx.shared.shutdown.notify_one();
    cx.session.action = crate::session::Action::Close;
}
