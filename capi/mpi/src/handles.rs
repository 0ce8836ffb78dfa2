//! Handle tables: how a C `int` handle names a library object.
//!
//! Every kind of object (communicator, group, datatype, request, window, info) has its
//! own range of handle values: `kind.base | index`. A handle of another kind, a freed
//! handle, or garbage therefore fails the lookup instead of naming the wrong object,
//! which is how bad handles from C become error classes rather than crashes.
//! Index 0 is the kind's null handle (`MPI_COMM_NULL`, ...), which names nothing;
//! the indices after it, up to a table's `reserved` count, are the predefined handles
//! (`MPI_COMM_WORLD`, `MPI_INT`, ...), which users cannot free.
//!
//! A freed index is reused, as MPI allows: a program that keeps using a freed handle
//! is erroneous, and may then reach a newer object of the same kind.

use std::ffi::c_int;

/// The high bits that mark a kind's handles; `index` takes the low 24 bits.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// Whether `handle` is of the kind whose null handle is `base` (live or not).
pub const fn is_kind(handle: c_int, base: c_int) -> bool {
    handle as u32 & !INDEX_MASK == base as u32
}

/// Objects of one kind, by handle.
#[derive(Debug)]
pub struct Table<T> {
    base: u32,
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    reserved: usize,
}

impl<T> Table<T> {
    /// A table whose handles are `base | index`; `base` is the kind's null handle.
    pub const fn new(base: c_int) -> Table<T> {
        Table { base: base as u32, slots: Vec::new(), free: Vec::new(), reserved: 1 }
    }

    /// Keeps index 0 for the null handle.
    #[inline(always)]
    fn reserve_null(&mut self) {
        if self.slots.is_empty() {
            self.slots.push(None);
        }
    }

    /// Places a predefined object at the next index (which it keeps for the job).
    pub fn predefine(&mut self, value: T) -> c_int {
        self.reserve_null();
        let index = self.slots.len();
        debug_assert_eq!(index, self.reserved, "predefined handles come first");
        self.slots.push(Some(value));
        self.reserved += 1;
        self.handle(index)
    }

    /// Stores `value` and returns its new handle. Always inline: out of line, its
    /// frame cost as much as its work (callgrind, `MPI_Isend`'s request).
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> c_int {
        self.reserve_null();
        let index = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(value);
                i
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        };
        self.handle(index)
    }

    #[inline]
    fn handle(&self, index: usize) -> c_int {
        (self.base | index as u32) as c_int
    }

    #[inline]
    fn index(&self, handle: c_int) -> Option<usize> {
        let h = handle as u32;
        (h & !INDEX_MASK == self.base).then_some((h & INDEX_MASK) as usize)
    }

    /// The object `handle` names, if it is live.
    #[inline]
    pub fn get(&self, handle: c_int) -> Option<&T> {
        self.slots.get(self.index(handle)?)?.as_ref()
    }

    /// The object `handle` names, if it is live, to change it.
    #[inline]
    pub fn get_mut(&mut self, handle: c_int) -> Option<&mut T> {
        let i = self.index(handle)?;
        self.slots.get_mut(i)?.as_mut()
    }

    /// Whether `handle` is one of the predefined ones.
    pub fn is_predefined(&self, handle: c_int) -> bool {
        self.index(handle).is_some_and(|i| i < self.reserved)
    }

    /// Removes a user object; predefined and dead handles give `None`.
    #[inline]
    pub fn remove(&mut self, handle: c_int) -> Option<T> {
        let i = self.index(handle).filter(|&i| i >= self.reserved)?;
        let value = self.slots.get_mut(i)?.take()?;
        self.free.push(i);
        Some(value)
    }

    /// Removes a user object if `take` says so of it: one lookup where `get` and
    /// `remove` would make two.
    #[inline]
    pub fn remove_if(&mut self, handle: c_int, take: impl FnOnce(&mut T) -> bool) -> Option<T> {
        let i = self.index(handle).filter(|&i| i >= self.reserved)?;
        let slot = self.slots.get_mut(i)?;
        if !take(slot.as_mut()?) {
            return None;
        }
        let value = slot.take();
        self.free.push(i);
        value
    }

    /// The handles of the live user objects.
    pub fn handles(&self) -> Vec<c_int> {
        let user = self.reserved.min(self.slots.len());
        (user..self.slots.len()).filter(|&i| self.slots[i].is_some()).map(|i| self.handle(i)).collect()
    }

    /// Live user objects (not the predefined ones).
    pub fn live(&self) -> usize {
        self.slots[self.reserved.min(self.slots.len())..].iter().filter(|s| s.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn handles_of_another_kind_or_freed_ones_name_nothing() {
        let mut comms: Table<&str> = Table::new(0x4400_0000);
        let world = comms.predefine("world");
        assert_eq!(world, 0x4400_0001, "index 0 is the null handle");
        assert_eq!(comms.get(0x4400_0000), None);
        let dup = comms.insert("dup");
        assert_eq!(comms.get(world), Some(&"world"));
        assert_eq!(comms.get(0x4800_0001), None);
        assert_eq!(comms.get(-1), None);
        assert_eq!(comms.remove(world), None, "predefined handles stay");
        assert_eq!(comms.remove(dup), Some("dup"));
        assert_eq!(comms.get(dup), None);
        assert_eq!(comms.remove(dup), None, "double free is refused");
        assert_eq!(comms.insert("again"), dup, "indices are reused");
        assert_eq!(comms.live(), 1);
    }
}
