//! The fragment: the unit both two-sided channels carry, and how its header is checked.
//!
//! A message of `total` bytes from `src` with `tag` travels as one or more fragments in
//! order; the first carries [`FragHeader::first`]. Each channel (the shared receive
//! buffer in [`crate::protocol::ring::srb`], the per-peer MPB slots in
//! [`crate::protocol::ring::perpeer`]) encodes the header in its own memory and
//! validates it on the way in: a header that would make the receiver read past its
//! ring, name a core that does not exist, or contradict the message it continues is
//! reported as [`CorruptError`], never trusted.

use std::fmt;

/// The largest payload a single fragment may carry (a 30-bit length field).
pub const MAX_FRAGMENT: u32 = (1 << 30) - 1;

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
