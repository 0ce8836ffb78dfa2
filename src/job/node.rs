//! One job over several nodes: which ranks a node runs, and what its gateway offers the
//! engine that connects the nodes.
//!
//! A job of `cores` ranks spans `nodes` node groups. Each group has a segment of its
//! own, laid out for the whole job, and runs a block of the ranks ([`NodeSpec`]). The
//! group's launcher is its gateway: the one process that talks to the other nodes,
//! through an engine (a real MPI, in `sccrun-node`). The engine sees a node only
//! through [`NodeSide`]: it collects the node's batches of opaque bytes for the other
//! nodes, delivers theirs, and carries every node's [`NodeStatus`] to the others, each
//! status after the batches collected with it; [`NodeSide::settle`] then sees what every
//! node last reported. What the bytes mean (two-sided fragments) is the gateway's
//! business, not the engine's.

use crate::protocol::abort::AbortCause;

/// The block of ranks one node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Node groups in the job.
    pub nodes: u32,
    /// This node, `0..nodes`.
    pub node: u32,
    /// Ranks in the whole job.
    pub cores: u32,
    /// This node's first rank.
    pub first: u32,
    /// This node's number of ranks.
    pub count: u32,
}

impl NodeSpec {
    /// Node `node`'s block when `cores` ranks are split over `nodes` nodes in blocks as
    /// even as they go (the first `cores % nodes` nodes run one rank more). An error if
    /// `node` is not below `nodes` or a node would run no rank.
    pub fn block(cores: u32, nodes: u32, node: u32) -> Result<NodeSpec, SplitError> {
        if node >= nodes || cores < nodes {
            return Err(SplitError { cores, nodes, node });
        }
        let (base, extra) = (cores / nodes, cores % nodes);
        let first = node * base + node.min(extra);
        let count = base + u32::from(node < extra);
        Ok(NodeSpec { nodes, node, cores, first, count })
    }

    /// The node that runs `rank` under the block split.
    pub fn node_of(&self, rank: u32) -> u32 {
        let (base, extra) = (self.cores / self.nodes, self.cores % self.nodes);
        let big = extra * (base + 1);
        if rank < big { rank / (base + 1) } else { extra + (rank - big) / base }
    }

    /// Whether this node runs `rank`.
    pub fn is_local(&self, rank: u32) -> bool {
        rank.wrapping_sub(self.first) < self.count
    }
}

/// Why [`NodeSpec::block`] has no block for a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitError {
    /// Ranks in the job.
    pub cores: u32,
    /// Nodes asked for.
    pub nodes: u32,
    /// The node whose block was asked for.
    pub node: u32,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SplitError { cores, nodes, node } = *self;
        if node >= nodes {
            write!(f, "node {node} is not one of {nodes} nodes")
        } else {
            write!(f, "{cores} ranks cannot be split over {nodes} nodes: each node needs a rank")
        }
    }
}

impl std::error::Error for SplitError {}

/// What a node tells every other node when it changes, after its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NodeStatus {
    /// How many job-wide barriers every rank of this node has entered: each node may
    /// let its ranks out of barrier `g` once every node reports at least `g + 1`.
    pub barriers: u64,
    /// The job's first failure as this node knows it: the failing rank, if one, and why.
    pub failure: Option<(Option<u32>, AbortCause)>,
    /// Every rank of this node has exited: the node only waits for the others.
    pub finished: bool,
    /// In virtual time, the latest of this node's ranks' arrivals at the barrier that
    /// [`NodeStatus::barriers`] counts them all in (picoseconds; 0 otherwise).
    pub barrier_vtime: u64,
}

/// A node's gateway, as the engine between the nodes drives it.
pub trait NodeSide {
    /// Moves what this node's ranks sent to other nodes' ranks since the last call into
    /// `out[node]`, one buffer per node (this node's own stays empty).
    fn collect(&mut self, out: &mut [Vec<u8>]);
    /// Takes a batch that node `from` collected for this node. An error means the bytes
    /// are not a batch: the job must abort.
    fn deliver(&mut self, from: u32, batch: &[u8]) -> Result<(), String>;
    /// This node's status now.
    fn status(&mut self) -> NodeStatus;
    /// What every node last reported (indexed by node): the gateway releases the
    /// barriers every node has reached and takes on another node's failure.
    fn settle(&mut self, all: &[NodeStatus]);
    /// Whether the last collect or delivery moved anything, or frames wait for room:
    /// the engine backs off (sleeps between its polls) while it is not busy.
    fn busy(&self) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_every_rank_once() {
        for cores in 1..40 {
            for nodes in 1..=cores.min(7) {
                let mut next = 0;
                for node in 0..nodes {
                    let spec = NodeSpec::block(cores, nodes, node).unwrap();
                    assert_eq!(spec.first, next);
                    assert!(spec.count > 0);
                    for rank in spec.first..spec.first + spec.count {
                        assert_eq!(spec.node_of(rank), node, "{cores} cores, {nodes} nodes, rank {rank}");
                        assert!(spec.is_local(rank));
                    }
                    next += spec.count;
                }
                assert_eq!(next, cores);
            }
        }
        assert_eq!(NodeSpec::block(2, 3, 0), Err(SplitError { cores: 2, nodes: 3, node: 0 }));
        assert!(NodeSpec::block(4, 2, 2).unwrap_err().to_string().contains("node 2 is not one of 2"));
    }
}
