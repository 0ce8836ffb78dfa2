//! Datatype decoding (MPI 3.1 section 4.1.13): how a datatype was made, as
//! `MPI_Type_get_envelope` and `MPI_Type_get_contents` report it.
//!
//! A type map alone cannot answer: many constructor calls give the same layout, and
//! the standard asks for the call's own arguments. So every user type is stored with
//! its [`Recipe`] ([`store`]): the combiner and the arguments exactly as passed, already
//! in the order `MPI_Type_get_contents` returns them. A datatype argument is kept as a
//! [`TypeArg`]: a predefined type by its handle (returned as that same handle), a
//! derived one by its map, shared, so that the recipe outlives the program's handle
//! (freeing a type does not affect the types built from it). Decoding gives out a new
//! handle to that shared map; freeing it only drops the handle, never the original.

use std::ffi::c_int;
use std::sync::Arc;

use crate::datatype::{self, TypeMap, TypeRef};
use crate::error::{MpiError, MpiResult, class, fail};

/// `MPI_COMBINER_*`, with `mpi.h`'s values. The Fortran 90 combiners (13 to 15) have
/// values in `mpi.h` but no constructor here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    /// A predefined type.
    Named = 1,
    /// `MPI_Type_dup`.
    Dup = 2,
    /// `MPI_Type_contiguous`.
    Contiguous = 3,
    /// `MPI_Type_vector`.
    Vector = 4,
    /// `MPI_Type_create_hvector`.
    Hvector = 5,
    /// `MPI_Type_indexed`.
    Indexed = 6,
    /// `MPI_Type_create_hindexed`.
    Hindexed = 7,
    /// `MPI_Type_create_indexed_block`.
    IndexedBlock = 8,
    /// `MPI_Type_create_hindexed_block`.
    HindexedBlock = 9,
    /// `MPI_Type_create_struct`.
    Struct = 10,
    /// `MPI_Type_create_subarray`.
    Subarray = 11,
    /// `MPI_Type_create_darray`.
    Darray = 12,
    /// `MPI_Type_create_resized`.
    Resized = 16,
}

/// A datatype argument of a constructor call.
#[derive(Clone, Debug)]
pub enum TypeArg {
    /// A predefined type: decoding returns this very handle.
    Named(c_int),
    /// A derived type's map, kept alive by the recipe: decoding returns a new handle
    /// to it, which the program frees.
    Derived(Arc<TypeMap>),
}

impl TypeArg {
    /// The argument `handle`, whose map `map` the constructor looked up.
    pub fn of(handle: c_int, map: &TypeRef) -> TypeArg {
        match map {
            TypeRef::Predefined(_) => TypeArg::Named(handle),
            TypeRef::User(m) => TypeArg::Derived(m.clone()),
        }
    }

    /// The handle to give the program: the same for a predefined type, a new one for
    /// a derived type.
    pub fn handle(&self) -> c_int {
        match self {
            TypeArg::Named(h) => *h,
            TypeArg::Derived(m) => datatype::insert(m.clone()),
        }
    }
}

/// How a user type was made: its combiner and its constructor's arguments, in
/// `MPI_Type_get_contents`'s order.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// The constructor.
    pub combiner: Combiner,
    /// `array_of_integers`.
    pub integers: Vec<c_int>,
    /// `array_of_addresses`.
    pub addresses: Vec<isize>,
    /// `array_of_datatypes`.
    pub types: Vec<TypeArg>,
}

/// The number of entries of a constructor's array, as the `int` count it was given.
fn len(items: &[impl Sized]) -> c_int {
    // The arrays came from C with an `int` count, so their lengths fit.
    c_int::try_from(items.len()).unwrap_or(c_int::MAX)
}

impl Recipe {
    fn new(combiner: Combiner, integers: Vec<c_int>, addresses: Vec<isize>, types: Vec<TypeArg>) -> Recipe {
        Recipe { combiner, integers, addresses, types }
    }

    /// `MPI_Type_dup(old)`.
    pub fn dup(old: TypeArg) -> Recipe {
        Recipe::new(Combiner::Dup, vec![], vec![], vec![old])
    }

    /// `MPI_Type_contiguous(count, old)`.
    pub fn contiguous(count: c_int, old: TypeArg) -> Recipe {
        Recipe::new(Combiner::Contiguous, vec![count], vec![], vec![old])
    }

    /// `MPI_Type_vector(count, blocklength, stride, old)`.
    pub fn vector(count: c_int, blocklength: c_int, stride: c_int, old: TypeArg) -> Recipe {
        Recipe::new(Combiner::Vector, vec![count, blocklength, stride], vec![], vec![old])
    }

    /// `MPI_Type_create_hvector(count, blocklength, stride, old)`.
    pub fn hvector(count: c_int, blocklength: c_int, stride: isize, old: TypeArg) -> Recipe {
        Recipe::new(Combiner::Hvector, vec![count, blocklength], vec![stride], vec![old])
    }

    /// `MPI_Type_indexed(count, blocklengths, displacements, old)`.
    pub fn indexed(blocklengths: &[c_int], disps: &[c_int], old: TypeArg) -> Recipe {
        let integers = [&[len(blocklengths)], blocklengths, disps].concat();
        Recipe::new(Combiner::Indexed, integers, vec![], vec![old])
    }

    /// `MPI_Type_create_hindexed(count, blocklengths, displacements, old)`.
    pub fn hindexed(blocklengths: &[c_int], disps: &[isize], old: TypeArg) -> Recipe {
        let integers = [&[len(blocklengths)], blocklengths].concat();
        Recipe::new(Combiner::Hindexed, integers, disps.to_vec(), vec![old])
    }

    /// `MPI_Type_create_indexed_block(count, blocklength, displacements, old)`.
    pub fn indexed_block(blocklength: c_int, disps: &[c_int], old: TypeArg) -> Recipe {
        let integers = [&[len(disps), blocklength], disps].concat();
        Recipe::new(Combiner::IndexedBlock, integers, vec![], vec![old])
    }

    /// `MPI_Type_create_hindexed_block(count, blocklength, displacements, old)`.
    pub fn hindexed_block(blocklength: c_int, disps: &[isize], old: TypeArg) -> Recipe {
        Recipe::new(Combiner::HindexedBlock, vec![len(disps), blocklength], disps.to_vec(), vec![old])
    }

    /// `MPI_Type_create_struct(count, blocklengths, displacements, types)`.
    pub fn structure(blocklengths: &[c_int], disps: &[isize], types: Vec<TypeArg>) -> Recipe {
        let integers = [&[len(blocklengths)], blocklengths].concat();
        Recipe::new(Combiner::Struct, integers, disps.to_vec(), types)
    }

    /// `MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old)`.
    pub fn subarray(
        sizes: &[c_int],
        subsizes: &[c_int],
        starts: &[c_int],
        order: c_int,
        old: TypeArg,
    ) -> Recipe {
        let integers = [&[len(sizes)], sizes, subsizes, starts, &[order]].concat();
        Recipe::new(Combiner::Subarray, integers, vec![], vec![old])
    }

    /// `MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes,
    /// order, old)`, `header` holding the first three.
    pub fn darray(
        header: &[c_int; 3],
        gsizes: &[c_int],
        distribs: &[c_int],
        dargs: &[c_int],
        psizes: &[c_int],
        order: c_int,
        old: TypeArg,
    ) -> Recipe {
        let integers = [header, gsizes, distribs, dargs, psizes, &[order]].concat();
        Recipe::new(Combiner::Darray, integers, vec![], vec![old])
    }

    /// `MPI_Type_create_resized(old, lb, extent)`.
    pub fn resized(lb: isize, extent: isize, old: TypeArg) -> Recipe {
        Recipe::new(Combiner::Resized, vec![], vec![lb, extent], vec![old])
    }
}

/// Stores the new user type `map`, made as `recipe` says; returns its handle.
pub fn store(map: TypeMap, recipe: Recipe) -> c_int {
    datatype::insert(Arc::new(TypeMap { recipe: Some(Arc::new(recipe)), ..map }))
}

/// `MPI_Type_get_envelope`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// `num_integers`.
    pub integers: usize,
    /// `num_addresses`.
    pub addresses: usize,
    /// `num_datatypes`.
    pub datatypes: usize,
    /// `combiner`.
    pub combiner: Combiner,
}

/// The recipe of a user type (an internal error if it has none: every stored user type
/// goes through [`store`]).
fn recipe_of(map: &TypeMap) -> MpiResult<&Arc<Recipe>> {
    map.recipe.as_ref().ok_or_else(|| MpiError::new(class::INTERN, "a derived datatype without its recipe"))
}

/// How `map` was made.
pub fn envelope(map: &TypeMap) -> MpiResult<Envelope> {
    if map.predefined {
        return Ok(Envelope { integers: 0, addresses: 0, datatypes: 0, combiner: Combiner::Named });
    }
    let r = recipe_of(map)?;
    Ok(Envelope {
        integers: r.integers.len(),
        addresses: r.addresses.len(),
        datatypes: r.types.len(),
        combiner: r.combiner,
    })
}

/// The recipe `MPI_Type_get_contents` returns for `map`, given the room the program's
/// arrays have: a predefined type has none to decode, and arrays shorter than the
/// envelope's counts cannot hold it (both `MPI_ERR_ARG`, as the standard says).
pub fn contents(
    map: &TypeMap,
    max_integers: c_int,
    max_addresses: c_int,
    max_types: c_int,
) -> MpiResult<Arc<Recipe>> {
    if map.predefined {
        return fail(class::ARG, format!("{} is a named datatype, which has no contents", map.name));
    }
    let r = recipe_of(map)?;
    let room = [
        ("max_integers", max_integers, r.integers.len()),
        ("max_addresses", max_addresses, r.addresses.len()),
        ("max_datatypes", max_types, r.types.len()),
    ];
    for (what, max, needed) in room {
        if usize::try_from(max).map_or(true, |m| m < needed) {
            return fail(class::ARG, format!("{what} is {max}; the datatype's envelope needs {needed}"));
        }
    }
    Ok(r.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Prim;
    use crate::derived;

    fn int() -> TypeMap {
        TypeMap::basic("MPI_INT", Prim::I32)
    }

    fn stored(recipe: Recipe) -> TypeMap {
        TypeMap { recipe: Some(Arc::new(recipe)), ..derived::contiguous(1, &int()).unwrap() }
    }

    #[test]
    fn recipes_keep_the_arguments_in_the_standards_order() {
        let int_arg = || TypeArg::Named(0x6000_0007);
        let r = Recipe::indexed(&[2, 1], &[0, 5], int_arg());
        assert_eq!((r.integers.as_slice(), r.addresses.len()), (&[2, 2, 1, 0, 5][..], 0));
        let r = Recipe::indexed_block(3, &[4, 9], int_arg());
        assert_eq!(r.integers, [2, 3, 4, 9]);
        let r = Recipe::hindexed_block(3, &[4, 9], int_arg());
        assert_eq!((r.integers, r.addresses), (vec![2, 3], vec![4, 9]));
        let r = Recipe::subarray(&[4, 5], &[2, 3], &[1, 2], 56, int_arg());
        assert_eq!(r.integers, [2, 4, 5, 2, 3, 1, 2, 56]);
        let r = Recipe::structure(&[1, 3], &[0, 8], vec![int_arg(), int_arg()]);
        let e = envelope(&stored(r)).unwrap();
        assert_eq!(e, Envelope { integers: 3, addresses: 2, datatypes: 2, combiner: Combiner::Struct });
    }

    #[test]
    fn named_types_and_short_arrays_are_refused() {
        let e = envelope(&int()).unwrap();
        assert_eq!((e.integers, e.addresses, e.datatypes, e.combiner), (0, 0, 0, Combiner::Named));
        assert_eq!(contents(&int(), 9, 9, 9).unwrap_err().class, class::ARG);
        let v = stored(Recipe::hvector(3, 2, 24, TypeArg::Named(0x6000_0007)));
        assert!(contents(&v, 2, 1, 1).is_ok());
        for (i, a, d) in [(1, 1, 1), (2, 0, 1), (2, 1, 0), (-1, 1, 1)] {
            assert_eq!(contents(&v, i, a, d).unwrap_err().class, class::ARG, "{i} {a} {d}");
        }
        let orphan = derived::contiguous(2, &int()).unwrap();
        assert_eq!(envelope(&orphan).unwrap_err().class, class::INTERN);
    }
}
