//! Neighbour exchange in four versions: the communication step of the stencil and halo
//! applications (RCKMPI's CFD automaton, the MPICH2 paper's ghost-area exchange).
//!
//! Each core has K directions; direction `d` leads to neighbour `nb[d]` (or nowhere).
//! One exchange sends `out[d]` to `nb[d]` and fills `inbox[d]` with what `nb[d]` sent
//! towards this core (its direction `opposite(d)`), running `overlap` (the interior
//! computation) while the data is in flight.
//!
//! - `TwoSided`: irecv from every neighbour, isend to every neighbour, overlap, wait all.
//!   Tags are directions, so a neighbour met in two directions stays unambiguous; the
//!   receives are posted in the order of their tags, as in the C peers (`halo.c`).
//! - `Fence`: put into the neighbours' windows, overlap, one fence, copy out.
//! - `Pscw`: post to and start with the neighbour group, put, complete, overlap, wait.
//! - `Lock`: per neighbour a shared lock, puts, unlock; overlap; then a barrier, after
//!   which every neighbour's puts are known to be in (the MPI peer programs notify the
//!   same way, so that both do the same work).
//!
//! One-sided versions land data in a window of `2 x K` slots: the slot of step parity
//! `p` for data from direction `d`. A neighbour can be at most one step ahead (it needs
//! this core's data of the current step to finish its own), so the slot it writes for
//! the next step is never the one still being read: one synchronisation per step.

use std::error::Error;

use sccemu::{Core, Group, LockKind, Placement, Window};
use serde::{Deserialize, Serialize};

/// The four ways to exchange halos.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Version {
    TwoSided,
    Fence,
    Pscw,
    Lock,
}

impl Version {
    pub const ALL: [Version; 4] = [Version::TwoSided, Version::Fence, Version::Pscw, Version::Lock];

    pub fn name(self) -> &'static str {
        match self {
            Version::TwoSided => "two-sided",
            Version::Fence => "fence",
            Version::Pscw => "pscw",
            Version::Lock => "lock",
        }
    }

    /// The suffix of benchmark pattern names (`halo-p2p`, `stencil-fence`, ...), shared
    /// with the MPI peer programs.
    pub fn pattern(self) -> &'static str {
        match self {
            Version::TwoSided => "p2p",
            other => other.name(),
        }
    }
}

impl std::str::FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::ALL
            .into_iter()
            .find(|v| v.name() == s || v.pattern() == s)
            .ok_or_else(|| format!("unknown version {s:?}: two-sided, fence, pscw or lock"))
    }
}

pub type BoxError = Box<dyn Error + Send + Sync>;

/// The most directions an exchange takes: every neighbour of a point of a 2-D grid.
pub const MAX_DIRECTIONS: usize = 8;

/// One core's side of a neighbour exchange, set up collectively.
pub struct Exchange<'c> {
    core: &'c Core,
    version: Version,
    neighbours: Vec<Option<u32>>,
    /// The directions that have a neighbour, and its rank.
    targets: Vec<(usize, u32)>,
    /// By tag `d`, the direction whose neighbour sends it (`opposite(d)`), if any.
    sources: Vec<Option<(usize, u32)>>,
    opposite: fn(usize) -> usize,
    bytes: usize,
    window: Option<Window<'c, u8>>,
    group: Group,
    step: u32,
}

impl<'c> Exchange<'c> {
    /// Collective: every core passes its own neighbours and the same `bytes` per
    /// direction.
    pub fn new(
        core: &'c Core,
        version: Version,
        neighbours: Vec<Option<u32>>,
        opposite: fn(usize) -> usize,
        bytes: usize,
    ) -> Result<Exchange<'c>, BoxError> {
        let k = neighbours.len();
        if k > MAX_DIRECTIONS {
            return Err(format!("{k} directions; an exchange has at most {MAX_DIRECTIONS}").into());
        }
        // A neighbour met in several directions (small tori) is one group member.
        let mut distinct: Vec<u32> = neighbours.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let group = Group::new(distinct)?;
        let window = match version {
            Version::TwoSided => None,
            _ => Some(core.window::<u8>(2 * k * bytes.max(1), Placement::Dram)?),
        };
        if let (Version::Fence, Some(w)) = (version, &window) {
            w.fence()?;
        }
        let targets = neighbours.iter().enumerate().filter_map(|(d, n)| Some((d, (*n)?))).collect();
        let sources = (0..k).map(|d| neighbours[opposite(d)].map(|from| (opposite(d), from))).collect();
        Ok(Exchange { core, version, neighbours, targets, sources, opposite, bytes, window, group, step: 0 })
    }

    fn slot(&self, parity: u32, from: usize) -> usize {
        (parity as usize * self.neighbours.len() + from) * self.bytes
    }

    /// Sends `out[d]` to neighbour `d`, receives `inbox[d]` from it, running `overlap`
    /// meanwhile. Directions without a neighbour are skipped.
    pub fn exchange(
        &mut self,
        out: &[&[u8]],
        inbox: &mut [&mut [u8]],
        overlap: impl FnOnce(),
    ) -> Result<(), BoxError> {
        self.step += 1;
        let parity = self.step % 2;
        let targets = &self.targets;
        match self.version {
            Version::TwoSided => {
                let core = self.core;
                // Buffers by direction, taken out as their receives are posted; the C
                // peers keep theirs in arrays, and neither allocates per exchange beyond
                // the request list.
                let mut slots: [Option<&mut [u8]>; MAX_DIRECTIONS] = Default::default();
                for (slot, buf) in slots.iter_mut().zip(inbox.iter_mut()) {
                    *slot = Some(&mut **buf);
                }
                let mut requests = Vec::with_capacity(2 * targets.len());
                // The receive of what travels in direction d (tag d) is posted d-th, as
                // the C peers do: each neighbour's sends then meet the receives in the
                // order they are waited for (straight into their buffers, not queued).
                for (d, source) in self.sources.iter().enumerate() {
                    let Some((from_dir, from)) = *source else { continue };
                    let buf = slots[from_dir].take().expect("one buffer per direction");
                    requests.push(core.irecv(from, d as u32, buf)?);
                }
                for &(d, to) in targets {
                    requests.push(core.isend(to, d as u32, out[d])?);
                }
                overlap();
                for request in requests {
                    request.wait()?;
                }
                return Ok(());
            }
            Version::Fence => {
                let w = self.window.as_ref().expect("one-sided");
                for &(d, to) in targets {
                    w.put(to, self.slot(parity, (self.opposite)(d)), out[d])?;
                }
                overlap();
                w.fence()?;
            }
            Version::Pscw => {
                let w = self.window.as_ref().expect("one-sided");
                w.post(&self.group)?;
                w.start(&self.group)?;
                for &(d, to) in targets {
                    w.put(to, self.slot(parity, (self.opposite)(d)), out[d])?;
                }
                w.complete()?;
                overlap();
                w.wait()?;
            }
            Version::Lock => {
                let w = self.window.as_ref().expect("one-sided");
                for to in self.group.iter() {
                    let epoch = w.lock(LockKind::Shared, to)?;
                    for &(d, _) in targets.iter().filter(|&&(_, t)| t == to) {
                        w.put(to, self.slot(parity, (self.opposite)(d)), out[d])?;
                    }
                    epoch.unlock()?;
                }
                overlap();
                self.core.barrier()?;
            }
        }
        let w = self.window.as_ref().expect("one-sided");
        for &(d, _) in targets {
            w.local().read(self.slot(parity, d), inbox[d])?;
        }
        Ok(())
    }

    /// Collective: releases the window.
    pub fn free(self) -> Result<(), BoxError> {
        if let Some(w) = self.window {
            w.free()?;
        }
        Ok(())
    }
}
