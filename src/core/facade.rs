//! [`Core`], the facade: one process as one core of the emulated chip.
//!
//! [`Core::attach`] reads the job's environment (set by `sccrun` or a [`crate::Job`]),
//! maps the segment through a [`CoreContext`] and places the two-sided channels. The
//! context's methods (identity, MPB, flags, heap, barrier) are reached through
//! `Deref`; the messaging, window and communicator calls below delegate to `p2p`,
//! `rma` and `coll`, which take the context, never the facade. Dropping the core (or
//! [`Core::finalize`]) marks it finalized: a rank that exits with status 0 without
//! that is reported as a failure, since its peers may be waiting for it.

use std::ops::Deref;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use crate::core::async_progress::{self, ProgressThread};
use crate::coll::{CollError, Comm};
use crate::p2p::channel::Sizes;
use crate::p2p::endpoint::{Endpoint, user_tag};
use crate::p2p::engine::Engine;
use crate::p2p::{
    ChannelUnavailable, Matched, RecvError, Request, RequestError, SendError, Source, Status, TagMatch, TestRound,
};
use crate::protocol::abort::AbortCause;
use crate::protocol::agree::Fingerprint;
use crate::rma::{AccStrategy, Placement, Window, WindowError};
use crate::segment::{AttachError, CoreContext, Plain};

/// Environment variables through which a launcher describes a core to its process.
pub mod env {
    /// The inherited segment fd.
    pub const FD: &str = "SCCEMU_FD";
    /// This process's rank.
    pub const RANK: &str = "SCCEMU_RANK";
    /// The job's number of cores.
    pub const SIZE: &str = "SCCEMU_SIZE";
}

/// One core of a running job.
///
/// # Examples
///
/// A two-core job from Rust ([`crate::Job`] re-executes the program as each core);
/// each core sends its rank to the other:
///
/// ```
/// use sccemu::{Core, Job};
///
/// fn swap(core: &Core, _: ()) -> Result<u32, Box<dyn std::error::Error>> {
///     let peer = 1 - core.rank();
///     core.send(peer, 7, &core.rank().to_le_bytes())?;
///     let mut buf = [0u8; 4];
///     let status = core.recv(peer, 7, &mut buf)?;
///     assert_eq!((status.source, status.len), (peer, 4));
///     core.barrier()?;
///     Ok(u32::from_le_bytes(buf))
/// }
///
/// fn main() {
///     sccemu::job::init(); // a core of the job runs `swap` here and exits
///     let got = Job::new(2).run(&(), swap).unwrap();
///     assert_eq!(got, vec![1, 0]);
/// }
/// ```
pub struct Core {
    ctx: Arc<CoreContext>,
    /// The two-sided engine, also registered as the context's background work.
    p2p: Arc<Engine>,
    /// The asynchronous progress thread, when the job asked for one.
    progress: Mutex<Option<ProgressThread>>,
    /// Ranks on other nodes this core sent one-way MPB requests to since it last
    /// completed them (`remote_mpb`).
    pub(super) remote_dirty: Mutex<Vec<u32>>,
}

fn env_u32(var: &'static str) -> Result<u32, AttachError> {
    let value = std::env::var(var).map_err(|_| AttachError::NotInJob(var))?;
    value.parse().map_err(|_| AttachError::BadEnv { var, value })
}

/// A dropped core stops its progress thread, sends the answers it still owes its
/// senders (a synchronous message's acknowledgement that found no room yet), and
/// writes its part of the trace; its context then marks it finalized.
impl Drop for Core {
    fn drop(&mut self) {
        self.stop_progress();
        self.p2p.settle(&self.ctx);
        crate::timing::finish(self.rank());
    }
}

impl Deref for Core {
    type Target = CoreContext;

    fn deref(&self) -> &CoreContext {
        &self.ctx
    }
}

impl Core {
    /// Attaches to the job that started this process.
    pub fn attach() -> Result<Core, AttachError> {
        let fd = env_u32(env::FD)? as RawFd;
        let (rank, size) = (env_u32(env::RANK)?, env_u32(env::SIZE)?);
        nix::fcntl::fcntl(
            // SAFETY: only probes whether `fd` is open; the borrow ends with the call.
            unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) },
            nix::fcntl::FcntlArg::F_GETFD,
        )
        .map_err(|_| AttachError::BadEnv { var: env::FD, value: fd.to_string() })?;
        // SAFETY: the launcher passed this fd for this process alone, and it is open
        // (probed above); nothing else in the process owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Core::attach_fd(fd, rank, size)
    }

    /// Attaches to the segment behind `fd` as core `rank` of `size`.
    pub fn attach_fd(fd: OwnedFd, rank: u32, size: u32) -> Result<Core, AttachError> {
        let ctx = CoreContext::attach(fd, rank, size, crate::core::pin::pinned_cpu())?;
        crate::timing::init(&ctx).map_err(|e| AttachError::Os(std::io::Error::other(e.to_string())))?;
        // The channels take the first symmetric MPB allocation, before anything else.
        let async_progress = async_progress::requested();
        let p2p = Arc::new(Engine::new(&ctx, async_progress));
        if p2p.place().is_ok() {
            // Every wait of the core (barrier, fence, epoch, lock, flag, collective)
            // now drives its pending sends and receives: MPI's progress rule.
            let fresh = ctx.set_background(p2p.clone());
            debug_assert!(fresh.is_ok(), "a new context has no background work yet");
        }
        let ctx = Arc::new(ctx);
        let progress = if async_progress && p2p.place().is_ok() {
            Some(ProgressThread::start(ctx.clone()).map_err(AttachError::Os)?)
        } else {
            None
        };
        Ok(Core { ctx, p2p, progress: Mutex::new(progress), remote_dirty: Mutex::default() })
    }

    fn stop_progress(&self) {
        if let Some(thread) = self.progress.lock().unwrap_or_else(|e| e.into_inner()).take() {
            thread.stop();
        }
    }

    /// The context that `p2p`, `rma` and `coll` take.
    pub fn context(&self) -> &CoreContext {
        &self.ctx
    }

    /// Aborts the whole job, like `MPI_Abort`: every core's blocked and later calls fail
    /// naming this rank, and this process exits with `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.segment().abort(Some(self.rank()), AbortCause::UserAbort(code));
        std::process::exit(code)
    }

    /// Leaves the job cleanly (dropping the core does the same).
    pub fn finalize(self) {}

    /// Leaves the job (for cores that are never dropped, such as a C library's): sends
    /// the answers it still owes, writes this core's part of a virtual-time trace, then
    /// marks the core finalized.
    pub fn leave(&self) {
        self.stop_progress();
        self.p2p.settle(&self.ctx);
        crate::timing::finish(self.rank());
        self.ctx.leave();
    }

    /// Seconds since the job started: virtual seconds in virtual-time mode
    /// (`sccrun --timing`), else the host's monotonic clock.
    pub fn wtime(&self) -> f64 {
        crate::timing::wtime().unwrap_or_else(|| self.ctx.wtime())
    }

    pub(crate) fn endpoint(&self) -> Endpoint<'_> {
        Endpoint::new(&self.ctx, &self.p2p)
    }

    /// The job's channel sizes, or why it has none.
    pub fn channel(&self) -> Result<Sizes, ChannelUnavailable> {
        self.endpoint().channel()
    }

    /// Sends `data` to `dest` with `tag`; returns when `data` may be reused. Tags from
    /// [`crate::RESERVED_TAGS`] up are the library's own: every send refuses them
    /// ([`SendError::ReservedTag`]), every receive and probe refuses to name one
    /// ([`RecvError::ReservedTag`]), and `ANY_TAG` never matches one.
    pub fn send(&self, dest: u32, tag: u32, data: &[u8]) -> Result<(), SendError> {
        self.endpoint().send(dest, user_tag(tag)?, data)
    }

    /// Sends in the background: returns a request that completes when the message has
    /// left. The bytes that cannot leave at once are copied, so `data` is free again
    /// when this returns.
    pub fn isend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<Request<'_>, SendError> {
        self.endpoint().isend(dest, user_tag(tag)?, data)
    }

    /// [`Core::isend`] of a buffer handed over: a large message (the single-copy
    /// threshold, see the README) is not copied at all; its receiver reads it straight
    /// out of `data`, which the request's core keeps until then, whether or not the
    /// request is waited for. Any other message is copied as by `isend`.
    ///
    /// # Examples
    ///
    /// ```
    /// use sccemu::{Core, Job};
    ///
    /// fn stream(core: &Core, _: ()) -> Result<(), Box<dyn std::error::Error>> {
    ///     if core.rank() == 0 {
    ///         let sends = (0..4u8)
    ///             .map(|i| core.isend_owned(1, 5, vec![i; 1 << 20]))
    ///             .collect::<Result<Vec<_>, _>>()?;
    ///         core.wait_all(sends)?;
    ///     } else {
    ///         for i in 0..4u8 {
    ///             let (data, _) = core.recv_vec(0, 5)?;
    ///             assert!(data.len() == 1 << 20 && data.iter().all(|&b| b == i));
    ///         }
    ///     }
    ///     Ok(())
    /// }
    ///
    /// fn main() {
    ///     sccemu::job::init();
    ///     Job::new(2).run(&(), stream).unwrap();
    /// }
    /// ```
    pub fn isend_owned<B>(&self, dest: u32, tag: u32, data: B) -> Result<Request<'_>, SendError>
    where
        B: AsRef<[u8]> + Send + 'static,
    {
        self.endpoint().isend_owned(dest, user_tag(tag)?, Box::new(data))
    }

    /// The size from which [`Core::isend_owned`] and blocking sends to another core take
    /// the single-copy path (`None`: never), in this process.
    pub fn single_copy_threshold(&self) -> Option<usize> {
        self.p2p.single_copy().threshold()
    }

    /// Sends synchronously, like `MPI_Ssend`: returns once a receive on `dest` has
    /// matched the message, whatever else `dest` is blocked in meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// use sccemu::{Core, Job, Source};
    ///
    /// fn exchange(core: &Core, _: ()) -> Result<(), Box<dyn std::error::Error>> {
    ///     if core.rank() == 0 {
    ///         // Returns once core 1's receive, posted before its barrier, has matched.
    ///         core.ssend(1, 7, b"hello")?;
    ///         core.barrier()?;
    ///     } else {
    ///         let mut buf = [0u8; 5];
    ///         let posted = core.irecv(Source::Rank(0), 7, &mut buf)?;
    ///         core.barrier()?;
    ///         posted.wait()?;
    ///         assert_eq!(&buf, b"hello");
    ///     }
    ///     Ok(())
    /// }
    ///
    /// fn main() {
    ///     sccemu::job::init();
    ///     Job::new(2).run(&(), exchange).unwrap();
    /// }
    /// ```
    pub fn ssend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<(), SendError> {
        self.endpoint().ssend(dest, user_tag(tag)?, data)
    }

    /// [`Core::ssend`] in the background, like `MPI_Issend`: the request completes once
    /// the message has left and a receive has matched it. `data` is copied as by
    /// [`Core::isend`].
    pub fn issend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<Request<'_>, SendError> {
        self.endpoint().issend(dest, user_tag(tag)?, data)
    }

    /// Receives the earliest message matching `src` and `tag` into `buf`.
    pub fn recv(&self, src: impl Into<Source>, tag: impl Into<TagMatch>, buf: &mut [u8]) -> Result<Status, RecvError> {
        self.endpoint().recv(src, tag.into().user()?, buf)
    }

    /// Receives the earliest matching message whatever its size.
    pub fn recv_vec(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<(Vec<u8>, Status), RecvError> {
        self.endpoint().recv_vec(src, tag.into().user()?)
    }

    /// Waits until a message matching `src` and `tag` is available; does not receive it.
    pub fn probe(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Status, RecvError> {
        self.endpoint().probe(src, tag.into().user()?)
    }

    /// The status of an available matching message, without waiting.
    pub fn iprobe(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Option<Status>, RecvError> {
        self.endpoint().iprobe(src, tag.into().user()?)
    }

    /// Waits for a message matching `src` and `tag` and takes it out of matching, like
    /// `MPI_Mprobe`: only the returned handle can receive it, whatever other threads of
    /// this core receive meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// use sccemu::{ANY_SOURCE, ANY_TAG, Core, Job};
    ///
    /// fn exchange(core: &Core, _: ()) -> Result<(), Box<dyn std::error::Error>> {
    ///     if core.rank() == 0 {
    ///         core.send(1, 5, b"sized by the probe")?;
    ///     } else {
    ///         let message = core.mprobe(ANY_SOURCE, ANY_TAG)?;
    ///         let mut buf = vec![0u8; message.status().len];
    ///         let status = message.recv(&mut buf)?;
    ///         assert_eq!((status.source, status.tag, &buf[..]), (0, 5, &b"sized by the probe"[..]));
    ///     }
    ///     Ok(())
    /// }
    ///
    /// fn main() {
    ///     sccemu::job::init();
    ///     Job::new(2).run(&(), exchange).unwrap();
    /// }
    /// ```
    pub fn mprobe(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Matched<'_>, RecvError> {
        self.endpoint().mprobe(src.into(), tag.into().user()?)
    }

    /// [`Core::mprobe`] without waiting, like `MPI_Improbe`: `None` if no matching
    /// message is here.
    pub fn improbe(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Matched<'_>>, RecvError> {
        self.endpoint().improbe(src.into(), tag.into().user()?)
    }

    /// Posts a receive into `buf`; the request completes when a matching message is in.
    pub fn irecv<'a>(
        &'a self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
        buf: &'a mut [u8],
    ) -> Result<Request<'a>, RecvError> {
        self.endpoint().irecv(src, tag.into().user()?, buf)
    }

    /// Sends `data` to `dest` and receives into `buf` from `src`, like `MPI_Sendrecv`:
    /// safe for exchanges in a ring, whatever the sizes.
    pub fn sendrecv(
        &self,
        send: (u32, u32, &[u8]),
        src: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
        buf: &mut [u8],
    ) -> Result<Status, RequestError> {
        let recv_tag = recv_tag.into().user().map_err(RequestError::Recv)?;
        user_tag(send.1).map_err(RequestError::Send)?;
        self.endpoint().sendrecv(send, src, recv_tag, buf)
    }

    /// Completes every request, in order; the first error ends the wait.
    pub fn wait_all(&self, mut requests: Vec<Request<'_>>) -> Result<Vec<Status>, RequestError> {
        // What has arrived completes under one hold of the state (`TestRound`); the
        // rest are waited for in order. An error stays in its request, whose wait
        // reports it in its turn.
        // Not in virtual time, where a round's tests would be charged calls of their own.
        if let Some(mut round) = self.test_round().ok().filter(TestRound::is_held) {
            for r in &mut requests {
                round.test(r).ok();
            }
        }
        requests.into_iter().map(Request::wait).collect()
    }

    /// Holds this core's messaging state to test many of its requests at the cost of
    /// one test ([`TestRound`], whose docs say what the round must not do meanwhile).
    pub fn test_round(&self) -> Result<TestRound<'_>, ChannelUnavailable> {
        TestRound::new(self.endpoint())
    }

    /// Collective: allocates a window whose part on this core holds `len` elements
    /// (zeroed), with lock-free accumulates. Other cores may pass other lengths,
    /// including 0. See [`Window`]. In a job whose ranks span nodes the window spans
    /// them too, in DRAM: the owning node's gateway applies the operations on parts of
    /// other nodes (`docs/MULTINODE.md` says what crosses).
    pub fn window<T: Plain>(&self, len: usize, placement: Placement) -> Result<Window<'_, T>, WindowError> {
        self.window_with(len, placement, AccStrategy::Atomic)
    }

    /// Collective: allocates a window (like [`Core::window`]) whose accumulates use
    /// `strategy`. Every core must pass the same strategy (compared in checking mode,
    /// see [`CoreContext::checking`]).
    pub fn window_with<T: Plain>(
        &self,
        len: usize,
        placement: Placement,
        strategy: AccStrategy,
    ) -> Result<Window<'_, T>, WindowError> {
        if self.ctx.spans_nodes() {
            let everyone = ((0..self.size()).collect(), self.rank());
            let memory = crate::rma::create::Memory::Allocate(placement, len);
            return crate::coll::over_p2p::window_across(&self.ctx, everyone, memory, strategy);
        }
        Window::create_with(&self.ctx, len, placement, strategy)
    }

    /// Collective: the communicator of every core (see [`Comm`]).
    pub fn world(&self) -> Result<Comm<'_>, CollError> {
        Comm::world(&self.ctx)
    }

    /// Collective: waits until every core of the job has entered the barrier. Fails
    /// with [`CollError::Aborted`], naming the dead rank, if a core dies. In checking
    /// mode (see [`CoreContext::checking`]) the cores first compare the call: cores in
    /// another collective call at this point (which would otherwise pass this barrier
    /// inside that call) make every core return [`CollError::Mismatch`], naming them.
    /// ([`CoreContext::barrier`] is the same barrier without that comparison.)
    ///
    /// In virtual time, everyone leaves at the latest arrival plus the chip's cost of an
    /// atomic on the barrier's word and of reading its release, both in DRAM near core
    /// 0 (see `timing::meet`).
    pub fn barrier(&self) -> Result<(), CollError> {
        self.ctx.agree_world(&Fingerprint::new("barrier"))??;
        let Some(op) = crate::timing::begin(crate::timing::Category::Sync, "barrier") else {
            return Ok(self.ctx.barrier()?);
        };
        let c = op.clock();
        let parity = (self.ctx.barriers_entered() % 2) as u32;
        crate::timing::meet::arrive(&op, c.barrier_stamp(self.rank(), parity), c.dram_line_ps(0));
        self.ctx.barrier()?;
        let arrivals = (0..self.size()).map(|r| c.barrier_stamp(r, parity));
        crate::timing::meet::leave(&op, arrivals, c.dram_line_ps(0));
        Ok(())
    }
}
