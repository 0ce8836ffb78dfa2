//! Why a benchmark run produced no (or no trustworthy) output.
//!
//! A peer MPI that is missing, fails to build or times out is *not* an error: the
//! report says so. Errors are what leaves the output directory unusable.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum BenchError {
    /// Neither a catalogued suite nor one registered in `sccemu_benches::SUITES`.
    UnknownSuite {
        name: String,
        known: Vec<String>,
    },
    /// A suite that this sccrun was built without (`nodes` needs `--features multinode`).
    NeedsFeature {
        suite: String,
        feature: &'static str,
    },
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    Csv {
        path: PathBuf,
        source: csv::Error,
    },
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    Plot {
        path: PathBuf,
        message: String,
    },
    /// The self-check after writing found a malformed or missing output.
    Malformed {
        path: PathBuf,
        problem: String,
    },
}

impl BenchError {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::Io { path, source }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownSuite { name, known } => {
                write!(f, "unknown suite `{name}` (known: {})", known.join(", "))
            }
            Self::NeedsFeature { suite, feature } => write!(
                f,
                "suite `{suite}` needs sccrun built with the `{feature}` feature \
                 (cargo build --release -p sccemu-tools --features {feature}, and its example: \
                 cargo build --release --example node_pingpong)"
            ),
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Csv { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Json { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Plot { path, message } => write!(f, "plotting {}: {message}", path.display()),
            Self::Malformed { path, problem } => write!(f, "{} is malformed: {problem}", path.display()),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Csv { source, .. } => Some(source),
            Self::Json { source, .. } => Some(source),
            _ => None,
        }
    }
}
