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

use std::sync::Arc;

use crate::protocol::abort::AbortCause;

/// The block of ranks one node runs, and where every other node's block lies.
///
/// Blocks are contiguous and in node order (node 0 runs the first ranks): a node's
/// segment holds its ranks as one run (`shm_layout::Config::node_first`/`node_cores`).
/// Their sizes are free: [`NodeSpec::block`] splits evenly, [`NodeSpec::from_counts`]
/// takes any sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Every node's first rank, then `cores`: node `i` runs `bounds[i]..bounds[i + 1]`.
    /// Shared, so that a spec is cheap to clone for every gateway and launch.
    bounds: Arc<[u32]>,
}

impl NodeSpec {
    /// Node `node`'s block when `cores` ranks are split over `nodes` nodes in blocks as
    /// even as they go (the first `cores % nodes` nodes run one rank more). An error if
    /// `node` is not below `nodes` or a node would run no rank.
    pub fn block(cores: u32, nodes: u32, node: u32) -> Result<NodeSpec, SplitError> {
        if node >= nodes {
            return Err(SplitError::NoSuchNode { node, nodes });
        }
        if cores < nodes {
            return Err(SplitError::TooFewRanks { cores, nodes });
        }
        let (base, extra) = (cores / nodes, cores % nodes);
        let counts: Vec<u32> = (0..nodes).map(|n| base + u32::from(n < extra)).collect();
        NodeSpec::from_counts(&counts, node)
    }

    /// Node `node`'s block when node `i` runs `counts[i]` ranks, in node order: a job of
    /// `counts.len()` nodes and of as many ranks as the counts add up to. An error if
    /// the map is empty, gives a node no rank, adds up past `u32::MAX` ranks, or has no
    /// node `node`.
    pub fn from_counts(counts: &[u32], node: u32) -> Result<NodeSpec, SplitError> {
        if counts.is_empty() {
            return Err(SplitError::EmptyMap);
        }
        if let Some(empty) = counts.iter().position(|&c| c == 0) {
            return Err(SplitError::EmptyNode { node: empty as u32 });
        }
        let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        let cores = u32::try_from(sum).map_err(|_| SplitError::TooManyRanks { sum })?;
        // Every count is at least 1, so there are no more nodes than ranks.
        let nodes = counts.len() as u32;
        if node >= nodes {
            return Err(SplitError::NoSuchNode { node, nodes });
        }
        let bounds: Arc<[u32]> = std::iter::once(0)
            .chain(counts.iter().scan(0, |next, &c| {
                *next += c;
                Some(*next)
            }))
            .collect();
        let (first, count) = (bounds[node as usize], counts[node as usize]);
        Ok(NodeSpec { nodes, node, cores, first, count, bounds })
    }

    /// Node `node`'s block of a `cores`-rank job over `nodes` nodes: the even split
    /// ([`NodeSpec::block`]) without a map, else the map's counts
    /// ([`NodeSpec::from_counts`]), which must name `nodes` nodes and add up to `cores`.
    pub fn split(cores: u32, nodes: u32, map: Option<&[u32]>, node: u32) -> Result<NodeSpec, SplitError> {
        let Some(counts) = map else { return NodeSpec::block(cores, nodes, node) };
        if counts.len() != nodes as usize {
            return Err(SplitError::MapNodes { given: counts.len(), nodes });
        }
        // A node without a rank first: the sum is then beside the point.
        if let Some(empty) = counts.iter().position(|&c| c == 0) {
            return Err(SplitError::EmptyNode { node: empty as u32 });
        }
        let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if sum != u64::from(cores) {
            return Err(SplitError::MapRanks { sum, cores });
        }
        NodeSpec::from_counts(counts, node)
    }

    /// How many ranks each node runs, in node order.
    pub fn counts(&self) -> Vec<u32> {
        self.bounds.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The node that runs `rank`; `nodes` if the job has no such rank.
    pub fn node_of(&self, rank: u32) -> u32 {
        // `bounds[0]` is 0, so at least one bound is not above `rank`.
        self.bounds.partition_point(|&b| b <= rank) as u32 - 1
    }

    /// Whether this node runs `rank`.
    pub fn is_local(&self, rank: u32) -> bool {
        rank.wrapping_sub(self.first) < self.count
    }

    /// Whether the public fields still describe one of the blocks the constructors
    /// make: node `node` of `nodes` nonempty blocks in order that cover `cores` ranks,
    /// starting at `first` with `count` ranks. (The fields are public, so a caller may
    /// have changed them since.)
    pub fn is_consistent(&self) -> bool {
        let b = &self.bounds;
        b.len() == self.nodes as usize + 1
            && b[0] == 0
            && b[b.len() - 1] == self.cores
            && b.windows(2).all(|w| w[0] < w[1])
            && self.node < self.nodes
            && self.first == b[self.node as usize]
            && self.count == b[self.node as usize + 1] - self.first
    }
}

/// Why there is no block for a node ([`NodeSpec::block`], [`NodeSpec::from_counts`],
/// [`NodeSpec::split`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// The node asked for is not below the number of nodes.
    NoSuchNode {
        /// The node asked for.
        node: u32,
        /// Nodes in the job.
        nodes: u32,
    },
    /// An even split leaves a node without a rank: fewer ranks than nodes.
    TooFewRanks {
        /// Ranks in the job.
        cores: u32,
        /// Nodes asked for.
        nodes: u32,
    },
    /// A map of no node.
    EmptyMap,
    /// A map gives a node no rank.
    EmptyNode {
        /// The node given none.
        node: u32,
    },
    /// A map's counts add up past `u32::MAX` ranks.
    TooManyRanks {
        /// What they add up to.
        sum: u64,
    },
    /// A map names another number of nodes than the job has.
    MapNodes {
        /// Nodes the map names.
        given: usize,
        /// Nodes in the job.
        nodes: u32,
    },
    /// A map's counts add up to another number of ranks than the job has.
    MapRanks {
        /// What the counts add up to.
        sum: u64,
        /// Ranks in the job.
        cores: u32,
    },
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SplitError::NoSuchNode { node, nodes } => write!(f, "node {node} is not one of {nodes} nodes"),
            SplitError::TooFewRanks { cores, nodes } => {
                write!(f, "{cores} ranks cannot be split over {nodes} nodes: each node needs a rank")
            }
            SplitError::EmptyMap => write!(f, "the map names no node"),
            SplitError::EmptyNode { node } => {
                write!(f, "the map gives node {node} no rank: each node needs at least one")
            }
            SplitError::TooManyRanks { sum } => write!(f, "the map's counts add up to {sum} ranks, too many"),
            SplitError::MapNodes { given, nodes } => {
                write!(f, "the map names {given} nodes, but the job runs on {nodes}: one count per node")
            }
            SplitError::MapRanks { sum, cores } => {
                write!(f, "the map's counts add up to {sum} ranks, but the job has {cores}")
            }
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
    /// This node's status now. Read it before the collect that follows, and send it
    /// after that collect's batches: what the ranks sent before the status changed must
    /// reach the other nodes ahead of it.
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
        assert_eq!(NodeSpec::block(2, 3, 0), Err(SplitError::TooFewRanks { cores: 2, nodes: 3 }));
        assert!(NodeSpec::block(4, 2, 2).unwrap_err().to_string().contains("node 2 is not one of 2"));
    }

    /// Every node's spec of `counts`: each rank of the job is local to exactly one,
    /// the one every spec's `node_of` names, and the blocks follow each other in order.
    fn check_map(counts: &[u32]) {
        let specs: Vec<NodeSpec> =
            (0..counts.len() as u32).map(|node| NodeSpec::from_counts(counts, node).unwrap()).collect();
        let cores: u32 = counts.iter().sum();
        let mut next = 0;
        for (node, spec) in specs.iter().enumerate() {
            assert!(spec.is_consistent(), "{counts:?}: {spec:?}");
            assert_eq!((spec.nodes, spec.node, spec.cores), (counts.len() as u32, node as u32, cores));
            assert_eq!((spec.first, spec.count), (next, counts[node]), "{counts:?}, node {node}");
            assert_eq!(spec.counts(), counts);
            next += spec.count;
        }
        for rank in 0..cores {
            let owners: Vec<u32> = specs.iter().filter(|s| s.is_local(rank)).map(|s| s.node).collect();
            assert_eq!(owners.len(), 1, "{counts:?}: rank {rank} runs on {owners:?}");
            for spec in &specs {
                assert_eq!(spec.node_of(rank), owners[0], "{counts:?}: rank {rank}, asked on node {}", spec.node);
            }
        }
        // Past the job: no node.
        assert_eq!(specs[0].node_of(cores), counts.len() as u32);
        assert_eq!(specs[0].node_of(u32::MAX), counts.len() as u32);
    }

    #[test]
    fn maps_cover_every_rank_once() {
        for counts in [&[1][..], &[8], &[1, 5, 2], &[40, 56], &[1, 1, 1, 1], &[7, 1], &[1, 7], &[3, 1, 4, 1, 5, 9, 2, 6]]
        {
            check_map(counts);
        }
        // Every map of up to 4 nodes of up to 4 ranks each.
        for nodes in 1..=4u32 {
            for code in 0..4u32.pow(nodes) {
                let counts: Vec<u32> = (0..nodes).map(|i| code / 4u32.pow(i) % 4 + 1).collect();
                check_map(&counts);
            }
        }
    }

    #[test]
    fn the_even_split_is_a_map_of_its_counts() {
        for cores in 1..30 {
            for nodes in 1..=cores.min(6) {
                let counts = NodeSpec::block(cores, nodes, 0).unwrap().counts();
                for node in 0..nodes {
                    let block = NodeSpec::block(cores, nodes, node).unwrap();
                    assert_eq!(NodeSpec::from_counts(&counts, node).as_ref(), Ok(&block));
                    assert_eq!(NodeSpec::split(cores, nodes, None, node).as_ref(), Ok(&block));
                    assert_eq!(NodeSpec::split(cores, nodes, Some(&counts), node).as_ref(), Ok(&block));
                }
            }
        }
    }

    #[test]
    fn bad_maps_are_refused_with_their_reason() {
        use SplitError::*;
        assert_eq!(NodeSpec::from_counts(&[], 0), Err(EmptyMap));
        assert_eq!(NodeSpec::from_counts(&[2, 0, 3], 0), Err(EmptyNode { node: 1 }));
        assert_eq!(NodeSpec::from_counts(&[0], 0), Err(EmptyNode { node: 0 }));
        assert_eq!(NodeSpec::from_counts(&[2, 3], 2), Err(NoSuchNode { node: 2, nodes: 2 }));
        let sum = 2 * u64::from(u32::MAX);
        assert_eq!(NodeSpec::from_counts(&[u32::MAX, u32::MAX], 0), Err(TooManyRanks { sum }));
        assert_eq!(NodeSpec::split(8, 3, Some(&[1, 5]), 0), Err(MapNodes { given: 2, nodes: 3 }));
        assert_eq!(NodeSpec::split(8, 3, Some(&[1, 5, 3]), 0), Err(MapRanks { sum: 9, cores: 8 }));
        assert_eq!(NodeSpec::split(8, 3, Some(&[1, 5, 1]), 0), Err(MapRanks { sum: 7, cores: 8 }));
        // A node without a rank is named even when the sum is wrong too.
        assert_eq!(NodeSpec::split(8, 3, Some(&[0, 5, 1]), 1), Err(EmptyNode { node: 0 }));
        assert_eq!(NodeSpec::split(8, 3, Some(&[1, 5, 2]), 3), Err(NoSuchNode { node: 3, nodes: 3 }));
        let said = |e: SplitError| e.to_string();
        assert_eq!(said(EmptyNode { node: 1 }), "the map gives node 1 no rank: each node needs at least one");
        assert_eq!(said(MapNodes { given: 2, nodes: 3 }), "the map names 2 nodes, but the job runs on 3: one count per node");
        assert_eq!(said(MapRanks { sum: 7, cores: 8 }), "the map's counts add up to 7 ranks, but the job has 8");
        assert_eq!(said(EmptyMap), "the map names no node");
    }

    #[test]
    fn a_spec_changed_by_hand_is_not_consistent() {
        let spec = NodeSpec::from_counts(&[1, 5, 2], 1).unwrap();
        assert!(spec.is_consistent());
        for changed in [
            NodeSpec { first: 0, ..spec.clone() },
            NodeSpec { count: 6, ..spec.clone() },
            NodeSpec { cores: 9, ..spec.clone() },
            NodeSpec { nodes: 2, ..spec.clone() },
            NodeSpec { node: 2, ..spec.clone() },
            NodeSpec { node: 3, ..spec.clone() },
        ] {
            assert!(!changed.is_consistent(), "{changed:?}");
        }
    }
}
