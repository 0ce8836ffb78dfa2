//! The `rma_timed` role: a window's operations and synchronisations in virtual time,
//! communication only, in an order the host cannot change, so that its virtual times on
//! one node and on several can be compared.
//!
//! Each synchronisation is observed by a rank that is behind in virtual time, so that
//! what it learns through the window's stamps moves its clock: ranks do unequal work
//! (puts to themselves) before fences, posts and completions; a lock is held while a
//! message tells the next locker to try, and released only after more work, so the next
//! locker waits for it (the message carries an earlier time than the release).
//!
//! Each rank notes its virtual time after every synchronisation and writes the notes to
//! [`marks_file`] at the end, for the test to compare.

use sccemu::{Core, Group, LockKind, Op, Placement, Window};

/// Elements of each part.
const LEN: usize = 64;
/// The tag of the messages that order the lockers.
const GO: u32 = 5;

/// `times` puts of a word to this rank's own part: work that takes virtual time.
fn work(win: &Window<'_, u64>, me: u32, times: u32) -> Result<(), Box<dyn std::error::Error>> {
    for i in 0..times {
        win.put(me, 60 + i as usize % 4, &[u64::from(i)])?;
    }
    Ok(())
}

/// Where rank `rank` of a job started by the process `launcher` writes its notes.
pub fn marks_file(launcher: u32, rank: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("sccemu-rma-timed-{launcher}-{rank}"))
}

pub fn rma_timed(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    let mut marks: Vec<u64> = Vec::new();
    let mut mark = || marks.push(sccemu::timing::clock().map_or(0, |c| c.now()));
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let win = core.window::<u64>(LEN, Placement::Dram)?;
    let mine = [u64::from(me); 8];
    let mut got = [0u64; 8];

    // Fence epochs, arrived at unequally: a put to the right, a get from the left.
    win.fence()?;
    mark();
    work(&win, me, me)?;
    win.put(right, 0, &mine)?;
    win.fence()?;
    mark();
    win.get(left, 8, &mut got)?;
    work(&win, me, n - me)?;
    win.fence()?;
    mark();

    // PSCW around the ring: exposed to the left, accessing the right.
    work(&win, me, 2 * me)?;
    win.post(&Group::single(left))?;
    win.start(&Group::single(right))?;
    mark();
    win.put(right, 16, &mine)?;
    win.fetch_add(right, 24, 1u64)?;
    work(&win, me, 3 * (n - me))?;
    win.complete()?;
    win.wait()?;
    mark();
    win.fence()?;
    mark();

    // Lock handovers: in round `a`, rank `a` holds an exclusive lock on `a + 2`, tells
    // `a + 1` to lock it too (shared in even rounds, exclusive in odd ones), works and
    // releases; `a + 1`, once it holds it, tells `a + 3` to lock it exclusively, works
    // and releases. Each locker waits for a release it learns of only through the lock.
    for a in 0..n {
        let (b, c, target) = ((a + 1) % n, (a + 3) % n, (a + 2) % n);
        if me == a {
            let epoch = win.lock(LockKind::Exclusive, target)?;
            epoch.put(target, 32, &mine)?;
            core.send(b, GO, &[])?;
            work(&win, me, 5 + a)?;
            epoch.fetch_add(target, 40, 1u64)?;
            epoch.unlock()?;
            mark();
        } else if me == b {
            core.recv(a, GO, &mut [])?;
            let kind = if a % 2 == 0 { LockKind::Shared } else { LockKind::Exclusive };
            let epoch = win.lock(kind, target)?;
            mark();
            core.send(c, GO, &[])?;
            epoch.accumulate(target, 48, &mine, Op::Sum)?;
            epoch.compare_and_swap(target, 41, 0u64, 1)?;
            epoch.get(target, 0, &mut got)?;
            work(&win, me, 3 + a)?;
            epoch.unlock()?;
            mark();
        } else if me == c {
            core.recv(b, GO, &mut [])?;
            let epoch = win.lock(LockKind::Exclusive, target)?;
            mark();
            epoch.put(target, 56, &mine)?;
            epoch.unlock()?;
            mark();
        }
    }

    // Every handover is over before lock_all could meet one of them (which of the two
    // came first would be the host's doing).
    core.barrier()?;
    // lock_all: rank 0 waits for the last rank's exclusive release of its left, then
    // the last rank's exclusive lock of itself waits for rank 0's unlock_all.
    let last = n - 1;
    if me == last {
        let epoch = win.lock(LockKind::Exclusive, left)?;
        core.send(0, GO, &[])?;
        work(&win, me, 7)?;
        epoch.unlock()?;
        core.recv(0, GO, &mut [])?;
        let epoch = win.lock(LockKind::Exclusive, me)?;
        mark();
        epoch.put(me, 56, &mine)?;
        epoch.unlock()?;
    } else if me == 0 {
        core.recv(last, GO, &mut [])?;
        let all = win.lock_all()?;
        mark();
        core.send(last, GO, &[])?;
        for target in 0..n {
            all.get(target, 40, &mut got[..1])?;
        }
        work(&win, me, 9)?;
        all.unlock_all()?;
        mark();
    }
    core.barrier()?;
    win.free()?;
    mark();
    let text: Vec<String> = marks.iter().map(u64::to_string).collect();
    std::fs::write(marks_file(std::os::unix::process::parent_id(), me), text.join(" "))?;
    Ok(())
}

/// The `rma_link` role, on two ranks: rank 0 reaches rank 1's part with every kind of
/// operation, uncontended, after a fence that costs each rank one link on two nodes;
/// on two nodes, each of its 8 round trips (lock, get,
/// fetch-and-add, compare-and-swap, unlock, lock_all's entry to rank 1's node, get,
/// unlock_all's exit there) crosses the link both ways, and nothing else holds it back
/// (the put is one-way, and the unlock that follows it completes it).
pub fn rma_link(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let win = core.window::<u64>(LEN, Placement::Dram)?;
    // Both arrive together; each learns of the other's arrival a link later.
    win.fence()?;
    if core.rank() == 0 {
        let mut got = [0u64; 1];
        let epoch = win.lock(LockKind::Exclusive, 1)?;
        epoch.put(1, 0, &[7])?;
        epoch.get(1, 0, &mut got)?;
        epoch.fetch_add(1, 1, 1u64)?;
        epoch.compare_and_swap(1, 2, 0u64, 1)?;
        epoch.unlock()?;
        let all = win.lock_all()?;
        all.get(1, 0, &mut got)?;
        all.unlock_all()?;
    }
    core.barrier()?;
    win.free()?;
    Ok(())
}
