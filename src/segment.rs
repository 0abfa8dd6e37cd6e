//! Reading files, read-only: memory-map sealed files, `read()` files that may change under
//! us (the newest segment of a partition, anything the caller marks live). A file
//! truncated under a live map raises SIGBUS (`peers-and-stack.md`, memmap2 row).

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

/// How to get a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPolicy {
    /// Memory-map (for sealed segments).
    Map,
    /// Plain `read()` into memory (for a file that may still change).
    Read,
}

/// The bytes of a file, mapped or read.
pub enum FileData {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Deref for FileData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileData::Mapped(m) => m,
            FileData::Owned(v) => v,
        }
    }
}

impl FileData {
    /// Tell the kernel we are done with these pages (bounded page-cache footprint when
    /// scanning a production broker; KIP-824's concern).
    pub fn release(&self) {
        #[cfg(unix)]
        if let FileData::Mapped(m) = self {
            // SAFETY: the map is read-only and file-backed: dropping its pages loses no
            // data, later reads fault them in again from the file.
            let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }
}

/// Open `path` read-only and return at most `max_bytes` of it (all of it when `None`).
///
/// The file is never opened for writing. A map failure falls back to `read()`.
pub fn read_file(path: &Path, policy: ReadPolicy, max_bytes: Option<u64>) -> io::Result<FileData> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let want = max_bytes.map_or(len, |m| m.min(len));
    if want == 0 {
        return Ok(FileData::Owned(Vec::new()));
    }
    if policy == ReadPolicy::Map {
        // SAFETY: the map is read-only. Mapping is only chosen for files the caller
        // considers sealed (not appended to or truncated while we read); if that promise
        // is broken, the process may receive SIGBUS, which is why live files use `Read`.
        let map = unsafe { memmap2::MmapOptions::new().len(want as usize).map(&file) };
        if let Ok(m) = map {
            #[cfg(unix)]
            let _ = m.advise(memmap2::Advice::Sequential);
            return Ok(FileData::Mapped(m));
        }
    }
    let mut buf = Vec::with_capacity(want as usize);
    file.take(want).read_to_end(&mut buf)?;
    Ok(FileData::Owned(buf))
}
