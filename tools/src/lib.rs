pub mod bench;
pub mod chaos;
/// `sccrun --nodes K`: the nodes under mpirun. The nodes' own side (`src/nodes/`) is
/// not in this library: see its module doc.
#[cfg(feature = "multinode")]
#[path = "nodes/launch.rs"]
pub mod nodes_launch;
pub mod smpi;
pub mod trace_report;
