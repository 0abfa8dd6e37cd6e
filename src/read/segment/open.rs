//! Opening and loading files under the read policy (see the [`super`] module docs):
//! regular files only, map-or-read decided in one place ([`policy`]), maps guarded,
//! whole-file loads bounded.

use std::fs::File;
use std::io;
use std::ops::Deref;
use std::path::Path;

/// How to get a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPolicy {
    /// Memory-map (guarded: see the module docs).
    Map,
    /// Plain `read()` (in bounded chunks where the caller walks the file).
    Read,
}

/// The user's choice (`--mmap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MmapMode {
    /// Map every segment and large files loaded whole (guarded: a file that shrinks or
    /// fails under the map is reported, never a signal); read the rest. The default.
    #[default]
    Auto,
    /// Never map: every byte is `read()`.
    Never,
}

/// Files shorter than this are read, not mapped, under `auto`: one `read()` into the
/// thread's reused buffer costs less than setting up and tearing down a map of a few
/// pages, and on many small segments the maps' `munmap` (a TLB shootdown on every other
/// thread of the process) kept a second thread from helping: 10 000 segments of 16 KiB
/// scanned 1.53x faster on 2 threads than on 1 when mapped, 1.88x when read
/// (docs/performance.md). One read chunk (`CHUNK_SIZE`, the chunk of the walks).
pub const MAP_MIN_BYTES: u64 = 1 << 20;

/// The read policy of a file of `len` bytes: the single place deciding map-or-read.
///
/// Under `auto` every segment of at least [`MAP_MIN_BYTES`] is mapped, the newest one
/// (which a running broker may still append to or truncate) included: a map made at the
/// length the file had when opened reads what a `read()` of that length would, appends
/// beyond it are not seen either way, and a truncation or I/O error under the map is
/// caught by the guard and reported as [`ChangedDuringRead`]. Mapping skips the kernel's
/// copy of every byte: on the 2 GiB synth dir, whose partitions are each one (newest)
/// segment, a 1-thread scan took about a third less CPU time (docs/performance.md).
/// Smaller files are read.
pub fn policy(mode: MmapMode, len: u64) -> ReadPolicy {
    match mode {
        MmapMode::Auto if len >= MAP_MIN_BYTES => ReadPolicy::Map,
        MmapMode::Auto | MmapMode::Never => ReadPolicy::Read,
    }
}

/// The error inside an `io::Error` when a path is not a regular file (a FIFO, socket,
/// device or directory named like a Kafka file). It is never opened for reading data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a regular file ({0}): not read")]
pub struct NotRegularFile(pub &'static str);

/// The error inside an `io::Error` when a file shrank or failed (EIO) while it was read:
/// what was read cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "file changed during the scan (truncated, or an I/O error, while it was read): its analysis was abandoned"
)]
pub struct ChangedDuringRead;

/// The error inside an `io::Error` when a file is larger than its kind can be, or larger
/// than the read budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{len} bytes is larger than {what} ({max} bytes): not read")]
pub struct TooLarge {
    pub len: u64,
    pub max: u64,
    pub what: &'static str,
}

/// Which of [`NotRegularFile`], [`ChangedDuringRead`], [`TooLarge`] an error carries
/// (`None`: an ordinary I/O error), as a stable id for findings' evidence.
pub fn error_reason(e: &io::Error) -> Option<&'static str> {
    let inner = e.get_ref()?;
    if inner.is::<NotRegularFile>() {
        Some("special_file")
    } else if inner.is::<ChangedDuringRead>() {
        Some("changed_during_read")
    } else if inner.is::<TooLarge>() {
        Some("too_large")
    } else {
        None
    }
}

/// Whether a read failed because the file changed under it ([`ChangedDuringRead`]): what
/// was read of it may come from zero pages or a shorter file, so none of it is kept.
pub fn changed_during_read(e: &io::Error) -> bool {
    error_reason(e) == Some("changed_during_read")
}

/// The kind name of a non-regular file type.
#[cfg(unix)]
fn type_name(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_dir() {
        "directory"
    } else if ft.is_symlink() {
        "symlink"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn type_name(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "directory"
    } else {
        "not a regular file"
    }
}

/// `Some(type)` when `ft` is not a regular file.
pub(crate) fn special_type(ft: std::fs::FileType) -> Option<&'static str> {
    (!ft.is_file()).then(|| type_name(ft))
}

/// An opened file to read from: a regular file, or a member of an uncompressed archive
/// read in place (a byte range of the archive, see `inplace`). Offsets given to its reads
/// count from the start of the file (the member); a member's reads never pass its end.
#[derive(Debug)]
pub struct Handle {
    file: File,
    /// Where the file's first byte is in `file` (0 but for a member).
    base: u64,
    /// A member's length (its reads stop there); `None` for a file of its own.
    limit: Option<u64>,
}

impl Handle {
    /// The descriptor and the position of the file's first byte in it.
    pub(super) fn raw(&self) -> (&File, u64) {
        (&self.file, self.base)
    }

    /// Drop `[from, to)` of the file from the page cache (`POSIX_FADV_DONTNEED`): only
    /// clean pages go, the file is not changed. A hint: a failure changes nothing.
    pub fn drop_cached(&self, from: u64, to: u64) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let (Ok(off), Ok(len)) = (
                libc::off_t::try_from(self.base + from),
                libc::off_t::try_from(to.saturating_sub(from)),
            ) else {
                return;
            };
            // SAFETY: an advice on an open descriptor; no memory is passed.
            let _ = unsafe {
                libc::posix_fadvise(self.file.as_raw_fd(), off, len, libc::POSIX_FADV_DONTNEED)
            };
        }
    }

    /// How many of the file's bytes the descriptor holds now (a file that shrank, or an
    /// archive cut short under a member, reads fewer).
    pub fn current_len(&self) -> io::Result<u64> {
        let len = self.file.metadata()?.len().saturating_sub(self.base);
        Ok(self.limit.map_or(len, |l| l.min(len)))
    }

    /// `pread` of up to `buf.len()` bytes at `offset`; 0 at the end (of a member: its end).
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = match self.limit {
            Some(l) => {
                usize::try_from(l.saturating_sub(offset)).map_or(buf.len(), |r| r.min(buf.len()))
            }
            None => buf.len(),
        };
        if n == 0 {
            return Ok(0);
        }
        let at = self
            .base
            .checked_add(offset)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_at(&self.file, &mut buf[..n], at)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Seek, SeekFrom};
            let mut f = self.file.try_clone()?;
            f.seek(SeekFrom::Start(at))?;
            f.read(&mut buf[..n])
        }
    }

    /// `pread` of exactly `buf.len()` bytes at `offset` (`UnexpectedEof` past the end).
    pub fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Handle {
    /// The file read in sequence from its start (`Read` and `Seek` over `pread`: the
    /// descriptor's own position is not used).
    pub fn reader(&self) -> HandleReader<'_> {
        HandleReader {
            handle: self,
            pos: 0,
        }
    }
}

/// A [`Handle`] read in sequence: see [`Handle::reader`].
#[derive(Debug)]
pub struct HandleReader<'a> {
    handle: &'a Handle,
    pos: u64,
}

impl io::Read for HandleReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.handle.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl io::Seek for HandleReader<'_> {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let (from, by) = match to {
            io::SeekFrom::Start(n) => (0, i128::from(n)),
            io::SeekFrom::Current(d) => (self.pos, i128::from(d)),
            io::SeekFrom::End(d) => (self.handle.current_len()?, i128::from(d)),
        };
        let at = u64::try_from(i128::from(from) + by)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start"))?;
        self.pos = at;
        Ok(at)
    }
}

/// Open `path` read-only, only if it is a regular file (symlinks to one are followed):
/// checked before the open (`stat`) and on the opened handle (`fstat`), and opened with
/// `O_NONBLOCK` so that a FIFO put in its place between the two cannot block. A
/// placeholder of an archive member read in place opens the member's range of the
/// archive instead. Returns the handle and its length.
pub fn open_regular(path: &Path) -> io::Result<(Handle, u64)> {
    let not_regular = |t| io::Error::new(io::ErrorKind::InvalidInput, NotRegularFile(t));
    let meta = std::fs::metadata(path)?;
    if let Some(t) = special_type(meta.file_type()) {
        return Err(not_regular(t));
    }
    if let Some(m) = super::inplace::lookup(&meta) {
        let handle = Handle {
            file: m.archive.try_clone()?,
            base: m.offset,
            limit: Some(m.len),
        };
        // The archive cut short since it was listed reads as a file that shrank.
        let len = handle.current_len()?;
        return Ok((handle, len));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = o.open(path)?;
    let meta = file.metadata()?;
    if let Some(t) = special_type(meta.file_type()) {
        return Err(not_regular(t));
    }
    let handle = Handle {
        file,
        base: 0,
        limit: None,
    };
    Ok((handle, meta.len()))
}

/// The bytes of a file, mapped or read.
pub struct FileData(Inner);

enum Inner {
    /// The guard is dropped before the map (field order). The file's bytes start `skew`
    /// bytes into the map (a map starts on a page; an archive member need not).
    Mapped(super::mapguard::Guard, memmap2::Mmap, usize),
    Owned(Vec<u8>),
}

impl Deref for FileData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Inner::Mapped(_, m, skew) => &m[*skew..],
            Inner::Owned(v) => v,
        }
    }
}

impl FileData {
    /// True when the bytes are a map of the file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Inner::Mapped(..))
    }

    /// True when the mapped file shrank or failed while it was read: bytes read from the
    /// failing page on were zeros, not the file, and nothing derived from them holds.
    pub fn changed(&self) -> bool {
        match &self.0 {
            Inner::Mapped(g, ..) => g.changed(),
            Inner::Owned(_) => false,
        }
    }

    /// `Err(ChangedDuringRead)` when [`FileData::changed`].
    pub fn check_unchanged(&self) -> io::Result<()> {
        if self.changed() {
            Err(io::Error::other(ChangedDuringRead))
        } else {
            Ok(())
        }
    }

    /// Tell the kernel how the map is about to be read: `random` while a search touches a
    /// few bytes here and there (each fault reads its page only, not the read-ahead window
    /// around it), sequential again before a walk (the kernel then reads ahead of the walk
    /// while it runs). A map's advice is a hint: failing to give it changes no result.
    pub fn advise_random(&self, random: bool) {
        #[cfg(unix)]
        if let Inner::Mapped(_, m, _) = &self.0 {
            let advice = match random {
                true => memmap2::Advice::Random,
                false => memmap2::Advice::Sequential,
            };
            let _ = m.advise(advice);
        }
    }

    /// Tell the kernel we are done with these pages (bounded page-cache footprint when
    /// scanning a production broker; KIP-824's concern).
    pub fn release(&self) {
        #[cfg(unix)]
        if let Inner::Mapped(_, m, _) = &self.0 {
            // SAFETY: the map is read-only and file-backed: dropping its pages loses no
            // data, later reads fault them in again from the file.
            let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }
}

/// Map `want` bytes of `file` under the SIGBUS guard; `None` when the map or the guard
/// cannot be made (the caller reads instead).
pub(super) fn guarded_map(file: &Handle, want: u64) -> Option<FileData> {
    const PAGE: u64 = 4096;
    let (f, base) = file.raw();
    let start = base / PAGE * PAGE;
    let skew = usize::try_from(base - start).ok()?;
    let len = usize::try_from(want).ok()?.checked_add(skew)?;
    // SAFETY: the map is read-only. A file that shrinks or fails under it raises SIGBUS
    // on access; the guard registered before the map is returned turns that into zero
    // pages and a `changed` mark (see `mapguard`); without a guard the map is dropped.
    let map = unsafe { memmap2::MmapOptions::new().offset(start).len(len).map(f) }.ok()?;
    let guard = super::mapguard::Guard::register(map.as_ptr(), map.len())?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(FileData(Inner::Mapped(guard, map, skew)))
}

/// Map at most `max_bytes` of `path` (all of it when `None`) under the guard; `Ok(None)`
/// when no guarded map can be made (an address-space limit, no guard, an empty file): the
/// caller then reads the file in bounded chunks. Unlike [`read_file`] it never falls back
/// to reading the whole file into memory.
pub fn map_file(path: &Path, max_bytes: Option<u64>) -> io::Result<Option<FileData>> {
    let (file, len) = open_regular(path)?;
    let want = max_bytes.map_or(len, |m| m.min(len));
    Ok(if want == 0 {
        None
    } else {
        guarded_map(&file, want)
    })
}

/// Read `want` bytes of `file` from its start, growing the buffer as bytes arrive (never
/// allocated at the length the file claims: a sparse or lying length costs nothing until
/// read). A file shorter than `want` is returned as it is.
fn read_owned(file: &Handle, want: u64) -> io::Result<FileData> {
    const STEP: u64 = 1 << 20;
    let mut buf = Vec::with_capacity(usize::try_from(want.min(STEP)).unwrap_or(0));
    let mut at = 0u64;
    while at < want {
        let filled = buf.len();
        let step = usize::try_from((want - at).min(STEP)).unwrap_or(0);
        buf.resize(filled + step, 0);
        let got = file.read_at(&mut buf[filled..], at);
        buf.truncate(filled + *got.as_ref().unwrap_or(&0));
        match got {
            Ok(0) => break,
            Ok(n) => at += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(FileData(Inner::Owned(buf)))
}

/// Open `path` read-only ([`open_regular`]) and return at most `max_bytes` of it (all of
/// it when `None`), mapped or read as `policy` says. A map that cannot be made safely
/// falls back to `read()`. For files of a known kind prefer [`load`], which bounds the
/// size.
pub fn read_file(path: &Path, policy: ReadPolicy, max_bytes: Option<u64>) -> io::Result<FileData> {
    let (file, len) = open_regular(path)?;
    let want = max_bytes.map_or(len, |m| m.min(len));
    if want == 0 {
        return Ok(FileData(Inner::Owned(Vec::new())));
    }
    if policy == ReadPolicy::Map
        && let Some(d) = guarded_map(&file, want)
    {
        return Ok(d);
    }
    read_owned(&file, want)
}

/// What kind of file a whole-file [`load`] reads, for its size bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileClass {
    /// `.index`, `.timeindex`, `.txnindex`.
    Index,
    /// A producer-state `.snapshot`.
    ProducerSnapshot,
    /// Text checkpoints, `partition.metadata`, `meta.properties`, `quorum-state`.
    Checkpoint,
    /// A `.log` segment (or a KRaft snapshot) loaded whole.
    Log,
}

impl FileClass {
    /// The largest file of this kind a broker can write, with what bounds it.
    pub fn max_len(self) -> (u64, &'static str) {
        match self {
            // `segment.index.bytes` is an int: positions and sizes are 32-bit.
            FileClass::Index => (
                i32::MAX as u64,
                "any index a broker writes (segment.index.bytes is at most 2^31-1)",
            ),
            // 1 GiB: ~15 million producers at 70 bytes each, far above any broker.
            FileClass::ProducerSnapshot => (1 << 30, "any producer snapshot (1 GiB)"),
            // One line per partition of the log dir: a few MB even for 100 000 partitions.
            FileClass::Checkpoint => (64 << 20, "any checkpoint or properties file (64 MiB)"),
            // Segment positions are 32-bit (`log.segment.bytes` is an int); a segment may
            // overshoot by one batch.
            FileClass::Log => (
                (i32::MAX as u64) * 2,
                "any segment a broker writes (log.segment.bytes is at most 2^31-1)",
            ),
        }
    }
}

/// Bytes a whole-file load may allocate under `--mmap never` (larger files are refused
/// with [`TooLarge`]: mapping them is what `--mmap auto` is for).
pub const READ_BUDGET: u64 = 256 << 20;

/// Load a whole file of `class` (at most `max_bytes` of it), bounded: larger than the
/// class allows is [`TooLarge`]; under [`MmapMode::Auto`] a file of [`MAP_MIN_BYTES`] or more is
/// mapped (guarded: check [`FileData::changed`] after use), smaller ones are read;
/// under [`MmapMode::Never`] a file above [`READ_BUDGET`] is [`TooLarge`].
pub fn load(
    path: &Path,
    class: FileClass,
    mode: MmapMode,
    max_bytes: Option<u64>,
) -> io::Result<FileData> {
    let (file, len) = open_regular(path)?;
    let (max, what) = class.max_len();
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            TooLarge { len, max, what },
        ));
    }
    let want = max_bytes.map_or(len, |m| m.min(len));
    if want == 0 {
        return Ok(FileData(Inner::Owned(Vec::new())));
    }
    if policy(mode, want) == ReadPolicy::Map
        && let Some(d) = guarded_map(&file, want)
    {
        return Ok(d);
    }
    if want > READ_BUDGET {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            TooLarge {
                len: want,
                max: READ_BUDGET,
                what: "the read budget of --mmap never",
            },
        ));
    }
    read_owned(&file, want)
}

impl FileData {
    /// Which pages of `[from, to)` of a mapped file are in the page cache (`mincore`), one
    /// flag per page from the page holding `from`; empty when not mapped, unknown, or when
    /// the bytes do not start on a page of their file (an archive member read in place).
    pub fn resident_pages(&self, from: usize, to: usize) -> Vec<bool> {
        #[cfg(unix)]
        if let Inner::Mapped(_, m, 0) = &self.0 {
            const PAGE: usize = 4096;
            let from = from / PAGE * PAGE;
            let to = to.min(m.len());
            if to <= from {
                return Vec::new();
            }
            let mut vec = vec![0u8; (to - from).div_ceil(PAGE)];
            // SAFETY: `[from, to)` lies in the live map, page-aligned at `from`; `vec`
            // has one byte per page of it, as mincore writes.
            let rc = unsafe {
                libc::mincore(
                    m.as_ptr().add(from) as *mut libc::c_void,
                    to - from,
                    vec.as_mut_ptr(),
                )
            };
            if rc == 0 {
                return vec.iter().map(|b| b & 1 == 1).collect();
            }
        }
        Vec::new()
    }

    /// Release `[from, to)` of a mapped file (rounded inward to whole pages).
    pub fn release_range(&self, from: usize, to: usize) {
        #[cfg(unix)]
        if let Inner::Mapped(_, m, skew) = &self.0 {
            const PAGE: usize = 4096;
            let from = (from + skew).div_ceil(PAGE) * PAGE;
            let to = (to + skew) / PAGE * PAGE;
            if to > from {
                // SAFETY: read-only, file-backed map: dropping pages loses nothing, and
                // no reference into the range outlives the walk step that released it.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (from, to);
    }
}
