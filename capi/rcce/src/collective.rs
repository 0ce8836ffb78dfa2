//! RCCE's communicators and its linear collectives.
//!
//! A communicator is what its C struct says: its members (world ranks, ascending), the
//! caller's place among them, and two flags, `gather` and `release`, allocated
//! symmetrically when it was made. `RCCE_comm_split` finds the members without
//! communication (every UE evaluates the colour function for every rank), then waits
//! in a world barrier until every UE has cleared its copies of the new flags.
//!
//! Barrier (linear, sense-reversing). Each call flips the communicator's sense. A
//! member sets `gather` to the sense in its own MPB and rings the root (the first
//! member); the root waits until every member's `gather` reads the sense, then sets
//! `release` to it in every member's MPB; members wait for their `release`. Because a
//! member only writes the next sense after seeing this one's release, no reset is
//! needed between barriers.
//!
//! Across nodes the root cannot wait on its members' flags, which lie in other nodes'
//! MPBs, so the gather runs down a chain instead: the last member sets `gather` in its
//! predecessor's MPB, and each member, once its own `gather` reads the sense, passes it
//! on to its predecessor, down to the root; the release is the same. Every wait is on
//! the waiter's own flag. A member's `gather` is set to a sense only by its successor,
//! who entered this barrier; it reaches the next sense only in the next barrier, which
//! the successor enters after this one's release, so no reset is needed either.
//!
//! Broadcast, reduce and allreduce are linear over the synchronous send and receive:
//! the root sends to or receives from each member in turn. As in RCCE, the root of a
//! reduce receives every contribution into its own input buffer.

use sccemu::segment::WaitMark;

use crate::codes::{Error, ReduceOp, ReduceType};
use crate::flags::Flag;
use crate::state::Rcce;

/// A communicator, as read from (or written to) its C struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    /// World ranks of the members, ascending.
    pub members: Vec<u32>,
    /// The caller's index in `members`.
    pub my_rank: usize,
    /// The barrier's flags.
    pub gather: Flag,
    /// See `gather`.
    pub release: Flag,
}

impl Rcce {
    /// `RCCE_COMM_WORLD`.
    pub fn world(&self) -> Comm {
        Comm {
            members: (0..self.size).collect(),
            my_rank: self.rank as usize,
            gather: self.world.0,
            release: self.world.1,
        }
    }

    /// Checks a communicator read from C: members are UEs, ascending, the caller among
    /// them, and its flags allocated.
    pub fn check_comm(&self, comm: &Comm) -> Result<(), Error> {
        let ordered = comm.members.windows(2).all(|w| w[0] < w[1]);
        let inside = comm.members.iter().all(|&m| m < self.size);
        if !ordered || !inside || comm.members.get(comm.my_rank) != Some(&self.rank) {
            return Err(Error::CommUndefined);
        }
        self.check_flag(comm.gather)?;
        self.check_flag(comm.release)?;
        Ok(())
    }

    fn next_sense(&self, comm: &Comm) -> bool {
        let mut senses = self.lock(&self.senses);
        let sense = match senses.iter_mut().find(|(flag, _)| *flag == comm.gather) {
            Some((_, s)) => {
                *s ^= 1;
                *s
            }
            None => {
                senses.push((comm.gather, 1));
                1
            }
        };
        sense == 1
    }

    /// `RCCE_barrier`.
    pub fn barrier(&self, comm: &Comm) {
        let sense = self.next_sense(comm);
        let root = comm.members[0];
        let mark = WaitMark::Collective { root };
        if self.spans {
            return self.chain_barrier(comm, sense, mark);
        }
        if self.rank == root {
            for &m in &comm.members[1..] {
                self.wait_flag(comm.gather, sense, m, mark);
            }
            for &m in &comm.members[1..] {
                self.flag_write(comm.release, sense, m);
            }
        } else {
            self.flag_write(comm.gather, sense, self.rank);
            self.core.ring(root);
            self.wait_flag(comm.release, sense, self.rank, mark);
        }
    }

    /// The barrier across nodes (module docs).
    fn chain_barrier(&self, comm: &Comm, sense: bool, mark: WaitMark) {
        let me = comm.my_rank;
        if me + 1 < comm.members.len() {
            self.wait_flag(comm.gather, sense, self.rank, mark);
        }
        if me == 0 {
            for &m in &comm.members[1..] {
                self.flag_write(comm.release, sense, m);
            }
        } else {
            self.flag_write(comm.gather, sense, comm.members[me - 1]);
            self.wait_flag(comm.release, sense, self.rank, mark);
        }
    }

    /// `RCCE_bcast` from `comm.members[root]`.
    pub fn bcast(&self, buf: &mut [u8], root: usize, comm: &Comm) -> Result<(), Error> {
        let root = *comm.members.get(root).ok_or(Error::Id)?;
        if self.rank == root {
            for &m in comm.members.iter().filter(|&&m| m != root) {
                self.send(buf, self.channel(self.rank, m)?, m)?;
            }
            Ok(())
        } else {
            self.recv(buf, self.channel(root, self.rank)?, root)
        }
    }

    /// `RCCE_reduce` to `comm.members[root]`: `out` gets the result there, and `input`
    /// is overwritten by the contributions it receives.
    pub fn reduce(
        &self,
        input: &mut [u8],
        out: &mut [u8],
        ty: ReduceType,
        op: ReduceOp,
        root: usize,
        comm: &Comm,
    ) -> Result<(), Error> {
        let root = *comm.members.get(root).ok_or(Error::Id)?;
        if self.rank != root {
            return self.send(input, self.channel(self.rank, root)?, root);
        }
        out.copy_from_slice(input);
        for &m in comm.members.iter().filter(|&&m| m != root) {
            self.recv(input, self.channel(m, root)?, m)?;
            combine(out, input, ty, op);
        }
        Ok(())
    }

    /// `RCCE_allreduce`: a reduce to the first member, then its broadcast.
    pub fn allreduce(
        &self,
        input: &mut [u8],
        out: &mut [u8],
        ty: ReduceType,
        op: ReduceOp,
        comm: &Comm,
    ) -> Result<(), Error> {
        self.reduce(input, out, ty, op, 0, comm)?;
        self.bcast(out, 0, comm)
    }

    /// `RCCE_comm_split`: the members whose colour equals this UE's, with new flags.
    pub fn split(&self, color: impl Fn(u32) -> i32) -> Result<Comm, Error> {
        let mine = color(self.rank);
        let members: Vec<u32> = (0..self.size).filter(|&r| r == self.rank || color(r) == mine).collect();
        let my_rank = members.iter().position(|&m| m == self.rank).expect("self is a member");
        let gather = self.flag_alloc()?;
        let release = self.flag_alloc().inspect_err(|_| {
            let _ = self.flag_free(gather);
        })?;
        // Each UE cleared its own copies of the new flags; until every UE has, a copy
        // may still hold the last value of a freed communicator that used the same
        // slots, which the new barrier would mistake for an arrival.
        self.barrier(&self.world());
        Ok(Comm { members, my_rank, gather, release })
    }

    /// `RCCE_comm_free`.
    pub fn comm_free(&self, comm: &Comm) -> Result<(), Error> {
        self.lock(&self.senses).retain(|(flag, _)| *flag != comm.gather);
        self.flag_free(comm.gather)?;
        self.flag_free(comm.release)
    }
}

/// `acc[i] = acc[i] op x[i]` over elements of `ty` in native byte order.
pub fn combine(acc: &mut [u8], x: &[u8], ty: ReduceType, op: ReduceOp) {
    // Integers wrap, as C's do in practice, instead of trapping in a debug build.
    macro_rules! fold {
        ($t:ty, $add:expr, $mul:expr) => {{
            const N: usize = size_of::<$t>();
            for (a, b) in acc.chunks_exact_mut(N).zip(x.chunks_exact(N)) {
                let (p, q) =
                    (<$t>::from_ne_bytes(a.try_into().unwrap()), <$t>::from_ne_bytes(b.try_into().unwrap()));
                let r = match op {
                    ReduceOp::Sum => $add(p, q),
                    ReduceOp::Prod => $mul(p, q),
                    ReduceOp::Min => {
                        if q < p {
                            q
                        } else {
                            p
                        }
                    }
                    ReduceOp::Max => {
                        if q > p {
                            q
                        } else {
                            p
                        }
                    }
                };
                a.copy_from_slice(&r.to_ne_bytes());
            }
        }};
    }
    match ty {
        ReduceType::Int => fold!(i32, i32::wrapping_add, i32::wrapping_mul),
        ReduceType::Long => fold!(i64, i64::wrapping_add, i64::wrapping_mul),
        ReduceType::Float => fold!(f32, |p, q| p + q, |p, q| p * q),
        ReduceType::Double => fold!(f64, |p, q| p + q, |p, q| p * q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_folds_every_type() {
        let mut acc: Vec<u8> = [3i32, -4].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let x: Vec<u8> = [5i32, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        combine(&mut acc, &x, ReduceType::Int, ReduceOp::Max);
        assert_eq!(acc, [5i32, 7].iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>());
        let mut d: Vec<u8> = 1.5f64.to_ne_bytes().to_vec();
        combine(&mut d, &2.0f64.to_ne_bytes(), ReduceType::Double, ReduceOp::Prod);
        assert_eq!(f64::from_ne_bytes(d.try_into().unwrap()), 3.0);
    }
}
