//! sccrun as a user runs it: usage errors, exit statuses, output tagging, fail-stop and
//! signal forwarding, with real processes.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn sccrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sccrun")).args(args).output().expect("sccrun runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_arguments_are_usage_errors() {
    for (args, expect) in [
        (&["-n", "0", "--", "true"][..], "0 is not in 1..=16384"),
        (&["-n", "5000", "--", "true"], "core count 5000 is outside 1..=4096"),
        (&["-n", "20000", "--", "true"], "20000 is not in"),
        (&["-n", "2", "--", "/no/such/program"], "not found or not executable"),
        (&["-n", "3", "--pin", "0,0", "--", "true"], "pin list names 2 CPUs for 3 ranks"),
        (&["-n", "3", "--pin", "diagonal", "--", "true"], "not none, compact, scatter"),
        (&["-n", "49", "--mesh", "6x4x2", "--", "true"], "49 cores do not fit on a 6x4x2 mesh"),
        (&["-n", "2", "--mpb", "100", "--", "true"], "MPB size 100"),
        (&["-n", "2"], "required arguments were not provided"),
        (&["-n", "2", "--nodes", "0", "--", "true"], "0 is not in 1.."),
        (&["-n", "2", "--nodes", "3", "--", "true"], "2 ranks cannot be split over 3 nodes"),
    ] {
        let out = sccrun(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
}

#[cfg(not(feature = "multinode"))]
#[test]
fn several_nodes_need_the_multinode_feature() {
    let out = sccrun(&["-n", "2", "--nodes", "2", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--features multinode"), "{}", stderr(&out));
    // One node is the ordinary launch, with or without the feature.
    assert!(sccrun(&["-n", "2", "--nodes", "1", "--", "true"]).status.success());
}

#[test]
fn exit_status_is_zero_only_if_every_rank_exits_zero() {
    assert!(sccrun(&["-n", "4", "--", "true"]).status.success());
    // Otherwise it is the first failure's own, as mpirun's.
    let out = sccrun(&["-n", "4", "--", "sh", "-c", r#"[ "$SCCEMU_RANK" != 2 ] || exit 3"#]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("sccrun: rank 2 exited with status 3"), "{}", stderr(&out));
}

#[test]
fn every_rank_gets_its_rank_size_and_segment_fd() {
    let out = sccrun(&["-n", "3", "--", "sh", "-c", r#"echo "$SCCEMU_RANK/$SCCEMU_SIZE fd=$SCCEMU_FD""#]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 3);
    for (rank, line) in lines.iter().enumerate() {
        assert!(line.starts_with(&format!("{rank}/3 fd=")), "{line}");
    }
}

#[test]
fn tag_output_prefixes_every_line_with_the_rank() {
    let out = sccrun(&["-n", "3", "--tag-output", "--", "sh", "-c", "echo out; echo err >&2; echo two"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for rank in 0..3 {
        assert!(stdout.contains(&format!("[{rank}] out")), "{stdout}");
        assert!(stdout.contains(&format!("[{rank}] two")), "{stdout}");
        assert!(stderr(&out).contains(&format!("[{rank}] err")), "{}", stderr(&out));
    }
    assert!(stdout.lines().all(|l| l.starts_with('[')), "{stdout}");
}

#[test]
fn pinning_puts_each_rank_on_its_listed_cpu() {
    let out =
        sccrun(&["-n", "2", "--pin", "0,0", "--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("Cpus_allowed_list:\t0\n").count(), 2, "{stdout}");
}

/// A `sleep` argument unique to this test process, so that another clone's test run
/// on the same machine is not counted.
fn marker(seconds: u32) -> String {
    format!("{seconds}.{}", std::process::id())
}

/// Live processes whose command line contains `marker`.
fn survivors(marker: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmdline| cmdline.split(|&b| b == 0).any(|arg| arg == marker.as_bytes()))
        .count()
}

#[test]
fn a_killed_rank_ends_the_job_with_a_diagnosis_and_no_orphans() {
    // Ranks other than 1 would sleep for a minute; the abort must end them within the
    // launcher's grace period.
    let sleep = marker(61);
    let script = format!(r#"[ "$SCCEMU_RANK" = 1 ] && kill -9 $$; exec sleep {sleep}"#);
    let started = Instant::now();
    let out = sccrun(&["-n", "4", "--", "sh", "-c", &script]);
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(128 + 9));
    assert!(stderr(&out).contains("sccrun: rank 1 killed by SIGKILL"), "{}", stderr(&out));
    assert_eq!(survivors(&sleep), 0, "ranks outlived their job");
}

#[test]
fn sigint_is_forwarded_and_everything_is_reaped() {
    let sleep = marker(62);
    let child = Command::new(env!("CARGO_BIN_EXE_sccrun"))
        .args(["-n", "3", "--", "sleep", &sleep])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the ranks run (sccrun catches the signal from before it starts them, so this
    // only makes the test about forwarding to running ranks).
    let deadline = Instant::now() + Duration::from_secs(20);
    while survivors(&sleep) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT)
        .unwrap();
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted by SIGINT"), "{}", stderr(&out));
    assert_eq!(survivors(&sleep), 0);
}
