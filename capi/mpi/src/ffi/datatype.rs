//! Datatype calls: constructors, commit and free, and the queries.

use std::ffi::{c_char, c_int, c_void};

use crate::datatype::{self, DATATYPE_NULL, TypeMap};
use crate::decode::{self, Recipe, TypeArg};
use crate::derived::{self, count_arg};
use crate::error::{MpiResult, class, fail};
use crate::ffi::attr::type_keyval;
use crate::ffi::{WORLD, c, entry};

/// Stores `map`, made as `recipe` says (for `MPI_Type_get_contents`), and writes its
/// handle through `newtype`.
pub(super) fn new_type(map: MpiResult<TypeMap>, recipe: Recipe, newtype: *mut c_int) -> MpiResult<()> {
    let handle = decode::store(map?, recipe);
    c!(out(newtype, handle, "newtype"))
}

/// `MPI_Type_contiguous`.
///
/// # Safety
/// `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_contiguous")]
pub unsafe extern "C" fn MPI_Type_contiguous(count: c_int, oldtype: c_int, newtype: *mut c_int) -> c_int {
    entry("MPI_Type_contiguous", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let recipe = Recipe::contiguous(count, TypeArg::of(oldtype, &old));
        new_type(derived::contiguous(count_arg(count, "count")?, &old), recipe, newtype)
    })
}

/// `MPI_Type_vector`.
///
/// # Safety
/// `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_vector")]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_vector", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let recipe = Recipe::vector(count, blocklength, stride, TypeArg::of(oldtype, &old));
        let (count, len) = (count_arg(count, "count")?, count_arg(blocklength, "block length")?);
        new_type(derived::vector(count, len, stride as isize, false, &old), recipe, newtype)
    })
}

/// `MPI_Type_create_hvector`.
///
/// # Safety
/// `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_hvector")]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_hvector", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let recipe = Recipe::hvector(count, blocklength, stride, TypeArg::of(oldtype, &old));
        let (count, len) = (count_arg(count, "count")?, count_arg(blocklength, "block length")?);
        new_type(derived::vector(count, len, stride, true, &old), recipe, newtype)
    })
}

/// The four indexed constructors share this: `bytes` says whether the displacements
/// are bytes; `recipe` makes the caller's recipe from its old type.
fn indexed(
    lens: &[c_int],
    disps: Vec<isize>,
    oldtype: c_int,
    newtype: *mut c_int,
    bytes: bool,
    recipe: impl FnOnce(TypeArg) -> Recipe,
) -> MpiResult<()> {
    let old = datatype::lookup(oldtype)?;
    let recipe = recipe(TypeArg::of(oldtype, &old));
    new_type(derived::indexed(lens, &disps, bytes, &old), recipe, newtype)
}

/// `MPI_Type_indexed`.
///
/// # Safety
/// The arrays hold `count` ints; `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_indexed")]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_indexed", WORLD, || {
        let int_disps = c!(array(array_of_displacements, count, "array_of_displacements"))?;
        let disps = int_disps.iter().map(|&d| d as isize).collect();
        let lens = c!(array(array_of_blocklengths, count, "array_of_blocklengths"))?;
        indexed(lens, disps, oldtype, newtype, false, |old| Recipe::indexed(lens, int_disps, old))
    })
}

/// `MPI_Type_create_hindexed`.
///
/// # Safety
/// The arrays hold `count` values; `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_hindexed")]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const isize,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_hindexed", WORLD, || {
        let disps = c!(array(array_of_displacements, count, "array_of_displacements"))?;
        let lens = c!(array(array_of_blocklengths, count, "array_of_blocklengths"))?;
        indexed(lens, disps.to_vec(), oldtype, newtype, true, |old| Recipe::hindexed(lens, disps, old))
    })
}

/// `MPI_Type_create_indexed_block`: `MPI_Type_indexed` with one block length.
///
/// # Safety
/// `array_of_displacements` holds `count` ints; `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_indexed_block")]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_indexed_block", WORLD, || {
        let disps = c!(array(array_of_displacements, count, "array_of_displacements"))?;
        let lens = vec![blocklength; disps.len()];
        let recipe = |old| Recipe::indexed_block(blocklength, disps, old);
        indexed(&lens, disps.iter().map(|&d| d as isize).collect(), oldtype, newtype, false, recipe)
    })
}

/// `MPI_Type_create_hindexed_block`: `MPI_Type_create_hindexed` with one block length.
///
/// # Safety
/// `array_of_displacements` holds `count` values; `newtype` points to an
/// `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_hindexed_block")]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const isize,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_hindexed_block", WORLD, || {
        let disps = c!(array(array_of_displacements, count, "array_of_displacements"))?;
        let lens = vec![blocklength; disps.len()];
        let recipe = |old| Recipe::hindexed_block(blocklength, disps, old);
        indexed(&lens, disps.to_vec(), oldtype, newtype, true, recipe)
    })
}

/// `MPI_Type_create_struct`.
///
/// # Safety
/// The arrays hold `count` values; `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_struct")]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const isize,
    array_of_types: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_struct", WORLD, || {
        let lens = c!(array(array_of_blocklengths, count, "array_of_blocklengths"))?;
        let disps = c!(array(array_of_displacements, count, "array_of_displacements"))?;
        let handles = c!(array(array_of_types, count, "array_of_types"))?;
        let maps = handles.iter().map(|&h| datatype::lookup(h)).collect::<MpiResult<Vec<_>>>()?;
        let refs: Vec<&TypeMap> = maps.iter().map(|m| &**m).collect();
        let args = handles.iter().zip(&maps).map(|(&h, m)| TypeArg::of(h, m)).collect();
        new_type(derived::structure(lens, disps, &refs), Recipe::structure(lens, disps, args), newtype)
    })
}

/// `MPI_Type_create_resized`.
///
/// # Safety
/// `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_resized")]
pub unsafe extern "C" fn MPI_Type_create_resized(
    oldtype: c_int,
    lb: isize,
    extent: isize,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_resized", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let recipe = Recipe::resized(lb, extent, TypeArg::of(oldtype, &old));
        new_type(derived::resized(&old, lb, extent), recipe, newtype)
    })
}

/// `MPI_Type_dup`: a committed copy if the original is committed, with the attributes
/// its keys' copy callbacks give it (a callback's error fails the call, and the copy
/// is `MPI_DATATYPE_NULL`).
///
/// # Safety
/// `newtype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_dup")]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: c_int, newtype: *mut c_int) -> c_int {
    entry("MPI_Type_dup", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let recipe = Recipe::dup(TypeArg::of(oldtype, &old));
        let new = decode::store(TypeMap { predefined: false, ..(*old).clone() }, recipe);
        let copied = type_keyval::copy_all(oldtype, new);
        if copied.is_err() {
            let _ = type_keyval::delete_all(new);
            let _ = datatype::free(new);
        }
        c!(out(newtype, if copied.is_ok() { new } else { DATATYPE_NULL }, "newtype"))?;
        copied
    })
}

/// `MPI_Type_commit`; committing a predefined or committed type does nothing.
///
/// # Safety
/// `datatype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_commit")]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut c_int) -> c_int {
    entry("MPI_Type_commit", WORLD, || {
        let handle = c!(read(datatype, "datatype"))?;
        if datatype::lookup(handle)?.committed {
            return Ok(());
        }
        datatype::update(handle, |map| map.committed = true)
    })
}

/// `MPI_Type_free`: the handle becomes `MPI_DATATYPE_NULL`, after the delete callbacks
/// of its attributes ran. Operations already started with the type keep their own
/// copy of its map.
///
/// # Safety
/// `datatype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_free")]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut c_int) -> c_int {
    entry("MPI_Type_free", WORLD, || {
        let handle = c!(read(datatype, "datatype"))?;
        // Its attributes go first (a predefined type, which cannot be freed, keeps
        // them); a delete callback's error fails the free.
        if !datatype::lookup(handle)?.predefined {
            type_keyval::delete_all(handle)?;
        }
        datatype::free(handle)?;
        c!(out(datatype, DATATYPE_NULL, "datatype"))
    })
}

/// `MPI_Type_size`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(export_name = "PMPI_Type_size")]
pub unsafe extern "C" fn MPI_Type_size(datatype: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Type_size", WORLD, || {
        let bytes = datatype::lookup(datatype)?.size;
        let bytes = c_int::try_from(bytes).unwrap_or(crate::ffi::comm::UNDEFINED);
        c!(out(size, bytes, "size"))
    })
}

/// `MPI_Type_get_extent`.
///
/// # Safety
/// `lb` and `extent` point to `MPI_Aint`s.
#[unsafe(export_name = "PMPI_Type_get_extent")]
pub unsafe extern "C" fn MPI_Type_get_extent(datatype: c_int, lb: *mut isize, extent: *mut isize) -> c_int {
    entry("MPI_Type_get_extent", WORLD, || {
        let map = datatype::lookup(datatype)?;
        c!(out(lb, map.lb, "lb"))?;
        c!(out(extent, map.extent, "extent"))
    })
}

/// `MPI_Type_get_true_extent`.
///
/// # Safety
/// `true_lb` and `true_extent` point to `MPI_Aint`s.
#[unsafe(export_name = "PMPI_Type_get_true_extent")]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: c_int,
    true_lb: *mut isize,
    true_extent: *mut isize,
) -> c_int {
    entry("MPI_Type_get_true_extent", WORLD, || {
        let map = datatype::lookup(datatype)?;
        c!(out(true_lb, map.true_lb, "true_lb"))?;
        c!(out(true_extent, map.true_extent, "true_extent"))
    })
}

/// `MPI_Type_size_x`: [`MPI_Type_size`] as an `MPI_Count`, which never overflows.
///
/// # Safety
/// `size` points to an `MPI_Count`.
#[unsafe(export_name = "PMPI_Type_size_x")]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: c_int, size: *mut i64) -> c_int {
    entry("MPI_Type_size_x", WORLD, || c!(out(size, datatype::lookup(datatype)?.size as i64, "size")))
}

/// `MPI_Type_get_extent_x`: [`MPI_Type_get_extent`] as `MPI_Count`s.
///
/// # Safety
/// `lb` and `extent` point to `MPI_Count`s.
#[unsafe(export_name = "PMPI_Type_get_extent_x")]
pub unsafe extern "C" fn MPI_Type_get_extent_x(datatype: c_int, lb: *mut i64, extent: *mut i64) -> c_int {
    entry("MPI_Type_get_extent_x", WORLD, || {
        let map = datatype::lookup(datatype)?;
        c!(out(lb, map.lb as i64, "lb"))?;
        c!(out(extent, map.extent as i64, "extent"))
    })
}

/// `MPI_Type_get_true_extent_x`: [`MPI_Type_get_true_extent`] as `MPI_Count`s.
///
/// # Safety
/// `true_lb` and `true_extent` point to `MPI_Count`s.
#[unsafe(export_name = "PMPI_Type_get_true_extent_x")]
pub unsafe extern "C" fn MPI_Type_get_true_extent_x(
    datatype: c_int,
    true_lb: *mut i64,
    true_extent: *mut i64,
) -> c_int {
    entry("MPI_Type_get_true_extent_x", WORLD, || {
        let map = datatype::lookup(datatype)?;
        c!(out(true_lb, map.true_lb as i64, "true_lb"))?;
        c!(out(true_extent, map.true_extent as i64, "true_extent"))
    })
}

/// `MPI_Type_get_name`.
///
/// # Safety
/// `type_name` holds `MPI_MAX_OBJECT_NAME` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Type_get_name")]
pub unsafe extern "C" fn MPI_Type_get_name(
    datatype: c_int,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    entry("MPI_Type_get_name", WORLD, || {
        let map = datatype::lookup(datatype)?;
        c!(out_string(type_name, resultlen, MAX_OBJECT_NAME, &map.name))
    })
}

/// `MPI_MAX_OBJECT_NAME`.
pub(super) const MAX_OBJECT_NAME: usize = 128;

/// `MPI_Type_set_name`.
///
/// # Safety
/// `type_name` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_Type_set_name")]
pub unsafe extern "C" fn MPI_Type_set_name(datatype: c_int, type_name: *const c_char) -> c_int {
    entry("MPI_Type_set_name", WORLD, || {
        let name = c!(string(type_name, "type_name"))?;
        if datatype::lookup(datatype)?.predefined {
            return fail(class::TYPE, "a predefined datatype cannot be renamed");
        }
        let name: String = name.chars().take(MAX_OBJECT_NAME - 1).collect();
        datatype::update(datatype, |map| map.name = name)
    })
}

/// `MPI_Get_address`: the address as an integer.
///
/// # Safety
/// `address` points to an `MPI_Aint`.
#[unsafe(export_name = "PMPI_Get_address")]
pub unsafe extern "C" fn MPI_Get_address(location: *const c_void, address: *mut isize) -> c_int {
    entry("MPI_Get_address", WORLD, || c!(out(address, location as isize, "address")))
}

/// `MPI_Aint_add`.
#[unsafe(export_name = "PMPI_Aint_add")]
pub extern "C" fn MPI_Aint_add(base: isize, disp: isize) -> isize {
    base.wrapping_add(disp)
}

/// `MPI_Aint_diff`.
#[unsafe(export_name = "PMPI_Aint_diff")]
pub extern "C" fn MPI_Aint_diff(addr1: isize, addr2: isize) -> isize {
    addr1.wrapping_sub(addr2)
}

/// `MPI_TYPECLASS_REAL`, `MPI_TYPECLASS_INTEGER` and `MPI_TYPECLASS_COMPLEX` (mpi.h).
const TYPECLASS_REAL: c_int = 1;
const TYPECLASS_INTEGER: c_int = 2;
const TYPECLASS_COMPLEX: c_int = 3;

/// `MPI_Type_match_size`: the predefined type of `typeclass` whose values take `size`
/// bytes (not a copy: it cannot be freed). A C program asks with `sizeof`, so the
/// candidates are C's signed integers and floating types; this library has no
/// complex type, and a class or size with no type is `MPI_ERR_ARG`.
///
/// # Safety
/// `datatype` points to an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_match_size")]
pub unsafe extern "C" fn MPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut c_int) -> c_int {
    entry("MPI_Type_match_size", WORLD, || {
        let candidates: &[&str] = match typeclass {
            TYPECLASS_INTEGER => &["MPI_SIGNED_CHAR", "MPI_SHORT", "MPI_INT", "MPI_LONG_LONG"],
            TYPECLASS_REAL => &["MPI_FLOAT", "MPI_DOUBLE"],
            TYPECLASS_COMPLEX => &[],
            other => return fail(class::ARG, format!("{other} is not an MPI_TYPECLASS_* value")),
        };
        let found = (1..)
            .map_while(|i| Some((DATATYPE_NULL | i, datatype::predefined_map(DATATYPE_NULL | i)?)))
            .find(|(_, map)| {
                candidates.contains(&map.name.as_str()) && usize::try_from(size) == Ok(map.size)
            });
        match found {
            Some((handle, _)) => c!(out(datatype, handle, "datatype")),
            None => fail(class::ARG, format!("no predefined type of class {typeclass} has {size} bytes")),
        }
    })
}
