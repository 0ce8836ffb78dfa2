//! The test-and-set registers: one per core, in shared DRAM, a line each.
//!
//! As on the chip, reading a register takes it and says whether it was free; writing
//! releases it. Both are sccemu's test-and-set words (`Core::lock_word`,
//! `Core::unlock_word`): taking waits on the owner's doorbell, which every release
//! rings, and the Acquire of a successful take and the Release of the swap that frees
//! the register order whatever the holder did before (`RCCE_acquire_lock` /
//! `RCCE_release_lock`, bit-flag writes) for the next holder.
//!
//! Across nodes a register lives in its core's node ([`Rcce::register_offset`]); a UE on
//! another node takes it through that node's gateway, which waits there for it, and
//! releases it with a store made there, after its own requests to other nodes' MPBs
//! are complete.

use crate::state::Rcce;

impl Rcce {
    /// Takes core `id`'s register, waiting while another core holds it.
    pub fn test_and_set(&self, id: u32) {
        crate::vtime::test_and_set(id);
        let taken = self.core.lock_word(id, self.register_offset(id));
        taken.unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
    }

    /// Releases core `id`'s register and wakes its waiters.
    pub fn release_register(&self, id: u32) {
        let released = self.core.unlock_word(id, self.register_offset(id));
        released.unwrap_or_else(|e| crate::fatal(self, &e.to_string()));
    }
}
