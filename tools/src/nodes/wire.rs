//! A node's status as it travels between nodes: one message of [`STATUS_BYTES`] bytes,
//! [`STATUS_WORDS`] little-endian `u64`s.
//!
//! Layout (word: meaning):
//! 0: barriers entered by every rank of the node ([`NodeStatus::barriers`]);
//! 1: 1 if the node knows of a failure, else 0 (and words 2..=5 are 0);
//! 2: 1 if that failure names a rank, else 0 (and word 3 is 0);
//! 3: the failing rank;
//! 4, 5: the cause as [`AbortCause::encode`] gives it (reason, detail);
//! 6: 1 if every rank of the node has exited ([`NodeStatus::finished`]);
//! 7: the virtual time of the node's latest arrival at the barrier it reports
//!    ([`NodeStatus::barrier_vtime`]).
//!
//! Decoding is strict: a message of another length, a flag that is neither 0 nor 1, a
//! rank or cause word that does not fit, or an unknown reason is an error, since the words then are not a status and
//! the job cannot trust anything that node says.

use sccemu::job::node::NodeStatus;
use sccemu::protocol::abort::AbortCause;

/// Words per node status.
pub const STATUS_WORDS: usize = 8;
/// Bytes per node status message.
pub const STATUS_BYTES: usize = STATUS_WORDS * 8;

/// One node's status words.
pub type StatusWords = [u64; STATUS_WORDS];

/// The message that carries `status`.
pub fn encode_status(status: &NodeStatus) -> [u8; STATUS_BYTES] {
    let mut bytes = [0; STATUS_BYTES];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(status_words(status)) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// The status that [`encode_status`] put in `message`.
pub fn decode_status(message: &[u8]) -> Result<NodeStatus, String> {
    if message.len() != STATUS_BYTES {
        return Err(format!("a status of {} bytes, not {STATUS_BYTES}", message.len()));
    }
    let mut words = [0; STATUS_WORDS];
    for (word, chunk) in words.iter_mut().zip(message.chunks_exact(8)) {
        *word = u64::from_le_bytes(chunk.try_into().expect("chunks_exact gives 8 bytes"));
    }
    status_of_words(&words)
}

/// The words for `status`.
pub fn status_words(status: &NodeStatus) -> StatusWords {
    let mut words = [0; STATUS_WORDS];
    words[0] = status.barriers;
    if let Some((rank, cause)) = status.failure {
        words[1] = 1;
        if let Some(rank) = rank {
            words[2] = 1;
            words[3] = u64::from(rank);
        }
        let (reason, detail) = cause.encode();
        words[4] = u64::from(reason);
        words[5] = u64::from(detail);
    }
    words[6] = u64::from(status.finished);
    words[7] = status.barrier_vtime;
    words
}

/// The status that [`status_words`] gave `words`.
pub fn status_of_words(words: &StatusWords) -> Result<NodeStatus, String> {
    let flag = |i: usize| match words[i] {
        0 => Ok(false),
        1 => Ok(true),
        w => Err(format!("status word {i} is {w}, not a flag")),
    };
    let word32 = |i: usize| {
        u32::try_from(words[i]).map_err(|_| format!("status word {i} ({}) exceeds 32 bits", words[i]))
    };
    let failure = if flag(1)? {
        let rank = if flag(2)? { Some(word32(3)?) } else { None };
        let (reason, detail) = (word32(4)?, word32(5)?);
        let cause =
            AbortCause::decode(reason, detail).ok_or_else(|| format!("unknown abort reason {reason}"))?;
        Some((rank, cause))
    } else {
        None
    };
    Ok(NodeStatus { barriers: words[0], failure, finished: flag(6)?, barrier_vtime: words[7] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes() -> Vec<AbortCause> {
        vec![
            AbortCause::Exited(3),
            AbortCause::Exited(-1),
            AbortCause::Signaled(9),
            AbortCause::NoFinalize,
            AbortCause::UserAbort(-7),
            AbortCause::Interrupted(2),
            AbortCause::Corrupted,
            AbortCause::Deadlock,
        ]
    }

    #[test]
    fn statuses_round_trip() {
        let mut failures = vec![None];
        for cause in causes() {
            failures.extend([Some((None, cause)), Some((Some(0), cause)), Some((Some(u32::MAX), cause))]);
        }
        for failure in failures {
            for (barriers, finished) in [(0, false), (1, true), (u64::MAX, false)] {
                let status = NodeStatus { barriers, failure, finished, barrier_vtime: barriers ^ 0x5a5a };
                let message = encode_status(&status);
                assert_eq!(decode_status(&message), Ok(status), "{message:?}");
            }
        }
    }

    #[test]
    fn no_failure_leaves_its_words_zero() {
        let words = status_words(&NodeStatus { barriers: 5, finished: true, ..NodeStatus::default() });
        assert_eq!(words, [5, 0, 0, 0, 0, 0, 1, 0]);
        let rankless = NodeStatus { failure: Some((None, AbortCause::Deadlock)), ..NodeStatus::default() };
        assert_eq!(status_words(&rankless)[2..4], [0, 0]);
        assert_eq!(encode_status(&rankless)[8], 1, "little-endian words");
    }

    #[test]
    fn words_that_are_not_a_status_are_refused() {
        let good = status_words(&NodeStatus {
            barriers: 1,
            failure: Some((Some(4), AbortCause::UserAbort(1))),
            ..NodeStatus::default()
        });
        for (i, bad) in [(1, 2), (2, 7), (6, 2), (6, u64::MAX), (3, 1 << 32), (4, 1 << 40), (4, 0xdead)] {
            let mut words = good;
            words[i] = bad;
            assert!(status_of_words(&words).is_err(), "word {i} = {bad} accepted");
        }
        let message = encode_status(&status_of_words(&good).unwrap());
        assert!(decode_status(&message[..STATUS_BYTES - 1]).is_err());
        assert!(decode_status(&[message.as_slice(), &[0]].concat()).is_err());
        assert!(decode_status(&[]).is_err());
    }
}
