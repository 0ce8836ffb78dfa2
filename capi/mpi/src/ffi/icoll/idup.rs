//! `MPI_Comm_idup`, on the engine of [`super::machine`]: the duplicate's context id is
//! agreed over messages while the program runs on, in rounds, each a state machine step
//! per message awaited.
//!
//! A round, with the group's leader (local rank 0) and, on an intercommunicator, the
//! two groups' leaders talking to each other:
//! 1. every member sends its context bitmap (`comm::context_bits`, as it is now) to the
//!    leader, which ORs them (phase `BITS`); on an intercommunicator the two leaders
//!    swap their groups' ORs and OR them (`REMOTE_BITS`), so both compute alike;
//! 2. the leader sends every member an id free in the OR (below), the *candidate*
//!    (`CANDIDATE`; `NONE` if none is free), and every member *claims* it
//!    (`comm::claim_context`: marks it in use if it still is free here) and tells the
//!    leader whether it could (`CLAIM`); the leaders swap their groups' answers
//!    (`REMOTE_CLAIM`);
//! 3. the leader sends the verdict (`VERDICT`): every claim held, and the leader's
//!    grant of the new communicator's shared area (`sccemu::Comm::grant_area`; across
//!    nodes the members build it over messages instead, `create_group::build`), or
//!    *retry*, or the failure's class (no id free). On retry every member gives its
//!    claim back and starts the next round with a fresh bitmap.
//!
//! Why claims: a bitmap sent in step 1 may be stale by step 2, since the program may
//! create another communicator (say, `MPI_Comm_dup` of the same parent) before it
//! completes this request; that creation's id is then in use at its members, whose
//! claims fail, and the next round's bitmaps show it. A claim succeeds only on a free
//! id and marks it at once, so a later creation at that process avoids it; a round
//! ends with every member holding the id or none holding it. A blocking creation may
//! drive requests in its own waits, between its read of the bitmap and its
//! registration, so a claim made there is not in the bitmap it read: the candidate is
//! one of the *highest* free ids (`comm::high_free`), the blocking creations' the
//! lowest, so that the two meet only when nearly every id is in use. Which of them
//! varies with the parent's id and the round, pseudo-randomly (`mix`): two idups in
//! flight at once (of different parents) whose claims each won at some member retry
//! with different candidates, so they do not collide in every round. (Making idup wait out
//! such a creation instead would deadlock a legal program whose other process waits
//! for the idup before it joins that creation.)
//!
//! Each message type has its own phase and each (source, tag) pair carries one message
//! per round, in order, so rounds never mix. The new handle is reserved at the call
//! (`comm::reserve`: it names no communicator until the request completes, as MPI
//! allows) and filled at completion, with the parent's topology, hints (read at the
//! call), error handler and attributes (copied by their callbacks at completion). A
//! request that fails or is freed unfinished gives its claim and handle back.

use std::ffi::c_int;

use sccemu::Comm;

use crate::comm::{self, CONTEXT_WORDS, ContextBits};
use crate::create_group::{build, from_bytes, to_bytes};
use crate::error::{MpiResult, class, fail};
use crate::ffi::attr::keyval;
use crate::ffi::{Scope, c, entry};
use crate::topology::Topology;

use super::machine::{Incoming, PHASE_IDUP, Protocol, Wire, start};
use super::started;

const BITS: u32 = PHASE_IDUP;
const CANDIDATE: u32 = PHASE_IDUP + 1;
const CLAIM: u32 = PHASE_IDUP + 2;
const VERDICT: u32 = PHASE_IDUP + 3;
const REMOTE_BITS: u32 = PHASE_IDUP + 4;
const REMOTE_CLAIM: u32 = PHASE_IDUP + 5;

/// The candidate when no id is free.
const NONE: u64 = u64::MAX;
/// Verdict kinds.
const OK: u64 = 0;
const RETRY: u64 = 1;
const FAILED: u64 = 2;

/// Where this process is in a round.
enum Step {
    /// A member, for the leader's candidate.
    Candidate(Incoming),
    /// A member, for the leader's verdict.
    Verdict(Incoming),
    /// The leader, for its members' bitmaps (`None`: its own, already in `acc`).
    Bits(Vec<Option<Incoming>>, ContextBits),
    /// The leader, for the remote leader's OR.
    RemoteBits(Incoming, ContextBits),
    /// The leader, for its members' claims; whether all held so far; the candidate.
    Claims(Vec<Option<Incoming>>, bool, u64),
    /// The leader, for the remote leader's claims.
    RemoteClaims(Incoming, bool, u64),
    /// Built.
    Done,
}

/// What the new communicator takes from its parent.
struct Parent {
    handle: c_int,
    /// Its id: alike on every member, and apart from any other parent's at a process.
    context: u32,
    remote: Option<Vec<u32>>,
    topology: Topology,
    hints: crate::info::Pairs,
}

/// The duplication in flight.
struct Idup {
    step: Step,
    parent: Parent,
    /// The reserved handle.
    handle: c_int,
    /// The id this process claimed this round.
    claimed: Option<u32>,
    /// Whether the handle holds the communicator (then the id is its).
    adopted: bool,
    /// Rounds begun.
    round: u32,
}

/// A 64-bit mixing function (splitmix64's finalizer): spreads the candidate choices of
/// different parents and rounds.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The one word of a message.
fn word(buf: &[u8]) -> u64 {
    from_bytes(buf).next().unwrap_or(NONE)
}

/// Whether every message in `slots` is in.
fn all_in(slots: &mut [Option<Incoming>]) -> MpiResult<bool> {
    for i in slots.iter_mut().flatten() {
        if !i.arrived()? {
            return Ok(false);
        }
    }
    Ok(true)
}

impl Idup {
    /// Step 1 of a round (module docs).
    fn begin(&mut self, w: &mut Wire) -> MpiResult<()> {
        self.round += 1;
        let bits = comm::context_bits();
        self.step = if w.rank == 0 {
            let ups = (0..w.size())
                .map(|r| if r == 0 { Ok(None) } else { w.post(r, BITS, CONTEXT_WORDS * 8).map(Some) })
                .collect::<MpiResult<_>>()?;
            Step::Bits(ups, bits)
        } else {
            let next = w.post(0, CANDIDATE, 8)?;
            w.send(0, BITS, &to_bytes(&bits))?;
            Step::Candidate(next)
        };
        Ok(())
    }

    /// Claims `candidate` here (none if `NONE`): whether it held.
    fn claim(&mut self, candidate: u64) -> bool {
        let held = u32::try_from(candidate).is_ok_and(comm::claim_context);
        if held {
            self.claimed = Some(candidate as u32);
        }
        held
    }

    /// Gives this round's claim back.
    fn release(&mut self) {
        if let Some(id) = self.claimed.take() {
            comm::release_context(id);
        }
    }

    /// The leader, with the OR of every bitmap: step 2 (module docs).
    fn pick(&mut self, w: &mut Wire, acc: &ContextBits) -> MpiResult<()> {
        // Both leaders of an intercommunicator pick alike: the same bitmaps, parent
        // and round.
        let pick = mix(u64::from(self.parent.context) << 32 | u64::from(self.round));
        let candidate = comm::high_free(acc, pick).map_or(NONE, u64::from);
        let claims = (0..w.size())
            .map(|r| if r == 0 { Ok(None) } else { w.post(r, CLAIM, 8).map(Some) })
            .collect::<MpiResult<_>>()?;
        for r in 1..w.size() {
            w.send(r, CANDIDATE, &to_bytes(&[candidate]))?;
        }
        let held = self.claim(candidate);
        self.step = Step::Claims(claims, held, candidate);
        Ok(())
    }

    /// The leader, with every claim's answer: step 3 (module docs). Whether built.
    fn judge(&mut self, w: &mut Wire, held: bool, candidate: u64) -> MpiResult<bool> {
        let (kind, value) = match (held, candidate) {
            (true, _) => (OK, Comm::grant_area(w.core.context(), w.size() as usize).word()),
            (false, NONE) => (FAILED, class::INTERN as u64),
            (false, _) => (RETRY, 0),
        };
        for r in 1..w.size() {
            w.send(r, VERDICT, &to_bytes(&[kind, value]))?;
        }
        self.conclude(w, kind, value)
    }

    /// Every process, with the verdict: whether built (else the next round began).
    fn conclude(&mut self, w: &mut Wire, kind: u64, value: u64) -> MpiResult<bool> {
        match kind {
            OK => {
                self.adopt(w, value)?;
                Ok(true)
            }
            RETRY => {
                self.release();
                self.begin(w)?;
                Ok(false)
            }
            _ => {
                self.release();
                fail(value as c_int, "no communicator context id is free on every member")
            }
        }
    }

    /// Builds the communicator from the leader's `grant` into the reserved handle.
    fn adopt(&mut self, w: &Wire, grant: u64) -> MpiResult<()> {
        let Some(id) = self.claimed else { return fail(class::INTERN, "an agreed id not claimed") };
        let child = build(w.core.context(), w.members(), grant)?;
        let p = &self.parent;
        comm::adopt_reserved(self.handle, id, child, p.remote.clone(), p.topology.clone())?;
        self.adopted = true;
        comm::lookup(self.handle)?.set_hints(p.hints.clone());
        crate::errhandler::inherit(p.handle, self.handle);
        // The attributes' copy callbacks decide what the new one gets, as at MPI_Comm_dup.
        if let Err(e) = keyval::copy_all(p.handle, self.handle) {
            let _ = keyval::delete_all(self.handle);
            let _ = comm::free(self.handle);
            return Err(e);
        }
        self.step = Step::Done;
        Ok(())
    }
}

impl Protocol for Idup {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        loop {
            match &mut self.step {
                Step::Done => return Ok(true),
                Step::Candidate(i) => {
                    if !i.arrived()? {
                        return Ok(false);
                    }
                    let candidate = word(&i.buf);
                    let verdict = w.post(0, VERDICT, 16)?;
                    let held = self.claim(candidate);
                    w.send(0, CLAIM, &to_bytes(&[u64::from(held)]))?;
                    self.step = Step::Verdict(verdict);
                }
                Step::Verdict(i) => {
                    if !i.arrived()? {
                        return Ok(false);
                    }
                    let v: Vec<u64> = from_bytes(&i.buf).collect();
                    if self.conclude(w, v[0], v[1])? {
                        return Ok(true);
                    }
                }
                Step::Bits(ups, acc) => {
                    if !all_in(ups)? {
                        return Ok(false);
                    }
                    let mut acc = *acc;
                    for i in ups.iter().flatten() {
                        for (a, b) in acc.iter_mut().zip(from_bytes(&i.buf)) {
                            *a |= b;
                        }
                    }
                    if w.remote_size() > 0 {
                        let theirs = w.post_remote(0, REMOTE_BITS, CONTEXT_WORDS * 8)?;
                        w.send_remote(0, REMOTE_BITS, &to_bytes(&acc))?;
                        self.step = Step::RemoteBits(theirs, acc);
                    } else {
                        self.pick(w, &acc)?;
                    }
                }
                Step::RemoteBits(i, acc) => {
                    if !i.arrived()? {
                        return Ok(false);
                    }
                    let mut acc = *acc;
                    for (a, b) in acc.iter_mut().zip(from_bytes(&i.buf)) {
                        *a |= b;
                    }
                    self.pick(w, &acc)?;
                }
                Step::Claims(claims, held, candidate) => {
                    if !all_in(claims)? {
                        return Ok(false);
                    }
                    let held = *held && claims.iter().flatten().all(|i| word(&i.buf) == 1);
                    let candidate = *candidate;
                    if w.remote_size() > 0 {
                        let theirs = w.post_remote(0, REMOTE_CLAIM, 8)?;
                        w.send_remote(0, REMOTE_CLAIM, &to_bytes(&[u64::from(held)]))?;
                        self.step = Step::RemoteClaims(theirs, held, candidate);
                    } else if self.judge(w, held, candidate)? {
                        return Ok(true);
                    }
                }
                Step::RemoteClaims(i, held, candidate) => {
                    if !i.arrived()? {
                        return Ok(false);
                    }
                    let (held, candidate) = (*held && word(&i.buf) == 1, *candidate);
                    if self.judge(w, held, candidate)? {
                        return Ok(true);
                    }
                }
            }
        }
    }
}

impl Drop for Idup {
    /// A request failed or freed unfinished gives its claim and handle back.
    fn drop(&mut self) {
        if !self.adopted {
            self.release();
            comm::unreserve(self.handle);
        }
    }
}

/// `MPI_Comm_idup`: as `MPI_Comm_dup`, nonblocking (module docs). The handle written to
/// `newcomm` names the duplicate once the request completes.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`, `request` to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Comm_idup")]
pub unsafe extern "C" fn MPI_Comm_idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int) -> c_int {
    entry("MPI_Comm_idup", Scope::Comm(comm), || {
        if newcomm.is_null() {
            return fail(class::ARG, "newcomm is a null pointer");
        }
        started(request, || {
            let c = comm::lookup(comm)?;
            let parent = Parent {
                handle: comm,
                context: c.context,
                remote: c.remote().map(<[u32]>::to_vec),
                topology: c.topology.clone(),
                hints: c.hints(),
            };
            let handle = comm::reserve()?;
            let op = c!(out(newcomm, handle, "newcomm")).and_then(|()| {
                start(c, |w| {
                    let mut op =
                        Idup { step: Step::Done, parent, handle, claimed: None, adopted: false, round: 0 };
                    op.begin(w)?;
                    Ok(op)
                })
            });
            if op.is_err() {
                comm::unreserve(handle);
            }
            op
        })
    })
}
