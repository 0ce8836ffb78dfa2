//! `MPI_Dist_graph_create`'s exchange: every process gives any edges of the graph, and
//! each must learn its own in-list (the edges into it) and out-list (the edges out of
//! it).
//!
//! Protocol: each process sends every member one block (an alltoall of blocks of any
//! length, `crate::vcoll::alltoall_bytes`, whose agreement step also carries each
//! process's argument error, so that a bad call fails everywhere instead of leaving the
//! others waiting). A block opens with the sender's [`WeightsGiven`], which so reaches
//! every member; then, for each edge `s -> d` the sender gave, in its order, an
//! out-record `(d, w)` goes to `s` and an in-record `(s, w)` to `d`. A member reads
//! the blocks in rank order, so its lists are deterministic: edges ordered by the rank
//! of the process that gave them, then by their place in its arrays. An edge given
//! twice appears twice, on both ends in the same order, which is what pairs the
//! blocks of the neighbourhood collectives (`crate::ffi::icoll::neighbor`).
//!
//! Weights: MPI makes a graph weighted unless every process passes `MPI_UNWEIGHTED`;
//! one that gives no edges may pass `MPI_WEIGHTS_EMPTY` (weighted) or a null pointer
//! (either). Some processes passing `MPI_UNWEIGHTED` and others weights is
//! erroneous: every member sees every flag, so all return `MPI_ERR_ARG`. An
//! unweighted graph's weights read as 1.

use crate::comm::CommObj;
use crate::error::{MpiResult, class, fail};
use crate::topology::Topology;
use crate::vcoll::alltoall_bytes;

/// One edge as a process gives it, in ranks of the communicator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    /// Where it leaves.
    pub source: i32,
    /// Where it arrives.
    pub destination: i32,
    /// Its weight (1 if unweighted).
    pub weight: i32,
}

/// What a process said of weights.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(i32)]
pub enum WeightsGiven {
    /// Nothing either way: no edges and a null pointer.
    Neither = 0,
    /// `MPI_UNWEIGHTED`.
    No = 1,
    /// Weights, or `MPI_WEIGHTS_EMPTY`.
    Yes = 2,
}

/// Record kinds in a block.
const OUT: i32 = 0;
const IN: i32 = 1;

/// This process's blocks for the `n` members (module docs).
fn blocks(n: usize, edges: &[Edge], given: WeightsGiven) -> Vec<Vec<u8>> {
    let mut blocks = vec![(given as i32).to_le_bytes().to_vec(); n];
    for e in edges {
        for (to, kind, other) in [(e.source, OUT, e.destination), (e.destination, IN, e.source)] {
            for word in [kind, other, e.weight] {
                blocks[to as usize].extend_from_slice(&word.to_le_bytes());
            }
        }
    }
    blocks
}

/// The distributed graph the members' edges give, at this member: collective over
/// `c`. `mine` is this process's edges (ranks checked) and what it said of weights, or
/// its argument error.
pub fn create(c: &CommObj, mine: MpiResult<(Vec<Edge>, WeightsGiven)>) -> MpiResult<Topology> {
    let n = c.size() as usize;
    let got = alltoall_bytes(c, mine.map(|(edges, given)| blocks(n, &edges, given)))?;
    let (mut sources, mut source_weights, mut destinations, mut destination_weights) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut said = [false; 3];
    for block in &got {
        let mut words = block.chunks_exact(4).map(|w| i32::from_le_bytes(w.try_into().expect("4 bytes")));
        said[words.next().unwrap_or(0).clamp(0, 2) as usize] = true;
        while let (Some(kind), Some(other), Some(weight)) = (words.next(), words.next(), words.next()) {
            let (list, weights) = match kind {
                IN => (&mut sources, &mut source_weights),
                _ => (&mut destinations, &mut destination_weights),
            };
            list.push(other);
            weights.push(weight);
        }
    }
    let (no, yes) = (said[WeightsGiven::No as usize], said[WeightsGiven::Yes as usize]);
    if no && yes {
        return fail(class::ARG, "some processes gave weights and others MPI_UNWEIGHTED");
    }
    Ok(Topology::DistGraph { sources, source_weights, destinations, destination_weights, weighted: yes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_edge_goes_to_both_ends_in_order() {
        let edges =
            [Edge { source: 0, destination: 1, weight: 5 }, Edge { source: 1, destination: 1, weight: 6 }];
        let b = blocks(2, &edges, WeightsGiven::Yes);
        let words = |v: &[u8]| v.chunks_exact(4).map(|w| i32::from_le_bytes(w.try_into().unwrap())).collect();
        let w0: Vec<i32> = words(&b[0]);
        let w1: Vec<i32> = words(&b[1]);
        assert_eq!(w0, [2, OUT, 1, 5]);
        assert_eq!(w1, [2, IN, 0, 5, OUT, 1, 6, IN, 1, 6]);
    }
}
