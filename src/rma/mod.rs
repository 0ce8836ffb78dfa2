//! One-sided communication: windows and everything done through them.
//!
//! Owns window creation ([`create`]) and free ([`window`]) over a team of cores (the
//! job, or a communicator's members: `team`), load/store access to parts ([`part`]),
//! put/get/ARMW and request-based and strided transfers ([`transfer`]), their entry points for
//! bindings ([`quick`]), epochs and their synchronisation ([`epoch`], with
//! the fence, PSCW and lock protocols of `protocol`), RAII lock epochs ([`lock`]),
//! accumulate and its strategies ([`accumulate`], `acc_view`), the owner-computes
//! agent ([`owner`]), windows whose members span nodes (`remote`) and the errors of it
//! all ([`error`]).
//!
//! May use: [`crate::segment`] and [`crate::protocol`].

pub(crate) mod acc_view;
pub mod accumulate;
pub(crate) mod control;
pub mod create;
pub mod epoch;
pub mod error;
pub mod lock;
pub mod owner;
pub mod part;
pub mod quick;
pub(crate) mod remote;
pub(crate) mod team;
pub(crate) mod team_checks;
pub(crate) mod timed;
pub mod transfer;
pub mod window;

pub use accumulate::{AccError, AccStrategy};
pub use error::{RmaError, SyncError, WindowError};
pub use lock::{LockAllEpoch, LockEpoch};
pub use transfer::{Request as RmaRequest, Vector};
pub use part::{Local, Part};
pub use window::{Placement, Window};
