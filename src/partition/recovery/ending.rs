//! The two loads that do not end a log where its recovery leaves it: a `-delete`
//! directory, loaded only to be deleted, and a log whose end falls below its log start
//! checkpoint, emptied and restarted at the checkpoint ([`super::Emptied`]).
//!
//! `LogLoader.load` skips `recoverLog` for a directory named `…-delete` and ends the load
//! with `RecoveryOffsets(0, 0)`: recovery point and log end 0, the leader-epoch cache cut
//! back from offset 0 (`truncateFromEndAsyncFlush`: nothing is left) and the producer state
//! rebuilt only to offset 0 (`UnifiedLog.rebuildProducerState`, whose `truncateAndReload`
//! keeps no snapshot above 0 nor at or below the log start). The segments recovered for a
//! missing or corrupt index still are (`loadSegmentFiles` runs first). `LogManager.loadLog`
//! then hands the log to the deletion queue (`addLogToBeDeleted`): the directory is removed
//! by the `kafka-delete-logs` task once `file.delete.delay.ms` has passed.

use super::{CheckpointEntry, Emptied, SegmentPlan};
use super::{LeftoverAction, ProducerRebuild, SegmentInput};

/// How the load ends the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// Where recovery leaves it.
    Kept,
    /// Emptied and restarted at the log start checkpoint.
    Emptied(Emptied),
    /// A `-delete` directory: loaded to offset 0, then deleted.
    DeleteDir,
}

/// The offsets a load ends with, and what it deletes and creates.
pub(super) struct EndOffsets {
    pub deleted: Vec<String>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    /// The `.log` the load opens (`LogSegment.open`) when no segment is left.
    pub created: Option<String>,
}

fn segment_name(base: i64) -> String {
    format!("{base:020}.log")
}

impl Ending {
    pub(super) fn of(plan: &SegmentPlan) -> Ending {
        match plan.emptied {
            _ if plan.delete_dir => Ending::DeleteDir,
            Some(e) => Ending::Emptied(e),
            None => Ending::Kept,
        }
    }

    pub(super) fn kept(self) -> bool {
        self == Ending::Kept
    }

    /// The segments deleted, the log start and end once loaded and the segment created,
    /// from the plan's and the log start `log_start` of a kept log
    /// (`max(checkpoint, first base)`).
    pub(super) fn offsets(
        self,
        plan: &SegmentPlan,
        segs: &[SegmentInput],
        log_start_checkpoint: Option<i64>,
        log_start: Option<i64>,
    ) -> EndOffsets {
        let all = || segs.iter().map(|s| s.name.clone()).collect();
        // No segment at all: `recoverLog` (or, for a -delete directory, `load` itself)
        // opens one, at the log start checkpoint (at 0 for a -delete directory).
        let empty_dir_base = segs.is_empty().then(|| match self {
            Ending::DeleteDir => 0,
            _ => log_start_checkpoint.unwrap_or(0),
        });
        match self {
            Ending::Kept => EndOffsets {
                deleted: plan.deleted.clone(),
                log_start: log_start.or(empty_dir_base),
                log_end: plan.log_end_after.or(empty_dir_base),
                created: empty_dir_base.map(segment_name),
            },
            Ending::Emptied(e) => EndOffsets {
                deleted: all(),
                log_start: Some(e.log_start),
                log_end: Some(e.log_start),
                created: Some(segment_name(e.log_start)),
            },
            // The loaded log's end is 0 (`RecoveryOffsets(0, 0)`); the deletion task then
            // removes every segment with the directory.
            Ending::DeleteDir => EndOffsets {
                deleted: all(),
                log_start: log_start.or(empty_dir_base),
                log_end: Some(0),
                created: empty_dir_base.map(segment_name),
            },
        }
    }

    /// The log end the load reads once recovery is over, before it compares it with the
    /// log start checkpoint (`LogLoader.recoverLog`, the last segment's `readNextOffset`):
    /// a kept log's end after loading (`log_end`), an emptied one's end before it was
    /// emptied; none for a `-delete` directory, which `recoverLog` never runs on.
    pub(super) fn recovered_end(self, log_end: Option<i64>) -> Option<i64> {
        match self {
            Ending::Kept => log_end,
            Ending::Emptied(e) => Some(e.log_end),
            Ending::DeleteDir => None,
        }
    }

    /// The recovery point the load leaves (`RecoveryOffsets.newRecoveryPoint`): after a
    /// clean shutdown that left the log whole, its end; otherwise the checkpointed one
    /// (0 without an entry) bounded by the log end; 0 for a `-delete` directory. `None`
    /// when the log end is unknown, or the checkpointed one is needed and klogscan could
    /// not read it. Then `UnifiedLog`'s constructor raises it to the local
    /// log start (`updateLocalLogStartOffset(max(logStartOffset, first segment base))`:
    /// `local_start`), for every directory, a `-delete` one included (the constructor runs
    /// on whatever `LogLoader.load` returns).
    pub(super) fn recovery_point(
        self,
        clean_shutdown: Option<bool>,
        recovery_point: CheckpointEntry,
        has_segments: bool,
        log_end: Option<i64>,
        local_start: Option<i64>,
    ) -> Option<i64> {
        let raised = |p: i64| local_start.map_or(p, |l| p.max(l));
        match (self, recovery_point) {
            (Ending::DeleteDir, _) => Some(raised(0)),
            (Ending::Kept, _) if clean_shutdown == Some(true) && has_segments => log_end,
            (_, CheckpointEntry::Unread) => None,
            (Ending::Emptied(e), CheckpointEntry::Read(rp)) => {
                Some(raised(rp.unwrap_or(0).min(e.log_start)))
            }
            (Ending::Kept, CheckpointEntry::Read(rp)) => {
                log_end.map(|end| raised(rp.unwrap_or(0).min(end)))
            }
        }
    }

    /// The rebuild is skipped after a clean shutdown when no snapshot file is left once
    /// the strays are removed (`skipped`: the usual answer). An emptied log has none:
    /// `truncateFullyAndStartAt` deleted those the broker knew of, and the stray removal
    /// over the one new segment the rest (all lie below its base).
    pub(super) fn skipped(self, skipped: bool, clean_shutdown: Option<bool>) -> bool {
        match self {
            Ending::Emptied(_) => clean_shutdown == Some(true),
            _ => skipped,
        }
    }

    /// Where the final rebuild's replay starts when it is not the usual one: a `-delete`
    /// directory's rebuild runs to offset 0 and replays nothing.
    pub(super) fn replay_from(self) -> Option<i64> {
        (self == Ending::DeleteDir).then_some(0)
    }

    /// What the load does to the files beyond the segments: the snapshots'
    /// fates reworded with the reason they go, and an emptied log's cleared
    /// `leader-epoch-checkpoint`.
    pub(super) fn leftovers(self, leftovers: &mut Vec<LeftoverAction>) {
        let why = match self {
            Ending::Kept => return,
            Ending::Emptied(e) => format!(
                "deleted: the log ends at {} once recovered, below its log start checkpoint {}, so the load drops every snapshot with the segments (ProducerStateManager.truncateFullyAndStartAt) and leaves none but the empty one it writes at {}",
                e.log_end, e.log_start, e.log_start
            ),
            Ending::DeleteDir => "deleted at load: a -delete directory's producer state is rebuilt only to offset 0 (removeStraySnapshots, then truncateAndReload keeps no snapshot)".to_string(),
        };
        for l in leftovers.iter_mut().filter(|l| {
            matches!(
                l.kind.as_str(),
                "snapshot_beyond_log" | "snapshot_below_log_start" | "stray_snapshot"
            )
        }) {
            l.action.clone_from(&why);
        }
        if let Ending::Emptied(e) = self {
            leftovers.push(LeftoverAction {
                file: "leader-epoch-checkpoint".into(),
                kind: "leader_epoch_cache_cleared".into(),
                action: format!(
                    "rewritten empty: the log ends below its log start checkpoint {} (LeaderEpochFileCache.clearAndFlush); epochs come back with the next appends",
                    e.log_start
                ),
            });
        }
    }

    /// The producer state of a log that is not kept: empty (an emptied log starts with no
    /// producer, and a `-delete` directory's rebuild stops at offset 0).
    pub(super) fn rebuild(self, ps: &mut ProducerRebuild) {
        if self.kept() {
            return;
        }
        ps.producers = Some(0);
        ps.open_transactions = Some(0);
        ps.snapshot = None;
        ps.snapshot_offset = None;
        ps.snapshot_written_at_load = false;
    }
}
