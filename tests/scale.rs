//! A job at a large core count, over real processes: 1024 cores attach, meet at the world
//! barrier, build the world communicator, allgather one word each and pass a message
//! round the ring over the default channel. Every rank checks every block it got.
//!
//! Memory, which is what used to grow with the square of the core count: after the
//! communicator and the allgather, the segment holds less than a page per core. Before
//! the collectives' staging packed its headers (and before the put-based allgathers' step
//! flags became a block of their own), every core touched a page per member, and the
//! leader zeroed 4 bytes per pair of members: 8 KiB per core at 1024 cores.
//!
//! No time is asserted; `cargo run --release --example scale` prints the times.

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

use sccemu::{Allgather, Core, Job};

mod common;
use common::{OrString, check};

const CORES: u32 = 1024;

/// Bytes of the segment that are resident (the memfd's allocated blocks).
fn resident(core: &Core) -> Result<u64, String> {
    let fd = core.context().segment_for_tests().fd().as_raw_fd();
    Ok(std::fs::metadata(format!("/proc/self/fd/{fd}")).s()?.blocks() * 512)
}

fn meet_gather_ring(core: &Core, (): ()) -> Result<(u64, u64), String> {
    let (n, me) = (core.size(), core.rank());
    core.barrier().s()?;
    let world = core.world().s()?;
    let mut all = vec![0u64; n as usize];
    world.allgather(&[u64::from(me) * 3 + 1], &mut all, Allgather::Auto).s()?;
    for (rank, &got) in all.iter().enumerate() {
        check(got == rank as u64 * 3 + 1, || format!("allgather block {rank} is {got}"))?;
    }
    // Measured between two barriers: nobody has sent yet (a message takes pages of
    // the receiver's ring).
    world.barrier().s()?;
    let segment = resident(core)?;
    world.barrier().s()?;
    core.send((me + 1) % n, 7, &u64::from(me).to_le_bytes()).s()?;
    let mut word = [0u8; 8];
    core.recv((me + n - 1) % n, 7, &mut word).s()?;
    let left = u64::from_le_bytes(word);
    check(left == u64::from((me + n - 1) % n), || format!("ring: got {left} from the left"))?;
    world.free().s()?;
    Ok((all.iter().sum(), segment))
}

#[test]
fn a_thousand_cores_meet_gather_and_pass_a_ring() {
    let results = Job::new(CORES).run(&(), meet_gather_ring).unwrap();
    let n = u64::from(CORES);
    assert_eq!(results.len(), CORES as usize);
    for (rank, &(sum, segment)) in results.iter().enumerate() {
        assert_eq!(sum, 3 * n * (n - 1) / 2 + n, "rank {rank}");
        assert!(segment < n * 4096, "rank {rank}: {segment} bytes of the segment resident");
    }
}
