//! RCCE's synchronous send and receive: one handshake per chunk through the sender's
//! MPB.
//!
//! For each chunk the sender copies it into its own communication buffer (padded to
//! whole lines, so a message under 32 B still moves one line), sets `sent` in the
//! receiver's MPB and waits for `ready` in its own. The receiver waits for `sent` in
//! its own MPB, clears it, copies the chunk out of the sender's buffer and sets
//! `ready` in the sender's MPB; the sender clears `ready` and goes on. So a send
//! returns only once the receiver has copied the last chunk, no size or tag travels,
//! and two cores that both send first deadlock, exactly as on the chip. Payload
//! visibility rides on the flags' Release/Acquire (`flags`).
//!
//! The non-gory calls use the per-peer flags `RCCE_init` allocated and the MPB's
//! longest free range ([`crate::state::Channels`]); the gory ones take the program's
//! own buffer and flags.
//!
//! Across nodes the receiver reads a remote sender's chunk with a round trip
//! (`nodes`); the `sent` flag's update reached it after the chunk was written.
//!
//! Checking mode (`SCCEMU_CHECK=1`): before its first chunk the sender stores the
//! message's size in the pair's word in shared DRAM; the receiver, once it sees that
//! chunk's `sent` (which orders the word before it), compares, and stops the job with
//! both sizes on a mismatch, where RCCE would silently fall out of step. In this mode an
//! empty message makes one empty handshake, so that it is compared too.

use sccemu::protocol::payload::Payload;
use sccemu::segment::WaitMark;
use sccemu::sync::Ordering;

use crate::codes::{Error, LINE};
use crate::flags::Flag;
use crate::state::Rcce;

/// The buffer and flags one send or receive uses.
#[derive(Clone, Copy, Debug)]
pub struct Channel {
    /// MPB offset of the communication buffer (the sender's).
    pub buffer: usize,
    /// Bytes per handshake.
    pub chunk: usize,
    /// Set by the receiver in the sender's MPB.
    pub ready: Flag,
    /// Set by the sender in the receiver's MPB.
    pub sent: Flag,
}

/// The chunks of a message; in checking mode an empty message still makes one (empty)
/// handshake, so that its size is compared with the receiver's.
fn pieces(data: &[u8], chunk: usize, check: bool) -> impl Iterator<Item = &[u8]> {
    let one_empty = (check && data.is_empty()).then_some(data);
    data.chunks(chunk / LINE * LINE).chain(one_empty)
}

impl Rcce {
    /// The non-gory channel for a message from `from` to `to`.
    pub fn channel(&self, from: u32, to: u32) -> Result<Channel, Error> {
        let ch = self.channels.as_ref().ok_or(Error::CommUndefined)?;
        let (buffer, chunk) = self.comm_buffer();
        Ok(Channel { buffer, chunk, ready: ch.ready[to as usize], sent: ch.sent[from as usize] })
    }

    /// Sends `data` to `dest` over `ch`; returns once `dest` has copied it all.
    pub fn send(&self, data: &[u8], ch: Channel, dest: u32) -> Result<(), Error> {
        if dest == self.rank {
            return Err(Error::Id);
        }
        if ch.chunk < LINE {
            return Err(Error::MessageLength);
        }
        if self.check {
            // Relaxed: published by the Release of the first `sent` below.
            self.size_word(self.rank, dest).store(data.len() as u64, Ordering::Relaxed);
        }
        let own = self.mpb(self.rank);
        let _message = crate::vtime::message(self.rank, dest, true);
        for piece in pieces(data, ch.chunk, self.check) {
            own.write(ch.buffer, piece);
            let padded = piece.len().next_multiple_of(LINE);
            own.zero(ch.buffer + piece.len(), padded - piece.len());
            crate::vtime::copied(self.rank, padded.max(LINE), data.len());
            self.flag_write(ch.sent, true, dest);
            self.wait_flag(ch.ready, true, self.rank, WaitMark::Send { peer: dest });
            self.flag_write(ch.ready, false, self.rank);
        }
        Ok(())
    }

    /// Receives `buf.len()` bytes from `src` over `ch`.
    pub fn recv(&self, buf: &mut [u8], ch: Channel, src: u32) -> Result<(), Error> {
        if src == self.rank {
            return Err(Error::Id);
        }
        if ch.chunk < LINE {
            return Err(Error::MessageLength);
        }
        let total = buf.len();
        let _message = crate::vtime::message(src, self.rank, false);
        let check = self.check;
        let pieces: Box<dyn Iterator<Item = &mut [u8]>> = if check && buf.is_empty() {
            Box::new(std::iter::once(buf))
        } else {
            Box::new(buf.chunks_mut(ch.chunk / LINE * LINE))
        };
        for (k, piece) in pieces.enumerate() {
            self.wait_flag(ch.sent, true, self.rank, WaitMark::Recv { peer: src });
            self.flag_write(ch.sent, false, self.rank);
            if k == 0 && check {
                self.check_size(src, total);
            }
            self.mpb_read(src, ch.buffer, piece);
            crate::vtime::copied(src, piece.len().next_multiple_of(LINE).max(LINE), total);
            self.flag_write(ch.ready, true, src);
        }
        Ok(())
    }

    /// Receives from `src` if its first chunk is already there; `false` (nothing
    /// received) otherwise.
    pub fn recv_test(&self, buf: &mut [u8], ch: Channel, src: u32) -> Result<bool, Error> {
        if src == self.rank {
            return Err(Error::Id);
        }
        if !buf.is_empty() && !self.flag_read(ch.sent, self.rank) {
            return Ok(false);
        }
        self.recv(buf, ch, src).map(|()| true)
    }

    fn check_size(&self, src: u32, expected: usize) {
        let sent = self.size_word(src, self.rank).load(Ordering::Relaxed);
        if sent != expected as u64 {
            crate::fatal(
                self,
                &format!(
                    "checking mode: UE {src} sends {sent} bytes but UE {} receives {expected}",
                    self.rank
                ),
            );
        }
    }
}
