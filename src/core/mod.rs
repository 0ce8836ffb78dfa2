//! [`Core`]: one process as one core of the emulated chip, and the facade users meet.
//!
//! Owns attaching to the job ([`facade`]), pinning to a CPU ([`pin`]), the optional
//! asynchronous progress thread ([`async_progress`]), the MPBs and flags of ranks on
//! other nodes (`remote_mpb`) and test-and-set words on any node ([`lock_word`]). The
//! core's
//! identity, clock and MPB live in its [`crate::segment::CoreContext`], which `Core`
//! derefs to; its messaging, window and communicator methods delegate to `p2p`, `rma`
//! and `coll`. Nothing below this layer names `Core`.
//!
//! May use: every layer below it ([`crate::coll`], [`crate::p2p`], [`crate::rma`],
//! [`crate::segment`], [`crate::protocol`]).

pub mod async_progress;
pub mod facade;
pub mod pin;
pub mod lock_word;
mod remote_mpb;

pub use crate::segment::MeshPosition;
pub use facade::{Core, env};
