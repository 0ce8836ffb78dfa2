//! The `mpb` role: MPB puts and gets and flags between every pair of neighbours, on one
//! node or across two, as RCCE's send and receive use them.

use sccemu::protocol::payload::Payload;
use sccemu::{Core, FlagError, LockWordError, MpbError, Op};

/// Bytes each rank puts: more than a request carries (`rma::remote::CHUNK`) would not fit
/// an 8 KiB MPB, so several lines.
const BYTES: usize = 3000;

pub fn mpb(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let region = core.mpb_alloc(BYTES)?;
    let sent = core.flag_alloc()?;
    let ready = core.flag_alloc()?;
    for round in 1..=3u32 {
        // The data into the right neighbour's MPB, then its flag: the flag publishes it.
        let data: Vec<u8> = (0..BYTES).map(|i| (i as u32 * 31 + me + round) as u8).collect();
        core.mpb_put(right, region.offset, &data)?;
        core.flag_write(sent, right, round)?;
        core.flag_wait(sent, round)?;
        let mut got = vec![0u8; BYTES];
        core.mpb_get(me, region.offset, &mut got)?;
        assert!(
            got.iter().enumerate().all(|(i, &b)| b == (i as u32 * 31 + left + round) as u8),
            "rank {me}, round {round}: the put from {left}"
        );
        // A get from the right neighbour's MPB returns what this core put there (its
        // requests to one rank apply in order), and its copy of `sent` what we wrote.
        let mut back = vec![0u8; BYTES];
        core.mpb_get(right, region.offset, &mut back)?;
        assert_eq!(back, data, "rank {me}, round {round}: the get back from {right}");
        assert_eq!(core.flag_read(sent, right)?, round);
        // Nobody overwrites a neighbour's MPB before it has read it.
        core.flag_write(ready, left, round)?;
        core.flag_wait(ready, round)?;
    }
    // Atomic updates of rank 0's MPB from every rank, on its node and others: a counter,
    // and one bit each.
    let counters = core.mpb_alloc(64)?;
    core.barrier()?;
    for _ in 0..10 {
        core.mpb_update(0, counters.offset, 1u32, Op::Sum, false)?;
    }
    core.mpb_update(0, counters.offset + 8 + (me / 8) as usize, 1u8 << (me % 8), Op::BitOr, true)?;
    core.barrier()?;
    let mut count = [0u8; 4];
    core.mpb_get(0, counters.offset, &mut count)?;
    assert_eq!(u32::from_le_bytes(count), 10 * n, "rank {me}: the counter at rank 0");
    let mut bits = vec![0u8; n.div_ceil(8) as usize];
    core.mpb_get(0, counters.offset + 8, &mut bits)?;
    assert!((0..n).all(|r| bits[(r / 8) as usize] & (1 << (r % 8)) != 0), "rank {me}: bits {bits:?}");
    let odd = core.mpb_update(0, counters.offset + 2, 1u32, Op::Sum, false);
    assert!(matches!(odd, Err(MpbError::Misaligned { .. })), "{odd:?}");

    test_and_set(core, counters.offset + 32)?;

    let past = core.mpb_put(right, core.mpb_bytes() - 4, &[0; 8]);
    assert!(matches!(past, Err(MpbError::OutOfBounds { .. })), "{past:?}");
    if !core.context().is_local(right) {
        assert!(matches!(core.flag_wait_at(sent, right, 0), Err(FlagError::OnOtherNode { .. })));
    }
    core.barrier()?;
    Ok(())
}

/// A test-and-set word in rank 0's node guards a counter in the last rank's MPB at
/// `at` (two different nodes when the job spans them): every rank increments it
/// `ROUNDS` times through MPB gets and puts, and the total is exact.
fn test_and_set(core: &Core, at: usize) -> Result<(), Box<dyn std::error::Error>> {
    const ROUNDS: u32 = 10;
    let (me, n, keeper) = (core.rank(), core.size(), core.size() - 1);
    // The word, in rank 0's heap, and where it lies, told to every rank.
    let mut word = [0u8; 8];
    if me == 0 {
        let region = core.heap_alloc_local(64)?;
        core.heap_bytes(region).zero(0, 64);
        word = (region.offset as u64).to_le_bytes();
        (1..n).try_for_each(|r| core.send(r, 7, &word))?;
    } else {
        core.recv(0, 7, &mut word)?;
    }
    let word = u64::from_le_bytes(word) as usize;
    for _ in 0..ROUNDS {
        core.lock_word(0, word)?;
        let mut count = [0u8; 4];
        core.mpb_get(keeper, at, &mut count)?;
        core.mpb_put(keeper, at, &(u32::from_le_bytes(count) + 1).to_le_bytes())?;
        core.unlock_word(0, word)?;
    }
    core.barrier()?;
    let mut count = [0u8; 4];
    core.mpb_get(keeper, at, &mut count)?;
    assert_eq!(u32::from_le_bytes(count), ROUNDS * n, "rank {me}: the guarded counter");
    let odd = core.lock_word(0, word + 2);
    assert!(matches!(odd, Err(LockWordError::BadOffset { .. })), "{odd:?}");
    let nobody = core.lock_word(n, word);
    assert!(matches!(nobody, Err(LockWordError::RankOutOfRange { .. })), "{nobody:?}");
    Ok(())
}
