//! Derived datatypes: the type maps of `MPI_Type_contiguous`, `_vector`,
//! `_create_hvector`, `_indexed`, `_create_hindexed`, `_create_struct`,
//! `_create_subarray` and `_create_resized`.
//!
//! Every constructor is one general rule: the new type is a list of *blocks*, each
//! `count` consecutive elements of some old type starting `disp` bytes from the new
//! element's start ([`from_blocks`]). Its data runs are the old types' runs, shifted,
//! in block order (adjacent runs merged); its size is the sum of the blocks' data; its
//! bounds are MPI's: `lb` is the least block start plus its type's `lb`, `ub` the
//! greatest block end, and a struct's extent is rounded up to the strictest alignment
//! of its members, as C pads a struct (the standard's epsilon). Resizing only
//! replaces `lb` and the extent. Nothing is committed: `MPI_Type_commit` does that.
//!
//! Arithmetic is checked: a displacement or count that overflows the address space
//! is `MPI_ERR_ARG` (or `MPI_ERR_COUNT`), not a wrapped type.

use std::ffi::c_int;

use crate::datatype::{Run, Signature, TypeMap, repeat_signature};
use crate::error::{MpiError, MpiResult, class, fail};

/// `count` elements of `map`, `disp` bytes into the new element.
pub struct Block<'m> {
    /// Bytes from the new element's start.
    pub disp: isize,
    /// Elements of the old type.
    pub count: usize,
    /// The old type.
    pub map: &'m TypeMap,
}

fn overflow() -> MpiError {
    MpiError::new(class::ARG, "the datatype's displacements overflow the address space")
}

/// A non-negative count argument.
pub fn count_arg(n: c_int, what: &str) -> MpiResult<usize> {
    usize::try_from(n).map_err(|_| MpiError::new(class::COUNT, format!("{what} {n} is negative")))
}

/// The type whose element is `blocks` (module docs); `is_struct` rounds the extent to
/// the members' alignment.
pub fn from_blocks(blocks: &[Block<'_>], is_struct: bool) -> MpiResult<TypeMap> {
    let mut runs: Vec<Run> = Vec::new();
    let mut size = 0usize;
    let mut elements = 0usize;
    let mut signature: Signature = Some(Vec::new());
    let (mut lb, mut ub) = (None::<isize>, None::<isize>);
    let (mut true_lb, mut true_ub) = (None::<isize>, None::<isize>);
    let mut align = 1;
    let mut prim = None;
    let mut mixed = false;
    for b in blocks.iter().filter(|b| b.count > 0) {
        let m = b.map;
        let n = isize::try_from(b.count).map_err(|_| overflow())?;
        let span = m.extent.checked_mul(n - 1).ok_or_else(overflow)?;
        // Bounds of the block: from its first element's lb to its last element's ub.
        let first_lb = b.disp.checked_add(m.lb).ok_or_else(overflow)?;
        let last_ub =
            first_lb.checked_add(span).and_then(|x| x.checked_add(m.extent)).ok_or_else(overflow)?;
        // Extents are never negative (`resized` refuses them, and ub >= lb here), so a
        // block's first element starts lowest and its last ends highest.
        lb = Some(lb.map_or(first_lb, |l| l.min(first_lb)));
        ub = Some(ub.map_or(last_ub, |u| u.max(last_ub)));
        let first_true = b.disp.checked_add(m.true_lb).ok_or_else(overflow)?;
        let true_end =
            first_true.checked_add(span).and_then(|x| x.checked_add(m.true_extent)).ok_or_else(overflow)?;
        true_lb = Some(true_lb.map_or(first_true, |l| l.min(first_true)));
        true_ub = Some(true_ub.map_or(true_end, |u| u.max(true_end)));
        for i in 0..n {
            let base =
                b.disp.checked_add(m.extent.checked_mul(i).ok_or_else(overflow)?).ok_or_else(overflow)?;
            for r in &m.runs {
                let offset = base.checked_add(r.offset).ok_or_else(overflow)?;
                match runs.last_mut() {
                    Some(last) if last.offset + last.len as isize == offset => last.len += r.len,
                    _ => runs.push(Run { offset, len: r.len }),
                }
            }
        }
        size = m.size.checked_mul(b.count).and_then(|s| s.checked_add(size)).ok_or_else(overflow)?;
        elements += m.elements * b.count;
        repeat_signature(&mut signature, &m.signature, b.count);
        align = align.max(m.align);
        match (prim, m.prim) {
            (_, None) => mixed = true,
            (None, Some(p)) => prim = Some(p),
            (Some(p), Some(q)) if p != q => mixed = true,
            _ => {}
        }
    }
    let (lb, ub) = (lb.unwrap_or(0), ub.unwrap_or(0));
    let mut extent = ub.checked_sub(lb).ok_or_else(overflow)?;
    if is_struct && extent > 0 {
        extent = (extent as usize).next_multiple_of(align) as isize;
    }
    let (true_lb, true_ub) = (true_lb.unwrap_or(0), true_ub.unwrap_or(0));
    Ok(TypeMap {
        // Constructed types have no name until `MPI_Type_set_name` gives one.
        name: String::new(),
        runs,
        size,
        lb,
        extent,
        true_lb,
        true_extent: true_ub - true_lb,
        prim: if mixed { None } else { prim },
        elements,
        signature,
        align,
        committed: false,
        predefined: false,
        recipe: None,
        contiguous: false,
    }
    .settled())
}

/// `MPI_Type_contiguous`.
pub fn contiguous(count: usize, old: &TypeMap) -> MpiResult<TypeMap> {
    from_blocks(&[Block { disp: 0, count, map: old }], false)
}

/// `MPI_Type_vector` (`stride` in elements of `old`) and `MPI_Type_create_hvector`
/// (`stride` in bytes, `bytes` true).
pub fn vector(
    count: usize,
    blocklen: usize,
    stride: isize,
    bytes: bool,
    old: &TypeMap,
) -> MpiResult<TypeMap> {
    let step = if bytes { stride } else { stride.checked_mul(old.extent).ok_or_else(overflow)? };
    let blocks: MpiResult<Vec<Block<'_>>> = (0..count)
        .map(|i| {
            let disp = step.checked_mul(i as isize).ok_or_else(overflow)?;
            Ok(Block { disp, count: blocklen, map: old })
        })
        .collect();
    from_blocks(&blocks?, false)
}

/// `MPI_Type_indexed` (`disps` in elements of `old`) and `MPI_Type_create_hindexed`
/// (`disps` in bytes, `bytes` true).
pub fn indexed(blocklens: &[c_int], disps: &[isize], bytes: bool, old: &TypeMap) -> MpiResult<TypeMap> {
    let blocks: MpiResult<Vec<Block<'_>>> = blocklens
        .iter()
        .zip(disps)
        .map(|(&len, &d)| {
            let disp = if bytes { d } else { d.checked_mul(old.extent).ok_or_else(overflow)? };
            Ok(Block { disp, count: count_arg(len, "block length")?, map: old })
        })
        .collect();
    from_blocks(&blocks?, false)
}

/// `MPI_Type_create_struct`.
pub fn structure(blocklens: &[c_int], disps: &[isize], types: &[&TypeMap]) -> MpiResult<TypeMap> {
    let blocks: MpiResult<Vec<Block<'_>>> = blocklens
        .iter()
        .zip(disps)
        .zip(types)
        .map(|((&len, &disp), map)| Ok(Block { disp, count: count_arg(len, "block length")?, map }))
        .collect();
    from_blocks(&blocks?, true)
}

/// The storage order of `MPI_Type_create_subarray`'s array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `MPI_ORDER_C`: the last dimension varies fastest.
    C,
    /// `MPI_ORDER_FORTRAN`: the first dimension varies fastest.
    Fortran,
}

/// `MPI_Type_create_subarray`: the `subsizes` box at `starts` of an array of `sizes`
/// elements of `old`, as the standard builds it: one hvector per dimension, from the
/// fastest outwards, placed at the box's first element, then resized to the whole
/// array (lower bound 0, extent the array's bytes), so that consecutive elements of
/// the type are consecutive arrays.
pub fn subarray(
    sizes: &[c_int],
    subsizes: &[c_int],
    starts: &[c_int],
    order: Order,
    old: &TypeMap,
) -> MpiResult<TypeMap> {
    if sizes.is_empty() {
        return fail(class::DIMS, "a subarray needs at least one dimension");
    }
    let mut dims = Vec::with_capacity(sizes.len());
    for (d, ((&size, &sub), &start)) in sizes.iter().zip(subsizes).zip(starts).enumerate() {
        if size < 1 || sub < 1 || sub > size || start < 0 || start > size - sub {
            return fail(
                class::ARG,
                format!(
                    "dimension {d}: subsize {sub} at start {start} does not fit size {size} (subsizes are at least 1)"
                ),
            );
        }
        dims.push((size as isize, sub as usize, start as isize));
    }
    if order == Order::C {
        dims.reverse();
    }
    // From the fastest dimension: `stride` is the bytes between consecutive indices of
    // the current dimension, `first` the bytes to the box's first element.
    let (mut map, mut stride, mut first) = (old.clone(), old.extent, 0isize);
    for &(size, sub, start) in &dims {
        map = vector(sub, 1, stride, true, &map)?;
        first = start.checked_mul(stride).and_then(|x| x.checked_add(first)).ok_or_else(overflow)?;
        stride = stride.checked_mul(size).ok_or_else(overflow)?;
    }
    let placed = from_blocks(&[Block { disp: first, count: 1, map: &map }], false)?;
    resized(&placed, 0, stride)
}

/// `MPI_Type_create_resized`.
pub fn resized(old: &TypeMap, lb: isize, extent: isize) -> MpiResult<TypeMap> {
    if extent < 0 {
        return fail(class::ARG, format!("extent {extent} is negative"));
    }
    let fresh =
        TypeMap { name: String::new(), committed: false, predefined: false, recipe: None, ..old.clone() };
    Ok(TypeMap { lb, extent, ..fresh }.settled())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{Prim, elements_in};

    fn int() -> TypeMap {
        TypeMap::basic("MPI_INT", Prim::I32)
    }

    #[test]
    fn vector_of_ints_has_the_standards_bounds() {
        // 3 blocks of 2 ints, stride 4 ints: data at 0..8, 16..24, 32..40.
        let v = vector(3, 2, 4, false, &int()).unwrap();
        assert_eq!(
            v.runs,
            [Run { offset: 0, len: 8 }, Run { offset: 16, len: 8 }, Run { offset: 32, len: 8 }]
        );
        assert_eq!((v.size, v.lb, v.extent, v.elements, v.prim), (24, 0, 40, 6, Some(Prim::I32)));
        let c = contiguous(4, &int()).unwrap();
        assert_eq!(c.runs, [Run { offset: 0, len: 16 }], "adjacent runs merge");
        assert!(c.is_contiguous());
    }

    #[test]
    fn struct_extent_is_padded_like_c() {
        let double = TypeMap::basic("MPI_DOUBLE", Prim::F64);
        let ch = TypeMap::basic("MPI_CHAR", Prim::I8);
        // struct { int i; double d; char c[3]; }: offsets 0, 8, 16; C size 24.
        let s = structure(&[1, 1, 3], &[0, 8, 16], &[&int(), &double, &ch]).unwrap();
        assert_eq!((s.size, s.lb, s.extent, s.true_extent, s.prim), (15, 0, 24, 19, None));
        assert_eq!(s.signature.as_deref(), Some(&[(Prim::I32, 1), (Prim::F64, 1), (Prim::I8, 3)][..]));
        assert_eq!(elements_in(&s, 15 + 12), Some(5 + 2), "one whole struct, then an int and a double");
        assert_eq!(elements_in(&s, 15 + 6), None, "ends inside the double");
    }

    #[test]
    fn subarray_is_the_box_inside_the_whole_array() {
        // A 4x5 C array of ints; the 2x3 box at (1, 2): rows 1 and 2, columns 2..5.
        let c = subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, &int()).unwrap();
        assert_eq!(c.runs, [Run { offset: 28, len: 12 }, Run { offset: 48, len: 12 }]);
        assert_eq!((c.size, c.lb, c.extent), (24, 0, 80));
        // The same in Fortran order: the first index varies fastest.
        let f = subarray(&[4, 5], &[2, 3], &[1, 2], Order::Fortran, &int()).unwrap();
        let fortran_runs: Vec<Run> = (2..5).map(|col| Run { offset: (col * 4 + 1) * 4, len: 8 }).collect();
        assert_eq!(f.runs, fortran_runs);
        assert_eq!((f.size, f.extent), (24, 80));
        assert!(subarray(&[4], &[3], &[2], Order::C, &int()).is_err(), "past the end");
        assert!(subarray(&[4], &[0], &[0], Order::C, &int()).is_err(), "empty box");
        assert!(subarray(&[], &[], &[], Order::C, &int()).is_err());
    }

    #[test]
    fn resized_and_negative_strides() {
        let r = resized(&int(), -4, 16).unwrap();
        assert_eq!((r.lb, r.extent, r.size), (-4, 16, 4));
        let v = vector(2, 1, -3, false, &int()).unwrap();
        assert_eq!((v.lb, v.extent), (-12, 16));
        assert!(vector(2, 1, isize::MAX, true, &int()).is_err());
        let h = indexed(&[1, 2], &[8, 0], true, &int()).unwrap();
        assert_eq!((h.lb, h.extent, h.size), (0, 12, 12));
    }
}
