//! The recovery prediction: what `LogLoader` would do with a partition on the next start
//! (`kafka-format.md` §1.5, §9; `kafka-semantics.md` §3.3).

use super::BrokerVersion;
use crate::event::{BatchEvent, Classified, classify};
use crate::finding::{Finding, Kind};
use crate::format::{Entries, Tail};
use serde::Serialize;

/// `index.interval.bytes` default: recovery adds an index entry after more than this many
/// bytes (the point where a non-monotonic offset raises `InvalidOffsetException`).
pub(crate) const INDEX_INTERVAL_BYTES: u64 = 4096;

/// What startup does with a leftover file, an orphaned index or a stray snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftoverAction {
    /// File (or directory) name.
    pub file: String,
    /// `deleted`, `cleaned`, `swap`, `tmp`, `orphan_index`, `stray_snapshot`,
    /// `snapshot_beyond_log`, `snapshot_below_log_start`, `delete_dir`, `future_dir`,
    /// `stray_dir`, `corrupt_snapshot`.
    pub kind: String,
    /// What the broker does with it, in words.
    pub action: String,
}

/// A segment that `LogSegment.recover` would run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentRecovery {
    /// The `.log` file name.
    pub segment: String,
    /// Why: `unclean shutdown (at or above the recovery point)`, `missing offset index`,
    /// `corrupt transaction index: …`, `corrupt offset index: …` (brokers < 2.3).
    pub reason: String,
}

/// Where recovery truncates the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruncationPrediction {
    /// The `.log` file truncated.
    pub segment: String,
    /// Byte position the file is truncated to (its new size).
    pub position: u64,
    /// The offset the log is truncated to (the segment's next offset afterwards: the last
    /// valid batch's last offset + 1, or the segment's base offset).
    pub offset: i64,
    /// Bytes removed from this segment.
    pub bytes_removed: u64,
    /// Offset of the first removed batch, when one could be read there.
    pub first_removed_offset: Option<i64>,
    /// Why recovery stopped there (CRC mismatch, partial batch, …).
    pub reason: String,
}

/// How the producer state would be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerRebuild {
    /// The snapshot loaded (the newest valid one at or below the log end offset and above
    /// the log start offset).
    pub snapshot: Option<String>,
    pub snapshot_offset: Option<i64>,
    /// True when the broker skips the rebuild (no snapshot left once the stray ones are
    /// removed, after a clean shutdown): all producer state, open transactions included, is
    /// forgotten.
    pub skipped: bool,
    /// Offsets replayed from the log, `[replay_from, replay_to)`.
    pub replay_from: Option<i64>,
    pub replay_to: Option<i64>,
    /// Producers and open transactions after the rebuild, when the log is kept whole
    /// (`None` when truncation removes batches).
    pub producers: Option<usize>,
    pub open_transactions: Option<usize>,
}

/// Why the partition would fail to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadFailure {
    /// The finding kind that causes it.
    pub kind: String,
    pub offset: Option<i64>,
    /// The exception the broker throws.
    pub exception: String,
    pub message: String,
}

/// What a broker's `LogLoader` would do with one partition on the next start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecoveryPrediction {
    /// `.kafka_cleanshutdown` present in the log dir; `None` when the log dir is unknown
    /// (a bare partition directory): the prediction then assumes an unclean shutdown.
    pub clean_shutdown: Option<bool>,
    /// This partition's entry in `recovery-point-offset-checkpoint` (`None`: no entry, or no
    /// readable checkpoint; the broker then uses 0).
    pub recovery_point: Option<i64>,
    /// `log-start-offset-checkpoint` entry.
    pub log_start_checkpoint: Option<i64>,
    /// `replication-offset-checkpoint` entry (high watermark).
    pub high_watermark: Option<i64>,
    /// First batch offset and log end offset as found.
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    /// Log start offset and log end offset after loading.
    pub log_start_offset_after: Option<i64>,
    pub log_end_offset_after: Option<i64>,
    /// Leftovers, orphaned indexes and snapshots removed or renamed at startup.
    pub leftovers: Vec<LeftoverAction>,
    /// Segments recovered (indexes rebuilt, batches CRC-checked), in order.
    pub recovered_segments: Vec<SegmentRecovery>,
    /// The truncation, if recovery finds invalid bytes.
    pub truncation: Option<TruncationPrediction>,
    /// Segments deleted after the truncation (renamed `.deleted`, then removed).
    pub deleted_segments: Vec<String>,
    /// Corruption recovery would NOT see (segments it does not recover).
    pub unrecovered_corruption: Vec<String>,
    pub producer_state: ProducerRebuild,
    pub load_failure: Option<LoadFailure>,
}

/// How `LogSegment.recover` would end on one `.log` image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecoverWalk {
    /// Where the file would be truncated to, when recovery stops before its end.
    pub stop: Option<(u64, String, Option<i64>)>,
    /// Next offset after the last valid batch (base offset when none).
    pub next_offset: i64,
    /// File length.
    pub len: u64,
    /// A batch whose offsets do not fit the base offset (recovery splits the segment).
    pub overflow: bool,
}

/// Walk a `.log` as `LogSegment.recover` does: CRC of the outer entry, the offset range,
/// index appends every [`INDEX_INTERVAL_BYTES`] (a non-increasing offset there raises
/// `InvalidOffsetException`: the segment is truncated to its base offset), the tail.
pub(crate) fn recover_walk(log: &[u8], base: i64) -> RecoverWalk {
    let mut entries = Entries::new(log, 0);
    let mut next = base;
    let mut since = 0u64;
    let mut last_indexed: Option<i64> = None;
    let mut overflow = false;
    let mut stop = None;
    for raw in entries.by_ref() {
        let pos = raw.position;
        let ev: BatchEvent = match classify(raw) {
            Classified::V2(b) => BatchEvent::from_v2(&b, 0, true),
            Classified::Legacy(m) => BatchEvent::from_legacy(&m, 0, true),
            Classified::Invalid(e) => {
                stop = Some((pos, format!("invalid batch: {e}"), None));
                break;
            }
        };
        if !ev.crc_valid {
            stop = Some((
                pos,
                "CRC mismatch (CorruptRecordException)".into(),
                Some(ev.base_offset),
            ));
            break;
        }
        let rel = ev.last_offset.wrapping_sub(base);
        if !(0..=i32::MAX as i64).contains(&rel) {
            overflow = true;
        }
        if since > INDEX_INTERVAL_BYTES {
            if last_indexed.is_some_and(|l| ev.last_offset <= l) {
                return RecoverWalk {
                    stop: Some((
                        0,
                        format!(
                            "offset {} not above the last indexed offset {} (InvalidOffsetException): the segment is emptied",
                            ev.last_offset,
                            last_indexed.unwrap_or(base)
                        ),
                        Some(base),
                    )),
                    next_offset: base,
                    len: log.len() as u64,
                    overflow,
                };
            }
            last_indexed = Some(ev.last_offset);
            since = 0;
        }
        since += ev.size as u64;
        next = ev.last_offset.wrapping_add(1);
    }
    if stop.is_none() {
        stop = match entries.tail() {
            Some(Tail::Partial {
                position,
                declared,
                available,
            }) => Some((
                position,
                format!("partial batch ({declared} bytes declared, {available} present)"),
                None,
            )),
            Some(Tail::ZeroFilled { position, len }) => Some((
                position,
                format!("{len} zero bytes (preallocated tail)"),
                None,
            )),
            Some(Tail::Garbage {
                position,
                len,
                reason,
            }) => Some((
                position,
                format!("{len} bytes that do not frame as a batch ({reason})"),
                None,
            )),
            _ => None,
        };
    }
    RecoverWalk {
        stop,
        next_offset: next,
        len: log.len() as u64,
        overflow,
    }
}

/// One segment as the prediction sees it.
#[derive(Debug, Clone)]
pub(crate) struct SegmentInput {
    pub name: String,
    pub base: i64,
    pub missing_index: bool,
    /// `CorruptIndexException` at load (txn index sanity; offset/time index before 2.3).
    pub corrupt_index: Option<String>,
    pub walk: Option<RecoverWalk>,
}

/// A snapshot as the prediction sees it.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotInput {
    pub offset: i64,
    pub name: String,
    pub valid: bool,
}

/// Everything the prediction needs.
pub(crate) struct PredictInput<'a> {
    pub clean_shutdown: Option<bool>,
    pub recovery_point: Option<i64>,
    pub log_start_checkpoint: Option<i64>,
    pub high_watermark: Option<i64>,
    pub first_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub segments: Vec<SegmentInput>,
    pub snapshots: Vec<SnapshotInput>,
    pub leftovers: Vec<LeftoverAction>,
    pub load_rules: &'a [Finding],
    pub broker_version: Option<BrokerVersion>,
    pub producers: usize,
    pub open_transactions: usize,
    pub delete_dir: bool,
}

pub(crate) fn predict(inp: PredictInput<'_>) -> RecoveryPrediction {
    let unclean = inp.clean_shutdown != Some(true) && !inp.delete_dir;
    let rp = inp.recovery_point.unwrap_or(0);
    // The segment holding the recovery point: the last whose base ≤ rp (else the first).
    let from_idx = inp.segments.iter().rposition(|s| s.base <= rp).unwrap_or(0);
    let mut recovered = Vec::new();
    let mut truncation = None;
    let mut deleted = Vec::new();
    let mut unrecovered = Vec::new();
    let mut leo_after = inp.log_end_offset;
    let segs = &inp.segments;
    // Load-time recoveries (missing/corrupt index), even after a clean shutdown: they
    // truncate their segment but delete nothing after it.
    let mut load_truncations: Vec<TruncationPrediction> = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let reason = if s.missing_index {
            Some("missing offset index".to_string())
        } else {
            s.corrupt_index.clone()
        };
        let in_unclean = unclean && i >= from_idx;
        if let Some(reason) = reason
            && !in_unclean
        {
            recovered.push(SegmentRecovery {
                segment: s.name.clone(),
                reason,
            });
            if let Some(t) = s.walk.as_ref().and_then(|w| truncation_of(s, w)) {
                load_truncations.push(t);
            }
        }
    }
    if unclean {
        for (i, s) in segs.iter().enumerate().skip(from_idx) {
            let mut reason = if inp.clean_shutdown.is_none() {
                "shutdown state unknown (no log dir): assumed unclean".to_string()
            } else {
                "unclean shutdown (segment at or above the recovery point)".to_string()
            };
            if s.missing_index {
                reason.push_str("; missing offset index");
            }
            recovered.push(SegmentRecovery {
                segment: s.name.clone(),
                reason,
            });
            if let Some(t) = s.walk.as_ref().and_then(|w| truncation_of(s, w)) {
                leo_after = Some(t.offset);
                truncation = Some(t);
                deleted = segs[i + 1..].iter().map(|s| s.name.clone()).collect();
                break;
            }
        }
    }
    if truncation.is_none()
        && let Some(t) = load_truncations.first()
    {
        // A segment recovered at load that is also the last one changes the log end.
        if segs.last().is_some_and(|s| s.name == t.segment) {
            leo_after = Some(t.offset);
        }
        truncation = Some(t.clone());
    }
    // Corruption in segments nobody recovers.
    for s in segs {
        if recovered.iter().any(|r| r.segment == s.name) {
            continue;
        }
        if let Some(w) = &s.walk
            && let Some((pos, why, _)) = &w.stop
        {
            unrecovered.push(format!(
                "{} at byte {pos}: {why} (below the recovery point after a clean shutdown: the broker trusts it; readers will fail there)",
                s.name
            ));
        }
    }
    // Log start, and the case where the log ends below it.
    let first_base = segs.first().map(|s| s.base);
    let mut log_start_after = match (inp.log_start_checkpoint, first_base) {
        (Some(c), Some(b)) => Some(c.max(b)),
        (c, b) => c.or(b),
    };
    if let (Some(ls), Some(leo)) = (inp.log_start_checkpoint, leo_after)
        && leo < ls
    {
        deleted = segs.iter().map(|s| s.name.clone()).collect();
        leo_after = Some(ls);
        log_start_after = Some(ls);
    }
    // Snapshots: corrupt ones are deleted at load (fallback to older), strays deleted,
    // those beyond the new log end or at/below the log start deleted.
    let mut leftovers = inp.leftovers;
    let bases: Vec<i64> = segs.iter().map(|s| s.base).collect();
    let newest = inp.snapshots.iter().map(|s| s.offset).max();
    let last_base = bases.last().copied();
    let mut usable: Vec<&SnapshotInput> = Vec::new();
    let is_stray = |offset: i64| {
        let kept_newest = Some(offset) == newest && last_base.is_none_or(|b| offset > b);
        !bases.contains(&offset) && !kept_newest
    };
    for s in &inp.snapshots {
        let stray = is_stray(s.offset);
        let (kind, action) = if leo_after.is_some_and(|l| s.offset > l) {
            (
                "snapshot_beyond_log",
                "deleted: above the log end offset after loading",
            )
        } else if log_start_after.is_some_and(|l| s.offset <= l) {
            (
                "snapshot_below_log_start",
                "deleted: at or below the log start offset",
            )
        } else if stray {
            (
                "stray_snapshot",
                "deleted: matches no segment base offset and is not the newest",
            )
        } else if !s.valid {
            (
                "corrupt_snapshot",
                "deleted when loaded (CorruptSnapshotException); the next older snapshot is used",
            )
        } else {
            usable.push(s);
            continue;
        };
        leftovers.push(LeftoverAction {
            file: s.name.clone(),
            kind: kind.into(),
            action: action.into(),
        });
    }
    let snap = usable.iter().max_by_key(|s| s.offset);
    // The clean-shutdown shortcut looks at the snapshots left after the stray ones are
    // removed (`removeStraySnapshots` runs first); corrupt, beyond-log and below-log-start
    // snapshots are only deleted later, by `truncateAndReload`, so they still count.
    let has_snapshot_files = inp.snapshots.iter().any(|s| !is_stray(s.offset));
    let skipped = !has_snapshot_files && inp.clean_shutdown == Some(true);
    let replay_from = if skipped {
        None
    } else {
        snap.map(|s| s.offset).or(log_start_after)
    };
    let whole = leo_after == inp.log_end_offset && deleted.is_empty();
    let producer_state = ProducerRebuild {
        snapshot: snap.map(|s| s.name.clone()),
        snapshot_offset: snap.map(|s| s.offset),
        skipped,
        replay_from,
        replay_to: if skipped { None } else { leo_after },
        producers: if skipped {
            Some(0)
        } else {
            whole.then_some(inp.producers)
        },
        open_transactions: if skipped {
            Some(0)
        } else {
            whole.then_some(inp.open_transactions)
        },
    };
    // Load failures: replay errors in the order the broker meets them. First the segments
    // recovered at load (missing/corrupt index), then those recovered after an unclean
    // shutdown: `recoverSegment` rebuilds the producer state up to the segment's base and
    // replays the segment's valid batches, so a rule broken in `[base, end)` (end: below any
    // truncation point) throws however new the newest snapshot is. Then the rebuild's replay
    // `[replay_from, replay_to)`.
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    let seg_end = |i: usize| -> Option<i64> {
        match &segs[i].walk {
            Some(w) => Some(w.next_offset),
            None => segs.get(i + 1).map(|n| n.base).or(inp.log_end_offset),
        }
    };
    for (i, s) in segs.iter().enumerate() {
        if (s.missing_index || s.corrupt_index.is_some())
            && let Some(end) = seg_end(i)
        {
            ranges.push((
                s.base,
                end,
                format!(
                    "recovering segment {} at load (its index is missing or corrupt; producer state rebuilt up to offset {})",
                    s.name, s.base
                ),
            ));
        }
    }
    if unclean {
        for r in &recovered {
            let Some(i) = segs.iter().position(|s| s.name == r.segment) else {
                continue;
            };
            if i < from_idx {
                continue;
            }
            if let Some(end) = seg_end(i) {
                ranges.push((
                    segs[i].base,
                    end,
                    format!(
                        "recovering segment {} after the unclean shutdown (producer state rebuilt up to offset {})",
                        segs[i].name, segs[i].base
                    ),
                ));
            }
        }
    }
    if let (Some(from), Some(to)) = (replay_from, leo_after) {
        ranges.push((
            from,
            to,
            format!("replaying the producer state from offset {from}"),
        ));
    }
    let old_broker = inp
        .broker_version
        .is_some_and(|v| v <= BrokerVersion(2, 4, 0));
    let mut load_failure = None;
    'ranges: for (from, to, what) in &ranges {
        for f in inp.load_rules {
            let Some(o) = f.offset else { continue };
            if o < *from || o >= *to {
                continue;
            }
            let (exception, fails) = match f.kind {
                Kind::NonTransactionalWriteInTransaction => ("InvalidTxnStateException", true),
                Kind::CoordinatorEpochRegression => {
                    ("TransactionCoordinatorFencedException", old_broker)
                }
                _ => ("", false),
            };
            if fails {
                load_failure = Some(LoadFailure {
                    kind: f.kind.id().into(),
                    offset: Some(o),
                    exception: exception.into(),
                    message: format!("{what} throws {exception} at offset {o}: {}", f.message),
                });
                break 'ranges;
            }
        }
    }
    RecoveryPrediction {
        clean_shutdown: inp.clean_shutdown,
        recovery_point: inp.recovery_point,
        log_start_checkpoint: inp.log_start_checkpoint,
        high_watermark: inp.high_watermark,
        first_offset: inp.first_offset,
        log_end_offset: inp.log_end_offset,
        log_start_offset_after: log_start_after,
        log_end_offset_after: leo_after,
        leftovers,
        recovered_segments: recovered,
        truncation,
        deleted_segments: deleted,
        unrecovered_corruption: unrecovered,
        producer_state,
        load_failure,
    }
}

fn truncation_of(s: &SegmentInput, w: &RecoverWalk) -> Option<TruncationPrediction> {
    let (position, reason, first) = w.stop.as_ref()?;
    Some(TruncationPrediction {
        segment: s.name.clone(),
        position: *position,
        offset: w.next_offset,
        bytes_removed: w.len.saturating_sub(*position),
        first_removed_offset: *first,
        reason: reason.clone(),
    })
}
