//! The RCKMPI paper's CFD-like cellular automaton: a 9-point stencil on a 2-D grid split
//! by rows, each core swapping one halo row with each of its two neighbours per step.
//!
//! The automaton works on integers so that every version is bit-identical to the
//! sequential one: a cell becomes the weighted mean of its 3x3 neighbourhood (centre 4,
//! edges 2, corners 1, over 16) scaled by 15/16, and fixed heat sources keep their
//! value. Cells outside the grid read as 0.
//!
//! The halo of a step is sent before the interior is computed, so communication
//! overlaps computation in every version (see `exchange`). At the end rank 0 gathers
//! the grid and compares it with the sequential result.

use sccemu::{Comm, Core, Job, Op};
use serde::{Deserialize, Serialize};

use crate::exchange::{BoxError, Exchange, Version};
use crate::measure::{Row, SuiteParams, row};

/// Value of a heat source.
const SOURCE: u32 = 1 << 20;

/// A run: grid shape, steps and the exchange version.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Params {
    pub rows: usize,
    pub cols: usize,
    pub steps: u32,
    pub version: Version,
}

/// What one core reports: whether the grid matched and the time per step (rank 0's
/// figures are the job's: the slowest core's time, and the gathered check).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Outcome {
    pub matches_sequential: bool,
    pub seconds_per_step: f64,
}

fn is_source(row: usize, col: usize) -> bool {
    (row * 7 + col * 13) % 97 == 0
}

/// Initial value of a cell.
fn initial(row: usize, col: usize) -> u32 {
    if is_source(row, col) { SOURCE } else { ((row * 31 + col * 17) % 1000) as u32 }
}

/// The first column of `row` that holds a heat source; the next ones follow every 97
/// columns (13 * 15 = 1 mod 97, so 15 is 13's inverse).
fn first_source(row: usize) -> usize {
    (97 - row * 7 % 97) % 97 * 15 % 97
}

/// The automaton's rule for one cell from its 3x3 neighbourhood (sums fit in u32:
/// 16 x 2^20 x 15 < 2^32).
#[inline]
fn rule(up: [u32; 3], mid: [u32; 3], down: [u32; 3]) -> u32 {
    let sum = 4 * mid[1] + 2 * (up[1] + down[1] + mid[0] + mid[2]) + up[0] + up[2] + down[0] + down[2];
    sum * 15 / 256
}

/// Computes rows `range` of `next` (global row numbers `first_row + i`) from `cur`,
/// which holds the same rows plus one ghost row above and below.
fn update(cur: &[u32], next: &mut [u32], cols: usize, first_row: usize, range: std::ops::Range<usize>) {
    for i in range {
        let (up, mid, down) =
            (&cur[i * cols..][..cols], &cur[(i + 1) * cols..][..cols], &cur[(i + 2) * cols..][..cols]);
        let out = &mut next[i * cols..][..cols];
        // Columns outside the grid read as 0: the edges take the slow path.
        let at = |line: &[u32], c: isize| if c < 0 || c as usize >= cols { 0 } else { line[c as usize] };
        let edge = |j: usize| {
            let c = j as isize;
            let three = |line: &[u32]| [at(line, c - 1), at(line, c), at(line, c + 1)];
            rule(three(up), three(mid), three(down))
        };
        out[0] = edge(0);
        if cols > 1 {
            out[cols - 1] = edge(cols - 1);
        }
        for (((o, u), m), d) in
            out[1..].iter_mut().zip(up.windows(3)).zip(mid.windows(3)).zip(down.windows(3))
        {
            *o = rule([u[0], u[1], u[2]], [m[0], m[1], m[2]], [d[0], d[1], d[2]]);
        }
        for j in (first_source(first_row + i)..cols).step_by(97) {
            out[j] = SOURCE;
        }
    }
}

/// Rows `[lo, hi)` of the grid held by `rank` of `n`.
pub fn rows_of(rows: usize, n: usize, rank: usize) -> (usize, usize) {
    (rows * rank / n, rows * (rank + 1) / n)
}

/// A local block: its rows plus a ghost row above and below, initial values.
fn block(lo: usize, hi: usize, cols: usize) -> Vec<u32> {
    let mut b = vec![0u32; (hi - lo + 2) * cols];
    for (i, row) in (lo..hi).enumerate() {
        for j in 0..cols {
            b[(i + 1) * cols + j] = initial(row, j);
        }
    }
    b
}

/// The whole grid after `steps` steps, on one core.
pub fn sequential(rows: usize, cols: usize, steps: u32) -> Vec<u32> {
    let mut cur = block(0, rows, cols);
    let mut next = cur.clone();
    for _ in 0..steps {
        update(&cur, &mut next[cols..], cols, 0, 0..rows);
        std::mem::swap(&mut cur, &mut next);
    }
    cur[cols..(rows + 1) * cols].to_vec()
}

/// One core's part of a run (a `Job` entry, or `main` under sccrun).
pub fn run(core: &Core, p: Params) -> Result<Outcome, BoxError> {
    let (n, me) = (core.size() as usize, core.rank() as usize);
    if p.rows < n || p.cols == 0 {
        return Err(format!("a {}x{} grid cannot give each of {n} cores a row", p.rows, p.cols).into());
    }
    let (lo, hi) = rows_of(p.rows, n, me);
    let (local, cols) = (hi - lo, p.cols);
    let up = (me > 0).then(|| me as u32 - 1);
    let down = (me + 1 < n).then(|| me as u32 + 1);
    let mut exchange = Exchange::new(core, p.version, vec![up, down], |d| 1 - d, cols * 4)?;
    let world = Comm::world(core)?;
    let mut cur = block(lo, hi, cols);
    let mut next = cur.clone();
    world.barrier()?;
    // Virtual seconds under `--timing`, the host's otherwise.
    let started = core.wtime();
    for _ in 0..p.steps {
        let (top_ghost, rest) = cur.split_at_mut(cols);
        let (body, bottom_ghost) = rest.split_at_mut(local * cols);
        let out = [bytemuck::cast_slice(&body[..cols]), bytemuck::cast_slice(&body[(local - 1) * cols..])];
        let mut inbox = [bytemuck::cast_slice_mut(top_ghost), bytemuck::cast_slice_mut(bottom_ghost)];
        // The interior rows need no ghost: compute them while the halos travel.
        let interior: &[u32] = body;
        let next_body = &mut next[cols..];
        exchange.exchange(&out, &mut inbox, || {
            if local > 2 {
                update_interior(interior, next_body, cols, lo, local);
            }
        })?;
        update(&cur, &mut next[cols..], cols, lo, 0..1);
        if local > 1 {
            update(&cur, &mut next[cols..], cols, lo, local - 1..local);
        }
        std::mem::swap(&mut cur, &mut next);
    }
    let mut elapsed = [core.wtime() - started];
    let mine = elapsed;
    world.allreduce(&mine, &mut elapsed, Op::Max)?;
    exchange.free()?;

    // Rank 0 gathers every block, padded to the largest, and compares.
    let widest = (0..n).map(|r| rows_of(p.rows, n, r)).map(|(a, b)| b - a).max().unwrap_or(0);
    let mut padded = vec![0u32; widest * cols];
    padded[..local * cols].copy_from_slice(&cur[cols..(local + 1) * cols]);
    let mut all = if me == 0 { vec![0u32; n * widest * cols] } else { Vec::new() };
    world.gather(0, &padded, &mut all)?;
    let matches_sequential = me != 0 || {
        let expected = sequential(p.rows, cols, p.steps);
        (0..n).all(|r| {
            let (a, b) = rows_of(p.rows, n, r);
            all[r * widest * cols..][..(b - a) * cols] == expected[a * cols..b * cols]
        })
    };
    world.free()?;
    Ok(Outcome { matches_sequential, seconds_per_step: elapsed[0] / f64::from(p.steps.max(1)) })
}

/// Rows 1..local-1 (those whose neighbourhood is all local) of the block body.
fn update_interior(body: &[u32], next_body: &mut [u32], cols: usize, lo: usize, local: usize) {
    // `body` starts at local row 0; `update` wants a slice starting one row above the
    // first computed row, which for row 1 is row 0 of the body.
    update(body, &mut next_body[cols..], cols, lo + 1, 0..local - 2);
}

fn entry(core: &Core, p: Params) -> Result<Outcome, String> {
    run(core, p).map_err(|e| e.to_string())
}

/// Rows of the benchmark grid, as in the MPI peer program.
pub const SUITE_ROWS: usize = 512;

/// The suite: time per step of every version at 1 to 8 cores (patterns
/// `stencil-<version>`, halo row bytes as the size); the report derives the speedup.
pub fn suite(params: &SuiteParams) -> Vec<Row> {
    let mut rows = Vec::new();
    let cores: &[u32] = if params.quick { &[1, 2] } else { &[1, 2, 4, 8] };
    let sizes: &[usize] = if params.quick { &[1024] } else { &[1024, 8192] };
    for &bytes in sizes {
        for &n in cores {
            for version in Version::ALL {
                let p = Params {
                    rows: SUITE_ROWS,
                    cols: bytes / 4,
                    steps: if params.quick { 4 } else { 20 },
                    version,
                };
                let pattern = format!("stencil-{}", version.pattern());
                let samples: Vec<f64> = (0..params.reps(5))
                    .filter_map(|_| match Job::new(n).run(&p, entry) {
                        Ok(outcomes) if outcomes[0].matches_sequential => {
                            Some(outcomes[0].seconds_per_step * 1e6)
                        }
                        Ok(_) => {
                            eprintln!(
                                "stencil suite: {pattern} on {n} cores differs from the sequential grid"
                            );
                            None
                        }
                        Err(e) => {
                            eprintln!("stencil suite: {pattern} on {n} cores failed: {e}");
                            None
                        }
                    })
                    .collect();
                rows.push(row("stencil", "sccemu", &pattern, n, bytes as u64, samples));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_found_by_stride_are_exactly_the_defined_ones() {
        for row in 0..300 {
            let by_stride: Vec<usize> = (first_source(row)..400).step_by(97).collect();
            let defined: Vec<usize> = (0..400).filter(|&col| is_source(row, col)).collect();
            assert_eq!(by_stride, defined, "row {row}");
        }
    }

    #[test]
    fn one_column_grids_use_the_edge_rule() {
        let grid = sequential(5, 1, 3);
        assert_eq!(grid.len(), 5);
    }
}
