pub mod bench;
pub mod chaos;
