//! Two-sided messaging with MPI's semantics.
//!
//! Owns the channels that place the job's rings in the segment ([`channel`]), message
//! matching and matched probes ([`matched`]), the progress engine, the per-core engine
//! that threads share and that every other blocking call drives in the background
//! (`engine`), requests and their test rounds ([`request`], [`round`]), the
//! send/receive calls ([`endpoint`], `send`), the single-copy path of large messages
//! (`rendezvous` over `cma`, cross-memory attach), synchronous sends'
//! acknowledgements (`synchronous`), and the message buffers both sides reuse
//! (`spare`).
//!
//! May use: [`crate::segment`] and [`crate::protocol`].

pub mod channel;
pub(crate) mod cma;
pub mod endpoint;
pub(crate) mod engine;
pub mod error;
pub mod matched;
pub(crate) mod matching;
pub(crate) mod progress;
pub(crate) mod rendezvous;
pub mod request;
pub mod round;
pub(crate) mod send;
pub(crate) mod spare;
pub(crate) mod synchronous;
pub(crate) mod timed;

pub use channel::{ChannelUnavailable, Footprint, footprint};
pub use endpoint::{ANY_SOURCE, ANY_TAG, RESERVED_TAGS, RecvError, SendError, Source, Status, TagMatch};
pub use matched::Matched;
pub use request::{Request, RequestError};
pub use round::TestRound;
