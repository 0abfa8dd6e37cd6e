//! When the leader's expiration deletes remote segments that time and size retention pass
//! over, as `RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments` decides it
//! (3.6 to today), and what the metadata shows of a run deleting the segments below the log
//! start.
//!
//! Time and size retention judge only segments inside the leader-epoch lineage
//! (`isRemoteSegmentWithinLeaderEpochs`); a segment outside it is passed over and the run
//! goes on (`canProcess = shouldDeleteSegment || !isValidSegment`). Two rules delete a
//! segment whatever its lineage:
//!
//! - `deleteLogSegmentsDueToLeaderEpochCacheTruncation`, at the end of every run: a segment
//!   whose epochs are all below the epoch cache's earliest epoch;
//! - `RemoteLogRetentionHandler.isSegmentBreachByLogStartOffset`, in the run's walk of the
//!   lineage's epochs: a segment whose epochs are all at or below the cache's first epoch
//!   and whose end is below the log start.
//!
//! The cache is truncated at the log start (`LeaderEpochFileCache.truncateFromStart`, at load
//! and at every move of the log start), so its first epoch is the log start's: as the log
//! start passes a segment whose epochs the lineage reaches, one of the two rules deletes it.
//!
//! Both rules see a segment only through a per-epoch listing
//! (`RemoteLogMetadataManager.listRemoteLogSegments(tp, epoch)`, served by
//! `RemoteLogLeaderEpochState.listAllRemoteLogSegments`): the log-start rule in the walk of
//! the lineage's epochs, the truncation rule in the listings of the remote epochs below the
//! cache's earliest. A finished segment a later copy replaced at the same start offset
//! without moving it out of the offset map is in no listing of that epoch
//! ([`super::epochs::EpochMaps::listed_epochs`]); listed in none of its epochs, no rule
//! ever deletes it ([`Expiry::Unlisted`]).

use super::lineage::Lineage;
use super::replay::{PartitionLog, RemoteSegment};
use crate::read::format::remote_log::SegmentState;
use serde::Serialize;

/// When the leader's expiration deletes a finished segment outside the lineage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "when")]
pub enum Expiry {
    /// Every epoch of the segment is below the cache's earliest epoch: the next run deletes
    /// it (`deleteLogSegmentsDueToLeaderEpochCacheTruncation`).
    NextRun { earliest_epoch: i32 },
    /// Once the log start reaches `log_start_offset` — past the segment's end, where the
    /// cache's first epoch (`first_epoch`) is at or above every epoch of the segment — the
    /// run after deletes it (`isSegmentBreachByLogStartOffset`, or the rule above when the
    /// first epoch is above them all).
    LogStartReaches {
        log_start_offset: i64,
        first_epoch: i32,
    },
    /// An epoch of the segment is above every epoch of the lineage: neither rule holds
    /// until a later leader epoch starts and the log start passes into it.
    Never {
        segment_epoch: i32,
        latest_epoch: i32,
        /// The segment is not listed in its epoch `segment_epoch` (replaced in that
        /// epoch's offset map), only in lower ones: the log-start rule, walking
        /// `segment_epoch`, never finds it, so it waits for an epoch above `segment_epoch`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        unlisted_in_segment_epoch: bool,
    },
    /// The segment is in none of its epochs' listings (a later copy at the same start
    /// offset replaced it in each epoch's offset map without marking it unreferenced): no
    /// retention rule ever finds it; it stays until the partition is deleted.
    Unlisted,
}

/// When a segment with `epochs` ending at `end_offset` goes, against `loaded`: the replica's
/// lineage as its broker holds it ([`Lineage::truncated_from_start`] at the log start).
/// `listed`: the segment's epochs whose listing holds it
/// ([`super::epochs::EpochMaps::listed_epochs`]). `None` without epochs or lineage.
///
/// The truncation rule finds the segment in any epoch's listing (all its epochs are below
/// the earliest); the log-start rule walks the lineage's epochs, and with all the
/// segment's epochs at or below the cache's first only that first epoch can list it: it must
/// be the segment's highest, and list it.
pub fn expiry(
    epochs: &[(i32, i64)],
    end_offset: i64,
    loaded: &Lineage,
    listed: &[i32],
) -> Option<Expiry> {
    let highest = epochs.iter().map(|e| e.0).max()?;
    let (earliest, _) = loaded.first()?;
    if listed.is_empty() {
        return Some(Expiry::Unlisted);
    }
    if highest < earliest {
        return Some(Expiry::NextRun {
            earliest_epoch: earliest,
        });
    }
    // Not listed in its highest epoch: only the truncation rule, once the cache starts
    // above that epoch.
    let unlisted_in_highest = !listed.contains(&highest);
    let needed = if unlisted_in_highest {
        highest.saturating_add(1)
    } else {
        highest
    };
    let Some((_, from)) = loaded.first_at_or_above(needed) else {
        let latest = loaded.entries().last().map_or(earliest, |e| e.0);
        return Some(Expiry::Never {
            segment_epoch: highest,
            latest_epoch: latest,
            unlisted_in_segment_epoch: unlisted_in_highest,
        });
    };
    // The log-start rule needs the segment's end below the log start
    // (`isSegmentBreachByLogStartOffset`); the truncation rule
    // (`deleteLogSegmentsDueToLeaderEpochCacheTruncation`) only the cache starting above every
    // epoch of the segment — the log start at the first epoch above its highest, whatever
    // its end: whichever comes first.
    let by_log_start = from.max(end_offset.saturating_add(1));
    let by_truncation = loaded
        .first_at_or_above(highest.saturating_add(1))
        .map(|(_, o)| o);
    let at = by_truncation.map_or(by_log_start, |t| t.min(by_log_start));
    Some(Expiry::LogStartReaches {
        log_start_offset: at,
        first_epoch: loaded.epoch_at(at).unwrap_or(earliest),
    })
}

/// Whether the next run deletes a segment ending below the log start, listed in its epochs
/// `listed` ([`super::epochs::EpochMaps::listed_epochs`]):
/// `RemoteLogRetentionHandler.isSegmentBreachByLogStartOffset` — every epoch of the segment
/// at or below the first epoch of `loaded` filtered as the run filters it, and the segment
/// listed in that first epoch (the only epoch of the run's walk it can be in) — or
/// `deleteLogSegmentsDueToLeaderEpochCacheTruncation` — every epoch below the cache's
/// earliest, and the segment listed in one of them. `None` without a lineage: the rules have
/// nothing to judge by.
pub fn breached_by_log_start(s: &RemoteSegment, loaded: &Lineage, listed: &[i32]) -> Option<bool> {
    let (first, _) = loaded.filtered().first()?;
    let (earliest, _) = loaded.first()?;
    let by_log_start = s.leader_epochs.iter().all(|(e, _)| *e <= first) && listed.contains(&first);
    let by_truncation = s.leader_epochs.iter().all(|(e, _)| *e < earliest) && !listed.is_empty();
    Some(by_log_start || by_truncation)
}

/// What the metadata shows of a run deleting the segments ending below `log_start`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Deleting<'a> {
    /// A segment below the log start left DELETE_SEGMENT_STARTED (the lowest): its delete
    /// is in flight or failed, and every run retries it.
    pub pending: Option<&'a RemoteSegment>,
    /// Whether nothing shows the expiration moved on past `pending`
    /// ([`super::replay::PartitionLog::expiration_moved_on`]): its delete in flight, or
    /// retried by the next run.
    pub pending_is_last: bool,
    /// The segment below the log start whose deletion (started or finished) is the
    /// partition's latest event.
    pub last_deleted: Option<&'a RemoteSegment>,
}

impl Deleting<'_> {
    /// Whether a deletion below the log start is under way or waiting.
    pub fn any(&self) -> bool {
        self.pending.is_some() || self.last_deleted.is_some()
    }
}

/// The deletions of segments ending below `log_start` in `log`.
pub fn deleting(log: &PartitionLog, log_start: i64) -> Deleting<'_> {
    let below = || {
        log.segments
            .iter()
            .filter(move |s| s.end_offset < log_start)
    };
    let pending = below()
        .filter(|s| s.state == SegmentState::DeleteStarted)
        .min_by_key(|s| s.start_offset);
    let last_deleted = log.last_event.and_then(|last| {
        below().find(|s| {
            s.history.iter().any(|e| {
                e.at == last
                    && matches!(
                        e.state,
                        SegmentState::DeleteStarted | SegmentState::DeleteFinished
                    )
            })
        })
    });
    Deleting {
        pending,
        pending_is_last: pending.is_some_and(|p| !log.expiration_moved_on(p)),
        last_deleted,
    }
}

/// The log start offset an unfinished copy `s` (number `i` of `log`) lies wholly below,
/// when the leader's next expiration run deletes it by the log-start rule: the run lists
/// COPY_SEGMENT_STARTED segments with the others (`RemoteLogLeaderEpochState.
/// listAllRemoteLogSegments`, unreferenced ones included) and
/// `RemoteLogRetentionHandler.isSegmentBreachByLogStartOffset` holds for it
/// ([`breached_by_log_start`] on the epoch cache as loaded at that log start) — on every
/// replica in `views`, whichever leads: a follower learns the log start from its fetches
/// and a new leader keeps its own, so the replicas' checkpoints may disagree and the
/// expiration runs on the leader's. The lowest of their log starts; `None` without a
/// replica, or when one has no log start or lineage to judge by, or keeps the segment.
pub(super) fn below_log_start(
    log: &PartitionLog,
    i: usize,
    s: &RemoteSegment,
    views: &[super::checks::ReplicaView],
) -> Option<i64> {
    let listed = log.epochs.listed_epochs(i, s);
    let one = |view: &super::checks::ReplicaView| {
        if view.lineage_unread.is_some() {
            return None;
        }
        let start = view.log_start_offset.filter(|&st| s.end_offset < st)?;
        let loaded = super::checks::loaded_lineage(view).filter(|l| !l.is_empty())?;
        (breached_by_log_start(s, &loaded, &listed) == Some(true)).then_some(start)
    };
    views
        .iter()
        .map(one)
        .try_fold(None, |low: Option<i64>, st| {
            let st = st?;
            Some(Some(low.map_or(st, |l| l.min(st))))
        })?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(e: &[(i32, i64)]) -> Lineage {
        Lineage::new(e.iter().copied())
    }

    /// `expiry` for a segment listed in every one of its epochs.
    fn expiry_listed(epochs: &[(i32, i64)], end: i64, loaded: &Lineage) -> Option<Expiry> {
        let all: Vec<i32> = epochs.iter().map(|e| e.0).collect();
        expiry(epochs, end, loaded, &all)
    }

    #[test]
    fn below_the_earliest_epoch_goes_on_the_next_run() {
        let loaded = l(&[(5, 100)]);
        assert_eq!(
            expiry_listed(&[(4, 90)], 150, &loaded),
            Some(Expiry::NextRun { earliest_epoch: 5 })
        );
    }

    #[test]
    fn reached_by_the_lineage_goes_once_the_log_start_passes_it() {
        let loaded = l(&[(4, 0), (5, 100), (6, 200)]);
        // Its highest epoch 5 starts at 100 in the lineage; its end is 150.
        assert_eq!(
            expiry_listed(&[(4, 90), (5, 95)], 150, &loaded),
            Some(Expiry::LogStartReaches {
                log_start_offset: 151,
                first_epoch: 5
            })
        );
        // Ending before epoch 6 starts, a segment of epoch 6 waits for the log start to
        // reach 200.
        assert_eq!(
            expiry_listed(&[(4, 90), (6, 95)], 150, &loaded),
            Some(Expiry::LogStartReaches {
                log_start_offset: 200,
                first_epoch: 6
            })
        );
        // Epoch 5 is the cache's first: once the log start passes the segment's end.
        assert_eq!(
            expiry_listed(&[(5, 90)], 150, &l(&[(5, 60), (6, 200)])),
            Some(Expiry::LogStartReaches {
                log_start_offset: 151,
                first_epoch: 5
            })
        );
    }

    #[test]
    fn above_the_lineage_is_never_deleted_by_these_rules() {
        assert_eq!(
            expiry_listed(&[(1, 40), (3, 50)], 59, &l(&[(0, 20), (1, 40), (2, 70)])),
            Some(Expiry::Never {
                segment_epoch: 3,
                latest_epoch: 2,
                unlisted_in_segment_epoch: false
            })
        );
    }

    // RemoteLogLeaderEpochState.handleSegmentWithCopySegmentFinishedState puts a shorter
    // copy over a longer one at the same start: the longer one is in no listing.
    #[test]
    fn a_segment_in_no_listing_is_never_deleted() {
        let loaded = l(&[(0, 0), (1, 50)]);
        assert_eq!(expiry(&[(0, 0)], 99, &loaded, &[]), Some(Expiry::Unlisted));
        // below the earliest epoch too: the truncation rule lists epoch 0 and finds nothing
        assert_eq!(
            expiry(&[(0, 0)], 99, &l(&[(1, 100)]), &[]),
            Some(Expiry::Unlisted)
        );
    }

    #[test]
    fn a_segment_missing_from_its_highest_epochs_listing_waits_for_an_epoch_above() {
        let loaded = l(&[(0, 0), (1, 50), (2, 300)]);
        // listed in epoch 0 only: the log-start rule walking epoch 1 never finds it; the
        // truncation rule does once the cache starts at epoch 2
        assert_eq!(
            expiry(&[(0, 0), (1, 50)], 99, &loaded, &[0]),
            Some(Expiry::LogStartReaches {
                log_start_offset: 300,
                first_epoch: 2
            })
        );
        assert_eq!(
            expiry(&[(0, 0), (1, 50)], 99, &l(&[(0, 0), (1, 50)]), &[0]),
            Some(Expiry::Never {
                segment_epoch: 1,
                latest_epoch: 1,
                unlisted_in_segment_epoch: true
            })
        );
    }

    fn segment(epochs: &[(i32, i64)], end: i64) -> RemoteSegment {
        RemoteSegment {
            id: [0; 16],
            start_offset: epochs[0].1,
            end_offset: end,
            leader_epochs: epochs.to_vec(),
            segment_size_in_bytes: 0,
            max_timestamp_ms: 0,
            custom_metadata: None,
            txn_index_empty: false,
            state: SegmentState::CopyFinished,
            history: Vec::new(),
        }
    }

    #[test]
    fn the_log_start_rules_need_the_segment_listed() {
        let loaded = l(&[(1, 100)]);
        let b = segment(&[(0, 0), (1, 50)], 99);
        // listed in the cache's first epoch: the log-start rule
        assert_eq!(breached_by_log_start(&b, &loaded, &[0, 1]), Some(true));
        // listed only below it: neither rule (epoch 1 is not below the earliest)
        assert_eq!(breached_by_log_start(&b, &loaded, &[0]), Some(false));
        let a = segment(&[(0, 0)], 99);
        // all below the earliest: the truncation rule, when some listing holds it
        assert_eq!(breached_by_log_start(&a, &loaded, &[0]), Some(true));
        assert_eq!(breached_by_log_start(&a, &loaded, &[]), Some(false));
    }
}
