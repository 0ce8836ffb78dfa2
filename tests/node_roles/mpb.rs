//! The `mpb` role: MPB puts and gets and flags between every pair of neighbours, on one
//! node or across two, as RCCE's send and receive use them.

use sccemu::{Core, FlagError, MpbError, Op};

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

    let past = core.mpb_put(right, core.mpb_bytes() - 4, &[0; 8]);
    assert!(matches!(past, Err(MpbError::OutOfBounds { .. })), "{past:?}");
    if !core.context().is_local(right) {
        assert!(matches!(core.flag_wait_at(sent, right, 0), Err(FlagError::OnOtherNode { .. })));
    }
    core.barrier()?;
    Ok(())
}
