//! Counts heap allocations: once its buffers have grown, the streaming parser allocates
//! nothing per line on the common path (no escapes), and a batch allocates a fixed handful of
//! times whatever the number of lines.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use sluice_lineproto::{Batch, Options, Parser};

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Counts the allocations made on the current thread.
struct Counting;

// A global allocator can only be written with `unsafe`; this one forwards to the system
// allocator unchanged and only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn telegraf_body(lines: usize) -> String {
    let mut body = String::new();
    for i in 0..lines {
        body.push_str(&format!(
            "cpu,cpu=cpu{},host=server{:02},region=eu-west usage_user={}.5,usage_system=1.25,usage_idle=97.0,usage_iowait=0i,ok=true,state=\"running\" {}\n",
            i % 8,
            i % 16,
            i % 100,
            1_700_000_000_000_000_000i64 + i as i64
        ));
    }
    body
}

#[test]
fn streaming_parser_allocates_nothing_per_line() {
    let body = telegraf_body(1000);
    let mut parser = Parser::new(body.as_bytes(), Options::new(0));
    // The first point grows the parser's buffers.
    assert!(parser.next_point().is_some_and(|p| p.is_ok()));
    let before = allocations();
    let mut points = 1;
    while let Some(point) = parser.next_point() {
        assert!(point.is_ok());
        points += 1;
    }
    assert_eq!(points, 1000);
    assert_eq!(
        allocations() - before,
        0,
        "allocations while parsing 999 lines"
    );
}

#[test]
fn escaped_names_allocate_only_for_the_escapes() {
    let body = "m,host=a\\ b v=1\n".repeat(100);
    let mut parser = Parser::new(body.as_bytes(), Options::new(0));
    assert!(parser.next_point().is_some_and(|p| p.is_ok()));
    let before = allocations();
    while let Some(point) = parser.next_point() {
        assert!(point.is_ok());
    }
    // One owned string per escaped tag value, nothing else.
    assert_eq!(allocations() - before, 99);
}

#[test]
fn batch_allocations_do_not_grow_with_lines() {
    let small = telegraf_body(100);
    let large = telegraf_body(10_000);
    let count = |body: &str| {
        let before = allocations();
        let batch = Batch::parse(body.as_bytes(), &Options::new(0)).unwrap();
        let n = allocations() - before;
        drop(batch);
        n
    };
    let (a, b) = (count(&small), count(&large));
    // Vectors grow by doubling: a few more reallocations for 100 times the lines, never one
    // per line.
    assert!(b <= a + 30, "100 lines: {a} allocations, 10000 lines: {b}");
    assert!(b < 100, "10000 lines took {b} allocations");
}
