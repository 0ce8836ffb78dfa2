//! Process topologies: Cartesian grids, graphs (`MPI_Graph_create`'s) and distributed
//! graphs, and `MPI_Dims_create`.
//!
//! A topology is information attached to a communicator; it never reorders ranks
//! (`reorder` is allowed to be ignored), so rank `r` of a Cartesian communicator is
//! rank `r` of its parent's members that fit in the grid, in row-major order of the
//! coordinates, as MPI specifies.

use crate::error::{MpiResult, class, fail};

/// What a communicator's topology is.
#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    /// None (`MPI_UNDEFINED` from `MPI_Topo_test`).
    None,
    /// A Cartesian grid.
    Cart {
        /// Extent of each dimension.
        dims: Vec<i32>,
        /// Whether each dimension wraps around.
        periods: Vec<bool>,
    },
    /// A graph as `MPI_Graph_create` gives it, the same at every member: node `i`'s
    /// neighbours are `edges[index[i - 1]..index[i]]` (from 0 for node 0), checked by
    /// [`check_graph`].
    Graph {
        /// Per node, the number of edges of the nodes up to it.
        index: Vec<i32>,
        /// Every node's neighbours, one node after another.
        edges: Vec<i32>,
    },
    /// A distributed graph, as this process declared its neighbours.
    DistGraph {
        /// Ranks that send to this one.
        sources: Vec<i32>,
        /// Their weights (all 1 when unweighted).
        source_weights: Vec<i32>,
        /// Ranks this one sends to.
        destinations: Vec<i32>,
        /// Their weights.
        destination_weights: Vec<i32>,
        /// Whether weights were given.
        weighted: bool,
    },
}

/// Processes in a grid of `dims`, or `None` on overflow.
pub fn grid_size(dims: &[i32]) -> Option<usize> {
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
}

/// Checks a graph of `index.len()` nodes as `MPI_Graph_create` takes it: `index`
/// never decreases (nor goes below 0), which is `MPI_ERR_ARG`; `edges` holds its last
/// entry's worth of nodes (the caller reads that many), each a node of the graph, else
/// `MPI_ERR_RANK`. Self-loops and repeated edges are allowed.
pub fn check_graph(index: &[i32], edges: &[i32]) -> MpiResult<()> {
    let mut before = 0;
    for (i, &x) in index.iter().enumerate() {
        if x < before {
            return fail(class::ARG, format!("index[{i}] = {x} is below {before}"));
        }
        before = x;
    }
    if edges.len() != before as usize {
        return fail(class::ARG, format!("{} edges where index counts {before}", edges.len()));
    }
    let nodes = index.len() as i32;
    match edges.iter().position(|e| !(0..nodes).contains(e)) {
        Some(at) => fail(class::RANK, format!("edges[{at}] = {} is not one of {nodes} nodes", edges[at])),
        None => Ok(()),
    }
}

/// The neighbours of `node` in a graph checked by [`check_graph`], in order.
pub fn graph_neighbors<'a>(index: &[i32], edges: &'a [i32], node: usize) -> &'a [i32] {
    let from = if node == 0 { 0 } else { index[node - 1] as usize };
    &edges[from..index[node] as usize]
}

/// `MPI_Dims_create`: fills the zero entries of `dims` so that the product is
/// `nnodes`, as close to each other as possible, in non-increasing order.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> MpiResult<()> {
    if nnodes < 1 {
        return fail(class::ARG, format!("nnodes {nnodes} must be positive"));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return fail(class::DIMS, format!("dimension {d} is negative"));
    }
    let fixed: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| i64::from(d)).product();
    if i64::from(nnodes) % fixed != 0 {
        return fail(class::DIMS, format!("{nnodes} processes do not divide into the fixed dimensions"));
    }
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if fixed == i64::from(nnodes) {
            Ok(())
        } else {
            fail(class::DIMS, format!("dimensions multiply to {fixed}, not {nnodes}"))
        };
    }
    // Deal the prime factors, largest first, to the currently smallest dimension:
    // this balances the dimensions, and sorting gives the non-increasing order.
    let mut rest = nnodes as i64 / fixed;
    let mut factors = Vec::new();
    let mut p = 2;
    while p * p <= rest {
        while rest % p == 0 {
            factors.push(p);
            rest /= p;
        }
        p += 1;
    }
    if rest > 1 {
        factors.push(rest);
    }
    let mut sizes = vec![1i64; free.len()];
    for f in factors.into_iter().rev() {
        let smallest = (0..sizes.len()).min_by_key(|&i| sizes[i]).expect("free dimensions exist");
        sizes[smallest] *= f;
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    for (&i, s) in free.iter().zip(sizes) {
        dims[i] = s as i32;
    }
    Ok(())
}

/// The coordinates of `rank` in a grid of `dims` (row-major).
pub fn coords(dims: &[i32], rank: i32) -> Vec<i32> {
    let mut rest = rank;
    let mut out = vec![0; dims.len()];
    for (i, &d) in dims.iter().enumerate().rev() {
        out[i] = rest % d;
        rest /= d;
    }
    out
}

/// The rank at `coords`; periodic dimensions wrap, others must be in range.
pub fn rank_at(dims: &[i32], periods: &[bool], coords: &[i32]) -> MpiResult<i32> {
    let mut rank = 0i32;
    for ((&d, &periodic), &c) in dims.iter().zip(periods).zip(coords) {
        let c = if periodic {
            c.rem_euclid(d)
        } else if (0..d).contains(&c) {
            c
        } else {
            return fail(
                class::RANK,
                format!("coordinate {c} is outside 0..{d} of a non-periodic dimension"),
            );
        };
        rank = rank * d + c;
    }
    Ok(rank)
}

/// A process's neighbours in a topology, as ranks of its communicator (`None`:
/// `MPI_PROC_NULL`), in the order MPI gives them to the neighbourhood collectives.
#[derive(Clone, Debug, PartialEq)]
pub struct Neighbors {
    /// Where the blocks come from, one receive block each.
    pub sources: Vec<Option<i32>>,
    /// Where the blocks go, one send block each.
    pub destinations: Vec<Option<i32>>,
    /// Whether the topology is a grid, whose block `j` travels in direction `j`
    /// (`ffi::icoll::neighbor` tells the directions apart by it).
    pub grid: bool,
}

/// The neighbours of `rank` in `t`: on a grid, for each dimension the source then the
/// destination of a shift by +1 (both lists alike); on a graph, its neighbours in the
/// order of `edges`, for both lists (duplicates kept); on a distributed graph, the
/// sources and destinations as they were declared. `None` without a topology.
pub fn neighbors(t: &Topology, rank: i32) -> Option<Neighbors> {
    match t {
        Topology::None => None,
        Topology::Cart { dims, periods } => {
            let mut list = Vec::with_capacity(2 * dims.len());
            for d in 0..dims.len() {
                let (s, t) = shift(dims, periods, rank, d, 1);
                list.extend([s, t]);
            }
            Some(Neighbors { sources: list.clone(), destinations: list, grid: true })
        }
        Topology::Graph { index, edges } => {
            let list: Vec<_> =
                graph_neighbors(index, edges, rank as usize).iter().map(|&r| Some(r)).collect();
            Some(Neighbors { sources: list.clone(), destinations: list, grid: false })
        }
        Topology::DistGraph { sources, destinations, .. } => Some(Neighbors {
            sources: sources.iter().map(|&r| Some(r)).collect(),
            destinations: destinations.iter().map(|&r| Some(r)).collect(),
            grid: false,
        }),
    }
}

/// `MPI_Cart_shift`: the (source, destination) of a shift by `disp` along
/// `direction`; `None` is `MPI_PROC_NULL`, off the edge of a non-periodic dimension.
pub fn shift(
    dims: &[i32],
    periods: &[bool],
    rank: i32,
    direction: usize,
    disp: i32,
) -> (Option<i32>, Option<i32>) {
    let at = |delta: i32| {
        let mut c = coords(dims, rank);
        c[direction] += delta;
        rank_at(dims, periods, &c).ok()
    };
    (at(-disp), at(disp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_create_balances_in_non_increasing_order() {
        let mut d = [0, 0];
        dims_create(48, &mut d).unwrap();
        assert_eq!(d, [8, 6]);
        let mut d = [0, 3, 0];
        dims_create(24, &mut d).unwrap();
        assert_eq!(d, [4, 3, 2]);
        let mut d = [0, 0, 0];
        dims_create(7, &mut d).unwrap();
        assert_eq!(d, [7, 1, 1]);
        assert!(dims_create(10, &mut [3, 0]).is_err());
    }

    #[test]
    fn graphs_are_checked_and_give_their_neighbours_in_order() {
        // Node 0: a self-loop and a double edge to 1; node 1: both edges back; node 2: none.
        let (index, edges) = ([3, 5, 5], [0, 1, 1, 0, 0]);
        check_graph(&index, &edges).unwrap();
        assert_eq!(graph_neighbors(&index, &edges, 0), [0, 1, 1]);
        assert_eq!(graph_neighbors(&index, &edges, 2), [] as [i32; 0]);
        let t = Topology::Graph { index: index.to_vec(), edges: edges.to_vec() };
        let n = neighbors(&t, 1).unwrap();
        assert_eq!(n.sources, [Some(0), Some(0)]);
        assert_eq!((n.sources == n.destinations, n.grid), (true, false));
        let class_of = |index: &[i32], edges: &[i32]| check_graph(index, edges).unwrap_err().class;
        assert_eq!(class_of(&[2, 1], &[1, 0]), class::ARG);
        assert_eq!(class_of(&[-1, 0], &[]), class::ARG);
        assert_eq!(class_of(&[1, 2], &[1, 2]), class::RANK);
        check_graph(&[], &[]).unwrap();
    }

    #[test]
    fn cartesian_shifts_wrap_only_where_periodic() {
        let (dims, periods) = ([2, 3], [true, false]);
        assert_eq!(coords(&dims, 5), vec![1, 2]);
        assert_eq!(rank_at(&dims, &periods, &[-1, 2]).unwrap(), 5);
        assert!(rank_at(&dims, &periods, &[0, 3]).is_err());
        assert_eq!(shift(&dims, &periods, 0, 1, 1), (None, Some(1)));
        assert_eq!(shift(&dims, &periods, 0, 0, 1), (Some(3), Some(3)));
    }
}
