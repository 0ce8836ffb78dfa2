//! Request completion calls: wait, test and their `*all`, `*any` and `*some` forms,
//! `MPI_Request_free`, and the status queries `MPI_Get_count` and `MPI_Get_elements`.

use std::ffi::c_int;

use crate::datatype;
use crate::error::{MpiError, MpiResult, class};
use crate::ffi::p2p::{MpiStatus, STATUS_IGNORE};
use crate::ffi::{WORLD, c, entry};
use crate::request::{self, REQUEST_NULL, Status};

/// `MPI_Wait`: the handle becomes `MPI_REQUEST_NULL` (a persistent request's stays, inactive).
///
/// # Safety
/// `request` points to an `MPI_Request`; `status` is an `MPI_Status` or ignored.
#[unsafe(export_name = "PMPI_Wait")]
pub unsafe extern "C" fn MPI_Wait(request: *mut c_int, status: *mut MpiStatus) -> c_int {
    entry("MPI_Wait", WORLD, || {
        let h = c!(read(request, "request"))?;
        let s = request::wait(h);
        if h != REQUEST_NULL && !matches!(&s, Err(e) if e.class == class::REQUEST) {
            c!(out(request, request::after_completion(h), "request"))?;
        }
        c!(write_status(status, s?, 0))
    })
}

/// `MPI_Test`: tests in place (`request::test`, `MPI_Testall` of the one handle); once
/// complete, the handle becomes `MPI_REQUEST_NULL` (a persistent request's stays,
/// inactive), also when the operation failed; an invalid handle stays as it was.
///
/// # Safety
/// As [`MPI_Wait`]; `flag` points to an int.
#[unsafe(export_name = "PMPI_Test")]
pub unsafe extern "C" fn MPI_Test(request: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
    entry("MPI_Test", WORLD, || {
        let given = c!(read(request, "request"))?;
        let mut h = given;
        let done = request::test(&mut h);
        if h != given {
            c!(out(request, h, "request"))?;
        }
        match done? {
            Some(s) => {
                c!(out(flag, 1, "flag"))?;
                c!(write_status(status, s, 0))
            }
            None => c!(out(flag, 0, "flag")),
        }
    })
}

fn requests<'a>(count: c_int, array: *mut c_int) -> MpiResult<&'a mut [c_int]> {
    let n = usize::try_from(count).map_err(|_| MpiError::new(class::COUNT, format!("count {count}")))?;
    c!(array_mut(array, n, "array_of_requests"))
}

fn statuses<'a>(count: usize, array: *mut MpiStatus) -> MpiResult<Option<&'a mut [MpiStatus]>> {
    if array.is_null() || array as usize == STATUS_IGNORE {
        return Ok(None);
    }
    c!(array_mut(array, count, "array_of_statuses")).map(Some)
}

/// The first failure of a call that completes many requests, by index: MPI's
/// `MPI_ERR_IN_STATUS` when there are statuses (each holding its request's code), the
/// error itself when they are ignored.
#[derive(Default)]
struct Failures(Option<(usize, MpiError)>);

impl Failures {
    /// What a status reports of `result`, the result of the request at `i`.
    fn status_of(&mut self, i: usize, result: MpiResult<Status>) -> (Status, c_int) {
        match result {
            Ok(s) => (s, 0),
            Err(e) => {
                let code = crate::error::code_of(&e);
                // By index: `wait_all` completes out of order.
                if self.0.as_ref().is_none_or(|&(j, _)| i < j) {
                    self.0 = Some((i, e));
                }
                (Status::EMPTY, code)
            }
        }
    }

    /// The call's result, once every completion was reported.
    fn outcome(self, with_statuses: bool) -> MpiResult<()> {
        match self.0 {
            None => Ok(()),
            Some((_, e)) if !with_statuses => Err(e),
            Some((_, e)) => Err(MpiError::new(class::IN_STATUS, e.what.clone())),
        }
    }
}

/// `MPI_Waitall`: completes every request; if some fail, `MPI_ERR_IN_STATUS` with each
/// one's code in its status.
///
/// # Safety
/// `array_of_requests` holds `count` requests; `array_of_statuses` holds `count`
/// statuses or is `MPI_STATUSES_IGNORE`.
#[unsafe(export_name = "PMPI_Waitall")]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    array_of_requests: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> c_int {
    entry("MPI_Waitall", WORLD, || {
        let reqs = requests(count, array_of_requests)?;
        let mut sts = statuses(reqs.len(), array_of_statuses)?;
        let mut failed = Failures::default();
        // Without statuses a success has nothing to report.
        request::wait_all(reqs, sts.is_some(), |i, result| {
            let (s, code) = failed.status_of(i, result);
            match sts.as_deref_mut() {
                Some(sts) => c!(write_status(&mut sts[i], s, code)),
                None => Ok(()),
            }
        })?;
        failed.outcome(sts.is_some())
    })
}

/// `MPI_Testall`: completes all only if all are complete (`request::test_all`: if
/// not, no handle changes); if some of them failed, `MPI_ERR_IN_STATUS` with each
/// one's code in its status, as `MPI_Waitall`.
///
/// # Safety
/// As [`MPI_Waitall`]; `flag` points to an int.
#[unsafe(export_name = "PMPI_Testall")]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    array_of_requests: *mut c_int,
    flag: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> c_int {
    entry("MPI_Testall", WORLD, || {
        let reqs = requests(count, array_of_requests)?;
        let mut sts = statuses(reqs.len(), array_of_statuses)?;
        let mut failed = Failures::default();
        let all = request::test_all(reqs, |i, result| {
            let (s, code) = failed.status_of(i, result);
            match sts.as_deref_mut() {
                Some(sts) => c!(write_status(&mut sts[i], s, code)),
                None => Ok(()),
            }
        })?;
        c!(out(flag, all as c_int, "flag"))?;
        failed.outcome(sts.is_some())
    })
}

/// The one request that an `*any` call completed: its index and result.
type One = Option<(usize, MpiResult<Status>)>;

/// Writes an `*any` call's results: the index (`MPI_UNDEFINED` if none completed) and
/// the status of the one completed (the empty one if `none_active`). A failed one's
/// error is the call's, its handle released all the same.
///
/// # Safety
/// As [`MPI_Waitany`]'s output arguments.
unsafe fn report_any(
    one: One,
    none_active: bool,
    index: *mut c_int,
    status: *mut MpiStatus,
) -> MpiResult<()> {
    match one {
        Some((i, result)) => {
            c!(out(index, i as c_int, "index"))?;
            c!(write_status(status, result?, 0))
        }
        None => {
            c!(out(index, crate::ffi::comm::UNDEFINED, "index"))?;
            if none_active { c!(write_status(status, Status::NO_REQUEST, 0)) } else { Ok(()) }
        }
    }
}

/// `MPI_Waitany`.
///
/// # Safety
/// `array_of_requests` holds `count` requests; `index` points to an int; `status` is
/// an `MPI_Status` or ignored.
#[unsafe(export_name = "PMPI_Waitany")]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    array_of_requests: *mut c_int,
    index: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Waitany", WORLD, || {
        let reqs = requests(count, array_of_requests)?;
        let mut one: One = None;
        let active = request::wait_some(reqs, 1, |i, result| {
            one = Some((i, result));
            Ok(())
        })?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { report_any(one, active.is_none(), index, status) }
    })
}

/// `MPI_Testany`.
///
/// # Safety
/// As [`MPI_Waitany`]; `flag` points to an int.
#[unsafe(export_name = "PMPI_Testany")]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    array_of_requests: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Testany", WORLD, || {
        let reqs = requests(count, array_of_requests)?;
        let mut one: One = None;
        let active = request::test_some(reqs, 1, |i, result| {
            one = Some((i, result));
            Ok(())
        })?;
        // True when one completed, or none is active.
        c!(out(flag, (one.is_some() || active.is_none()) as c_int, "flag"))?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { report_any(one, active.is_none(), index, status) }
    })
}

/// `MPI_Waitsome`: waits for at least one, and takes every completed one.
///
/// # Safety
/// As [`MPI_Waitall`]; `outcount` points to an int; `array_of_indices` holds `incount`.
#[unsafe(export_name = "PMPI_Waitsome")]
pub unsafe extern "C" fn MPI_Waitsome(
    incount: c_int,
    array_of_requests: *mut c_int,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> c_int {
    entry("MPI_Waitsome", WORLD, || {
        let reqs = requests(incount, array_of_requests)?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { some(reqs, true, outcount, array_of_indices, array_of_statuses) }
    })
}

/// `MPI_Testsome`: takes every completed one, perhaps none (`MPI_UNDEFINED` if none
/// is active).
///
/// # Safety
/// As [`MPI_Waitsome`].
#[unsafe(export_name = "PMPI_Testsome")]
pub unsafe extern "C" fn MPI_Testsome(
    incount: c_int,
    array_of_requests: *mut c_int,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> c_int {
    entry("MPI_Testsome", WORLD, || {
        let reqs = requests(incount, array_of_requests)?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { some(reqs, false, outcount, array_of_indices, array_of_statuses) }
    })
}

/// The `*some` calls: complete every one of `reqs` complete now (after waiting for one
/// if `wait`), writing each one's index and status at the next place of the output
/// arrays as it completes, then how many (`MPI_UNDEFINED` if none is active). If some
/// failed, `MPI_ERR_IN_STATUS` with each one's code in its status, as `MPI_Waitall`.
///
/// # Safety
/// As [`MPI_Waitsome`]'s output arguments.
unsafe fn some(
    reqs: &mut [c_int],
    wait: bool,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> MpiResult<()> {
    let mut failed = Failures::default();
    let with_statuses = !(array_of_statuses.is_null() || array_of_statuses as usize == STATUS_IGNORE);
    let mut k = 0;
    // The arrays are taken up to the place written only: a call that completes
    // nothing may be given none.
    let report = |i: usize, result| {
        c!(array_mut(array_of_indices, k + 1, "array_of_indices"))?[k] = i as c_int;
        let (s, code) = failed.status_of(i, result);
        if let Some(sts) = statuses(k + 1, array_of_statuses)? {
            c!(write_status(&mut sts[k], s, code))?;
        }
        k += 1;
        Ok(())
    };
    let done = if wait {
        request::wait_some(reqs, usize::MAX, report)
    } else {
        request::test_some(reqs, usize::MAX, report)
    };
    let Some(done) = done? else {
        return c!(out(outcount, crate::ffi::comm::UNDEFINED, "outcount"));
    };
    c!(out(outcount, done as c_int, "outcount"))?;
    failed.outcome(with_statuses)
}

/// `MPI_Request_get_status`: whether the request completed, without freeing it (a
/// later wait or test still completes it, with the same status).
///
/// # Safety
/// `flag` points to an int; `status` is an `MPI_Status` or ignored.
#[unsafe(export_name = "PMPI_Request_get_status")]
pub unsafe extern "C" fn MPI_Request_get_status(
    request: c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Request_get_status", WORLD, || {
        let done = request::peek(request)?;
        c!(out(flag, done.is_some() as c_int, "flag"))?;
        match done {
            Some(s) => c!(write_status(status, s, 0)),
            None => Ok(()),
        }
    })
}

/// `MPI_Request_free`: the operation completes in the background.
///
/// # Safety
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Request_free")]
pub unsafe extern "C" fn MPI_Request_free(request: *mut c_int) -> c_int {
    entry("MPI_Request_free", WORLD, || {
        request::detach(c!(read(request, "request"))?)?;
        c!(out(request, REQUEST_NULL, "request"))
    })
}

/// `MPI_Cancel`: withdraws the operation if it can (a receive that has not completed);
/// the request still completes by a wait or test, whose status tells.
///
/// # Safety
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Cancel")]
pub unsafe extern "C" fn MPI_Cancel(request: *mut c_int) -> c_int {
    entry("MPI_Cancel", WORLD, || request::cancel(c!(read(request, "request"))?))
}

/// `MPI_Test_cancelled`.
///
/// # Safety
/// `status` is a filled `MPI_Status`; `flag` points to an int.
#[unsafe(export_name = "PMPI_Test_cancelled")]
pub unsafe extern "C" fn MPI_Test_cancelled(status: *const MpiStatus, flag: *mut c_int) -> c_int {
    entry("MPI_Test_cancelled", WORLD, || {
        let s = c!(status_of(status))?;
        c!(out(flag, s.cancelled, "flag"))
    })
}

/// `MPI_Get_count`: whole elements received, or `MPI_UNDEFINED` for a partial one.
///
/// # Safety
/// `status` is a filled `MPI_Status`; `count` points to an int.
#[unsafe(export_name = "PMPI_Get_count")]
pub unsafe extern "C" fn MPI_Get_count(
    status: *const MpiStatus,
    datatype: c_int,
    count: *mut c_int,
) -> c_int {
    entry("MPI_Get_count", WORLD, || {
        let s = c!(status_of(status))?;
        let map = datatype::lookup(datatype)?;
        let n = match map.size {
            0 => 0,
            size if s.count as usize % size == 0 => (s.count as usize / size) as c_int,
            _ => crate::ffi::comm::UNDEFINED,
        };
        c!(out(count, n, "count"))
    })
}

/// `MPI_Get_elements`: basic elements received (partial derived elements count).
///
/// # Safety
/// As [`MPI_Get_count`].
#[unsafe(export_name = "PMPI_Get_elements")]
pub unsafe extern "C" fn MPI_Get_elements(
    status: *const MpiStatus,
    datatype: c_int,
    count: *mut c_int,
) -> c_int {
    entry("MPI_Get_elements", WORLD, || {
        let s = c!(status_of(status))?;
        let map = datatype::lookup(datatype)?;
        let n = crate::datatype::elements_in(&map, s.count as usize);
        let n = n.map_or(crate::ffi::comm::UNDEFINED, |n| n as c_int);
        c!(out(count, n, "count"))
    })
}

/// `MPI_Get_elements_x`: [`MPI_Get_elements`] as an `MPI_Count`.
///
/// # Safety
/// `status` is an `MPI_Status`; `count` points to an `MPI_Count`.
#[unsafe(export_name = "PMPI_Get_elements_x")]
pub unsafe extern "C" fn MPI_Get_elements_x(
    status: *const MpiStatus,
    datatype: c_int,
    count: *mut i64,
) -> c_int {
    entry("MPI_Get_elements_x", WORLD, || {
        let s = c!(status_of(status))?;
        let map = datatype::lookup(datatype)?;
        let n = crate::datatype::elements_in(&map, s.count as usize);
        c!(out(count, n.map_or(i64::from(crate::ffi::comm::UNDEFINED), |n| n as i64), "count"))
    })
}
