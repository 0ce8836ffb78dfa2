//! The run: for each chosen suite, sccemu's side (if registered) and then the peer runs,
//! row by row (each core count of a peer program runs on every available MPI before the
//! next count, in alternating order, so that the MPIs of one row are measured minutes
//! apart at most), then the suite's CSV and plots; at the end `report.md`,
//! `metadata.json` and a self-check of every file written.
//!
//! The cache-line probe (`sccemu_benches::pt2pt::line_cost`) runs before and after
//! sccemu's side and before every peer run; each reading is printed as it is taken and
//! kept, so that the report can flag a comparison whose two measurements ran on a
//! machine whose cache-line cost had moved by more than 2x. sccemu's native suites run
//! as one call each (`sccemu_benches::Suite::run`), so their rows cannot be interleaved
//! with the MPIs' one by one; the sccmpi column, sccemu under the same C program, is.
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
use super::catalog::{CATALOG, HARNESS_SUITES, NODES_SUITE, PeerSpec, suite_spec};
use super::error::BenchError;
use super::metadata::Metadata;
use super::output;
use super::peer_run::{Incident, PeerRun};
use super::peers::{self, Installer, Mpi};
use super::plot;
use super::report::{self, Probe, SccemuSide, SuiteResult};
use super::{scale, vtime};

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
    known.extend(HARNESS_SUITES.iter().map(|(name, _)| (*name).to_owned()));
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
        if name == NODES_SUITE && !known.contains(name) {
            return Err(BenchError::NeedsFeature { suite: name.clone(), feature: "multinode" });
        }
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
            PeerChoice::Smpi => Mpi::Smpi,
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

    let needs_peers = suites.iter().any(|s| {
        suite_spec(s).is_some_and(|spec| !spec.peers.is_empty()) || HARNESS_SUITES.iter().any(|h| h.0 == s)
    });
    let mut ready: Vec<Mpi> = Vec::new();
    let mut installer = Installer::new(!args.no_install, logs.clone());
    for mpi in [Mpi::Mpich, Mpi::OpenMpi, Mpi::Smpi, Mpi::Sccmpi] {
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
            ours + theirs * ready.len() + usize::from(HARNESS_SUITES.iter().any(|h| h.0 == name))
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
        if let Some(&(_, about)) = HARNESS_SUITES.iter().find(|h| h.0 == name) {
            return self.harness_suite(name, about);
        }
        let spec = suite_spec(name);
        let registered = sccemu_benches::suite(name);
        let about = spec.map(|s| s.about).or(registered.map(|s| s.about)).unwrap_or_default();
        let mut rows = Vec::new();
        let mut probes = vec![probe(name, "before sccemu", None)];
        let sccemu = match registered {
            None => SccemuSide::NotRegistered,
            Some(suite) => self.sccemu_side(suite, &mut rows),
        };
        probes.push(probe(name, "after sccemu", None));
        let mut incidents = Vec::new();
        for peer in spec.map_or(&[][..], |s| s.peers) {
            self.peer_side(name, peer, &mut rows, &mut incidents, &mut probes);
        }
        if spec.is_some_and(|s| !s.peers.is_empty()) && !self.ready.is_empty() {
            probes.push(probe(name, "after the MPIs", None));
        }

        let out = &self.args.out;
        output::write_csv(&output::csv_path(out, name), &rows)?;
        // SMPI's virtual times share no axis with host times: they are in the tables only.
        let host_rows: Vec<Row> =
            rows.iter().filter(|r| !report::is_virtual(&r.implementation)).cloned().collect();
        let plots = plot::plot_suite(&out.join("plots"), name, &host_rows)?
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
            probes,
            custom: None,
        })
    }

    /// A suite the harness runs itself: its rows and its own table.
    fn harness_suite(&mut self, name: &str, about: &str) -> Result<SuiteResult, BenchError> {
        let sides =
            if name == NODES_SUITE { "sccemu on 2 nodes and open mpi over tcp" } else { "sccemu and smpi" };
        self.progress.start(&format!("{name}: {sides}"));
        let smpi = self.ready.contains(&Mpi::Smpi);
        let mut custom = String::new();
        let rows = if name == NODES_SUITE {
            self.nodes_suite(&mut custom)
        } else if name == scale::NAME {
            let measured = scale::measure(&self.params, &self.builds.dir, smpi, self.args.mpi_timeout());
            scale::table(&mut custom, &measured);
            measured.rows
        } else {
            let setup = vtime::Setup {
                build: &self.builds.dir,
                logs: &self.logs,
                timeout: self.args.mpi_timeout(),
                smpi,
            };
            let measured = vtime::measure(&self.params, &setup);
            vtime::table(&mut custom, &measured);
            measured.rows
        };
        self.progress.done(1);
        let out = &self.args.out;
        output::write_csv(&output::csv_path(out, name), &rows)?;
        // Virtual times only, every column on the same axis: the ping-pong by size, the
        // barrier and the stencil's curve by cores.
        let plots = if name == vtime::NAME {
            plot::plot_suite(&out.join("plots"), name, &rows)?
                .iter()
                .map(|p| report::relative(out, p))
                .collect()
        } else {
            Vec::new()
        };
        Ok(SuiteResult {
            name: name.into(),
            about: about.into(),
            baseline: None,
            has_peers: true,
            sccemu: SccemuSide::Measured,
            rows,
            plots,
            incidents: Vec::new(),
            probes: Vec::new(),
            custom: Some(custom),
        })
    }

    /// The `nodes` suite's rows, its table into `custom`.
    #[cfg(feature = "multinode")]
    fn nodes_suite(&self, custom: &mut String) -> Vec<Row> {
        let setup = super::nodes::Setup {
            build: &self.builds.dir,
            logs: &self.logs,
            timeout: self.args.mpi_timeout(),
        };
        let measured = super::nodes::measure(&self.params, &setup);
        super::nodes::table(custom, &measured);
        measured.rows
    }

    /// Never called: without the feature the suite is not among the chosen ones.
    #[cfg(not(feature = "multinode"))]
    fn nodes_suite(&self, _custom: &mut String) -> Vec<Row> {
        Vec::new()
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

    /// `peer` at each of its core counts in ascending order, each count on every ready
    /// MPI before the next count (the MPIs' order reversed every other count), each run
    /// after a cache-line probe.
    fn peer_side(
        &mut self,
        suite: &str,
        peer: &PeerSpec,
        rows: &mut Vec<Row>,
        incidents: &mut Vec<Incident>,
        probes: &mut Vec<Probe>,
    ) {
        let cores = peer.cores.pick(&self.params);
        let patterns = peer.patterns.join(",");
        let mut exes: Vec<(Mpi, PathBuf)> = Vec::new();
        for mpi in self.ready.clone() {
            match self.builds.get(mpi, peer.program) {
                Ok(exe) => exes.push((mpi, exe)),
                Err(why) => {
                    self.progress.done(cores.len() as u64);
                    incidents.push(Incident {
                        suite: suite.into(),
                        implementation: mpi.name().into(),
                        patterns: patterns.clone(),
                        cores: 0,
                        what: why,
                    });
                }
            }
        }
        // Once a run times out, more ranks would only wait out the same timeout again.
        let mut timed_out_at: HashMap<Mpi, u32> = HashMap::new();
        for (index, &n) in cores.iter().enumerate() {
            let order: Vec<&(Mpi, PathBuf)> =
                if index % 2 == 0 { exes.iter().collect() } else { exes.iter().rev().collect() };
            for (mpi, exe) in order {
                let mpi = *mpi;
                self.progress.start(&format!("{suite}: {} {patterns} with {n} ranks", mpi.name()));
                let run = PeerRun {
                    suite,
                    mpi,
                    exe,
                    spec: peer,
                    cores: n,
                    params: &self.params,
                    timeout: self.args.mpi_timeout(),
                    logs: &self.logs,
                };
                let outcome = match timed_out_at.get(&mpi) {
                    Some(fewer) => run.skipped(&format!("not attempted: {fewer} ranks already timed out")),
                    None => {
                        let point = format!("before {} {patterns} at {n} ranks", mpi.name());
                        probes.push(probe(suite, &point, Some((mpi.name(), n, peer.patterns))));
                        run.run()
                    }
                };
                if outcome.timed_out {
                    timed_out_at.insert(mpi, n);
                }
                self.progress.done(1);
                rows.extend(outcome.rows);
                incidents.extend(outcome.incident);
            }
        }
    }
}

/// One reading of the cache-line probe, printed as it is taken; `run` names the peer
/// run it precedes (implementation, ranks, patterns), `None` for sccemu's side.
fn probe(suite: &str, point: &str, run: Option<(&str, u32, &[&str])>) -> Probe {
    let us = sccemu_benches::pt2pt::line_cost();
    match us {
        Some(us) => eprintln!("bench: {suite}: cache-line probe {point}: {us:.3} µs one way"),
        None => eprintln!("bench: {suite}: cache-line probe {point}: not measured"),
    }
    Probe {
        point: point.to_owned(),
        run: run.map(|(implementation, cores, patterns)| {
            (implementation.to_owned(), cores, patterns.iter().map(|p| (*p).to_owned()).collect())
        }),
        us,
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
