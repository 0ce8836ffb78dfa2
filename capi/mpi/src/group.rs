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

/// `MPI_Group_union`: the members of `a`, then those of `b` not in `a`, in order.
pub fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().chain(b.iter().copied().filter(|w| !a.contains(w))).collect()
}

/// `MPI_Group_intersection` (`keep`) and `MPI_Group_difference` (not `keep`): the
/// members of `a` that are (are not) in `b`, in `a`'s order.
pub fn filter(a: &[u32], b: &[u32], keep: bool) -> Vec<u32> {
    a.iter().copied().filter(|w| b.contains(w) == keep).collect()
}

/// The ranks that `MPI_Group_range_incl`'s triplets (first, last, stride) name in a
/// group of `size`: `first`, `first + stride`, ... as far as `last`, triplet by
/// triplet. A zero stride, or an end outside the group, is an error; repeated ranks
/// are left for [`incl`] to refuse.
pub fn range_ranks(size: usize, ranges: &[[c_int; 3]]) -> MpiResult<Vec<c_int>> {
    let mut ranks = Vec::new();
    for &[first, last, stride] in ranges {
        if stride == 0 {
            return fail(class::ARG, format!("range ({first}, {last}, {stride}) has stride 0"));
        }
        if let Some(&r) = [first, last].iter().find(|&&r| usize::try_from(r).map_or(true, |r| r >= size)) {
            return fail(
                class::RANK,
                format!("rank {r} of range ({first}, {last}, {stride}) is not in a group of {size}"),
            );
        }
        let steps = (i64::from(last) - i64::from(first)).div_euclid(i64::from(stride));
        ranks.extend((0..=steps).map(|k| (i64::from(first) + k * i64::from(stride)) as c_int));
    }
    Ok(ranks)
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

    #[test]
    fn set_operations_keep_the_first_groups_order() {
        let (a, b) = ([5, 1, 3], [3, 7, 5, 9]);
        assert_eq!(union(&a, &b), vec![5, 1, 3, 7, 9]);
        assert_eq!(filter(&a, &b, true), vec![5, 3]);
        assert_eq!(filter(&a, &b, false), vec![1]);
        assert!(filter(&a, &a, false).is_empty());
    }

    #[test]
    fn ranges_run_both_ways_and_check_their_ends() {
        assert_eq!(range_ranks(10, &[[0, 9, 4], [7, 5, -1]]).unwrap(), vec![0, 4, 8, 7, 6, 5]);
        assert_eq!(range_ranks(10, &[[3, 3, 1], [5, 2, 1]]).unwrap(), vec![3]);
        assert_eq!(range_ranks(10, &[[0, 10, 1]]).unwrap_err().class, class::RANK);
        assert_eq!(range_ranks(10, &[[0, 4, 0]]).unwrap_err().class, class::ARG);
    }
}
