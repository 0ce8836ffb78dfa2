//! `rccerun`: start an RCCE program as the UEs of an sccemu job, as RCCE's own launcher
//! does on the chip.
//!
//! `rccerun -nue N [-f hostfile] [-clock GHz] [-check] prog args...` reads the first N
//! core IDs from the host file (0..N-1 without one), places the UE of rank r on the
//! r-th smallest ID, and starts `prog N GHz id_0 ... id_{N-1} args...` under sccemu's
//! launcher with a fresh, zeroed MPB and free test-and-set registers. A rank's death
//! aborts the job; a deadlock is reported and stopped; the first failing rank's exit
//! code (or 128 + its signal) becomes rccerun's.
//!
//! Virtual time: an explicit `-clock GHz` runs the job in virtual time on sccemu's SCC
//! model with every tile at that clock (the nearest divider of 1600 MHz); `-timing
//! FILE` takes the chip from a TOML description instead, and `-trace FILE` writes the
//! trace (see `sccrun --timing`). At the end rccerun prints each UE's virtual time.

use std::ffi::OsString;
use std::process::ExitCode;

use rcce::launcher::RcceJob;

struct Args {
    ues: u32,
    hostfile: Option<String>,
    ghz: f64,
    check: bool,
    /// `-clock` given (virtual time at that clock), `-timing` and `-trace`.
    clock_given: bool,
    chip_file: Option<String>,
    trace: Option<String>,
    wait: Option<sccemu::WaitPolicy>,
    pin: Option<sccemu::core::pin::PinPolicy>,
    program: String,
    rest: Vec<OsString>,
}

const USAGE: &str = "usage: rccerun -nue N [-f hostfile] [-clock GHz] [-timing CHIP.toml] [-trace FILE] [-check] program [args...]";

fn parse(mut argv: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let (mut ues, mut hostfile, mut ghz, mut check) = (None, None, 0.533, false);
    let (mut clock_given, mut chip_file, mut trace, mut wait, mut pin) = (false, None, None, None, None);
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
                clock_given = true;
            }
            Some("-timing") => chip_file = Some(value(&mut argv, "-timing")?),
            Some("-trace") => trace = Some(value(&mut argv, "-trace")?),
            Some("-wait") => {
                let w = value(&mut argv, "-wait")?;
                wait = Some(match w.as_str() {
                    "auto" => sccemu::WaitPolicy::Adaptive,
                    "spin" => sccemu::WaitPolicy::Spin,
                    "block" => sccemu::WaitPolicy::Block,
                    _ => return Err(format!("-wait {w}: auto, spin or block")),
                });
            }
            Some("-pin") => {
                let p = value(&mut argv, "-pin")?;
                pin = Some(p.parse().map_err(|e: sccemu::core::pin::PinError| format!("-pin {p}: {e}"))?);
            }
            Some("-check") => check = true,
            Some("-h" | "--help") => return Err(USAGE.into()),
            Some(flag) if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            _ => {
                let program = arg.into_string().map_err(|_| "the program's path is not UTF-8")?;
                let ues = ues.ok_or("-nue N is required")?;
                let rest = argv.collect();
                return Ok(Args {
                    ues,
                    hostfile,
                    ghz,
                    check,
                    clock_given,
                    chip_file,
                    trace,
                    wait,
                    pin,
                    program,
                    rest,
                });
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

/// The virtual time the arguments ask for, if any.
fn timing(args: &Args) -> Result<Option<sccemu::job::vtime::VirtualTime>, String> {
    if !args.clock_given && args.chip_file.is_none() {
        return match args.trace {
            Some(_) => Err("-trace needs virtual time (-clock or -timing)".into()),
            None => Ok(None),
        };
    }
    let spec = args.chip_file.as_ref().map_or_else(|| "scc".to_owned(), |f| format!("scc={f}"));
    let mut vt = sccemu::job::vtime::VirtualTime::from_spec(&spec)?;
    if args.clock_given {
        let mut chip = if vt.chip.is_empty() {
            sccemu::timing::Chip::default()
        } else {
            sccemu::timing::Chip::from_toml(&vt.chip).map_err(|e| e.to_string())?
        };
        chip.clocks.divider = (chip.clocks.base_mhz / (args.ghz * 1000.0)).round().clamp(1.0, 64.0) as u32;
        vt.chip = chip.to_toml();
    }
    vt.trace = args.trace.clone().map(Into::into);
    Ok(Some(vt))
}

fn run(args: Args) -> Result<ExitCode, String> {
    let timing = timing(&args)?;
    let note = timing.as_ref().map(|t| t.compute_note());
    let job = RcceJob {
        ids: core_ids(args.hostfile.as_deref(), args.ues)?,
        ues: args.ues,
        ghz: args.ghz,
        check: args.check,
        program: args.program.into(),
        args: args.rest,
        timing,
        wait: args.wait,
        pin: args.pin,
    };
    let launch = rcce::launcher::launch(&job)?;
    let report = launch.spawn().map_err(|e| e.to_string())?.wait();
    if let (Some(times), Some(note)) = (&report.vtimes, &note) {
        eprintln!("{}\n  {note}", sccemu::job::vtime::report(times));
    }
    if let Some(diagnosis) = report.diagnosis() {
        eprintln!("rccerun: {diagnosis}");
    }
    Ok(ExitCode::from(report.exit_code()))
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
