//! Stress: proptest draws random epochs (fence, PSCW with the exact groups the ops
//! need, lock_all, per-op shared or exclusive locks) of random operations (put, get,
//! strided put, fetch-add, fetch-xor) across N real processes, and compares every
//! core's final part with a sequential model.
//!
//! Ops are chosen to give one right answer whatever the interleaving: origin o only
//! ever puts into its own slots (element `s * n + o` of a target), so puts by different
//! origins never overlap and a get of one's own slot must return one's last put there;
//! the shared counters only see commutative atomics (add, xor).

use proptest::prelude::*;
use sccemu::{Assert, Core, Group, Job, LockKind, Placement, Vector};
use serde::{Deserialize, Serialize};

const SLOTS: usize = 4;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum Sync {
    Fence,
    Pscw,
    LockAll,
    Lock(LockKind),
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum OpKind {
    Put {
        slot: usize,
        value: u64,
    },
    /// Two slots at once, as a strided put with stride `2 * n`.
    PutPair {
        slot: usize,
        value: u64,
    },
    Get {
        slot: usize,
    },
    Add(u64),
    Xor(u64),
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Op {
    origin: u32,
    target: u32,
    kind: OpKind,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Plan {
    n: u32,
    placement: Placement,
    epochs: Vec<(Sync, Vec<Op>)>,
}

fn part_len(n: u32) -> usize {
    SLOTS * n as usize + 2
}

fn slot_index(n: u32, slot: usize, origin: u32) -> usize {
    slot * n as usize + origin as usize
}

/// The sequential model: every core's final part.
fn model(plan: &Plan) -> Vec<Vec<u64>> {
    let n = plan.n;
    let mut parts = vec![vec![0u64; part_len(n)]; n as usize];
    let sum = SLOTS * n as usize;
    for (_, ops) in &plan.epochs {
        for op in ops {
            let part = &mut parts[op.target as usize];
            match op.kind {
                OpKind::Put { slot, value } => part[slot_index(n, slot, op.origin)] = value,
                OpKind::PutPair { slot, value } => {
                    part[slot_index(n, slot, op.origin)] = value;
                    part[slot_index(n, slot + 2, op.origin)] = value + 1;
                }
                OpKind::Get { .. } => {}
                OpKind::Add(v) => part[sum] = part[sum].wrapping_add(v),
                OpKind::Xor(v) => part[sum + 1] ^= v,
            }
        }
    }
    parts
}

fn apply(win: &sccemu::Window<'_, u64>, n: u32, op: &Op, mine: &mut [Vec<u64>]) -> Result<(), String> {
    let sum = SLOTS * n as usize;
    let t = op.target;
    let e = |e: sccemu::RmaError| e.to_string();
    match op.kind {
        OpKind::Put { slot, value } => {
            win.put(t, slot_index(n, slot, op.origin), &[value]).map_err(e)?;
            mine[t as usize][slot] = value;
        }
        OpKind::PutPair { slot, value } => {
            let layout = Vector { count: 2, block_len: 1, stride: 2 * n as usize };
            win.put_strided(t, slot_index(n, slot, op.origin), layout, &[value, value + 1]).map_err(e)?;
            mine[t as usize][slot] = value;
            mine[t as usize][slot + 2] = value + 1;
        }
        OpKind::Get { slot } => {
            let mut got = [0u64];
            win.get(t, slot_index(n, slot, op.origin), &mut got).map_err(e)?;
            if got[0] != mine[t as usize][slot] {
                return Err(format!("{op:?}: got {}, last put {}", got[0], mine[t as usize][slot]));
            }
        }
        OpKind::Add(v) => drop(win.fetch_add(t, sum, v).map_err(e)?),
        OpKind::Xor(v) => drop(win.fetch_xor(t, sum + 1, v).map_err(e)?),
    }
    Ok(())
}

fn run_plan(core: &Core, plan: Plan) -> Result<Vec<u64>, String> {
    let s = |e: &dyn std::fmt::Display| e.to_string();
    let n = plan.n;
    let me = core.rank();
    let win = core.window::<u64>(part_len(n), plan.placement).map_err(|e| s(&e))?;
    // What this core last put into its own slots of each target.
    let mut mine = vec![vec![0u64; SLOTS]; n as usize];
    for (sync, ops) in &plan.epochs {
        let my_ops: Vec<&Op> = ops.iter().filter(|o| o.origin == me).collect();
        match sync {
            Sync::Fence => {
                win.fence().map_err(|e| s(&e))?;
                for op in &my_ops {
                    apply(&win, n, op, &mut mine)?;
                }
                win.fence_with(Assert::NOSUCCEED).map_err(|e| s(&e))?;
            }
            Sync::Pscw => {
                let targets: Group = my_ops.iter().map(|o| o.target).collect();
                let origins: Group = ops.iter().filter(|o| o.target == me).map(|o| o.origin).collect();
                win.post(&origins).map_err(|e| s(&e))?;
                win.start(&targets).map_err(|e| s(&e))?;
                for op in &my_ops {
                    apply(&win, n, op, &mut mine)?;
                }
                win.complete().map_err(|e| s(&e))?;
                win.wait().map_err(|e| s(&e))?;
            }
            Sync::LockAll => {
                let all = win.lock_all().map_err(|e| s(&e))?;
                for op in &my_ops {
                    apply(&all, n, op, &mut mine)?;
                    all.flush(op.target).map_err(|e| s(&e))?;
                }
                all.unlock_all().map_err(|e| s(&e))?;
            }
            Sync::Lock(kind) => {
                for op in &my_ops {
                    let epoch = win.lock(*kind, op.target).map_err(|e| s(&e))?;
                    apply(&epoch, n, op, &mut mine)?;
                    epoch.unlock().map_err(|e| s(&e))?;
                }
            }
        }
    }
    core.barrier().map_err(|e| s(&e))?;
    let part = win.local().to_vec();
    win.free().map_err(|e| s(&e))?;
    Ok(part)
}

fn plan_strategy() -> impl Strategy<Value = Plan> {
    (2u32..=4, prop::bool::ANY).prop_flat_map(|(n, mpb)| {
        let op =
            (0..n, 0..n, 0u8..5, 0..SLOTS, 1u64..1000).prop_map(move |(origin, target, k, slot, v)| Op {
                origin,
                target,
                kind: match k {
                    0 => OpKind::Put { slot, value: v },
                    1 => OpKind::PutPair { slot: slot % 2, value: v },
                    2 => OpKind::Get { slot },
                    3 => OpKind::Add(v),
                    _ => OpKind::Xor(v),
                },
            });
        let sync = prop_oneof![
            Just(Sync::Fence),
            Just(Sync::Pscw),
            Just(Sync::LockAll),
            Just(Sync::Lock(LockKind::Shared)),
            Just(Sync::Lock(LockKind::Exclusive)),
        ];
        let epochs = prop::collection::vec((sync, prop::collection::vec(op, 0..10)), 1..6);
        let placement = if mpb { Placement::Mpb } else { Placement::Dram };
        epochs.prop_map(move |epochs| Plan { n, placement, epochs })
    })
}

proptest! {
    // Each case is a whole job: unbounded shrinking of a failure could run for hours.
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, max_shrink_iters: 20, ..ProptestConfig::default() })]

    #[test]
    fn random_epochs_match_the_sequential_model(plan in plan_strategy()) {
        let got = Job::new(plan.n).run(&plan, run_plan).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got, model(&plan));
    }
}
