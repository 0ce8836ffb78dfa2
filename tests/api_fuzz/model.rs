//! The fuzzed scripts and the reference model of `api_fuzz`: what each step does and
//! which typed error (if any) each rank must get for it, plus the proptest strategies
//! that generate the steps.

use proptest::prelude::*;
use sccemu::{CollError, Element, FlagError, MpbError, Op, RmaError, SyncError, WindowError};
use serde::{Deserialize, Serialize};
/// Elements (u32) in every rank's part of the fuzzed window.
pub(crate) const PART: usize = 8;
/// Bytes of every MPB in the fuzzed jobs.
pub(crate) const MPB: usize = 8192;
/// Bytes of the MPB region each job allocates for its valid MPB puts.
pub(crate) const MINE: usize = 64;

/// A peer: relative to the caller (`(me + k) % n`), or an absolute rank (out of range
/// when generated).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) enum Target {
    Rel(u32),
    Abs(u32),
}

impl Target {
    pub(crate) fn rank(self, me: u32, n: u32) -> u32 {
        match self {
            Target::Rel(k) => (me + k) % n,
            Target::Abs(r) => r,
        }
    }
}

/// An MPB offset: inside this job's own region, at the MPB's last valid byte for the
/// length, one byte past that, or overflowing.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) enum Off {
    Mine(usize),
    Edge,
    Past,
    Max,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) enum Step {
    Put {
        t: Target,
        index: usize,
        len: usize,
    },
    Get {
        t: Target,
        index: usize,
        len: usize,
    },
    FetchAdd64 {
        t: Target,
        index: usize,
    },
    Acc {
        t: Target,
        index: usize,
        len: usize,
    },
    Cas32 {
        t: Target,
        index: usize,
    },
    LenOf {
        t: Target,
    },
    Fence,
    Lock {
        t: Target,
        exclusive: bool,
    },
    Unlock {
        t: Target,
    },
    LockAll,
    UnlockAll,
    Flush {
        t: Target,
    },
    FlushAll,
    /// post(left), start(right), put to right, complete, wait.
    Pscw,
    Complete,
    Wait,
    Test,
    /// Collective: frees the window and allocates a new one.
    Free,
    /// Collective: a barrier, lock_all, then free (refused: epoch open), new window.
    FreeLocked,
    MpbPut {
        t: Target,
        off: Off,
        len: usize,
    },
    MpbGet {
        t: Target,
        off: Off,
        len: usize,
    },
    FlagWrite {
        t: Target,
        value: u32,
    },
    FlagRead {
        t: Target,
    },
    FlagWaitAt {
        t: Target,
    },
    Barrier,
    Allreduce,
    AllreduceMismatch,
    AllreduceBadOp,
    Bcast {
        root: u32,
    },
    Split,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Script {
    pub(crate) n: u32,
    pub(crate) mpb: bool,
    /// Windows accumulate through the owner-computes agents (else atomics).
    pub(crate) owner: bool,
    pub(crate) steps: Vec<Step>,
}

/// What one rank should see: its epochs on the current window.
pub(crate) struct Model {
    n: u32,
    me: u32,
    fence_open: bool,
    /// Per target: `Some(exclusive)` while locked by `lock`.
    locks: Vec<Option<bool>>,
    lock_all: bool,
}

fn ok() -> Option<String> {
    Some("Ok".into())
}

fn err(e: impl std::fmt::Debug) -> Option<String> {
    Some(format!("{e:?}"))
}

impl Model {
    fn new(n: u32, me: u32) -> Model {
        Model { n, me, fence_open: false, locks: vec![None; n as usize], lock_all: false }
    }

    fn locked(&self) -> bool {
        self.lock_all || self.locks.iter().any(Option::is_some)
    }

    fn rma(&self, t: Target, index: usize, len: usize) -> Result<(), RmaError> {
        let rank = t.rank(self.me, self.n);
        if rank >= self.n {
            return Err(RmaError::RankOutOfRange { rank, size: self.n });
        }
        if !(self.fence_open || self.lock_all || self.locks[rank as usize].is_some()) {
            return Err(RmaError::NoEpoch { rank });
        }
        if index.checked_add(len).is_none_or(|end| end > PART) {
            return Err(RmaError::OutOfBounds { rank, index, len, part_len: PART });
        }
        Ok(())
    }

    fn atomic(&self, t: Target, index: usize, width: usize) -> Result<(), RmaError> {
        self.rma(t, 0, 0)?;
        let rank = t.rank(self.me, self.n);
        let byte_offset =
            index.checked_mul(4).filter(|b| b.checked_add(width).is_some_and(|e| e <= PART * 4));
        let Some(byte_offset) = byte_offset else {
            return Err(RmaError::OutOfBounds { rank, index, len: 1, part_len: PART });
        };
        if byte_offset % width != 0 {
            return Err(RmaError::Misaligned { rank, byte_offset, width });
        }
        Ok(())
    }

    fn sync_rank(&self, t: Target) -> Result<u32, SyncError> {
        let rank = t.rank(self.me, self.n);
        if rank >= self.n {
            return Err(SyncError::RankOutOfRange { rank, size: self.n });
        }
        Ok(rank)
    }

    fn mpb(&self, t: Target, off: Off, len: usize) -> Result<(), MpbError> {
        let rank = t.rank(self.me, self.n);
        if rank >= self.n {
            return Err(MpbError::RankOutOfRange { rank, size: self.n });
        }
        // Offsets inside this job's own region are in bounds by construction (the
        // generator keeps `len` within it); the model does not know where it lies.
        let offset = offset_of(off, len, 0);
        if !matches!(off, Off::Mine(_)) && offset.checked_add(len).is_none_or(|end| end > MPB) {
            return Err(MpbError::OutOfBounds { offset, len, mpb_bytes: MPB });
        }
        Ok(())
    }

    fn flag(&self, t: Target) -> Result<(), FlagError> {
        let rank = t.rank(self.me, self.n);
        if rank >= self.n {
            return Err(FlagError::RankOutOfRange { rank, size: self.n });
        }
        Ok(())
    }

    /// The outcome of `step`, updating the model; `None` if the step may deadlock a
    /// job whose ranks run this script (the step is then dropped).
    fn apply(&mut self, step: &Step) -> Option<String> {
        let as_text = |r: Result<(), String>| Some(r.map_or_else(|e| e, |()| "Ok".into()));
        let excl_held = self.locks.contains(&Some(true));
        match step {
            Step::Put { t, index, len } | Step::Get { t, index, len } => {
                as_text(self.rma(*t, *index, *len).map_err(|e| format!("{e:?}")))
            }
            Step::FetchAdd64 { t, index } => {
                as_text(self.atomic(*t, *index, 8).map_err(|e| format!("{e:?}")))
            }
            Step::Acc { t, index, len } => match self.rma(*t, *index, *len) {
                Ok(()) => ok(),
                Err(e) => err(sccemu::AccError::Rma(e)),
            },
            Step::Cas32 { t, index } => as_text(self.atomic(*t, *index, 4).map_err(|e| format!("{e:?}"))),
            Step::LenOf { t } => {
                let rank = t.rank(self.me, self.n);
                if rank >= self.n { err(RmaError::RankOutOfRange { rank, size: self.n }) } else { err(PART) }
            }
            Step::Fence => {
                if self.locked() {
                    return err(SyncError::OtherEpochOpen);
                }
                self.fence_open = true;
                ok()
            }
            Step::Lock { t, exclusive } => {
                let rank = match self.sync_rank(*t) {
                    Ok(r) => r,
                    Err(e) => return err(e),
                };
                if self.lock_all || self.locks[rank as usize].is_some() {
                    return err(SyncError::AlreadyLocked { rank });
                }
                // Exclusive only on oneself and alone; shared on peers only while no
                // exclusive lock is held: otherwise ranks of the same script can wait
                // for each other's locks in a cycle.
                let safe = if *exclusive {
                    rank == self.me && !self.locked()
                } else {
                    rank == self.me || !excl_held
                };
                if !safe {
                    return None;
                }
                self.locks[rank as usize] = Some(*exclusive);
                ok()
            }
            Step::Unlock { t } => {
                let rank = match self.sync_rank(*t) {
                    Ok(r) => r,
                    Err(e) => return err(e),
                };
                if self.locks[rank as usize].take().is_none() {
                    return err(SyncError::NotLocked { rank });
                }
                ok()
            }
            Step::LockAll => {
                if self.locked() {
                    return err(SyncError::LockAllConflict);
                }
                self.lock_all = true;
                ok()
            }
            Step::UnlockAll => {
                if !std::mem::take(&mut self.lock_all) {
                    return err(SyncError::NotLockedAll);
                }
                ok()
            }
            Step::Flush { t } => {
                let rank = match self.sync_rank(*t) {
                    Ok(r) => r,
                    Err(e) => return err(e),
                };
                if !self.lock_all && self.locks[rank as usize].is_none() {
                    return err(SyncError::NotLocked { rank });
                }
                ok()
            }
            Step::FlushAll => {
                if self.locked() {
                    ok()
                } else {
                    err(SyncError::NotLockedAll)
                }
            }
            Step::Complete => err(SyncError::NoAccessEpoch),
            Step::Wait | Step::Test => err(SyncError::NoExposureEpoch),
            // Blocking collectives and handshakes: only outside lock epochs.
            Step::Pscw
            | Step::Barrier
            | Step::Allreduce
            | Step::Bcast { .. }
            | Step::Split
            | Step::AllreduceMismatch
            | Step::AllreduceBadOp
            | Step::FreeLocked
                if self.locked() =>
            {
                None
            }
            Step::Pscw | Step::Barrier | Step::Allreduce | Step::Split => ok(),
            Step::AllreduceMismatch => err(CollError::SizeMismatch { expected: 1, found: 2 }),
            Step::AllreduceBadOp => err(CollError::Op(<f64 as Element>::check(Op::BitAnd).unwrap_err())),
            Step::Bcast { root } => {
                if *root >= self.n {
                    err(CollError::RankOutOfRange { rank: *root, size: self.n })
                } else {
                    ok()
                }
            }
            Step::Free => {
                if self.locked() {
                    return None;
                }
                *self = Model::new(self.n, self.me);
                ok()
            }
            Step::FreeLocked => {
                *self = Model::new(self.n, self.me);
                err(WindowError::EpochOpen { rank: 0 })
            }
            Step::MpbPut { t, off, len } | Step::MpbGet { t, off, len } => {
                as_text(self.mpb(*t, *off, *len).map_err(|e| format!("{e:?}")))
            }
            Step::FlagWrite { t, .. } | Step::FlagRead { t } => {
                as_text(self.flag(*t).map_err(|e| format!("{e:?}")))
            }
            Step::FlagWaitAt { t } => match self.flag(*t) {
                Ok(()) => None, // would wait for a value nobody writes
                Err(e) => err(e),
            },
        }
    }
}

pub(crate) fn offset_of(off: Off, len: usize, mine: usize) -> usize {
    match off {
        Off::Mine(k) => mine + k.min(MINE - len.min(MINE)),
        Off::Edge => MPB - len,
        Off::Past => MPB - len + 1,
        Off::Max => usize::MAX,
    }
}

/// Drops the steps the model rejects, and the valid MPB puts outside this job's own
/// region (they would overwrite channel or window state).
pub(crate) fn sanitize(n: u32, steps: Vec<Step>) -> Vec<Step> {
    let mut model = Model::new(n, 0);
    steps
        .into_iter()
        .filter(|s| !matches!(s, Step::MpbPut { t: Target::Rel(_), off: Off::Edge, .. }))
        .filter(|s| model.apply(s).is_some())
        .collect()
}

pub(crate) fn expected(script: &Script, me: u32) -> Vec<String> {
    let mut model = Model::new(script.n, me);
    script.steps.iter().map(|s| model.apply(s).expect("sanitized")).collect()
}

fn target(n: u32) -> impl Strategy<Value = Target> {
    prop_oneof![3 => (0..n).prop_map(Target::Rel), 1 => prop_oneof![Just(n), Just(n + 1), Just(u32::MAX)].prop_map(Target::Abs)]
}

fn index() -> impl Strategy<Value = usize> {
    prop_oneof![0..=PART + 1, Just(usize::MAX), Just(usize::MAX / 4 + 1)]
}

fn off() -> impl Strategy<Value = Off> {
    prop_oneof![(0..MINE).prop_map(Off::Mine), Just(Off::Edge), Just(Off::Past), Just(Off::Max)]
}

fn step(n: u32) -> impl Strategy<Value = Step> {
    let len = || prop_oneof![Just(0usize), Just(1), Just(2), Just(PART), Just(PART + 1)];
    prop_oneof![
        1 => (target(n), index(), len()).prop_map(|(t, index, len)| Step::Put { t, index, len }),
        1 => (target(n), index(), len()).prop_map(|(t, index, len)| Step::Get { t, index, len }),
        1 => (target(n), index()).prop_map(|(t, index)| Step::FetchAdd64 { t, index }),
        1 => (target(n), index()).prop_map(|(t, index)| Step::Cas32 { t, index }),
        1 => (target(n), index(), len()).prop_map(|(t, index, len)| Step::Acc { t, index, len }),
        1 => target(n).prop_map(|t| Step::LenOf { t }),
        2 => Just(Step::Fence),
        3 => (target(n), any::<bool>()).prop_map(|(t, exclusive)| Step::Lock { t, exclusive }),
        3 => target(n).prop_map(|t| Step::Unlock { t }),
        1 => Just(Step::LockAll),
        1 => Just(Step::UnlockAll),
        1 => target(n).prop_map(|t| Step::Flush { t }),
        1 => Just(Step::FlushAll),
        1 => Just(Step::Pscw),
        1 => prop_oneof![Just(Step::Complete), Just(Step::Wait), Just(Step::Test)],
        1 => prop_oneof![Just(Step::Free), Just(Step::FreeLocked)],
        1 => (target(n), off(), prop_oneof![Just(0usize), Just(1), Just(8), Just(MPB)])
            .prop_map(|(t, off, len)| Step::MpbPut { t, off, len: if matches!(off, Off::Mine(_)) { len.min(MINE) } else { len } }),
        1 => (target(n), off(), prop_oneof![Just(0usize), Just(1), Just(8), Just(MPB)])
            .prop_map(|(t, off, len)| Step::MpbGet { t, off, len: if matches!(off, Off::Mine(_)) { len.min(MINE) } else { len } }),
        1 => (target(n), any::<u32>()).prop_map(|(t, value)| Step::FlagWrite { t, value }),
        1 => target(n).prop_map(|t| Step::FlagRead { t }),
        1 => prop_oneof![Just(n), Just(u32::MAX)].prop_map(|r| Step::FlagWaitAt { t: Target::Abs(r) }),
        1 => prop_oneof![Just(Step::Barrier), Just(Step::Allreduce), Just(Step::Split)],
        1 => prop_oneof![Just(Step::AllreduceMismatch), Just(Step::AllreduceBadOp)],
        1 => prop_oneof![Just(0), Just(n - 1), Just(n), Just(u32::MAX)].prop_map(|root| Step::Bcast { root }),
    ]
}

pub(crate) fn script() -> impl Strategy<Value = Script> {
    (3u32..=4, any::<bool>(), any::<bool>()).prop_flat_map(|(n, mpb, owner)| {
        prop::collection::vec(step(n), 1..=30).prop_map(move |steps| Script {
            n,
            mpb,
            owner,
            steps: sanitize(n, steps),
        })
    })
}
