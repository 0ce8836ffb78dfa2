//! Communicators and collectives.
//!
//! Owns [`Comm`] (world, split and subsets built by their members alone, each with its
//! own area of the heap, and windows over a communicator's members: `Comm::window`),
//! the collectives (barrier, bcast, reduce, allreduce, reduce_scatter, gather, scatter,
//! alltoall: [`collectives`]) and the allgather algorithms ([`allgather`]).
//!
//! May use: [`crate::p2p`], [`crate::rma`], [`crate::segment`] and
//! [`crate::protocol`]; p2p and rma never use coll.

pub mod allgather;
pub mod collectives;
pub mod comm;
pub(crate) mod timed;

pub use allgather::Allgather;
pub use comm::{CollError, Comm, Grant};
