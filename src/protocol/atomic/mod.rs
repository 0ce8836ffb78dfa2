//! Atomic read-modify-write on shared words and the accumulate combining built on it:
//! ARMW ([`armw`]), element-wise lock-free accumulate ([`acc_atomic`]), address-striped
//! locks for caller-computes ([`stripes`]), the owner-computes request queue
//! ([`acc_queue`]), the reduction operators ([`op`]) and the value-index pairs of
//! MINLOC and MAXLOC ([`pair`]).

pub mod acc_atomic;
pub mod acc_queue;
pub mod armw;
pub mod op;
pub mod pair;
pub mod stripes;
