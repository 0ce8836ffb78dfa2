//! A remote memory operation (on a window, an MPB or a flag) as it travels to the
//! gateway of the target's node, and the tags that carry it.
//!
//! A request goes from the origin to a rank of the target's node through the origin
//! node's request channel (`channel`); the gateways carry it as the fragments of a message to
//! that rank with the tag [`REQUEST_TAG`], and the target node's gateway takes it out
//! of the stream instead of delivering it, applies it to its own segment, and answers
//! with a two-sided message from that rank carrying the tag [`reply_tag`]`(token)` when
//! the request asks for an answer.
//! A request is a [`HEADER`]-byte header (little-endian) and a payload:
//!
//! | bytes | field |
//! |---|---|
//! | 0 | [`Kind`] |
//! | 1 | element kind (`ElemKind` code) of an accumulate or compare-and-swap |
//! | 2 | op code (`Op::code`) of an accumulate; 1 for an exclusive lock |
//! | 3 | bit 0: the request wants an answer; bit 1: ring `rank`'s doorbell once applied; bit 2: the payload starts with a [`Domain`] |
//! | 4..8 | the answer's token |
//! | 8..16 | where, as an absolute offset of the target node's segment |
//! | 16..20 | bytes to read, elements to combine, a window's ranks, or an MPB byte |
//! | 20..24 | a rank: whose doorbell to ring or wait on, or the locked target |
//! | 24..32 | AXPY's factor (f64 bits), where a lock's control block lies, or a stamp |
//!
//! An accumulate or compare-and-swap on a window whose strategy takes locks
//! (`CallerComputes`, `OwnerComputes`) carries the target's atomicity domain ahead of
//! its operands: where the stripe locks that guard the target's part lie and how the
//! part is striped ([`Domain`], [`DOMAIN`] bytes). The gateway then applies it holding
//! those stripes, as an origin on the target's node would.
//!
//! Tags: the library's tags start at `RESERVED_TAGS` (`0xffff_0000`, `p2p::endpoint`);
//! the collectives over messages use the lower half of its 16 bits
//! (`coll::over_p2p`, which checks that they stay below [`TAGS`]; a window's own
//! collective steps run in a context id of its own there); requests and answers use
//! the upper half.

use crate::protocol::atomic::op::{ElemKind, Op};

/// The first tag of remote memory traffic (module docs).
pub const TAGS: u32 = 0xffff_8000;
/// The tag of every request.
pub const REQUEST_TAG: u32 = TAGS | 0x1000;
/// Tokens: the low bits of an answer's tag.
pub const TOKEN_MASK: u32 = 0x1fff;

/// The tag of the answer that carries `token`.
pub fn reply_tag(token: u32) -> u32 {
    TAGS | 0x2000 | (token & TOKEN_MASK)
}

/// Bytes of a request's header.
pub const HEADER: usize = 32;
/// Bytes of a [`Domain`].
pub const DOMAIN: usize = 28;
/// The most bytes a request carries after its header: a chunk of data
/// (`remote::CHUNK`) after a [`Domain`], a compare-and-swap's two values, or a
/// window's world ranks (`lock_all`, 4 bytes each of up to `MAX_JOB_CORES`).
pub const MAX_PAYLOAD: usize = 4 * shm_layout::MAX_JOB_CORES as usize;

/// What a request asks of the target node's gateway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Copy the payload to `at`.
    Write = 1,
    /// Answer with the `count` bytes at `at`.
    Read = 2,
    /// Combine the payload's `count` elements into `at`, each atomically; answer with the
    /// previous values if asked.
    Accumulate = 3,
    /// Compare-and-swap of one element: the payload is the compared value, then the new
    /// one; answer with the previous value.
    CompareAndSwap = 4,
    /// Answer once every earlier request of this origin to this rank is applied.
    Sync = 5,
    /// PSCW: count a post in the pair words at `at`, and ring `rank`'s doorbell.
    Post = 6,
    /// PSCW: count a completion in the pair words at `at`, and ring `rank`'s doorbell.
    Complete = 7,
    /// Lock the ticket lock at `at` (of target `rank`, in the control block at `x`);
    /// answer once held.
    Lock = 8,
    /// Unlock what this origin's `Lock` of `at` holds; answer once released.
    Unlock = 9,
    /// Enter the lock_all word of the control block at `x` (of a window of `count`
    /// ranks) on this node; answer once entered.
    LockAll = 10,
    /// Leave the lock_all word of the control block at `x`; answer once left.
    UnlockAll = 11,
    /// Take the test-and-set word at `at` (a `u32`, 0 when free), waiting on `rank`'s
    /// doorbell, which its releases ring; answer once taken (`Core::lock_word`).
    TestAndSet = 12,
    /// In virtual time: raise the stamp of byte `count` of rank `rank`'s MPB to `x` (a
    /// flag's writer's time, sent ahead of the flag's update: `Core::stamp_mpb`); answer
    /// the stamp, raised (a remote flag's reader, with `x` = 0: `Core::mpb_stamp_of`).
    Stamp = 13,
}

impl Kind {
    const ALL: [Kind; 13] = [
        Kind::Write,
        Kind::Read,
        Kind::Accumulate,
        Kind::CompareAndSwap,
        Kind::Sync,
        Kind::Post,
        Kind::Complete,
        Kind::Lock,
        Kind::Unlock,
        Kind::LockAll,
        Kind::UnlockAll,
        Kind::TestAndSet,
        Kind::Stamp,
    ];

    fn of(code: u8) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| *k as u8 == code)
    }
}

/// A request's header (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// What to do.
    pub kind: Kind,
    /// Element kind code.
    pub elem: u8,
    /// Op code (or 1 for an exclusive lock).
    pub op: u8,
    /// The answer's token, if one is wanted.
    pub token: Option<u32>,
    /// Ring `rank`'s doorbell once the request is applied (a flag's writer wakes the
    /// flag's owner).
    pub ring: bool,
    /// The payload starts with a [`Domain`]: apply holding its stripes.
    pub locked: bool,
    /// Absolute offset in the target node's segment.
    pub at: u64,
    /// Bytes or elements.
    pub count: u32,
    /// A rank (doorbell or lock target).
    pub rank: u32,
    /// AXPY's factor bits, or a lock's control block.
    pub x: u64,
}

impl Header {
    /// A header of `kind` at `at`, everything else zero.
    pub fn new(kind: Kind, at: usize) -> Header {
        Header { kind, elem: 0, op: 0, token: None, ring: false, locked: false, at: at as u64, count: 0, rank: 0, x: 0 }
    }

    /// An [`Kind::Accumulate`] at `at` of `count` elements of `elem`, combined with
    /// `op` (AXPY's factor in `x`); no answer, no doorbell.
    pub fn accumulate(at: usize, elem: ElemKind, op: Op, count: u32) -> Header {
        let (code, alpha) = op.code();
        let head = Header::new(Kind::Accumulate, at);
        Header { elem: elem as u8, op: code as u8, count, x: alpha.to_bits(), ..head }
    }

    /// Appends the header to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let token = self.token.unwrap_or(0);
        let flags = u8::from(self.token.is_some()) | u8::from(self.ring) << 1 | u8::from(self.locked) << 2;
        out.extend_from_slice(&[self.kind as u8, self.elem, self.op, flags]);
        out.extend_from_slice(&token.to_le_bytes());
        out.extend_from_slice(&self.at.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.rank.to_le_bytes());
        out.extend_from_slice(&self.x.to_le_bytes());
    }

    /// The header at the front of `msg` and the payload after it; `None` for bytes that
    /// no origin writes.
    pub fn decode(msg: &[u8]) -> Option<(Header, &[u8])> {
        let (head, payload) = msg.split_at_checked(HEADER)?;
        let u32_at = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
        if head[3] > 7 {
            return None;
        }
        let token = (head[3] & 1 != 0).then(|| u32_at(4));
        let header = Header {
            kind: Kind::of(head[0])?,
            elem: head[1],
            op: head[2],
            token,
            ring: head[3] & 2 != 0,
            locked: head[3] & 4 != 0,
            at: u64_at(8),
            count: u32_at(16),
            rank: u32_at(20),
            x: u64_at(24),
        };
        Some((header, payload))
    }
}

/// The atomicity domain of a target's part under a strategy with locks: the stripe
/// locks that guard it and how it is striped (`protocol::atomic::stripes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Where the part's stripe locks start, absolute in the target node's segment.
    pub stripes: u64,
    /// Where the part's frame starts (`Window::acc_frame`), absolute: stripes cut the
    /// frame, not the part.
    pub frame: u64,
    /// Bytes per granule.
    pub granule: u64,
    /// Stripe locks in use.
    pub count: u32,
}

impl Domain {
    /// The domain's bytes, which go ahead of the operands.
    pub fn encode(&self) -> [u8; DOMAIN] {
        let mut out = [0u8; DOMAIN];
        out[..8].copy_from_slice(&self.stripes.to_le_bytes());
        out[8..16].copy_from_slice(&self.frame.to_le_bytes());
        out[16..24].copy_from_slice(&self.granule.to_le_bytes());
        out[24..].copy_from_slice(&self.count.to_le_bytes());
        out
    }

    /// The domain at the front of `payload`, and the operands after it.
    pub fn decode(payload: &[u8]) -> Option<(Domain, &[u8])> {
        let (d, rest) = payload.split_at_checked(DOMAIN)?;
        let u64_at = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(d[i..i + 4].try_into().expect("4 bytes"));
        Some((Domain { stripes: u64_at(0), frame: u64_at(8), granule: u64_at(16), count: u32_at(24) }, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_bad_ones_are_refused() {
        let mut h = Header::new(Kind::Accumulate, 1 << 40);
        (h.elem, h.op, h.token, h.ring, h.count, h.rank, h.x) = (7, 3, Some(99), true, 5, 6, 2.5f64.to_bits());
        h.locked = true;
        let mut msg = Vec::new();
        h.encode(&mut msg);
        assert_eq!(msg.len(), HEADER);
        msg.extend_from_slice(b"data");
        assert_eq!(Header::decode(&msg), Some((h, &b"data"[..])));
        assert_eq!(Header::decode(&msg[..HEADER - 1]), None, "cut short");
        let mut bad = msg.clone();
        bad[0] = 0;
        assert_eq!(Header::decode(&bad), None, "no such kind");
        let mut bad = msg;
        bad[3] = 8;
        assert_eq!(Header::decode(&bad), None, "flags");
        assert!(reply_tag(TOKEN_MASK + 1) > REQUEST_TAG && reply_tag(3) != reply_tag(4));
        let d = Domain { stripes: 1 << 33, frame: 4096, granule: 64, count: 17 };
        let mut payload = d.encode().to_vec();
        payload.extend_from_slice(b"ops");
        assert_eq!(Domain::decode(&payload), Some((d, &b"ops"[..])));
        assert_eq!(Domain::decode(&payload[..DOMAIN - 1]), None, "cut short");
    }
}
