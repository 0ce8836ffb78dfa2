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

/// Private memory adopted into the segment (`CoreContext::adopt`): a buffer of this
/// process's own heap, not page-aligned, becomes a window part without moving; peers'
/// puts land in it and the owner reads them through its own pointer; after release
/// the buffer is private again, with its contents, and the heap pages are returned. A
/// range inside an adopted one shares its pages; one that straddles them is refused.
fn adopted_private_memory(core: &Core, _: ()) -> Result<(), String> {
    let ctx = core.context();
    let (n, me) = (core.size(), core.rank());
    // The heap is job-wide: measure it when nobody is between adopt and release.
    core.barrier().s()?;
    let free_before = ctx.heap_free_bytes().s()?;
    core.barrier().s()?;
    let mut buf = vec![0u8; 10_000];
    buf[..16].copy_from_slice(&[me as u8; 16]);
    let base = buf.as_mut_ptr();
    // SAFETY: `buf` is this thread's private heap memory, and no other thread of this
    // process runs during the call; it is only reached through `base` until released.
    let part = unsafe { ctx.adopt(base.wrapping_add(100), 4000) }.s()?;
    // SAFETY: as above; inside the range adopted just now.
    let inner = unsafe { ctx.adopt(base.wrapping_add(200), 8) }.s()?;
    check(inner.offset == part.offset + 100, || format!("{inner:?} not inside {part:?}"))?;
    // SAFETY: as above.
    let straddles = unsafe { ctx.adopt(base.wrapping_add(4000), 5000) };
    check(straddles.is_err(), || "a range straddling adopted pages was adopted".into())?;
    let win = Window::<u8>::create_over(ctx, part, AccStrategy::Atomic).s()?;
    win.fence_with(Assert::NONE).s()?;
    win.put((me + 1) % n, 8 + me as usize, &[0xA0 + me as u8]).s()?;
    win.fence_with(Assert::NONE).s()?;
    let from = (me + n - 1) % n;
    // SAFETY: the fence orders the peer's put before this read of the buffer.
    let landed = unsafe { base.add(100 + 8 + from as usize).read_volatile() };
    check(landed == 0xA0 + from as u8, || format!("the put did not land in the buffer: {landed:#x}"))?;
    win.free().s()?;
    // SAFETY: the window is freed on every core (free is collective); no other thread.
    unsafe { ctx.release_adopted(base.wrapping_add(200)) }.s()?;
    // SAFETY: as above.
    unsafe { ctx.release_adopted(base.wrapping_add(100)) }.s()?;
    check(buf[108 + from as usize] == 0xA0 + from as u8 && buf[0] == me as u8, || {
        "contents lost on release".into()
    })?;
    buf.resize(1 << 20, 7);
    core.barrier().s()?;
    check(ctx.heap_free_bytes().s()? == free_before, || "heap pages not returned".into())?;
    Ok(())
}

#[test]
fn private_memory_adopted_without_moving() {
    Job::new(3).run(&(), adopted_private_memory).unwrap();
}
