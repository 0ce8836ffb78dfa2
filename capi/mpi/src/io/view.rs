//! File views (MPI 3.1 section 13.3): which bytes of a file a process sees, and how
//! the offsets of a view (counted in etypes) map to bytes of the file.
//!
//! A view is a displacement `disp`, an elementary type (etype) and a filetype whose
//! type map is made of etypes, possibly with holes. The filetype is tiled from
//! `disp`: tile `t` starts at file byte `disp + t * extent`, and its data are the
//! filetype's runs at their offsets from there. The view's data stream is the data of
//! the tiles in order; view offset `k` (in etypes) is byte `k * etype_size` of it.
//!
//! Invariants (checked by [`View::new`]): the filetype has data (`size > 0`), its size
//! is a whole number of etypes, its runs lie in `[0, extent)` in increasing order
//! without overlap (MPI requires non-negative, monotonically nondecreasing
//! displacements), so that the stream's bytes map to increasing file bytes and
//! [`View::segments`] yields them in file order.

use std::ffi::c_int;

use crate::datatype::{self, TypeRef};
use crate::error::{MpiError, MpiResult, class, fail};

/// `MPI_BYTE`'s handle (mpi.h).
const BYTE: c_int = datatype::DATATYPE_NULL | 4;

/// A process's view of a file.
#[derive(Clone, Debug)]
pub struct View {
    /// Bytes from the file's start to the first tile.
    pub disp: u64,
    /// The etype and its handle as the program gave it.
    pub etype: (TypeRef, c_int),
    /// The filetype and its handle as the program gave it.
    pub filetype: (TypeRef, c_int),
    /// Data bytes before each run of the filetype, in one tile.
    prefix: Vec<u64>,
}

fn overflow() -> MpiError {
    MpiError::new(class::ARG, "the offset is too large for a file offset")
}

impl View {
    /// The default view: displacement 0, etype and filetype `MPI_BYTE`.
    pub fn default_view() -> View {
        let byte = datatype::lookup(BYTE).expect("MPI_BYTE is predefined");
        View::new(0, (byte.clone(), BYTE), (byte, BYTE)).expect("the byte view is valid")
    }

    /// A view, if the types make one (see the module's invariants).
    pub fn new(disp: u64, etype: (TypeRef, c_int), filetype: (TypeRef, c_int)) -> MpiResult<View> {
        let (e, f) = (&etype.0, &filetype.0);
        if e.size == 0 {
            return fail(class::TYPE, format!("etype {} holds no data", e.name));
        }
        if f.size == 0 || f.size % e.size != 0 {
            return fail(
                class::TYPE,
                format!(
                    "filetype {} ({} bytes) is not made of etypes {} ({} bytes)",
                    f.name, f.size, e.name, e.size
                ),
            );
        }
        let mut prefix = Vec::with_capacity(f.runs.len());
        let (mut end, mut sum) = (0isize, 0u64);
        for run in &f.runs {
            if run.offset < end {
                return fail(
                    class::TYPE,
                    format!("filetype {}: displacements must be non-negative and increasing", f.name),
                );
            }
            prefix.push(sum);
            sum += run.len as u64;
            end = run.offset + run.len as isize;
        }
        if end > f.extent {
            return fail(class::TYPE, format!("filetype {}: data beyond its extent", f.name));
        }
        Ok(View { disp, etype, filetype, prefix })
    }

    /// Bytes of one etype.
    pub fn etype_size(&self) -> u64 {
        self.etype.0.size as u64
    }

    /// Whether the view sees the file's bytes from `disp` on without holes.
    fn is_plain(&self) -> bool {
        let f = &self.filetype.0;
        f.runs.len() == 1 && f.runs[0].offset == 0 && f.runs[0].len as isize == f.extent
    }

    /// The run of a tile holding data byte `q` of the tile: its index.
    fn run_of(&self, q: u64) -> usize {
        self.prefix.partition_point(|&p| p <= q) - 1
    }

    /// The file byte of byte `pos` of the view's data stream.
    pub fn file_byte(&self, pos: u64) -> MpiResult<u64> {
        let f = &self.filetype.0;
        let (size, extent) = (f.size as u64, f.extent as u64);
        let (t, q) = (pos / size, pos % size);
        let i = self.run_of(q);
        t.checked_mul(extent)
            .and_then(|b| b.checked_add(self.disp))
            .and_then(|b| b.checked_add(f.runs[i].offset as u64 + (q - self.prefix[i])))
            .ok_or_else(overflow)
    }

    /// The file byte just after stream byte `pos - 1` (the start of the file's part
    /// holding stream bytes from `pos` on, or the end of the data before it when the
    /// stream stops there): where a view that follows the data read or written so far
    /// begins.
    pub fn stream_byte_end(&self, pos: u64) -> MpiResult<u64> {
        match pos.checked_sub(1) {
            None => Ok(self.disp),
            Some(last) => Ok(self.file_byte(last)? + 1),
        }
    }

    /// The file's pieces holding bytes `pos..pos + len` of the data stream, in order:
    /// `(file offset, length)`, adjacent pieces merged.
    pub fn segments(&self, pos: u64, len: usize) -> MpiResult<Vec<(u64, usize)>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        if self.is_plain() {
            let at = self.disp.checked_add(pos).ok_or_else(overflow)?;
            at.checked_add(len as u64).ok_or_else(overflow)?;
            return Ok(vec![(at, len)]);
        }
        let f = &self.filetype.0;
        let (size, extent) = (f.size as u64, f.extent as u64);
        let (mut t, mut q) = (pos / size, pos % size);
        let mut rest = len;
        let mut out: Vec<(u64, usize)> = Vec::new();
        while rest > 0 {
            let i = self.run_of(q);
            let within = q - self.prefix[i];
            let n = (f.runs[i].len - within as usize).min(rest);
            let at = t
                .checked_mul(extent)
                .and_then(|b| b.checked_add(self.disp))
                .and_then(|b| b.checked_add(f.runs[i].offset as u64 + within))
                .ok_or_else(overflow)?;
            match out.last_mut() {
                Some((o, l)) if *o + *l as u64 == at => *l += n,
                _ => out.push((at, n)),
            }
            rest -= n;
            q += n as u64;
            if q == size {
                t += 1;
                q = 0;
            }
        }
        Ok(out)
    }

    /// Bytes of the data stream that lie below file byte `len` (a file's size).
    pub fn stream_below(&self, len: u64) -> u64 {
        let Some(rel) = len.checked_sub(self.disp) else { return 0 };
        let f = &self.filetype.0;
        let (t, r) = (rel / f.extent as u64, rel % f.extent as u64);
        let partial: u64 =
            f.runs.iter().map(|run| r.saturating_sub(run.offset as u64).min(run.len as u64)).sum();
        t * f.size as u64 + partial
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::View;
    use crate::datatype::{Prim, TypeMap, TypeRef};
    use crate::derived::{resized, vector};

    fn int() -> TypeMap {
        TypeMap::basic("MPI_INT", Prim::I32)
    }

    /// Blocks of `b` ints, two per tile, `n` ranks interleaved: rank `r`'s view.
    fn interleaved(b: usize, n: usize, r: u64) -> View {
        let v = vector(2, b, (b * n) as isize, false, &int()).unwrap();
        let t = resized(&v, 0, (2 * b * n * 4) as isize).unwrap();
        let user = |m: TypeMap| (TypeRef::User(Arc::new(m)), 0);
        View::new(8 + r * b as u64 * 4, user(int()), user(t)).unwrap()
    }

    /// The file byte of each stream byte, one at a time, against the pieces.
    fn expand(pieces: &[(u64, usize)]) -> Vec<u64> {
        pieces.iter().flat_map(|&(at, n)| (0..n as u64).map(move |i| at + i)).collect()
    }

    #[test]
    fn an_interleaved_view_maps_its_stream_through_the_tiles() {
        let (b, n) = (3usize, 4usize);
        let view = interleaved(b, n, 1);
        // Stream int j of rank 1: block j / b (of the rank's), tile block / 2.
        let want = |j: u64| {
            let (block, within) = (j / b as u64, j % b as u64);
            8 + 4 * ((block * n as u64 + 1) * b as u64 + within)
        };
        for start in [0u64, 4, 12, 20, 44] {
            let pieces = view.segments(start, 40).unwrap();
            let bytes = expand(&pieces);
            assert_eq!(bytes.len(), 40);
            for (k, &at) in bytes.iter().enumerate() {
                let pos = start + k as u64;
                assert_eq!(at, want(pos / 4) + pos % 4, "stream byte {pos}");
                assert_eq!(view.file_byte(pos).unwrap(), at);
            }
            // Pieces are in file order and merged: each a whole block at most.
            assert!(pieces.windows(2).all(|w| w[0].0 + (w[0].1 as u64) < w[1].0));
            assert!(pieces.iter().all(|&(_, len)| len <= b * 4));
        }
    }

    #[test]
    fn the_stream_below_a_size_counts_only_the_views_bytes() {
        let (b, n) = (3usize, 4usize);
        let view = interleaved(b, n, 1);
        assert_eq!(view.stream_below(0), 0);
        assert_eq!(view.stream_below(8 + 12), 0, "the view starts at its displacement");
        assert_eq!(view.stream_below(8 + 12 + 5), 5);
        assert_eq!(view.stream_below(8 + 12 + 40), 12, "one block, then a hole");
        assert_eq!(view.stream_below(8 + 12 + 100), 28, "two blocks, a hole, part of the next tile");
        let tile = (2 * b * n * 4) as u64;
        assert_eq!(view.stream_below(8 + 12 + tile), 24, "two blocks per tile");
    }

    #[test]
    fn a_plain_view_is_one_piece_and_bad_filetypes_are_refused() {
        let byte = || (TypeRef::User(Arc::new(TypeMap::basic("MPI_BYTE", Prim::U8))), 0);
        let view = View::new(100, byte(), byte()).unwrap();
        assert_eq!(view.segments(5, 1000).unwrap(), vec![(105, 1000)]);
        assert_eq!(view.file_byte(7).unwrap(), 107);
        let short = || (TypeRef::User(Arc::new(TypeMap::basic("MPI_SHORT", Prim::I16))), 0);
        assert!(View::new(0, (TypeRef::User(Arc::new(int())), 0), short()).is_err(), "not made of etypes");
        let mut backwards = vector(2, 1, -2, false, &int()).unwrap();
        backwards.runs.sort_by_key(|r| -r.offset);
        assert!(
            View::new(0, (TypeRef::User(Arc::new(int())), 0), (TypeRef::User(Arc::new(backwards)), 0))
                .is_err()
        );
    }
}
