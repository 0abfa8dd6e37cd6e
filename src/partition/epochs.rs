//! The leader-epoch cache as the broker's append path builds it from the batches.
//!
//! A broker fills `LeaderEpochFileCache` from batches two ways, and its
//! `leader-epoch-checkpoint` holds what the last of them wrote:
//!
//! * **recovery** (`LogSegment.recover`) assigns a batch's epoch only when it is above the
//!   cache's latest: each epoch from its first batch above the epochs before it. The walk
//!   keeps that lineage in `Carried::leader_epochs`.
//! * **the append path** (`UnifiedLog.append` → `maybeAssignEpochStartOffset` →
//!   `LeaderEpochFileCache.assign`) assigns every v2 batch's epoch: a lower epoch than the
//!   latest, or an earlier start offset, first drops every entry from that epoch or offset
//!   on (`maybeTruncateNonMonotonicEntries`); and a v0/v1 batch empties the cache
//!   (`clearAndFlush`, a message-format downgrade). [`AppendPathCache`] is that cache.
//!
//! Both agree while epochs only grow; they part after a batch of a lower epoch than one
//! before it (a `leader_epoch_regression`) or a legacy batch among v2 ones.

use crate::partition::event::BatchEvent;
use crate::partition::results::Carried;

/// Feed batch `ev` (in log order) to both caches the walk keeps: the recovery lineage
/// (`Carried::leader_epochs`: a v2 batch's epoch when it is above the latest, as
/// `LogSegment.recover` assigns) and the append path's cache (`Carried::append_epochs`).
pub(crate) fn note_batch(carried: &mut Carried, ev: &BatchEvent) {
    let (epoch, base) = (ev.partition_leader_epoch, ev.base_offset);
    if ev.magic < 2 {
        // Parsed or not, a legacy batch the log holds went through the append path.
        carried.append_epochs.clear();
        return;
    }
    if epoch >= 0 && carried.leader_epochs.last().is_none_or(|&(e, _)| epoch > e) {
        carried.leader_epochs.push((epoch, base));
    }
    carried.append_epochs.assign(epoch, base);
}

/// `(leaderEpoch, startOffset)` as `LeaderEpochFileCache.assign` leaves them when every
/// batch of the log went through the append path, in log order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AppendPathCache {
    /// Ascending in epoch and start offset, as the cache's `TreeMap` keeps them.
    pub(crate) entries: Vec<(i32, i64)>,
    /// A v0/v1 batch emptied the cache: no entry from before the first batch read (history
    /// retention deleted) can have survived in it.
    pub(crate) cleared: bool,
}

impl AppendPathCache {
    /// `LeaderEpochFileCache.assign(epoch, start)` for a v2 batch of epoch `epoch` at base
    /// offset `start` (a negative epoch is not assigned: `assign` refuses it, and recovery
    /// skips it).
    pub(crate) fn assign(&mut self, epoch: i32, start: i64) {
        if epoch < 0 || start < 0 {
            return;
        }
        // `isUpdateNeeded`: the latest epoch again, from its start or later, changes nothing.
        if self
            .entries
            .last()
            .is_some_and(|&(e, s)| e == epoch && start >= s)
        {
            return;
        }
        // `maybeTruncateNonMonotonicEntries`: from the newest entry down, drop each whose
        // epoch is not below the new one or whose start is not below the new start.
        while let Some(&(e, s)) = self.entries.last()
            && (e >= epoch || s >= start)
        {
            self.entries.pop();
        }
        self.entries.push((epoch, start));
    }

    /// A v0/v1 batch appended: `UnifiedLog.append` clears the cache (`clearAndFlush`).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.cleared = true;
    }
}

#[cfg(test)]
mod tests {
    use super::AppendPathCache;

    fn cache(batches: &[(i32, i64)]) -> Vec<(i32, i64)> {
        let mut c = AppendPathCache::default();
        for &(e, s) in batches {
            c.assign(e, s);
        }
        c.entries
    }

    /// `LeaderEpochFileCacheTest`'s assign cases, each with its expected cache.
    #[test]
    fn assign_follows_leader_epoch_file_cache() {
        // shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned
        assert_eq!(cache(&[(2, 6), (2, 10)]), vec![(2, 6)]);
        // shouldEnforceMonotonicallyIncreasingEpochs
        assert_eq!(cache(&[(1, 5), (2, 6), (1, 7)]), vec![(1, 7)]);
        // shouldEnforceOffsetsIncreaseMonotonically
        assert_eq!(cache(&[(2, 6), (3, 5)]), vec![(3, 5)]);
        // shouldEnforceMonotonicallyIncreasingStartOffsets
        assert_eq!(cache(&[(2, 9), (3, 9)]), vec![(3, 9)]);
        // shouldTruncateIfMatchingEpochButEarlierStartingOffset
        assert_eq!(
            cache(&[(5, 11), (6, 12), (7, 13), (7, 12)]),
            vec![(5, 11), (7, 12)]
        );
        // an entry below the regression's epoch and offset survives it
        assert_eq!(cache(&[(0, 0), (2, 6), (1, 7)]), vec![(0, 0), (1, 7)]);
        // a negative epoch is not assigned
        assert_eq!(cache(&[(1, 0), (-1, 4)]), vec![(1, 0)]);
    }

    #[test]
    fn a_legacy_batch_clears_the_cache() {
        let mut c = AppendPathCache::default();
        c.assign(3, 0);
        c.clear();
        c.assign(5, 6);
        assert_eq!(c.entries, vec![(5, 6)]);
        assert!(c.cleared);
    }
}
