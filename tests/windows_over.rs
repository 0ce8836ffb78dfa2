//! Windows over memory the cores already have in the heap (`Window::create_over`), over
//! real processes: the data is exposed as it was (not cleared), parts may start at any
//! byte, accumulates of every strategy stripe them correctly however they are aligned,
//! the memory outlives the window, and memory outside the heap is refused on every
//! core.

use sccemu::protocol::payload::Payload;
use sccemu::segment::collective_alloc::HeapRegion;
use sccemu::{AccStrategy, Assert, Core, Job, Op, Window, WindowError};

mod common;
use common::{OrString, check};

const STRATEGIES: [AccStrategy; 4] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 64 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::OwnerComputes,
];

/// Each core exposes 256 bytes at byte `skew` of a block it allocated, prefilled with
/// its rank; every core adds into every other core's part, then reads it back.
fn over_own_memory(core: &Core, skew: usize) -> Result<(), String> {
    let ctx = core.context();
    let (n, me) = (core.size(), core.rank());
    let block = ctx.heap_alloc_local(4096).s()?;
    for strategy in STRATEGIES {
        let bytes = ctx.heap_bytes(block);
        bytes.write(0, &[0xEE; 4096]);
        bytes.write(skew, &[me as u8; 256]);
        let part = HeapRegion { offset: block.offset + skew, len: 256 };
        let win = Window::<u8>::create_over(ctx, part, strategy).s()?;
        win.fence_with(Assert::NONE).s()?;
        // The first 4-aligned byte from 64 (the heap and its blocks are page-aligned).
        let word = 64 + (4 - skew % 4) % 4;
        for t in 0..n {
            // Byte 16 + r of every part gets r + 1 from rank r; a u32 counts the calls.
            win.accumulate_as(t, 16 + me as usize, &[me as u8 + 1], Op::Sum).s()?;
            win.fetch_and_op_as(t, word, 1u32, Op::Sum).s()?;
        }
        win.fence_with(Assert::NONE).s()?;
        let mut got = vec![0u8; 256];
        win.get(me, 0, &mut got).s()?;
        for r in 0..n as usize {
            let want = (me as u8).wrapping_add(r as u8 + 1);
            check(got[16 + r] == want, || format!("{strategy:?} skew {skew}: byte {r} = {}", got[16 + r]))?;
        }
        check(got[0] == me as u8 && got[255] == me as u8, || {
            format!("{strategy:?}: data not exposed as it was")
        })?;
        let count = u32::from_le_bytes(got[word..word + 4].try_into().unwrap());
        let want = u32::from_le_bytes([me as u8; 4]).wrapping_add(n);
        check(count == want, || format!("{strategy:?} skew {skew}: count {count:#x}, want {want:#x}"))?;
        win.fence_with(Assert::NOSUCCEED).s()?;
        win.free().s()?;
        // The memory is still the core's, untouched around the part.
        let mut edge = [0u8; 1];
        bytes.read(skew + 256, &mut edge);
        check(edge[0] == 0xEE, || "the window wrote past its part".into())?;
    }
    ctx.heap_free_local(block).s()?;
    Ok(())
}

#[test]
fn windows_over_heap_memory_at_any_alignment() {
    for skew in [0, 3, 8] {
        Job::new(3).run(&skew, over_own_memory).unwrap();
    }
}

/// Rank 1 names memory outside the heap: every core gets the same error, and a window
/// created next works.
fn outside_the_heap(core: &Core, _: ()) -> Result<(), String> {
    let ctx = core.context();
    let huge = HeapRegion { offset: usize::MAX / 2, len: 8 };
    let block = ctx.heap_alloc_local(64).s()?;
    let part = if core.rank() == 1 { huge } else { block };
    match Window::<u8>::create_over(ctx, part, AccStrategy::Atomic) {
        Err(WindowError::OutsideHeap { rank: 1 }) => {}
        other => return Err(format!("{:?}", other.map(|_| ()))),
    }
    let win = Window::<u8>::create_over(ctx, block, AccStrategy::Atomic).s()?;
    win.free().s()?;
    ctx.heap_free_local(block).s()?;
    Ok(())
}

#[test]
fn memory_outside_the_heap_is_refused_on_every_core() {
    Job::new(3).run(&(), outside_the_heap).unwrap();
}
