//! The versioned header that opens every segment, and the job-wide words in it that
//! record whether the job runs or aborts, and why. Both sides of a job (the launcher and
//! every core, possibly different builds) read these bytes, hence the magic and the
//! version, bumped on any change of format.

use crate::{Config, Layout};

/// `"SCCEMU\0\x01"`, little-endian: the first word of every segment.
pub const MAGIC: u64 = u64::from_le_bytes(*b"SCCEMU\0\x01");
/// Bumped whenever a header field or a region moves, or a protocol word in the segment
/// changes its format (2: the barrier's count and generation share one word; 3: each
/// control slot holds its core's physical core ID and what it is blocked on; 4: a line
/// per core for the argument fingerprints of checking mode, and one for the summaries
/// of the objects it dropped without freeing them; 5: the heap starts and ends on a page,
/// a window's size table has an entry of two words per core, and virtual-time mode adds
/// a region; 6: an SRB's counters take four lines, with the space waiters' ticket counts
/// and their bells, a fragment's control word carries its kind (single-copy
/// announcements and answers), and each core's virtual-time block adds stamps per ring
/// granule and per sender); 7: a fragment's kind takes three bits (synchronous
/// messages' first fragments and acknowledgements), its length 27; 9: a request channel per node, when the job spans nodes).
pub const LAYOUT_VERSION: u32 = 9;

/// Job state values of [`JobWords::state`].
pub mod job_state {
    pub const RUNNING: u32 = 0;
    pub const ABORTING: u32 = 1;
    /// The first failure is writing its rank and reason; readers see `RUNNING` until
    /// the state becomes `ABORTING`.
    pub const RECORDING: u32 = 2;
}

/// Why a job aborts ([`JobWords::reason`]); `detail` carries the code or signal.
pub mod abort_reason {
    pub const NONE: u32 = 0;
    /// A rank exited with a nonzero status (`detail`).
    pub const EXITED: u32 = 1;
    /// A rank was killed by a signal (`detail`).
    pub const SIGNALED: u32 = 2;
    /// A rank exited with status 0 without finalizing.
    pub const NO_FINALIZE: u32 = 3;
    /// A rank called abort with a code (`detail`).
    pub const USER_ABORT: u32 = 4;
    /// The launcher was interrupted by a signal (`detail`).
    pub const INTERRUPTED: u32 = 5;
    /// A rank found the shared state corrupted and stopped the job rather than trust it.
    pub const CORRUPTED: u32 = 6;
    /// Every live rank was blocked waiting for another, with no progress.
    pub const DEADLOCK: u32 = 7;
}

/// The header's mutable words, on a line of their own. `sccemu` views each field as an
/// atomic; nothing else writes them.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobWords {
    /// [`job_state`]: running, or aborting (never goes back).
    pub state: u32,
    /// The rank whose failure aborted the job (`u32::MAX` for none).
    pub failed_rank: u32,
    /// An [`abort_reason`].
    pub reason: u32,
    /// Exit code or signal number behind `reason`.
    pub detail: u32,
    /// Collective-allocation cursor: bytes of the shared heap handed out so far.
    pub alloc_cursor: u64,
}

/// The first bytes of every segment. The launcher writes it before any core starts and
/// only `job` changes afterwards.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub magic: u64,
    pub version: u32,
    pub header_bytes: u32,
    pub total_bytes: u64,
    /// `CLOCK_MONOTONIC` at launch, in nanoseconds: the zero of every core's clock.
    pub start_ns: u64,
    pub config: Config,
    pub job: JobWords,
}

impl Header {
    pub fn new(config: Config, layout: &Layout, start_ns: u64) -> Header {
        Header {
            magic: MAGIC,
            version: LAYOUT_VERSION,
            header_bytes: size_of::<Header>() as u32,
            total_bytes: layout.total as u64,
            start_ns,
            config,
            job: JobWords { failed_rank: u32::MAX, ..JobWords::default() },
        }
    }
}
