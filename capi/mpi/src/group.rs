//! Groups: ordered sets of processes, held as world ranks.
//!
//! Groups are local objects (no communication). `MPI_GROUP_EMPTY` is predefined; the
//! group of a communicator, and groups built from it, are user objects to free.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use sccemu::sync::{AtomicU64, Ordering};

use crate::error::{MpiResult, class, fail};
use crate::handles::Table;

/// `MPI_GROUP_NULL`: the group table's base.
pub const GROUP_NULL: c_int = 0x4800_0000;
/// `MPI_GROUP_EMPTY`.
pub const GROUP_EMPTY: c_int = GROUP_NULL | 1;

/// World ranks, by rank in the group.
pub type Group = Arc<Vec<u32>>;

static GROUPS: Mutex<Table<Group>> = Mutex::new(Table::new(GROUP_NULL));

/// Groups freed so far. A group never changes, and its handle names another group only
/// after a free; so a copy of what a handle named stays right while this count has
/// not moved (see [`frees`]).
static FREES: AtomicU64 = AtomicU64::new(0);

/// How many groups have been freed: a cache of what group handles name holds while
/// this is unchanged (the epochs' groups, `crate::winsync`).
#[inline]
pub fn frees() -> u64 {
    // Relaxed: a handle reaches another thread only through the program's own
    // synchronization, which orders this free's increment before that thread's load
    // (write-read coherence), so a thread that may use a new group under an old handle
    // sees the new count.
    FREES.load(Ordering::Relaxed)
}

fn groups() -> MutexGuard<'static, Table<Group>> {
    let mut t = GROUPS.lock().unwrap_or_else(|p| p.into_inner());
    if !t.is_predefined(GROUP_EMPTY) {
        t.predefine(Arc::new(Vec::new()));
    }
    t
}

/// The group `handle` names.
pub fn lookup(handle: c_int) -> MpiResult<Group> {
    if handle == GROUP_NULL {
        return fail(class::GROUP, "MPI_GROUP_NULL is not a group");
    }
    match groups().get(handle) {
        Some(g) => Ok(g.clone()),
        None => fail(class::GROUP, format!("{handle:#x} is not a group handle")),
    }
}

/// A new group handle.
pub fn insert(ranks: Vec<u32>) -> c_int {
    groups().insert(Arc::new(ranks))
}

/// Frees a user group.
pub fn free(handle: c_int) -> MpiResult<()> {
    lookup(handle)?;
    let mut t = groups();
    if t.is_predefined(handle) {
        return fail(class::GROUP, "a predefined group cannot be freed");
    }
    let freed =
        t.remove(handle).map(drop).ok_or_else(|| crate::error::MpiError::new(class::GROUP, "already freed"));
    // Relaxed: see `frees`; the table's lock orders the increment with the removal.
    FREES.fetch_add(1, Ordering::Relaxed);
    freed
}

/// The members of `group` at `ranks` (`MPI_Group_incl`): distinct, in range.
pub fn incl(group: &[u32], ranks: &[c_int]) -> MpiResult<Vec<u32>> {
    let mut seen = vec![false; group.len()];
    ranks
        .iter()
        .map(|&r| match usize::try_from(r).ok().filter(|&r| r < group.len()) {
            Some(r) if !std::mem::replace(&mut seen[r], true) => Ok(group[r]),
            Some(_) => fail(class::RANK, format!("rank {r} is listed twice")),
            None => fail(class::RANK, format!("rank {r} is not in a group of {}", group.len())),
        })
        .collect()
}

/// The members of `group` not at `ranks` (`MPI_Group_excl`), in group order.
pub fn excl(group: &[u32], ranks: &[c_int]) -> MpiResult<Vec<u32>> {
    let listed = incl(group, ranks)?;
    Ok(group.iter().copied().filter(|w| !listed.contains(w)).collect())
}

/// `MPI_Group_compare`'s answer: 0 ident, 2 similar, 3 unequal.
pub fn compare(a: &[u32], b: &[u32]) -> c_int {
    if a == b {
        0
    } else {
        let (mut x, mut y) = (a.to_vec(), b.to_vec());
        x.sort_unstable();
        y.sort_unstable();
        if x == y { 2 } else { 3 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incl_and_excl_check_their_ranks() {
        let g = [10, 11, 12, 13];
        assert_eq!(incl(&g, &[3, 1]).unwrap(), vec![13, 11]);
        assert_eq!(excl(&g, &[3, 1]).unwrap(), vec![10, 12]);
        assert_eq!(incl(&g, &[4]).unwrap_err().class, class::RANK);
        assert_eq!(incl(&g, &[1, 1]).unwrap_err().class, class::RANK);
        assert_eq!(compare(&g, &[13, 12, 11, 10]), 2);
    }
}
