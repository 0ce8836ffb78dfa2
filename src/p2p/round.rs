//! Testing many requests of one core under one hold of its messaging state
//! ([`Core::test_round`]), as `MPI_Waitall` and `MPI_Testall` do with theirs.
//!
//! Protocol: a round locks the core's state at its first test that needs it; dropping
//! the round releases the state. Each [`TestRound::test`] is the test [`Request::test`]
//! makes, under that one hold: it drains the channel until its own receive has its
//! message (a message that an earlier posted receive matches goes to that receive, to
//! be picked up by its own test), pushes queued sends and checks its request; except
//! that once a test's progress moved nothing (the channel was empty and no queued send
//! could go), the round's later tests only check their requests, as if tested at that
//! instant. So n tests cost one lock, one unlock and one channel context, where n calls
//! of [`Request::test`] cost n of each. A round that starts with nothing new for open
//! receives (`Engine::nothing_new`, read once when it is made) tests its open receives
//! without the state, as of that instant, as [`Request::test`] does: a poll of n open
//! receives that have nothing to complete then locks nothing. Draining once for the
//! whole round and only picking up in each test was tried, and cost more: every
//! message then went through the posted receive's queued copy, where a receive tested
//! in posting order takes its message straight into its buffer. (2 cores, 8 B streamed
//! in windows of 64 through the MPI library, callgrind on the receiver, and the timed
//! rows: `docs/bench/2026-11-27-round/`.)
//!
//! Invariants:
//! - a test's outcome is the one [`Request::test`] would give at that point, or, after
//!   a test that found nothing to move, at that test's point (for an open receive of a
//!   round that started quiet, at the round's start): the same code makes it;
//! - only requests of the round's own core are tested: another core's is left as it is
//!   (`None`), since holding two cores' states at once could deadlock against a thread
//!   that takes them in the other order;
//! - in virtual time a round holds nothing ([`TestRound::is_held`]) and each of its
//!   tests is the request's own [`Request::test`], with its own lock and its charged
//!   call: there the host's cost does not count, and what a test costs in virtual
//!   time must not depend on how it was made (the library's waits skip rounds there);
//! - while a round is live its thread must not use the core's messaging otherwise (a
//!   call, a test, the drop of an unfinished request): that would wait for the state
//!   the round holds. Like a second borrow of a `RefCell`, it panics instead of
//!   hanging once the round holds the state (`Engine::lock_contended` knows the
//!   round's thread); other threads wait for the round's end as for any holder.
//!
//! [`Core::test_round`]: crate::Core::test_round

use crate::p2p::channel::ChannelUnavailable;
use crate::p2p::endpoint::{Endpoint, Status};
use crate::p2p::engine::Locked;
use crate::p2p::progress::Ctx;
use crate::p2p::request::{Request, RequestError};
use crate::timing;

/// One hold of a core's messaging state, under which many of its requests are tested
/// (module docs). Made by [`Core::test_round`](crate::Core::test_round).
///
/// # Examples
///
/// ```
/// use sccemu::{Core, Job};
///
/// fn overlap(core: &Core, _: ()) -> Result<u32, Box<dyn std::error::Error>> {
///     let peer = 1 - core.rank();
///     let mut buf = [0u8; 4];
///     let mut recv = core.irecv(peer, 7, &mut buf)?;
///     let mut send = core.isend(peer, 7, &core.rank().to_le_bytes())?;
///     loop {
///         // Both tested at the cost of one test; the round ends at the block's end.
///         let mut round = core.test_round()?;
///         if round.test(&mut recv)?.is_some() && round.test(&mut send)?.is_some() {
///             break;
///         }
///     }
///     drop((recv, send));
///     Ok(u32::from_le_bytes(buf))
/// }
///
/// fn main() {
///     sccemu::job::init(); // a core of the job runs `overlap` here and exits
///     assert_eq!(Job::new(2).run(&(), overlap).unwrap(), vec![1, 0]);
/// }
/// ```
pub struct TestRound<'c> {
    ep: Endpoint<'c>,
    /// False in virtual time, where the round holds nothing (module docs).
    real: bool,
    /// Whether the open receives had nothing new when the round was made.
    quiet: bool,
    /// The held state, from the first test that needs it.
    held: Option<(Ctx<'c>, Locked<'c>)>,
    /// Whether tests still make progress: not once one found nothing to move.
    drive: bool,
}

impl<'c> TestRound<'c> {
    pub(crate) fn new(ep: Endpoint<'c>) -> Result<TestRound<'c>, ChannelUnavailable> {
        ep.engine.place()?;
        let real = timing::clock().is_none();
        let quiet = real && ep.engine.nothing_new(ep.ctx);
        Ok(TestRound { ep, real, quiet, held: None, drive: true })
    }

    /// Whether the round's tests are made under it: not in virtual time (module
    /// docs), where each of its tests is a [`Request::test`] of its own.
    pub fn is_held(&self) -> bool {
        self.real
    }

    /// Tests `request` as [`Request::test`] does, under the round's hold: `Some`
    /// with its status once complete (again on every later test), `None` if not yet,
    /// or if it is another core's (module docs).
    pub fn test(&mut self, request: &mut Request<'_>) -> Result<Option<Status>, RequestError> {
        if !self.real {
            // Virtual time: nothing held, the request's own test.
            return request.test();
        }
        if !request.is_of(&self.ep) {
            return Ok(None);
        }
        if let Some(settled) = request.settle() {
            return settled;
        }
        if self.quiet && request.is_open_recv() {
            return Ok(None);
        }
        let (cx, st) = match &mut self.held {
            Some(held) => held,
            None => {
                let held = self.ep.p2p().map_err(|e| request.unavailable(e))?;
                self.ep.engine.enter_round();
                self.held.insert(held)
            }
        };
        request.test_held(cx, st, &mut self.drive)
    }
}

impl Drop for TestRound<'_> {
    fn drop(&mut self) {
        if self.held.is_some() {
            self.ep.engine.leave_round();
        }
    }
}
