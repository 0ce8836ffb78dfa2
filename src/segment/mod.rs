//! The mapped segment: the one memfd a job shares, and typed access to it.
//!
//! Owns the mapping and its validation ([`mapping`]), typed views of shared memory and
//! the byte copies in and out of it ([`view`]), the per-core message-passing buffers
//! ([`mpb`]) and the MPB window pool of windows over communicators ([`mpb_pool`]), the shared heap's collective allocation ([`collective_alloc`]), private
//! memory mapped onto heap pages ([`adopt`]) and keeping the library's threads off pages while they move (`pages_still`), the reclaiming of windows dropped without
//! free ([`reclaim`]), the window table ([`wintable`]), the rings' memory as the ring protocol sees it
//! (`ring`) and the job's host clock (`clock`).
//!
//! May use: [`crate::protocol`] and [`crate::sync`]. Every offset comes from
//! `shm_layout::Layout`; this layer and `view` hold the crate's unsafe code for shared
//! memory.

pub mod adopt;
pub(crate) mod clock;
pub mod collective_alloc;
pub mod context;
pub mod mapping;
pub mod mpb;
pub mod mpb_pool;
pub(crate) mod pages_still;
pub mod reclaim;
pub(crate) mod ring;
pub mod view;
pub mod wait_mark;
pub mod wintable;

pub use context::{CoreContext, MeshPosition};
pub use mapping::{AttachError, CreateError, Segment, SharedBytes};
pub use mpb::{Flag, FlagError, MpbError, MpbRegion};
pub use mpb_pool::{MpbPool, PoolError};
pub use view::Plain;
pub use wait_mark::{MarkGuard, WaitMark};
