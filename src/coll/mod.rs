//! Communicators and collectives.
//!
//! Owns [`Comm`] (world, split and subsets built by their members alone, each with its
//! own area of the heap, and windows over a communicator's members: `Comm::window`),
//! the collectives (barrier, bcast, reduce, allreduce, reduce_scatter, gather, scatter,
//! alltoall: [`collectives`]) and the allgather algorithms ([`allgather`]). A
//! communicator of a job that spans nodes runs them all over two-sided messages
//! instead (`over_p2p`).
//!
//! May use: [`crate::p2p`], [`crate::rma`], [`crate::segment`] and
//! [`crate::protocol`]; p2p and rma never use coll.

pub mod allgather;
pub mod collectives;
pub mod comm;
pub(crate) mod over_p2p;
pub(crate) mod timed;

pub use allgather::Allgather;
pub use comm::{CollError, Comm, Grant};
