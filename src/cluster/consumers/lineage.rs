//! A partition's leader-epoch lineage — `(epoch, start offset)` in epoch order — and what a
//! leader answers an OffsetsForLeaderEpoch request with (`LeaderEpochFileCache.endOffsetFor`).
//!
//! The lineage is an input of its own ([`Lineage`], [`LineageSource`]) so that it can come
//! from a partition's `leader-epoch-checkpoint` ([`CheckpointLineage`]) or from any other
//! history of the partition's leaders (a KRaft metadata log) without the consumer rules
//! changing.

use crate::cluster::epoch_file;
use crate::read::format::checkpoint::{EpochEntry, parse_leader_epoch_checkpoint};
use serde::Serialize;

/// `UNDEFINED_EPOCH` and `UNDEFINED_EPOCH_OFFSET` of `OffsetsForLeaderEpochResponse`.
pub const UNDEFINED_EPOCH: i32 = -1;
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// The epochs a leader knows for one partition, and where they were read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lineage {
    /// `(epoch, start offset)`, epochs ascending (later entries of the same epoch win, as
    /// the broker's `TreeMap` keeps them).
    pub entries: Vec<EpochEntry>,
    /// Where the entries come from (`leader-epoch-checkpoint`, a metadata log, …).
    pub from: String,
    /// The newest leader epoch the cluster's KRaft metadata log gave the partition, when
    /// that log is among the inputs: an epoch at or below it exists on the controller's
    /// side even when this copy's lineage has not reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_latest_epoch: Option<i32>,
    /// The epoch of the file's newest entry when it starts exactly at the log end and the
    /// load's cut ([`Lineage::as_loaded`]) dropped it: an epoch the broker assigned when it
    /// became leader, before any batch of it (`Partition.makeLeader` →
    /// `maybeAssignEpochStartOffset`), which a running leader answers from its cache and a
    /// restarted one answers as an epoch starting at the log end — the end offset is the
    /// log end either way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_log_end: Option<i32>,
}

/// A lineage provider: the lineage of a partition directory (by path), when known.
pub trait LineageSource {
    fn lineage(&self, topic: &str, partition: i32, path: &str) -> Option<Lineage>;
}

/// What `endOffsetFor` returns for an epoch, and which of its branches gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EpochCase {
    /// The requested epoch is the latest: its end is the log end offset.
    Latest,
    /// The epoch has an entry below the latest: its end is the next epoch's start.
    Known,
    /// No entry for it, but entries below and above it: the floor epoch and the next
    /// epoch's start offset.
    InGap,
    /// Below the oldest entry: the requested epoch and the oldest entry's start offset.
    BelowOldest,
    /// Above every entry (or `-1`): undefined epoch and offset.
    AboveLatest,
}

impl EpochCase {
    /// True when the epoch has no entry of its own.
    pub fn is_unknown(self) -> bool {
        !matches!(self, EpochCase::Latest | EpochCase::Known)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            EpochCase::Latest => "latest",
            EpochCase::Known => "known",
            EpochCase::InGap => "in_gap",
            EpochCase::BelowOldest => "below_oldest",
            EpochCase::AboveLatest => "above_latest",
        }
    }
}

/// The answer of `endOffsetFor(requested, logEndOffset)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EpochEnd {
    pub case: EpochCase,
    pub epoch: i32,
    pub end_offset: i64,
}

impl EpochEnd {
    /// True when the answer is undefined (the client then resets by its policy).
    pub fn is_undefined(&self) -> bool {
        self.epoch == UNDEFINED_EPOCH || self.end_offset == UNDEFINED_EPOCH_OFFSET
    }
}

impl Lineage {
    /// A lineage from entries in file order, as `LeaderEpochFileCache`'s constructor builds
    /// its cache (`epoch_file::as_constructed`: every entry through `assign`; a negative
    /// one, on which the constructor throws, left out).
    pub fn new(entries: &[EpochEntry], from: impl Into<String>) -> Lineage {
        Lineage {
            entries: epoch_file::as_constructed(entries),
            from: from.into(),
            metadata_latest_epoch: None,
            at_log_end: None,
        }
    }

    /// The lineage as the broker's load leaves it for a log from `log_start` to `log_end`
    /// (`LogLoader.load`: `truncateFromEndAsyncFlush` at the log end after recovery drops
    /// the entries starting at or past it — stale epochs a torn or truncated tail left in
    /// the file — and `truncateFromStartAsyncFlush` at the log start keeps, of the entries
    /// starting at or below it, the newest, moved up to start there).
    pub fn as_loaded(mut self, log_start: Option<i64>, log_end: Option<i64>) -> Lineage {
        if let Some(end) = log_end.filter(|&e| e >= 0) {
            self.at_log_end = (self.entries.last())
                .filter(|e| e.start_offset == end)
                .map(|e| e.epoch);
            self.entries.retain(|e| e.start_offset < end);
        }
        if let Some(start) = log_start {
            let below = self
                .entries
                .iter()
                .take_while(|e| e.start_offset <= start)
                .count();
            if below > 0 {
                let newest = self.entries[below - 1];
                self.entries.drain(..below);
                self.entries.insert(
                    0,
                    EpochEntry {
                        start_offset: start,
                        ..newest
                    },
                );
            }
        }
        self
    }

    /// The leader's answer for `requested` when this lineage can give it: `None` when the
    /// lineage ends below `requested` but the metadata log shows the controller gave that
    /// epoch — the copy is behind the partition's leader, whose lineage is not in the
    /// inputs, so two answers are possible and no verdict is drawn.
    pub fn answer(&self, requested: i32, log_end: i64) -> Option<EpochEnd> {
        let a = self.end_offset_for(requested, log_end);
        let behind = a.case == EpochCase::AboveLatest
            && requested != UNDEFINED_EPOCH
            && self.metadata_latest_epoch.is_some_and(|m| m >= requested);
        (!behind).then_some(a)
    }

    /// The newest epoch.
    pub fn latest(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// `LeaderEpochFileCache.endOffsetFor` over this lineage (`end_offset_in`).
    pub fn end_offset_for(&self, requested: i32, log_end: i64) -> EpochEnd {
        let a = end_offset_in(
            self.entries.iter().map(|e| (e.epoch, e.start_offset)),
            requested,
            log_end,
        );
        // An epoch up to the one assigned at the log end ([`Self::at_log_end`]): the
        // running leader's cache holds it (the latest, or a gap below it), and its end is
        // the log end.
        match self.at_log_end {
            Some(m) if a.case == EpochCase::AboveLatest && (0..=m).contains(&requested) => {
                match (requested == m, self.latest()) {
                    (true, _) => EpochEnd {
                        case: EpochCase::Latest,
                        epoch: m,
                        end_offset: log_end,
                    },
                    (false, Some(floor)) => EpochEnd {
                        case: EpochCase::InGap,
                        epoch: floor,
                        end_offset: log_end,
                    },
                    (false, None) => a,
                }
            }
            _ => a,
        }
    }
}

/// `LeaderEpochFileCache.endOffsetFor` on a lineage of `(epoch, start offset)` entries in
/// epoch order with log end `log_end`: the largest epoch at or below `requested` and the
/// offset its leadership ended at (the next epoch's start, or `log_end` for the latest
/// epoch); below the oldest entry, `requested` itself and the oldest entry's start (the
/// data before it is gone, and the follower replicates from there); undefined for `-1`, an
/// epoch above every entry, or an empty lineage. The one model of the cache's answer: the
/// consumers' validation and the replicas' truncation both read it.
pub fn end_offset_in(
    entries: impl DoubleEndedIterator<Item = (i32, i64)> + Clone,
    requested: i32,
    log_end: i64,
) -> EpochEnd {
    let undefined = EpochEnd {
        case: EpochCase::AboveLatest,
        epoch: UNDEFINED_EPOCH,
        end_offset: UNDEFINED_EPOCH_OFFSET,
    };
    if requested == UNDEFINED_EPOCH {
        return undefined;
    }
    if entries.clone().next_back().map(|e| e.0) == Some(requested) {
        return EpochEnd {
            case: EpochCase::Latest,
            epoch: requested,
            end_offset: log_end,
        };
    }
    let Some((_, higher_start)) = entries.clone().find(|e| e.0 > requested) else {
        return undefined;
    };
    match entries.rev().find(|e| e.0 <= requested) {
        None => EpochEnd {
            case: EpochCase::BelowOldest,
            epoch: requested,
            end_offset: higher_start,
        },
        Some((floor, _)) => EpochEnd {
            case: if floor == requested {
                EpochCase::Known
            } else {
                EpochCase::InGap
            },
            epoch: floor,
            end_offset: higher_start,
        },
    }
}

/// Lineages from each partition directory's `leader-epoch-checkpoint`, read when asked for
/// (only the partitions a group committed to), through the reader every check shares
/// (`cluster::epoch_file`).
#[derive(Debug, Clone, Default)]
pub struct CheckpointLineage {
    /// Partition directory → where its `leader-epoch-checkpoint` is, or why it is known
    /// not to be readable.
    files: std::collections::HashMap<String, Result<epoch_file::Place, epoch_file::Unread>>,
    /// The files asked for that could not be read: their partitions have no lineage
    /// (none from the metadata log either: the broker answers from the file), which is
    /// said (`CheckpointLineage::unread`).
    unread: std::sync::Arc<std::sync::Mutex<Vec<epoch_file::Unread>>>,
}

impl CheckpointLineage {
    /// The checkpoint files of `dirs` of `inv` (a directory without one has no lineage).
    pub fn new<'a>(
        inv: &crate::discover::layout::Inventory,
        dirs: impl Iterator<Item = &'a crate::discover::layout::PartitionDir>,
    ) -> Self {
        CheckpointLineage {
            files: dirs
                .filter_map(|p| {
                    let at = epoch_file::locate(inv, p).transpose()?;
                    Some((p.path.display().to_string(), at))
                })
                .collect(),
            unread: Default::default(),
        }
    }

    /// The files asked for so far that could not be read, each once.
    pub(crate) fn unread(&self) -> Vec<epoch_file::Unread> {
        let mut v = self.unread.lock().map(|u| u.clone()).unwrap_or_default();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v.dedup_by(|a, b| a.path == b.path);
        v
    }

    /// The lineage of the directory at `path`: `Ok(None)` when it has no file or the file
    /// does not parse (`verify` reports that), `Err(())` when it could not be read (kept
    /// for `CheckpointLineage::unread`).
    fn read(&self, path: &str) -> Result<Option<Lineage>, ()> {
        let Some(at) = self.files.get(path) else {
            return Ok(None);
        };
        let bytes = at.clone().and_then(|at| at.read()).map_err(|u| {
            if let Ok(mut all) = self.unread.lock() {
                all.push(u);
            }
        })?;
        let entries = parse_leader_epoch_checkpoint(&bytes).ok();
        Ok(entries.map(|e| Lineage::new(&e, "leader-epoch-checkpoint")))
    }
}

impl LineageSource for CheckpointLineage {
    /// A missing, unreadable or malformed file gives no lineage (`verify` reports the
    /// last two; an unreadable one is kept for `CheckpointLineage::unread`).
    fn lineage(&self, _topic: &str, _partition: i32, path: &str) -> Option<Lineage> {
        self.read(path).ok().flatten()
    }
}

/// What a cluster's KRaft metadata log says of one partition copy's epochs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataEpochs {
    /// The epochs the metadata log gave the partition with a live leader, each with the
    /// offset it starts at in this cluster's replicas (epochs no replica in the inputs
    /// wrote in are left out: a leader's cache drops an epoch that holds no record once
    /// the next one starts at the same offset).
    pub entries: Vec<EpochEntry>,
    /// The newest leader epoch the metadata log gave the partition.
    pub latest: Option<i32>,
}

/// Lineages for a cluster whose KRaft metadata log may be among the inputs: a copy's
/// `leader-epoch-checkpoint` when it has one (what its broker answers from), else the
/// metadata log's epochs with the starts the batches show; either way stamped with the
/// metadata log's newest epoch for the partition ([`Lineage::answer`] uses it).
#[derive(Debug, Clone, Default)]
pub struct ClusterLineage {
    checkpoint: CheckpointLineage,
    /// Partition directory → what the metadata log says of it.
    metadata: std::collections::HashMap<String, MetadataEpochs>,
}

impl ClusterLineage {
    /// The `leader-epoch-checkpoint` files asked for that could not be read.
    pub(crate) fn unread(&self) -> Vec<epoch_file::Unread> {
        self.checkpoint.unread()
    }

    pub fn new(
        checkpoint: CheckpointLineage,
        metadata: std::collections::HashMap<String, MetadataEpochs>,
    ) -> Self {
        ClusterLineage {
            checkpoint,
            metadata,
        }
    }
}

/// Where a lineage built from the metadata log reads its entries.
pub const METADATA_LINEAGE_FROM: &str = "the KRaft metadata log's leader epochs, each starting at its first batch in this cluster's replicas";

impl LineageSource for ClusterLineage {
    /// The copy's `leader-epoch-checkpoint`, else the metadata log's epochs; none when the
    /// file could not be read (the broker answers from the file, not from the metadata).
    fn lineage(&self, _topic: &str, _partition: i32, path: &str) -> Option<Lineage> {
        let meta = self.metadata.get(path);
        let mut l = match self.checkpoint.read(path).ok()? {
            Some(l) => l,
            None => {
                let m = meta.filter(|m| !m.entries.is_empty())?;
                Lineage::new(&m.entries, METADATA_LINEAGE_FROM)
            }
        };
        l.metadata_latest_epoch = meta.and_then(|m| m.latest);
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lineage(e: &[(i32, i64)]) -> Lineage {
        let entries: Vec<EpochEntry> = e
            .iter()
            .map(|&(epoch, start_offset)| EpochEntry {
                epoch,
                start_offset,
            })
            .collect();
        Lineage::new(&entries, "test")
    }

    // LeaderEpochFileCacheTest's endOffsetFor cases, on the lineages those tests assign.
    #[test]
    fn end_offset_for_follows_the_cache() {
        let at = |l: &Lineage, e: i32, leo: i64| {
            let r = l.end_offset_for(e, leo);
            (r.epoch, r.end_offset)
        };
        let undefined = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        // shouldReturnLogEndOffsetIfLatestEpochRequested
        assert_eq!(at(&lineage(&[(2, 11)]), 2, 14), (2, 14));
        // shouldReturnUndefinedOffsetIfUndefinedEpochRequested
        assert_eq!(
            at(&lineage(&[(2, 11), (3, 12)]), UNDEFINED_EPOCH, 0),
            undefined
        );
        // shouldReturnUnsupportedIfNoEpochRecorded
        assert_eq!(at(&lineage(&[]), 0, 0), undefined);
        // shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
        let l = lineage(&[(5, 11), (6, 12), (7, 13)]);
        assert_eq!(at(&l, 4, 0), (4, 11));
        assert_eq!(l.end_offset_for(4, 0).case, EpochCase::BelowOldest);
        // shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch
        assert_eq!(at(&lineage(&[(1, 11), (2, 13), (3, 15)]), 2, 17), (2, 15));
        // shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
        let l = lineage(&[(0, 10), (2, 13), (4, 17)]);
        assert_eq!(at(&l, 1, 0), (0, 13));
        assert_eq!(at(&l, 2, 0), (2, 17));
        assert_eq!(at(&l, 3, 0), (2, 17));
        assert_eq!(l.end_offset_for(1, 0).case, EpochCase::InGap);
        assert_eq!(l.end_offset_for(2, 0).case, EpochCase::Known);
        // shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked
        let l = lineage(&[(2, 100)]);
        assert_eq!(at(&l, 3, 100), undefined);
        assert_eq!(l.end_offset_for(3, 100).case, EpochCase::AboveLatest);
        // shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages
        let l = lineage(&[(0, 0), (1, 3), (2, 6)]);
        assert_eq!(at(&l, 2, 9), (2, 9));
        assert_eq!(at(&l, 0, 9), (0, 3));
        assert_eq!(at(&l, 1, 9), (1, 6));
    }

    #[test]
    fn an_epoch_the_controller_gave_above_a_lagging_lineage_has_no_answer() {
        let mut l = lineage(&[(0, 0), (3, 5)]);
        assert_eq!(
            l.answer(5, 10).map(|a| a.case),
            Some(EpochCase::AboveLatest)
        );
        l.metadata_latest_epoch = Some(4);
        assert_eq!(
            l.answer(5, 10).map(|a| a.case),
            Some(EpochCase::AboveLatest)
        );
        l.metadata_latest_epoch = Some(5);
        assert_eq!(l.answer(5, 10), None);
        // Below the lineage's newest epoch the cache's own answer stands.
        assert_eq!(l.answer(1, 10).map(|a| a.case), Some(EpochCase::InGap));
        assert_eq!(
            l.answer(UNDEFINED_EPOCH, 10).map(|a| a.case),
            Some(EpochCase::AboveLatest)
        );
    }

    #[test]
    fn the_checkpoint_wins_and_the_metadata_log_fills_a_missing_one() {
        let entries = vec![EpochEntry {
            epoch: 2,
            start_offset: 7,
        }];
        let meta = MetadataEpochs {
            entries: entries.clone(),
            latest: Some(4),
        };
        let src = ClusterLineage::new(
            CheckpointLineage::default(),
            [("p".to_string(), meta)].into_iter().collect(),
        );
        let l = src.lineage("t", 0, "p").unwrap();
        assert_eq!(
            (l.entries, l.from.as_str()),
            (entries, METADATA_LINEAGE_FROM)
        );
        assert_eq!(l.metadata_latest_epoch, Some(4));
        assert!(src.lineage("t", 0, "other").is_none());
    }

    #[test]
    fn later_entries_of_an_epoch_win_and_sort() {
        let l = lineage(&[(4, 11), (2, 6), (4, 12)]);
        assert_eq!(
            l.entries,
            vec![
                EpochEntry {
                    epoch: 2,
                    start_offset: 6
                },
                EpochEntry {
                    epoch: 4,
                    start_offset: 12
                }
            ]
        );
    }

    /// `PartitionTest.testMakeLeaderUpdatesEpochCache`: an epoch assigned at the log end
    /// before any batch is cut by the load yet answered with the log end as its end (the
    /// latest, or the floor below it for an epoch between); an entry past the log end (a
    /// torn tail's) or above that epoch is not.
    #[test]
    fn an_epoch_assigned_at_the_log_end_ends_there() {
        let at = |pairs: &[(i32, i64)], e: i32| {
            let r = lineage(pairs)
                .as_loaded(None, Some(10))
                .end_offset_for(e, 10);
            (r.case, r.epoch, r.end_offset)
        };
        assert_eq!(at(&[(0, 0), (1, 10)], 1), (EpochCase::Latest, 1, 10));
        assert_eq!(at(&[(0, 0), (3, 10)], 2), (EpochCase::InGap, 0, 10));
        let undefined = (
            EpochCase::AboveLatest,
            UNDEFINED_EPOCH,
            UNDEFINED_EPOCH_OFFSET,
        );
        assert_eq!(at(&[(0, 0), (1, 10)], 2), undefined);
        assert_eq!(at(&[(0, 0), (1, 12)], 1), undefined);
        assert_eq!(at(&[(0, 0), (1, 10), (2, 12)], 1), undefined);
    }

    // LeaderEpochFileCacheTest's truncateFromStart / truncateFromEnd cases
    // (shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs,
    // shouldNotClearAnythingIfOffsetToEarly, shouldClearEarliestOnClearingExactOffset,
    // shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries), as the load applies them.
    #[test]
    fn as_loaded_truncates_as_the_cache_does() {
        let pairs = |l: &Lineage| -> Vec<(i32, i64)> {
            l.entries
                .iter()
                .map(|e| (e.epoch, e.start_offset))
                .collect()
        };
        let three = || lineage(&[(2, 6), (3, 8), (4, 11)]);
        assert_eq!(pairs(&three().as_loaded(Some(9), None)), [(3, 9), (4, 11)]);
        assert_eq!(
            pairs(&three().as_loaded(Some(5), None)),
            [(2, 6), (3, 8), (4, 11)]
        );
        assert_eq!(pairs(&three().as_loaded(Some(8), None)), [(3, 8), (4, 11)]);
        assert_eq!(pairs(&three().as_loaded(None, Some(8))), [(2, 6)]);
        assert_eq!(
            pairs(&three().as_loaded(None, Some(12))),
            [(2, 6), (3, 8), (4, 11)]
        );
        assert_eq!(pairs(&three().as_loaded(Some(9), Some(11))), [(3, 9)]);
    }
}
