//! MPI on sccemu: the C library that lets MPI programs (point-to-point, collectives
//! and one-sided) build with `sccmpicc` and run as the cores of an sccemu job.
//!
//! The library (`libsccmpi.a`, `libsccmpi.so`, header `include/mpi.h`) implements
//! MPI 3.1's interface for those calls on sccemu's own API: communicators and
//! collectives on `sccemu::Comm`, messages on the core's channels, windows,
//! accumulate strategies and ARMW on `sccemu::Window`. It is not a wrapper around
//! another MPI.
//!
//! Layout: safe Rust over handles and slices — `state` (start-up), `handles`,
//! `error`, `errhandler`, `info`, `comm`, `create_group` (communicators that a group's
//! members create alone), `intercomm` (intercommunicators), `intercoll` (their
//! collectives) and `intersplit` (their split and create), `group`, `topology` (with `distgraph`, `MPI_Dist_graph_create`'s
//! exchange), `datatype`, `op`,
//! `request` (with persistent requests), `p2p`, `coll`, `vcoll` (v-collectives),
//! `ordered` (reductions folded here: scan, exscan, user ops), `derived` (derived
//! datatypes), `darray` (distributed-array types), `decode` (how each was made), `win` (windows), `rma` (put, get,
//! accumulate), `winsync` (epochs), `dynamic` (attached memory), `io` (MPI-IO over the machine's
//! files); `ffi` is the C
//! boundary, and the only unsafe code; `launcher` builds and starts MPI programs (`sccmpicc`, `sccmpiexec`).

pub mod coll;
pub mod comm;
pub mod create_group;
pub mod darray;
pub mod datatype;
pub mod decode;
pub mod derived;
pub mod distgraph;
pub mod dynamic;
pub mod errhandler;
pub mod error;
pub mod ffi;
pub mod group;
pub mod handles;
pub mod info;
pub mod intercoll;
pub mod intercomm;
pub mod intersplit;
pub mod io;
pub mod launcher;
pub mod op;
pub mod ordered;
pub mod p2p;
pub mod request;
pub mod rma;
pub mod state;
pub mod topology;
pub mod user_errors;
pub mod vcoll;
pub mod win;
pub mod win_hints;
pub mod winsync;
