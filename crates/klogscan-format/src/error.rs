//! Error values of the format layer.
//!
//! A [`FormatError`] names the structure, the field and the byte position where the
//! bytes stopped making sense. It is `Copy` and allocation-free, so iterators can end
//! with one cheaply (the object/gimli style).

use std::fmt;

/// What was wrong with a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// The structure needs `needed` bytes but only `available` remain.
    Truncated { needed: u64, available: u64 },
    /// A varint or varlong kept its continuation bit past its maximum length.
    VarintTooLong,
    /// A value outside what the format allows.
    OutOfRange { value: i64 },
    /// A value that should equal another does not.
    Mismatch { expected: i64, found: i64 },
    /// A checksum did not match (stored vs computed).
    Checksum { stored: u32, computed: u32 },
    /// Decompressed output would exceed the configured cap.
    TooLarge { limit: u64 },
    /// Anything else, with a static explanation.
    Invalid(&'static str),
}

/// An error from parsing on-disk bytes: which structure, which field, where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatError {
    /// The structure being parsed, e.g. `"record batch"`, `"record"`, `"lz4 frame"`.
    pub structure: &'static str,
    /// The field that failed, e.g. `"batchLength"`, `"keyLength"`.
    pub field: &'static str,
    /// Byte position. For framing errors: the position in the file. For errors inside a
    /// batch's records: the position inside the (decompressed) records section; the
    /// batch position is carried by whoever reports the error.
    pub position: u64,
    /// What was wrong.
    pub problem: Problem,
}

impl FormatError {
    pub const fn new(
        structure: &'static str,
        field: &'static str,
        position: u64,
        problem: Problem,
    ) -> Self {
        FormatError {
            structure,
            field,
            position,
            problem,
        }
    }

    /// Shorthand for a truncation error.
    #[cold]
    pub const fn truncated(
        structure: &'static str,
        field: &'static str,
        position: u64,
        needed: u64,
        available: u64,
    ) -> Self {
        Self::new(
            structure,
            field,
            position,
            Problem::Truncated { needed, available },
        )
    }

    /// The same error with its position shifted by `base` (to turn a slice-relative
    /// position into a file position).
    pub const fn at(mut self, base: u64) -> Self {
        self.position += base;
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Problem::Truncated { needed, available } => {
                write!(f, "needs {needed} bytes but only {available} remain")
            }
            Problem::VarintTooLong => f.write_str("varint is too long"),
            Problem::OutOfRange { value } => write!(f, "value {value} is out of range"),
            Problem::Mismatch { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            Problem::Checksum { stored, computed } => {
                write!(f, "stored checksum {stored} != computed {computed}")
            }
            Problem::TooLarge { limit } => {
                write!(f, "decompressed size exceeds the limit of {limit} bytes")
            }
            Problem::Invalid(why) => f.write_str(why),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} field {} at byte {}: {}",
            self.structure, self.field, self.position, self.problem
        )
    }
}

impl std::error::Error for FormatError {}
