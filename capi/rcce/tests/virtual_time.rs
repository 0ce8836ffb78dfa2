//! RCCE programs in virtual time (`rccerun -clock`), checked against the model itself:
//! times reproducible to the picosecond whatever the wait policy, the pinning or the
//! host's load; latency that grows with mesh hops exactly as the chip description
//! says; a halved tile frequency that doubles compute; RCCE's barrier at the period
//! the model's recurrence predicts; a trace with a track per UE. Compute is not charged
//! (the chip's `compute.source = "none"`) where a figure must be exact.

mod harness;

use sccemu_benches::hog::Hog;
use std::path::{Path, PathBuf};

use harness::{build, build_dir, build_source, rccerun, text};
use sccemu::timing::Chip;

/// A chip file: the SCC with compute not charged. Written once: tests run in parallel,
/// and a rewrite caught half-way would be read as the default chip.
fn communication_only() -> PathBuf {
    static FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let file = build_dir().join("communication-only.toml");
        std::fs::write(&file, "[compute]\nsource = \"none\"\n").unwrap();
        file
    })
    .clone()
}

fn pingpong() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c/pingpong.c");
    build_source(&src, "pingpong", &[])
}

/// Runs and checks success; returns (stdout, stderr).
fn run(args: &[&str], exe: &Path, program_args: &[&str]) -> (String, String) {
    let out = rccerun(args, exe, program_args);
    assert!(out.status.success(), "rccerun {args:?}: {}", text(&out));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The per-core lines of rccerun's virtual-time report.
fn report(stderr: &str) -> Vec<String> {
    let lines: Vec<String> = stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("core ") || l.contains("makespan"))
        .map(str::to_owned)
        .collect();
    assert!(!lines.is_empty(), "no virtual-time report: {stderr}");
    lines
}

#[test]
fn ping_pong_times_are_the_same_to_the_picosecond_whatever_the_host_does() {
    let (exe, chip) = (pingpong(), communication_only());
    let chip = chip.to_str().unwrap();
    let base = ["-nue", "2", "-clock", "0.533", "-timing", chip];
    let (figures, stderr) = run(&base, &exe, &["5"]);
    let expected = report(&stderr);
    let variants: [&[&str]; 3] = [&["-wait", "spin"], &["-wait", "block"], &["-pin", "none"]];
    for extra in variants {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (f, e) = run(&args, &exe, &["5"]);
        assert_eq!((&f, report(&e)), (&figures, expected.clone()), "{extra:?}");
    }
    let _hog = Hog::start();
    let (f, e) = run(&base, &exe, &["5"]);
    assert_eq!((&f, report(&e)), (&figures, expected), "beside a CPU hog");
}

/// The one-way µs of the 32-byte message in the ping-pong's output.
fn one_way_32(figures: &str) -> f64 {
    let line = figures.lines().find(|l| l.starts_with("32 ")).expect("a 32-byte line");
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn latency_grows_with_hops_as_the_chip_description_says() {
    let (exe, chip) = (pingpong(), communication_only());
    let chip_path = chip.to_str().unwrap();
    let scc = Chip::default();
    let latency = |peer: u32| {
        let hosts = build_dir().join(format!("hosts-0-{peer}"));
        std::fs::write(&hosts, format!("0\n{peer}\n")).unwrap();
        let args = ["-nue", "2", "-f", hosts.to_str().unwrap(), "-clock", "0.533", "-timing", chip_path];
        one_way_32(&run(&args, &exe, &["5"]).0)
    };
    let (same_tile, one_hop, far) = (latency(1), latency(2), latency(47));
    // One way, three operations cross the mesh: the sender's `sent` flag, the
    // receiver's read of the line, and its `ready` flag; each 2 x hop cycles a hop.
    let extra = |hops: u64| scc.mesh_ps(3 * 2 * u64::from(scc.mpb.hop_mesh_cycles) * hops) as f64 / 1e6;
    let hops = |core: u32| Chip::hops(scc.tile_of(0), scc.tile_of(core));
    assert!(same_tile < one_hop && one_hop < far, "{same_tile} {one_hop} {far}");
    for (got, core) in [(one_hop, 2), (far, 47)] {
        let want = same_tile + extra(hops(core));
        assert!((got - want).abs() < 0.0015, "pair (0,{core}): {got} µs, model {want} µs");
    }
}

#[test]
fn halving_a_tiles_frequency_doubles_its_compute() {
    let exe = build("t_vfreq", &[]);
    let (out, _) = run(&["-nue", "2", "-clock", "0.533"], &exe, &[]);
    let ratio: f64 = out.lines().find_map(|l| l.strip_prefix("ratio ")).expect("a ratio").parse().unwrap();
    // Virtual seconds per host CPU second: the library's reading of CPU time and the
    // program's own differ only by the few microseconds of the calls around the loop.
    assert!(
        (1.95..2.05).contains(&ratio),
        "a CPU second at half the frequency was charged {ratio} times as much"
    );
}

/// RCCE's barrier as the model times it (see `rcce::vtime`), over every UE placed on
/// core `rank`: the period of the recurrence once it settles, in picoseconds.
fn barrier_period(ues: u32) -> u64 {
    let scc = Chip::default();
    let d = scc.clocks.divider;
    let call = scc.core_ps(u64::from(scc.ops.call_core_cycles), d);
    let line = |a: u32, b: u32| scc.mpb_line_ps(scc.tile_of(a), scc.tile_of(b), d);
    let (mut root, mut member) = (0u64, vec![0u64; ues as usize]);
    let mut periods = Vec::new();
    for _ in 0..60 {
        let before = root;
        // Members: the call, then their gather flag in their own MPB.
        let gather: Vec<u64> = (0..ues).map(|m| member[m as usize] + call + line(m, m)).collect();
        // The root reads every gather flag, then writes every release flag.
        let mut t = root + call;
        for m in 1..ues {
            t = t.max(gather[m as usize]) + line(0, m);
        }
        let mut release = vec![0u64; ues as usize];
        for m in 1..ues {
            t += line(0, m);
            release[m as usize] = t;
        }
        root = t;
        for m in 1..ues as usize {
            member[m] = gather[m].max(release[m]) + line(m as u32, m as u32);
        }
        periods.push(root - before);
    }
    let settled = periods[periods.len() - 1];
    assert_eq!(periods[periods.len() - 2], settled, "the recurrence settles");
    settled
}

#[test]
fn a_48_ue_barrier_costs_what_the_model_predicts() {
    let (exe, chip) = (build("t_vbarrier", &[]), communication_only());
    let loop_ps = |rounds: &str| -> u64 {
        let (out, _) =
            run(&["-nue", "48", "-clock", "0.533", "-timing", chip.to_str().unwrap()], &exe, &[rounds]);
        out.lines().find_map(|l| l.strip_prefix("barrier_ps ")).expect("barrier_ps").parse().unwrap()
    };
    let (short, long) = (loop_ps("10"), loop_ps("30"));
    let measured = (long - short) as f64 / 20.0;
    let model = barrier_period(48) as f64;
    assert!((measured - model).abs() <= 2.0, "48-UE barrier: {measured} ps a round, model {model} ps");
}

#[test]
fn a_trace_has_a_track_per_ue_with_sends_receives_and_flows() {
    let exe = pingpong();
    let trace = build_dir().join("pingpong-trace.json");
    let _ = std::fs::remove_file(&trace);
    run(&["-nue", "2", "-clock", "0.533", "-trace", trace.to_str().unwrap()], &exe, &["2"]);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    for (tid, cat) in [(0, "send"), (0, "recv"), (1, "send"), (1, "recv"), (0, "compute")] {
        assert!(
            events.iter().any(|e| e["tid"] == tid && e["cat"] == cat && e["ph"] == "X"),
            "no {cat} slice on core {tid}"
        );
    }
    for ph in ["s", "f"] {
        assert!(events.iter().any(|e| e["ph"] == ph && e["cat"] == "message"), "no flow {ph} event");
    }
    assert!(!build_dir().join("pingpong-trace.json.0").exists(), "parts are merged away");
}
