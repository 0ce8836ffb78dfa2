//! A two-sided fragment as it travels between nodes.
//!
//! A batch is a sequence of frames, each a fixed header (destination, source, tag,
//! message length, payload length, kind, first flag, whole flag, and in virtual time
//! the fragment's stamp) of [`HEADER`] little-endian bytes followed by the payload (a
//! grant of flow control is a frame to no rank, `credit`). A
//! *whole* frame carries a whole message of at most [`WHOLE_MAX`] bytes in one data
//! fragment (a message its sending gateway read out of its sender, `pull`); every other
//! frame carries at most a ring entry. The receiving gateway trusts nothing in it: a
//! frame that runs past the batch, names a kind no sender writes, carries more than it
//! may or contradicts its kind is refused, and the job aborts.

use crate::protocol::ring::frag::{FragHeader, FragKind, KIND_SHIFT};

/// Bytes of a frame's header.
pub(super) const HEADER: usize = 32;

/// The largest message a whole frame carries.
pub(super) const WHOLE_MAX: u32 = 4 << 20;

/// One fragment for rank `dest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Frame {
    pub dest: u32,
    pub header: FragHeader,
    /// The fragment's virtual time as its sender stamped it (0 outside virtual time).
    pub stamp: u64,
    /// Whether it carries a whole message, which may exceed a ring entry (module docs).
    pub whole: bool,
    pub payload: Vec<u8>,
    /// Bytes of its flow's credit it stands for until it leaves the receiving gateway
    /// (`credit`): its size in the batch it arrived in; 0 for a frame made here.
    pub charge: u32,
}

/// Appends the frame of a fragment for `dest` to `batch`; `fill` writes its
/// `header.len` payload bytes in place (straight out of a ring).
pub(super) fn encode_with(
    batch: &mut Vec<u8>,
    frame: (u32, &FragHeader, u64),
    fill: impl FnOnce(&mut [u8]),
) {
    let start = append(batch, frame, false);
    fill(&mut batch[start..]);
}

/// Appends the frame of a fragment for `dest` (`whole`: a whole message, which the
/// caller checked is at most [`WHOLE_MAX`]) with `header.len` zero payload bytes, for
/// the caller to fill; where its payload starts. (Truncating `batch` back to
/// `start - HEADER` takes the frame out again.)
pub(super) fn append(batch: &mut Vec<u8>, (dest, header, stamp): (u32, &FragHeader, u64), whole: bool) -> usize {
    for word in [dest, header.src, header.tag, header.total, header.len] {
        batch.extend_from_slice(&word.to_le_bytes());
    }
    batch.extend_from_slice(&[header.kind as u8, u8::from(header.first), u8::from(whole), 0]);
    batch.extend_from_slice(&stamp.to_le_bytes());
    let start = batch.len();
    batch.resize(start + header.len as usize, 0);
    start
}

/// The frames of `batch`, in order; an error names what is wrong with the first bad one.
/// `max_payload` is the most a ring entry carries.
pub(super) fn decode(mut batch: &[u8], max_payload: u32) -> Result<Vec<Frame>, String> {
    let mut frames = Vec::new();
    while !batch.is_empty() {
        if batch.len() < HEADER {
            return Err(format!("a frame header cut short at {} bytes", batch.len()));
        }
        let word = |i: usize| u32::from_le_bytes(batch[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let (dest, src, tag, total, len) = (word(0), word(1), word(2), word(3), word(4));
        let kind = FragKind::of_word(u32::from(batch[20]) << KIND_SHIFT)
            .filter(|_| batch[20] < 8)
            .ok_or_else(|| format!("a frame of unknown kind {}", batch[20]))?;
        let first = match batch[21] {
            0 => false,
            1 => true,
            other => return Err(format!("a frame whose first flag is {other}")),
        };
        let whole = match batch[22] {
            0 => false,
            1 if first && kind == FragKind::Data && len == total && len <= WHOLE_MAX => true,
            other => return Err(format!("a frame whose whole flag is {other}, of kind {kind:?}, {len} of {total} bytes")),
        };
        if (len > max_payload && !whole) || batch.len() - HEADER < len as usize {
            return Err(format!("a frame of {len} payload bytes with {} left", batch.len() - HEADER));
        }
        let header = FragHeader { src, tag, len, total, first, kind };
        let stamp = u64::from_le_bytes(batch[24..32].try_into().expect("8 bytes"));
        header.check().map_err(|e| format!("a frame from rank {src}: {e:?}"))?;
        let end = HEADER + len as usize;
        let charge = end as u32;
        frames.push(Frame { dest, header, stamp, whole, payload: batch[HEADER..end].to_vec(), charge });
        batch = &batch[end..];
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(batch: &mut Vec<u8>, dest: u32, header: &FragHeader, payload: &[u8]) {
        encode_with(batch, (dest, header, u64::from(dest) << 40 | 7), |p| p.copy_from_slice(payload));
    }

    #[test]
    fn frames_round_trip_and_bad_ones_are_refused() {
        let mut batch = Vec::new();
        let data = FragHeader::data(3, 7, 5, 9, true);
        let ack = FragHeader { src: 4, tag: 2, len: 0, total: 0, first: true, kind: FragKind::SyncAck };
        encode(&mut batch, 1, &data, b"hello");
        encode(&mut batch, 6, &ack, &[]);
        let frames = decode(&batch, 1024).unwrap();
        assert_eq!(frames.len(), 2);
        assert_eq!((frames[0].dest, frames[0].header, frames[0].payload.as_slice()), (1, data, &b"hello"[..]));
        assert_eq!((frames[0].stamp, frames[1].stamp), (1 << 40 | 7, 6 << 40 | 7));
        assert_eq!((frames[1].dest, frames[1].header), (6, ack));

        assert!(decode(&batch[..batch.len() - 1], 1024).is_err(), "cut short");
        assert!(decode(&batch, 4).is_err(), "more than an entry holds");
        let mut bad = batch.clone();
        bad[20] = 7;
        assert!(decode(&bad, 1024).is_err(), "unknown kind");
        let mut bad = batch.clone();
        bad[21] = 2;
        assert!(decode(&bad, 1024).is_err(), "first flag");
        let mut bad = Vec::new();
        encode(&mut bad, 1, &FragHeader::data(3, 7, 5, 4, true), b"hello");
        assert!(decode(&bad, 1024).is_err(), "a first fragment longer than its message");
    }

    #[test]
    fn a_whole_frame_may_exceed_an_entry_but_must_be_a_whole_message() {
        let whole = |header: &FragHeader| {
            let mut batch = Vec::new();
            let start = append(&mut batch, (2, header, 9), true);
            batch[start..].fill(0xab);
            batch
        };
        let message = FragHeader::data(1, 4, 3000, 3000, true);
        let frames = decode(&whole(&message), 1024).unwrap();
        assert_eq!(frames.len(), 1);
        assert!(frames[0].whole && frames[0].payload == vec![0xab; 3000] && frames[0].header == message);
        assert!(decode(&whole(&FragHeader::data(1, 4, 3000, 4000, true)), 1024).is_err(), "part of a message");
        assert!(decode(&whole(&FragHeader::data(1, 4, 3000, 3000, false)), 1024).is_err(), "a continuation");
        let big = WHOLE_MAX + 1;
        assert!(decode(&whole(&FragHeader::data(1, 4, big, big, true)), u32::MAX).is_err(), "past the most");
        let mut plain = Vec::new();
        encode(&mut plain, 2, &message, &[0; 3000]);
        assert!(decode(&plain, 1024).is_err(), "not whole: at most an entry");
        let mut bad = whole(&message);
        bad[22] = 2;
        assert!(decode(&bad, 1024).is_err(), "whole flag");
    }
}
