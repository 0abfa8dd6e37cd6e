//! The walks over a segment's entries (mapped or read in chunks) and the resynchronising
//! search for the next entry after damage. Internal: the scan, verify, dump and the
//! cluster checks call them; the library's surface is [`super::load`] and
//! [`super::read_file`].

use super::*;
use std::io;
use std::ops::ControlFlow;
use std::path::Path;

/// Size of the buffer used to read live files in chunks. Small enough that the bytes
/// `read()` copies are still in the core's L2 cache when the CRC reads them (an 8 MiB
/// buffer made the copy and the CRC each go to DRAM).
pub const CHUNK_SIZE: usize = 1 << 20;

/// While walking a mapped file, pages behind the cursor are released in steps of this
/// size, so a 1 GiB segment never has more than this much of itself resident in our
/// address space (touched file pages count in RSS).
pub const RELEASE_STEP: usize = 32 << 20;

/// Walk every entry of a `.log` file, read-only, calling `on_entry` for each whole entry,
/// and return how the file ended (over the whole file) and how many bytes were examined.
///
/// With [`ReadPolicy::Map`] the file is mapped once and released behind the cursor every
/// [`RELEASE_STEP`] bytes. With [`ReadPolicy::Read`] it is read in [`CHUNK_SIZE`] pieces
/// (larger only when one entry is larger), so memory stays bounded however large the file is.
#[cfg(feature = "testkit")]
pub fn walk_entries(
    path: &Path,
    policy: ReadPolicy,
    max_bytes: Option<u64>,
    on_entry: impl FnMut(crate::read::format::RawEntry<'_>),
) -> io::Result<(crate::read::format::Tail, u64)> {
    walk_entries_chunked(path, policy, max_bytes, CHUNK_SIZE, on_entry)
}

/// Grow `buf` (zero-filled) to at least `n` bytes; never shrinks, so steady state
/// neither allocates nor clears.
///
/// One entry can declare up to 2 GiB: when that much memory cannot be had, the walk
/// fails with an error ([`TooLarge`]) instead of the process aborting on allocation
/// failure.
fn ensure_len(buf: &mut Vec<u8>, n: usize) -> io::Result<()> {
    if buf.len() < n {
        buf.try_reserve_exact(n - buf.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                TooLarge {
                    len: n as u64,
                    max: buf.capacity() as u64,
                    what: "the memory available to buffer one entry",
                },
            )
        })?;
        buf.resize(n, 0);
    }
    Ok(())
}

/// [`walk_entries`] with an explicit chunk size for [`ReadPolicy::Read`].
#[cfg(any(test, feature = "testkit"))]
pub fn walk_entries_chunked(
    path: &Path,
    policy: ReadPolicy,
    max_bytes: Option<u64>,
    chunk_size: usize,
    mut on_entry: impl FnMut(crate::read::format::RawEntry<'_>),
) -> io::Result<(crate::read::format::Tail, u64)> {
    walk_items_chunked(
        path,
        policy,
        max_bytes,
        chunk_size,
        (None, Ahead::Bytes),
        |item| {
            if let Item::Entry(e) = item {
                on_entry(e);
            }
        },
    )
}

/// [`walk_entries`] for a walk that needs only the headers of large entries: an entry
/// larger than [`BIG_ENTRY`] is never held whole but CRC-checked streaming and handed
/// out as an [`Item::Big`] (read in chunks, or over the map with its pages released
/// behind the cursor).
pub fn walk_entries_items(
    path: &Path,
    policy: ReadPolicy,
    max_bytes: Option<u64>,
    on_item: impl FnMut(Item<'_>),
) -> io::Result<(crate::read::format::Tail, u64)> {
    walk_items_ahead(path, policy, max_bytes, Ahead::Bytes, on_item)
}

/// [`walk_entries_items`] for a walk that says what it reads of each entry: a mapped walk
/// asks the CPU for that ahead of its cursor ([`Ahead`]).
pub fn walk_items_ahead(
    path: &Path,
    policy: ReadPolicy,
    max_bytes: Option<u64>,
    how: Ahead,
    on_item: impl FnMut(Item<'_>),
) -> io::Result<(crate::read::format::Tail, u64)> {
    walk_items_chunked(
        path,
        policy,
        max_bytes,
        CHUNK_SIZE,
        (Some(BIG_ENTRY), how),
        on_item,
    )
}

/// [`walk_entries_items`] with an explicit chunk size and threshold (`None`: every entry
/// whole, as [`walk_entries`]), and what a mapped walk asks for ahead of its cursor.
pub(crate) fn walk_items_chunked(
    path: &Path,
    policy: ReadPolicy,
    max_bytes: Option<u64>,
    chunk_size: usize,
    (big, how): (Option<usize>, Ahead),
    mut on_entry: impl FnMut(Item<'_>),
) -> io::Result<(crate::read::format::Tail, u64)> {
    use crate::read::format::Tail;
    let (file, len) = open_regular(path)?;
    let total = max_bytes.map_or(len, |m| m.min(len));
    // A trailing hole (a preallocated or sparse segment) is zeros without reading it.
    let end = super::holes::data_end(&file, total);
    let tail = walk_prefix(&file, end, policy, chunk_size, (big, how), &mut on_entry)?;
    if end == total {
        return Ok((tail, total));
    }
    let tail = match tail {
        Tail::Clean => Tail::ZeroFilled {
            position: end,
            len: total - end,
        },
        Tail::ZeroFilled { position, .. } => Tail::ZeroFilled {
            position,
            len: total - position,
        },
        // An entry running into the hole, or damage before it: the rest is walked from
        // that entry's start as a whole-file walk would (bounded memory, every byte read).
        other => {
            let from = other.truncation_position().unwrap_or(end);
            walk_read_items(&file, from, total, chunk_size, big, |e| {
                on_entry(e);
                ControlFlow::Continue(())
            })
            .map_err(|e| changed_if_shrunk(e, &file, total))?
            .unwrap_or(Tail::Clean)
        }
    };
    Ok((tail, total))
}

/// Walk the entries of `file`'s first `total` bytes (mapped under [`ReadPolicy::Map`]
/// when a guarded map can be made, else read in chunks) and return how they end.
fn walk_prefix(
    file: &Handle,
    total: u64,
    policy: ReadPolicy,
    chunk_size: usize,
    (big, how): (Option<usize>, Ahead),
    on_entry: &mut impl FnMut(Item<'_>),
) -> io::Result<crate::read::format::Tail> {
    use crate::read::format::{Entries, Tail};
    // Without a guarded map (none possible, or empty): the bounded chunked read below.
    if policy == ReadPolicy::Map
        && total > 0
        && let Some(data) = guarded_map(file, total)
    {
        let mut entries = Entries::new(&data, 0);
        let mut released = 0usize;
        for e in entries.by_ref() {
            let at = e.position as usize;
            if at - released >= RELEASE_STEP {
                data.release_range(released, at);
                released = at;
            }
            super::prefetch::ahead(&data, e.bytes, how);
            on_entry(match big {
                Some(n) => bigentry::item_over(Some(&data), e, n),
                None => Item::Entry(e),
            });
        }
        let tail = entries.tail().unwrap_or(Tail::Clean);
        data.release();
        data.check_unchanged()?;
        return Ok(tail);
    }
    let end = walk_read_items(file, 0, total, chunk_size, big, |e| {
        on_entry(e);
        ControlFlow::Continue(())
    })
    .map_err(|e| changed_if_shrunk(e, file, total))?;
    Ok(end.unwrap_or(Tail::Clean))
}

/// A short read of a file that is now shorter than `expected` is the file changing under
/// us ([`ChangedDuringRead`]), not a plain I/O error.
pub fn changed_if_shrunk(e: io::Error, file: &Handle, expected: u64) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof && file.current_len().is_ok_and(|l| l < expected) {
        io::Error::other(ChangedDuringRead)
    } else {
        e
    }
}

static ZEROS: [u8; 1 << 16] = [0; 1 << 16];

/// True when every byte of `b` is zero (a `memcmp` against zeros, block by block).
fn is_zero(b: &[u8]) -> bool {
    b.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()])
}

/// Walk the entries of `file` with positional reads (`pread`: no shared file position,
/// so several walks can share one handle) from byte `start` (an entry boundary) up to
/// `total`, in chunks of `chunk_size` (larger only when one entry is larger), handing out
/// [`Item`]s. Returns how the bytes end from the last whole entry on (classified over
/// `[.., total)`, as `walk_entries` does), or `None` when `on_item` stopped the walk.
///
/// With `big = Some(n)`, an entry larger than `n` bytes is never buffered: it is
/// CRC-checked streaming ([`Item::Big`]). With `None` every entry is buffered whole (up to
/// 2 GiB when one declares that much).
pub(crate) fn walk_read_items(
    file: &Handle,
    start: u64,
    total: u64,
    chunk_size: usize,
    big: Option<usize>,
    on_entry: impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> io::Result<Option<crate::read::format::Tail>> {
    // A walk per piece of ~4 MiB: a fresh buffer each time cost a 1 MiB memset, its page
    // faults and its unmap per piece (docs/performance.md). The thread's last buffer is
    // reused instead (taken, so a nested walk on this thread gets its own); one larger
    // than `KEEP_READ_BUF` (a huge entry) is dropped, as before.
    let mut buf = READ_BUF.with(std::cell::Cell::take);
    let res = walk_read_items_in(&mut buf, file, start, total, chunk_size, big, on_entry);
    if buf.capacity() <= KEEP_READ_BUF {
        READ_BUF.with(|b| b.set(buf));
    }
    res
}

thread_local! {
    /// The read buffer [`walk_read_items`] hands on to the next walk on this thread.
    static READ_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Largest read buffer kept per thread between walks.
const KEEP_READ_BUF: usize = 2 * CHUNK_SIZE;

/// [`walk_read_items`] in `buf`, whose contents on entry are never read (only the bytes
/// this walk put there are).
fn walk_read_items_in(
    buf: &mut Vec<u8>,
    file: &Handle,
    start: u64,
    total: u64,
    chunk_size: usize,
    big: Option<usize>,
    mut on_entry: impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> io::Result<Option<crate::read::format::Tail>> {
    use crate::read::format::{Entries, Tail};
    // Below a header's size no chunk could make progress.
    let chunk_size = chunk_size.max(64);
    let total = total.max(start);
    let mut w = Window {
        filled: 0,
        base: start,
        read_to: start,
    };
    loop {
        // Fill the buffer to the chunk size (or to what is left of the file).
        let want = (chunk_size.max(w.filled) as u64).min(total - w.base) as usize;
        if w.filled < want {
            w.fill_to(buf, file, want)?;
        }
        let at_eof = w.read_to >= total;
        let mut entries = if at_eof {
            Entries::new(&buf[..w.filled], w.base)
        } else {
            Entries::chunk(&buf[..w.filled], w.base)
        };
        for e in entries.by_ref() {
            // An entry over the threshold that happens to fit in the chunk is handed out
            // as the map walk hands it out (the same item whatever the chunk size).
            let item = match big {
                Some(n) => bigentry::item_over(None, e, n),
                None => Item::Entry(e),
            };
            if on_entry(item).is_break() {
                return Ok(None);
            }
        }
        if let Some(pos) = entries.need_more() {
            let step = w.read_unfinished(buf, file, pos, total, chunk_size, big, &mut on_entry)?;
            match step {
                ControlFlow::Continue(()) => continue,
                ControlFlow::Break(end) => return Ok(end),
            }
        }
        let tail = entries.tail().unwrap_or(Tail::Clean);
        if at_eof {
            return Ok(Some(tail));
        }
        if let Tail::Clean = tail {
            // The chunk ended exactly on an entry boundary.
            w.base = w.read_to;
            w.filled = 0;
            continue;
        }
        // Stopped before the end of the file on a bad header: classify the rest of the file.
        return w.classify_rest(buf, file, total, tail).map(Some);
    }
}

/// Where a chunked walk stands: `buf[..filled]` holds the file from `base` (`buf` itself
/// only grows), and `read_to` is the file position after the buffer's last valid byte.
struct Window {
    filled: usize,
    base: u64,
    read_to: u64,
}

impl Window {
    /// Read on so that `buf[..want]` holds the file from `base`.
    fn fill_to(&mut self, buf: &mut Vec<u8>, file: &Handle, want: usize) -> io::Result<()> {
        ensure_len(buf, want)?;
        read_exact_at(file, &mut buf[self.filled..want], self.read_to)?;
        self.filled = want;
        self.read_to = self.base + want as u64;
        Ok(())
    }

    /// The chunk ended inside the entry at `pos`: keep its start at the front of the
    /// buffer and read what the next round needs of it — its whole header first when it is
    /// large, all of it when it fits in memory — or stream it (`big`), or say it is partial
    /// without reading the rest. `Continue` walks on; `Break` is the walk's answer.
    #[allow(clippy::too_many_arguments)] // the walk's own parameters, passed through
    fn read_unfinished(
        &mut self,
        buf: &mut Vec<u8>,
        file: &Handle,
        pos: u64,
        total: u64,
        chunk_size: usize,
        big: Option<usize>,
        on_entry: &mut impl FnMut(Item<'_>) -> ControlFlow<()>,
    ) -> io::Result<ControlFlow<Option<crate::read::format::Tail>>> {
        use crate::read::format::Tail;
        use crate::read::format::batch::{HEADER_SIZE_UP_TO_MAGIC, V2_HEADER_SIZE};
        let keep_from = (pos - self.base) as usize;
        buf.copy_within(keep_from..self.filled, 0);
        self.filled -= keep_from;
        self.base = pos;
        let head = &buf[..self.filled];
        if head.len() < 12 {
            return Ok(ControlFlow::Continue(()));
        }
        let size = i32::from_be_bytes(head[8..12].try_into().unwrap_or([0; 4]));
        let need = 12usize.saturating_add(size.max(0) as usize);
        let rest = total - self.base;
        let large = need > big.unwrap_or(BIG_ENTRY);
        if large && self.filled < V2_HEADER_SIZE && rest > self.filled as u64 {
            // Read the whole header first: only a chunk walk that saw the magic byte has
            // checked it (magic, offset, size), and a streamed entry keeps its header.
            self.fill_to(buf, file, V2_HEADER_SIZE.min(rest as usize))?;
            return Ok(ControlFlow::Continue(()));
        }
        // A header the chunk walk judged whole (magic 0–2, offset not negative): it defers
        // judging the others until their entry is whole, so an entry that never can be is
        // the final walk's to classify (garbage, not partial).
        let judged = head.len() > HEADER_SIZE_UP_TO_MAGIC
            && (0..=2).contains(&(head[16] as i8))
            && crate::read::format::bytes::be_i64(head, 0) >= 0;
        if need as u64 > rest && !judged && head.len() > HEADER_SIZE_UP_TO_MAGIC {
            // Never whole, so never kept: garbage, as the final walk says, classified in
            // bounded pieces (not read whole: a sparse tail may be gigabytes).
            let reason = match (0..=2).contains(&(head[16] as i8)) {
                true => crate::read::format::Unframed::NegativeOffset,
                false => crate::read::format::Unframed::UnknownMagic,
            };
            return self.garbage_from_here(buf, file, total, reason);
        }
        if large && need as u64 > rest && judged {
            // A checked header whose entry runs past the end: the final walk would call it
            // partial; say so without reading (or buffering) the rest.
            return Ok(ControlFlow::Break(Some(Tail::Partial {
                position: self.base,
                declared: need as u64,
                available: rest,
                offset: crate::read::format::bytes::be_i64(head, 0),
            })));
        }
        if big.is_some() && large && self.filled >= V2_HEADER_SIZE {
            // Too large to hold: CRC-checked streaming, then on after it.
            let mut scratch = vec![0u8; chunk_size];
            let unknown_magic = !(0..=2).contains(&(head[16] as i8));
            let b = bigentry::read_big(file, self.base, need as u64, head, &mut scratch)?;
            if unknown_magic && !b.crc_valid() {
                // A magic outside 0-2 is an entry only under a CRC its reader accepts
                // (`format::batch`'s `kept_unknown_magic`): else garbage from the header
                // on, as the final walk says of a smaller one.
                let reason = crate::read::format::Unframed::UnknownMagic;
                return self.garbage_from_here(buf, file, total, reason);
            }
            if on_entry(Item::Big(b)).is_break() {
                return Ok(ControlFlow::Break(None));
            }
            self.base += need as u64;
            self.read_to = self.base;
            self.filled = 0;
            return Ok(ControlFlow::Continue(()));
        }
        if need as u64 > rest {
            // It can never be whole: read the rest and let the final walk classify it.
            self.fill_to(buf, file, rest as usize)?;
        } else if need > self.filled {
            self.fill_to(buf, file, need)?;
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The walk's answer when the entry at `base` is garbage for `reason`: the rest of the
    /// file classified in bounded pieces ([`Self::classify_rest`]).
    fn garbage_from_here(
        &self,
        buf: &[u8],
        file: &Handle,
        total: u64,
        reason: crate::read::format::Unframed,
    ) -> io::Result<ControlFlow<Option<crate::read::format::Tail>>> {
        let tail = crate::read::format::Tail::Garbage {
            position: self.base,
            len: total - self.base,
            reason,
        };
        Ok(ControlFlow::Break(Some(
            self.classify_rest(buf, file, total, tail)?,
        )))
    }

    /// How the file ends from the bad header the chunk walk stopped on (`tail`, not
    /// `Clean`) to `total`: the bytes after the buffer are read in bounded pieces to tell a
    /// zero-filled tail from garbage, and a corrupt entry's length runs to the end.
    fn classify_rest(
        &self,
        buf: &[u8],
        file: &Handle,
        total: u64,
        tail: crate::read::format::Tail,
    ) -> io::Result<crate::read::format::Tail> {
        use crate::read::format::Tail;
        Ok(match tail {
            Tail::ZeroFilled { position, .. } | Tail::Garbage { position, .. } => {
                let reason = match tail {
                    Tail::Garbage { reason, .. } => Some(reason),
                    _ => None,
                };
                let mut all_zero = is_zero(&buf[(position - self.base) as usize..self.filled]);
                let mut scratch = vec![0u8; ZEROS.len()];
                let mut at = self.read_to;
                // Bounded memory however long the rest is (a sparse 10 GiB tail).
                while at < total {
                    let n = scratch.len().min((total - at) as usize);
                    read_exact_at(file, &mut scratch[..n], at)?;
                    all_zero &= is_zero(&scratch[..n]);
                    at += n as u64;
                }
                let len = total - position;
                match reason {
                    None if all_zero => Tail::ZeroFilled { position, len },
                    None => Tail::Garbage {
                        position,
                        len,
                        reason: crate::read::format::Unframed::SizeBelowMinimum,
                    },
                    Some(reason) => Tail::Garbage {
                        position,
                        len,
                        reason,
                    },
                }
            }
            Tail::Clean | Tail::Partial { .. } => tail,
            Tail::CorruptEntry {
                position,
                size,
                reason,
                ..
            } => Tail::CorruptEntry {
                position,
                len: total - position,
                size,
                reason,
            },
        })
    }
}

/// The first position in `data[from..from + limit]` where a whole v2 batch with a valid
/// CRC starts (`None` if there is none). A candidate must have magic 2 and a size that
/// fits; the CRC makes a false match (bytes inside a batch that look like one) a 2^-32
/// event, and callers verify every match anyway (a piece must end exactly where the
/// next begins). Candidates larger than `limit.max(max_batch)` are not considered.
///
/// `eof`: `data` ends where the file ends (a batch ending exactly there needs no next
/// header); false for a window read out of the middle of a file.
pub fn sync_point(
    data: &[u8],
    from: usize,
    limit: usize,
    max_batch: usize,
    eof: bool,
) -> Option<usize> {
    let end = from.saturating_add(limit).min(data.len());
    // Bytes the CRC may check before giving up: crafted bytes can make every position a
    // candidate with a large declared size (quadratic work); no split is always safe.
    let mut crc_budget = 4 * limit.max(1 << 20);
    let mut p = from;
    while p < end {
        let rel = data
            .get(p.checked_add(16)?..end.checked_add(16)?.min(data.len()))?
            .iter()
            .position(|&b| b == 2)?;
        p += rel;
        if p >= end {
            return None;
        }
        // The declared size must fit in the file before the CRC is worth computing.
        let size = data
            .get(p + 8..p + 12)
            .and_then(|s| s.try_into().ok())
            .map_or(-1, i32::from_be_bytes);
        let whole = usize::try_from(size)
            .ok()
            .filter(|&n| n >= 49 && n <= limit.max(max_batch))
            .and_then(|n| data.get(p..p.checked_add(12 + n)?))
            .filter(|d| next_follows(data, p, d.len(), eof));
        if let Some(b) = whole.and_then(|d| crate::read::format::BatchView::new(d, p as u64).ok()) {
            crc_budget = crc_budget.checked_sub(b.bytes().len())?;
            if b.is_valid() {
                return Some(p);
            }
        }
        p += 1;
    }
    None
}

/// The largest page-cache folio a fault maps whole (a PMD, 2 MiB on x86-64).
///
/// Since Linux 6.x, ext4 and other file systems cache files in large folios, and a read
/// fault on a mapped file maps the whole folio: touching one byte of a warm file can add
/// 2 MiB to the process's RSS. Measured on this machine (6.18): one byte read every
/// 4 MiB of a mapped 268 MB segment took RssFile from 7 MB to 125 MB.
pub const FOLIO_MAX: usize = 2 << 20;

/// [`sync_point`] over a map (`eof`: the map ends where the file ends), releasing what
/// the search mapped: the pages it read before the batch it found (all of them when
/// none) and the large folios ([`FOLIO_MAX`]) around them. Searching a long run of
/// bytes without a batch (the inside of one huge batch, zeros) never leaves more than
/// one window resident, and the searches of a split segment's ~`len / piece` boundaries
/// do not each leave a folio mapped (they made a 268 MB segment's split peak at 112 MB
/// of file pages).
pub fn mapped_sync_point(
    data: &FileData,
    from: usize,
    limit: usize,
    max_batch: usize,
) -> Option<usize> {
    let found = sync_point(data, from, limit, max_batch, true);
    let end = found.unwrap_or_else(|| from.saturating_add(limit).saturating_add(16));
    data.release_range(
        from.saturating_sub(FOLIO_MAX),
        end.saturating_add(FOLIO_MAX).min(data.len()),
    );
    found
}

/// [`mapped_sync_point`] leaving the page cache as it found it: the pages the search
/// brought in (not resident before it, within a MiB of `from`) are dropped from the cache
/// again through `file`. On a cold cache a page left cached in the middle of the segment
/// breaks the kernel's read-ahead of the walk that comes later: a read-ahead window that
/// meets a cached page falls back from large folios to single pages and synchronous reads
/// (measured: the scan of the 1 GiB synth dir from a cold cache took 0.90–1.01 s with the
/// pages left, 0.69–0.75 s with them dropped; docs/performance.md). Only pages this search
/// read are dropped, so a warm cache (a broker's, or the scan's own next run) is untouched.
pub fn mapped_sync_point_uncached(
    data: &FileData,
    file: Option<&Handle>,
    from: usize,
    limit: usize,
    max_batch: usize,
) -> Option<usize> {
    const PAGE: usize = 4096;
    let span = from.saturating_add(1 << 20).min(data.len());
    let before = data.resident_pages(from, span);
    let found = mapped_sync_point(data, from, limit, max_batch);
    let (Some(file), false) = (file, before.is_empty()) else {
        return found;
    };
    let after = data.resident_pages(from, span);
    let first = (from / PAGE * PAGE) as u64;
    let mut run: Option<(u64, u64)> = None;
    let brought = before.iter().zip(&after).map(|(b, a)| *a && !*b);
    for (i, new) in brought.chain(std::iter::once(false)).enumerate() {
        let at = first + (i * PAGE) as u64;
        match (new, run) {
            (true, None) => run = Some((at, at + PAGE as u64)),
            (true, Some((s, _))) => run = Some((s, at + PAGE as u64)),
            (false, Some((s, e))) => {
                file.drop_cached(s, e);
                run = None;
            }
            (false, None) => {}
        }
    }
    found
}

/// Cheap plausibility before a CRC: the entry of `len` bytes at `p` is followed by the
/// end of the file or by another magic-2 header with a higher base offset.
pub(crate) fn next_follows(data: &[u8], p: usize, len: usize, eof: bool) -> bool {
    let offset_at = |at: usize| {
        data.get(at..at + 8)
            .and_then(|s| s.try_into().ok())
            .map(i64::from_be_bytes)
    };
    let next = p + len;
    if next == data.len() {
        return eof;
    }
    match (offset_at(p), offset_at(next), data.get(next + 16)) {
        (Some(a), Some(b), Some(&2)) => a >= 0 && b > a,
        _ => false,
    }
}

/// Bytes read around a nominal piece boundary of a `read()` file to find its sync point,
/// at most: windows of 64 KiB, 256 KiB, 1 MiB and 4 MiB are tried in turn until one holds
/// a batch that starts and ends in it (so large batches cost a bounded re-read, not a
/// pass over the whole piece).
pub const SYNC_WINDOW: usize = 4 << 20;

/// [`sync_point`] of a file that is read, not mapped: the first batch at or after `from`
/// found in a window of at most [`SYNC_WINDOW`] (and at most `limit`) bytes read with
/// `pread`. `len`: the file length the caller works with; `window`: a reused buffer.
pub fn read_sync_point(
    file: &Handle,
    from: usize,
    limit: usize,
    len: usize,
    window: &mut Vec<u8>,
) -> io::Result<Option<usize>> {
    for window_len in [
        SYNC_WINDOW / 64,
        SYNC_WINDOW / 16,
        SYNC_WINDOW / 4,
        SYNC_WINDOW,
    ] {
        let want = window_len.min(limit).min(len.saturating_sub(from));
        window.resize(want, 0);
        read_exact_at(file, window, from as u64)?;
        let found = sync_point(window, 0, want, limit, from + want == len).map(|p| p + from);
        if found.is_some() || want < window_len {
            return Ok(found);
        }
    }
    Ok(None)
}

/// `pread` of exactly `buf.len()` bytes at `offset` (no shared file position, so pieces
/// of one file can be read in parallel).
pub fn read_exact_at(file: &Handle, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// How the walk of one piece `[start, stop)` of a file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceEnd {
    /// An entry starts exactly at `stop`: the piece chains to the next one.
    Chained,
    /// The entries from `start` do not end exactly at `stop` (or `on_entry` stopped the
    /// walk): `stop` is not an entry boundary of the sequential walk, or the bytes before
    /// it are damaged, or the file changed.
    Broken,
    /// The last piece (no `stop`): how the file ends.
    End(crate::read::format::Tail),
}

/// Walk the entries of `[start, stop)` of `file` (see `walk_read_items`), the file taken
/// to be `total` bytes long; `stop = None` walks to the end. A piece chains when its entries
/// tile `[start, stop)` exactly — then the sequential walk passes through `stop` too, as
/// framing depends only on the bytes from `start` — and nothing at or after `stop` is
/// read (a damaged piece cannot make its walk read the rest of the file). Entries larger
/// than [`BIG_ENTRY`] are CRC-checked streaming, never held (see [`walk_entries_items`]).
pub fn walk_read_piece_items(
    file: &Handle,
    start: u64,
    stop: Option<u64>,
    total: u64,
    on_item: impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> io::Result<PieceEnd> {
    read_piece(file, start, stop, total, Some(BIG_ENTRY), on_item)
}

fn read_piece(
    file: &Handle,
    start: u64,
    stop: Option<u64>,
    total: u64,
    big: Option<usize>,
    on_item: impl FnMut(Item<'_>) -> ControlFlow<()>,
) -> io::Result<PieceEnd> {
    use crate::read::format::Tail;
    Ok(match stop {
        Some(stop) => {
            match walk_read_items(file, start, stop.min(total), CHUNK_SIZE, big, on_item)? {
                Some(Tail::Clean) if stop <= total => PieceEnd::Chained,
                _ => PieceEnd::Broken,
            }
        }
        None => match walk_read_items(file, start, total, CHUNK_SIZE, big, on_item)? {
            Some(tail) => PieceEnd::End(tail),
            None => PieceEnd::Broken,
        },
    })
}

#[cfg(test)]
mod tests;
