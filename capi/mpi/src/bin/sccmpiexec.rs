//! `sccmpiexec`: `mpiexec` spellings for sccemu, so that scripts written for MPI run
//! MPI programs as sccemu jobs.
//!
//! `sccmpiexec -n N [--check] program [args...]` (also `-np N`, `-n=N`, `--np N`)
//! starts N cores of `program` under sccemu's launcher, as `sccrun -n N` does. A
//! rank's death aborts the job; the first failing rank's exit code (or 128 + its
//! signal) becomes sccmpiexec's.

use std::ffi::OsString;
use std::process::ExitCode;

use sccemu::job::launcher::{CHECK_VAR, Launch, find_program};

const USAGE: &str = "usage: sccmpiexec -n N [--check] program [args...]";

struct Args {
    ranks: u32,
    check: bool,
    program: OsString,
    rest: Vec<OsString>,
}

fn count(v: &str) -> Result<u32, String> {
    v.parse::<u32>().ok().filter(|&n| n > 0).ok_or(format!("-n {v}: not a process count"))
}

fn parse(mut argv: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let (mut ranks, mut check) = (None, false);
    loop {
        let arg = argv.next().ok_or(USAGE)?;
        match arg.to_str() {
            Some("-n" | "-np" | "--n" | "--np" | "-c") => {
                let v = argv.next().and_then(|v| v.into_string().ok()).ok_or("-n needs a value")?;
                ranks = Some(count(&v)?);
            }
            Some(a) if a.starts_with("-n=") || a.starts_with("-np=") || a.starts_with("--np=") => {
                ranks = Some(count(a.split_once('=').map_or("", |(_, v)| v))?);
            }
            Some("--check" | "-check") => check = true,
            Some("-h" | "--help") => return Err(USAGE.into()),
            Some(flag) if flag.starts_with('-') => return Err(format!("unknown option {flag}\n{USAGE}")),
            _ => return Ok(Args { ranks: ranks.unwrap_or(1), check, program: arg, rest: argv.collect() }),
        }
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args_os().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sccmpiexec: {e}");
            return ExitCode::from(2);
        }
    };
    let program = match find_program(std::path::Path::new(&args.program)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sccmpiexec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut config = sccemu::Config::new(args.ranks);
    config.wait = sccemu::job::resolve_wait(args.ranks) as u32;
    let mut launch = Launch::new(config, program);
    launch.args = args.rest;
    if args.check {
        launch.env.push((CHECK_VAR.into(), "1".into()));
    }
    let report = match launch.spawn() {
        Ok(running) => running.wait(),
        Err(e) => {
            eprintln!("sccmpiexec: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(why) = report.diagnosis() {
        eprintln!("sccmpiexec: {why}");
    }
    ExitCode::from(report.exit_code().clamp(0, 255) as u8)
}
