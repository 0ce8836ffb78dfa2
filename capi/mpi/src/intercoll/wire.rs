//! What the intercommunicator collectives of variable size send between the groups: an
//! outcome (data or an error) in two messages, and lists of byte blocks in one.
//!
//! An outcome travels as a header `[class, length]` (two little-endian `u64`s; class 0
//! for data) and then, if there is data, the data in a second message with the same
//! tag. Messages with one tag between two processes arrive in the order sent, so the
//! receiver takes the header first and then exactly `length` bytes: it never needs to
//! guess a size, and a sender that failed still sends its header, so that its peer
//! returns the sender's error class instead of waiting.
//!
//! A list of blocks ([`join`]) is its count, each block's length, then the blocks one
//! after another, all lengths as `u64`s; [`split`] checks that the bytes are such a list
//! of the expected count, so a malformed message is an error, never an out-of-bounds
//! read.

use std::ffi::c_int;

use sccemu::{Source, TagMatch};

use crate::comm::CommObj;
use crate::create_group::{from_bytes, to_bytes};
use crate::error::{MpiResult, class, fail};
use crate::p2p::{self, send_error};
use crate::state::mpi;

/// Sends `outgoing` (data, or the sender's error) to world rank `to` and receives the
/// outcome that world rank `from` sends, in `ic`'s hidden context of `phase`: the data
/// received (empty without `from`). Both sends are nonblocking and completed after the
/// receive, so two processes that transfer to each other at once never wait on each
/// other's send.
pub(super) fn transfer(
    ic: &CommObj,
    phase: u32,
    to: Option<u32>,
    outgoing: &MpiResult<Vec<u8>>,
    from: Option<u32>,
) -> MpiResult<Vec<u8>> {
    let core = mpi()?.core;
    let wire = ic.inter_tag(phase);
    let (class, data) = match outgoing {
        Ok(d) => (0, &d[..]),
        Err(e) => (e.class as u64, &[][..]),
    };
    let mut sends = Vec::new();
    if let Some(to) = to {
        sends.push(core.isend(to, wire, &to_bytes(&[class, data.len() as u64])).map_err(send_error)?);
        if !data.is_empty() {
            sends.push(core.isend(to, wire, data).map_err(send_error)?);
        }
    }
    let got = match from {
        Some(from) => receive(ic, from, wire),
        None => Ok(Vec::new()),
    };
    // Every send is completed, even after one failed: none may outlive the call.
    let mut sent = Ok(());
    for s in sends {
        let done = p2p::await_send(s);
        sent = sent.and(done);
    }
    let got = got?;
    sent?;
    Ok(got)
}

/// The receiving half of [`transfer`].
fn receive(ic: &CommObj, from: u32, wire: u32) -> MpiResult<Vec<u8>> {
    let mut header = [0u8; 16];
    let got = p2p::recv(ic, Source::Rank(from), TagMatch::Tag(wire), &mut header)?;
    let [class, len] = <[u64; 2]>::try_from(from_bytes(&header[..got.bytes]).collect::<Vec<_>>())
        .map_err(|_| crate::error::MpiError::new(class::INTERN, "a short outcome header"))?;
    if class != 0 {
        return fail(class as c_int, "the remote group failed the call (see its error)");
    }
    let mut data = vec![0u8; len as usize];
    if len > 0 {
        let got = p2p::recv(ic, Source::Rank(from), TagMatch::Tag(wire), &mut data)?;
        if got.bytes != data.len() {
            return fail(class::INTERN, format!("{} bytes of an announced {len}", got.bytes));
        }
    }
    Ok(data)
}

/// The list of `blocks` as one byte string (module docs).
pub(super) fn join<B: AsRef<[u8]>>(blocks: &[B]) -> Vec<u8> {
    let mut words = vec![blocks.len() as u64];
    words.extend(blocks.iter().map(|b| b.as_ref().len() as u64));
    let mut out = to_bytes(&words);
    for b in blocks {
        out.extend_from_slice(b.as_ref());
    }
    out
}

/// The `n` blocks of a list made by [`join`]; anything else is `MPI_ERR_INTERN` (the
/// callers check counts and lengths against the user's arguments first, where a
/// mismatch is the user's).
pub(super) fn split(bytes: &[u8], n: usize) -> MpiResult<Vec<&[u8]>> {
    let malformed =
        || fail(class::INTERN, format!("a list of {} bytes is not one of {n} blocks", bytes.len()));
    let Some(head) = n.checked_add(1).and_then(|w| w.checked_mul(8)).filter(|&h| h <= bytes.len()) else {
        return malformed();
    };
    let words: Vec<u64> = from_bytes(&bytes[..head]).collect();
    if words[0] != n as u64 {
        return malformed();
    }
    let mut rest = &bytes[head..];
    let mut blocks = Vec::with_capacity(n);
    for &len in &words[1..] {
        let Some((block, tail)) = usize::try_from(len).ok().and_then(|l| rest.split_at_checked(l)) else {
            return malformed();
        };
        blocks.push(block);
        rest = tail;
    }
    if !rest.is_empty() {
        return malformed();
    }
    Ok(blocks)
}
