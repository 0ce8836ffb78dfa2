//! `sccmpiexec`: `mpiexec` spellings for sccemu, so that scripts written for MPI run
//! MPI programs as sccemu jobs.
//!
//! `sccmpiexec -n N [--check] [--channel srb|perpeer] [--wait auto|spin|block]
//! [--timing scc[=FILE] [--trace FILE]] program [args...]` (also `-np N`, `-n=N`,
//! `--np N`, `--channel=K`, `--wait=W`, `--timing=scc`, `--trace=FILE`) starts N cores
//! of `program` under sccemu's launcher, as `sccrun -n N` does: `--channel` picks the
//! two-sided channel protocol (default `srb`) and `--wait` how blocked calls wait
//! (default `auto`: block when there are more cores than CPUs, else adaptive);
//! `--timing` runs the job in virtual time (`MPI_Wtime` then reads virtual seconds,
//! and each core's virtual time is printed at the end) and `--trace` writes its Chrome
//! trace; all with the meanings `sccrun` gives them. A rank's death aborts the job, and the
//! first failure sets sccmpiexec's exit code, as `mpiexec` does: `MPI_Abort`'s error
//! code, a rank's own non-zero exit status, or 128 + the signal that killed it (1 for
//! any other failure, and whenever that number would read as success). Bad options
//! exit 2.

use std::ffi::OsString;
use std::process::ExitCode;

use sccemu::job::launcher::{CHECK_VAR, Launch, find_program};
use sccemu::job::vtime::VirtualTime;
use sccemu::{ChannelKind, WaitPolicy};

const USAGE: &str = "usage: sccmpiexec -n N [--check] [--channel srb|perpeer] [--wait auto|spin|block] \
                     [--timing scc[=FILE] [--trace FILE]] program [args...]";

/// `--wait`: `None` is `auto`, resolved once the core count is known.
type Wait = Option<WaitPolicy>;

struct Args {
    ranks: u32,
    check: bool,
    channel: ChannelKind,
    wait: Wait,
    timing: Option<VirtualTime>,
    program: OsString,
    rest: Vec<OsString>,
}

fn count(v: &str) -> Result<u32, String> {
    v.parse::<u32>().ok().filter(|&n| n > 0).ok_or(format!("-n {v}: not a process count"))
}

fn channel(v: &str) -> Result<ChannelKind, String> {
    v.parse::<ChannelKind>().map_err(|_| format!("--channel {v}: not srb or perpeer"))
}

fn wait(v: &str) -> Result<Wait, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(None),
        "spin" => Ok(Some(WaitPolicy::Spin)),
        "block" => Ok(Some(WaitPolicy::Block)),
        _ => Err(format!("--wait {v}: not auto, spin or block")),
    }
}

fn parse(mut argv: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let (mut ranks, mut check, mut kind, mut policy) = (None, false, ChannelKind::Srb, None);
    let (mut timing, mut trace) = (None, None);
    let program = loop {
        let arg = argv.next().ok_or(USAGE)?;
        let Some(a) = arg.to_str().filter(|a| a.starts_with('-')) else { break arg };
        // `--opt=value` and `--opt value` alike.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (a, None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => argv.next().and_then(|v| v.into_string().ok()).ok_or(format!("{name} needs a value")),
            }
        };
        match flag {
            "-n" | "-np" | "--n" | "--np" | "-c" => ranks = Some(count(&value("-n")?)?),
            "--channel" | "-channel" => kind = channel(&value("--channel")?)?,
            "--wait" | "-wait" => policy = wait(&value("--wait")?)?,
            "--check" | "-check" if inline.is_none() => check = true,
            "--timing" | "-timing" => timing = Some(VirtualTime::from_spec(&value("--timing")?)?),
            "--trace" | "-trace" => trace = Some(std::path::PathBuf::from(value("--trace")?)),
            "-h" | "--help" => return Err(USAGE.into()),
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    };
    let timing = match (timing, trace) {
        (Some(t), trace) => Some(VirtualTime { trace, ..t }),
        (None, Some(_)) => return Err(format!("--trace needs --timing\n{USAGE}")),
        (None, None) => None,
    };
    Ok(Args {
        ranks: ranks.unwrap_or(1),
        check,
        channel: kind,
        wait: policy,
        timing,
        program,
        rest: argv.collect(),
    })
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
    config.wait = args.wait.unwrap_or_else(|| sccemu::job::resolve_wait(args.ranks)) as u32;
    config.channel = args.channel as u32;
    let mut launch = Launch::new(config, program);
    launch.args = args.rest;
    if args.check {
        launch.env.push((CHECK_VAR.into(), "1".into()));
    }
    launch.timing = args.timing;
    let report = match launch.spawn() {
        Ok(running) => running.wait(),
        Err(e) => {
            eprintln!("sccmpiexec: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(times) = &report.vtimes {
        eprintln!("{}", sccemu::job::vtime::report(times));
    }
    if let Some(why) = report.diagnosis() {
        eprintln!("sccmpiexec: {why}");
    }
    ExitCode::from(report.exit_code())
}
