//! MPBs and flags of ranks on other nodes: [`Core::mpb_put`], [`Core::mpb_get`],
//! [`Core::flag_write`] and [`Core::flag_read`] reach every rank of the job.
//!
//! A rank on this node is reached as on one node (the context's methods of the same
//! names). Every node's segment lays out every rank's MPB at the same offset, so for a
//! rank on another node the call sends a request (`rma::remote::wire`) to that rank,
//! whose node's gateway applies it to the MPB there: a put is a one-way write, a get a
//! round trip, a flag write a Release store that rings the owner's doorbell, so the
//! owner waits for its own flags on its own futex, as on one node. The requests of one
//! core to one rank apply in the order sent, so a flag written after a put to the same
//! rank publishes the put, as RCCE's protocols expect. Waiting on another node's copy of
//! a flag is refused ([`FlagError::OnOtherNode`]): RCCE waits on its own flags only.
//!
//! The one-way requests (puts and flag updates) are remembered by rank until
//! [`Core::complete_remote_mpb`] completes them with a sync round trip each: a release
//! of a test-and-set word does so first (`lock_word`).
//!
//! Virtual time: the messages that carry the requests are untimed, as a window's are
//! (`rma::remote::timed`): the C interface charges each copy and flag as the chip's MPB
//! model says, and a round trip (a get, a remote flag read) adds the chip's link both
//! ways. A flag's writer stamps the flag's byte on the owner's node
//! ([`Core::stamp_mpb`]) with its time plus the link, ahead of the update, so the
//! owner's wait observes it as on one node; a reader on another node asks for the stamp
//! after its read ([`Core::mpb_stamp_of`]).

use crate::coll::over_p2p::NodeLink;
use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::acc_atomic::fetch_and_op_slot;
use crate::protocol::atomic::op::{Element, Op};
use crate::rma::acc_view::words_at;
use crate::rma::remote::wire::{Header, Kind};
use crate::rma::remote::timed::round_trip;
use crate::rma::remote::{CHUNK, request, sync_all};
use crate::sync::Ordering;
use crate::timing;
use crate::segment::{Flag, FlagError, MpbError};

use super::facade::Core;

impl Core {
    /// Whether `rank` is a core of the job on another node.
    fn on_other_node(&self, rank: u32) -> bool {
        rank < self.size() && !self.context().is_local(rank)
    }

    /// Where byte `offset` of `rank`'s MPB lies in every node's segment, once `len`
    /// bytes from there are checked to fit the MPB.
    fn mpb_at(&self, rank: u32, offset: usize, len: usize) -> Result<usize, MpbError> {
        let mpb_bytes = self.context().mpb_bytes();
        if offset.checked_add(len).is_none_or(|end| end > mpb_bytes) {
            return Err(MpbError::OutOfBounds { offset, len, mpb_bytes });
        }
        let mpb = self.context().segment().layout().mpbs.get(rank as usize).expect("a rank of the job");
        Ok(mpb.offset + offset)
    }

    /// Checks that byte `offset` of `rank`'s MPB exists, on any node: the key of a stamp
    /// ([`Core::stamp_mpb`], [`Core::mpb_stamp_of`]).
    fn check_stamp_key(&self, rank: u32, offset: usize) -> Result<(), MpbError> {
        if rank >= self.size() {
            return Err(MpbError::RankOutOfRange { rank, size: self.size() });
        }
        self.mpb_at(rank, offset, 1).map(drop)
    }

    /// This core's link for requests to other nodes.
    pub(super) fn node_link(&self) -> NodeLink<'_> {
        NodeLink::new(self.context(), self.endpoint())
    }

    /// Sends one request to `rank`, waiting for its answer into `answer` if given; a
    /// one-way request leaves `rank` to complete ([`Core::complete_remote_mpb`]).
    pub(super) fn remote_request(
        &self,
        rank: u32,
        head: Header,
        payload: &[&[u8]],
        answer: Option<&mut [u8]>,
    ) -> Result<(), JobAborted> {
        let one_way = answer.is_none();
        request(&self.node_link(), rank, head, payload, answer)?;
        // After the send: a completion that sees the mark (in any thread of this core)
        // then follows the request in the channel to `rank`, which applies in order.
        if one_way {
            let mut dirty = self.remote_dirty.lock().unwrap_or_else(|e| e.into_inner());
            if !dirty.contains(&rank) {
                dirty.push(rank);
            }
        }
        Ok(())
    }

    /// Completes this core's one-way requests to other nodes: a sync to each rank they
    /// went to, all sent before any answer is awaited; they are then applied there.
    pub(super) fn complete_remote_mpb(&self) -> Result<(), JobAborted> {
        let dirty = std::mem::take(&mut *self.remote_dirty.lock().unwrap_or_else(|e| e.into_inner()));
        sync_all(&self.node_link(), &dirty)
    }

    /// Copies `src` into core `rank`'s MPB at `offset`, on any node (module docs).
    pub fn mpb_put(&self, rank: u32, offset: usize, src: &[u8]) -> Result<(), MpbError> {
        if !self.on_other_node(rank) {
            return self.context().mpb_put(rank, offset, src);
        }
        let at = self.mpb_at(rank, offset, src.len())?;
        for (i, chunk) in src.chunks(CHUNK).enumerate() {
            self.remote_request(rank, Header::new(Kind::Write, at + i * CHUNK), &[chunk], None)?;
        }
        Ok(())
    }

    /// Copies from core `rank`'s MPB at `offset` into `dst`, on any node (module docs).
    pub fn mpb_get(&self, rank: u32, offset: usize, dst: &mut [u8]) -> Result<(), MpbError> {
        if !self.on_other_node(rank) {
            return self.context().mpb_get(rank, offset, dst);
        }
        let at = self.mpb_at(rank, offset, dst.len())?;
        round_trip(0, dst.len());
        for (i, chunk) in dst.chunks_mut(CHUNK).enumerate() {
            let mut head = Header::new(Kind::Read, at + i * CHUNK);
            head.count = chunk.len() as u32;
            self.remote_request(rank, head, &[], Some(chunk))?;
        }
        Ok(())
    }

    /// Sets core `rank`'s copy of `flag` to `value` and wakes its waiters, on any node:
    /// the MPB puts this core made to `rank` before are visible to whoever sees the
    /// value (module docs).
    pub fn flag_write(&self, flag: Flag, rank: u32, value: u32) -> Result<(), FlagError> {
        if !self.on_other_node(rank) {
            return self.context().flag_write(flag, rank, value);
        }
        self.mpb_update(rank, flag.offset(), value, Op::Replace, true).map_err(|e| match e {
            MpbError::Aborted(e) => FlagError::Aborted(e),
            _ => FlagError::RankOutOfRange { rank, size: self.size() },
        })
    }

    /// Combines `value` into the `E` at `offset` of core `rank`'s MPB with `op`,
    /// atomically, on any node; then, if `wake`, rings `rank`'s doorbell, as a flag's
    /// writer does. The MPB puts this core made to `rank` before are visible to whoever
    /// sees the update (module docs). For C interfaces whose flags are MPB bytes or bits
    /// (RCCE's).
    pub fn mpb_update<E: Element>(&self, rank: u32, offset: usize, value: E, op: Op, wake: bool) -> Result<(), MpbError> {
        let width = size_of::<E>();
        if width > 8 || offset % width != 0 {
            return Err(MpbError::Misaligned { offset, width });
        }
        E::check(op).map_err(|_| MpbError::Misaligned { offset, width })?;
        if !self.on_other_node(rank) {
            let mpb = self.context().mpb_range(rank, offset & !3, (offset % 4 + width).next_multiple_of(4))?;
            let words = words_at(mpb, offset % 4, width, 1).ok_or(MpbError::Misaligned { offset, width })?;
            fetch_and_op_slot(words.slot(0), op, value);
            if wake {
                self.context().segment().slot(rank).bell.ring_after_rmw();
            }
            return Ok(());
        }
        let mut head = Header::accumulate(self.mpb_at(rank, offset, width)?, E::KIND, op, 1);
        (head.ring, head.rank) = (wake, rank);
        Ok(self.remote_request(rank, head, &[bytemuck::bytes_of(&value)], None)?)
    }

    /// In virtual time, raises the stamp keyed by byte `offset` of core `rank`'s MPB (the
    /// key its waiter observes) to this core's time, plus the chip's link if `rank` is
    /// on another node (module docs): a
    /// flag's writer calls it before the write, so that whoever waits for the flag
    /// observes the writer's time (RCCE's flags; `timing`). Does nothing off virtual
    /// time.
    pub fn stamp_mpb(&self, rank: u32, offset: usize) -> Result<(), MpbError> {
        let Some(clock) = timing::clock() else { return Ok(()) };
        self.check_stamp_key(rank, offset)?;
        if !self.on_other_node(rank) {
            if let Some(word) = clock.mpb_stamp(rank, offset) {
                // Relaxed: published by the flag's own Release (or AcqRel) update after it.
                word.fetch_max(clock.now(), Ordering::Relaxed);
            }
            return Ok(());
        }
        let mut head = Header::new(Kind::Stamp, 0);
        (head.rank, head.count, head.x) = (rank, offset as u32, clock.now() + clock.chip().link_ps(0));
        Ok(self.remote_request(rank, head, &[], None)?)
    }

    /// In virtual time, the stamp of byte `offset` of `rank`'s MPB, on any node: the
    /// latest time a flag write there was stamped with, a writer's link included
    /// ([`Core::stamp_mpb`]); 0 off virtual time. For a rank on another node it is one
    /// more round trip, uncharged: a reader asks for it right after the read whose value
    /// it stamps, and the owner's gateway applies the two in order.
    pub fn mpb_stamp_of(&self, rank: u32, offset: usize) -> Result<u64, MpbError> {
        let Some(clock) = timing::clock() else { return Ok(0) };
        self.check_stamp_key(rank, offset)?;
        if !self.on_other_node(rank) {
            // Relaxed: ordered after the read it stamps by that read's Acquire (`vtime`).
            return Ok(clock.mpb_stamp(rank, offset).map_or(0, |w| w.load(Ordering::Relaxed)));
        }
        let mut head = Header::new(Kind::Stamp, 0);
        (head.rank, head.count) = (rank, offset as u32);
        let mut stamp = [0u8; 8];
        self.remote_request(rank, head, &[], Some(&mut stamp))?;
        Ok(u64::from_le_bytes(stamp))
    }

    /// Reads core `rank`'s copy of `flag`, on any node.
    pub fn flag_read(&self, flag: Flag, rank: u32) -> Result<u32, FlagError> {
        if !self.on_other_node(rank) {
            return self.context().flag_read(flag, rank);
        }
        let at = self.mpb_at(rank, flag.offset(), 4).map_err(|_| FlagError::RankOutOfRange { rank, size: self.size() })?;
        round_trip(0, 4);
        let mut head = Header::new(Kind::Read, at);
        head.count = 4;
        let mut word = [0u8; 4];
        self.remote_request(rank, head, &[], Some(&mut word))?;
        Ok(u32::from_le_bytes(word))
    }
}
