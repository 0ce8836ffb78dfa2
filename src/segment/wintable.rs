//! The window table: a directory of live windows in the segment, for tools.
//!
//! `shm_layout` reserves `WINDOW_TABLE_ENTRIES` entries of one line each. When a window
//! is created, its leader (rank 0) claims a free entry with a compare-and-swap of
//! `state` from `FREE` to `CLAIMED`, fills in the description, and publishes it by
//! storing `LIVE` with Release; an inspector that loads `LIVE` with Acquire sees a
//! complete description. Freeing stores `FREE` (Release) after clearing nothing else:
//! the next claimer overwrites every field before publishing. A full table is not an
//! error: the window simply is not listed.

use shm_layout::{WINDOW_ENTRY_BYTES, WINDOW_TABLE_ENTRIES};

use crate::segment::context::CoreContext;
use crate::segment::mapping::Segment;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::segment::view::{AtomicsOnly, atomics_at};

/// Values of [`WindowEntry::state`].
pub mod entry_state {
    /// Unused: free to claim.
    pub const FREE: u32 = 0;
    /// Claimed by a leader that is filling in the description.
    pub const CLAIMED: u32 = 1;
    /// Describes a live window.
    pub const LIVE: u32 = 2;
}

/// One entry of the window table.
#[repr(C)]
#[derive(Default)]
pub struct WindowEntry {
    /// One of [`entry_state`].
    pub state: AtomicU32,
    /// 0 = DRAM, 1 = MPB.
    pub placement: AtomicU32,
    /// Bytes of one element.
    pub elem_bytes: AtomicU32,
    /// Cores the window spans.
    pub cores: AtomicU32,
    /// Heap offset of the window's control block.
    pub control_offset: AtomicU64,
    /// Heap offset (DRAM) or MPB offset (MPB) of the data.
    pub data_offset: AtomicU64,
    /// Bytes of the data allocation (MPB: the region reserved in every MPB).
    pub data_bytes: AtomicU64,
}

// SAFETY: atomics only; all-zero bytes are a FREE entry.
unsafe impl AtomicsOnly for WindowEntry {}

const _: () = assert!(size_of::<WindowEntry>() <= WINDOW_ENTRY_BYTES);

/// What an entry describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowInfo {
    /// 0 = DRAM, 1 = MPB.
    pub placement: u32,
    /// Bytes of one element.
    pub elem_bytes: u32,
    /// Cores the window spans.
    pub cores: u32,
    /// Heap offset of the window's control block.
    pub control_offset: u64,
    /// Heap offset (DRAM) or MPB offset (MPB) of the data.
    pub data_offset: u64,
    /// Bytes of the data allocation (MPB: the region reserved in every MPB).
    pub data_bytes: u64,
}

fn entry(segment: &Segment, index: usize) -> &WindowEntry {
    let table = segment.layout().window_table;
    atomics_at(segment.bytes(table), index * WINDOW_ENTRY_BYTES)
}

/// Lists a window; returns its entry, or `None` if the table is full.
pub fn register(segment: &Segment, info: WindowInfo) -> Option<usize> {
    (0..WINDOW_TABLE_ENTRIES).find(|&i| {
        let e = entry(segment, i);
        // Relaxed: the claim only reserves the entry; LIVE's Release publishes it.
        if e.state
            .compare_exchange(entry_state::FREE, entry_state::CLAIMED, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        e.placement.store(info.placement, Ordering::Relaxed);
        e.elem_bytes.store(info.elem_bytes, Ordering::Relaxed);
        e.cores.store(info.cores, Ordering::Relaxed);
        e.control_offset.store(info.control_offset, Ordering::Relaxed);
        e.data_offset.store(info.data_offset, Ordering::Relaxed);
        e.data_bytes.store(info.data_bytes, Ordering::Relaxed);
        // Release: the fields above are visible to whoever loads LIVE with Acquire.
        e.state.store(entry_state::LIVE, Ordering::Release);
        true
    })
}

/// Removes a window's entry.
pub fn unregister(segment: &Segment, index: usize) {
    entry(segment, index).state.store(entry_state::FREE, Ordering::Release);
}

/// The live windows, by entry (for inspectors).
pub fn live(segment: &Segment) -> Vec<(usize, WindowInfo)> {
    (0..WINDOW_TABLE_ENTRIES)
        .filter_map(|i| {
            let e = entry(segment, i);
            // Acquire: pairs with the Release store of LIVE in `register`.
            (e.state.load(Ordering::Acquire) == entry_state::LIVE).then(|| {
                (
                    i,
                    WindowInfo {
                        placement: e.placement.load(Ordering::Relaxed),
                        elem_bytes: e.elem_bytes.load(Ordering::Relaxed),
                        cores: e.cores.load(Ordering::Relaxed),
                        control_offset: e.control_offset.load(Ordering::Relaxed),
                        data_offset: e.data_offset.load(Ordering::Relaxed),
                        data_bytes: e.data_bytes.load(Ordering::Relaxed),
                    },
                )
            })
        })
        .collect()
}

impl CoreContext {
    /// The windows listed in the segment's window table (any core's view).
    pub fn live_windows(&self) -> Vec<(usize, WindowInfo)> {
        live(self.segment())
    }
}
