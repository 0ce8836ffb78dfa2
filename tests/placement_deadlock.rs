//! Core placement by core ID and the launcher's deadlock report, over real processes.

use sccemu::segment::WaitMark;
use sccemu::{AbortCause, Core, Job, JobAborted, JobError};

fn positions(core: &Core, _: ()) -> Result<Vec<(u32, u32, u32, u32)>, String> {
    core.barrier().map_err(|e| e.to_string())?;
    Ok((0..core.size())
        .map(|r| {
            let p = core.position_of(r).unwrap();
            (core.core_id(r).unwrap(), p.x, p.y, p.core_in_tile)
        })
        .collect())
}

#[test]
fn ranks_sit_where_their_core_ids_say() {
    // Core IDs are 2 * (x + 6 * y) + z on the SCC's 6x4 mesh.
    let got = Job::new(3).core_ids(vec![0, 13, 47]).run(&(), positions).unwrap();
    for seen in &got {
        assert_eq!(seen, &vec![(0, 0, 0, 0), (13, 0, 1, 1), (47, 5, 3, 1)]);
    }
    // The hop distance between the far corners is what the mesh says.
    let mesh = sccemu::Mesh::SCC;
    let (a, b) = (sccemu::MeshPosition::of(0, mesh), sccemu::MeshPosition::of(47, mesh));
    assert_eq!(a.hops(&b), 5 + 3);
}

#[test]
fn core_ids_must_fit_the_mesh_once() {
    for ids in [vec![0, 0], vec![0, 48], vec![1]] {
        match Job::new(2).core_ids(ids.clone()).run(&(), positions) {
            Err(JobError::Launch(e)) => assert!(e.to_string().contains("core"), "{ids:?}: {e}"),
            other => panic!("{ids:?} accepted: {other:?}"),
        }
    }
}

/// Each core "sends" to the next and waits for it forever: a send-send cycle.
fn send_cycle(core: &Core, _: ()) -> Result<(), String> {
    let peer = (core.rank() + 1) % core.size();
    let _mark = core.mark_wait(WaitMark::Send { peer });
    match core.wait_on(core.rank(), || None::<()>) {
        Err(JobAborted { rank: None, cause: AbortCause::Deadlock }) => Err("deadlock reported".into()),
        other => Err(format!("unexpected end of the wait: {other:?}")),
    }
}

#[test]
fn a_job_whose_live_cores_all_wait_is_stopped_as_a_deadlock() {
    match Job::new(3).run(&(), send_cycle) {
        Err(JobError::Rank { failure, .. }) => {
            assert!(failure.to_string().contains("deadlock reported"), "{failure}")
        }
        other => panic!("expected every rank to see the deadlock: {other:?}"),
    }
}

/// Rank 0 waits marked while rank 1 computes, unmarked, then releases it: no deadlock.
fn one_blocked(core: &Core, _: ()) -> Result<(), String> {
    let flag = core.flag_alloc().map_err(|e| e.to_string())?;
    if core.rank() == 0 {
        let _mark = core.mark_wait(WaitMark::Recv { peer: 1 });
        core.flag_wait(flag, 1).map_err(|e| e.to_string())?;
    } else {
        std::thread::sleep(std::time::Duration::from_millis(2500));
        core.flag_write(flag, 0, 1).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn a_core_that_still_runs_is_no_deadlock() {
    Job::new(2).run(&(), one_blocked).unwrap();
}
