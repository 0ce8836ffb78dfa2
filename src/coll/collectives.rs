//! Collectives over shared staging: bcast, gather, scatter, alltoall, reduce, allreduce,
//! reduce_scatter (allgather has its own module).
//!
//! Protocol of one round: every contributing member copies its data into its own
//! staging half for the round (see `comm`), everyone passes a rendezvous
//! (Release/Acquire: the copies are visible after it), then every member copies out
//! or combines what it needs, straight from the other members' halves. The rendezvous
//! is the communicator's barrier when cores share CPUs; when every core has a CPU,
//! each member instead raises its own rendezvous flag to the round's call number
//! (Release) and waits until every member's shows it (Acquire): one line moves per
//! member, not the barrier's counter and release word (2 cores, 8 B allreduce:
//! 0.164 -> 0.137 µs). Either way nobody starts a round before every member finished the
//! previous one, which is what reusing a half two calls later needs. Each byte is
//! copied once into shared memory and once out, which is the minimum when user buffers
//! are private memory.
//!
//! Agreement on errors: in the first round every member also writes a header (its block
//! size and whether its own arguments were valid) and, after the barrier, reads every
//! member's header. All members therefore see the same headers and return the same
//! error, and the communicator stays usable: nobody is left waiting.
//!
//! Messages larger than a half are moved in rounds; members agree on the round count
//! because the header check guarantees they agree on sizes. Reductions combine
//! contributions in rank order on every member, so results are identical everywhere.

use bytemuck::Pod;

use crate::segment::collective_alloc::HeapRegion;
use crate::coll::comm::{CollError, Comm};
use crate::segment::mapping::SharedBytes;
use crate::protocol::agree::{Fingerprint, hash_words, op_word};
use crate::protocol::atomic::op::{Element, Op, combine_into};
use crate::protocol::payload::Payload;
use Phase::{Read, Write};
use shm_layout::WaitPolicy;


/// A member's round header: block bytes, then argument validity.
const HEADER_BYTES: usize = 16;
/// Where the payload starts in a half: after the line that holds the member's header
/// when members run at once ([`Round::packs_headers`]).
const HEADER: usize = shm_layout::LINE;
/// Payload bytes of a half that a communicator's first round needs at least: its
/// staging's smallest size (`comm`'s staging rounds up to 4 KiB halves).
const FIRST_PAYLOAD: usize = 4096 - HEADER;

/// Bytes of staging's table of packed headers for one parity (see `comm`): whole pages,
/// so that the halves after it start on a page.
pub(crate) fn headers_bytes(size: usize) -> usize {
    (size * HEADER_BYTES).next_multiple_of(shm_layout::PAGE)
}

/// The staging in force for one collective call.
pub(crate) struct Round<'a, 'c> {
    comm: &'a Comm<'c>,
    staging: (HeapRegion, usize),
    call: u32,
}

impl<'c> Comm<'c> {
    /// Payload bytes of a full staging half, the same on every member: large enough for
    /// bandwidth, small enough that 1024 members fit in the default heap, and that a
    /// communicator's full staging (both parities of every member's half) takes at most
    /// a sixteenth of the heap: with a quarter, a 48-process MPI program ran out of heap
    /// at its fifth communicator that made a large collective call.
    pub(crate) fn half_payload(&self) -> usize {
        let heap = self.context().segment().config().heap_bytes as usize;
        let per_member = (heap / (32 * self.size() as usize)).clamp(16 * 1024, 1 << 20);
        (1usize << per_member.ilog2()) - HEADER
    }

    /// Starts a round: staging with halves of at least `payload` bytes (the staging as
    /// it is, if it has them), halves chosen by the call's parity.
    pub(crate) fn round(&self, payload: usize) -> Result<Round<'_, 'c>, CollError> {
        let staging = self.staging(payload + HEADER)?;
        Ok(Round { comm: self, staging, call: self.next_call() })
    }

    /// Moves `block_bytes` in rounds of at most `per_round` bytes. Each round calls
    /// `body` in [`Phase::Write`] (copy into staging), passes the rendezvous, then calls it
    /// in [`Phase::Read`]. The first round also agrees on `block_bytes` and on each
    /// member's local validity before anyone reads, so a bad call changes no buffer and
    /// every member returns an error.
    ///
    /// `per_round` gives the bytes of the block a round moves from the payload bytes of
    /// the round's halves. The first round takes the staging as it is, a small one at a
    /// communicator's first call ([`FIRST_PAYLOAD`]): its size must not depend on this
    /// call's arguments, which the members have not agreed on yet. Later rounds, after
    /// the agreement, grow it to full halves ([`Comm::half_payload`]); so a
    /// communicator whose calls are all small keeps a small staging (module docs).
    pub(crate) fn in_rounds(
        &self,
        block_bytes: usize,
        local: Result<(), CollError>,
        per_round: impl Fn(usize) -> usize,
        mut body: impl FnMut(&Round<'_, 'c>, std::ops::Range<usize>, Phase) -> Result<(), CollError>,
    ) -> Result<(), CollError> {
        let _call = Comm::timed_call("collective");
        let mut lo = 0;
        loop {
            let round = self.round(if lo == 0 { FIRST_PAYLOAD } else { self.half_payload() })?;
            let hi = (lo + per_round(round.payload()).max(1)).min(block_bytes);
            if lo == 0 {
                round.write_header(block_bytes, &local);
            }
            if local.is_ok() {
                body(&round, lo..hi, Phase::Write)?;
            }
            self.rendezvous(round.call())?;
            if lo == 0 {
                round.agree(block_bytes, local.clone())?;
            }
            body(&round, lo..hi, Phase::Read)?;
            lo = hi;
            if lo >= block_bytes {
                return Ok(());
            }
        }
    }
}

impl Comm<'_> {
    /// Every member has written its half for round `call` (module docs).
    fn rendezvous(&self, call: u32) -> Result<(), CollError> {
        if self.context().wait_policy() == WaitPolicy::Block {
            return self.barrier_unchecked();
        }
        self.meet_by_flags(call)
    }

    /// The rendezvous of round `call` without the barrier: raises this member's
    /// rendezvous flag, then waits for every other member's.
    pub(crate) fn meet_by_flags(&self, call: u32) -> Result<(), CollError> {
        let flag_of = |r| self.rendezvous_flag(r);
        let bell_of = |r| self.bell(r);
        let meeting = self.meeting_arrive();
        crate::protocol::flag::meet(self.size(), self.rank(), call, flag_of, bell_of, &self.context().waiter())?;
        self.meeting_leave(meeting);
        Ok(())
    }
}

/// The two halves of a round, around its rendezvous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Write,
    Read,
}

impl<'c> Round<'_, 'c> {
    /// Where this round's parity of staging starts: its header table, then its halves
    /// (see `comm`).
    fn parity(&self) -> usize {
        let (region, capacity) = self.staging;
        let n = self.comm.size() as usize;
        region.offset + (self.call % 2) as usize * (headers_bytes(n) + capacity * n)
    }

    fn heap_bytes(&self, offset: usize, len: usize) -> SharedBytes<'c> {
        self.comm.context().heap_bytes(HeapRegion { offset, len })
    }

    /// Every member's half for this round as one array: a member's half, or `size`
    /// equal blocks packed side by side (the shared allgather's, when members share CPUs).
    pub fn packed(&self) -> SharedBytes<'c> {
        let n = self.comm.size() as usize;
        self.heap_bytes(self.parity() + headers_bytes(n), self.staging.1 * n)
    }

    /// Member `rank`'s half for this round: its header's line, then the payload.
    pub fn half(&self, rank: u32) -> SharedBytes<'c> {
        let n = self.comm.size() as usize;
        self.heap_bytes(self.parity() + headers_bytes(n) + rank as usize * self.staging.1, self.staging.1)
    }

    /// Whether headers go to the packed table rather than atop each member's half: when
    /// members share CPUs (`Block`, every large job), so that reading them all touches a
    /// page per 256 members, not one per member (see `comm`). Members that run at once
    /// keep theirs beside their payload, which a reader then finds in the next line:
    /// with the table, 2 cores' 8-byte allreduce took 1.07x and their 512-byte shared
    /// allgather 1.13x as long.
    fn packs_headers(&self) -> bool {
        self.comm.context().wait_policy() == WaitPolicy::Block
    }

    /// Member `rank`'s round header.
    fn header(&self, rank: u32) -> SharedBytes<'c> {
        match self.packs_headers() {
            true => self.heap_bytes(self.parity() + rank as usize * HEADER_BYTES, HEADER_BYTES),
            false => self.half(rank).slice(0, HEADER_BYTES),
        }
    }

    pub fn call(&self) -> u32 {
        self.call
    }

    /// Payload bytes of each member's half in this round.
    pub fn payload(&self) -> usize {
        self.staging.1 - HEADER
    }

    pub(crate) fn write_header(&self, block_bytes: usize, local: &Result<(), CollError>) {
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(&(block_bytes as u64).to_le_bytes());
        header[8] = local.is_err() as u8;
        self.header(self.comm.rank()).write(0, &header);
    }

    /// After the rendezvous: every member's header agrees, or everyone returns an error.
    pub(crate) fn agree(&self, block_bytes: usize, local: Result<(), CollError>) -> Result<(), CollError> {
        local?;
        let ok = |header: &[u8]| {
            let theirs = u64::from_le_bytes(header[..8].try_into().expect("8 bytes")) as usize;
            header[8] == 0 && theirs == block_bytes
        };
        let n = self.comm.size();
        if !self.packs_headers() {
            let mut header = [0u8; HEADER_BYTES];
            for rank in 0..n {
                self.header(rank).read(0, &mut header);
                if !ok(&header) {
                    return Err(CollError::Disagreement { rank });
                }
            }
            return Ok(());
        }
        // The table in pieces, into the stack rather than whole onto the heap.
        let table = self.heap_bytes(self.parity(), n as usize * HEADER_BYTES);
        let mut piece = [0u8; 16 * HEADER_BYTES];
        for start in (0..table.len()).step_by(piece.len()) {
            let piece = &mut piece[..(table.len() - start).min(16 * HEADER_BYTES)];
            table.read(start, piece);
            if let Some(i) = piece.chunks_exact(HEADER_BYTES).position(|header| !ok(header)) {
                return Err(CollError::Disagreement { rank: (start / HEADER_BYTES + i) as u32 });
            }
        }
        Ok(())
    }

    /// Copies `src` into this member's half at payload offset `at`.
    pub fn put_own(&self, at: usize, src: &[u8]) {
        self.comm.charge_staging(self.comm.rank(), src.len());
        self.half(self.comm.rank()).write(HEADER + at, src);
    }

    /// Copies from member `rank`'s half at payload offset `at` into `dst`.
    pub fn get(&self, rank: u32, at: usize, dst: &mut [u8]) {
        self.comm.charge_staging(rank, dst.len());
        self.half(rank).read(HEADER + at, dst);
    }
}

fn expect_len(found: usize, expected: usize) -> Result<(), CollError> {
    if found != expected { Err(CollError::SizeMismatch { expected, found }) } else { Ok(()) }
}

fn bytes<T: Pod>(s: &[T]) -> &[u8] {
    bytemuck::cast_slice(s)
}

fn bytes_mut<T: Pod>(s: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(s)
}

/// Rounds move whole elements, so that reductions never split one.
fn per_round<T>(payload: usize) -> usize {
    payload / size_of::<T>() * size_of::<T>()
}

impl Comm<'_> {
    /// Root's `buf` is copied to every member's `buf` (all the same length).
    pub fn bcast<T: Pod>(&self, root: u32, buf: &mut [T]) -> Result<(), CollError> {
        self.agree(Fingerprint::new("bcast").field("root", root.into()).field("count", buf.len() as u64).element::<T>())?;
        self.check_rank(root)?;
        let me = self.rank();
        let data = bytes_mut(buf);
        if let Some(group) = self.over_messages() {
            group.agree(data.len(), Ok(()))?;
            return group.bcast(root as usize, data);
        }
        self.in_rounds(data.len(), Ok(()), per_round::<T>, |round, r, phase| {
            match phase {
                Write if me == root => round.put_own(0, &data[r]),
                Read if me != root => round.get(root, 0, &mut data[r]),
                _ => {}
            }
            Ok(())
        })
    }

    /// Every member's `send` is stored at `recv[rank * send.len()..]` on `root`
    /// (`recv` is ignored elsewhere and may be empty).
    pub fn gather<T: Pod>(&self, root: u32, send: &[T], recv: &mut [T]) -> Result<(), CollError> {
        self.agree(Fingerprint::new("gather").field("root", root.into()).field("count", send.len() as u64).element::<T>())?;
        self.check_rank(root)?;
        let (n, me, block) = (self.size() as usize, self.rank(), size_of_val(send));
        let local = if me == root { expect_len(recv.len(), send.len() * n) } else { Ok(()) };
        let out = bytes_mut(recv);
        if let Some(group) = self.over_messages() {
            group.agree(block, local)?;
            return group.gather(root as usize, bytes(send), out);
        }
        self.in_rounds(block, local, per_round::<T>, |round, r, phase| {
            match phase {
                Write => round.put_own(0, &bytes(send)[r]),
                Read if me == root => {
                    for rank in 0..n {
                        round.get(rank as u32, 0, &mut out[rank * block + r.start..rank * block + r.end]);
                    }
                }
                Read => {}
            }
            Ok(())
        })
    }

    /// Root's `send[rank * recv.len()..]` goes to member `rank`'s `recv`.
    pub fn scatter<T: Pod>(&self, root: u32, send: &[T], recv: &mut [T]) -> Result<(), CollError> {
        self.agree(Fingerprint::new("scatter").field("root", root.into()).field("count", recv.len() as u64).element::<T>())?;
        self.check_rank(root)?;
        let (n, me, block) = (self.size() as usize, self.rank() as usize, size_of_val(recv));
        let local = if me as u32 == root { expect_len(send.len(), recv.len() * n) } else { Ok(()) };
        let out = bytes_mut(recv);
        if let Some(group) = self.over_messages() {
            group.agree(block, local)?;
            return group.scatter(root as usize, bytes(send), out);
        }
        self.in_rounds(block, local, |p| per_round::<T>(p / n), |round, r, phase| {
            match phase {
                Write if me as u32 == root => {
                    for rank in 0..n {
                        round.put_own(
                            rank * r.len(),
                            &bytes(send)[rank * block + r.start..rank * block + r.end],
                        );
                    }
                }
                Read => round.get(root, me * r.len(), &mut out[r]),
                Write => {}
            }
            Ok(())
        })
    }

    /// Block `j` of every member's `send` goes to member `j`'s `recv` at block `rank`.
    pub fn alltoall<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<(), CollError> {
        self.agree(Fingerprint::new("alltoall").field("count", send.len() as u64).element::<T>())?;
        let (n, me) = (self.size() as usize, self.rank() as usize);
        let local = expect_len(recv.len(), send.len())
            .and_then(|()| expect_len(send.len(), send.len().div_ceil(n) * n));
        let block = size_of_val(send) / n;
        let out = bytes_mut(recv);
        if let Some(group) = self.over_messages() {
            group.agree(block, local)?;
            return group.alltoall(bytes(send), out);
        }
        self.in_rounds(block, local, |p| per_round::<T>(p / n), |round, r, phase| {
            for j in 0..n {
                let (lo, hi) = (j * block + r.start, j * block + r.end);
                match phase {
                    Write => round.put_own(j * r.len(), &bytes(send)[lo..hi]),
                    Read => round.get(j as u32, me * r.len(), &mut out[lo..hi]),
                }
            }
            Ok(())
        })
    }

    /// `recv` on `root` becomes the element-wise reduction of every member's `send`.
    pub fn reduce<T: Element>(&self, root: u32, send: &[T], recv: &mut [T], op: Op) -> Result<(), CollError> {
        let fingerprint = Fingerprint::new("reduce").field("root", root.into()).field("op", op_word(op));
        self.agree(fingerprint.field("count", send.len() as u64).element::<T>())?;
        self.check_rank(root)?;
        let me = self.rank();
        let local = T::check(op)
            .map_err(CollError::Op)
            .and_then(|()| if me == root { expect_len(recv.len(), send.len()) } else { Ok(()) });
        if let Some(group) = self.over_messages() {
            group.agree(size_of_val(send), local)?;
            return group.reduce(root as usize, send, recv, op);
        }
        self.in_rounds(size_of_val(send), local, per_round::<T>, |round, r, phase| {
            match phase {
                Write => round.put_own(0, &bytes(send)[r]),
                Read if me == root => reduce_all(round, 0, elems_mut(recv, &r), op),
                Read => {}
            }
            Ok(())
        })
    }

    /// Every member's `recv` becomes the element-wise reduction of every `send`.
    ///
    /// Small vectors: every member combines all contributions itself (one rendezvous a
    /// round). Large ones: each member combines a 1/n slice and publishes it, then
    /// everyone copies the slices out (a rendezvous and a barrier, n times less
    /// combining each).
    pub fn allreduce<T: Element>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<(), CollError> {
        let fingerprint = Fingerprint::new("allreduce").field("op", op_word(op));
        self.agree(fingerprint.field("count", send.len() as u64).element::<T>())?;
        let local = T::check(op).map_err(CollError::Op).and_then(|()| expect_len(recv.len(), send.len()));
        if let Some(group) = self.over_messages() {
            group.agree(size_of_val(send), local)?;
            return group.allreduce(send, recv, op);
        }
        let (n, me) = (self.size() as usize, self.rank() as usize);
        let elem = size_of::<T>();
        // Contributions fill the first half of the payload, reduced slices the second.
        self.in_rounds(size_of_val(send), local, |p| per_round::<T>(p / 2), |round, r, phase| {
            let slices_at = round.payload() / 2;
            if phase == Write {
                round.put_own(0, &bytes(send)[r]);
                return Ok(());
            }
            let acc = elems_mut(recv, &r);
            if r.len() <= ALLREDUCE_SPLIT_BYTES || acc.len() < n {
                reduce_all(round, 0, acc, op);
                return Ok(());
            }
            let len = acc.len();
            let slice = |rank: usize| (len * rank / n)..(len * (rank + 1) / n);
            let mine = slice(me);
            reduce_all(round, mine.start * elem, &mut acc[mine.clone()], op);
            round.put_own(slices_at + mine.start * elem, bytes(&acc[mine]));
            self.barrier_unchecked()?;
            for rank in (0..n).filter(|&rank| rank != me) {
                let theirs = slice(rank);
                round.get(rank as u32, slices_at + theirs.start * elem, bytes_mut(&mut acc[theirs]));
            }
            Ok(())
        })
    }

    /// The reduction of every member's `send` is split by `counts`: member `rank` gets
    /// the `counts[rank]` elements after those of lower ranks, in `recv`.
    pub fn reduce_scatter<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Op,
    ) -> Result<(), CollError> {
        let counts_word = hash_words(counts.iter().map(|&c| c as u64));
        let fingerprint = Fingerprint::new("reduce_scatter").field("op", op_word(op)).field("counts", counts_word);
        self.agree(fingerprint.element::<T>())?;
        let (n, me) = (self.size() as usize, self.rank() as usize);
        let local = T::check(op).map_err(CollError::Op).and_then(|()| {
            expect_len(counts.len(), n)?;
            expect_len(send.len(), counts.iter().sum())?;
            expect_len(recv.len(), counts[me])
        });
        if let Some(group) = self.over_messages() {
            group.agree(size_of_val(send), local)?;
            return group.reduce_scatter(send, recv, counts, op);
        }
        let elem = size_of::<T>();
        let mine_at = counts.iter().take(me).sum::<usize>() * elem;
        let mine_end = mine_at + size_of_val(recv);
        self.in_rounds(size_of_val(send), local, per_round::<T>, |round, r, phase| {
            match phase {
                Write => round.put_own(0, &bytes(send)[r]),
                Read => {
                    let (lo, hi) = (r.start.max(mine_at), r.end.min(mine_end));
                    if lo < hi {
                        let acc = elems_mut(recv, &((lo - mine_at)..(hi - mine_at)));
                        reduce_all(round, lo - r.start, acc, op);
                    }
                }
            }
            Ok(())
        })
    }
}

/// Above this many bytes a round, allreduce splits the combining work across members.
const ALLREDUCE_SPLIT_BYTES: usize = 16 * 1024;

/// The elements of `buf` covered by the byte range `r`.
fn elems_mut<'a, T: Pod>(buf: &'a mut [T], r: &std::ops::Range<usize>) -> &'a mut [T] {
    &mut buf[r.start / size_of::<T>()..r.end / size_of::<T>()]
}

/// `acc` becomes the rank-ordered reduction of every member's elements at `at`.
fn reduce_all<T: Element>(round: &Round<'_, '_>, at: usize, acc: &mut [T], op: Op) {
    if acc.is_empty() {
        return;
    }
    round.get(0, at, bytes_mut(acc));
    let mut incoming = vec![T::zeroed(); acc.len()];
    for rank in 1..round.comm.size() {
        round.get(rank, at, bytes_mut(&mut incoming));
        combine_into(op, acc, &incoming);
    }
}
