//! Last one out (`sccemu::protocol::last_out`): three members use a shared structure,
//! each counts itself out once, and the last one reuses the whole structure, which must
//! not race with any member's earlier access.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::last_out::count_out;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::sync::AtomicU32;

const MEMBERS: u32 = 3;

/// The structure: one byte per member, and its `left` counter.
struct Shared {
    bytes: LoomBytes,
    left: AtomicU32,
}

/// Member `me`: writes its own part, then counts out; the last checks every part and
/// reuses the whole structure. Whether it was last.
fn member(s: &Shared, me: u32) -> bool {
    s.bytes.write(me as usize, &[me as u8 + 1]);
    if !count_out(&s.left, MEMBERS) {
        return false;
    }
    let mut all = [0u8; MEMBERS as usize];
    s.bytes.read(0, &mut all);
    assert_eq!(all, [1, 2, 3], "the last member sees every member's writes");
    // Returned and handed to a new owner, who overwrites it all.
    s.bytes.write(0, &[0; MEMBERS as usize]);
    true
}

#[test]
fn exactly_one_member_is_last_and_every_access_happens_before_its_return() {
    loom::model(|| {
        let s = Arc::new(Shared { bytes: LoomBytes::new(MEMBERS as usize), left: AtomicU32::new(0) });
        let others: Vec<_> = (1..MEMBERS)
            .map(|me| {
                let s = s.clone();
                thread::spawn(move || member(&s, me))
            })
            .collect();
        let mut last = u32::from(member(&s, 0));
        for t in others {
            last += u32::from(t.join().unwrap());
        }
        assert_eq!(last, 1, "one member, and only one, is last");
    });
}
