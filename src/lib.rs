//! sccemu: an SCC-like many-core chip, emulated by pinned processes over one shared
//! segment.
//!
//! Each process is one core ([`Core::attach`]): it has a rank, a tile and mesh
//! position, an 8 KiB message-passing buffer ([`Core::mpb_put`], [`Core::mpb_get`],
//! flags), and joins barriers. Every blocking call waits through one waiter (spin,
//! yield, futex sleep) and fails with [`JobAborted`], naming the dead rank, when any
//! core dies. [`Job`] runs a function as every core of a job from tests, benches and
//! examples; the `sccrun` launcher runs whole programs.
//!
//! The library is built in layers, each a folder whose `mod.rs` says what it owns;
//! imports run downward only (`docs/ARCHITECTURE.md` draws the picture):
//!
//! - [`protocol`]: lock-free protocols over plain shared bytes (the loom build);
//! - [`segment`]: the mapped segment, its views, MPBs, heap and window table, and the
//!   per-core context every mechanism above takes;
//! - [`timing`]: virtual time (off by default): the chip's cost model and each core's
//!   virtual clock;
//! - [`p2p`], [`rma`], [`coll`]: two-sided messaging, windows, communicators
//!   (coll may use p2p and rma, never the reverse);
//! - [`core`]: [`Core`], the facade whose methods delegate to the layers below;
//! - [`job`]: [`Job`] and the process launcher.
//!
//! Under `--cfg sccemu_loom` only [`sync`] and [`protocol`] are built, over loom's
//! atomics, for the models in `loom-tests`.
//!
//! [`Core::mpb_put`]: segment::CoreContext::mpb_put
//! [`Core::mpb_get`]: segment::CoreContext::mpb_get

#![warn(missing_docs)]

pub mod protocol;
pub mod sync;

/// Everything above the protocols: not part of the loom build.
macro_rules! host_only {
    ($($item:item)*) => { $(#[cfg(not(sccemu_loom))] $item)* };
}

host_only! {
    pub mod coll;
    pub mod core;
    pub mod job;
    pub mod p2p;
    pub mod rma;
    pub mod segment;
    pub mod timing;

    pub use crate::core::lock_word::LockWordError;
    pub use crate::core::{Core, MeshPosition};
    pub use coll::{Allgather, CollError, Comm};
    pub use job::{Job, JobError, JobOutcome, RankFailure};
    pub use p2p::{
        ANY_SOURCE, ANY_TAG, ChannelUnavailable, Footprint, Matched, RESERVED_TAGS, RecvError, Request,
        RequestError, SendError, Source, Status, TagMatch, TestRound, footprint,
    };
    pub use rma::{
        AccError, AccStrategy, Local, LockAllEpoch, LockEpoch, Part, Placement, RmaError, RmaRequest,
        SyncError, Vector, Window, WindowError,
    };
    pub use segment::{Flag, FlagError, MpbError, MpbPool, MpbRegion, Plain, PoolError};
}

pub use protocol::{
    AbortCause, AccElem, AllocError, Assert, AtomicElem, AtomicInt, CorruptError, CorruptKind, ElemKind,
    Element, Group, JobAborted, LockKind, Op, OpError,
};
pub use shm_layout::{ChannelKind, Config, Mesh, WaitPolicy};
