//! User buffers described by (address, count, datatype): the bytes they hold, packed
//! in type-map order, and the way back.
//!
//! A contiguous datatype's buffer is used in place ([`Buffer::bytes`] borrows it);
//! any other is packed into, or unpacked from, a private vector run by run. Every
//! run's address is computed with checked arithmetic, so a count or extent that wraps
//! the address space is an error rather than a wild access.

use std::borrow::Cow;
use std::ffi::c_void;

use crate::datatype::TypeMap;
use crate::error::{MpiError, MpiResult, class, fail};

/// `count` elements of `map` at `base`: a send or receive buffer.
///
/// # Safety
/// As [`Buffer::new`].
pub unsafe fn user_buffer<'m>(
    base: *const c_void,
    count: std::ffi::c_int,
    map: &'m TypeMap,
) -> MpiResult<Buffer<'m>> {
    // SAFETY: this function's contract is `Buffer::new`'s.
    unsafe { Buffer::new(base, count, map) }
}

/// `count` elements of `map` at `base`: a send or receive buffer.
#[derive(Clone, Copy)]
pub struct Buffer<'m> {
    base: usize,
    count: usize,
    map: &'m TypeMap,
}

impl<'m> Buffer<'m> {
    /// A buffer; `count` must be non-negative, and `base` non-null unless it holds no data.
    ///
    /// # Safety
    /// `base` holds `count` elements of `map` (readable for a send buffer, writable for
    /// a receive buffer), and stays valid and otherwise untouched while the buffer and
    /// the slices it hands out are used.
    pub unsafe fn new(
        base: *const c_void,
        count: std::ffi::c_int,
        map: &'m TypeMap,
    ) -> MpiResult<Buffer<'m>> {
        let count = usize::try_from(count)
            .map_err(|_| MpiError::new(class::COUNT, format!("count {count} is negative")))?;
        let b = Buffer { base: base as usize, count, map };
        let bytes = b.data_len()?;
        if base.is_null() && bytes > 0 {
            return fail(class::BUFFER, "a null buffer for a non-empty message");
        }
        if map.is_contiguous() {
            // One run from `base`: it lies in the address space if its end does.
            if (base as usize).checked_add(bytes).is_none() {
                return fail(class::BUFFER, "the buffer wraps the address space");
            }
        } else if bytes > 0 {
            // Every run of every element must lie in the address space.
            b.address(count - 1, map.true_lb)?;
            b.address(count - 1, map.true_lb.saturating_add(map.true_extent))?;
            b.address(0, map.true_lb)?;
        }
        Ok(b)
    }

    /// A buffer of no elements (for arguments that are not significant).
    pub fn empty() -> Buffer<'static> {
        static BYTE: std::sync::OnceLock<TypeMap> = std::sync::OnceLock::new();
        let map = BYTE.get_or_init(|| TypeMap::basic("MPI_BYTE", crate::datatype::Prim::U8));
        Buffer { base: 0, count: 0, map }
    }

    /// Bytes of data (`count * size`).
    pub fn data_len(&self) -> MpiResult<usize> {
        self.count.checked_mul(self.map.size).ok_or_else(|| {
            MpiError::new(class::COUNT, format!("{} elements overflow a byte count", self.count))
        })
    }

    /// Elements.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The type map.
    pub fn map(&self) -> &'m TypeMap {
        self.map
    }

    /// Elements `first..first + count` of this buffer, as a buffer of their own.
    pub fn sub(&self, first: usize, count: usize) -> MpiResult<Buffer<'m>> {
        if first.checked_add(count).is_none_or(|end| end > self.count) {
            return fail(class::COUNT, format!("elements {first}..+{count} of a buffer of {}", self.count));
        }
        let base = if count == 0 { self.base } else { self.address(first, 0)? };
        Ok(Buffer { base, count, map: self.map })
    }

    /// This buffer's start with `times` times its element count: where an in-place
    /// call finds a larger input than its output (`MPI_Reduce_scatter_block`).
    pub fn widened(&self, times: usize) -> MpiResult<Buffer<'m>> {
        let count =
            self.count.checked_mul(times).ok_or_else(|| MpiError::new(class::COUNT, "count overflow"))?;
        let count =
            std::ffi::c_int::try_from(count).map_err(|_| MpiError::new(class::COUNT, "count overflow"))?;
        // SAFETY: MPI's contract for an in-place reduce-scatter: the buffer holds the
        // whole input, `times` blocks of this buffer's size.
        unsafe { Buffer::new(self.base as *const c_void, count, self.map) }
    }

    /// The first byte's address, for the contiguous case.
    pub fn base(&self) -> *mut c_void {
        self.base as *mut c_void
    }

    fn address(&self, element: usize, offset: isize) -> MpiResult<usize> {
        let overflow = || MpiError::new(class::BUFFER, "the buffer wraps the address space");
        let stride = isize::try_from(element)
            .ok()
            .and_then(|e| e.checked_mul(self.map.extent))
            .ok_or_else(overflow)?;
        let delta = stride.checked_add(offset).ok_or_else(overflow)?;
        self.base.checked_add_signed(delta).ok_or_else(overflow)
    }

    /// Whether the data is one run from `base`.
    pub fn is_contiguous(&self) -> bool {
        self.map.is_contiguous()
    }

    /// The data in type-map order: the buffer itself if contiguous, else a packed copy.
    pub fn bytes(&self) -> MpiResult<Cow<'_, [u8]>> {
        let len = self.data_len()?;
        if len == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        if self.is_contiguous() {
            // SAFETY: the caller's buffer holds `count` contiguous elements from
            // `base` (MPI's contract for a send buffer), checked non-null in `new`;
            // it is only read during the call.
            return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(self.base as *const u8, len) }));
        }
        let mut out = Vec::with_capacity(len);
        for e in 0..self.count {
            for run in &self.map.runs {
                let at = self.address(e, run.offset)?;
                // SAFETY: each run of each element lies in the caller's buffer (its
                // type map describes it); the address was computed without overflow.
                out.extend_from_slice(unsafe { std::slice::from_raw_parts(at as *const u8, run.len) });
            }
        }
        Ok(Cow::Owned(out))
    }

    /// Writes `data` (type-map order, at most `data_len` bytes) into the buffer;
    /// a partial last element is written as far as it goes.
    pub fn unpack(&self, data: &[u8]) -> MpiResult<()> {
        if data.len() > self.data_len()? {
            return fail(
                class::TRUNCATE,
                format!("{} bytes do not fit {} bytes", data.len(), self.data_len()?),
            );
        }
        if self.is_contiguous() {
            // SAFETY: the receive buffer holds `count` contiguous elements (MPI's
            // contract), non-null when non-empty; `data` is no longer than that and
            // lives in memory of its own.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.base as *mut u8, data.len()) };
            return Ok(());
        }
        let mut rest = data;
        'elements: for e in 0..self.count {
            for run in &self.map.runs {
                if rest.is_empty() {
                    break 'elements;
                }
                let n = run.len.min(rest.len());
                let at = self.address(e, run.offset)?;
                // SAFETY: as in `bytes`, for a writable receive buffer.
                unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), at as *mut u8, n) };
                rest = &rest[n..];
            }
        }
        Ok(())
    }

    /// The buffer as a mutable byte slice, when contiguous: to receive in place.
    pub fn contiguous_mut(&self) -> MpiResult<Option<&'static mut [u8]>> {
        if !self.is_contiguous() {
            return Ok(None);
        }
        let len = self.data_len()?;
        if len == 0 {
            return Ok(Some(&mut []));
        }
        // SAFETY: the receive buffer holds `len` contiguous writable bytes from `base`
        // that MPI gives to the library until the receive completes (the caller must
        // not touch it before `MPI_Wait`), which is how long the slice is used.
        Ok(Some(unsafe { std::slice::from_raw_parts_mut(self.base as *mut u8, len) }))
    }
}
