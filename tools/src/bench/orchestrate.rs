//! The run: for each chosen suite, sccemu's side (if registered) and then each
//! available MPI's peer runs, then the suite's CSV and plots; at the end `report.md`,
//! `metadata.json` and a self-check of every file written.
//!
//! Layout of the output directory:
//!
//! ```text
//! DIR/<suite>.csv  DIR/plots/*.svg  DIR/report.md  DIR/metadata.json
//! DIR/build/ (peer sources and binaries)  DIR/logs/ (mpirun and apt output)
//! ```

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use sccemu_benches::Suite;
use sccemu_benches::measure::{Row, SuiteParams};

use super::args::{BenchArgs, PeerChoice};
use super::catalog::{CATALOG, PeerSpec, suite_spec};
use super::error::BenchError;
use super::metadata::Metadata;
use super::output;
use super::peer_run::{Incident, PeerRun};
use super::peers::{self, Installer, Mpi};
use super::plot;
use super::report::{self, SccemuSide, SuiteResult};

/// A progress bar on a terminal; plain log lines on stderr otherwise (CI, pipes).
struct Progress {
    bar: ProgressBar,
    on_terminal: bool,
}

impl Progress {
    fn new(steps: u64) -> Progress {
        let on_terminal = std::io::stderr().is_terminal();
        if !on_terminal {
            return Progress { bar: ProgressBar::hidden(), on_terminal };
        }
        let bar = ProgressBar::new(steps);
        let style =
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar, on_terminal }
    }

    fn start(&self, what: &str) {
        if self.on_terminal {
            self.bar.set_message(what.to_owned());
        } else {
            eprintln!("bench: {what}");
        }
    }

    fn done(&self, steps: u64) {
        self.bar.inc(steps);
    }
}

/// Suite names in report order: the catalogue's, then other registered sccemu suites.
fn chosen_suites(requested: &[String]) -> Result<Vec<String>, BenchError> {
    let mut known: Vec<String> = CATALOG.iter().map(|s| s.name.to_owned()).collect();
    for suite in sccemu_benches::SUITES {
        if !known.iter().any(|k| k == suite.name) {
            known.push(suite.name.to_owned());
        }
    }
    if requested.is_empty() {
        return Ok(known);
    }
    let mut chosen: Vec<String> = Vec::new();
    for name in requested {
        if !known.contains(name) {
            return Err(BenchError::UnknownSuite { name: name.clone(), known });
        }
        if !chosen.contains(name) {
            chosen.push(name.clone());
        }
    }
    Ok(chosen)
}

fn requested_mpis(peers: &[PeerChoice]) -> Vec<Mpi> {
    let mut mpis = Vec::new();
    for choice in peers {
        let mpi = match choice {
            PeerChoice::Mpich => Mpi::Mpich,
            PeerChoice::Openmpi => Mpi::OpenMpi,
            PeerChoice::Sccmpi => Mpi::Sccmpi,
            PeerChoice::None => continue,
        };
        if !mpis.contains(&mpi) {
            mpis.push(mpi);
        }
    }
    mpis
}

fn create_dir(path: &Path) -> Result<(), BenchError> {
    std::fs::create_dir_all(path).map_err(BenchError::io(path))
}

/// Runs the benchmark described by `args` and writes its outputs.
pub fn run(args: &BenchArgs) -> Result<(), BenchError> {
    // A job child that reached this far (a `main` without `init`) runs its entry here,
    // before any side effect.
    sccemu::job::init();
    let suites = chosen_suites(&args.suites)?;
    let out = args.out.as_path();
    let (plots, logs, build) = (out.join("plots"), out.join("logs"), out.join("build"));
    let params = SuiteParams { quick: args.quick, build_dir: Some(build.clone()) };
    // Plots of an earlier run in the same directory must not pass for this run's.
    if plots.is_dir() {
        std::fs::remove_dir_all(&plots).map_err(BenchError::io(&plots))?;
    }
    for dir in [out, &plots, &logs, &build] {
        create_dir(dir)?;
    }
    let mut meta = Metadata::collect(args.quick);

    let needs_peers = suites.iter().any(|s| suite_spec(s).is_some_and(|spec| !spec.peers.is_empty()));
    let mut ready: Vec<Mpi> = Vec::new();
    let mut installer = Installer::new(!args.no_install, logs.clone());
    for mpi in [Mpi::Mpich, Mpi::OpenMpi, Mpi::Sccmpi] {
        let status = if !requested_mpis(&args.peers).contains(&mpi) {
            "not requested (--peers)".to_owned()
        } else if !needs_peers {
            "not needed by the chosen suites".to_owned()
        } else {
            match installer.ensure(mpi) {
                Ok(version) => {
                    ready.push(mpi);
                    version
                }
                Err(why) => format!("unavailable: {why}"),
            }
        };
        meta.peers.insert(mpi.name().to_owned(), status);
    }
    if !ready.is_empty() {
        peers::write_sources(&build).map_err(BenchError::io(&build))?;
    }

    let steps: usize = suites
        .iter()
        .map(|name| {
            let ours = usize::from(sccemu_benches::suite(name).is_some());
            let theirs: usize = suite_spec(name)
                .map_or(0, |spec| spec.peers.iter().map(|p| p.cores.pick(&params).len()).sum());
            ours + theirs * ready.len()
        })
        .sum();
    let mut session = Session {
        params,
        args,
        ready,
        builds: Builds { dir: build, done: HashMap::new() },
        progress: Progress::new(steps as u64),
        logs,
    };
    let mut results = Vec::new();
    for name in &suites {
        results.push(session.run_suite(name)?);
    }
    session.progress.bar.finish_and_clear();

    let report_path = out.join("report.md");
    std::fs::write(&report_path, report::render(&meta, &results)).map_err(BenchError::io(&report_path))?;
    let meta_path = out.join("metadata.json");
    let json = serde_json::to_string_pretty(&meta)
        .map_err(|source| BenchError::Json { path: meta_path.clone(), source })?;
    std::fs::write(&meta_path, json).map_err(BenchError::io(&meta_path))?;

    check_outputs(out, &results)?;
    eprintln!("bench: report in {}", report_path.display());
    Ok(())
}

/// Peer binaries built so far, or why a build failed; each is built once per run.
struct Builds {
    dir: PathBuf,
    done: HashMap<(Mpi, &'static str), Result<PathBuf, String>>,
}

impl Builds {
    fn get(&mut self, mpi: Mpi, program: &'static str) -> Result<PathBuf, String> {
        let dir = &self.dir;
        self.done.entry((mpi, program)).or_insert_with(|| peers::build(mpi, dir, program)).clone()
    }
}

/// What every suite of one run shares.
struct Session<'a> {
    params: SuiteParams,
    args: &'a BenchArgs,
    /// MPIs found (or installed) and requested.
    ready: Vec<Mpi>,
    builds: Builds,
    progress: Progress,
    logs: PathBuf,
}

impl Session<'_> {
    fn run_suite(&mut self, name: &str) -> Result<SuiteResult, BenchError> {
        let spec = suite_spec(name);
        let registered = sccemu_benches::suite(name);
        let about = spec.map(|s| s.about).or(registered.map(|s| s.about)).unwrap_or_default();
        let mut rows = Vec::new();
        let mut line_cost = vec![("before sccemu".to_owned(), sccemu_benches::pt2pt::line_cost())];
        let sccemu = match registered {
            None => SccemuSide::NotRegistered,
            Some(suite) => self.sccemu_side(suite, &mut rows),
        };
        line_cost.push(("after sccemu".to_owned(), sccemu_benches::pt2pt::line_cost()));
        let mut incidents = Vec::new();
        for peer in spec.map_or(&[][..], |s| s.peers) {
            self.peer_side(name, peer, &mut rows, &mut incidents);
        }
        if spec.is_some_and(|s| !s.peers.is_empty()) && !self.ready.is_empty() {
            line_cost.push(("after the MPIs".to_owned(), sccemu_benches::pt2pt::line_cost()));
        }

        let out = &self.args.out;
        output::write_csv(&output::csv_path(out, name), &rows)?;
        let plots = plot::plot_suite(&out.join("plots"), name, &rows)?
            .iter()
            .map(|p| report::relative(out, p))
            .collect();
        let baseline = spec.and_then(|s| s.baseline);
        Ok(SuiteResult {
            name: name.into(),
            about: about.into(),
            baseline,
            has_peers: spec.is_some_and(|s| !s.peers.is_empty()),
            sccemu,
            rows,
            plots,
            incidents,
            line_cost,
        })
    }

    fn sccemu_side(&self, suite: &Suite, rows: &mut Vec<Row>) -> SccemuSide {
        self.progress.start(&format!("{}: sccemu", suite.name));
        // A suite that panics loses its own figures, not the whole run's.
        let measured = std::panic::catch_unwind(|| (suite.run)(&self.params));
        self.progress.done(1);
        match measured {
            Ok(measured) => {
                rows.extend(measured);
                SccemuSide::Measured
            }
            Err(panic) => SccemuSide::Failed(
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "panicked".into()),
            ),
        }
    }

    /// Every ready MPI runs `peer` at each of its core counts, in ascending order.
    fn peer_side(
        &mut self,
        suite: &str,
        peer: &PeerSpec,
        rows: &mut Vec<Row>,
        incidents: &mut Vec<Incident>,
    ) {
        let cores = peer.cores.pick(&self.params);
        for mpi in self.ready.clone() {
            let exe = match self.builds.get(mpi, peer.program) {
                Ok(exe) => exe,
                Err(why) => {
                    self.progress.done(cores.len() as u64);
                    incidents.push(Incident {
                        suite: suite.into(),
                        implementation: mpi.name().into(),
                        patterns: peer.patterns.join(","),
                        cores: 0,
                        what: why,
                    });
                    continue;
                }
            };
            // Once a run times out, more ranks would only wait out the same timeout again.
            let mut timed_out_at: Option<u32> = None;
            for &n in cores {
                let patterns = peer.patterns.join(",");
                self.progress.start(&format!("{suite}: {} {patterns} with {n} ranks", mpi.name()));
                let run = PeerRun {
                    suite,
                    mpi,
                    exe: &exe,
                    spec: peer,
                    cores: n,
                    params: &self.params,
                    timeout: self.args.mpi_timeout(),
                    logs: &self.logs,
                };
                let outcome = match timed_out_at {
                    Some(fewer) => run.skipped(&format!("not attempted: {fewer} ranks already timed out")),
                    None => run.run(),
                };
                if outcome.timed_out {
                    timed_out_at = Some(n);
                }
                self.progress.done(1);
                rows.extend(outcome.rows);
                incidents.extend(outcome.incident);
            }
        }
    }
}

/// Reads back every CSV, checks every plot and the report's sections.
fn check_outputs(out: &Path, results: &[SuiteResult]) -> Result<(), BenchError> {
    for suite in results {
        output::check_csv(&output::csv_path(out, &suite.name), suite.rows.len())?;
        for plot in &suite.plots {
            output::check_svg(&out.join(plot))?;
        }
    }
    let names: Vec<String> = results.iter().map(|r| r.name.clone()).collect();
    output::check_report(&out.join("report.md"), &names)
}
