//! What every suite measures on the MPI side: which peer program, patterns, core counts
//! and message sizes, at full scale and in `--quick` mode.
//!
//! Pattern names are the contract with the sccemu suites: a ratio sccemu/MPI is taken
//! between rows with the same (pattern, cores, bytes). A suite that wants ratios names
//! its sccemu rows with the patterns listed here.

use sccemu_benches::measure::SuiteParams;

/// A value at full scale and in quick mode.
pub struct Scaled<T: 'static> {
    pub full: &'static [T],
    pub quick: &'static [T],
}

impl<T> Scaled<T> {
    pub fn pick(&self, params: &SuiteParams) -> &'static [T] {
        if params.quick { self.quick } else { self.full }
    }
}

/// One peer program run for some patterns, at every core count and size listed.
pub struct PeerSpec {
    /// `benches/mpi/<program>.c`.
    pub program: &'static str,
    pub patterns: &'static [&'static str],
    pub cores: Scaled<u32>,
    pub sizes: Scaled<u64>,
    /// Operations per timed sample at full scale (the peer shrinks it for large or
    /// unexpectedly slow operations).
    pub inner: u32,
}

impl PeerSpec {
    pub fn inner(&self, params: &SuiteParams) -> u32 {
        if params.quick { self.inner.min(10) } else { self.inner }
    }
}

/// A suite as the report knows it, whether or not sccemu registers it yet.
pub struct SuiteSpec {
    pub name: &'static str,
    /// The figure or table it reproduces.
    pub about: &'static str,
    pub peers: &'static [PeerSpec],
    /// What a second table divides each figure by, within one implementation.
    pub baseline: Option<Baseline>,
}

/// The reference of a suite's table of ratios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Time over this pattern's time at the same cores and bytes (the MPICH2 paper's
    /// one-sided/point-to-point tables).
    Pattern(&'static str),
    /// Speedup: the same pattern's time at one core over its time at N.
    OneCore,
    /// Time over this implementation's at the same pattern, cores and bytes.
    Implementation(&'static str),
}

/// 2^first .. 2^(first + N - 1).
const fn powers_of_two<const N: usize>(first: u32) -> [u64; N] {
    let mut sizes = [0; N];
    let mut i = 0;
    while i < N {
        sizes[i] = 1 << (first + i as u32);
        i += 1;
    }
    sizes
}

const ONE_B_TO_1_MIB: [u64; 21] = powers_of_two(0);
const HALO_16_B_TO_256_KIB: [u64; 15] = powers_of_two(4);
const ALLGATHER_512_B_TO_32_KIB: [u64; 7] = powers_of_two(9);
/// 8 B .. 1 MiB with the owner-computes paper's 720 KB point.
const ACCUMULATE_SIZES: [u64; 19] = [
    8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
    737280, 1048576,
];

pub const CATALOG: &[SuiteSpec] = &[
    SuiteSpec {
        name: "barrier",
        about: "barrier latency for N = 2, 8, 48 cores (spine speed targets)",
        baseline: None,
        peers: &[PeerSpec {
            program: "barrier",
            patterns: &["barrier"],
            cores: Scaled { full: &[2, 8, 48], quick: &[2, 8] },
            sizes: Scaled { full: &[0], quick: &[0] },
            inner: 200,
        }],
    },
    SuiteSpec {
        name: "pt2pt",
        about: "ping-pong latency (one-way) and streaming bandwidth, osu-style, 1 B to 1 MiB",
        baseline: None,
        peers: &[PeerSpec {
            program: "pt2pt",
            patterns: &["latency", "bandwidth"],
            cores: Scaled { full: &[2], quick: &[2] },
            sizes: Scaled { full: &ONE_B_TO_1_MIB, quick: &[1, 1024] },
            inner: 1000,
        }],
    },
    SuiteSpec {
        name: "rma",
        about: "put/get under lock+flush, fence and PSCW; fetch-and-op, compare-and-swap, \
                lock/unlock and fence latency. In lock/unlock with 8 cores on 2 CPUs, every \
                rank but 1 locks rank 1 over and over. Open MPI's waiters yield at every poll, \
                so each handoff waits for the scheduler. sccemu's ticket waiters spin while \
                every ticket ahead of them was taken on the other CPU, so handoffs between \
                CPUs move one cache line, and cores sharing a CPU take turns by time slice \
                rather than by epoch.",
        baseline: None,
        peers: &[
            PeerSpec {
                program: "rma",
                patterns: &[
                    "put-lock-flush",
                    "get-lock-flush",
                    "put-fence",
                    "get-fence",
                    "put-pscw",
                    "get-pscw",
                ],
                cores: Scaled { full: &[2], quick: &[2] },
                sizes: Scaled { full: &ONE_B_TO_1_MIB, quick: &[8, 1024] },
                inner: 500,
            },
            PeerSpec {
                program: "rma",
                patterns: &["fetch-and-op", "compare-and-swap"],
                cores: Scaled { full: &[2], quick: &[2] },
                sizes: Scaled { full: &[8], quick: &[8] },
                inner: 1000,
            },
            PeerSpec {
                program: "rma",
                patterns: &["lock-unlock"],
                cores: Scaled { full: &[2, 8], quick: &[2] },
                sizes: Scaled { full: &[0], quick: &[0] },
                inner: 1000,
            },
            PeerSpec {
                program: "rma",
                patterns: &["lock_all-unlock_all"],
                cores: Scaled { full: &[2], quick: &[2] },
                sizes: Scaled { full: &[0], quick: &[0] },
                inner: 1000,
            },
            PeerSpec {
                program: "rma",
                patterns: &["fence"],
                cores: Scaled { full: &[2, 8, 48], quick: &[2] },
                sizes: Scaled { full: &[0], quick: &[0] },
                inner: 200,
            },
        ],
    },
    SuiteSpec {
        name: "acc",
        about: "accumulate bandwidth, SUM on f64, 8 B to 1 MiB incl. 720 KB \
                (owner-computes paper, Figure 2). Unlike on the paper's Quadrics network, \
                owner-computes does not beat caller-computes here: in shared memory the \
                caller combines in place at memory speed, while owner-computes first \
                copies the operand into staging and hands it to the owner's agent, \
                which then combines it (the owner/caller rows give the measured ratio). \
                Contention rows: N-1 origins into one target.",
        baseline: None,
        peers: &[PeerSpec {
            program: "acc",
            patterns: &["accumulate-sum-f64"],
            cores: Scaled { full: &[2], quick: &[2] },
            sizes: Scaled { full: &ACCUMULATE_SIZES, quick: &[8, 4096] },
            inner: 200,
        }],
    },
    SuiteSpec {
        name: "halo",
        about: "ghost exchange with 4 neighbours on a periodic 2-D grid, one-sided vs \
                point-to-point, 16 B to 256 KiB (MPICH2 paper, Tables 1 and 2)",
        baseline: Some(Baseline::Pattern("halo-p2p")),
        peers: &[PeerSpec {
            program: "halo",
            patterns: &["halo-p2p", "halo-fence", "halo-pscw", "halo-lock"],
            cores: Scaled { full: &[2, 4], quick: &[2] },
            sizes: Scaled { full: &HALO_16_B_TO_256_KIB, quick: &[16, 1024] },
            inner: 200,
        }],
    },
    SuiteSpec {
        name: "allgather",
        about: "allgather 512 B to 32 KiB per process, N = 2..48 (concurrency paper, Figures 7 \
                and 8), and allreduce",
        baseline: None,
        peers: &[
            PeerSpec {
                program: "allgather",
                patterns: &["allgather"],
                cores: Scaled { full: &[2, 4, 8, 16, 32, 48], quick: &[2] },
                sizes: Scaled { full: &ALLGATHER_512_B_TO_32_KIB, quick: &[512] },
                inner: 100,
            },
            PeerSpec {
                program: "allgather",
                patterns: &["allreduce"],
                cores: Scaled { full: &[2, 8, 48], quick: &[2] },
                sizes: Scaled { full: &[8, 512, 32768], quick: &[8] },
                inner: 200,
            },
        ],
    },
    SuiteSpec {
        name: "srb",
        about: "shared receive buffer: memory per process and N-1-to-1 many-to-one throughput",
        baseline: None,
        peers: &[PeerSpec {
            program: "pt2pt",
            patterns: &["many-to-one"],
            cores: Scaled { full: &[2, 8, 48], quick: &[2] },
            sizes: Scaled { full: &[8, 1024, 65536], quick: &[8] },
            inner: 20,
        }],
    },
    SuiteSpec {
        name: "stencil",
        about: "9-point stencil, rows split across the cores, 2 halo rows per step, two-sided \
                vs fence, PSCW and lock; time per step and speedup (RCKMPI paper)",
        baseline: Some(Baseline::OneCore),
        peers: &[PeerSpec {
            program: "stencil",
            patterns: &["stencil-p2p", "stencil-fence", "stencil-pscw", "stencil-lock"],
            cores: Scaled { full: &[1, 2, 4, 8], quick: &[1, 2] },
            sizes: Scaled { full: &[1024, 8192], quick: &[1024] },
            inner: 20,
        }],
    },
    SuiteSpec {
        name: "rcce",
        about: "RCCE's synchronous send/recv ping-pong: the C program examples/c/pingpong.c, \
                built at run time with sccemu-cc -O2 and run as 2 UEs the way rccerun runs it, \
                beside sccemu's two-sided ping-pong (the pt2pt suite's latency, over both \
                channel protocols) at every size the program prints: one-way µs and MB/s. \
                The program prints the mean of its round trips per size, so the rcce rows' \
                spread is over launches of it. No MPI runs this suite.",
        baseline: Some(Baseline::Implementation("rcce")),
        peers: &[],
    },
];

/// Suites the harness runs itself rather than through `sccemu_benches`: each writes
/// its own table (see [`crate::bench::scale`] and [`crate::bench::vtime`]).
/// `nodes` (`bench::nodes`) is one of them only with the `multinode` feature.
pub const HARNESS_SUITES: &[(&str, &str)] = &[
    (crate::bench::scale::NAME, crate::bench::scale::ABOUT),
    (crate::bench::vtime::NAME, crate::bench::vtime::ABOUT),
    #[cfg(feature = "multinode")]
    (crate::bench::nodes::NAME, crate::bench::nodes::ABOUT),
];

/// The suite that needs sccrun's `--nodes` (the `multinode` feature).
pub const NODES_SUITE: &str = "nodes";

pub fn suite_spec(name: &str) -> Option<&'static SuiteSpec> {
    CATALOG.iter().find(|s| s.name == name)
}

/// The peer programs' sources, built by the harness wherever it runs.
pub const PEER_SOURCES: &[(&str, &str)] = &[
    ("common.h", include_str!("../../../benches/mpi/common.h")),
    ("barrier.c", include_str!("../../../benches/mpi/barrier.c")),
    ("pt2pt.c", include_str!("../../../benches/mpi/pt2pt.c")),
    ("rma.c", include_str!("../../../benches/mpi/rma.c")),
    ("acc.c", include_str!("../../../benches/mpi/acc.c")),
    ("halo.c", include_str!("../../../benches/mpi/halo.c")),
    ("allgather.c", include_str!("../../../benches/mpi/allgather.c")),
    ("stencil.c", include_str!("../../../benches/mpi/stencil.c")),
    ("hello.c", include_str!("../../../benches/mpi/hello.c")),
];
