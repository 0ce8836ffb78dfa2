//! The hints a window takes when it is created, and reports (`MPI_Win_get_info`).
//!
//! The accumulate strategy comes from the info key `sccemu_accumulate_strategy`
//! (`atomic`, the default; `caller`, whole-part locks; `caller:GRANULARITY`; `owner`), or
//! else from `$SCCEMU_ACCUMULATE_STRATEGY` (the same values, the same in every process
//! since the launcher passes its environment on). `sccemu_placement` (`dram`, `mpb`)
//! places `MPI_Win_allocate`'s parts. `accumulate_ordering` and `accumulate_ops` are
//! accepted as MPI defines them: every strategy orders and is atomic beyond what they
//! ask.

use std::ffi::c_int;

use sccemu::{AccStrategy, Placement};

use crate::error::{MpiResult, class, fail};

/// What a window created with `info` uses: its accumulate strategy, its placement, and
/// the hints it reports.
pub fn read(info: c_int) -> MpiResult<(AccStrategy, Placement, crate::info::Pairs)> {
    let (strategy, placement) = (strategy(info)?, placement(info)?);
    Ok((strategy, placement, hints(info, strategy, placement)?))
}

/// The variable that sets the accumulate strategy of windows whose info does not
/// (`sccemu_accumulate_strategy`'s values), so that a program can be run under another
/// strategy unchanged.
const STRATEGY_VAR: &str = "SCCEMU_ACCUMULATE_STRATEGY";

/// The accumulate strategy an info asks for: its `sccemu_accumulate_strategy`, else
/// [`STRATEGY_VAR`], else `atomic`.
fn strategy(info: c_int) -> MpiResult<AccStrategy> {
    let (value, from) = match crate::info::get(info, "sccemu_accumulate_strategy")? {
        Some(value) => (value, "the info key sccemu_accumulate_strategy".to_owned()),
        None => match std::env::var(STRATEGY_VAR) {
            Ok(value) => (value, format!("${STRATEGY_VAR}")),
            Err(_) => return Ok(AccStrategy::Atomic),
        },
    };
    Ok(match value.as_str() {
        "atomic" => AccStrategy::Atomic,
        "caller" => AccStrategy::CallerComputes { granularity: usize::MAX },
        "owner" => AccStrategy::OwnerComputes,
        other => match other.strip_prefix("caller:").and_then(|g| g.parse::<usize>().ok()) {
            Some(granularity) if granularity > 0 => AccStrategy::CallerComputes { granularity },
            _ => {
                return fail(
                    class::INFO_VALUE,
                    format!("{from} is {other:?}: use atomic, caller, caller:BYTES or owner"),
                );
            }
        },
    })
}

/// Where `MPI_Win_allocate` puts the parts (`sccemu_placement` = `dram` or `mpb`).
fn placement(info: c_int) -> MpiResult<Placement> {
    match crate::info::get(info, "sccemu_placement")?.as_deref() {
        None | Some("dram") => Ok(Placement::Dram),
        Some("mpb") => Ok(Placement::Mpb),
        Some(other) => fail(class::INFO_VALUE, format!("sccemu_placement={other:?}: use dram or mpb")),
    }
}

/// The hints a window created with `info` uses: the sccemu keys with the values in
/// effect (defaults included), and MPI's `accumulate_ordering` and `accumulate_ops`
/// as given or defaulted (every strategy orders and is atomic beyond what they ask, so
/// any value is honoured).
fn hints(info: c_int, strategy: AccStrategy, placement: Placement) -> MpiResult<crate::info::Pairs> {
    let strategy = match strategy {
        AccStrategy::Atomic => "atomic".to_owned(),
        AccStrategy::CallerComputes { granularity: usize::MAX } => "caller".to_owned(),
        AccStrategy::CallerComputes { granularity } => format!("caller:{granularity}"),
        AccStrategy::OwnerComputes => "owner".to_owned(),
    };
    let placement = if placement == Placement::Mpb { "mpb" } else { "dram" };
    let given = |key: &str, default: &str| -> MpiResult<(String, String)> {
        Ok((key.to_owned(), crate::info::get(info, key)?.unwrap_or_else(|| default.to_owned())))
    };
    Ok(vec![
        ("sccemu_accumulate_strategy".to_owned(), strategy),
        ("sccemu_placement".to_owned(), placement.to_owned()),
        given("accumulate_ordering", "rar,raw,war,waw")?,
        given("accumulate_ops", "same_op_no_op")?,
    ])
}
