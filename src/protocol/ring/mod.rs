//! The two-sided rings: the post-K shared receive buffer ([`srb`]), RCKMPI's per-peer
//! MPB slots ([`perpeer`]), the fragment header both carry ([`frag`]), and their sizes
//! for a job ([`sizing`]).
//!
//! Placement in the segment and the message layer on top live in `p2p`.

pub mod frag;
pub mod perpeer;
pub mod sizing;
pub mod srb;
