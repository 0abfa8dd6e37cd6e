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

use super::{Kind, LoadFailure, SegmentInput, SegmentRecovery, StopReason};
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
    read_swap(dir, &last.name, last.base, mode, max_bytes)
}

/// `readNextOffset` of the swap segment `name` (base `base`) in `dir`, through its
/// `.index.swap` or, without one, an empty index.
fn read_swap(
    dir: &Path,
    name: &str,
    base: i64,
    mode: MmapMode,
    max_bytes: Option<u64>,
) -> Option<NextOffsetRead> {
    let log = dir.join(name);
    let index = dir.join(crate::discover::layout::canonical_segment_name(
        base,
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
    read_log(&log, base, index.as_deref().unwrap_or(&[]), max_bytes)
}

/// The next offset `LogLoader.load`'s first pass reads of the `.log.swap` file `name`
/// (base `base`) in `dir`, which ends the swapped range (`maxSwapFileOffset`): framed from
/// where its `.index.swap`'s last entry points, so an index whose last entry no batch
/// reaches gives the base (`LogSegment.read` finds nothing). `None`: not read (too large,
/// unreadable) or the read throws (the load fails there: [`super::swaps::unreadable`]).
pub(crate) fn swap_next_offset(dir: &Path, name: &str, base: i64) -> Option<i64> {
    read_swap(dir, name, base, MmapMode::Auto, None)?.next_offset(base)
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

/// The load failure of reading the end of a last segment no recovery ran on:
/// `LogSegment.readNextOffset` frames the batches from the offset index's last entry on
/// and throws at a size field below 14 (`FileLogInputStream.nextBatch`:
/// `CorruptRecordException`) or at a v2 header running past the end of the file
/// (`loadBatchHeader`: `KafkaException`); `recoverLog` does not catch either (only
/// `InvalidOffsetException` and `IOException` around a recovery), so the log fails to load
/// and the broker does not start. When that read was not made ([`SegmentInput::read_next`]),
/// a zero-filled tail of 18 bytes or more, which every read that gets there throws at.
pub(super) fn last_segment_unreadable(
    segs: &[SegmentInput],
    recovered: &[SegmentRecovery],
) -> Option<Box<LoadFailure>> {
    use crate::read::format::index::NextOffsetOutcome;
    let last = segs.last()?;
    if recovered.iter().any(|r| r.segment == last.name) {
        return None;
    }
    let stop = last.walk.as_ref().and_then(|w| w.stop.as_deref());
    let read = last
        .read_next
        .filter(|_| last.opened_as.is_none() && !last.created);
    let zero_tail = |p: u64| stop.filter(|(at, why, _)| *at == p && why.zero_tail_throws());
    let (position, kind, exception, why) = match read.map(|r| r.outcome) {
        None => {
            let (position, why, _) = stop.filter(|s| s.1.zero_tail_throws())?;
            (
                *position,
                Kind::PreallocatedTail,
                "CorruptRecordException",
                why.to_string(),
            )
        }
        Some(NextOffsetOutcome::SizeBelowMinimum { position, .. })
            if let Some((_, why, _)) = zero_tail(position) =>
        {
            (
                position,
                Kind::PreallocatedTail,
                "CorruptRecordException",
                why.to_string(),
            )
        }
        Some(NextOffsetOutcome::SizeBelowMinimum { position, size }) => (
            position,
            thrown_kind(stop, position),
            "CorruptRecordException",
            format!("its size field reads {size}"),
        ),
        Some(NextOffsetOutcome::HeaderPastEnd { position }) => {
            let r = read?;
            return Some(Box::new(LoadFailure {
                kind: thrown_kind(stop, position).id().into(),
                offset: None,
                exception: "KafkaException".into(),
                message: format!(
                    "reading the end of the last segment {} at load (LogLoader.recoverLog → deleteSegmentsIfLogStartGreaterThanLogEnd → LogSegment.readNextOffset, with no recovery of that segment before it; the read starts at byte {}, where its offset index's last entry, offset {}, points) meets a batch of magic 2 or more at byte {position} whose 61-byte header runs past the end of the file: FileChannelRecordBatch.loadBatchHeader throws KafkaException, which the load does not catch (the broker does not start)",
                    last.name, r.start_position, r.index_last_offset
                ),
            }));
        }
        Some(_) => return None,
    };
    let from = read.map_or(String::new(), |r| {
        format!(
            "; the read starts at byte {}, where its offset index's last entry, offset {}, points",
            r.start_position, r.index_last_offset
        )
    });
    Some(Box::new(LoadFailure {
        kind: kind.id().into(),
        offset: None,
        exception: exception.into(),
        message: format!(
            "reading the end of the last segment {} at load (LogLoader.recoverLog → deleteSegmentsIfLogStartGreaterThanLogEnd → LogSegment.readNextOffset, with no recovery of that segment before it{from}) meets the entry at byte {position} — {why}: FileLogInputStream.nextBatch throws CorruptRecordException for a size below 14 bytes, which the load does not catch (the broker does not start)",
            last.name
        ),
    }))
}

/// The finding kind behind a throw of the last segment's read at `position`: the walk's
/// own stop there (bytes that do not frame, an impossible entry), else the offset index,
/// whose last entry started the read where the log's framing does not.
pub(super) fn thrown_kind(stop: Option<&(u64, StopReason, Option<i64>)>, position: u64) -> Kind {
    match stop {
        Some((at, StopReason::Unframed { .. }, _)) if *at == position => Kind::TrailingBytes,
        Some((at, StopReason::ImpossibleSize { .. } | StopReason::InvalidBatch { .. }, _))
            if *at == position =>
        {
            Kind::InvalidBatch
        }
        Some((at, StopReason::ZeroFilled { .. }, _)) if *at == position => Kind::PreallocatedTail,
        _ => Kind::IndexMismatch,
    }
}

/// The end of a log whose every segment was read whole and holds no batch: its last
/// segment's base (`LogLoader.recoverLog` takes the last segment's
/// `LogSegment.readNextOffset` as the log end, and an empty segment's is its base offset:
/// a log emptied by retention, `DeleteRecords` or `truncateFullyAndStartAt`). `None` when a
/// segment holds a batch (the replay takes the end from the batches), was not read, or
/// stops before its end (the recovery decides), and when there is no segment.
pub(crate) fn empty_log_end(walks: &[super::SegmentWalk]) -> Option<i64> {
    let empty = |w: &super::SegmentWalk| {
        (w.walk.as_ref()).is_some_and(|w| w.batches == 0 && w.stop.is_none())
    };
    let last = walks.last()?;
    walks.iter().all(empty).then_some(last.base_offset)
}
