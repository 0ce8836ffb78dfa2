//! Communicators built by their members alone (`Comm::grant_area`, `Comm::from_grant`)
//! over real processes: two disjoint subsets, one in reverse world order, built at once
//! and running collectives; overlapping subsets built in turn; the same subset again
//! and again, freed or dropped, with the heap back where it was; a one-member subset;
//! a failed allocation reaching every member; the member lists refused; and
//! `Comm::release`, counting a member out once, as the MPI library's free does, and
//! refusing collective calls after. The grant
//! travels as a point-to-point message from the leader, as the MPI library sends it.

use sccemu::coll::Grant;
use sccemu::{Allgather, CollError, Comm, Core, Job, Op, Source};

mod common;
use common::{OrString, bounded, check};

/// The subset communicator over `members` (world ranks, leader first), its grant sent
/// by the leader with `tag`; `None` on cores outside `members`, which take no part.
fn build<'c>(core: &'c Core, members: &[u32], tag: u32) -> Result<Option<Comm<'c>>, String> {
    if !members.contains(&core.rank()) {
        return Ok(None);
    }
    let grant = if members[0] == core.rank() {
        let grant = Comm::grant_area(core, members.len());
        for &m in &members[1..] {
            core.send(m, tag, &grant.word().to_le_bytes()).s()?;
        }
        grant
    } else {
        let mut word = [0u8; 8];
        core.recv(Source::Rank(members[0]), tag, &mut word).s()?;
        Grant::from_word(u64::from_le_bytes(word))
    };
    Comm::from_grant(core, members, grant).map(Some).s()
}

/// What one member saw of its subset's collectives.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Seen {
    rank: u32,
    members: Vec<u32>,
    /// Allreduce (sum) of the members' world ranks.
    sum: u64,
    /// Allgather of the members' world ranks.
    gathered: Vec<u32>,
    /// Bcast from the last member of its world rank times ten.
    from_last: u64,
}

/// Runs the collectives on `comm` and reports them.
fn exercise(core: &Core, comm: &Comm<'_>) -> Result<Seen, String> {
    let me = core.rank();
    let mut sum = [0u64];
    comm.allreduce(&[u64::from(me)], &mut sum, Op::Sum).s()?;
    let mut gathered = vec![0u32; comm.size() as usize];
    comm.allgather(&[me], &mut gathered, Allgather::Auto).s()?;
    let last = comm.size() - 1;
    let mut from_last = [if comm.rank() == last { u64::from(me) * 10 } else { 0 }];
    comm.bcast(last, &mut from_last).s()?;
    comm.barrier().s()?;
    Ok(Seen {
        rank: comm.rank(),
        members: comm.members().to_vec(),
        sum: sum[0],
        gathered,
        from_last: from_last[0],
    })
}

/// The even world ranks in reverse order and the odd ones in order, built at once.
fn halves(n: u32, me: u32) -> Vec<u32> {
    if me % 2 == 0 { (0..n).filter(|r| r % 2 == 0).rev().collect() } else { (1..n).step_by(2).collect() }
}

fn disjoint(core: &Core, _: ()) -> Result<Seen, String> {
    bounded(core, || {
        let members = halves(core.size(), core.rank());
        let comm = build(core, &members, 5)?.ok_or("a member of its half")?;
        let seen = exercise(core, &comm)?;
        comm.free().s()?;
        Ok(seen)
    })
}

#[test]
fn disjoint_subsets_built_at_once_run_collectives_in_their_order() {
    let n = 5;
    let got = Job::new(n).run(&(), disjoint).unwrap();
    for (me, seen) in got.iter().enumerate() {
        let members = halves(n, me as u32);
        let rank = members.iter().position(|&w| w == me as u32).unwrap() as u32;
        let sum = members.iter().map(|&w| u64::from(w)).sum();
        let from_last = u64::from(*members.last().unwrap()) * 10;
        assert_eq!(
            seen,
            &Seen { rank, members: members.clone(), sum, gathered: members, from_last },
            "core {me}"
        );
    }
    // The evens' leader is the highest even core.
    assert_eq!(got[4].rank, 0);
}

/// Heap bytes free, after a barrier of the whole job.
fn free_after_barrier(core: &Core) -> Result<usize, String> {
    core.barrier().s()?;
    let free = core.heap_free_bytes().s()?;
    core.barrier().s()?;
    Ok(free)
}

/// Overlapping subsets in turn (different tags), the same subset ten times (freed or
/// dropped), and a subset of one; the sums each saw, and the heap before and after.
fn repeated(core: &Core, _: ()) -> Result<(Vec<u64>, usize, usize), String> {
    bounded(core, || {
        let before = free_after_barrier(core)?;
        let mut sums = Vec::new();
        let n = core.size();
        let first: Vec<u32> = (0..n - 1).collect();
        let second: Vec<u32> = (1..n).rev().collect();
        for (members, tag) in [(&first, 1), (&second, 2)] {
            if let Some(comm) = build(core, members, tag)? {
                sums.push(exercise(core, &comm)?.sum);
                comm.free().s()?;
            }
        }
        let pair = [n - 1, 0];
        for round in 0..10 {
            if let Some(comm) = build(core, &pair, 3)? {
                sums.push(exercise(core, &comm)?.sum);
                if round % 2 == 0 {
                    comm.free().s()?;
                }
            }
        }
        let alone = build(core, &[core.rank()], 4)?.ok_or("its own member")?;
        let seen = exercise(core, &alone)?;
        check(seen.rank == 0 && seen.sum == u64::from(core.rank()), || format!("alone: {seen:?}"))?;
        drop(alone);
        let after = free_after_barrier(core)?;
        Ok((sums, before, after))
    })
}

#[test]
fn overlapping_and_repeated_subsets_return_their_memory() {
    let got = Job::new(4).run(&(), repeated).unwrap();
    // Cores 0..=2 build the first (sum 0+1+2), 1..=3 the second, 3 and 0 the pair.
    let wants = |core: usize| -> Vec<u64> {
        let mut v = Vec::new();
        if core < 3 {
            v.push(3);
        }
        if core > 0 {
            v.push(6);
        }
        if core == 0 || core == 3 {
            v.extend([3; 10]);
        }
        v
    };
    for (core, (sums, before, after)) in got.into_iter().enumerate() {
        assert_eq!(sums, wants(core), "core {core}");
        assert_eq!(before, after, "core {core}: the heap did not get its memory back");
    }
}

/// The member lists refused, then a leader whose allocation failed: every member gets
/// the allocation error, and the job goes on.
fn refused(core: &Core, _: ()) -> Result<Vec<String>, String> {
    bounded(core, || {
        let (me, n) = (core.rank(), core.size());
        let mut errors = Vec::new();
        let grant = Comm::grant_area(core, 1);
        let other = (me + 1) % n;
        for members in [vec![other], vec![me, other, me], vec![me, n]] {
            match Comm::from_grant(core, &members, grant) {
                Err(e) => errors.push(e.to_string()),
                Ok(_) => return Err(format!("{members:?} accepted")),
            }
        }
        // The refused lists touched nothing: the grant still builds, once.
        let alone = Comm::from_grant(core, &[me], grant).s()?;
        alone.barrier().s()?;
        drop(alone);

        // A grant for more members than the heap holds areas for.
        let all: Vec<u32> = (0..n).collect();
        let grant = if me == 0 {
            let grant = Comm::grant_area(core, 1 << 40);
            for m in 1..n {
                core.send(m, 9, &grant.word().to_le_bytes()).s()?;
            }
            grant
        } else {
            let mut word = [0u8; 8];
            core.recv(Source::Rank(0), 9, &mut word).s()?;
            Grant::from_word(u64::from_le_bytes(word))
        };
        match Comm::from_grant(core, &all, grant) {
            Err(CollError::Alloc(_)) => {}
            other => return Err(format!("a failed allocation gave {:?}", other.map(|c| c.size()))),
        }
        let world = core.world().s()?;
        let mut sum = [0u32];
        world.allreduce(&[1], &mut sum, Op::Sum).s()?;
        check(sum[0] == n, || format!("world sum {}", sum[0]))?;
        Ok(errors)
    })
}

#[test]
fn bad_member_lists_and_failed_allocations_are_errors_on_every_member() {
    let got = Job::new(3).run(&(), refused).unwrap();
    for (me, errors) in got.iter().enumerate() {
        let want = [
            CollError::NotAMember { rank: me as u32 }.to_string(),
            CollError::DuplicateMember { rank: me as u32 }.to_string(),
            CollError::RankOutOfRange { rank: 3, size: 3 }.to_string(),
        ];
        assert_eq!(errors, &want, "core {me}");
    }
}

/// `Comm::release` counts a member out as dropping does, once: subsets released by
/// every member (then dropped, or kept as the MPI library keeps a freed handle's
/// object) and subsets released by some members and dropped by the others give the
/// heap back exactly; a second release and the drop after it count nothing.
fn released(core: &Core, _: ()) -> Result<(usize, usize, usize), String> {
    bounded(core, || {
        let before = free_after_barrier(core)?;
        let kept = (0..5)
            .map(|i| {
                let members = halves(core.size(), core.rank());
                let comm = build(core, &members, 20 + i)?.ok_or("a member of its half")?;
                exercise(core, &comm)?;
                comm.release();
                comm.release();
                // Its memory may be another's now: collective calls are refused.
                let mut out = [0u32];
                match (comm.allreduce(&[1u32], &mut out, Op::Sum), comm.barrier()) {
                    (Err(CollError::Released), Err(CollError::Released)) => {}
                    other => return Err(format!("calls on a released communicator: {other:?}")),
                }
                Ok(comm)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let unused = free_after_barrier(core)?;
        for i in 0..5 {
            let members: Vec<u32> = (0..core.size()).collect();
            let comm = build(core, &members, 30 + i)?.ok_or("a member")?;
            exercise(core, &comm)?;
            if (core.rank() + i) % 2 == 0 {
                comm.release();
            }
            drop(comm);
        }
        let after = free_after_barrier(core)?;
        // The released communicators, kept until now, count nothing when they go.
        drop(kept);
        check(free_after_barrier(core)? == after, || "dropping released communicators freed memory".into())?;
        Ok((before, unused, after))
    })
}

#[test]
fn a_released_subset_returns_its_memory_once() {
    for (core, (before, unused, after)) in Job::new(5).run(&(), released).unwrap().into_iter().enumerate() {
        assert_eq!((unused, after), (before, before), "core {core}");
    }
}
