//! What a seed generates: the job size, the program every rank runs, and the fault.
//!
//! The generator is a small deterministic PRNG (SplitMix64) seeded with the run's seed,
//! so a seed always names the same [`Plan`], on any machine.

use sccemu::{AccStrategy, Placement};
use serde::{Deserialize, Serialize};

/// SplitMix64: a tiny, well-mixed, deterministic generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5CC_C4A0_5EED)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// How the victim dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FaultKind {
    /// `raise(SIGKILL)`.
    Kill,
    /// A panic (the job runner catches it and the rank exits with status 1).
    Panic,
    /// `std::process::exit(0)` without finalizing.
    Exit0,
    /// `std::process::abort()` (SIGABRT).
    Abort,
}

impl FaultKind {
    pub const ALL: [FaultKind; 4] = [FaultKind::Kill, FaultKind::Panic, FaultKind::Exit0, FaultKind::Abort];

    /// How the launcher describes the victim's death, after `rank N `.
    pub fn diagnosis(self) -> &'static str {
        match self {
            FaultKind::Kill => "killed by SIGKILL",
            FaultKind::Panic => "exited with status 1",
            FaultKind::Exit0 => "exited without finalizing",
            FaultKind::Abort => "killed by SIGABRT",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Kill => "sigkill",
            FaultKind::Panic => "panic",
            FaultKind::Exit0 => "exit(0)",
            FaultKind::Abort => "abort()",
        }
    }
}

/// How a window step synchronises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sync {
    Fence,
    Pscw,
    Lock,
    LockAll,
}

/// The one-sided operation of a window step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RmaOp {
    Put,
    Get,
    Accumulate,
    FetchAdd,
}

/// A collective of a collective step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Coll {
    Barrier,
    Bcast { root: u32 },
    Allreduce,
    Allgather,
}

/// One step of the program; every rank runs every step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    /// Blocking send/recv between partners `r` and `r ^ 1` of `len` bytes.
    SendRecv { len: usize },
    /// `irecv` from the left, `isend` to the right, then wait for both.
    Ring { len: usize },
    /// A window created, synchronised, accessed and freed; gets and accumulates move
    /// `elems` elements (beyond an owner-computes inline request at 600).
    Window { placement: Placement, strategy: AccStrategy, sync: Sync, op: RmaOp, root: u32, elems: usize },
    /// A collective over the world communicator.
    Collective { coll: Coll, len: usize },
}

/// The fault: who dies, where, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub victim: u32,
    /// The step at which it dies; `steps.len()` means at the final barrier.
    pub step: usize,
    /// 0: before the step; 1: in the middle of it (an epoch or request open).
    pub phase: u32,
    pub kind: FaultKind,
    /// Milliseconds the victim sleeps at its fault point first, so that its peers are
    /// deeper into their calls when it dies.
    pub delay_ms: u64,
}

/// Everything a rank needs to run one seed's program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub seed: u64,
    pub cores: u32,
    /// The two-sided channel: per-peer MPB rings instead of the shared receive buffers.
    pub perpeer: bool,
    /// Blocked calls sleep on a futex at once (`--wait block`) instead of the default.
    pub block: bool,
    pub steps: Vec<Step>,
    pub fault: Fault,
    /// Marks this run's processes (found again in their environment if any is left).
    pub token: String,
}

/// Core counts the campaign samples, with weights: 48-core runs stay a minority.
pub const CORE_WEIGHTS: [(u32, u64); 8] =
    [(2, 20), (3, 14), (4, 18), (5, 8), (8, 14), (12, 9), (16, 10), (48, 7)];

const STRATEGIES: [AccStrategy; 4] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 64 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::OwnerComputes,
];

fn cores_for(rng: &mut Rng, allowed: &[u32]) -> u32 {
    let weights: Vec<(u32, u64)> = if allowed.is_empty() {
        CORE_WEIGHTS.to_vec()
    } else {
        allowed.iter().map(|&c| (c, CORE_WEIGHTS.iter().find(|w| w.0 == c).map_or(10, |w| w.1))).collect()
    };
    let total: u64 = weights.iter().map(|w| w.1).sum();
    let mut at = rng.below(total);
    for (cores, weight) in weights {
        if at < weight {
            return cores;
        }
        at -= weight;
    }
    unreachable!("the weights sum to total")
}

fn window(rng: &mut Rng, placement: Placement, elems: usize, root: u32) -> Step {
    Step::Window {
        placement,
        strategy: rng.pick(&STRATEGIES),
        sync: rng.pick(&[Sync::Fence, Sync::Pscw, Sync::Lock, Sync::LockAll]),
        op: rng.pick(&[RmaOp::Put, RmaOp::Get, RmaOp::Accumulate, RmaOp::FetchAdd]),
        root,
        elems,
    }
}

fn step(rng: &mut Rng, cores: u32) -> Step {
    let root = rng.below(u64::from(cores)) as u32;
    match rng.below(10) {
        0 | 1 => Step::SendRecv { len: rng.pick(&[0, 8, 200, 5000, 70_000]) },
        2 => Step::Ring { len: rng.pick(&[1, 64, 3000, 40_000]) },
        3..=6 => {
            let placement = rng.pick(&[Placement::Dram, Placement::Mpb]);
            let elems =
                if placement == Placement::Dram { rng.pick(&[1, 16, 600]) } else { rng.pick(&[1, 16]) };
            window(rng, placement, elems, root)
        }
        _ => Step::Collective {
            coll: rng.pick(&[Coll::Barrier, Coll::Bcast { root }, Coll::Allreduce, Coll::Allgather]),
            len: rng.pick(&[1, 3, 100, 2000]),
        },
    }
}

impl Plan {
    /// The plan of `seed`; `allowed` restricts the core counts (empty: the default mix).
    pub fn generate(seed: u64, allowed: &[u32], token: String) -> Plan {
        let mut rng = Rng::new(seed);
        let cores = cores_for(&mut rng, allowed);
        let perpeer = cores <= 16 && rng.below(3) == 0;
        let block = rng.below(3) == 0;
        let len = 1 + rng.below(10) as usize;
        let steps: Vec<Step> = (0..len).map(|_| step(&mut rng, cores)).collect();
        let fault = Fault {
            victim: rng.below(u64::from(cores)) as u32,
            step: rng.below(len as u64 + 1) as usize,
            phase: rng.below(2) as u32,
            kind: rng.pick(&FaultKind::ALL),
            delay_ms: rng.pick(&[0, 0, 1, 10]),
        };
        Plan { seed, cores, perpeer, block, steps, fault, token }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_names_one_plan() {
        let a = Plan::generate(7, &[], "t".into());
        assert_eq!(a, Plan::generate(7, &[], "t".into()));
        assert!(a.fault.victim < a.cores && a.fault.step <= a.steps.len());
        assert_eq!(Plan::generate(3, &[5], "t".into()).cores, 5);
    }
}
