//! Argument agreement, for checking mode (`sccrun --check`, `SCCEMU_CHECK=1`): before a
//! collective call does anything, its members compare what they must agree on (the
//! call itself, root, op, count, element type, accumulate strategy, algorithm...).
//! Every collective entry point runs this one protocol; only where the slots live and
//! which barrier it passes differ (the world's for job-wide calls, a communicator's
//! for its collectives).
//!
//! Protocol of one check, run by every member in the same order on one slot set:
//! 1. write this member's fingerprint of the call into its own slot of parity
//!    `seq % 2`: a hash of the call's name, the check's sequence number `seq` on this
//!    slot set, and up to [`FIELDS`] argument words;
//! 2. pass the barrier of the slot set's members (Release/Acquire: every slot written
//!    before it is visible to every member after it);
//! 3. read every member's slot of that parity and compare them word by word.
//!
//! Invariants:
//! - every member reads the same slots after the same barrier, so all reach the same
//!   verdict: every member returns the same error, and nobody is left waiting in a
//!   call the others refused;
//! - a slot of parity `p` is rewritten by its owner at check `seq + 2`, which it
//!   reaches only after the barrier of check `seq + 1`, which every member enters only
//!   after it has read the slots of check `seq`: one barrier per check is enough;
//! - a member in another call, or at another point of the sequence, shows another
//!   name or sequence number (or a stale slot): the verdict names it under "call".
//!
//! Verdict ([`verdict`]): the first word, in slot order, on which the members differ
//! says what disagrees ("call" for the name or the sequence number, else the field's
//! name). The reference value is the one most members passed (on a tie, the one passed
//! by the lowest rank among the tied), and the disagreement names every rank that
//! passed something else, in increasing order.

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::op::Op;
use crate::protocol::payload::Payload;

/// Argument words a fingerprint holds besides the call and the sequence number.
pub const FIELDS: usize = 6;
/// Words of one fingerprint slot.
pub const WORDS: usize = FIELDS + 2;
/// Bytes of one fingerprint slot.
pub const SLOT_BYTES: usize = WORDS * 8;
/// Bytes of one member's slots: one per parity.
pub const MEMBER_BYTES: usize = 2 * SLOT_BYTES;

/// What a call's member passed, in words that must be equal on every member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    call: &'static str,
    fields: [(&'static str, u64); FIELDS],
    len: usize,
}

impl Fingerprint {
    /// The fingerprint of call `call` (its name, as messages show it), no field yet.
    pub fn new(call: &'static str) -> Fingerprint {
        Fingerprint { call, fields: [("", 0); FIELDS], len: 0 }
    }

    /// Adds a field that every member must pass equal. Panics past [`FIELDS`] fields:
    /// callers are this crate's collectives, each with a fixed list.
    pub fn field(mut self, name: &'static str, value: u64) -> Fingerprint {
        assert!(self.len < FIELDS, "a fingerprint holds {FIELDS} fields");
        self.fields[self.len] = (name, value);
        self.len += 1;
        self
    }

    /// Adds the element type `T`: its size, then a tag of its name (distinct sizes are
    /// reported as such, equal sizes of different types as a type mismatch).
    pub fn element<T>(self) -> Fingerprint {
        self.field("element size", size_of::<T>() as u64)
            .field("element type", hash(core::any::type_name::<T>().as_bytes()))
    }

    /// The call's name.
    pub fn call(&self) -> &'static str {
        self.call
    }

    fn words(&self, seq: u64) -> [u64; WORDS] {
        let mut words = [0; WORDS];
        words[0] = hash(self.call.as_bytes());
        words[1] = seq;
        for (w, (_, v)) in words[2..].iter_mut().zip(&self.fields) {
            *w = *v;
        }
        words
    }

    fn name_of(&self, word: usize) -> &'static str {
        match word {
            0 | 1 => "call",
            w if w - 2 < self.len => self.fields[w - 2].0,
            _ => "call",
        }
    }
}

/// The members that disagree with the others, and on what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// What differs: `"call"` (another call, or another point in the sequence of
    /// calls), else the name of the argument (`"root"`, `"op"`, `"count"`...).
    pub what: &'static str,
    /// The ranks (in the slot set's numbering) that passed something other than most.
    pub ranks: Vec<u32>,
}

/// FNV-1a: a stable 64-bit hash of `bytes` (the same in every process of the job).
pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// [`hash`] of `words`' little-endian bytes, without collecting them.
pub fn hash_words(words: impl IntoIterator<Item = u64>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        w.to_le_bytes().iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    })
}

/// One word for a reduction op, its AXPY factor included.
pub fn op_word(op: Op) -> u64 {
    match op {
        Op::Axpy(alpha) => hash(&alpha.to_bits().to_le_bytes()) | 1 << 63,
        other => Op::ALL.iter().position(|o| *o == other).unwrap_or(usize::MAX) as u64,
    }
}

/// Runs one check (module docs) for member `me` of `n` on `slots` (`n` runs of
/// [`MEMBER_BYTES`], member `r`'s at `r * MEMBER_BYTES`), the `seq`-th on this slot set;
/// `barrier` is the members' barrier. `Ok(Err(_))` when the members disagree, the same
/// on every member.
pub fn agree<P: Payload>(
    slots: &P,
    n: u32,
    me: u32,
    seq: u64,
    fingerprint: &Fingerprint,
    barrier: impl FnOnce() -> Result<(), JobAborted>,
) -> Result<Result<(), Disagreement>, JobAborted> {
    let at = |rank: u32| rank as usize * MEMBER_BYTES + (seq % 2) as usize * SLOT_BYTES;
    let mut bytes = [0u8; SLOT_BYTES];
    for (chunk, w) in bytes.chunks_exact_mut(8).zip(fingerprint.words(seq)) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    slots.write(at(me), &bytes);
    barrier()?;
    let read = |rank: u32| {
        let mut bytes = [0u8; SLOT_BYTES];
        slots.read(at(rank), &mut bytes);
        let mut words = [0u64; WORDS];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        words
    };
    // Every slot like this member's own: then all agree, and every member finds that
    // (they all read the same slots). Compared as read, without a table of n slots,
    // which at 4096 members cost every member 256 KiB of fresh pages.
    let mine = fingerprint.words(seq);
    if (0..n).all(|rank| read(rank) == mine) {
        return Ok(Ok(()));
    }
    let all: Vec<[u64; WORDS]> = (0..n).map(read).collect();
    Ok(verdict(&all, fingerprint).map_or(Ok(()), Err))
}

/// The disagreement among every member's slot words, if any (module docs).
///
/// O(n) per word when the members agree (the usual case), O(n log n) otherwise: every
/// member runs it on every member's slots, so a quadratic count (each value against
/// every other) cost every member O(n²), which at 1024 members was half the CPU time of
/// a job that creates one communicator.
pub fn verdict(all: &[[u64; WORDS]], fingerprint: &Fingerprint) -> Option<Disagreement> {
    (0..WORDS).find_map(|w| {
        let first = all.first()?[w];
        if all.iter().all(|words| words[w] == first) {
            return None;
        }
        // The most common value; on a tie, the one whose first member has the lowest rank.
        let mut sorted: Vec<(u64, u32)> =
            all.iter().enumerate().map(|(r, words)| (words[w], r as u32)).collect();
        sorted.sort_unstable();
        let reference = sorted
            .chunk_by(|a, b| a.0 == b.0)
            .map(|run| (run.len(), std::cmp::Reverse(run[0].1), run[0].0))
            .max()?
            .2;
        let ranks: Vec<u32> = all
            .iter()
            .enumerate()
            .filter(|(_, words)| words[w] != reference)
            .map(|(r, _)| r as u32)
            .collect();
        Some(Disagreement { what: fingerprint.name_of(w), ranks })
    })
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;

    fn slots(rows: &[(&Fingerprint, u64)]) -> Vec<[u64; WORDS]> {
        rows.iter().map(|(f, seq)| f.words(*seq)).collect()
    }

    #[test]
    fn the_first_differing_word_names_the_minority() {
        let a = Fingerprint::new("bcast").field("root", 0).element::<u64>();
        let b = Fingerprint::new("bcast").field("root", 1).element::<u64>();
        assert_eq!(verdict(&slots(&[(&a, 1), (&a, 1), (&a, 1)]), &a), None);
        let d = verdict(&slots(&[(&a, 1), (&b, 1), (&a, 1), (&b, 1), (&a, 1)]), &a).unwrap();
        assert_eq!(d, Disagreement { what: "root", ranks: vec![1, 3] });
        // A tie: the lowest rank's value is the reference.
        let d = verdict(&slots(&[(&b, 1), (&a, 1)]), &a).unwrap();
        assert_eq!(d, Disagreement { what: "root", ranks: vec![1] });
        // Rank 0 alone differs: it is the one named.
        let d = verdict(&slots(&[(&b, 1), (&a, 1), (&a, 1)]), &a).unwrap();
        assert_eq!(d.ranks, vec![0]);
    }

    /// Many members: the lone dissenters are named, in rank order, whatever their place.
    #[test]
    fn thousands_of_members() {
        let a = Fingerprint::new("allgather").field("count", 1);
        let b = Fingerprint::new("allgather").field("count", 2);
        let mut rows = vec![(&a, 7); 4096];
        assert_eq!(verdict(&slots(&rows), &a), None);
        rows[4095] = (&b, 7);
        rows[17] = (&b, 7);
        assert_eq!(verdict(&slots(&rows), &a), Some(Disagreement { what: "count", ranks: vec![17, 4095] }));
    }

    #[test]
    fn calls_sequences_sizes_and_types() {
        let a = Fingerprint::new("allreduce").field("op", op_word(Op::Sum)).element::<u64>();
        let other = Fingerprint::new("bcast").field("op", op_word(Op::Sum)).element::<u64>();
        let d = verdict(&slots(&[(&a, 4), (&other, 4), (&a, 4)]), &a).unwrap();
        assert_eq!(d, Disagreement { what: "call", ranks: vec![1] });
        let d = verdict(&slots(&[(&a, 4), (&a, 4), (&a, 3)]), &a).unwrap();
        assert_eq!(d, Disagreement { what: "call", ranks: vec![2] });
        let i = Fingerprint::new("allreduce").field("op", op_word(Op::Sum)).element::<i64>();
        let d = verdict(&slots(&[(&a, 1), (&i, 1)]), &a).unwrap();
        assert_eq!(d.what, "element type");
        let h = Fingerprint::new("allreduce").field("op", op_word(Op::Sum)).element::<u32>();
        assert_eq!(verdict(&slots(&[(&a, 1), (&h, 1)]), &a).unwrap().what, "element size");
        assert_ne!(op_word(Op::Axpy(2.0)), op_word(Op::Axpy(3.0)));
        assert_ne!(op_word(Op::Sum), op_word(Op::Max));
        assert_eq!(hash_words([1, 2]), hash(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]));
    }
}
