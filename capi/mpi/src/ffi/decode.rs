//! `MPI_Type_get_envelope` and `MPI_Type_get_contents`: datatype decoding (see
//! `crate::decode` for how each type remembers the call that made it).

use std::ffi::c_int;

use crate::datatype;
use crate::decode;
use crate::error::{MpiError, MpiResult, class};
use crate::ffi::{WORLD, c, entry};

/// A count of the envelope as C's `int`.
fn count(n: usize) -> MpiResult<c_int> {
    c_int::try_from(n).map_err(|_| MpiError::new(class::ARG, format!("{n} arguments do not fit an int")))
}

/// `MPI_Type_get_envelope`: how many arguments of each kind the constructor of
/// `datatype` took, and which constructor it was (`MPI_COMBINER_*`).
///
/// # Safety
/// `num_integers`, `num_addresses`, `num_datatypes` and `combiner` point to ints.
#[unsafe(export_name = "PMPI_Type_get_envelope")]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    datatype: c_int,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    entry("MPI_Type_get_envelope", WORLD, || {
        let e = decode::envelope(&*datatype::lookup(datatype)?)?;
        c!(out(num_integers, count(e.integers)?, "num_integers"))?;
        c!(out(num_addresses, count(e.addresses)?, "num_addresses"))?;
        c!(out(num_datatypes, count(e.datatypes)?, "num_datatypes"))?;
        c!(out(combiner, e.combiner as c_int, "combiner"))
    })
}

/// `MPI_Type_get_contents`: the arguments of the constructor of `datatype`. A derived
/// datatype argument comes back as a new handle, which the program frees with
/// `MPI_Type_free`; a predefined one as its own handle.
///
/// # Safety
/// `array_of_integers`, `array_of_addresses` and `array_of_datatypes` hold
/// `max_integers`, `max_addresses` and `max_datatypes` writable values (or are null
/// where that count is 0), and do not overlap.
#[unsafe(export_name = "PMPI_Type_get_contents")]
pub unsafe extern "C" fn MPI_Type_get_contents(
    datatype: c_int,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut isize,
    array_of_datatypes: *mut c_int,
) -> c_int {
    entry("MPI_Type_get_contents", WORLD, || {
        let map = datatype::lookup(datatype)?;
        let r = decode::contents(&map, max_integers, max_addresses, max_datatypes)?;
        // Only as many entries as the envelope counts are written: the program's arrays
        // may be longer, and their rest is the program's.
        c!(array_mut(array_of_integers, r.integers.len(), "array_of_integers"))?.copy_from_slice(&r.integers);
        c!(array_mut(array_of_addresses, r.addresses.len(), "array_of_addresses"))?
            .copy_from_slice(&r.addresses);
        // Handles are made only once their array is known to be there, so that a
        // failed call leaves no handle behind for the program to free.
        let types = c!(array_mut(array_of_datatypes, r.types.len(), "array_of_datatypes"))?;
        for (slot, arg) in types.iter_mut().zip(&r.types) {
            *slot = arg.handle();
        }
        Ok(())
    })
}
