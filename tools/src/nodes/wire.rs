//! A node's round status as it travels between nodes: [`STATUS_WORDS`] `u64`s, so that
//! one fixed-size allgather carries every node's status.
//!
//! Layout (word: meaning):
//! 0: barriers entered by every rank of the node ([`NodeStatus::barriers`]);
//! 1: 1 if the node knows of a failure, else 0 (and words 2..=5 are 0);
//! 2: 1 if that failure names a rank, else 0 (and word 3 is 0);
//! 3: the failing rank;
//! 4, 5: the cause as [`AbortCause::encode`] gives it (reason, detail);
//! 6: 1 if every rank of the node has exited ([`NodeStatus::finished`]);
//! 7: 1 if the node is busy (it has or may soon have work; see `engine`'s back-off);
//! 8: the virtual time of the node's latest arrival at the barrier it reports
//!    ([`NodeStatus::barrier_vtime`]).
//!
//! Decoding is strict: a flag that is neither 0 nor 1, a rank or cause word that does
//! not fit, or an unknown reason is an error, since the words then are not a status and
//! the job cannot trust anything that node says.

use sccemu::job::node::NodeStatus;
use sccemu::protocol::abort::AbortCause;

/// Words per node status.
pub const STATUS_WORDS: usize = 9;

/// One node's status words.
pub type StatusWords = [u64; STATUS_WORDS];

/// The words for `status` and the node's busy flag.
pub fn encode_status(status: &NodeStatus, busy: bool) -> StatusWords {
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
    words[7] = u64::from(busy);
    words[8] = status.barrier_vtime;
    words
}

/// The status and busy flag that [`encode_status`] gave `words`.
pub fn decode_status(words: &StatusWords) -> Result<(NodeStatus, bool), String> {
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
    let status = NodeStatus { barriers: words[0], failure, finished: flag(6)?, barrier_vtime: words[8] };
    Ok((status, flag(7)?))
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
            for (barriers, finished, busy) in [(0, false, false), (1, true, false), (u64::MAX, false, true)] {
                let status = NodeStatus { barriers, failure, finished, barrier_vtime: barriers ^ 0x5a5a };
                let words = encode_status(&status, busy);
                assert_eq!(decode_status(&words), Ok((status, busy)), "{words:?}");
            }
        }
    }

    #[test]
    fn no_failure_leaves_its_words_zero() {
        let words = encode_status(&NodeStatus { barriers: 5, finished: true, ..NodeStatus::default() }, true);
        assert_eq!(words, [5, 0, 0, 0, 0, 0, 1, 1, 0]);
        let rankless = NodeStatus { failure: Some((None, AbortCause::Deadlock)), ..NodeStatus::default() };
        assert_eq!(encode_status(&rankless, false)[2..4], [0, 0]);
    }

    #[test]
    fn words_that_are_not_a_status_are_refused() {
        let good = encode_status(
            &NodeStatus {
                barriers: 1,
                failure: Some((Some(4), AbortCause::UserAbort(1))),
                ..NodeStatus::default()
            },
            false,
        );
        for (i, bad) in [(1, 2), (2, 7), (6, 2), (7, u64::MAX), (3, 1 << 32), (4, 1 << 40), (4, 0xdead)] {
            let mut words = good;
            words[i] = bad;
            assert!(decode_status(&words).is_err(), "word {i} = {bad} accepted");
        }
    }
}
