//! Asynchronous progress, optional per job ([`ASYNC_PROGRESS_VAR`], `sccrun
//! --async-progress`, [`crate::Job::async_progress`]), like MPICH's
//! `MPIR_CVAR_ASYNC_PROGRESS`: a thread per core that drives the core's background work
//! (its pending sends, its receive channels, announced large messages) while the
//! program computes without calling the library, so that senders waiting for room in
//! this core's channels, or for it to take an announced message, are not stalled.
//!
//! The thread is nothing but a wait that never ends on its own: it waits on the core's
//! own doorbell, with the core's background work, for the stop request. Waits already
//! drive that work between polls and arm it before every sleep (`protocol::waiter`),
//! and every fragment, freed slot or announcement sent to this core rings this
//! doorbell, so the thread sleeps on a futex whenever there is nothing to move and
//! wakes when there is. It waits under the blocking policy whatever the job's, so it
//! never spins on a CPU the cores need.
//!
//! The work is shared with the core's own threads exactly as under
//! `MPI_THREAD_MULTIPLE`: whoever holds the engine's lock moves it, and a waiter that
//! finds it held retries after a yield. In virtual time the thread's work carries no
//! charge: draining and pushing fragments only copy stamps that the calls set.
//!
//! Adoption (`segment::pages_still`): the thread holds the process's pages still for
//! the whole wait, and lets go, yields and waits again whenever a mover asks.
//!
//! Starting: `start` returns once the thread says it is set up, since until then it
//! writes the heap without holding the pages still (`segment::pages_still`).
//!
//! Stopping: the stop flag, then a ring of the doorbell (its fence pairs with the
//! sleeper's, `protocol::waiter`), then a join. An abort ends the wait too.

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::segment::CoreContext;
use crate::segment::pages_still::{StillSleeper, pages_stay};
use crate::sync::{AtomicU32, Ordering, yield_now};

/// The environment variable that turns asynchronous progress on for a core (`1`).
pub const ASYNC_PROGRESS_VAR: &str = "SCCEMU_ASYNC_PROGRESS";

/// Whether this process's core was asked for asynchronous progress.
pub(crate) fn requested() -> bool {
    std::env::var_os(ASYNC_PROGRESS_VAR).is_some_and(|v| v != "0")
}

/// A running progress thread; [`ProgressThread::stop`] ends it.
pub(crate) struct ProgressThread {
    ctx: Arc<CoreContext>,
    /// Nonzero once the thread must stop.
    stop: Arc<AtomicU32>,
    handle: JoinHandle<()>,
}

impl ProgressThread {
    /// Starts the thread for `ctx`, whose background work must be registered.
    pub(crate) fn start(ctx: Arc<CoreContext>) -> std::io::Result<ProgressThread> {
        let (stop, ready) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let (thread_ctx, thread_stop, thread_ready) = (ctx.clone(), stop.clone(), ready.clone());
        let handle = std::thread::Builder::new().name(format!("sccemu-progress-{}", ctx.rank())).spawn(move || {
            let own = &thread_ctx.segment().slot(thread_ctx.rank()).bell;
            let sleeper = StillSleeper::register(thread_ctx.clone());
            // The thread's setup is over (std's and glibc's, which write heap pages a
            // program buffer may share, and the registration). Release: those writes
            // happen before `start` returns, and so before any page a program adopts.
            thread_ready.store(1, Ordering::Release);
            own.ring();
            // Relaxed: the flag publishes nothing; the doorbell's fences make its store
            // visible to the sleeper, and the join orders everything else.
            let stopped = || thread_stop.load(Ordering::Relaxed) != 0;
            loop {
                // The work writes the process's memory, sleeps included (the Box of an
                // armed sleep): pages stay until a mover asks (`segment::pages_still`).
                let stay = pages_stay();
                let waited = thread_ctx.background_waiter().wait_until(own, || (stopped() || sleeper.asked()).then_some(()));
                drop(stay);
                // An abort also ends the wait: the core's own calls report it.
                if waited.is_err() || stopped() {
                    break;
                }
                // Until the mover holds the pages, taking them again would only end
                // the wait at once.
                yield_now();
            }
            drop(sleeper);
            // The last references to heap memory go while pages stay.
            let _stay = pages_stay();
            drop((thread_ctx, thread_stop, thread_ready));
        })?;
        let thread = ProgressThread { ctx, stop, handle };
        // Acquire: pairs with the thread's Release of `ready` (above).
        let own = &thread.ctx.segment().slot(thread.ctx.rank()).bell;
        let started = thread.ctx.waiter().wait_until(own, || {
            (ready.load(Ordering::Acquire) != 0 || thread.handle.is_finished()).then_some(())
        });
        match started {
            Ok(()) if ready.load(Ordering::Acquire) != 0 => Ok(thread),
            Ok(()) => {
                thread.stop();
                Err(std::io::Error::other("the progress thread stopped before it started"))
            }
            Err(aborted) => {
                thread.stop();
                Err(std::io::Error::other(aborted))
            }
        }
    }

    /// Stops the thread and waits for it.
    pub(crate) fn stop(self) {
        self.stop.store(1, Ordering::Relaxed);
        self.ctx.segment().slot(self.ctx.rank()).bell.ring();
        // The thread catches no panic of its own: the background work reports its
        // failures through the core's calls, so a join error only repeats one.
        let _ = self.handle.join();
    }
}
