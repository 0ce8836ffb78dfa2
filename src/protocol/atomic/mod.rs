//! Atomic read-modify-write on shared words and the accumulate combining built on it:
//! ARMW ([`armw`]), element-wise lock-free accumulate ([`acc_atomic`]), address-striped
//! locks for caller-computes ([`stripes`]), the owner-computes request queue
//! ([`acc_queue`]) and the reduction operators ([`op`]).

pub mod acc_atomic;
pub mod acc_queue;
pub mod armw;
pub mod op;
pub mod stripes;
