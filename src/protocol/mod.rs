//! Lock-free protocols over plain shared bytes: the bottom layer.
//!
//! Owns every protocol that cores run against each other through shared memory: the
//! waiter (spin, yield, futex), job abort, flags, the barrier, fence, post-start-
//! complete-wait, the reader-writer ticket lock and `lock_all`, test-and-set words, last-one-out release
//! ([`last_out`]), argument agreement for
//! checking mode ([`agree`]), the two-sided rings ([`ring`]), the shared allocators
//! ([`alloc`]) and the atomic and accumulate combining ([`atomic`]).
//!
//! May use: [`crate::sync`] (std atomics, or loom's under `--cfg sccemu_loom`) and
//! `shm_layout`, nothing else of the crate. Protocol state is a `#[repr(C)]` view that
//! the segment places in the mapping in production and loom models build in an `Arc`;
//! payload bytes go through [`payload::Payload`]. This layer is exactly what the loom
//! build compiles, so every model drives this code and no copy of it.

pub mod abort;
pub mod agree;
pub mod alloc;
pub mod atomic;
pub mod barrier;
pub mod fence;
pub mod flag;
pub mod group;
pub mod last_out;
pub mod lock_all;
pub mod payload;
pub mod pscw;
pub mod ring;
pub mod rwlock;
pub mod test_and_set;
pub mod waiter;

pub use abort::{AbortCause, JobAborted};
pub use alloc::freelist::AllocError;
pub use atomic::acc_atomic::AccElem;
pub use atomic::armw::{AtomicElem, AtomicInt};
pub use atomic::op::{ElemKind, Element, Op, OpError};
pub use fence::Assert;
pub use group::Group;
pub use ring::frag::{CorruptError, CorruptKind};
pub use rwlock::LockKind;
