pub mod bench;
pub mod chaos;
pub mod smpi;
pub mod trace_report;
