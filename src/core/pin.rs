//! Pinning plans: which CPU each rank runs on.
//!
//! A plan is computed once, before any process starts, from the CPUs the launcher may
//! use (its own affinity mask). `compact` packs consecutive ranks together, `scatter`
//! spreads them, and a list names each rank's CPU. With the `hwloc` feature the CPU
//! order comes from the machine's topology (hyperthread siblings adjacent for compact,
//! cores and packages interleaved for scatter); without it, Linux's CPU numbering is
//! used as is. The child pins itself between fork and exec (see `job::spawn`).

use std::fmt;
use std::str::FromStr;

use nix::sched::{CpuSet, sched_getaffinity};
use nix::unistd::Pid;

/// How ranks are placed on CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum PinPolicy {
    /// Leave placement to the OS scheduler.
    None,
    /// Consecutive ranks on the same or neighbouring CPUs.
    #[default]
    Compact,
    /// Consecutive ranks on distant CPUs.
    Scatter,
    /// Rank i on CPU `list[i]`.
    List(Vec<usize>),
}

/// Why a pinning plan cannot be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinError {
    /// The policy is not `none`, `compact`, `scatter` or a CPU list like `0,1,2`; the
    /// text given.
    Parse(String),
    /// A list names fewer CPUs than there are ranks.
    ListTooShort {
        /// CPUs listed.
        listed: usize,
        /// Ranks to place.
        ranks: usize,
    },
    /// A listed CPU is not one this process may use.
    CpuUnavailable(usize),
    /// The affinity mask could not be read, or a CPU set built; the OS's error.
    Affinity(String),
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(s) => {
                write!(f, "pin policy {s:?} is not none, compact, scatter or a CPU list like 0,1,2")
            }
            Self::ListTooShort { listed, ranks } => {
                write!(f, "pin list names {listed} CPUs for {ranks} ranks")
            }
            Self::CpuUnavailable(cpu) => write!(f, "CPU {cpu} is not available to this process"),
            Self::Affinity(e) => write!(f, "cannot read the CPU affinity mask: {e}"),
        }
    }
}

impl std::error::Error for PinError {}

impl FromStr for PinPolicy {
    type Err = PinError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "compact" => Ok(Self::Compact),
            "scatter" => Ok(Self::Scatter),
            list => list
                .split(',')
                .map(|cpu| cpu.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .map(Self::List)
                .map_err(|_| PinError::Parse(s.to_owned())),
        }
    }
}

/// CPUs this process may run on, in the order the policy should hand them out.
fn available_cpus(scatter: bool) -> Result<Vec<usize>, PinError> {
    #[cfg(feature = "hwloc")]
    if let Some(cpus) = topology::ordered_cpus(scatter) {
        return Ok(cpus);
    }
    let _ = scatter;
    let mask = sched_getaffinity(Pid::from_raw(0)).map_err(|e| PinError::Affinity(e.to_string()))?;
    Ok((0..CpuSet::count()).filter(|&cpu| mask.is_set(cpu).unwrap_or(false)).collect())
}

/// How many CPUs this process may use.
pub fn available_cpu_count() -> usize {
    available_cpus(false).map_or(1, |cpus| cpus.len().max(1))
}

/// The one CPU this thread may run on, if its affinity mask names exactly one (and
/// it fits the lock hints' 16 bits, see `rwlock`).
pub fn pinned_cpu() -> Option<u16> {
    let mask = sched_getaffinity(Pid::from_raw(0)).ok()?;
    let mut cpus = (0..CpuSet::count()).filter(|&cpu| mask.is_set(cpu).unwrap_or(false));
    match (cpus.next(), cpus.next()) {
        (Some(cpu), None) => u16::try_from(cpu).ok().filter(|&cpu| cpu < u16::MAX),
        _ => None,
    }
}

/// The CPU of every rank, or `None` everywhere for [`PinPolicy::None`].
pub fn plan(policy: &PinPolicy, ranks: usize) -> Result<Vec<Option<usize>>, PinError> {
    match policy {
        PinPolicy::None => Ok(vec![None; ranks]),
        PinPolicy::List(list) => {
            if list.len() < ranks {
                return Err(PinError::ListTooShort { listed: list.len(), ranks });
            }
            let allowed = available_cpus(false)?;
            if let Some(&cpu) = list.iter().find(|cpu| !allowed.contains(cpu)) {
                return Err(PinError::CpuUnavailable(cpu));
            }
            Ok(list[..ranks].iter().map(|&cpu| Some(cpu)).collect())
        }
        PinPolicy::Compact | PinPolicy::Scatter => {
            let cpus = available_cpus(*policy == PinPolicy::Scatter)?;
            let k = cpus.len();
            // Oversubscribed compact gives each CPU a contiguous block of ranks; scatter
            // deals ranks out round-robin, so neighbours land on different CPUs.
            let index = |rank: usize| match policy {
                PinPolicy::Compact if ranks > k => rank * k / ranks,
                _ => rank % k,
            };
            Ok((0..ranks).map(|rank| Some(cpus[index(rank)])).collect())
        }
    }
}

/// A one-CPU affinity mask, built before fork so the child only makes the syscall.
pub fn cpu_set(cpu: usize) -> nix::Result<CpuSet> {
    let mut set = CpuSet::new();
    set.set(cpu)?;
    Ok(set)
}

#[cfg(feature = "hwloc")]
mod topology {
    use hwloc2::{ObjectType, Topology};

    /// PUs in topology order (siblings adjacent), or interleaved across cores for
    /// scatter. `None` if hwloc cannot read the topology.
    pub fn ordered_cpus(scatter: bool) -> Option<Vec<usize>> {
        let topo = Topology::new()?;
        let cores = topo.objects_with_type(&ObjectType::Core).ok()?;
        let mut per_core: Vec<Vec<usize>> = cores
            .iter()
            .map(|core| {
                core.cpuset().map(|set| set.into_iter().map(|pu| pu as usize).collect()).unwrap_or_default()
            })
            .filter(|pus: &Vec<usize>| !pus.is_empty())
            .collect();
        let allowed = super::sched_getaffinity(super::Pid::from_raw(0)).ok()?;
        for pus in &mut per_core {
            pus.retain(|&pu| allowed.is_set(pu).unwrap_or(false));
        }
        per_core.retain(|pus| !pus.is_empty());
        if per_core.is_empty() {
            return None;
        }
        if !scatter {
            return Some(per_core.concat());
        }
        let depth = per_core.iter().map(Vec::len).max().unwrap_or(0);
        Some((0..depth).flat_map(|i| per_core.iter().filter_map(move |pus| pus.get(i).copied())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("none".parse(), Ok(PinPolicy::None));
        assert_eq!("compact".parse(), Ok(PinPolicy::Compact));
        assert_eq!("scatter".parse(), Ok(PinPolicy::Scatter));
        assert_eq!("0, 1,0".parse(), Ok(PinPolicy::List(vec![0, 1, 0])));
        assert!("sideways".parse::<PinPolicy>().is_err());
        assert!("0,,1".parse::<PinPolicy>().is_err());
    }

    #[test]
    fn plans_cover_every_rank_on_allowed_cpus() {
        let allowed = available_cpus(false).unwrap();
        for ranks in [1, 2, 3, 48] {
            for policy in [PinPolicy::Compact, PinPolicy::Scatter] {
                let plan = plan(&policy, ranks).unwrap();
                assert_eq!(plan.len(), ranks);
                assert!(plan.iter().all(|cpu| allowed.contains(&cpu.unwrap())));
            }
        }
        let compact = plan(&PinPolicy::Compact, 2 * allowed.len()).unwrap();
        assert_eq!(compact[0], compact[1], "oversubscribed compact keeps neighbours together");
        assert_eq!(plan(&PinPolicy::None, 3).unwrap(), vec![None; 3]);
    }

    #[test]
    fn short_or_foreign_lists_are_refused() {
        assert_eq!(plan(&PinPolicy::List(vec![0]), 2), Err(PinError::ListTooShort { listed: 1, ranks: 2 }));
        assert_eq!(plan(&PinPolicy::List(vec![0, 100_000]), 2), Err(PinError::CpuUnavailable(100_000)));
    }
}
