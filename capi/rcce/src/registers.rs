//! The test-and-set registers: one per core, in shared DRAM, a line each.
//!
//! As on the chip, reading a register takes it and says whether it was free; writing
//! releases it. Taking is a test-and-test-and-set that waits through sccemu's waiter on
//! the owner's doorbell, which every release rings. The Acquire of a successful swap
//! and the Release of the store that frees it order whatever the holder did before
//! (`RCCE_acquire_lock` / `RCCE_release_lock`, bit-flag writes) for the next holder.
//!
//! Across nodes a register lives in its core's node and only that node's UEs may take
//! it (`nodes`): the calls check with [`Rcce::check_register`] first.

use sccemu::segment::WaitMark;
use sccemu::sync::Ordering;

use crate::state::Rcce;

impl Rcce {
    fn try_take(&self, id: u32) -> bool {
        let register = self.register(id);
        register.load(Ordering::Relaxed) == 0 && register.swap(1, Ordering::Acquire) == 0
    }

    /// Takes core `id`'s register, waiting while another core holds it.
    pub fn test_and_set(&self, id: u32) {
        crate::vtime::test_and_set(id);
        if self.try_take(id) {
            return;
        }
        let _blocked = self.core.mark_wait(WaitMark::Lock { owner: id });
        let taken = self.core.wait_on(id, || self.try_take(id).then_some(()));
        taken.unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
    }

    /// Releases core `id`'s register and wakes its waiters.
    pub fn release_register(&self, id: u32) {
        self.register(id).store(0, Ordering::Release);
        self.core.ring(id);
    }
}
