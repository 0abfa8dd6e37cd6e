//! How a KRaft node opens its metadata log at start (`KafkaMetadataLog.apply`), as far as
//! the directory's names and the batches' framing decide it: the log start, the snapshot
//! the node opens, and whether `truncateToLatestSnapshot` empties the log. Shared by every
//! reader of `__cluster_metadata` (the leadership history, the partition stage's snapshot
//! checks, the compaction knowledge), so they all read the log the node reads.

use super::{PartitionDir, kraft_snapshot_id};
use std::path::PathBuf;

/// The log start offset `UnifiedLog`'s load gives the metadata log (`KafkaMetadataLog.apply`
/// opens it with log start 0: the first segment's base offset, else 0).
pub fn metadata_log_start(p: &PartitionDir) -> i64 {
    p.segments
        .iter()
        .filter(|s| s.log.is_some())
        .map(|s| s.base_offset)
        .min()
        .unwrap_or(0)
        .max(0)
}

/// The snapshot the node opens at start, `(end offset, epoch, file)`: among those
/// `KafkaMetadataLog.recoverSnapshots` keeps (a name `Snapshots.parse` reads, at or above
/// the log start), the greatest `OffsetAndEpoch` (`latestSnapshotId`: the epoch first, then
/// the end offset) — not the greatest file name, which orders by end offset first.
pub fn latest_kraft_snapshot(p: &PartitionDir) -> Option<(i64, i32, &PathBuf)> {
    let start = metadata_log_start(p);
    p.kraft_snapshots
        .iter()
        .filter_map(|path| {
            let (end, epoch) = kraft_snapshot_id(path.file_name()?.to_str()?)?;
            Some((end, epoch, path))
        })
        .filter(|(end, _, _)| *end >= start)
        .max_by_key(|(end, epoch, _)| (*epoch, *end))
}

/// The metadata log as `KafkaMetadataLog.apply` leaves it after `UnifiedLog`'s load: every
/// segment is recovered (`LogSegment.recover`: the first batch that fails its checks, or
/// the first bytes that do not frame as one, truncate the log there and the later
/// segments go), so the log end offset and the leader-epoch cache's latest epoch
/// (`log.latestEpoch`) are those of the valid batches before that point. Fed every segment
/// batch in order ([`Self::batch`]).
#[derive(Debug, Default)]
pub struct Recovered {
    /// The end offset of the last valid batch before the first invalid one.
    pub end: Option<i64>,
    /// The latest KRaft epoch among those batches (0: none, `latestEpoch.getOrElse(0)`).
    pub epoch: i32,
    /// Recovery stopped here: no later batch counts.
    pub stopped: bool,
    /// The offset recovery truncates at, once `stopped`.
    pub stop_at: Option<i64>,
    /// A batch this model does not follow (magic 0/1, a batch too large to hold, a file
    /// that does not read): the recovered end is unknown.
    pub unknown: bool,
}

impl Recovered {
    /// One segment batch, in log order.
    pub fn batch(&mut self, valid: bool, base_offset: i64, last_offset: i64, epoch: i32) {
        if self.stopped {
            return;
        }
        if !valid {
            self.stopped = true;
            self.stop_at = Some(base_offset);
            return;
        }
        // A next offset beyond a long (hostile bytes): not followed.
        let Some(end) = last_offset.checked_add(1) else {
            self.unknown = true;
            return;
        };
        self.end = Some(end);
        self.epoch = self.epoch.max(epoch);
    }

    /// `KafkaMetadataLog.truncateToLatestSnapshot`: the log is truncated fully to the
    /// latest snapshot (`end_offset`, `epoch`; `truncateFullyAndStartAt`) when its epoch is
    /// above the log's latest epoch, or equal with its end offset above the log end offset
    /// (a follower that crashed after downloading a snapshot, before it truncated its
    /// log). The log of an empty directory ends at its start. Unknown (false) when a batch
    /// was not followed.
    pub fn truncates_fully(&self, end_offset: i64, epoch: i32, log_start: i64) -> bool {
        let end = self.end.unwrap_or(log_start);
        !self.unknown && (epoch > self.epoch || (epoch == self.epoch && end_offset > end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_only_to_a_snapshot_past_the_recovered_log() {
        let mut r = Recovered::default();
        r.batch(true, 0, 9, 2);
        // Epoch above the log's: truncated, whatever the offsets.
        assert!(r.truncates_fully(5, 3, 0));
        // Same epoch: only past the log end.
        assert!(r.truncates_fully(11, 2, 0));
        assert!(!r.truncates_fully(10, 2, 0));
        // Older epoch: never.
        assert!(!r.truncates_fully(50, 1, 0));
        // An unfollowed batch leaves it unknown: not truncated.
        r.unknown = true;
        assert!(!r.truncates_fully(5, 3, 0));
        // An invalid batch ends the recovered log; later batches do not count.
        let mut r = Recovered::default();
        r.batch(true, 0, 4, 1);
        r.batch(false, 5, 9, 1);
        r.batch(true, 10, 19, 1);
        assert_eq!((r.end, r.stop_at), (Some(5), Some(5)));
        assert!(r.truncates_fully(6, 1, 0));
    }
}
