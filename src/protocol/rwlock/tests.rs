//! Unit tests of the ticket reader-writer lock (`super`): counters through their wrap,
//! the corruption a writer's turn detects, and the handoff hints. The loom model of the
//! protocol is `loom-tests/tests/rwlock.rs`.

use super::*;
use crate::protocol::abort::JobControl;
use shm_layout::WaitPolicy;

fn at(users: u32, read: u32, write: u32) -> TicketRwLock {
    let word = u64::from(users) << USERS_SHIFT | u64::from(write) << WRITE_SHIFT | u64::from(read);
    TicketRwLock { word: AtomicU64::new(word), cpus: Default::default() }
}

/// Readers and writers through the wrap of every counter: no counter may carry into
/// another (nor into `STICKY`), and each lock must be granted at once (a wrong counter
/// would make it wait forever).
#[test]
fn counters_wrap() {
    let start = MASK - 1;
    let lock = at(start, start, start);
    let (all, bell, home, job) = (AllLock::new(), Doorbell::new(), Doorbell::new(), JobControl::new());
    let waiter = Waiter::new(WaitPolicy::Spin, &job);
    for _ in 0..3 {
        lock.lock_shared(&waiter, &bell).unwrap();
        lock.lock_shared(&waiter, &bell).unwrap();
        lock.unlock_shared(&bell);
        lock.unlock_shared(&bell);
        let hold = lock.lock_exclusive(0, &waiter, &bell, &all, &home).unwrap();
        lock.unlock_exclusive(hold, &bell, &all, &home, None);
    }
    assert_eq!(lock.queued(), 0);
    assert!(lock.is_sticky(), "the first exclusive hold registered the target");
    let word = lock.word.load(Ordering::Relaxed);
    let end = start.wrapping_add(9) & MASK;
    assert_eq!((users_of(word), read_of(word), write_of(word)), (end, end, end));
    assert_eq!(word & CARRY, 0);
    // A reader that finds a writer in takes the slow path (ticket, wait, advance)
    // across the wrap of `users`.
    let lock = at(MASK, MASK, MASK);
    let hold = lock.lock_exclusive(1, &waiter, &bell, &all, &home).unwrap();
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            lock.lock_shared(&Waiter::new(WaitPolicy::Spin, &job), &bell).unwrap();
            lock.unlock_shared(&bell);
        });
        while lock.queued() < 2 {
            std::thread::yield_now();
        }
        lock.unlock_exclusive(hold, &bell, &all, &home, None);
        reader.join().unwrap();
    });
    let word = lock.word.load(Ordering::Relaxed);
    assert_eq!((users_of(word), read_of(word), write_of(word), word & CARRY), (1, 1, 1, 0));
}

/// A writer whose turn comes on a word with `read` behind `write` (overwritten: a
/// writer's turn has them equal) reports the corruption instead of releasing a
/// word it would corrupt further; the word is left as found, but for its ticket.
#[test]
fn a_writer_turn_with_read_behind_is_corruption() {
    let lock = at(5, 3, 5);
    let (all, bell, home, job) = (AllLock::new(), Doorbell::new(), Doorbell::new(), JobControl::new());
    let waiter = Waiter::new(WaitPolicy::Spin, &job);
    let got = lock.lock_exclusive(0, &waiter, &bell, &all, &home).map(|_| ());
    assert_eq!(got, Err(JobAborted { rank: None, cause: AbortCause::Corrupted }));
    let word = lock.word.load(Ordering::Relaxed);
    assert_eq!((users_of(word), read_of(word), write_of(word)), (6, 3, 5));
}

/// The handoff hints: a waiter spins only while every ticket ahead of it is known
/// to be on another CPU, and a slot reused by a later ticket reads as unknown.
#[test]
fn handoff_hints() {
    let lock = TicketRwLock::new();
    let (a, b) = (Some(0), Some(1));
    for (t, cpu) in [(0, a), (1, b), (2, b), (3, None)] {
        lock.note_cpu(t, cpu);
    }
    assert_eq!([lock.cpu_of(0), lock.cpu_of(1), lock.cpu_of(3)], [a, b, None]);
    assert!(lock.ahead_on_other_cpus(0, 1, b), "only ticket 0 ahead, on the other CPU");
    assert!(!lock.ahead_on_other_cpus(0, 2, b), "ticket 1 ahead shares our CPU");
    assert!(lock.ahead_on_other_cpus(1, 2, a));
    assert!(!lock.ahead_on_other_cpus(0, 1, None), "our own CPU unknown");
    assert!(!lock.ahead_on_other_cpus(3, 4, a), "ticket 3's CPU unknown");
    for t in 4..=CPU_SLOTS as u32 {
        lock.note_cpu(t, b);
    }
    assert_eq!(lock.cpu_of(0), None, "slot 0 now holds ticket {CPU_SLOTS}");
    assert_eq!(lock.cpu_of(CPU_SLOTS as u32), b);
    assert!(!lock.ahead_on_other_cpus(0, CPU_SLOTS as u32 + 1, Some(2)), "more tickets ahead than slots");
}
