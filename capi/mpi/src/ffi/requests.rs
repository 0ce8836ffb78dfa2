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

/// `MPI_Test`.
///
/// # Safety
/// As [`MPI_Wait`]; `flag` points to an int.
#[unsafe(export_name = "PMPI_Test")]
pub unsafe extern "C" fn MPI_Test(request: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
    entry("MPI_Test", WORLD, || {
        let h = c!(read(request, "request"))?;
        match request::test(h) {
            Ok(Some(s)) => {
                c!(out(request, request::after_completion(h), "request"))?;
                c!(out(flag, 1, "flag"))?;
                c!(write_status(status, s, 0))
            }
            Ok(None) => c!(out(flag, 0, "flag")),
            Err(e) => {
                if e.class != class::REQUEST {
                    c!(out(request, request::after_completion(h), "request"))?;
                }
                Err(e)
            }
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
        // The first failed request's error, by index (`wait_all` completes out of order).
        let mut failed: Option<(usize, MpiError)> = None;
        // Without statuses a success has nothing to report.
        request::wait_all(reqs, sts.is_some(), |i, result| {
            let (s, code) = match result {
                Ok(s) => (s, 0),
                Err(e) => {
                    let code = crate::error::code_of(&e);
                    if failed.as_ref().is_none_or(|&(j, _)| i < j) {
                        failed = Some((i, e));
                    }
                    (Status::EMPTY, code)
                }
            };
            match sts.as_deref_mut() {
                Some(sts) => c!(write_status(&mut sts[i], s, code)),
                None => Ok(()),
            }
        })?;
        match failed {
            None => Ok(()),
            Some((_, e)) if sts.is_none() => Err(e),
            Some((_, e)) => Err(MpiError::new(class::IN_STATUS, e.what.clone())),
        }
    })
}

/// `MPI_Testall`: completes all only if all are complete.
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
        request::check_all(reqs)?;
        // Complete what has completed, keeping the statuses until all have.
        let mut done = vec![None; reqs.len()];
        for (i, h) in reqs.iter().enumerate() {
            if *h == REQUEST_NULL {
                done[i] = Some(Status::NO_REQUEST);
            } else if let Some(s) = request::test(*h)? {
                done[i] = Some(s);
            }
        }
        // A completed request cannot be un-completed: keep its result as a finished
        // request until the rest are done.
        let all = done.iter().all(Option::is_some);
        if !all {
            for (i, s) in done.iter().enumerate() {
                if let (Some(s), false) = (s, request::is_inactive(reqs[i])) {
                    reqs[i] = request::keep_completed(reqs[i], *s);
                }
            }
            return c!(out(flag, 0, "flag"));
        }
        let mut sts = statuses(reqs.len(), array_of_statuses)?;
        for (i, s) in done.into_iter().enumerate() {
            reqs[i] = request::after_completion(reqs[i]);
            if let Some(sts) = sts.as_deref_mut() {
                c!(write_status(&mut sts[i], s.unwrap_or(Status::EMPTY), 0))?;
            }
        }
        c!(out(flag, 1, "flag"))
    })
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
        match request::wait_any(reqs)? {
            Some((i, s)) => {
                reqs[i] = request::after_completion(reqs[i]);
                c!(out(index, i as c_int, "index"))?;
                c!(write_status(status, s, 0))
            }
            None => {
                c!(out(index, crate::ffi::comm::UNDEFINED, "index"))?;
                c!(write_status(status, Status::NO_REQUEST, 0))
            }
        }
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
        request::check_all(reqs)?;
        for (i, h) in reqs.iter_mut().enumerate().filter(|(_, h)| !request::is_inactive(**h)) {
            if let Some(s) = request::test(*h)? {
                *h = request::after_completion(*h);
                c!(out(index, i as c_int, "index"))?;
                c!(out(flag, 1, "flag"))?;
                return c!(write_status(status, s, 0));
            }
        }
        let none_active = reqs.iter().all(|&h| request::is_inactive(h));
        c!(out(index, crate::ffi::comm::UNDEFINED, "index"))?;
        c!(out(flag, none_active as c_int, "flag"))?;
        if none_active { c!(write_status(status, Status::NO_REQUEST, 0)) } else { Ok(()) }
    })
}

/// `MPI_Waitsome`: waits for at least one, then takes every completed one.
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
        let Some((first, s)) = request::wait_any(reqs)? else {
            return c!(out(outcount, crate::ffi::comm::UNDEFINED, "outcount"));
        };
        reqs[first] = request::after_completion(reqs[first]);
        let done = completed(reqs, vec![(first, s)])?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { report_some(&done, outcount, array_of_indices, array_of_statuses) }
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
        request::check_all(reqs)?;
        if reqs.iter().all(|&h| request::is_inactive(h)) {
            return c!(out(outcount, crate::ffi::comm::UNDEFINED, "outcount"));
        }
        let done = completed(reqs, Vec::new())?;
        // SAFETY: this call's output arguments, as its contract requires.
        unsafe { report_some(&done, outcount, array_of_indices, array_of_statuses) }
    })
}

/// Tests every active request of `reqs` once, adding those that completed to `done`
/// (their handles become what completion leaves).
fn completed(reqs: &mut [c_int], mut done: Vec<(usize, Status)>) -> MpiResult<Vec<(usize, Status)>> {
    for (i, h) in reqs.iter_mut().enumerate().filter(|(_, h)| !request::is_inactive(**h)) {
        if let Some(s) = request::test(*h)? {
            *h = request::after_completion(*h);
            done.push((i, s));
        }
    }
    Ok(done)
}

/// Writes the `*some` calls' results: how many, their indices and statuses.
///
/// # Safety
/// As [`MPI_Waitsome`]'s output arguments.
unsafe fn report_some(
    done: &[(usize, Status)],
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MpiStatus,
) -> MpiResult<()> {
    let indices = c!(array_mut(array_of_indices, done.len(), "array_of_indices"))?;
    let mut sts = statuses(done.len(), array_of_statuses)?;
    for (k, &(i, s)) in done.iter().enumerate() {
        indices[k] = i as c_int;
        if let Some(sts) = sts.as_deref_mut() {
            c!(write_status(&mut sts[k], s, 0))?;
        }
    }
    c!(out(outcount, done.len() as c_int, "outcount"))
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
