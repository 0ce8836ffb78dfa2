//! The library-side calls a node makes, in one place: giving the launch its block of
//! ranks and opening the gateway on the running job's segment.
//!
//! Until the library's side (`Launch::node`, `sccemu::job::gateway::Gateway`) is in this
//! build, both are stand-ins that fail with a clear error, so that `sccrun --mpi` stops
//! every node cleanly. With the library's side in place the bodies become:
//!
//! ```ignore
//! pub fn set_node(launch: &mut Launch, spec: NodeSpec) -> Result<(), String> {
//!     launch.node = Some(spec);
//!     Ok(())
//! }
//!
//! pub fn open_gateway(running: &Running) -> Result<Box<dyn LocalGateway>, String> {
//!     let gateway = sccemu::job::gateway::Gateway::new(running).map_err(|e| e.to_string())?;
//!     Ok(Box::new(gateway))
//! }
//!
//! impl LocalGateway for sccemu::job::gateway::Gateway {
//!     fn set_finished(&mut self) {
//!         sccemu::job::gateway::Gateway::set_finished(self)
//!     }
//! }
//! ```

use sccemu::job::launcher::{Launch, Running};
use sccemu::job::node::{NodeSide, NodeSpec};

/// A node's gateway as its process drives it: the engine's [`NodeSide`], plus word that
/// every local rank has exited (the launcher's wait returned), after which the gateway
/// reports `finished`.
pub trait LocalGateway: NodeSide {
    /// Every rank of this node has exited and been reaped.
    fn set_finished(&mut self);
}

const NOT_YET: &str =
    "this build's sccemu library cannot run a node yet (it has no Launch::node and no job::gateway)";

/// Makes `launch` start only `spec`'s block of the job's ranks.
pub fn set_node(launch: &mut Launch, spec: NodeSpec) -> Result<(), String> {
    let _ = (launch, spec);
    Err(NOT_YET.into())
}

/// The gateway of the node that `running` is, over its own mapping of the segment.
pub fn open_gateway(running: &Running) -> Result<Box<dyn LocalGateway>, String> {
    let _ = running;
    Err(NOT_YET.into())
}
