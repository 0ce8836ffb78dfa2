//! One sccemu job over several nodes, the nodes' side: the engine between the nodes'
//! gateways, and one node's process. Only with the `multinode` feature.
//!
//! A job of N ranks spans K nodes in contiguous blocks ([`sccemu::job::node::NodeSpec`]:
//! as even as they go, or as `--map` says). Each node is one `sccrun-node` process
//! (`sccrun --nodes K` runs K of them under mpirun, see `launch.rs`) with a segment and
//! ranks of its own; that process is the node's gateway, and the only one that links a
//! real MPI. The world communicator's rank is the node number.
//!
//! Linking: these modules are compiled into `sccrun-node` and into the engine's test
//! (by `#[path]`), never into `sccemu_tools`' library nor sccrun. That library's
//! benchmark harness links sccemu's own MPI C interface (`sccmpi`), which defines the
//! same `MPI_*` symbols as the real MPI: in one executable the linker resolves rsmpi's
//! calls to sccemu's functions (seen: `MPI_Comm_rank` answered "invalid communicator"
//! from sccemu), and the real library's own internal calls could be taken over too.
//! `launch.rs` (no MPI calls) is the library's `nodes_launch` module instead.
//!
//! This module owns:
//! - [`engine`]: the loop that sends each gateway's batches to their nodes as soon as it
//!   has them, and its status to every node when it changes (MPI point to point, only
//!   ever on the main thread);
//! - [`mail`]: the engine's nonblocking sends and matched receives (the only `unsafe`);
//! - [`wire`]: how a [`sccemu::job::node::NodeStatus`] travels (fixed-size words);
//! - [`node`]: one node's process, from its running job to the engine's end;
//! - [`seam`]: the library-side calls a node makes, in one place.
//!
//! What the batches' bytes mean (two-sided fragments), when a barrier is released and
//! how a failure is taken on are the gateway's business (`sccemu::job::gateway`), not
//! this module's.

pub mod engine;
pub mod mail;
pub mod node;
pub mod seam;
pub mod wire;
