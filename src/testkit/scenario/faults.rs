//! Damage applied to a partition's files after they are written: which file
//! ([`Target`]), what to do to it ([`FaultKind`]) and [`apply_fault`].

use std::path::Path;

/// A file to damage after writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The `.log` of the n-th segment (0-based).
    Log(usize),
    /// The `.log` of the last segment.
    LastLog,
    /// Any file of the partition directory, by name.
    File(String),
}

/// Damage applied to a written file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// XOR the byte at `position` with `mask`.
    FlipByte { position: u64, mask: u8 },
    /// Truncate the file to `len` bytes.
    Truncate { len: u64 },
    /// Append these bytes.
    AppendGarbage(Vec<u8>),
    /// Append `n` zero bytes (a preallocated tail after a crash).
    AppendZeros(u64),
}

/// A fault: what to damage and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub target: Target,
    pub kind: FaultKind,
}

/// Apply one fault to a file.
pub fn apply_fault(path: &Path, kind: &FaultKind) -> std::io::Result<()> {
    let mut data = std::fs::read(path)?;
    match kind {
        FaultKind::FlipByte { position, mask } => {
            let b = data
                .get_mut(*position as usize)
                .ok_or_else(|| std::io::Error::other("fault position past end of file"))?;
            *b ^= *mask;
        }
        FaultKind::Truncate { len } => data.truncate(*len as usize),
        FaultKind::AppendGarbage(g) => data.extend_from_slice(g),
        FaultKind::AppendZeros(n) => data.resize(data.len() + *n as usize, 0),
    }
    std::fs::write(path, data)
}
