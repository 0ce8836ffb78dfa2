//! One process's RCCE state: the core it plays, its share of the MPB and of shared
//! DRAM, and the replicated allocators that make every allocation symmetric.
//!
//! `RCCE_init` builds the state once ([`Rcce::init`]) and every call reaches it through
//! [`rcce`]. Start-up is collective and runs the same steps in the same order on every
//! core, so symmetric allocations land at the same offsets without communication:
//! 1. one sccemu MPB allocation of [`MPB_BYTES`] (RCCE's whole MPB; line 0 reserved);
//! 2. one heap allocation holding the test-and-set registers, the power state, the
//!    checking mode's size words and the [`SHM_BYTES`] of `RCCE_shmalloc` memory
//!    (across nodes: one per node, without `RCCE_shmalloc` memory, see `nodes`);
//! 3. the flags of `RCCE_COMM_WORLD`, then (non-gory) one `sent` and one `ready` flag
//!    per UE. The rest of the MPB is the communication buffer of `RCCE_send`, whose
//!    size is its payload chunk (8128 B at 2 UEs, 8032 B at 48 with byte flags).
//!
//! Everything here is safe Rust over offsets; `ffi` turns C pointers into offsets.

use std::sync::{Mutex, MutexGuard, OnceLock};

use sccemu::Core;
use sccemu::protocol::payload::Payload;
use sccemu::segment::SharedBytes;
use sccemu::segment::collective_alloc::HeapRegion;
use sccemu::sync::{AtomicU32, Ordering};

use crate::alloc::Allocator;
use crate::codes::{Error, LINE, MPB_BYTES, SHM_BYTES};
use crate::flags::{Flag, FlagLines};

static RCCE: OnceLock<Rcce> = OnceLock::new();

/// The state, once `RCCE_init` has run.
pub fn rcce() -> Result<&'static Rcce, Error> {
    RCCE.get().ok_or(Error::CommUndefined)
}

/// Bytes of one test-and-set register's line in shared DRAM.
const REGISTER_BYTES: usize = 64;

/// How the program was built: which prototypes its headers chose.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// Flags are single bits (`-DSINGLEBITFLAGS`).
    pub single_bit_flags: bool,
    /// The gory interface (`-DGORY`): the program manages the MPB itself.
    pub gory: bool,
    /// The program's `RCCE_MAXNP`, which sizes its `RCCE_COMM`.
    pub maxnp: usize,
}

/// The non-gory interface's per-peer flags. Its communication buffer is the longest
/// free range of the MPB at the time of the call, the same on every UE since all
/// allocations are symmetric, so every flag line or `RCCE_malloc` a program takes
/// shrinks the payload chunk.
#[derive(Debug)]
pub struct Channels {
    /// `sent[s]` is set in a receiver's MPB by sender `s`.
    pub sent: Vec<Flag>,
    /// `ready[r]` is set in a sender's MPB by receiver `r`.
    pub ready: Vec<Flag>,
}

/// Offsets inside the shared-DRAM block of [`Rcce::shared`].
#[derive(Clone, Copy, Debug)]
pub struct SharedLayout {
    /// Test-and-set registers, one line per core.
    pub registers: usize,
    /// Power state (see `power`).
    pub power: usize,
    /// Checking mode: the size of the message each pair has in flight.
    pub sizes: usize,
    /// `RCCE_shmalloc` memory.
    pub shm: usize,
    /// The whole block.
    pub total: usize,
}

impl SharedLayout {
    /// The block for `cores` UEs; `with_shm` holds `RCCE_shmalloc` memory (one node).
    fn new(cores: usize, with_shm: bool) -> SharedLayout {
        let registers = 0;
        let power = registers + cores * REGISTER_BYTES;
        let sizes = power + crate::power::STATE_BYTES;
        let shm = (sizes + cores * cores * 8).next_multiple_of(4096);
        SharedLayout { registers, power, sizes, shm, total: shm + if with_shm { SHM_BYTES } else { 0 } }
    }
}

/// One core's RCCE.
pub struct Rcce {
    /// The sccemu core this process plays.
    pub core: Core,
    /// This UE's rank (its core ID's place among the sorted IDs).
    pub rank: u32,
    /// The number of UEs.
    pub size: u32,
    /// The core clock the launcher gave, in GHz.
    pub ghz: f64,
    /// How the program was built.
    pub variant: Variant,
    /// Whether sends and receives compare their sizes (`SCCEMU_CHECK`; never across
    /// nodes, where sccemu's checking mode is off).
    pub check: bool,
    /// Whether the job spans several nodes (`nodes`).
    pub spans: bool,
    /// sccemu MPB offset of RCCE's MPB.
    pub(crate) mpb_offset: usize,
    /// The shared-DRAM block (this node's, across nodes) and where its parts are.
    pub shared: HeapRegion,
    /// Per UE: where its node's shared-DRAM block starts in that node's heap.
    pub shared_of: Vec<usize>,
    /// See [`SharedLayout`].
    pub layout: SharedLayout,
    mpb_alloc: Mutex<Allocator>,
    shm_alloc: Mutex<Allocator>,
    /// Flag lines and which of their flags are taken.
    pub flags: Mutex<FlagLines>,
    /// `RCCE_COMM_WORLD`'s barrier flags (gather, release).
    pub world: (Flag, Flag),
    /// The non-gory interface's channels (`None` for gory programs).
    pub channels: Option<Channels>,
    /// Each barrier's current sense, by its gather flag.
    pub senses: Mutex<Vec<(Flag, u8)>>,
    /// Debug categories turned on (`codes::debug`).
    pub debug: AtomicU32,
}

impl Rcce {
    /// Attaches and sets up, collectively; see the module docs.
    pub fn init(core: Core, rank: u32, ghz: f64, variant: Variant) -> Result<&'static Rcce, (Error, String)> {
        let size = core.size();
        if size as usize > variant.maxnp {
            let why = format!(
                "the job has {size} UEs but the program was built with RCCE_MAXNP {}; rebuild with -DRCCE_MAXNP={size}",
                variant.maxnp
            );
            return Err((Error::NumUes, why));
        }
        let region = core.mpb_alloc(MPB_BYTES).map_err(|e| {
            (
                Error::Malloc,
                format!("no room for RCCE's {MPB_BYTES}-byte MPB ({e}); start RCCE programs with rccerun"),
            )
        })?;
        let spans = core.context().spans_nodes();
        let layout = SharedLayout::new(size as usize, !spans);
        let shared = if spans {
            crate::nodes::node_shared(&core, region.offset, layout)?
        } else {
            let shared = core
                .heap_alloc(layout.total)
                .map_err(|e| (Error::Malloc, format!("no shared DRAM for RCCE: {e}")))?;
            if rank == 0 {
                core.heap_bytes(shared).zero(0, layout.shm);
                crate::power::init_shared(
                    &core.heap_bytes(shared).slice(layout.power, crate::power::STATE_BYTES),
                    &core,
                );
            }
            // Nobody touches a register or the power state before rank 0 has set them up.
            core.barrier().map_err(|e| (Error::NumUes, e.to_string()))?;
            shared
        };
        let mut mpb_alloc = Allocator::new(MPB_BYTES, LINE);
        mpb_alloc.alloc(LINE); // line 0 is reserved
        let per_line = if variant.single_bit_flags { 8 * LINE } else { LINE };
        let check = core.checking() && !spans;
        let shared_of = match spans {
            true => crate::nodes::shared_offsets(&core, shared.offset)?,
            false => vec![shared.offset; size as usize],
        };
        let mut this = Rcce {
            core,
            rank,
            size,
            ghz,
            variant,
            check,
            spans,
            mpb_offset: region.offset,
            shared_of,
            shared,
            layout,
            mpb_alloc: Mutex::new(mpb_alloc),
            shm_alloc: Mutex::new(Allocator::new(SHM_BYTES, LINE)),
            flags: Mutex::new(FlagLines::new(per_line)),
            world: (Flag::NONE, Flag::NONE),
            channels: None,
            senses: Mutex::new(Vec::new()),
            debug: AtomicU32::new(0),
        };
        let too_small = |e: Error| (e, format!("the MPB cannot hold RCCE's own flags: {}", e.message()));
        this.world = (this.flag_alloc().map_err(too_small)?, this.flag_alloc().map_err(too_small)?);
        if !variant.gory {
            let n = size as usize;
            let sent = (0..n).map(|_| this.flag_alloc()).collect::<Result<Vec<_>, _>>().map_err(too_small)?;
            let ready =
                (0..n).map(|_| this.flag_alloc()).collect::<Result<Vec<_>, _>>().map_err(too_small)?;
            this.channels = Some(Channels { sent, ready });
        }
        this.core.barrier().map_err(|e| (Error::NumUes, e.to_string()))?;
        if spans && rank == crate::nodes::node_first(&this.core) {
            // The word `nodes::node_shared` published; every UE of the node read it.
            this.mpb(rank).zero(0, LINE);
        }
        RCCE.set(this).map_err(|_| (Error::CommInitialized, "RCCE_init called twice".to_owned()))?;
        Ok(RCCE.get().expect("just set"))
    }

    /// Locks a mutex of this state; the values they guard stay consistent across a
    /// panic, which the C boundary catches anyway.
    pub fn lock<'a, T>(&self, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Core `id`'s RCCE MPB. Panics unless `id` is a UE (callers check with
    /// [`Rcce::check_id`]) on this node (see [`Rcce::mpb_read`] for any node).
    pub fn mpb(&self, id: u32) -> SharedBytes<'_> {
        self.core.mpb_range(id, self.mpb_offset, MPB_BYTES).expect("RCCE's MPB is inside every core's MPB")
    }

    /// `id` as a UE of this job, or [`Error::Id`].
    pub fn check_id(&self, id: i64) -> Result<u32, Error> {
        u32::try_from(id).ok().filter(|&id| id < self.size).ok_or(Error::Id)
    }

    /// The shared-DRAM block.
    pub fn shared_bytes(&self) -> SharedBytes<'_> {
        self.core.heap_bytes(self.shared)
    }

    /// Collective `RCCE_malloc`: `bytes`, a positive multiple of the line, at the same
    /// offset on every UE.
    pub fn malloc(&self, bytes: usize) -> Result<usize, Error> {
        if bytes == 0 || bytes % LINE != 0 {
            return Err(Error::Alignment);
        }
        self.lock(&self.mpb_alloc).alloc(bytes).ok_or(Error::Malloc)
    }

    /// `RCCE_malloc_request`: `bytes` rounded up to lines, or if that does not fit,
    /// half of it rounded up to lines, and so on down to one line; returns the offset
    /// and the size granted.
    pub fn malloc_request(&self, bytes: usize) -> Result<(usize, usize), Error> {
        let mut want = bytes.checked_next_multiple_of(LINE).ok_or(Error::Malloc)?;
        while want >= LINE {
            if let Ok(offset) = self.malloc(want) {
                return Ok((offset, want));
            }
            if want == LINE {
                break;
            }
            want = (want / 2).next_multiple_of(LINE);
        }
        Err(Error::Malloc)
    }

    /// `RCCE_free` of an offset `RCCE_malloc` gave.
    pub fn free(&self, offset: usize) -> Result<(), Error> {
        self.lock(&self.mpb_alloc).free_at(offset).map_err(|_| Error::Target)
    }

    /// The non-gory communication buffer now: the longest free MPB range.
    pub fn comm_buffer(&self) -> (usize, usize) {
        self.lock(&self.mpb_alloc).largest_free().unwrap_or((0, 0))
    }

    /// Free MPB bytes, for the exhaustion diagnostic.
    pub fn mpb_free_bytes(&self) -> usize {
        self.lock(&self.mpb_alloc).free_bytes()
    }

    /// `RCCE_shmalloc`: an offset into the shared block, the same on every UE; never
    /// across nodes.
    pub fn shmalloc(&self, bytes: usize) -> Option<usize> {
        if self.spans {
            return None;
        }
        let len = bytes.checked_next_multiple_of(LINE).filter(|&l| l > 0)?;
        self.lock(&self.shm_alloc).alloc(len).map(|at| self.layout.shm + at)
    }

    /// `RCCE_shfree` of an offset [`Rcce::shmalloc`] gave.
    pub fn shfree(&self, offset: usize) -> Result<(), Error> {
        let at = offset.checked_sub(self.layout.shm).ok_or(Error::Target)?;
        self.lock(&self.shm_alloc).free_at(at).map_err(|_| Error::Target)
    }

    /// Where core `id`'s test-and-set register lies in the heap of its node.
    pub fn register_offset(&self, id: u32) -> usize {
        self.shared_of[id as usize] + self.layout.registers + id as usize * REGISTER_BYTES
    }

    /// The checking mode's word for messages from `from` to `to`.
    pub fn size_word(&self, from: u32, to: u32) -> &sccemu::sync::AtomicU64 {
        let at = self.layout.sizes + (from as usize * self.size as usize + to as usize) * 8;
        sccemu::segment::view::atomic_u64_at(self.shared_bytes(), at).expect("size words are aligned")
    }

    /// Prints `what` failed with `error` if debugging of `category` is on.
    pub fn report(&self, category: std::ffi::c_int, what: &str, error: Error) {
        let on = crate::codes::debug::bit(category).unwrap_or(0);
        if self.debug.load(Ordering::Relaxed) & on != 0 {
            println!("RCCE UE {}: {what}: {}", self.rank, error.message());
        }
    }
}
