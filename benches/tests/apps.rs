//! The stencil and halo applications over real processes, every version, on 1, 2, 3, 8
//! and 48 cores (48 oversubscribed), with grid sizes the cores do not divide.

use sccemu::{Core, Job};
use sccemu_benches::exchange::Version;
use sccemu_benches::{halo, stencil};

fn stencil_entry(core: &Core, p: stencil::Params) -> Result<stencil::Outcome, String> {
    stencil::run(core, p).map_err(|e| e.to_string())
}

fn check_stencil(cores: u32, rows: usize, cols: usize, steps: u32) {
    for version in Version::ALL {
        let p = stencil::Params { rows, cols, steps, version };
        let outcomes =
            Job::new(cores).run(&p, stencil_entry).unwrap_or_else(|e| panic!("{version:?} on {cores}: {e}"));
        assert!(
            outcomes[0].matches_sequential,
            "{version:?} on {cores} cores differs from the sequential grid"
        );
    }
}

#[test]
fn stencil_matches_sequential_on_1_2_3_and_8_cores() {
    check_stencil(1, 9, 17, 6);
    check_stencil(2, 13, 31, 7);
    check_stencil(3, 10, 20, 9);
    check_stencil(8, 37, 64, 5);
}

#[test]
fn stencil_matches_sequential_on_48_oversubscribed_cores() {
    check_stencil(48, 101, 40, 4);
}

#[test]
fn stencil_refuses_more_cores_than_rows() {
    let p = stencil::Params { rows: 2, cols: 8, steps: 1, version: Version::TwoSided };
    let err = Job::new(3).run(&p, stencil_entry).unwrap_err().to_string();
    assert!(err.contains("cannot give each of 3 cores a row"), "{err}");
}

#[test]
fn the_sequential_automaton_is_not_trivial() {
    let a = stencil::sequential(20, 20, 0);
    let b = stencil::sequential(20, 20, 5);
    assert_ne!(a, b, "steps change the grid");
    assert!(b.iter().any(|&v| v > 0 && v < 1 << 20), "heat spreads from the sources");
}

fn halo_entry(core: &Core, p: halo::Params) -> Result<(Vec<f64>, bool), String> {
    halo::run(core, p).map_err(|e| e.to_string())
}

#[test]
fn halo_exchange_delivers_every_neighbours_bytes() {
    for cores in [1, 2, 3, 8, 48] {
        for version in Version::ALL {
            for bytes in [16, 1000] {
                let p = halo::Params { bytes, iters: 3, reps: 1, warmup: 0, version };
                let results = Job::new(cores)
                    .run(&p, halo_entry)
                    .unwrap_or_else(|e| panic!("{version:?} on {cores}: {e}"));
                assert!(results.iter().all(|(_, intact)| *intact), "{version:?} {bytes} B on {cores} cores");
            }
        }
    }
}
