//! The main demo: the RCKMPI paper's 9-point CFD automaton on N cores, in its two-sided
//! and three one-sided versions, each checked against the sequential grid.
//!
//! `cargo run --release --example stencil` runs every version on 1 core and on 48
//! (through `sccemu::Job`) and prints time per step and speedup. With `--timing scc`
//! the times are virtual: what the SCC would take (`docs/VIRTUAL_TIME.md`), e.g. the
//! speedup curve `--timing scc --cores 2,4,8,16,32,48`. Under the launcher,
//! `sccrun -n 8 target/release/examples/stencil --version fence` runs as the job's cores
//! (`sccrun --timing scc ...` for virtual time).

use std::process::ExitCode;

use clap::Parser;
use sccemu::{Core, Job};
use sccemu_benches::exchange::Version;
use sccemu_benches::stencil::{self, Outcome, Params};

#[derive(Parser, Debug)]
#[command(about = "9-point stencil CFD automaton: two-sided vs fence, PSCW and lock")]
struct Cli {
    /// Grid rows (split across the cores; at least one per core).
    #[arg(long, default_value_t = 480)]
    rows: usize,
    /// Grid columns (4 bytes each: 2048 columns make the RCKMPI paper's 8 KB halos).
    #[arg(long, default_value_t = 2048)]
    cols: usize,
    #[arg(long, default_value_t = 40)]
    steps: u32,
    /// two-sided, fence, pscw, lock, or all.
    #[arg(long, default_value = "all")]
    version: String,
    /// Core counts the demo compares with one core (ignored under sccrun).
    #[arg(long, value_delimiter = ',', default_value = "2,48")]
    cores: Vec<u32>,
    /// Virtual time on a chip model: `scc` (the SCC's) or `scc=FILE` (a TOML chip
    /// description); ignored under sccrun (use `sccrun --timing`).
    #[arg(long)]
    timing: Option<String>,
}

fn versions(cli: &Cli) -> Result<Vec<Version>, String> {
    if cli.version == "all" { Ok(Version::ALL.to_vec()) } else { Ok(vec![cli.version.parse()?]) }
}

fn entry(core: &Core, p: Params) -> Result<Outcome, String> {
    stencil::run(core, p).map_err(|e| e.to_string())
}

/// Under sccrun: this process is one core; rank 0 reports each version.
fn as_core(cli: &Cli, versions: &[Version]) -> Result<bool, Box<dyn std::error::Error>> {
    let core = Core::attach()?;
    let mut all_match = true;
    for &version in versions {
        let p = Params { rows: cli.rows, cols: cli.cols, steps: cli.steps, version };
        let outcome = stencil::run(&core, p).map_err(|e| e.to_string())?;
        if core.rank() == 0 {
            all_match &= outcome.matches_sequential;
            let verdict = if outcome.matches_sequential { "matches the sequential grid" } else { "DIFFERS" };
            println!("{:<10} {:>10.1} µs/step  {verdict}", version.name(), outcome.seconds_per_step * 1e6);
        }
    }
    Ok(all_match)
}

/// Standalone: every version on 1 core and on each of `cli.cores`, as a table.
fn demo(cli: &Cli, versions: &[Version]) -> Result<bool, String> {
    let timing = cli.timing.as_deref().map(sccemu::job::vtime::VirtualTime::from_spec).transpose()?;
    let clock = match &timing {
        Some(_) => "virtual µs on the chip model".to_owned(),
        None => format!("µs on {} CPUs", sccemu::core::pin::available_cpu_count()),
    };
    println!(
        "sccemu stencil: {}x{} grid ({} B halos), {} steps; {clock} per step (speedup over 1 core)",
        cli.rows,
        cli.cols,
        cli.cols * 4,
        cli.steps,
    );
    let job = |n: u32| match &timing {
        Some(t) => Job::new(n).timing(t.clone()),
        None => Job::new(n),
    };
    print!("{:<10} {:>10}", "version", "1 core");
    for n in &cli.cores {
        print!(" {:>18}", format!("{n} cores"));
    }
    println!("  check");
    let mut all_match = true;
    for &version in versions {
        let p = Params { rows: cli.rows, cols: cli.cols, steps: cli.steps, version };
        let one = job(1).run(&p, entry).map_err(|e| e.to_string())?.swap_remove(0);
        let mut ok = one.matches_sequential;
        print!("{:<10} {:>10.1}", version.name(), one.seconds_per_step * 1e6);
        for &n in &cli.cores {
            let many = job(n).run(&p, entry).map_err(|e| e.to_string())?.swap_remove(0);
            ok &= many.matches_sequential;
            let cell = format!(
                "{:.1} ({:.2}x)",
                many.seconds_per_step * 1e6,
                one.seconds_per_step / many.seconds_per_step
            );
            print!(" {cell:>18}");
        }
        all_match &= ok;
        println!("  {}", if ok { "bit-identical to sequential" } else { "DIFFERS from sequential" });
    }
    Ok(all_match)
}

fn main() -> ExitCode {
    sccemu::job::init();
    let cli = Cli::parse();
    let result = versions(&cli).map_err(Into::into).and_then(|versions| {
        if std::env::var_os(sccemu::core::env::FD).is_some() {
            as_core(&cli, &versions)
        } else {
            demo(&cli, &versions).map_err(Into::into)
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("stencil: {e}");
            ExitCode::FAILURE
        }
    }
}
