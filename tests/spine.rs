//! The spine over real processes: barriers, MPB visibility, flags, failure, attach checks.

use std::time::Duration;

use sccemu::segment::{AttachError, Segment};
use sccemu::{CollError, Config, Core, Job, MpbError, WaitPolicy};

/// Each round, every core writes its round number into its own MPB, passes the barrier,
/// and checks every other core's word: a barrier that let anyone through early, or lost
/// visibility, shows up as a stale round.
fn barrier_rounds(core: &Core, rounds: u32) -> Result<u32, String> {
    let n = core.size();
    for round in 1..=rounds {
        core.mpb_put(core.rank(), 0, &round.to_le_bytes()).map_err(|e| e.to_string())?;
        core.barrier().map_err(|e| e.to_string())?;
        for peer in 0..n {
            let mut word = [0u8; 4];
            core.mpb_get(peer, 0, &mut word).map_err(|e| e.to_string())?;
            let seen = u32::from_le_bytes(word);
            if seen != round {
                return Err(format!("round {round}: core {peer} shows {seen}"));
            }
        }
        core.barrier().map_err(|e| e.to_string())?;
    }
    Ok(rounds)
}

#[test]
fn barrier_rounds_with_2_cores() {
    assert_eq!(Job::new(2).run(&500, barrier_rounds).unwrap(), vec![500; 2]);
}

#[test]
fn barrier_rounds_with_8_cores() {
    assert_eq!(Job::new(8).run(&200, barrier_rounds).unwrap(), vec![200; 8]);
}

#[test]
fn barrier_rounds_with_48_oversubscribed_cores() {
    let job = Job::new(48);
    assert_eq!(job.config().wait, WaitPolicy::Block as u32, "auto picks block on 2 CPUs");
    assert_eq!(job.run(&20, barrier_rounds).unwrap(), vec![20; 48]);
}

#[test]
fn barrier_rounds_under_every_wait_policy() {
    for policy in [WaitPolicy::Spin, WaitPolicy::Block, WaitPolicy::Adaptive] {
        assert_eq!(Job::new(4).wait(policy).run(&50, barrier_rounds).unwrap(), vec![50; 4], "{policy:?}");
    }
}

/// Every core writes a distinct pattern into a distinct slice of every core's MPB; after a
/// barrier every core reads every slice of every MPB back.
fn all_pairs(core: &Core, _: ()) -> Result<usize, String> {
    let n = core.size();
    let slice = core.mpb_bytes() / n as usize;
    let pattern = |writer: u32, target: u32| -> Vec<u8> {
        (0..slice).map(|i| (writer as usize * 31 + target as usize * 7 + i) as u8).collect()
    };
    for target in 0..n {
        core.mpb_put(target, core.rank() as usize * slice, &pattern(core.rank(), target))
            .map_err(|e| e.to_string())?;
    }
    core.barrier().map_err(|e| e.to_string())?;
    let mut checked = 0;
    for target in 0..n {
        for writer in 0..n {
            let mut got = vec![0u8; slice];
            core.mpb_get(target, writer as usize * slice, &mut got).map_err(|e| e.to_string())?;
            if got != pattern(writer, target) {
                return Err(format!("core {writer}'s bytes in core {target}'s MPB are wrong"));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

#[test]
fn mpb_put_get_visible_between_every_pair_of_8_cores() {
    assert_eq!(Job::new(8).run(&(), all_pairs).unwrap(), vec![64; 8]);
}

fn bad_mpb_input_is_typed(core: &Core, _: ()) -> Result<Vec<String>, String> {
    let size = core.mpb_bytes();
    let mut buf = [0u8; 16];
    let errors = [
        core.mpb_put(core.size(), 0, &buf).unwrap_err(),
        core.mpb_get(0, size - 8, &mut buf).unwrap_err(),
        core.mpb_put(0, usize::MAX, &buf).unwrap_err(),
    ];
    assert_eq!(errors[0], MpbError::RankOutOfRange { rank: core.size(), size: core.size() });
    assert!(matches!(errors[1], MpbError::OutOfBounds { offset, len: 16, .. } if offset == size - 8));
    // The job is still usable: a barrier and a put both work afterwards.
    core.barrier().map_err(|e| e.to_string())?;
    core.mpb_put(0, size - 16, &buf).map_err(|e| e.to_string())?;
    Ok(errors.iter().map(ToString::to_string).collect())
}

#[test]
fn bad_mpb_input_gets_typed_errors_and_the_job_goes_on() {
    let results = Job::new(2).run(&(), bad_mpb_input_is_typed).unwrap();
    assert!(results[0][0].contains("rank 2 is not a core"), "{:?}", results[0]);
}

/// Flag ping-pong: core 0 writes a payload into core 1's MPB and raises core 1's flag;
/// core 1 checks the payload and answers through core 0's flag.
fn flag_ping_pong(core: &Core, rounds: u32) -> Result<u32, String> {
    let flag = core.flag_alloc().map_err(|e| e.to_string())?;
    let data = core.mpb_alloc(256).map_err(|e| e.to_string())?;
    let peer = 1 - core.rank();
    for round in 1..=rounds {
        if core.rank() == 0 {
            core.mpb_put(peer, data.offset, &[round as u8; 256]).map_err(|e| e.to_string())?;
            core.flag_write(flag, peer, round).map_err(|e| e.to_string())?;
            core.flag_wait(flag, round).map_err(|e| e.to_string())?;
        } else {
            core.flag_wait(flag, round).map_err(|e| e.to_string())?;
            let mut got = [0u8; 256];
            core.mpb_get(core.rank(), data.offset, &mut got).map_err(|e| e.to_string())?;
            if got != [round as u8; 256] {
                return Err(format!("round {round}: stale payload {}", got[0]));
            }
            core.flag_write(flag, peer, round).map_err(|e| e.to_string())?;
        }
    }
    core.flag_read(flag, core.rank()).map_err(|e| e.to_string())
}

#[test]
fn flags_hand_off_payloads() {
    for policy in [WaitPolicy::Adaptive, WaitPolicy::Block] {
        assert_eq!(Job::new(2).wait(policy).run(&300, flag_ping_pong).unwrap(), vec![300, 300]);
    }
}

/// Rank 3 dies by SIGKILL while the others are blocked in a barrier.
fn die_in_barrier(core: &Core, _: ()) -> Result<String, String> {
    if core.rank() == 3 {
        std::thread::sleep(Duration::from_millis(200));
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL).map_err(|e| e.to_string())?;
    }
    match core.barrier() {
        Ok(()) => Err("barrier completed without rank 3".into()),
        Err(e) => Ok(e.to_string()),
    }
}

/// As `die_in_barrier`, in the barrier of a communicator that rank 2 leads: its
/// waiters sleep on rank 2's barrier bell, which the abort must ring too.
fn die_in_comm_barrier(core: &Core, _: ()) -> Result<String, String> {
    let world = core.world().map_err(|e| e.to_string())?;
    let upper = world.split(Some(u32::from(core.rank() >= 2)), 0).map_err(|e| e.to_string())?;
    let comm = upper.expect("every rank has a colour");
    if core.rank() == 3 {
        std::thread::sleep(Duration::from_millis(200));
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL).map_err(|e| e.to_string())?;
    }
    match comm.barrier() {
        Ok(()) if core.rank() >= 2 => Err("barrier completed without rank 3".into()),
        // Ranks 0 and 1 meet each other; they wait for the abort in the world barrier.
        Ok(()) => {
            core.barrier().map_or_else(|e| Ok(e.to_string()), |()| Err("world barrier completed".into()))
        }
        Err(e) => Ok(e.to_string()),
    }
}

#[test]
fn a_rank_killed_mid_barrier_aborts_the_job_within_seconds() {
    for (policy, die) in [
        (WaitPolicy::Block, die_in_barrier as fn(&Core, ()) -> Result<String, String>),
        (WaitPolicy::Adaptive, die_in_barrier),
        (WaitPolicy::Block, die_in_comm_barrier),
        (WaitPolicy::Adaptive, die_in_comm_barrier),
    ] {
        let outcome = Job::new(6).wait(policy).run_outcome(&(), die).unwrap();
        // The launcher's own clock (spawn to end), not the test's: a job may first wait
        // for another test's. The job takes ~0.2 s; a hang would be stopped by nothing
        // else, and 5 s leave room for a loaded 2-CPU machine.
        let elapsed = outcome.report.elapsed;
        assert!(elapsed < Duration::from_secs(5), "job took {elapsed:?}");
        assert!(!outcome.report.success());
        assert_ne!(outcome.report.exit_code(), 0);
        assert_eq!(outcome.report.diagnosis().as_deref(), Some("rank 3 killed by SIGKILL"));
        for (rank, result) in outcome.ranks.iter().enumerate() {
            if rank == 3 {
                assert!(result.is_err());
            } else {
                assert_eq!(result.as_deref(), Ok("rank 3 killed by SIGKILL"), "rank {rank}");
            }
        }
    }
}

fn exit_without_finalize(core: &Core, _: ()) -> Result<(), CollError> {
    if core.rank() == 1 {
        std::process::exit(0);
    }
    core.barrier()
}

#[test]
fn exiting_without_finalize_is_a_failure() {
    let outcome = Job::new(3).run_outcome(&(), exit_without_finalize).unwrap();
    assert_eq!(outcome.report.diagnosis().as_deref(), Some("rank 1 exited without finalizing"));
    let err = outcome.ranks[0].as_ref().unwrap_err().to_string();
    assert!(err.contains("rank 1 exited without finalizing"), "{err}");
}

fn panic_on_rank_0(core: &Core, _: ()) -> Result<(), CollError> {
    assert!(core.rank() != 0, "rank 0 gives up");
    core.barrier()
}

#[test]
fn a_panic_fails_the_job_and_names_the_rank() {
    let err = Job::new(2).run(&(), panic_on_rank_0).unwrap_err().to_string();
    assert!(err.starts_with("rank 0 returned an error: panicked: rank 0 gives up"), "{err}");
}

fn identity(core: &Core, _: ()) -> Result<(u32, u32, u32, u32, u32), String> {
    let p = core.position();
    Ok((core.rank(), core.size(), p.tile, p.x, p.y))
}

#[test]
fn cores_know_their_place_on_the_mesh() {
    let ranks = Job::new(48).run(&(), identity).unwrap();
    assert_eq!(ranks[0], (0, 48, 0, 0, 0));
    assert_eq!(ranks[13], (13, 48, 6, 0, 1), "tile 6 starts the second row of a 6x4 mesh");
    assert_eq!(ranks[47], (47, 48, 23, 5, 3));
}

fn segment_with(config: Config, corrupt: impl FnOnce(&std::fs::File)) -> std::os::fd::OwnedFd {
    let segment = Segment::create(config).unwrap();
    let fd = segment.fd().try_clone_to_owned().unwrap();
    corrupt(&std::fs::File::from(fd.try_clone().unwrap()));
    fd
}

#[test]
fn attaching_to_a_segment_of_another_version_is_refused() {
    use std::os::unix::fs::FileExt;
    let version_at = std::mem::offset_of!(shm_layout::Header, version) as u64;
    let fd = segment_with(Config::new(2), |f| f.write_all_at(&99u32.to_le_bytes(), version_at).unwrap());
    match Core::attach_fd(fd, 0, 2) {
        Err(AttachError::Version { found: 99, expected }) => assert_eq!(expected, shm_layout::LAYOUT_VERSION),
        other => panic!("attached anyway: {:?}", other.err()),
    }
    let fd = segment_with(Config::new(2), |f| f.write_all_at(&[0u8; 8], 0).unwrap());
    assert!(matches!(Core::attach_fd(fd, 0, 2), Err(AttachError::BadMagic(0))));
    let fd = segment_with(Config::new(2), |_| {});
    assert!(matches!(Core::attach_fd(fd, 2, 2), Err(AttachError::Rank { rank: 2, .. })));
}

#[test]
fn attaching_outside_a_job_says_so() {
    let err = Core::attach().err().expect("no job here");
    assert!(err.to_string().contains("run under sccrun"), "{err}");
}

#[test]
fn an_unsealed_segment_is_refused() {
    let fd = nix::sys::memfd::memfd_create(c"fake", nix::sys::memfd::MFdFlags::empty()).unwrap();
    std::fs::File::from(fd.try_clone().unwrap()).set_len(1 << 20).unwrap();
    assert!(matches!(Core::attach_fd(fd, 0, 1), Err(AttachError::NotSealed)));
}

/// Collective heap allocation: everyone gets the same region, sees the others' writes,
/// frees it, and gets typed errors (with the job still usable) when the heap runs out.
fn heap_roundtrip(core: &Core, _: ()) -> Result<(usize, String), String> {
    use sccemu::protocol::payload::Payload;
    let e = |e: sccemu::AllocError| e.to_string();
    let a = core.heap_alloc(10_000).map_err(e)?;
    let bytes = core.heap_bytes(a);
    bytes.write(core.rank() as usize, &[core.rank() as u8 + 1]);
    core.barrier().map_err(|e| e.to_string())?;
    let mut all = vec![0u8; core.size() as usize];
    bytes.read(0, &mut all);
    if all != (1..=core.size() as u8).collect::<Vec<_>>() {
        return Err(format!("shared region shows {all:?}"));
    }
    let too_big = core.heap_alloc(usize::MAX / 2).unwrap_err().to_string();
    core.heap_free(a).map_err(e)?;
    let again = core.heap_alloc(4096).map_err(e)?;
    if again.offset != a.offset {
        return Err(format!("freed region not reused: {a:?} then {again:?}"));
    }
    core.heap_free(again).map_err(e)?;
    Ok((a.offset, too_big))
}

#[test]
fn heap_allocation_is_collective_and_reuses_freed_memory() {
    let results = Job::new(4).run(&(), heap_roundtrip).unwrap();
    assert!(results.iter().all(|r| r == &results[0]), "{results:?}");
    assert!(results[0].1.contains("bytes free in all"), "{}", results[0].1);
}
