//! RCCE's numbers: the error codes and their messages, the reduction operators and
//! types, and the debug levels, all as RCCE 1.0.13 defines them.

use std::ffi::c_int;

/// `RCCE_SUCCESS`.
pub const SUCCESS: c_int = 0;
/// `RCCE_ERROR_BASE`: error `k` of [`Error`] is this plus `k`.
pub const ERROR_BASE: c_int = 1_234_321;
/// `RCCE_MAX_ERROR_STRING`: the longest message, with its terminating NUL.
pub const MAX_ERROR_STRING: usize = 45;
/// `RCCE_LINE_SIZE`: the MPB's line.
pub const LINE: usize = 32;
/// `RCCE_BUFF_SIZE_MAX`: one core's MPB.
pub const MPB_BYTES: usize = 8192;
/// `RCCE_SHM_SIZE_MAX`: the shared off-chip memory `RCCE_shmalloc` hands out.
pub const SHM_BYTES: usize = 64 * 1024 * 1024;
/// `RCCE_FLAG_SET` and `RCCE_FLAG_UNSET`.
pub const FLAG_SET: c_int = 1;
/// See [`FLAG_SET`].
pub const FLAG_UNSET: c_int = 0;
/// `RCCE_POWER_DEFAULT`: "the default divider" wherever a divider is asked for.
pub const POWER_DEFAULT: c_int = -99_999;

/// Declares [`Error`] (variants numbered from 1 in order), [`ALL`] and the messages.
macro_rules! errors {
    ($($variant:ident => $message:literal,)*) => {
        /// RCCE's 27 errors, in the order of their codes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(i32)]
        pub enum Error {
            $(#[doc = $message] $variant,)*
        }

        const ALL: [Error; 27] = [$(Error::$variant,)*];

        impl Error {
            /// The message `RCCE_error_string` gives (shorter than [`MAX_ERROR_STRING`]).
            pub fn message(self) -> &'static str {
                match self {
                    $(Error::$variant => $message,)*
                }
            }
        }
    };
}

errors! {
    Target => "bad target address",
    Source => "bad source address",
    Id => "core ID is not a UE of the job",
    MessageLength => "bad message length",
    FlagUndefined => "flag is undefined",
    NumUes => "bad number of UEs",
    DataOverlap => "source and target overlap",
    Alignment => "misaligned address or length",
    DebugFlag => "unknown debug level",
    FlagNotInCommBuffer => "flag is not in the MPB",
    FlagStatusUndefined => "flag status is neither set nor unset",
    FlagNotAllocated => "flag is not allocated",
    ValUndefined => "value is undefined",
    InvalidErrorCode => "invalid error code",
    RpcNotAllocated => "power controller not allocated",
    RpcInternal => "power controller failure",
    MultipleRpcRequests => "a power request is already in flight",
    Fdivider => "frequency divider outside 2..16",
    FrequencyExceeded => "frequency exceeds the voltage's limit",
    NoActiveRpcRequest => "no power request in flight",
    StaleRpcRequest => "power request already completed",
    CommUndefined => "communicator is undefined",
    IllegalOp => "illegal reduction operator",
    IllegalType => "illegal reduction type",
    Malloc => "memory allocation failed",
    CommInitialized => "communicator already initialized",
    CoreNotInHostfile => "core is not in the host file",
}

impl Error {
    /// The code RCCE returns for this error.
    pub fn code(self) -> c_int {
        ERROR_BASE + 1 + self as c_int
    }

    /// The error behind `code`, if it is one.
    pub fn from_code(code: c_int) -> Option<Error> {
        ALL.into_iter().find(|e| e.code() == code)
    }
}

/// A reduction operator (`RCCE_SUM` ... `RCCE_PROD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `RCCE_SUM`, 23232323.
    Sum,
    /// `RCCE_MIN`.
    Min,
    /// `RCCE_MAX`.
    Max,
    /// `RCCE_PROD`.
    Prod,
}

impl ReduceOp {
    /// The operator behind RCCE's number.
    pub fn from_c(op: c_int) -> Result<ReduceOp, Error> {
        const BASE: c_int = 23_232_323;
        match op.checked_sub(BASE) {
            Some(0) => Ok(Self::Sum),
            Some(1) => Ok(Self::Min),
            Some(2) => Ok(Self::Max),
            Some(3) => Ok(Self::Prod),
            _ => Err(Error::IllegalOp),
        }
    }
}

/// A reduction element type (`RCCE_INT` ... `RCCE_DOUBLE`): C's int, long, float, double.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceType {
    /// `RCCE_INT`, 63636363.
    Int,
    /// `RCCE_LONG`.
    Long,
    /// `RCCE_FLOAT`.
    Float,
    /// `RCCE_DOUBLE`.
    Double,
}

impl ReduceType {
    /// The type behind RCCE's number.
    pub fn from_c(ty: c_int) -> Result<ReduceType, Error> {
        const BASE: c_int = 63_636_363;
        match ty.checked_sub(BASE) {
            Some(0) => Ok(Self::Int),
            Some(1) => Ok(Self::Long),
            Some(2) => Ok(Self::Float),
            Some(3) => Ok(Self::Double),
            _ => Err(Error::IllegalType),
        }
    }

    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            Self::Int | Self::Float => 4,
            Self::Long | Self::Double => 8,
        }
    }
}

/// Debug categories: which calls print their errors once `RCCE_debug_set` turns them on.
pub mod debug {
    use std::ffi::c_int;

    /// `RCCE_DEBUG_ALL`: every category.
    pub const ALL: c_int = 111_111;
    /// `RCCE_DEBUG_SYNCH`: flags, barriers, locks.
    pub const SYNCH: c_int = 111_444;
    /// `RCCE_DEBUG_COMM`: put, get, send, receive, collectives.
    pub const COMM: c_int = 111_555;
    /// `RCCE_DEBUG_RPC`: power management.
    pub const RPC: c_int = 111_666;
    /// `RCCE_DEBUG_DEBUG`: everything else (allocation, set-up).
    pub const DEBUG: c_int = 111_888;

    /// The bit of a category in the debug mask, `None` for an unknown level.
    pub fn bit(level: c_int) -> Option<u32> {
        match level {
            ALL => Some(0b1111),
            SYNCH => Some(0b0001),
            COMM => Some(0b0010),
            RPC => Some(0b0100),
            DEBUG => Some(0b1000),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_rcce_numbering() {
        assert_eq!(Error::Target.code(), 1_234_322);
        assert_eq!(Error::CoreNotInHostfile.code(), 1_234_321 + 27);
        for (k, e) in ALL.iter().enumerate() {
            assert_eq!(e.code(), ERROR_BASE + 1 + k as c_int);
            assert_eq!(Error::from_code(e.code()), Some(*e));
            assert!(e.message().len() < MAX_ERROR_STRING, "{e:?}");
        }
        assert_eq!(Error::from_code(ERROR_BASE), None);
        assert_eq!(Error::from_code(ERROR_BASE + 28), None);
    }

    #[test]
    fn operators_and_types_decode() {
        assert_eq!(ReduceOp::from_c(23_232_326), Ok(ReduceOp::Prod));
        assert_eq!(ReduceOp::from_c(23_232_327), Err(Error::IllegalOp));
        assert_eq!(ReduceType::from_c(63_636_364).map(ReduceType::size), Ok(8));
        assert_eq!(ReduceType::from_c(0), Err(Error::IllegalType));
    }
}
