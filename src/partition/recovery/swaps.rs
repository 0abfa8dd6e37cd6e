//! Completed swaps: before it loads any segment, `LogLoader.load` finishes the cleaner's or
//! a split's interrupted replacement of segments. Its first pass deletes `.cleaned` files
//! and the `.swap` files at or above the lowest `.cleaned` offset (an unfinished split,
//! `removeTempFilesAndCollectSwapFiles`); the `.log.swap` files left make one range, from
//! the lowest swap base to the highest next offset among them; its second pass deletes
//! every other file whose name's offset lies in that range (the replaced segments, their
//! indexes, their producer snapshots); its third renames every `.swap` file. Only then are
//! the segments loaded and recovered — the swapped-in ones, not the files they replace.
//!
//! One model for `scan` (the recovery plan, the fate of damaged bytes) and `verify` (the
//! prediction, the leftovers' actions). The swapped-in segments are walked here, once,
//! for where `LogSegment.recover` would stop on them: framing and CRCs, what a file the
//! broker wrote and flushed whole can get wrong on disk; the record-level checks of the
//! scan's walk are not repeated on them.

use super::plan::SegmentInput;
use super::{RecoverCheck, RecoverWalk, StopReason, SwappedTail};
use crate::discover::layout::{FileKind, LeftoverKind, PartitionDir};
use crate::read::format::{Classified, RawEntry, Tail, classify};
use crate::read::segment::{Item, ReadPolicy, walk_entries_items};
use std::path::{Path, PathBuf};

/// One `.log.swap` file the load renames into a segment.
#[derive(Debug, Clone)]
pub(crate) struct SwappedIn {
    /// The swap file the load opens: the broker's name for it (`LogSegment.open` with the
    /// `.swap` suffix), whatever the name it was found under.
    pub path: PathBuf,
    pub base: i64,
    /// The offset after its last batch (its base when it holds none), as Java computes it
    /// (`Long.MIN_VALUE` after a batch ending at `Long.MAX_VALUE`).
    pub next: i64,
    /// Found only under a noncanonical name (`5.log.swap`): the load opens `path`, which
    /// does not exist, and so creates it empty (see [`CompletedSwaps::of`]).
    pub created: bool,
    /// Where `LogSegment.recover` stops on it (`None`: unreadable), walked once.
    pub walk: Option<RecoverWalk>,
}

/// The swaps a partition's next load completes.
#[derive(Debug, Clone)]
pub(crate) struct CompletedSwaps {
    pub segments: Vec<SwappedIn>,
    /// `[from, to)`: every other file whose offset lies here is deleted first.
    pub from: i64,
    pub to: i64,
    /// Brokers before 3.0 ([`CompletedSwaps::before_3_0`]): per swap of `segments`, the
    /// `(base, name)` of the segments its completion replaces. `None`: 3.0 and later.
    pub replaced_before_3_0: Option<Vec<Vec<(i64, String)>>>,
}

/// Why a broker before 3.0 recovers a swapped-in segment at load.
pub(crate) const SWAP_RECOVERY_BEFORE_3_0: &str = "completing its swap at load (brokers before 3.0: Log.completeSwapOperations recovers every .log.swap segment, whatever the shutdown, before it replaces the segments the swap's offsets cover)";

/// The offset the load reads in a file's name (`LogFileUtils.offsetFromFile`).
fn offset_of(path: &Path) -> Option<i64> {
    crate::discover::layout::kafka_offset_of_name(path.file_name()?.to_str()?)
}

/// The lowest offset among `p`'s `.cleaned` files (`removeTempFilesAndCollectSwapFiles`:
/// every `.swap` file at or above it belongs to an unfinished split and is deleted).
pub(crate) fn min_cleaned(p: &PartitionDir) -> Option<i64> {
    p.leftovers
        .iter()
        .filter(|(k, _)| *k == LeftoverKind::Cleaned)
        .filter_map(|(_, path)| offset_of(path))
        .min()
}

/// A `.log.swap` file's name without `.swap`, and whether that is a noncanonical log
/// name (`5.log`: `discover::layout::noncanonical_segment_name`).
pub(crate) fn swap_log_stem(path: &Path) -> Option<(&str, bool)> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".swap")?;
    let role = crate::discover::layout::segment_file_role(stem);
    (role.map(|r| r.0) == Some(FileKind::Log)).then(|| {
        let alias = crate::discover::layout::noncanonical_segment_name(stem).is_some();
        (stem, alias)
    })
}

impl CompletedSwaps {
    /// The `.log.swap` files of `p` its next load completes (`None`: none), read for their
    /// last offsets; an unreadable one is left out (the file checks report it).
    ///
    /// A `.log.swap` file under a noncanonical name of its offset N (`5.log.swap`,
    /// `+5.log.swap`) is never read: `LogLoader.load` opens the swap segment by the
    /// broker's name of N (`LogSegment.open(…, ".swap")`, `FileRecords.open` with
    /// `StandardOpenOption.CREATE`), reads its end (`readNextOffset`), and its third pass
    /// renames every `.swap` file. So when no `.log.swap` file has the broker's name of N,
    /// that one is created empty and renamed over the segment at N (which then loads
    /// empty); the file found is renamed to its name without `.swap`, which the segment
    /// loop never reads either. A negative N is left out (not predicted: see
    /// [`super::aliases`]).
    pub(crate) fn of(p: &PartitionDir) -> Option<CompletedSwaps> {
        let min_cleaned = min_cleaned(p);
        let swaps: Vec<(&Path, i64, bool)> = p
            .leftovers
            .iter()
            .filter(|(k, _)| *k == LeftoverKind::Swap)
            .filter_map(|(_, path)| {
                let (_, alias) = swap_log_stem(path)?;
                let base = offset_of(path)?;
                let valid = min_cleaned.is_none_or(|c| base < c);
                valid.then_some((path.as_path(), base, alias))
            })
            .collect();
        let canonical: std::collections::HashSet<i64> =
            swaps.iter().filter(|s| !s.2).map(|s| s.1).collect();
        let mut created = std::collections::HashSet::new();
        let mut segments: Vec<SwappedIn> = Vec::new();
        for (path, base, alias) in swaps {
            if !alias {
                let Some(last) = last_offset(path) else {
                    continue;
                };
                segments.push(SwappedIn {
                    path: path.to_path_buf(),
                    base,
                    // `readNextOffset`, through its `.index.swap`; where that read is not
                    // made, the last batch's `nextOffset()`. Either is `lastOffset() + 1`,
                    // a Java long, which wraps past `Long.MAX_VALUE` (the swap then ends
                    // the range nowhere).
                    next: (path.parent().zip(path.file_name().and_then(|n| n.to_str())))
                        .and_then(|(d, n)| super::last_read::swap_next_offset(d, n, base))
                        .unwrap_or_else(|| last.map_or(base, |l| l.wrapping_add(1))),
                    created: false,
                    walk: recover_walk(path, base),
                });
            } else if base >= 0 && !canonical.contains(&base) && created.insert(base) {
                let name = crate::discover::layout::canonical_segment_name(base, ".log.swap");
                segments.push(SwappedIn {
                    path: p.path.join(name),
                    base,
                    next: base,
                    created: true,
                    // A swap created empty holds no batch.
                    walk: Some(super::aliases::empty_walk(base)),
                });
            }
        }
        segments.sort_by_key(|s| s.base);
        let from = segments.iter().map(|s| s.base).min()?;
        let to = segments.iter().map(|s| s.next).max()?;
        Some(CompletedSwaps {
            segments,
            from,
            to,
            replaced_before_3_0: None,
        })
    }

    /// The swaps as a broker before 3.0 completes them (`Log.loadSegments`): its first pass
    /// (`removeTempFilesAndCollectSwapFiles`) deletes the index files at each `.log.swap`'s
    /// base and collects the swaps; `loadSegmentFiles` loads every `.log` (the segments the
    /// swaps replace included); then `completeSwapOperations` takes each swap in turn:
    /// `recoverSegment` on it, whatever the shutdown (its indexes rebuilt, its bytes cut at
    /// the first invalid batch), then `replaceSegments` with the segments its recovered
    /// offsets cover — those from the one holding its base (`logSegments(base, next)`: the
    /// floor segment included) below its next offset whose own next offset lies above its
    /// base — which are renamed `.deleted` (deleted after `file.delete.delay.ms`), and the
    /// swap renamed to `.log` (over a segment at its base, which the map entry replaces). No
    /// range is cleared: a segment between two swaps that neither covers stays.
    ///
    /// `segments`: `(base, name, next offset)` of each segment `loadSegmentFiles` loads
    /// (`None`: not read, replaced only when based in a swap's offsets). The swaps are
    /// taken in base order (the broker's is a `HashSet`'s: the same for swaps that do not
    /// overlap).
    pub(crate) fn before_3_0(mut self, segments: &[(i64, String, Option<i64>)]) -> Self {
        let mut held: std::collections::BTreeMap<i64, (String, Option<i64>)> = segments
            .iter()
            .map(|(b, n, e)| (*b, (n.clone(), *e)))
            .collect();
        let mut per = Vec::with_capacity(self.segments.len());
        for s in &self.segments {
            let next = s.walk.as_ref().map_or(s.next, |w| w.next_offset);
            let floor = held.range(..=s.base).next_back().map(|(b, _)| *b);
            let covered: Vec<i64> = match floor.or(held.keys().next().copied()) {
                Some(lo) if next > s.base => held
                    .range(lo.min(s.base)..next)
                    .filter(|(b, (_, end))| match end {
                        Some(end) => *end > s.base,
                        None => **b >= s.base,
                    })
                    .map(|(b, _)| *b)
                    .collect(),
                _ => Vec::new(),
            };
            let mut gone: Vec<(i64, String)> = Vec::new();
            for b in covered.into_iter().chain(std::iter::once(s.base)) {
                if let Some((name, _)) = held.remove(&b) {
                    gone.push((b, name));
                }
            }
            held.insert(s.base, (format!("{:020}.log.swap", s.base), Some(next)));
            per.push(gone);
        }
        self.replaced_before_3_0 = Some(per);
        self
    }

    /// Whether the file named by offset `offset` is deleted before the load (3.0 and
    /// later: the second pass clears the swapped range; before 3.0 nothing is cleared by
    /// offset, the replaced segments are named in [`CompletedSwaps::replaced_before_3_0`]).
    pub(crate) fn clears(&self, offset: i64) -> bool {
        self.replaced_before_3_0.is_none() && (self.from..self.to).contains(&offset)
    }

    /// Whether the segment at `base` is gone once the swaps are done: deleted in the range,
    /// or overwritten by the rename of a swap at its base (`segments` is sorted by base);
    /// before 3.0, replaced by a swap.
    pub(crate) fn removes(&self, base: i64) -> bool {
        let replaced = self
            .replaced_before_3_0
            .as_ref()
            .is_some_and(|per| per.iter().flatten().any(|(b, _)| *b == base));
        replaced
            || self.clears(base)
            || self
                .segments
                .binary_search_by_key(&base, |s| s.base)
                .is_ok()
    }

    /// The names of the segments the swap at `base` replaces before 3.0 (`None`: 3.0 and
    /// later, or no such swap).
    pub(crate) fn replaced_by(&self, base: i64) -> Option<Vec<&str>> {
        let per = self.replaced_before_3_0.as_ref()?;
        let i = self.segments.iter().position(|s| s.base == base)?;
        Some(per.get(i)?.iter().map(|(_, n)| n.as_str()).collect())
    }

    /// The segments the load sees once the swaps are done: `inputs` outside the range (and
    /// not at a swapped-in base: an empty swap clears no range, its rename overwrites the
    /// segment there), and each swapped-in segment — named by its `.log.swap` file, so that
    /// nothing said of the file it replaces (same base, same name once renamed) is taken for
    /// it; recovered for a missing offset index when it had no `.index.swap`; its
    /// `.txnindex.swap` checked at load as any segment's (`read`: how the load maps it and
    /// whether it reads an entry's whole version, [`super::txnindex_verdict`]). Returns them with the names of
    /// the segments the swaps replace.
    pub(crate) fn apply(
        &self,
        inputs: Vec<SegmentInput>,
        p: &PartitionDir,
        read: (crate::read::segment::MmapMode, bool),
    ) -> (Vec<SegmentInput>, Vec<String>) {
        let (replaced, mut kept): (Vec<SegmentInput>, Vec<SegmentInput>) =
            inputs.into_iter().partition(|s| self.removes(s.base));
        // The swap files by (base, kind), found once.
        let mut files: std::collections::HashMap<(i64, &str), &Path> =
            std::collections::HashMap::new();
        for (_, path) in &p.leftovers {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(base) = offset_of(path) else {
                continue;
            };
            // The segment opens the broker's names of its swap files only.
            for ext in ["index", "txnindex"] {
                let suffix = format!(".{ext}.swap");
                if name == crate::discover::layout::canonical_segment_name(base, &suffix) {
                    files.insert((base, ext), path.as_path());
                }
            }
        }
        // Before 3.0 a swap a later one replaced is gone too.
        let replaced_swaps: std::collections::HashSet<&str> = (self.replaced_before_3_0.iter())
            .flatten()
            .flatten()
            .map(|(_, n)| n.as_str())
            .collect();
        for s in &self.segments {
            let name = format!("{:020}.log.swap", s.base);
            if self.replaced_before_3_0.is_some() {
                if !replaced_swaps.contains(name.as_str()) {
                    kept.push(self.recovered_before_3_0(s, name, p));
                }
                continue;
            }
            // Without an `.index.swap` the swap still brings an offset index: the first
            // pass of `LogLoader.load` opens each swap segment and reads its next offset
            // (`readNextOffset` → `offsetIndex().lastOffset()`), which creates the lazy
            // index file, preallocated (`AbstractIndex`: a new file is set to the maximum
            // index size); the rename that completes the swap moves it to `.index`, whose
            // sanity check passes (its last entry reads as the base offset). So the segment
            // is not recovered for a missing index.
            //
            // Unless the broker's `N.index.swap` is there and not a regular file: a FIFO
            // (or device) opens and maps as an empty index for that read (JDK 17), but no
            // pass renames or deletes what is not a file (`File.isFile`), so the segment
            // loads with whatever `N.index` is left: the replaced segment's own, unless the
            // second pass deleted it (its base in the range), else none (recovered). A
            // directory fails that open (`open_error`).
            let index_swap = crate::discover::layout::canonical_segment_name(s.base, ".index.swap");
            let has_index = match std::fs::metadata(p.path.join(index_swap)) {
                Ok(m) if !m.is_file() && !m.is_dir() => {
                    !self.clears(s.base)
                        && p.segments
                            .iter()
                            .any(|f| f.base_offset == s.base && f.index.is_some())
                }
                _ => true,
            };
            let txn = files.get(&(s.base, "txnindex")).copied();
            // Kafka reads it once renamed: its messages name the path without `.swap`.
            let verdict = txn.map(|t| {
                let renamed = t.display().to_string();
                let shown = renamed.strip_suffix(".swap").unwrap_or(&renamed);
                super::txnindex_verdict(t, shown, s.base, read)
            });
            let (corrupt_index, load_error) = match verdict {
                Some(super::TxnIndexVerdict::LoadFails(msg)) if has_index => (None, Some(msg)),
                Some(super::TxnIndexVerdict::Corrupt(why)) => (Some(why), None),
                _ => (None, None),
            };
            kept.push(SegmentInput {
                name,
                base: s.base,
                missing_index: !has_index,
                corrupt_index,
                load_error,
                walk: s.walk.clone(),
                opened_as: None,
                created: false,
                read_next: None,
                open_error: open_error(&p.path, s.base, false),
                oversize: None,
            });
        }
        kept.sort_by_key(|s| s.base);
        (kept, replaced.into_iter().map(|s| s.name).collect())
    }

    /// The swapped-in segment `s` (named `name`) as a broker before 3.0 loads it:
    /// recovered at load whatever the shutdown (`completeSwapOperations` →
    /// `recoverSegment`), which resets and rebuilds its indexes — its `.index.swap` and
    /// `.timeindex.swap` as they are are never read, its `.txnindex.swap` never checked —
    /// and so, its first pass reading nothing of it, nothing thrown before the recoveries.
    fn recovered_before_3_0(&self, s: &SwappedIn, name: String, p: &PartitionDir) -> SegmentInput {
        SegmentInput {
            name,
            base: s.base,
            missing_index: false,
            corrupt_index: Some(SWAP_RECOVERY_BEFORE_3_0.into()),
            load_error: None,
            walk: s.walk.clone(),
            opened_as: None,
            created: false,
            read_next: None,
            open_error: open_error(&p.path, s.base, true),
            oversize: None,
        }
    }
}

/// The `IOException` of opening the swap segment at `base`'s index files when one is a
/// directory or another file Java cannot open as one (a socket), as `LogSegment.open`
/// builds the segment with the `.swap` suffix: its `TransactionIndex` opens
/// `N.txnindex.swap` at once when it exists (`FileChannel.open`), and the offset index
/// `N.index.swap` is opened by the first read through it (`LazyIndex.get` → `OffsetIndex`
/// → `RandomAccessFile`) — since 3.0 the first pass's `readNextOffset`; before 3.0
/// (`before_3_0`) the swap's recovery (`LogSegment.recover` resets its offset, then its
/// time index, `N.timeindex.swap`). Since 3.0 the time index is never read there: a
/// directory at `N.timeindex.swap` fails nothing (no pass renames or deletes it, and the
/// loaded segment gets a new `.timeindex`). A FIFO opens (JDK 17): not a failure here.
fn open_error(dir: &Path, base: i64, before_3_0: bool) -> Option<String> {
    let exts: &[&str] = if before_3_0 {
        &["txnindex", "index", "timeindex"]
    } else {
        &["txnindex", "index"]
    };
    exts.iter().find_map(|ext| {
        let name = crate::discover::layout::canonical_segment_name(base, &format!(".{ext}.swap"));
        // Followed as Java opens it.
        let m = std::fs::metadata(dir.join(&name)).ok()?;
        let what = if m.is_dir() {
            "a directory"
        } else if is_socket(&m) {
            "a socket"
        } else {
            return None;
        };
        let how = match *ext {
            "txnindex" => "its TransactionIndex opens it at once (FileChannel.open)",
            "index" if before_3_0 => "LogSegment.recover resets the offset index, which opens it (LazyIndex.get → OffsetIndex → RandomAccessFile)",
            "index" => "reading the swap's next offset opens its offset index (LazyIndex.get → OffsetIndex → RandomAccessFile)",
            _ => "LogSegment.recover resets the time index, which opens it (LazyIndex.get → TimeIndex → RandomAccessFile)",
        };
        Some(format!("{name} is {what}: {how}, and that throws an IOException"))
    })
}

#[cfg(unix)]
fn is_socket(m: &std::fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())
}

#[cfg(not(unix))]
fn is_socket(_: &std::fs::Metadata) -> bool {
    false
}

/// The load failure of `LogLoader.load`'s first pass on a `.log.swap` segment: it reads
/// each one's next offset (`LogSegment.readNextOffset`, through its `.index.swap` or the
/// empty index it creates) before any recovery, whatever the shutdown, so a size field
/// below 14 (`FileLogInputStream.nextBatch`: `CorruptRecordException`) or a v2 header
/// running past the end of the file (`loadBatchHeader`: `KafkaException`) fails the load
/// there; the recovery of the swapped-in segment is never reached. The swaps in base
/// order (the load's is a `HashSet`'s: any of those that throw may be the one met).
///
/// Before the read, `LogSegment.open` of the swap (its `.txnindex.swap`) and the read's
/// open of its offset index (`.index.swap`) throw an `IOException` where that file is a
/// directory ([`SegmentInput::open_error`]): `LogManager.loadLogs` catches it, and the
/// log dir goes offline. (Before 3.0 the swaps are opened after `loadSegmentFiles`:
/// [`open_failure_before_3_0`].)
pub(super) fn unreadable(segs: &[SegmentInput]) -> Option<Box<super::LoadFailure>> {
    use crate::read::format::index::NextOffsetOutcome;
    segs.iter()
        .filter(|s| s.name.ends_with(".log.swap"))
        .find_map(|s| {
            if let Some(why) = s.open_error.as_deref().filter(|_| !recovered_before_3_0(s)) {
                return Some(open_failure(
                    s,
                    why,
                    "LogLoader.load's first pass opens each .log.swap segment (LogSegment.open with the .swap suffix) and reads its next offset, LogSegment.readNextOffset, before any segment is recovered, whatever the shutdown",
                ));
            }
            let r = s.read_next?;
            let stop = s.walk.as_ref().and_then(|w| w.stop.as_deref());
            let (position, exception, what) = match r.outcome {
                NextOffsetOutcome::SizeBelowMinimum { position, size } => (
                    position,
                    "CorruptRecordException",
                    format!("meets the entry at byte {position} — its size field reads {size}: FileLogInputStream.nextBatch throws CorruptRecordException for a size below 14 bytes"),
                ),
                NextOffsetOutcome::HeaderPastEnd { position } => (
                    position,
                    "KafkaException",
                    format!("meets a batch of magic 2 or more at byte {position} whose 61-byte header runs past the end of the file: FileChannelRecordBatch.loadBatchHeader throws KafkaException"),
                ),
                _ => return None,
            };
            use crate::finding::Kind;
            let kind = match stop {
                Some((at, StopReason::Swapped { tail }, _)) if *at == position => match tail {
                    SwappedTail::ZeroFilled { .. } => Kind::PreallocatedTail,
                    SwappedTail::Unframed { .. } => Kind::TrailingBytes,
                    _ => Kind::InvalidBatch,
                },
                _ => super::last_read::thrown_kind(stop, position),
            };
            Some(Box::new(super::LoadFailure {
                kind: kind.id().into(),
                offset: None,
                exception: exception.into(),
                message: format!(
                    "reading the end of {} while completing its swap at load (LogLoader.load's first pass opens each .log.swap segment and reads its next offset, LogSegment.readNextOffset, before any segment is recovered, whatever the shutdown; the read starts at byte {}, where its offset index's last entry, offset {}, points) {what}, which the load does not catch (the broker does not start)",
                    s.name, r.start_position, r.index_last_offset
                ),
            }))
        })
}

/// Whether `s` is a swapped-in segment a broker before 3.0 recovers at load.
fn recovered_before_3_0(s: &SegmentInput) -> bool {
    s.corrupt_index.as_deref() == Some(SWAP_RECOVERY_BEFORE_3_0)
}

/// The load failure of opening a swap segment's index file that is a directory (`why`,
/// [`SegmentInput::open_error`]) at the step `when`: an `IOException`, which
/// `LogManager.loadLogs` catches for the log, reporting its log dir to the
/// `LogDirFailureChannel`.
fn open_failure(s: &SegmentInput, why: &str, when: &str) -> Box<super::LoadFailure> {
    Box::new(super::LoadFailure {
        kind: crate::finding::Kind::LeftoverFile.id().into(),
        offset: None,
        exception: "IOException".into(),
        message: format!(
            "opening {} while completing its swap at load ({when}): {why}; LogManager.loadLogs catches the IOException and takes the log dir offline (LogDirFailureChannel): none of its partitions is served by this broker (the broker halts when it was its last live log dir)",
            s.name
        ),
    })
}

/// Before 3.0, the first swap whose index file is a directory
/// ([`SegmentInput::open_error`]): `Log.completeSwapOperations` opens each swap segment
/// (`LogSegment.open`) and recovers it after `loadSegmentFiles` has loaded every segment
/// (its failures come first).
pub(super) fn open_failure_before_3_0(segs: &[SegmentInput]) -> Option<Box<super::LoadFailure>> {
    segs.iter()
        .filter(|s| recovered_before_3_0(s))
        .find_map(|s| {
            let why = s.open_error.as_deref()?;
            Some(open_failure(
                s,
                why,
                "brokers before 3.0: Log.completeSwapOperations opens each .log.swap segment and recovers it, whatever the shutdown, once loadSegmentFiles has loaded the other segments",
            ))
        })
}

/// The last offset of the last entry of the `.log`-format file at `path` (`Some(None)`:
/// no entry; `None`: unreadable), from the headers only: read in bounded chunks, an entry
/// larger than `segment::BIG_ENTRY` taken streaming.
pub(crate) fn last_offset(path: &Path) -> Option<Option<i64>> {
    let mut last = None;
    let of = |e: RawEntry<'_>| match classify(e) {
        Classified::V2(b) => b.last_offset(),
        Classified::Legacy(m) => m.offset(),
        Classified::Invalid(_) => e.offset(),
    };
    walk_entries_items(path, ReadPolicy::Read, None, |item| {
        last = Some(match item {
            Item::Entry(e) => of(e),
            Item::Big(big) => {
                let head = big.header_only();
                of(RawEntry {
                    position: big.position,
                    bytes: &head,
                })
            }
        });
    })
    .ok()?;
    Some(last)
}

/// Where `LogSegment.recover` stops on the swapped-in segment at `path` (base `base`):
/// its first entry whose CRC fails or that does not frame, or its tail (a partial batch,
/// zeros, bytes that do not frame). An entry too large to hold is taken by its header and
/// its streamed CRC.
fn recover_walk(path: &Path, base: i64) -> Option<RecoverWalk> {
    let mut check = RecoverCheck::new(base);
    let mut first_bad: Option<(u64, StopReason, Option<i64>)> = None;
    // `crc`: the big entry's streamed CRC verdict, else the entry's own.
    let mut entry = |position: u64, c: Classified<'_>, size: u64, crc: Option<bool>| {
        let (ok, last, records, first, ts) = match c {
            Classified::V2(b) => (
                crc.unwrap_or_else(|| b.is_valid()),
                b.last_offset(),
                b.records_count(),
                b.base_offset(),
                b.max_timestamp(),
            ),
            Classified::Legacy(m) => (
                crc.unwrap_or_else(|| m.is_valid()),
                m.offset(),
                1,
                m.offset(),
                m.timestamp(),
            ),
            Classified::Invalid(_) => (false, -1, 0, -1, -1),
        };
        let kept = first_bad.is_none();
        check.count(records, ok, kept && ok);
        if kept {
            if ok {
                check.batch(last, ts, u32::try_from(size).unwrap_or(u32::MAX));
            } else {
                first_bad = Some((
                    position,
                    StopReason::CrcMismatch,
                    (first >= 0).then_some(first),
                ));
            }
        }
    };
    let (tail, len) = walk_entries_items(path, ReadPolicy::Read, None, |item| match item {
        Item::Entry(e) => entry(e.position, classify(e), e.bytes.len() as u64, None),
        Item::Big(big) => {
            let head = big.header_only();
            let e = RawEntry {
                position: big.position,
                bytes: &head,
            };
            entry(big.position, classify(e), big.len, Some(big.crc_valid()))
        }
    })
    .ok()?;
    // `(position, how, offset of the entry there when readable)`.
    let tail = match tail {
        Tail::Clean => None,
        Tail::Partial {
            position, offset, ..
        } => Some((position, SwappedTail::PartialBatch, Some(offset))),
        Tail::ZeroFilled { position, len } => {
            Some((position, SwappedTail::ZeroFilled { len }, None))
        }
        Tail::Garbage {
            position, reason, ..
        } => Some((position, SwappedTail::Unframed { why: reason }, None)),
        Tail::CorruptEntry {
            position, reason, ..
        } => Some((position, SwappedTail::ImpossibleSize { why: reason }, None)),
    }
    .map(|(position, tail, offset)| (position, StopReason::Swapped { tail }, offset));
    if first_bad.is_none() {
        first_bad = tail.clone();
    }
    let tail = tail.map(|(position, reason, _)| (position, reason));
    Some(check.finish(first_bad, tail, len))
}

/// The partition's segment files as the load reads them once its third pass has renamed
/// the `.swap` files of the indexes of segments that stay: `N.index.swap`,
/// `N.timeindex.swap` or `N.txnindex.swap` (the broker's names) of a segment whose `.log`
/// is kept is renamed over that segment's index (`File.renameTo` replaces the file on a
/// POSIX file system), so `loadSegmentFiles` finds it and its sanity check reads the
/// swap's bytes: a segment whose `.index` was still `N.index.swap` is not recovered for a
/// missing index. The cleaner leaves such files when it stops between renaming a
/// replacement segment's `.log` and its indexes (`LogSegment.changeFileSuffixes` renames
/// the log first). A swap at or above the lowest `.cleaned` offset is deleted instead
/// (`removeTempFilesAndCollectSwapFiles`), and a segment the `.log.swap` files replace is
/// [`CompletedSwaps::apply`]'s. Borrowed as it is when no such file exists.
///
/// Brokers before 3.0 (`before_3_0`) did otherwise: the first pass of
/// `Log.removeTempFilesAndCollectSwapFiles` deleted the index files of every index swap's
/// segment (`deleteIndicesIfExist`: its `.index`, `.timeindex` and `.txnindex`) and left
/// the swap file where it was, so the segment loads without an index and is recovered,
/// its indexes rebuilt. Only regular files are either (`File.isFile`).
/// `swaps`: the partition's [`CompletedSwaps`] (a segment they remove keeps no index).
pub(crate) fn with_index_swaps<'a>(
    p: &'a PartitionDir,
    swaps: Option<&CompletedSwaps>,
    before_3_0: bool,
) -> std::borrow::Cow<'a, PartitionDir> {
    use crate::discover::layout::canonical_segment_name;
    if p.partial || !p.leftovers.iter().any(|(k, _)| *k == LeftoverKind::Swap) {
        return std::borrow::Cow::Borrowed(p);
    }
    let min_cleaned = min_cleaned(p);
    let mut renamed: Vec<(i64, usize, PathBuf)> = Vec::new();
    for (_, path) in p.leftovers.iter().filter(|(k, _)| *k == LeftoverKind::Swap) {
        let (Some(name), Some(base)) = (path.file_name().and_then(|n| n.to_str()), offset_of(path))
        else {
            continue;
        };
        // Before 3.0 every index swap deletes its segment's indexes (kind 3).
        let valid = before_3_0 || min_cleaned.is_none_or(|c| base < c);
        let kind = [".index.swap", ".timeindex.swap", ".txnindex.swap"]
            .iter()
            .position(|sfx| name == canonical_segment_name(base, sfx))
            .map(|k| if before_3_0 { 3 } else { k });
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        if let (true, true, Some(kind)) = (valid, regular, kind) {
            renamed.push((base, kind, path.clone()));
        }
    }
    let kept = |base: i64| {
        p.segments
            .iter()
            .any(|s| s.base_offset == base && s.log.is_some())
    };
    renamed.retain(|(base, _, _)| kept(*base));
    if renamed.is_empty() {
        return std::borrow::Cow::Borrowed(p);
    }
    if let Some(swaps) = swaps {
        renamed.retain(|(base, _, _)| !swaps.removes(*base));
    }
    if renamed.is_empty() {
        return std::borrow::Cow::Borrowed(p);
    }
    let mut view = p.clone();
    for (base, kind, path) in renamed {
        for s in view
            .segments
            .iter_mut()
            .filter(|s| s.base_offset == base && s.log.is_some())
        {
            let slot = match kind {
                0 => &mut s.index,
                1 => &mut s.timeindex,
                2 => &mut s.txnindex,
                _ => {
                    (s.index, s.timeindex, s.txnindex) = (None, None, None);
                    continue;
                }
            };
            *slot = Some(path.clone());
        }
    }
    std::borrow::Cow::Owned(view)
}

#[cfg(test)]
mod tests {
    use super::{CompletedSwaps, SwappedIn};
    use crate::partition::recovery::aliases::empty_walk;

    fn swaps(bases_ends: &[(i64, i64)]) -> CompletedSwaps {
        CompletedSwaps {
            segments: bases_ends
                .iter()
                .map(|&(base, next)| SwappedIn {
                    path: format!("{base:020}.log.swap").into(),
                    base,
                    next,
                    created: false,
                    walk: Some(empty_walk(next)),
                })
                .collect(),
            from: bases_ends.iter().map(|s| s.0).min().unwrap(),
            to: bases_ends.iter().map(|s| s.1).max().unwrap(),
            replaced_before_3_0: None,
        }
    }

    fn held(segs: &[(i64, i64)]) -> Vec<(i64, String, Option<i64>)> {
        segs.iter()
            .map(|&(b, e)| (b, format!("{b}"), Some(e)))
            .collect()
    }

    /// `Log.completeSwapOperations` (2.8): `logSegments(base, next)` starts at the segment
    /// holding the swap's base, so a segment below the base whose offsets reach past it is
    /// replaced too; one ending at the base is not; one based at the swap's end is not.
    /// Since 3.0 (no `before_3_0`) only the names' offsets in the range count.
    #[test]
    fn before_3_0_a_swap_replaces_the_segments_its_offsets_cover() {
        let segs = held(&[(0, 4), (4, 8), (8, 12)]);
        let sw = swaps(&[(2, 8)]).before_3_0(&segs);
        let names: Vec<&str> = sw.replaced_by(2).unwrap();
        assert_eq!(names, ["0", "4"]);
        assert!(sw.removes(0) && sw.removes(4) && !sw.removes(8));
        assert!(!sw.clears(4), "no range is cleared before 3.0");
        // Ending at the base: kept.
        let sw = swaps(&[(4, 8)]).before_3_0(&segs);
        assert_eq!(sw.replaced_by(4).unwrap(), ["4"]);
        assert!(!sw.removes(0));
        // Since 3.0: the range [2, 8) deletes the file named 4 only, and 0 stays.
        let sw = swaps(&[(2, 8)]);
        assert!(sw.replaced_by(2).is_none());
        assert!(!sw.removes(0) && sw.removes(4) && !sw.removes(8));
    }
}
