//! The fragment: the unit both two-sided channels carry, and how its header is checked.
//!
//! A message of `total` bytes from `src` with `tag` travels as one or more fragments in
//! order; the first carries [`FragHeader::first`]. Each channel (the shared receive
//! buffer in [`crate::protocol::ring::srb`], the per-peer MPB slots in
//! [`crate::protocol::ring::perpeer`]) encodes the header in its own memory and
//! validates it on the way in: a header that would make the receiver read past its
//! ring, name a core that does not exist, or contradict the message it continues is
//! reported as [`CorruptError`], never trusted.
//!
//! Besides message bytes ([`FragKind::Data`]), the channels carry the single-copy
//! path's control fragments (see `p2p::rendezvous`): a [`FragKind::Rendezvous`]
//! announces a message that stays in its sender's memory (its payload is a
//! [`Rendezvous`] descriptor, its `total` the message's length, so that matching and
//! probing see the real message), and the receiver answers [`FragKind::Done`] once it
//! has copied the bytes, or [`FragKind::Refused`] if the operating system refused the
//! copy (the sender then sends the bytes through the channel). Answers carry no
//! payload; their `tag` is the announcement's token. Every kind is one fragment, with
//! `first` set.
//!
//! A synchronous message (see `p2p::synchronous`) starts with a
//! [`FragKind::SyncData`] fragment instead of a first [`FragKind::Data`] one; its
//! continuations are ordinary. Its receiver answers [`FragKind::SyncAck`] once a
//! receive has matched it, with no payload and the message's number as `tag`.

use std::fmt;

/// Bit position of the [`FragKind`] in each channel's control word (three bits, below
/// the channels' own flags and above the length).
pub const KIND_SHIFT: u32 = 27;
/// The largest payload a single fragment may carry (a 27-bit length field).
pub const MAX_FRAGMENT: u32 = (1 << KIND_SHIFT) - 1;
/// Bytes of a [`Rendezvous`] descriptor.
pub const RENDEZVOUS_BYTES: u32 = 16;

/// What a fragment carries (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FragKind {
    /// Bytes of a message: its first fragment or a continuation.
    Data = 0,
    /// A message left in its sender's memory, for the receiver to copy.
    Rendezvous = 1,
    /// The receiver copied the announced message: its sender's buffer is free.
    Done = 2,
    /// The receiver could not copy it: the sender sends its bytes as continuations.
    Refused = 3,
    /// The first fragment of a synchronous message, whose receiver acknowledges it
    /// once a receive matched it.
    SyncData = 4,
    /// A receive matched the synchronous message that its `tag` numbers.
    SyncAck = 5,
}

impl FragKind {
    /// The kind's bits in a control word.
    pub fn bits(self) -> u32 {
        (self as u32) << KIND_SHIFT
    }

    /// The kind a control word carries; `None` for a value no sender writes.
    pub fn of_word(word: u32) -> Option<FragKind> {
        Some(match (word >> KIND_SHIFT) & 7 {
            0 => FragKind::Data,
            1 => FragKind::Rendezvous,
            2 => FragKind::Done,
            3 => FragKind::Refused,
            4 => FragKind::SyncData,
            5 => FragKind::SyncAck,
            _ => return None,
        })
    }
}

/// A rendezvous announcement's payload: where the message is in its sender's address
/// space, and the token the receiver's answer names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rendezvous {
    /// Address of the message's first byte in the sender's process.
    pub addr: u64,
    /// The sender's token for this message, echoed in the answer's `tag`.
    pub token: u32,
}

impl Rendezvous {
    /// The descriptor as payload bytes (little-endian address, token, zero).
    pub fn to_bytes(self) -> [u8; RENDEZVOUS_BYTES as usize] {
        let mut b = [0u8; RENDEZVOUS_BYTES as usize];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..12].copy_from_slice(&self.token.to_le_bytes());
        b
    }

    /// The descriptor in payload bytes (at least [`RENDEZVOUS_BYTES`]).
    pub fn from_bytes(b: &[u8]) -> Rendezvous {
        let addr = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
        Rendezvous { addr, token: word(b, 8) }
    }
}

/// One fragment's header, as the receiver decoded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragHeader {
    /// Rank of the sender.
    pub src: u32,
    /// Tag of the message.
    pub tag: u32,
    /// Payload bytes in this fragment.
    pub len: u32,
    /// Bytes of the whole message (meaningful on the first fragment).
    pub total: u32,
    /// Whether this fragment starts a message (the others continue the one in progress).
    pub first: bool,
    /// What it carries.
    pub kind: FragKind,
}

impl FragHeader {
    /// A data fragment.
    pub fn data(src: u32, tag: u32, len: u32, total: u32, first: bool) -> FragHeader {
        FragHeader { src, tag, len, total, first, kind: FragKind::Data }
    }

    /// Checks what the kind implies of the other fields: a first data fragment within
    /// its message; control fragments first, an announcement carrying exactly a
    /// descriptor, an answer nothing.
    pub fn check(&self) -> Result<(), CorruptKind> {
        let bad = || CorruptKind::BadControlFragment { kind: self.kind as u32, len: self.len };
        match self.kind {
            FragKind::SyncData if !self.first => Err(bad()),
            FragKind::Data | FragKind::SyncData if self.first && self.len > self.total => {
                Err(CorruptKind::FragmentPastMessage { len: self.len, total: self.total })
            }
            FragKind::Data | FragKind::SyncData => Ok(()),
            FragKind::Rendezvous if !self.first || self.len != RENDEZVOUS_BYTES => Err(bad()),
            FragKind::Done | FragKind::Refused | FragKind::SyncAck
                if !self.first || self.len != 0 || self.total != 0 =>
            {
                Err(bad())
            }
            _ => Ok(()),
        }
    }
}

/// What a corrupted header claimed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorruptKind {
    /// An entry or fragment longer than the memory that holds it.
    LengthPastRing {
        /// The length claimed, in bytes.
        len: u32,
        /// Bytes of the memory that holds it.
        capacity: u32,
    },
    /// A source rank that is not a core of the job.
    BadSource {
        /// The rank claimed.
        src: u32,
    },
    /// A first fragment longer than its message.
    FragmentPastMessage {
        /// Bytes of the fragment.
        len: u32,
        /// Bytes of the message it claims to start.
        total: u32,
    },
    /// A continuation fragment with no message in progress from its source, or with
    /// another tag.
    StrayContinuation {
        /// The source claimed.
        src: u32,
    },
    /// A new message from a source whose previous message is still incomplete.
    MessageInterrupted {
        /// The source claimed.
        src: u32,
    },
    /// A header word with bits that no sender sets.
    BadControlWord {
        /// The word as read.
        word: u32,
    },
    /// A control fragment (announcement, answer, acknowledgement) or a synchronous
    /// message's start whose fields contradict its kind.
    BadControlFragment {
        /// The [`FragKind`] as a number.
        kind: u32,
        /// The payload length claimed.
        len: u32,
    },
    /// A rendezvous announcement whose sender's memory could not be read at the address
    /// it gave (`errno`), although the sender is alive.
    BadRendezvousAddress {
        /// The address claimed.
        addr: u64,
        /// The error of the read.
        errno: i32,
    },
}

/// Corrupted shared channel state, detected by the receiver that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorruptError {
    /// `"srb"` or `"perpeer"`.
    pub channel: &'static str,
    /// The core whose receive memory holds the bad header.
    pub owner: u32,
    /// Where in that memory (ring counter or slot index).
    pub position: u32,
    /// What the bad header claimed.
    pub kind: CorruptKind,
}

impl fmt::Display for CorruptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "corrupted {} channel of core {} at {}: {:?}",
            self.channel, self.owner, self.position, self.kind
        )
    }
}

impl std::error::Error for CorruptError {}

/// Little-endian u32 at `at` of a header's bytes.
pub(crate) fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// Channels hold their memory by value; models lend theirs.
impl<P: crate::protocol::payload::Payload + ?Sized> crate::protocol::payload::Payload for &P {
    fn len(&self) -> usize {
        (**self).len()
    }

    fn write(&self, offset: usize, src: &[u8]) {
        (**self).write(offset, src)
    }

    fn read(&self, offset: usize, dst: &mut [u8]) {
        (**self).read(offset, dst)
    }

    fn zero(&self, offset: usize, len: usize) {
        (**self).zero(offset, len)
    }
}

/// Splits `len` bytes starting at ring offset `at` of a `cap`-byte ring into the part
/// before the end and the part that wraps to the start: `((at, n1), n2)`.
pub(crate) fn split(at: usize, len: usize, cap: usize) -> (usize, usize, usize) {
    let first = len.min(cap - at);
    (at, first, len - first)
}
