//! Datatypes: the predefined ones and the type maps that describe every datatype.
//!
//! A datatype is a [`TypeMap`]: the contiguous byte runs one element covers, relative
//! to its start, in type-map order; its size (the bytes of data), its bounds and
//! extent (the stride between consecutive elements), and, when every primitive in it
//! is of one kind, that kind ([`Prim`]), which reductions and accumulates need.
//! Predefined types are committed maps of one run.
//!
//! The table holds every live datatype by handle (`crate::handles`); predefined
//! handles are `mpi.h`'s constants, in its order.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::decode::Recipe;
use crate::error::{MpiResult, class, fail};
use crate::handles::Table;

/// `MPI_DATATYPE_NULL`: the datatype table's base.
pub const DATATYPE_NULL: c_int = 0x6000_0000;

/// A primitive value kind: what an op combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    /// `signed char`, `int8_t`.
    I8,
    /// `unsigned char`, `uint8_t`, `MPI_BYTE`.
    U8,
    /// `short`.
    I16,
    /// `unsigned short`.
    U16,
    /// `int`.
    I32,
    /// `unsigned`.
    U32,
    /// `long`, `long long`, `int64_t`, `MPI_Aint`, `MPI_Offset`, `MPI_Count`.
    I64,
    /// `unsigned long`, `unsigned long long`, `uint64_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// `_Bool` (logical ops only).
    Bool,
    /// A value and an `int` index, laid out as the C struct `{ value; int; }`
    /// (`MPI_2INT`, `MPI_DOUBLE_INT`, ...): MINLOC and MAXLOC only.
    Pair(PairValue),
}

/// The value kind of a [`Prim::Pair`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairValue {
    /// `MPI_2INT`.
    Int,
    /// `MPI_SHORT_INT`.
    Short,
    /// `MPI_LONG_INT`.
    Long,
    /// `MPI_FLOAT_INT`.
    Float,
    /// `MPI_DOUBLE_INT`.
    Double,
}

impl Prim {
    /// Bytes of data in one value (a pair's padding excluded).
    #[inline]
    pub const fn size(self) -> usize {
        match self {
            Prim::I8 | Prim::U8 | Prim::Bool => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::I64 | Prim::U64 | Prim::F64 => 8,
            Prim::Pair(v) => v.value_size() + 4,
        }
    }

    /// Where one value's data bytes sit in its C layout, in packed order: (offset,
    /// length) runs, the second empty unless the value is a pair with padding between
    /// its value and its index (`MPI_SHORT_INT`).
    pub fn c_runs(self) -> [(usize, usize); 2] {
        match self {
            Prim::Pair(v) if v.offset_of_index() > v.value_size() => {
                [(0, v.value_size()), (v.offset_of_index(), 4)]
            }
            p => [(0, p.size()), (p.size(), 0)],
        }
    }

    /// The C alignment of one value.
    pub fn align(self) -> usize {
        match self {
            Prim::Pair(v) => v.value_size().max(4),
            p => p.size(),
        }
    }
}

impl PairValue {
    /// Bytes of the value.
    pub const fn value_size(self) -> usize {
        match self {
            PairValue::Short => 2,
            PairValue::Int | PairValue::Float => 4,
            PairValue::Long | PairValue::Double => 8,
        }
    }

    /// Where the `int` index sits in the C struct.
    pub fn offset_of_index(self) -> usize {
        self.value_size().max(4)
    }
}

/// One contiguous piece of an element: `len` bytes at `offset` from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Byte offset from the element's start (may be negative).
    pub offset: isize,
    /// Bytes.
    pub len: usize,
}

/// The basic elements of one element of a type, in type-map order: runs of one
/// primitive, adjacent equal primitives merged (`MPI_Get_elements` counts them). Kept
/// only while short; a type whose signature would be longer counts whole elements only.
pub type Signature = Option<Vec<(Prim, usize)>>;

/// Longest signature kept.
const SIGNATURE_CAP: usize = 4096;

/// Everything the library needs to know about a datatype.
#[derive(Clone, Debug)]
pub struct TypeMap {
    /// `MPI_Type_get_name`'s answer.
    pub name: String,
    /// The element's data, in type-map order, adjacent runs merged.
    pub runs: Vec<Run>,
    /// Bytes of data in one element (the sum of the runs).
    pub size: usize,
    /// Lower bound.
    pub lb: isize,
    /// Extent: the stride between consecutive elements.
    pub extent: isize,
    /// The bounds of the data itself, whatever a resize said.
    pub true_lb: isize,
    /// See `true_lb`.
    pub true_extent: isize,
    /// The one primitive kind every value in the type has, if there is one.
    pub prim: Option<Prim>,
    /// Basic elements in one element.
    pub elements: usize,
    /// The basic elements in order (see [`Signature`]).
    pub signature: Signature,
    /// The strictest alignment of its primitives (what a struct's extent is rounded to).
    pub align: usize,
    /// Whether the type may be used in communication.
    pub committed: bool,
    /// Whether it is one of `mpi.h`'s types (which cannot be freed or renamed).
    pub predefined: bool,
    /// How a user type was made, for `MPI_Type_get_contents` (`None` for predefined
    /// types, which are `MPI_COMBINER_NAMED`, and for a constructor's working maps).
    pub recipe: Option<Arc<Recipe>>,
    /// Whether `count` elements are one run of `count * size` bytes from the buffer's
    /// start (kept by [`TypeMap::settled`], which every constructor ends with).
    pub(crate) contiguous: bool,
}

impl TypeMap {
    /// A predefined type: one run of `prim` (with C struct padding for pairs).
    pub fn basic(name: &str, prim: Prim) -> TypeMap {
        let size = prim.size();
        let runs: Vec<Run> = prim
            .c_runs()
            .iter()
            .filter(|r| r.1 > 0)
            .map(|&(offset, len)| Run { offset: offset as isize, len })
            .collect();
        let true_extent = runs.last().map_or(0, |r| r.offset + r.len as isize);
        let extent = (true_extent as usize).next_multiple_of(prim.align()) as isize;
        TypeMap {
            name: name.to_owned(),
            runs,
            size,
            lb: 0,
            extent,
            true_lb: 0,
            true_extent,
            prim: Some(prim),
            elements: 1,
            signature: Some(vec![(prim, 1)]),
            align: prim.align(),
            committed: true,
            predefined: true,
            recipe: None,
            contiguous: false,
        }
        .settled()
    }

    /// The map with its derived facts computed again (after its runs or bounds changed).
    pub fn settled(mut self) -> TypeMap {
        self.contiguous =
            self.runs.len() == 1 && self.runs[0].offset == 0 && self.runs[0].len as isize == self.extent
                || self.size == 0;
        self
    }

    /// Whether `count` elements are one run of `count * size` bytes from the buffer's
    /// start: the case that needs no packing.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }
}

/// `long` and `unsigned long` as the C compiler lays them out.
const LONG: (Prim, Prim) =
    if size_of::<std::ffi::c_long>() == 8 { (Prim::I64, Prim::U64) } else { (Prim::I32, Prim::U32) };

/// Predefined types in `mpi.h`'s order (handle `DATATYPE_NULL | index`, index from 1).
const PREDEFINED_LIST: [(&str, Prim); 33] = {
    use PairValue as V;
    use Prim::*;
    [
        ("MPI_CHAR", I8),
        ("MPI_SIGNED_CHAR", I8),
        ("MPI_UNSIGNED_CHAR", U8),
        ("MPI_BYTE", U8),
        ("MPI_SHORT", I16),
        ("MPI_UNSIGNED_SHORT", U16),
        ("MPI_INT", I32),
        ("MPI_UNSIGNED", U32),
        ("MPI_LONG", LONG.0),
        ("MPI_UNSIGNED_LONG", LONG.1),
        ("MPI_LONG_LONG", I64),
        ("MPI_UNSIGNED_LONG_LONG", U64),
        ("MPI_FLOAT", F32),
        ("MPI_DOUBLE", F64),
        ("MPI_INT8_T", I8),
        ("MPI_UINT8_T", U8),
        ("MPI_INT16_T", I16),
        ("MPI_UINT16_T", U16),
        ("MPI_INT32_T", I32),
        ("MPI_UINT32_T", U32),
        ("MPI_INT64_T", I64),
        ("MPI_UINT64_T", U64),
        ("MPI_AINT", I64),
        ("MPI_OFFSET", I64),
        ("MPI_COUNT", I64),
        ("MPI_2INT", Pair(V::Int)),
        ("MPI_DOUBLE_INT", Pair(V::Double)),
        ("MPI_FLOAT_INT", Pair(V::Float)),
        ("MPI_LONG_INT", Pair(V::Long)),
        ("MPI_SHORT_INT", Pair(V::Short)),
        ("MPI_C_BOOL", Bool),
        ("MPI_WCHAR", I32),
        ("MPI_PACKED", U8),
    ]
};

fn predefined() -> Vec<TypeMap> {
    PREDEFINED_LIST.iter().map(|&(name, prim)| TypeMap::basic(name, prim)).collect()
}

/// The primitive of a predefined type whose elements are one run each (no C struct
/// padding: a pair whose index follows its 4-byte value directly), `None` for the
/// others: what the hot paths need, in a constant table (no lazy initialization to
/// test on every call).
pub(crate) const CONTIGUOUS_PRIMS: [Option<Prim>; 33] = {
    let mut out = [None; 33];
    let mut i = 0;
    while i < out.len() {
        let prim = PREDEFINED_LIST[i].1;
        out[i] = match prim {
            Prim::Pair(v) if v.value_size() != 4 => None,
            _ => Some(prim),
        };
        i += 1;
    }
    out
};

/// Bytes of one element of each type of [`CONTIGUOUS_PRIMS`] (0 where `None`), so that
/// the hot paths read a size rather than compute one.
const CONTIGUOUS_SIZES: [u8; 33] = {
    let mut out = [0; 33];
    let mut i = 0;
    while i < out.len() {
        if let Some(prim) = CONTIGUOUS_PRIMS[i] {
            out[i] = prim.size() as u8;
        }
        i += 1;
    }
    out
};

/// The index of predefined type `handle` in the tables above.
#[inline(always)]
pub(crate) fn predefined_index(handle: c_int) -> usize {
    (handle as u32).wrapping_sub(DATATYPE_NULL as u32).wrapping_sub(1) as usize
}

/// The primitive of predefined type `handle` if its elements are one run each (so that
/// `count` elements are `count * size` contiguous bytes); `None` for any other handle.
#[inline(always)]
pub fn contiguous_prim(handle: c_int) -> Option<Prim> {
    *CONTIGUOUS_PRIMS.get(predefined_index(handle))?
}

/// The element size of predefined type `handle` if its elements are one run each (as
/// [`contiguous_prim`]); `None` for any other handle.
#[inline(always)]
pub fn contiguous_size(handle: c_int) -> Option<usize> {
    match CONTIGUOUS_SIZES.get(predefined_index(handle)) {
        Some(&size) if size > 0 => Some(size as usize),
        _ => None,
    }
}

/// The predefined types, by index (handle `DATATYPE_NULL | index`, from 1): looked up
/// without a lock, since nearly every call names one.
static PREDEFINED: std::sync::LazyLock<Vec<TypeMap>> = std::sync::LazyLock::new(predefined);

/// User datatypes (their handles come after the predefined ones').
static TYPES: Mutex<Table<Arc<TypeMap>>> = Mutex::new(Table::new(DATATYPE_NULL));

fn table() -> MutexGuard<'static, Table<Arc<TypeMap>>> {
    let mut t = TYPES.lock().unwrap_or_else(|p| p.into_inner());
    if !t.is_predefined(DATATYPE_NULL | PREDEFINED.len() as c_int) {
        // Reserve the predefined handles, so that user handles come after them.
        for map in PREDEFINED.iter() {
            t.predefine(Arc::new(map.clone()));
        }
    }
    t
}

/// A datatype's map: a predefined one, or a user type's (kept alive by operations
/// started with it, should the type be freed meanwhile).
#[derive(Clone, Debug)]
pub enum TypeRef {
    /// A predefined type.
    Predefined(&'static TypeMap),
    /// A user type.
    User(Arc<TypeMap>),
}

impl std::ops::Deref for TypeRef {
    type Target = TypeMap;
    #[inline]
    fn deref(&self) -> &TypeMap {
        match self {
            TypeRef::Predefined(m) => m,
            TypeRef::User(m) => m,
        }
    }
}

/// The map of a predefined type (`None` for any other handle): the fast paths' lookup.
#[inline]
pub fn predefined_map(handle: c_int) -> Option<&'static TypeMap> {
    let index = (handle as u32).wrapping_sub(DATATYPE_NULL as u32) as usize;
    PREDEFINED.get(index.checked_sub(1)?)
}

/// The type map `handle` names, whether committed or not.
#[inline]
pub fn lookup(handle: c_int) -> MpiResult<TypeRef> {
    if let Some(map) = predefined_map(handle) {
        return Ok(TypeRef::Predefined(map));
    }
    if handle == DATATYPE_NULL {
        return fail(class::TYPE, "MPI_DATATYPE_NULL is not a datatype");
    }
    match table().get(handle) {
        Some(map) => Ok(TypeRef::User(map.clone())),
        None => fail(class::TYPE, format!("{handle:#x} is not a datatype handle")),
    }
}

/// The type map `handle` names, which must be committed: for communication.
#[inline]
pub fn committed(handle: c_int) -> MpiResult<TypeRef> {
    let map = lookup(handle)?;
    if !map.committed {
        return fail(class::TYPE, format!("datatype {} is not committed", map.name));
    }
    Ok(map)
}

/// Basic elements in the first `bytes` bytes of data of `map`, as `MPI_Get_elements`
/// counts them: `None` if the bytes end inside a basic element, or inside an element
/// whose signature was too long to keep.
pub fn elements_in(map: &TypeMap, bytes: usize) -> Option<usize> {
    if map.size == 0 {
        return Some(0);
    }
    let (whole, mut rest) = (bytes / map.size, bytes % map.size);
    let mut count = whole * map.elements;
    if rest == 0 {
        return Some(count);
    }
    for &(prim, n) in map.signature.as_ref()? {
        let run = prim.size() * n;
        if rest < run {
            return (rest % prim.size() == 0).then(|| count + rest / prim.size());
        }
        count += n;
        rest -= run;
    }
    Some(count)
}

/// Appends `times` copies of `unit` to `sig` (merging equal neighbours); `None` once
/// it grows past [`SIGNATURE_CAP`].
pub(crate) fn repeat_signature(sig: &mut Signature, unit: &Signature, times: usize) {
    let (Some(out), Some(unit)) = (sig.as_mut(), unit.as_ref()) else {
        *sig = None;
        return;
    };
    if let [(prim, n)] = unit.as_slice() {
        push_run(out, *prim, n * times);
    } else if out.len() + unit.len().saturating_mul(times) > SIGNATURE_CAP {
        *sig = None;
        return;
    } else {
        for _ in 0..times {
            for &(prim, n) in unit {
                push_run(out, prim, n);
            }
        }
    }
    if out.len() > SIGNATURE_CAP {
        *sig = None;
    }
}

fn push_run(out: &mut Vec<(Prim, usize)>, prim: Prim, n: usize) {
    match out.last_mut() {
        Some((p, m)) if *p == prim => *m += n,
        _ if n > 0 => out.push((prim, n)),
        _ => {}
    }
}

/// Stores a user datatype under a new handle: a new type (`decode::store`, which says
/// how it was made), or a type a decoded one was built from (`MPI_Type_get_contents`).
pub fn insert(map: Arc<TypeMap>) -> c_int {
    table().insert(map)
}

/// Replaces the type map of a user datatype (commit, rename).
pub fn update(handle: c_int, f: impl FnOnce(&mut TypeMap)) -> MpiResult<()> {
    let mut t = table();
    let Some(map) = t.get_mut(handle) else {
        return fail(class::TYPE, format!("{handle:#x} is not a datatype handle"));
    };
    f(Arc::make_mut(map));
    Ok(())
}

/// Frees a user datatype.
pub fn free(handle: c_int) -> MpiResult<()> {
    if lookup(handle)?.predefined {
        return fail(class::TYPE, "a predefined datatype cannot be freed");
    }
    table().remove(handle).map(drop).ok_or_else(|| crate::error::MpiError::new(class::TYPE, "already freed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_types_have_c_sizes_and_extents() {
        let int = committed(DATATYPE_NULL | 7).unwrap();
        assert_eq!((int.name.as_str(), int.size, int.extent), ("MPI_INT", 4, 4));
        let double_int = committed(DATATYPE_NULL | 0x1b).unwrap();
        assert_eq!((double_int.size, double_int.extent), (12, 16), "C pads struct {{double; int;}} to 16");
        let short_int = predefined().into_iter().find(|t| t.name == "MPI_SHORT_INT").unwrap();
        assert_eq!(
            (short_int.size, short_int.extent, short_int.runs.len()),
            (6, 8, 2),
            "a short, 2 bytes of padding, an int"
        );
        assert!(lookup(DATATYPE_NULL).is_err());
        // The fast paths' constant tables agree with the type maps.
        for (i, map) in predefined().iter().enumerate() {
            let handle = DATATYPE_NULL | (i as c_int + 1);
            let fast = contiguous_prim(handle);
            assert_eq!(fast.is_some(), map.is_contiguous(), "{}", map.name);
            assert_eq!(contiguous_size(handle), fast.map(|_| map.size), "{}", map.name);
            assert!(fast.is_none_or(|p| Some(p) == map.prim), "{}", map.name);
        }
        assert_eq!(contiguous_prim(DATATYPE_NULL), None);
        assert_eq!(contiguous_size(DATATYPE_NULL | 34), None);
        assert!(lookup(0x4400_0001).is_err(), "a communicator is not a datatype");
    }
}
