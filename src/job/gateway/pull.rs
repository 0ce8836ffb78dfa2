//! The gateway's half of a large message to another node: it reads the sender's buffer
//! once, straight into the batch, and answers the announcement itself.
//!
//! A blocking send of at least the single-copy threshold (`p2p::cma`) to a rank on
//! another node announces the message in the stand-in channel as it would to a local
//! rank (`p2p::rendezvous`): a [`FragKind::Rendezvous`] fragment with the buffer's
//! address and a token. The gateway, which consumes that channel, is the reader:
//! 1. it copies the bytes out of the sender's process (`process_vm_readv`; the sender
//!    is a child of the gateway's process, and lets its peers read it anyway) into the
//!    batch for the destination's node, with the announcement's stamp: a message of
//!    at most [`WHOLE_MAX`] bytes as one whole frame (`frame`), which the other node's
//!    gateway lends to the receiver (`lend`); a longer one as the data fragments the
//!    sender would have written (each at most a ring entry, the first with the
//!    message's length), which that gateway publishes like any others;
//! 2. once every byte is in a batch it releases the announcement and answers
//!    [`FragKind::Done`] for the destination, which lets the send return; the answer
//!    is a frame for the sender like any from another node (queued if its channel is
//!    full: the gateway never waits on a channel).
//!
//! So a 1 MiB message leaves in one MPI message after one copy, instead of about
//! twenty ring-fulls each written by the sender, copied out by the gateway and sent
//! on their own.
//!
//! Bounded work: one collect reads at most [`PULL_BYTES`] of an announcement. A longer
//! message keeps its announcement at the head of the channel (nothing behind it moves,
//! which keeps each pair's order) and the next collect goes on where this one stopped
//! (`done`, kept per pair by the caller).
//!
//! Refusal: if the kernel will not let the gateway read the sender (`EPERM`), the
//! announcement becomes the first fragment of an ordinary message with no bytes yet,
//! and the answer [`FragKind::Refused`]: the sender then sends the bytes as
//! continuations through the channel, as it does for a local receiver that was refused.
//! A sender that died (`ESRCH`) leaves its announcement in place: the launcher aborts
//! the job, which names it. An address that cannot be read is a corrupted announcement.

use crate::p2p::cma::{self, ReadError};
use crate::protocol::ring::frag::{FragHeader, FragKind, Rendezvous};
use crate::segment::mapping::Segment;
use crate::sync::Ordering;

use super::frame::{self, Frame, WHOLE_MAX};

/// The most one collect reads of one announced message: a message of up to this size
/// crosses in one MPI message, and a larger one in pieces of this size, so that the
/// gateway's batches and its time per collect stay bounded.
pub(super) const PULL_BYTES: u32 = WHOLE_MAX;

/// What a pull of an announcement did.
pub(super) enum Pulled {
    /// Some bytes are in the batch; the next collect goes on.
    Part,
    /// The message is in the batch (or, refused, its first fragment): release the
    /// announcement and send the sender this answer.
    Whole(Frame),
    /// The sender is gone: leave the announcement, the job's abort follows.
    Gone,
}

/// Reads on the message that rank `header.src` announced (`at`) to rank `dest`, from
/// byte `done` (updated), into `batch` as data fragments of at most `max_payload`
/// bytes stamped `stamp`.
pub(super) fn pull(
    seg: &Segment,
    (dest, header, stamp): (u32, &FragHeader, u64),
    at: Rendezvous,
    done: &mut u32,
    (max_payload, batch): (u32, &mut Vec<u8>),
) -> Result<Pulled, String> {
    let (src, tag, total) = (header.src, header.tag, header.total);
    // Relaxed: the sender stored its pid at attach, before it published the
    // announcement with the Release that the gateway's peek acquired.
    let pid = seg.slot(src).pid.load(Ordering::Relaxed);
    let answer = |kind| Frame {
        dest: src,
        header: FragHeader { src: dest, tag: at.token, len: 0, total: 0, first: true, kind },
        stamp: 0,
        whole: false,
        payload: Vec::new(),
        charge: 0,
    };
    let stop = done.saturating_add(PULL_BYTES).min(total);
    let whole = total <= WHOLE_MAX;
    loop {
        let len = if whole { total } else { (total - *done).min(max_payload.max(1)) };
        let fragment = FragHeader::data(src, tag, len, total, *done == 0);
        let start = frame::append(batch, (dest, &fragment, stamp), whole);
        let addr = at.addr.checked_add(u64::from(*done)).ok_or("an announcement past the address space")?;
        match cma::read(pid, addr, &mut batch[start..]) {
            Ok(()) => *done += len,
            Err(e) => {
                batch.truncate(start - frame::HEADER);
                return match e {
                    ReadError::Refused if *done == 0 => {
                        let first = FragHeader::data(src, tag, 0, total, true);
                        frame::append(batch, (dest, &first, stamp), false);
                        Ok(Pulled::Whole(answer(FragKind::Refused)))
                    }
                    ReadError::Gone => Ok(Pulled::Gone),
                    ReadError::Refused => Err(format!("rank {src}'s memory could be read, then not")),
                    ReadError::Fault(errno) => {
                        Err(format!("rank {src} announced a message at {:#x} it cannot be read at (errno {errno})", at.addr))
                    }
                };
            }
        }
        if *done == total {
            *done = 0;
            return Ok(Pulled::Whole(answer(FragKind::Done)));
        }
        if *done >= stop {
            return Ok(Pulled::Part);
        }
    }
}
