//! Helpers shared by the multi-process test files: job entries return
//! `Result<_, String>`, so that a failed check names what failed on which rank.
#![allow(dead_code)]

/// `?` on any displayable error inside a job entry.
pub trait OrString<T> {
    fn s(self) -> Result<T, String>;
}

impl<T, E: std::fmt::Display> OrString<T> for Result<T, E> {
    fn s(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

/// `Err(what())` unless `cond` holds.
pub fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(what()) }
}
