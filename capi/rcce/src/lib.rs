//! RCCE on sccemu: the C library that lets programs written for the SCC's RCCE 1.0.13
//! build unchanged and run as the cores of an sccemu job.
//!
//! The library (`librcce.a`, `librcce.so`) implements RCCE's interface and its
//! protocols on sccemu's MPBs, doorbells and waiter: 8 KiB of MPB per core in 32 B
//! lines with line 0 reserved, byte or single-bit flags in MPB lines, the synchronous
//! per-chunk send and receive, linear collectives, test-and-set registers, shared DRAM
//! and the power-management model. So a program's timing and deadlocks follow the
//! chip's, and no core ever busy-waits. Headers are `include/RCCE.h` and
//! `include/RCCE_lib.h`; `sccemu-cc` compiles and links against them, `rccerun`
//! launches.
//!
//! One library serves every build of a program: the variant-specific functions are
//! exported under their own names (`RCCE_send_gory`, `RCCE_init_variant`, ...) and the
//! headers pick them with macros, as `include/RCCE.h` documents.
//!
//! Layout: `state` (the per-process state and its start-up), `alloc`, `flags`,
//! `registers`, `message`, `collective`, `power`, `launch_args` hold the logic in safe
//! Rust over MPB offsets, `nodes` what changes when a job spans nodes; `ffi` is the C boundary, and the only unsafe code;
//! `launcher` builds and starts RCCE programs (`sccemu-cc`, `rccerun`).

pub mod alloc;
pub mod codes;
pub mod collective;
pub mod ffi;
pub mod flags;
pub mod launch_args;
pub mod launcher;
pub mod message;
pub mod nodes;
pub mod power;
pub mod registers;
pub mod state;
pub mod vtime;

/// Ends this UE after a failure RCCE has no code for (the job aborting, a checking-mode
/// mismatch): one line on stderr, then exit 1, which aborts the rest of the job.
pub fn fatal(rcce: &state::Rcce, why: &str) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    sccemu::job::say(&format!("RCCE UE {}: {why}\n", rcce.rank));
    std::process::exit(1)
}
