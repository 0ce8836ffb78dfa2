//! MPI error classes and codes, and the library's error type.
//!
//! A call that fails builds an [`MpiError`]: its class and a sentence saying what was
//! wrong. The code returned to C is the class, plus the sentence's slot in a small ring
//! of recent messages (`class + CLASSES * (slot + 1)`), so that `MPI_Error_string`
//! can give the specific sentence while `MPI_Error_class` recovers the class from any
//! code. Once the ring wraps, an old code still gives its class, with the class's
//! generic text. Classes and codes the program adds live above `MPI_ERR_LASTCODE`
//! (`crate::user_errors`).

use std::ffi::c_int;
use std::sync::Mutex;

/// The error classes of `mpi.h`, with their generic texts.
pub mod class {
    use std::ffi::c_int;

    macro_rules! classes {
        ($($name:ident = $value:expr, $text:expr;)*) => {
            $(#[doc = $text] pub const $name: c_int = $value;)*
            /// The generic text of `class`.
            pub fn text(class: c_int) -> Option<&'static str> {
                match class { $($value => Some($text),)* _ => None }
            }
        };
    }

    classes! {
        SUCCESS = 0, "no error";
        BUFFER = 1, "invalid buffer pointer";
        COUNT = 2, "invalid count argument";
        TYPE = 3, "invalid datatype";
        TAG = 4, "invalid tag";
        COMM = 5, "invalid communicator";
        RANK = 6, "invalid rank";
        REQUEST = 7, "invalid request";
        ROOT = 8, "invalid root";
        GROUP = 9, "invalid group";
        OP = 10, "invalid operation";
        TOPOLOGY = 11, "invalid topology";
        DIMS = 12, "invalid dimension argument";
        ARG = 13, "invalid argument";
        UNKNOWN = 14, "unknown error";
        TRUNCATE = 15, "message truncated";
        OTHER = 16, "other error";
        INTERN = 17, "internal error";
        IN_STATUS = 18, "error code is in status";
        PENDING = 19, "pending request";
        ACCESS = 20, "permission denied";
        AMODE = 21, "invalid file access mode";
        ASSERT = 22, "invalid assert argument";
        BAD_FILE = 23, "invalid file name";
        BASE = 24, "invalid base address";
        CONVERSION = 25, "data conversion failed";
        DISP = 26, "invalid displacement";
        DUP_DATAREP = 27, "data representation already defined";
        FILE_EXISTS = 28, "file exists";
        FILE_IN_USE = 29, "file in use";
        FILE = 30, "invalid file handle";
        INFO_KEY = 31, "invalid info key";
        INFO_NOKEY = 32, "info key not found";
        INFO_VALUE = 33, "invalid info value";
        INFO = 34, "invalid info object";
        IO = 35, "input/output error";
        KEYVAL = 36, "invalid attribute key";
        LOCKTYPE = 37, "invalid lock type";
        NAME = 38, "service name not published";
        NO_MEM = 39, "out of memory";
        NOT_SAME = 40, "arguments differ across processes";
        NO_SPACE = 41, "not enough space";
        NO_SUCH_FILE = 42, "no such file";
        PORT = 43, "invalid port name";
        QUOTA = 44, "quota exceeded";
        READ_ONLY = 45, "read-only file or file system";
        RMA_CONFLICT = 46, "conflicting one-sided accesses";
        RMA_SYNC = 47, "wrong synchronization of one-sided calls";
        SERVICE = 48, "service not published";
        SIZE = 49, "invalid size";
        SPAWN = 50, "spawn failed";
        UNSUPPORTED_DATAREP = 51, "unsupported data representation";
        UNSUPPORTED_OPERATION = 52, "unsupported operation";
        WIN = 53, "invalid window";
        RMA_RANGE = 55, "target memory is outside the window";
        RMA_ATTACH = 56, "memory cannot be attached";
        RMA_SHARED = 57, "memory cannot be shared";
        RMA_FLAVOR = 58, "wrong window flavor for this call";
    }

    /// Classes take codes below this; larger codes carry a message slot.
    pub const CLASSES: c_int = 64;
}

/// Why a call failed: its MPI error class and what exactly was wrong. Boxed, so that
/// the results of the library's calls stay a word or two wide on the success path
/// (wide results cost store-forwarding stalls on every `?` of a hot call).
#[derive(Clone, Debug, PartialEq)]
pub struct MpiError(Box<Failure>);

/// What an [`MpiError`] says.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The error class (`MPI_ERR_*`).
    pub class: c_int,
    /// One sentence for the user.
    pub what: String,
}

impl std::ops::Deref for MpiError {
    type Target = Failure;
    fn deref(&self) -> &Failure {
        &self.0
    }
}

/// What library calls return.
pub type MpiResult<T> = Result<T, MpiError>;

impl MpiError {
    /// An error of `class` explained by `what`.
    #[cold]
    pub fn new(class: c_int, what: impl Into<String>) -> MpiError {
        MpiError(Box::new(Failure { class, what: what.into() }))
    }
}

impl std::fmt::Display for MpiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let generic = class::text(self.class).unwrap_or("error");
        write!(f, "{generic}: {}", self.what)
    }
}

impl std::error::Error for MpiError {}

/// Shorthand for `Err(MpiError::new(class, what))`.
#[cold]
pub fn fail<T>(class: c_int, what: impl Into<String>) -> MpiResult<T> {
    Err(MpiError::new(class, what))
}

const SLOTS: usize = 256;

struct Recent {
    next: usize,
    texts: Vec<String>,
}

static RECENT: Mutex<Recent> = Mutex::new(Recent { next: 0, texts: Vec::new() });

/// The code to return for `e`, remembering its sentence for `MPI_Error_string`.
pub fn code_of(e: &MpiError) -> c_int {
    let mut recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
    let slot = recent.next % SLOTS;
    recent.next = recent.next.wrapping_add(1);
    let text = e.to_string();
    match recent.texts.get_mut(slot) {
        Some(t) => *t = text,
        None => recent.texts.push(text),
    }
    e.class + class::CLASSES * (slot as c_int + 1)
}

/// The class of an error code, or `None` if `code` is not one.
pub fn class_of(code: c_int) -> Option<c_int> {
    if code >= crate::user_errors::FIRST {
        return crate::user_errors::lookup(code).map(|(class, _)| class);
    }
    let class = code.checked_rem(class::CLASSES)?;
    (code >= 0 && class::text(class).is_some() && code / class::CLASSES <= SLOTS as c_int).then_some(class)
}

/// The text for an error code: its sentence while remembered, else its class's text;
/// for a class or code the program added, the text it gave (empty if none).
pub fn text_of(code: c_int) -> Option<String> {
    if code >= crate::user_errors::FIRST {
        return crate::user_errors::lookup(code).map(|(_, text)| text);
    }
    let class = class_of(code)?;
    let slot = code / class::CLASSES;
    if slot > 0 {
        let recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = recent.texts.get(slot as usize - 1) {
            // A newer error may have taken the slot: only trust a text of this class.
            if t.starts_with(class::text(class).unwrap_or_default()) {
                return Some(t.clone());
            }
        }
    }
    class::text(class).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_carry_their_class_and_sentence() {
        let code = code_of(&MpiError::new(class::RANK, "rank 9 of 4"));
        assert_eq!(class_of(code), Some(class::RANK));
        assert_eq!(text_of(code).unwrap(), "invalid rank: rank 9 of 4");
        assert_eq!(class_of(class::WIN), Some(class::WIN));
        assert_eq!(text_of(class::WIN).unwrap(), "invalid window");
        assert_eq!(class_of(-5), None);
        assert_eq!(class_of(54), None, "54 is no class");
    }
}
