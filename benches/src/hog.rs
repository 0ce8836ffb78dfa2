//! A CPU hog: one busy thread beside a job, for the measurements and tests that show
//! what host load does (or does not do) to a figure.

use std::sync::Arc;

use sccemu::sync::{AtomicU32, Ordering};

/// A thread that computes without pause until this is dropped.
pub struct Hog(Arc<AtomicU32>);

impl Hog {
    /// Starts the busy thread.
    pub fn start() -> Hog {
        let stop = Arc::new(AtomicU32::new(0));
        let s = stop.clone();
        std::thread::spawn(move || {
            let mut x = 0u64;
            // Relaxed: the flag publishes nothing; the thread stops soon after it.
            while s.load(Ordering::Relaxed) == 0 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        });
        Hog(stop)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.0.store(1, Ordering::Relaxed);
    }
}
