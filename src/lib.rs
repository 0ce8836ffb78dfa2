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
//! Under `--cfg sccemu_loom` only the protocol modules are built, over loom's atomics,
//! for the models in `loom-tests`.

pub mod abort;
pub mod acc_atomic;
pub mod acc_queue;
pub mod armw;
pub mod barrier;
pub mod epoch;
pub mod fence;
pub mod flag;
pub mod frag;
pub mod freelist;
pub mod group;
pub mod heap;
pub mod op;
pub mod payload;
pub mod perpeer;
pub mod pscw;
pub mod rwlock;
pub mod srb;
pub mod stripes;
pub mod sync;
pub mod waiter;

#[cfg(not(sccemu_loom))]
mod acc_view;
#[cfg(not(sccemu_loom))]
pub mod accumulate;
#[cfg(not(sccemu_loom))]
pub mod allgather;
#[cfg(not(sccemu_loom))]
pub mod channel;
#[cfg(not(sccemu_loom))]
mod clock;
#[cfg(not(sccemu_loom))]
pub mod coll;
#[cfg(not(sccemu_loom))]
pub mod collective_alloc;
#[cfg(not(sccemu_loom))]
pub mod comm;
#[cfg(not(sccemu_loom))]
pub mod core;
#[cfg(not(sccemu_loom))]
pub mod job;
#[cfg(not(sccemu_loom))]
pub mod launcher;
#[cfg(not(sccemu_loom))]
pub mod lock;
#[cfg(not(sccemu_loom))]
mod matching;
#[cfg(not(sccemu_loom))]
pub mod mpb;
#[cfg(not(sccemu_loom))]
pub mod owner;
#[cfg(not(sccemu_loom))]
pub mod p2p;
#[cfg(not(sccemu_loom))]
pub mod pin;
#[cfg(not(sccemu_loom))]
mod progress;
#[cfg(not(sccemu_loom))]
pub mod request;
#[cfg(not(sccemu_loom))]
pub mod rma;
#[cfg(not(sccemu_loom))]
pub mod segment;
#[cfg(not(sccemu_loom))]
pub mod view;
#[cfg(not(sccemu_loom))]
pub mod window;
#[cfg(not(sccemu_loom))]
pub mod winerror;
#[cfg(not(sccemu_loom))]
pub mod wintable;

#[cfg(not(sccemu_loom))]
pub use crate::core::{Core, MeshPosition};
pub use abort::{AbortCause, JobAborted};
pub use acc_atomic::AccElem;
#[cfg(not(sccemu_loom))]
pub use accumulate::{AccError, AccStrategy};
#[cfg(not(sccemu_loom))]
pub use allgather::Allgather;
pub use armw::{AtomicElem, AtomicInt};
#[cfg(not(sccemu_loom))]
pub use channel::{ChannelUnavailable, Footprint, footprint};
#[cfg(not(sccemu_loom))]
pub use comm::{CollError, Comm};
pub use fence::Assert;
pub use frag::{CorruptError, CorruptKind};
pub use freelist::AllocError;
pub use group::Group;
#[cfg(not(sccemu_loom))]
pub use job::{Job, JobError, JobOutcome, RankFailure};
#[cfg(not(sccemu_loom))]
pub use lock::{LockAllEpoch, LockEpoch};
#[cfg(not(sccemu_loom))]
pub use mpb::{Flag, FlagError, MpbError, MpbRegion};
pub use op::{Element, Op, OpError};
#[cfg(not(sccemu_loom))]
pub use p2p::{ANY_SOURCE, ANY_TAG, RecvError, SendError, Source, Status, TagMatch};
#[cfg(not(sccemu_loom))]
pub use request::{Request, RequestError};
#[cfg(not(sccemu_loom))]
pub use rma::{Request as RmaRequest, Vector};
pub use rwlock::LockKind;
pub use shm_layout::{ChannelKind, Config, Mesh, WaitPolicy};
#[cfg(not(sccemu_loom))]
pub use view::Plain;
#[cfg(not(sccemu_loom))]
pub use window::{Local, Part, Placement, Window};
#[cfg(not(sccemu_loom))]
pub use winerror::{RmaError, SyncError, WindowError};
