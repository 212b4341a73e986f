//! The context of the script running on this thread, as `redis.call` reaches it: a pointer in a
//! thread-local slot, set for exactly the length of one run.
//!
//! Why `unsafe`: mlua's safe way to hand a Lua callback a borrowed context is `Lua::scope`,
//! which creates a function and tears it down again on every run; under `perf`, with the per-run
//! table and string handles, that was the largest share of a short EVALSHA's cost. Here the
//! callback is created once per interpreter and finds the run's context through this slot.
//! Soundness rests on three points, each enforced here: the pointer is set by [`enter`] from a
//! reference that the returned guard borrows, and the guard restores the previous value when it
//! drops (unwinding included), so the slot never holds a dangling pointer while code can read
//! it; the slot is thread-local, so only the thread running the script reads it; and it holds a
//! trait object, so the context is used only through [`Context`], whatever its concrete type
//! and lifetimes (only those are erased, never the type).

use std::cell::Cell;
use std::marker::PhantomData;

use mlua::{Lua, MultiValue, Table, Value};

/// The arguments of one `redis.call`.
pub enum CallArgs<'a> {
    /// As the call got them, on the stack.
    Values(&'a MultiValue),
    /// Thousands of them, in a table of this length (read one at a time, so that they do not
    /// all hold one of mlua's reference slots at once).
    Table(usize, &'a Table),
}

/// What a script's `redis.call` runs against.
pub trait Context {
    /// Runs one command with the arguments `redis.call` got; returns the reply and whether
    /// `redis.call` must raise it.
    fn call(&self, lua: &Lua, args: CallArgs<'_>) -> mlua::Result<(Value, bool)>;
}

type Erased = *const (dyn Context + 'static);

thread_local! {
    static CURRENT: Cell<Option<Erased>> = const { Cell::new(None) };
}

/// While alive, the context given to [`enter`] is the current one on this thread.
pub struct Entered<'a> {
    previous: Option<Erased>,
    _context: PhantomData<&'a ()>,
}

/// Makes `context` the current one until the returned guard drops.
#[allow(unsafe_code)]
pub fn enter<'a>(context: &'a (dyn Context + 'a)) -> Entered<'a> {
    let ptr: *const (dyn Context + 'a) = context;
    // SAFETY: only the trait object's lifetime bound changes (same layout, same vtable); the
    // pointer is read back only while the guard, which borrows `context` for 'a, is alive.
    let erased: Erased = unsafe { std::mem::transmute(ptr) };
    let previous = CURRENT.with(|c| c.replace(Some(erased)));
    Entered {
        previous,
        _context: PhantomData,
    }
}

/// Calls `f` with the current context, or returns None when no run is entered.
#[allow(unsafe_code)]
pub fn with_current<R>(f: impl FnOnce(&dyn Context) -> R) -> Option<R> {
    let ptr = CURRENT.with(Cell::get)?;
    // SAFETY: the slot holds a pointer only between `enter` and the drop of its guard, which
    // borrows the context for that time, so it is alive; it was set on this thread. The
    // reference does not outlive `f`.
    Some(f(unsafe { &*ptr }))
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        let previous = self.previous;
        CURRENT.with(|c| c.set(previous));
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    struct Counter<'a>(&'a RefCell<Vec<usize>>);

    impl Context for Counter<'_> {
        fn call(&self, _: &Lua, args: CallArgs<'_>) -> mlua::Result<(Value, bool)> {
            let n = match args {
                CallArgs::Values(v) => v.len(),
                CallArgs::Table(n, _) => n,
            };
            self.0.borrow_mut().push(n);
            Ok((Value::Integer(n as i64), false))
        }
    }

    fn call_current(lua: &Lua, argc: usize) -> Option<i64> {
        let args: MultiValue = (0..argc).map(|i| Value::Integer(i as i64)).collect();
        with_current(|c| c.call(lua, CallArgs::Values(&args)).ok())
            .flatten()
            .and_then(|(v, _)| v.as_i64())
    }

    #[test]
    fn set_for_the_guard_only_and_nested_runs_restore_the_outer() {
        let lua = Lua::new();
        assert_eq!(call_current(&lua, 1), None);
        let seen = RefCell::new(Vec::new());
        let outer = Counter(&seen);
        {
            let _guard = enter(&outer);
            assert_eq!(call_current(&lua, 2), Some(2));
            let inner_seen = RefCell::new(Vec::new());
            let inner = Counter(&inner_seen);
            {
                let _inner = enter(&inner);
                assert_eq!(call_current(&lua, 3), Some(3));
            }
            assert_eq!(*inner_seen.borrow(), [3]);
            assert_eq!(call_current(&lua, 4), Some(4));
            // Another thread never sees this thread's context.
            std::thread::scope(|s| {
                s.spawn(|| assert!(with_current(|_| ()).is_none()));
            });
        }
        assert_eq!(*seen.borrow(), [2, 4]);
        assert_eq!(call_current(&lua, 5), None);
    }

    #[test]
    fn a_panic_inside_the_run_still_clears_the_slot() {
        let seen = RefCell::new(Vec::new());
        let context = Counter(&seen);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _guard = enter(&context);
            panic!("inside the run");
        }));
        assert!(result.is_err());
        assert!(with_current(|_| ()).is_none());
    }
}
