//! SimGrid's SMPI beside sccemu: `sccrun smpi-platform [--chip FILE] -n N` writes a
//! SimGrid platform and host file for the chip that `sccrun --timing scc` models
//! ([`platform`]), so that the same MPI C program can be run in SMPI's virtual time on
//! the same chip (`smpirun -np N -platform scc-N.xml -hostfile scc-N.hosts ./prog`).
//! What SMPI cannot express of sccemu's model, and what is approximated, is in
//! `docs/SMPI.md`.

pub mod platform;

use std::path::{Path, PathBuf};

use sccemu::timing::Chip;

/// `sccrun smpi-platform [--chip FILE] -n N [--out DIR]`
#[derive(clap::Args, Clone, Debug)]
pub struct SmpiPlatformArgs {
    /// Ranks (hosts in the host file); past the chip's cores the mesh grows by rows.
    #[arg(short = 'n', long = "cores", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(shm_layout::MAX_CORES)))]
    pub cores: u32,

    /// The chip description (TOML, as for `sccrun --timing scc=FILE`); the SCC's by default.
    #[arg(long, value_name = "FILE")]
    pub chip: Option<PathBuf>,

    /// Directory the two files go to.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

/// The two files written: (platform, host file).
pub fn write(chip: &Chip, cores: u32, dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let p = platform::generate(chip, cores);
    std::fs::create_dir_all(dir)?;
    let (xml, hosts) = (dir.join(format!("scc-{cores}.xml")), dir.join(format!("scc-{cores}.hosts")));
    std::fs::write(&xml, p.xml)?;
    std::fs::write(&hosts, p.hosts)?;
    Ok((xml, hosts))
}

/// Reads the chip (or takes the SCC's) and writes the files; the message to print.
pub fn run(args: &SmpiPlatformArgs) -> Result<String, String> {
    let chip = match &args.chip {
        None => Chip::default(),
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            Chip::from_toml(&text).map_err(|e| format!("{}: {e}", file.display()))?
        }
    };
    let (xml, hosts) =
        write(&chip, args.cores, &args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    Ok(format!(
        "wrote {} and {}\nrun: smpirun -np {} -platform {} -hostfile {} ./program",
        xml.display(),
        hosts.display(),
        args.cores,
        xml.display(),
        hosts.display()
    ))
}

/// Whether SimGrid's `smpicc` and `smpirun` are on the PATH.
pub fn installed() -> bool {
    ["smpicc", "smpirun"].iter().all(|tool| {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
    })
}
