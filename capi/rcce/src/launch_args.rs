//! The arguments `rccerun` puts in front of a program's own:
//! `prog NP GHz id_0 ... id_{NP-1} args...`.
//!
//! `RCCE_init` consumes them and writes `argv[0]` back in front of the rest. A UE's
//! rank is the place of its own core ID among the sorted IDs, so a host file in any
//! order gives the same ranks; the launcher placed rank `r` on the `r`-th smallest ID.

/// What the launcher said.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchArgs {
    /// The number of UEs.
    pub ues: usize,
    /// The core clock in GHz.
    pub ghz: f64,
    /// The core IDs, in host-file order.
    pub ids: Vec<u32>,
}

impl LaunchArgs {
    /// Parses `args` (without `argv[0]`); `None` unless they start with a UE count that
    /// matches `size`, a clock and that many core IDs.
    pub fn parse(args: &[&str], size: u32) -> Option<LaunchArgs> {
        let ues: usize = args.first()?.parse().ok()?;
        let ghz: f64 = args.get(1)?.parse().ok()?;
        if ues != size as usize
            || args.len() < 2 + ues
            || ghz.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            return None;
        }
        let ids = args[2..2 + ues].iter().map(|a| a.parse().ok()).collect::<Option<Vec<u32>>>()?;
        Some(LaunchArgs { ues, ghz, ids })
    }

    /// Arguments consumed after `argv[0]`.
    pub fn consumed(&self) -> usize {
        2 + self.ues
    }

    /// The rank of the UE on core `id`: its place among the sorted IDs.
    pub fn rank_of(&self, id: u32) -> Option<u32> {
        let mut sorted = self.ids.clone();
        sorted.sort_unstable();
        sorted.iter().position(|&i| i == id).map(|r| r as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_launcher_prefix() {
        let a = LaunchArgs::parse(&["3", "0.533", "47", "0", "13", "user", "1"], 3).unwrap();
        assert_eq!((a.ues, a.ghz, a.consumed()), (3, 0.533, 5));
        assert_eq!(
            [a.rank_of(0), a.rank_of(13), a.rank_of(47), a.rank_of(2)],
            [Some(0), Some(1), Some(2), None]
        );
    }

    #[test]
    fn anything_else_is_not_a_prefix() {
        assert_eq!(LaunchArgs::parse(&["4", "0.533", "0", "1"], 4), None, "too few IDs");
        assert_eq!(LaunchArgs::parse(&["2", "0.533", "0", "1"], 3), None, "wrong UE count");
        assert_eq!(LaunchArgs::parse(&["2", "fast", "0", "1"], 2), None);
        assert_eq!(LaunchArgs::parse(&[], 2), None);
    }
}
