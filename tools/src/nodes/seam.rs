//! The library-side call a node makes: opening the gateway on the running job's
//! segment. The engine's tests put
//! fake gateways behind the same [`LocalGateway`].

use sccemu::job::gateway::Gateway;
use sccemu::job::launcher::Running;
use sccemu::job::node::NodeSide;

/// A node's gateway as its process drives it: the engine's [`NodeSide`], plus word that
/// every local rank has exited (the launcher's wait returned), after which the gateway
/// reports `finished`.
pub trait LocalGateway: NodeSide {
    /// Every rank of this node has exited and been reaped.
    fn set_finished(&mut self);
}

impl LocalGateway for Gateway {
    fn set_finished(&mut self) {
        Gateway::set_finished(self)
    }
}

/// The gateway of the node that `running` is, over its own mapping of the segment.
pub fn open_gateway(running: &Running) -> Result<Box<dyn LocalGateway>, String> {
    Ok(Box::new(Gateway::new(running).map_err(|e| e.to_string())?))
}
