pub mod bench;
pub mod chaos;
pub mod trace_report;
