//! Process groups: a sorted list of distinct ranks.
//!
//! The minimal group that post-start-complete-wait synchronizes over (`MPI_Group`
//! restricted to what RMA needs). Invariant: `ranks` is strictly increasing, so
//! membership is a binary search and two groups with the same members are equal.
//! Ranks are checked against the job size where a group is used, not here.

use std::fmt;

/// A set of ranks, kept sorted and without duplicates.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct Group {
    ranks: Vec<u32>,
}

impl Clone for Group {
    fn clone(&self) -> Group {
        Group { ranks: self.ranks.clone() }
    }

    /// Reuses this group's allocation (an epoch's stored group, every epoch).
    fn clone_from(&mut self, source: &Group) {
        self.ranks.clone_from(&source.ranks);
    }
}

/// Why a group could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupError {
    /// The rank appears twice.
    Duplicate(u32),
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(r) => write!(f, "rank {r} appears twice in the group"),
        }
    }
}

impl std::error::Error for GroupError {}

impl Group {
    /// The group of `ranks`, in any order; a repeated rank is an error.
    pub fn new(ranks: impl IntoIterator<Item = u32>) -> Result<Group, GroupError> {
        let mut ranks: Vec<u32> = ranks.into_iter().collect();
        ranks.sort_unstable();
        if let Some(w) = ranks.windows(2).find(|w| w[0] == w[1]) {
            return Err(GroupError::Duplicate(w[0]));
        }
        Ok(Group { ranks })
    }

    /// The empty group.
    pub fn empty() -> Group {
        Group::default()
    }

    /// Ranks `0..size`.
    pub fn world(size: u32) -> Group {
        Group { ranks: (0..size).collect() }
    }

    /// A single rank.
    pub fn single(rank: u32) -> Group {
        Group { ranks: vec![rank] }
    }

    /// Members in the group.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Whether the group has no members.
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// Whether `rank` is a member.
    pub fn contains(&self, rank: u32) -> bool {
        self.ranks.binary_search(&rank).is_ok()
    }

    /// The members, in increasing order.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// The members, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranks.iter().copied()
    }

    /// The largest member, if any (for range checks against a job size).
    pub fn max(&self) -> Option<u32> {
        self.ranks.last().copied()
    }
}

impl FromIterator<u32> for Group {
    /// Collects ranks, silently dropping duplicates.
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Group {
        let mut ranks: Vec<u32> = iter.into_iter().collect();
        ranks.sort_unstable();
        ranks.dedup();
        Group { ranks }
    }
}

impl From<&[u32]> for Group {
    /// The group of these ranks (duplicates dropped).
    fn from(ranks: &[u32]) -> Group {
        ranks.iter().copied().collect()
    }
}

impl From<Vec<u32>> for Group {
    /// The group of these ranks (duplicates dropped).
    fn from(ranks: Vec<u32>) -> Group {
        ranks.into_iter().collect()
    }
}

impl<const N: usize> From<[u32; N]> for Group {
    /// The group of these ranks (duplicates dropped).
    fn from(ranks: [u32; N]) -> Group {
        ranks.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_distinct() {
        let g = Group::new([5, 1, 3]).unwrap();
        assert_eq!(g.ranks(), &[1, 3, 5]);
        assert!(g.contains(3) && !g.contains(2));
        assert_eq!(Group::new([1, 2, 1]), Err(GroupError::Duplicate(1)));
        assert_eq!([4, 4, 2].into_iter().collect::<Group>().ranks(), &[2, 4]);
        assert_eq!(Group::from([3, 1]), Group::from(&[1u32, 3][..]));
    }
}
