//! `rccerun`: start an RCCE program as the UEs of an sccemu job, as RCCE's own launcher
//! does on the chip.
//!
//! `rccerun -nue N [-f hostfile] [-clock GHz] [-check] prog args...` reads the first N
//! core IDs from the host file (0..N-1 without one), places the UE of rank r on the
//! r-th smallest ID, and starts `prog N GHz id_0 ... id_{N-1} args...` under sccemu's
//! launcher with a fresh, zeroed MPB and free test-and-set registers. A rank's death
//! aborts the job; a deadlock is reported and stopped; the first failing rank's exit
//! code (or 128 + its signal) becomes rccerun's.

use std::ffi::OsString;
use std::process::ExitCode;

use rcce::launcher::RcceJob;
use sccemu::AbortCause;

struct Args {
    ues: u32,
    hostfile: Option<String>,
    ghz: f64,
    check: bool,
    program: String,
    rest: Vec<OsString>,
}

const USAGE: &str = "usage: rccerun -nue N [-f hostfile] [-clock GHz] [-check] program [args...]";

fn parse(mut argv: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let (mut ues, mut hostfile, mut ghz, mut check) = (None, None, 0.533, false);
    let value = |argv: &mut dyn Iterator<Item = OsString>, flag: &str| {
        argv.next().and_then(|v| v.into_string().ok()).ok_or(format!("{flag} needs a value"))
    };
    loop {
        let arg = argv.next().ok_or("no program given")?;
        match arg.to_str() {
            Some("-nue" | "-n" | "-np") => {
                let n = value(&mut argv, "-nue")?;
                ues = Some(
                    n.parse::<u32>().ok().filter(|&n| n > 0).ok_or(format!("-nue {n}: not a UE count"))?,
                );
            }
            Some("-f") => hostfile = Some(value(&mut argv, "-f")?),
            Some("-clock") => {
                let g = value(&mut argv, "-clock")?;
                ghz = g
                    .parse()
                    .ok()
                    .filter(|&g: &f64| g > 0.0)
                    .ok_or(format!("-clock {g}: not a frequency in GHz"))?;
            }
            Some("-check") => check = true,
            Some("-h" | "--help") => return Err(USAGE.into()),
            Some(flag) if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            _ => {
                let program = arg.into_string().map_err(|_| "the program's path is not UTF-8")?;
                let ues = ues.ok_or("-nue N is required")?;
                return Ok(Args { ues, hostfile, ghz, check, program, rest: argv.collect() });
            }
        }
    }
}

/// The first `n` core IDs of the host file (whitespace-separated; `#` starts a
/// comment), or 0..n.
fn core_ids(hostfile: Option<&str>, n: u32) -> Result<Vec<u32>, String> {
    let Some(path) = hostfile else { return Ok((0..n).collect()) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let ids = text
        .lines()
        .flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace())
        .map(|w| w.parse::<u32>().map_err(|_| format!("{path}: {w:?} is not a core ID")))
        .take(n as usize)
        .collect::<Result<Vec<_>, _>>()?;
    if ids.len() < n as usize {
        return Err(format!("{path} lists {} core IDs, fewer than the {n} UEs asked for", ids.len()));
    }
    Ok(ids)
}

fn run(args: Args) -> Result<ExitCode, String> {
    let job = RcceJob {
        ids: core_ids(args.hostfile.as_deref(), args.ues)?,
        ues: args.ues,
        ghz: args.ghz,
        check: args.check,
        program: args.program.into(),
        args: args.rest,
    };
    let launch = rcce::launcher::launch(&job)?;
    let report = launch.spawn().map_err(|e| e.to_string())?.wait();
    if let Some(diagnosis) = report.diagnosis() {
        eprintln!("rccerun: {diagnosis}");
    }
    if report.success() {
        return Ok(ExitCode::SUCCESS);
    }
    let code = match report.failure.map(|f| f.cause) {
        Some(AbortCause::Exited(code) | AbortCause::UserAbort(code)) => code,
        Some(AbortCause::Signaled(sig) | AbortCause::Interrupted(sig)) => 128 + sig,
        _ => 1,
    };
    Ok(ExitCode::from(code.clamp(1, 255) as u8))
}

fn main() -> ExitCode {
    match parse(std::env::args_os().skip(1)).and_then(run) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rccerun: {e}");
            if !e.starts_with("usage") {
                eprintln!("{USAGE}");
            }
            ExitCode::from(2)
        }
    }
}
