//! [`Core`]: one process as one core of the emulated chip.
//!
//! Owns attaching to the job, the core's identity (rank, size, tile, mesh position),
//! pinning to a CPU ([`pin`]) and the clock. `Core` is the facade users meet: its
//! messaging, window, collective and MPB methods delegate to the layers that
//! implement them.
//!
//! May use: every layer below it ([`crate::segment`], [`crate::p2p`], [`crate::rma`],
//! [`crate::coll`], [`crate::protocol`]).

pub mod facade;
pub mod pin;

pub use facade::{Core, MeshPosition, env};
