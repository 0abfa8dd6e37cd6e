//! `LogSegment.readNextOffset` of the last segment, read off its files as they are.
//!
//! `LogLoader.recoverLog` ends with `deleteSegmentsIfLogStartGreaterThanLogEnd`, which takes
//! the log end from the last segment's `readNextOffset`, whatever the shutdown. When no
//! recovery ran on that segment first (a clean shutdown: the marker makes `recoverLog` skip
//! every segment, and `loadSegmentFiles` recovers only one without its offset index), the
//! read goes through the offset index on disk: it starts at the position of the index's last
//! entry and frames the batch headers from there (the format layer's
//! [`read_next_offset_in`]). It therefore differs from the walk's end (framed from byte 0)
//! exactly when the index and the log disagree: a `.log` cut short below the index's last
//! entry ends the log at the segment's base; an entry pointing inside a batch frames what it
//! points at, and may throw.
//!
//! After an unclean (or unknown) shutdown the last segment is always recovered — the
//! unflushed segments run from the one holding the recovery point to the end
//! (`LogSegments.values(recoveryPoint, Long.MAX_VALUE)`), unless a truncation deletes it —
//! and the rebuilt index agrees with the log: nothing is read here then.
//!
//! A swapped-in last segment (a `.log.swap` the load renames in) is read the same way,
//! through the index it is loaded with: its `N.index.swap`, or the new, empty one the
//! load's first pass creates for it (the read then starts at byte 0).

use super::SegmentInput;
use crate::discover::layout::SegmentFiles;
use crate::read::format::index::{NextOffsetRead, OffsetIndex, read_next_offset_in};
use crate::read::segment::{FileClass, MmapMode, READ_BUDGET, load, open_regular, read_exact_at};
use std::path::Path;

/// Set [`SegmentInput::read_next`] of the last of `inputs` (the segments a walk read, in
/// order) from its files among `segments`, when the load may leave it unrecovered
/// (`clean_shutdown`: the marker is present). `max_bytes`: the scan's bound on a segment's
/// bytes; a `.log` longer than it is not read (its end is not the walk's either).
///
/// Every swapped-in segment is read so whatever the shutdown: `LogLoader.load`'s first
/// pass reads each `.log.swap` segment's next offset (`readNextOffset`) before anything
/// is recovered, and a throw there fails the load. Not for a broker before 3.0
/// (`swaps_read` false), which recovers each swap before it reads its end.
pub(crate) fn attach(
    inputs: &mut [SegmentInput],
    (dir, segments): (&Path, &[SegmentFiles]),
    (clean_shutdown, swaps_read): (Option<bool>, bool),
    mode: MmapMode,
    max_bytes: Option<u64>,
) {
    let swaps = inputs
        .iter_mut()
        .filter(|s| swaps_read && s.name.ends_with(".log.swap"));
    for s in swaps {
        s.read_next = swapped_in(s, dir, mode, max_bytes);
    }
    if clean_shutdown != Some(true) {
        return;
    }
    let Some(last) = inputs.last_mut() else {
        return;
    };
    if last.name.ends_with(".log.swap") {
        return;
    }
    let named = |s: &&SegmentFiles| {
        s.log
            .as_deref()
            .and_then(|l| l.file_name())
            .is_some_and(|n| n.to_string_lossy() == last.name)
    };
    let Some(files) = segments
        .iter()
        .filter(|s| s.base_offset == last.base)
        .find(named)
    else {
        return;
    };
    last.read_next = read(files, mode, max_bytes);
}

/// `readNextOffset` of a swapped-in last segment (`last`, named by its `.log.swap` file in
/// `dir`, as `swaps::CompletedSwaps::apply` names it). The load's first pass opened it with
/// the `.swap` suffix, its offset index being `N.index.swap` or, without one, a new file
/// (no entry: the read starts at byte 0), which the third pass renames with it; after a
/// clean shutdown no recovery runs on it, so the log ends where this read ends, CRCs
/// unchecked. A swap the load creates empty (no file of that name) is not read.
fn swapped_in(
    last: &SegmentInput,
    dir: &Path,
    mode: MmapMode,
    max_bytes: Option<u64>,
) -> Option<NextOffsetRead> {
    let log = dir.join(&last.name);
    let index = dir.join(crate::discover::layout::canonical_segment_name(
        last.base,
        ".index.swap",
    ));
    // Followed as Java opens it (`RandomAccessFile`). A FIFO opens and maps as 0 bytes,
    // no entry (JDK 17); a directory fails the open (an `IOException`, not modelled).
    let index = match std::fs::metadata(&index) {
        Ok(m) if m.is_file() => Some(load(&index, FileClass::Index, mode, None).ok()?),
        Ok(m) if is_fifo(&m) => None,
        Ok(_) => return None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return None,
    };
    read_log(&log, last.base, index.as_deref().unwrap_or(&[]), max_bytes)
}

#[cfg(unix)]
fn is_fifo(m: &std::fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type())
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::Metadata) -> bool {
    false
}

/// `readNextOffset` of the segment `files`: `None` when its offset index is missing (the
/// load recovers it) or a file cannot be read, or the bytes to read exceed the budget.
fn read(files: &SegmentFiles, mode: MmapMode, max_bytes: Option<u64>) -> Option<NextOffsetRead> {
    let index = load(files.index.as_deref()?, FileClass::Index, mode, None).ok()?;
    read_log(files.log.as_deref()?, files.base_offset, &index, max_bytes)
}

/// `readNextOffset` of the `.log` at `log` (base `base`) through the offset index `index`.
fn read_log(log: &Path, base: i64, index: &[u8], max_bytes: Option<u64>) -> Option<NextOffsetRead> {
    let idx = OffsetIndex::new(index, base);
    let (_, start) = idx.read_start();
    let (handle, len) = open_regular(log).ok()?;
    if max_bytes.is_some_and(|m| len > m) {
        return None;
    }
    let from = start.min(len);
    if len - from > READ_BUDGET {
        return None;
    }
    let mut tail = vec![0u8; (len - from) as usize];
    read_exact_at(&handle, &mut tail, from).ok()?;
    Some(read_next_offset_in(&idx, &tail, from))
}
