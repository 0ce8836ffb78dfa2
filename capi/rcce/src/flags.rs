//! RCCE's flags: bytes (32 a line) or single bits (256 a line) in MPB lines.
//!
//! Allocation is symmetric: every UE replicates [`FlagLines`] and allocates in the same
//! order, so a flag has the same line and slot in every MPB. A line is taken from the
//! MPB (`RCCE_malloc`) only when every line in use is full, and given back when its
//! last flag is freed; so each flag line shrinks what is left for payload.
//!
//! Protocol. A byte flag is written with a Release store into the target core's MPB,
//! and read with an Acquire load, so whatever the writer put before setting it (a
//! message chunk) is visible to whoever sees it set. A bit flag is written as on the
//! chip: a read-modify-write of its byte under the target core's test-and-set lock
//! (`registers`), whose Acquire and Release order it the same way; reads take no lock.
//! Every write rings the target's doorbell, so a core waiting on its own flag sleeps
//! through sccemu's waiter (spin, yield, futex) instead of polling.
//!
//! Across nodes every flag write is an atomic update of the byte, with AcqRel, and a
//! remote one travels to the owner's node (`nodes`); the test-and-set lock is not
//! used.

use std::sync::atomic::{AtomicU8, Ordering};

use sccemu::Op;
use sccemu::protocol::payload::Payload;
use sccemu::segment::WaitMark;
use sccemu::segment::view::atomic_u8_at;

use crate::codes::{Error, LINE};
use crate::state::Rcce;

/// One flag: the MPB offset of its line and its slot (byte or bit) in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag {
    /// MPB offset of the flag's line.
    pub line: usize,
    /// Byte index (byte flags) or bit index (single-bit flags) in the line.
    pub slot: usize,
}

impl Flag {
    /// No flag (before `RCCE_init` fills one in).
    pub const NONE: Flag = Flag { line: 0, slot: 0 };

    /// The MPB offset of the byte that holds the flag.
    pub fn byte(&self, bits: bool) -> usize {
        self.line + if bits { self.slot / 8 } else { self.slot }
    }
}

/// The flag lines in use and which slots of each are taken.
#[derive(Debug)]
pub struct FlagLines {
    per_line: usize,
    lines: Vec<(usize, [u64; 4])>,
}

impl FlagLines {
    /// No line yet; `per_line` flags fit a line (32 or 256).
    pub fn new(per_line: usize) -> FlagLines {
        FlagLines { per_line, lines: Vec::new() }
    }

    fn take_free_slot(&mut self) -> Option<Flag> {
        for (line, used) in &mut self.lines {
            if let Some(slot) = (0..self.per_line).find(|&s| used[s / 64] & (1 << (s % 64)) == 0) {
                used[slot / 64] |= 1 << (slot % 64);
                return Some(Flag { line: *line, slot });
            }
        }
        None
    }

    /// Whether `flag` is allocated.
    pub fn contains(&self, flag: Flag) -> bool {
        flag.slot < self.per_line
            && self
                .lines
                .iter()
                .any(|(line, used)| *line == flag.line && used[flag.slot / 64] & (1 << (flag.slot % 64)) != 0)
    }

    /// Frees `flag`; returns its line if that line is now empty (and forgotten).
    fn release(&mut self, flag: Flag) -> Result<Option<usize>, Error> {
        if !self.contains(flag) {
            return Err(Error::FlagNotAllocated);
        }
        let i = self.lines.iter().position(|(line, _)| *line == flag.line).expect("contains");
        self.lines[i].1[flag.slot / 64] &= !(1 << (flag.slot % 64));
        Ok((self.lines[i].1 == [0; 4]).then(|| self.lines.remove(i).0))
    }
}

impl Rcce {
    fn bits(&self) -> bool {
        self.variant.single_bit_flags
    }

    /// Collective `RCCE_flag_alloc`: the flag is unset in this core's MPB.
    pub fn flag_alloc(&self) -> Result<Flag, Error> {
        let mut lines = self.lock(&self.flags);
        let flag = match lines.take_free_slot() {
            Some(flag) => flag,
            None => {
                let line = self.malloc(LINE).map_err(|_| Error::FlagNotAllocated)?;
                self.mpb(self.rank).zero(line, LINE);
                lines.lines.push((line, [0; 4]));
                lines.take_free_slot().expect("a fresh line has room")
            }
        };
        drop(lines);
        self.store(flag, false, self.rank);
        Ok(flag)
    }

    /// Collective `RCCE_flag_free`.
    pub fn flag_free(&self, flag: Flag) -> Result<(), Error> {
        let empty = self.lock(&self.flags).release(flag)?;
        if let Some(line) = empty {
            self.free(line)?;
        }
        Ok(())
    }

    /// `Err(FlagNotAllocated)` unless `flag` is allocated.
    pub fn check_flag(&self, flag: Flag) -> Result<Flag, Error> {
        if self.lock(&self.flags).contains(flag) { Ok(flag) } else { Err(Error::FlagNotAllocated) }
    }

    fn byte_of(&self, flag: Flag, id: u32) -> &AtomicU8 {
        atomic_u8_at(self.mpb(id), flag.byte(self.bits()))
    }

    /// Writes the flag; rings `id` only across nodes (`flag_write` rings otherwise).
    fn store(&self, flag: Flag, set: bool, id: u32) {
        if self.spans {
            // A remote owner's stamp goes to its node, ahead of the update.
            // Charged as on one node, where a single-bit flag goes through the register.
            crate::vtime::flag_written(id, flag.byte(self.bits()), self.bits(), self.is_local(id));
            if !self.is_local(id) {
                let stamped = self.core.stamp_mpb(id, flag.byte(self.bits()));
                stamped.unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
            }
            let (value, op) = match (self.bits(), set) {
                (false, _) => (u8::from(set), Op::Replace),
                (true, true) => (1u8 << (flag.slot % 8), Op::BitOr),
                (true, false) => (!(1u8 << (flag.slot % 8)), Op::BitAnd),
            };
            return self.flag_update(id, flag.byte(self.bits()), value, op);
        }
        // The stamp goes before the Release store that publishes the flag (`vtime`).
        crate::vtime::flag_written(id, flag.byte(self.bits()), self.bits(), true);
        let byte = self.byte_of(flag, id);
        if self.bits() {
            let mask = 1u8 << (flag.slot % 8);
            self.test_and_set(id);
            // Relaxed load: every writer of this byte holds core id's lock, whose
            // Acquire orders this after the previous holder's store.
            let old = byte.load(Ordering::Relaxed);
            byte.store(if set { old | mask } else { old & !mask }, Ordering::Release);
            self.release_register(id);
        } else {
            byte.store(u8::from(set), Ordering::Release);
        }
    }

    /// `RCCE_flag_write`: sets or clears `flag` in core `id`'s MPB and wakes it.
    pub fn flag_write(&self, flag: Flag, set: bool, id: u32) {
        self.store(flag, set, id);
        if !self.spans {
            self.core.ring(id);
        }
    }

    /// `RCCE_flag_read`: whether `flag` is set in core `id`'s MPB (on any node).
    pub fn flag_read(&self, flag: Flag, id: u32) -> bool {
        let byte = if self.spans {
            self.flag_byte(id, flag.byte(self.bits()))
        } else {
            // Acquire: pairs with the writer's Release (module docs).
            self.byte_of(flag, id).load(Ordering::Acquire)
        };
        if self.bits() { byte & (1 << (flag.slot % 8)) != 0 } else { byte != 0 }
    }

    /// `RCCE_flag_read` as the program calls it: the read, which in virtual time sees
    /// the stamp of the write whose value it returns.
    pub fn flag_read_observed(&self, flag: Flag, id: u32) -> bool {
        let value = self.flag_read(flag, id);
        let byte = flag.byte(self.bits());
        if self.is_local(id) {
            crate::vtime::flag_seen(id, byte);
        } else {
            // Asked after the read, so not older than the write whose value it returned.
            let stamp =
                self.core.mpb_stamp_of(id, byte).unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
            crate::vtime::remote_flag_seen(id, stamp);
        }
        value
    }

    /// Waits until `flag` in core `id`'s MPB reads `set`, sleeping on this core's
    /// doorbell (writers of `id`'s flags ring `id`; for a remote `id` the writer rings
    /// this core too, see the barrier). Marked `mark` for the deadlock report. Across
    /// nodes only this core's own flags are waited for (the barrier sees to it).
    pub fn wait_flag(&self, flag: Flag, set: bool, id: u32, mark: WaitMark) {
        if self.spans && id != self.rank {
            crate::fatal(self, &format!("internal error: a wait on UE {id}'s flag across nodes"));
        }
        if self.flag_read(flag, id) != set {
            let _blocked = self.core.mark_wait(mark);
            let waited = self.core.wait_on(self.rank, || (self.flag_read(flag, id) == set).then_some(()));
            waited.unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
        }
        // After the Acquire load that saw the value: the stamp of the write it saw.
        crate::vtime::flag_seen(id, flag.byte(self.bits()));
    }

    /// `RCCE_wait_until`: waits until this core's own `flag` reads `set`.
    pub fn wait_until(&self, flag: Flag, set: bool) {
        self.wait_flag(flag, set, self.rank, WaitMark::Flag { offset: flag.byte(self.bits()) as u32 });
    }
}
