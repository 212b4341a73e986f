//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

use std::sync::atomic::Ordering;

use super::{Args, Command, Cx, run};
use crate::session::{Multi, Queued};

pub fn multi(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    if cx.session.multi.is_some() {
        cx.out.error("ERR MULTI calls can not be nested");
        return;
    }
    cx.session.multi = Some(Multi::default());
    cx.session.info.multi.store(0, Ordering::Relaxed);
    cx.out.ok();
}

/// Queues a command between MULTI and EXEC, copying its arguments.
pub fn queue(cx: &mut Cx<'_, '_>, cmd: &'static Command, args: &Args<'_>) {
    let (data, spans) = args.to_owned_parts();
    if let Some(multi) = cx.session.multi.as_mut() {
        multi.queued.push(Queued { cmd, data, spans });
        cx.session
            .info
            .multi
            .store(multi.queued.len() as i64, Ordering::Relaxed);
    }
    cx.out.simple("QUEUED");
}

pub fn exec(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    let Some(multi) = cx.session.multi.take() else {
        cx.out.error("ERR EXEC without MULTI");
        return;
    };
    cx.session.info.multi.store(-1, Ordering::Relaxed);
    if multi.error {
        unwatch_all(cx);
        cx.out
            .error("EXECABORT Transaction discarded because of previous errors.");
        return;
    }
    // Take the store lock before reading the WATCH flag so no write can slip in between.
    let store = cx.store.get();
    // A watched key that had a TTL and is gone now expired in between: Redis fails EXEC too.
    let expired = cx
        .session
        .watched_volatile
        .iter()
        .any(|(d, k)| !store.db(*d).contains(k));
    if expired || cx.session.watch_flag.load(Ordering::Acquire) {
        unwatch_all(cx);
        cx.out.null_array();
        return;
    }
    cx.out.array(multi.queued.len());
    cx.session.in_exec = true;
    for q in &multi.queued {
        let args = Args::new(&q.data, &q.spans);
        if !cx.session.user.is_unrestricted() && !super::acl::permit_queued(cx, q.cmd, &args) {
            continue;
        }
        run(cx, q.cmd, &args);
    }
    cx.session.in_exec = false;
    cx.store.after_command();
    unwatch_all(cx);
}

/// Leaves MULTI and forgets the WATCHes, as a refused EXEC does (Redis's discardTransaction).
/// The store may be busy (a script runs past its time limit): the WATCHes are then dropped by
/// giving this client a fresh flag; the store forgets the orphaned one when it next meets it.
pub fn discard_transaction(cx: &mut Cx<'_, '_>) {
    cx.session.multi = None;
    cx.session.info.multi.store(-1, Ordering::Relaxed);
    if cx.store.held() || cx.session.watched.is_empty() {
        unwatch_all(cx);
    } else {
        cx.session.watched.clear();
        cx.session.watched_volatile.clear();
        cx.session.watch_flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    }
}

pub fn discard(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    if cx.session.multi.take().is_none() {
        cx.out.error("ERR DISCARD without MULTI");
        return;
    }
    cx.session.info.multi.store(-1, Ordering::Relaxed);
    unwatch_all(cx);
    cx.out.ok();
}

pub fn watch(cx: &mut Cx<'_, '_>, args: &Args<'_>) {
    if cx.session.multi.is_some() {
        cx.out.error("ERR WATCH inside MULTI is not allowed");
        return;
    }
    let db = cx.db();
    let store = cx.store.get();
    for key in args.from(1) {
        if cx
            .session
            .watched
            .iter()
            .any(|(d, k)| *d == db && &k[..] == key)
        {
            continue;
        }
        store.watch(db, key, &cx.session.watch_flag);
        cx.session.watched.push((db, key.into()));
        if store.db(db).get(key).is_some_and(|e| e.expire_at != 0) {
            cx.session.watched_volatile.push((db, key.into()));
        }
    }
    cx.out.ok();
}

pub fn unwatch(cx: &mut Cx<'_, '_>, _args: &Args<'_>) {
    unwatch_all(cx);
    cx.out.ok();
}

/// Forgets every WATCH of this client and clears its dirty flag.
pub fn unwatch_all(cx: &mut Cx<'_, '_>) {
    if !cx.session.watched.is_empty() {
        let watched = std::mem::take(&mut cx.session.watched);
        cx.store.get().unwatch(&watched, &cx.session.watch_flag);
    }
    cx.session.watched_volatile.clear();
    cx.session.watch_flag.store(false, Ordering::Release);
}
