//! Load/store access to a window's parts (`Window::local`, `Window::shared_query`):
//! plain copies into and out of the mapped part, ordered against other cores' accesses
//! by the epoch rules, as MPI's loads and stores on a shared-memory window are.

use crate::protocol::payload::Payload;
use crate::rma::error::RmaError;
use crate::rma::window::Window;
use crate::segment::view::{Plain, bytes_of, bytes_of_mut, zeroed};

/// Safe load/store access to one core's part: this core's own ([`Window::local`]) or
/// another's ([`Window::shared_query`]). Copies are always memory-safe; ordering them
/// against other cores' accesses is the job of the epoch rules (fence, post/wait,
/// lock, sync), exactly as for MPI's loads and stores on a window.
pub struct Part<'w, 'c, T: Plain> {
    pub(crate) win: &'w Window<'c, T>,
    pub(crate) rank: u32,
}

/// This core's own part.
pub type Local<'w, 'c, T> = Part<'w, 'c, T>;

impl<T: Plain> Part<'_, '_, T> {
    /// Whose part this is.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Elements in the part.
    pub fn len(&self) -> usize {
        self.win.part_region(self.rank).len / size_of::<T>()
    }

    /// Whether the part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies elements `index..index + dst.len()` into `dst`.
    pub fn read(&self, index: usize, dst: &mut [T]) -> Result<(), RmaError> {
        let at = self.win.check_range(self.rank(), index, dst.len())?;
        self.win.part_bytes(self.rank()).read(at, bytes_of_mut(dst));
        Ok(())
    }

    /// Copies `src` to elements `index..index + src.len()`.
    pub fn write(&self, index: usize, src: &[T]) -> Result<(), RmaError> {
        let at = self.win.check_range(self.rank(), index, src.len())?;
        self.win.part_bytes(self.rank()).write(at, bytes_of(src));
        Ok(())
    }

    /// The element at `index`.
    pub fn get(&self, index: usize) -> Result<T, RmaError> {
        let mut v = [zeroed::<T>()];
        self.read(index, &mut v)?;
        Ok(v[0])
    }

    /// Stores `value` at element `index`.
    pub fn set(&self, index: usize, value: T) -> Result<(), RmaError> {
        self.write(index, std::slice::from_ref(&value))
    }

    /// The whole part.
    pub fn to_vec(&self) -> Vec<T> {
        let mut v = vec![zeroed::<T>(); self.len()];
        self.read(0, &mut v).expect("the whole part is in range");
        v
    }
}
