//! Dynamic windows (`MPI_Win_create_dynamic`): memory attached and detached at any
//! time, addressed by its address in the target process.
//!
//! The sccemu window's part is the whole shared heap on every rank, so any attached
//! memory (from `MPI_Alloc_mem`, or adopted onto heap pages) is a byte range of it.
//! Each rank publishes what it attached in its part of a table window of its own
//! (`sccemu::Window<u64>` over the same communicator, so that its ranks are the
//! window's): a generation, a count, then `(address, bytes, heap offset)`
//! per attachment. An origin translates a displacement (an address in the target) by
//! finding the attachment that holds the whole access; it keeps each target's table
//! and reads it again only when the target's generation changed (with loads on its node,
//! with gets in a shared lock epoch of the table across nodes). As MPI requires, the
//! program orders an attach before the accesses to it (and a detach after them) with
//! some synchronization, so plain copies of the table are enough.

use sccemu::{Placement, Window, WindowError};

use crate::comm::CommObj;
use crate::error::{MpiError, MpiResult, class, fail};

/// Attachments per rank.
pub const MAX_ATTACHED: usize = 256;
/// Words of one rank's table: generation, count, then three per attachment.
const TABLE_WORDS: usize = 2 + 3 * MAX_ATTACHED;

/// One attachment: `bytes` at `addr` in its process, `offset` into the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    addr: usize,
    bytes: usize,
    offset: usize,
}

/// This rank's side of a dynamic window's attachments.
pub struct AttachTable {
    table: Window<'static, u64>,
    /// What this rank attached, and whether each was adopted (to release at detach).
    mine: Vec<(Entry, bool)>,
    generation: u64,
    /// Each rank's table as last read, with its generation.
    seen: Vec<Option<(u64, Vec<Entry>)>>,
}

impl AttachTable {
    /// Collective over `comm`: the table window of a dynamic window over it.
    pub fn create(comm: &CommObj) -> Result<AttachTable, WindowError> {
        let table = comm.coll().window(TABLE_WORDS, Placement::Dram)?;
        Ok(AttachTable { table, mine: Vec::new(), generation: 0, seen: vec![None; comm.size() as usize] })
    }

    /// Collective: frees the table window (the dynamic window is being freed).
    pub fn free(self) -> MpiResult<()> {
        for &(e, adopted) in &self.mine {
            if adopted {
                crate::ffi::window::release(self.table.context(), e.addr)?;
            }
        }
        self.table.free().map_err(crate::win::window_error)
    }

    fn publish(&mut self) {
        self.generation += 1;
        let mut words = vec![self.generation, self.mine.len() as u64];
        for (e, _) in &self.mine {
            words.extend([e.addr as u64, e.bytes as u64, e.offset as u64]);
        }
        // The table of this rank's own part: writes always succeed in range.
        let _ = self.table.local().write(0, &words);
    }

    /// Records `bytes` at `addr`, which is heap bytes from `offset` (`adopted` if its
    /// pages were adopted for this attachment).
    pub fn attach(&mut self, addr: usize, bytes: usize, offset: usize, adopted: bool) -> MpiResult<()> {
        if self.mine.len() == MAX_ATTACHED {
            return fail(class::RMA_ATTACH, format!("at most {MAX_ATTACHED} attachments per process"));
        }
        let end = addr + bytes;
        if self.mine.iter().any(|(e, _)| addr < e.addr + e.bytes && e.addr < end) {
            return fail(class::RMA_ATTACH, "the memory overlaps memory attached already");
        }
        self.mine.push((Entry { addr, bytes, offset }, adopted));
        self.publish();
        Ok(())
    }

    /// Forgets the attachment at `addr`; whether its pages were adopted for it.
    pub fn detach(&mut self, addr: usize) -> MpiResult<bool> {
        let Some(i) = self.mine.iter().position(|(e, _)| e.addr == addr) else {
            return fail(class::RMA_ATTACH, format!("nothing is attached at {addr:#x}"));
        };
        let (_, adopted) = self.mine.swap_remove(i);
        self.publish();
        Ok(adopted)
    }

    /// The heap offset of `bytes` at address `addr` of rank `rank` (of the window's
    /// communicator).
    pub fn translate(&mut self, rank: usize, addr: usize, bytes: usize) -> MpiResult<usize> {
        let words = |at: usize, out: &mut [u64]| self.read_table(rank as u32, at, out);
        let mut generation = [0u64; 2];
        words(0, &mut generation)?;
        let fresh = matches!(&self.seen[rank], Some((g, _)) if *g == generation[0]);
        if !fresh {
            let count = (generation[1] as usize).min(MAX_ATTACHED);
            let mut table = vec![0u64; 3 * count];
            words(2, &mut table)?;
            let entries = table
                .chunks(3)
                .map(|w| Entry { addr: w[0] as usize, bytes: w[1] as usize, offset: w[2] as usize })
                .collect();
            self.seen[rank] = Some((generation[0], entries));
        }
        let entries = self.seen[rank].as_ref().map(|(_, e)| e.as_slice()).unwrap_or_default();
        let end = addr.checked_add(bytes).ok_or_else(|| range(addr, bytes, rank))?;
        entries
            .iter()
            .find(|e| addr >= e.addr && end <= e.addr + e.bytes)
            .map(|e| e.offset + (addr - e.addr))
            .ok_or_else(|| range(addr, bytes, rank))
    }
}

impl AttachTable {
    /// Words `at..` of `rank`'s table: loads on this node; across nodes (where the
    /// table's part is not mapped) gets in a shared lock epoch of the table window.
    fn read_table(&self, rank: u32, at: usize, out: &mut [u64]) -> MpiResult<()> {
        let rma = crate::win::rma_error;
        match self.table.shared_query(rank) {
            Ok(part) => part.read(at, out).map_err(rma),
            Err(sccemu::RmaError::OnOtherNode { .. }) => {
                let sync = crate::win::sync_error;
                let epoch = self.table.lock(sccemu::LockKind::Shared, rank).map_err(sync)?;
                epoch.get(rank, at, out).map_err(rma)?;
                epoch.unlock().map_err(sync)
            }
            Err(e) => Err(rma(e)),
        }
    }
}

fn range(addr: usize, bytes: usize, rank: usize) -> MpiError {
    MpiError::new(class::RMA_RANGE, format!("{bytes} bytes at {addr:#x} are not attached at rank {rank}"))
}
