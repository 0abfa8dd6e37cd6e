//! The transactions a recovery's truncation leaves open: `LogSegment.recover` rebuilds the
//! producer state from the batches it keeps, so a transaction begun below the new log end
//! whose COMMIT/ABORT marker lies at or above it is open again in the state the broker
//! starts with (`ProducerStateManager` replays the kept data batch and never sees the
//! marker). Its coordinator finished it when the marker was written, and sends no marker
//! for it again.
//!
//! Computed once per truncating partition, by the per-partition stage as soon as its
//! replay is finished (the cluster stage's transaction join takes the replay's records
//! afterwards); read by `verify`'s prediction (how many transactions the loaded state
//! holds open) and by the lost-data check (`cluster::lost`).

use crate::partition::state::ReplayOutcome;
use crate::partition::state::txnrec::TxnEnd;
use serde::{Deserialize, Serialize};

/// How many reopened transactions a partition keeps listed (the count is whole).
const LISTED: usize = 100;

/// A transaction the truncation reopens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReopenedTxn {
    pub producer_id: i64,
    /// Epoch of its first data batch.
    pub producer_epoch: i16,
    /// Its first data batch's offset: where the last stable offset stops.
    pub first_offset: i64,
    /// The removed marker's offset, and whether it was a COMMIT.
    pub marker_offset: i64,
    pub commit: bool,
}

/// The transactions open once the log ends at `end` after a truncation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AfterTruncation {
    /// The log end offset the truncation leaves.
    pub end: i64,
    /// The producers whose transaction the walk saw begin below `end` and not end below
    /// it (open at the log's end, or reopened), sorted.
    pub open_producers: Vec<i64>,
    /// Of those, the reopened ones, by first offset (the first 100).
    pub reopened: Vec<ReopenedTxn>,
    /// How many are reopened.
    pub reopened_count: usize,
    /// A removed marker closes a transaction the walk did not see begin (begun before the
    /// log's first offset, or empty): whether the state holds more open transactions is
    /// not known.
    pub unknown_start: bool,
    /// The lowest first offset among the transactions open at `end`: where the last stable
    /// offset stops (before the log start clamps it).
    #[serde(default)]
    pub first_open_offset: Option<i64>,
}

impl AfterTruncation {
    /// What the replay `outcome` of the whole log leaves open at `end`.
    pub(crate) fn of(outcome: &ReplayOutcome, end: i64) -> AfterTruncation {
        let removed = |t: &&crate::partition::state::txnrec::TxnRecord| {
            t.end != TxnEnd::Open && t.marker_offset >= end
        };
        let mut reopened: Vec<ReopenedTxn> = outcome
            .txns
            .iter()
            .filter(removed)
            .filter(|t| t.batches > 0 && t.first_offset < end)
            .map(|t| ReopenedTxn {
                producer_id: t.producer_id,
                producer_epoch: t.producer_epoch,
                first_offset: t.first_offset,
                marker_offset: t.marker_offset,
                commit: t.end == TxnEnd::Commit,
            })
            .collect();
        reopened.sort_by_key(|t| (t.first_offset, t.producer_id));
        let first_open_offset = outcome
            .open
            .iter()
            .map(|t| t.first_offset)
            .filter(|&f| f < end)
            .chain(reopened.first().map(|t| t.first_offset))
            .min();
        let mut open_producers: Vec<i64> = outcome
            .open
            .iter()
            .filter(|t| t.first_offset < end)
            .map(|t| t.producer_id)
            .chain(reopened.iter().map(|t| t.producer_id))
            .collect();
        open_producers.sort_unstable();
        open_producers.dedup();
        let reopened_count = reopened.len();
        reopened.truncate(LISTED);
        AfterTruncation {
            end,
            open_producers,
            reopened,
            reopened_count,
            first_open_offset,
            unknown_start: outcome.txns.iter().filter(removed).any(|t| t.batches == 0),
        }
    }

    /// How many transactions the state holds open once loaded, given the open
    /// transactions of the snapshots at or below `end` that the rebuild may load
    /// (`snapshot_open`): `None` when a snapshot holds one the walk does not leave open
    /// here (it may have closed below `end`, or begun before the log: not known), or
    /// [`Self::unknown_start`]. An open transaction never expires at a snapshot load.
    pub(crate) fn open_count<'a>(
        &self,
        mut snapshot_open: impl Iterator<Item = &'a i64>,
    ) -> Option<usize> {
        let unseen = snapshot_open.any(|p| self.open_producers.binary_search(p).is_err());
        (!self.unknown_start && !unseen).then_some(self.open_producers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::state::OpenTxn;
    use crate::partition::state::txnrec::TxnRecord;

    fn txn(pid: i64, first: i64, marker: i64, end: TxnEnd, batches: u32) -> TxnRecord {
        TxnRecord {
            producer_id: pid,
            producer_epoch: 0,
            marker_epoch: if end == TxnEnd::Open { -1 } else { 0 },
            coordinator_epoch: -1,
            end,
            first_offset: first,
            last_data_offset: first,
            marker_offset: marker,
            first_timestamp: 0,
            last_timestamp: 0,
            records: batches,
            batches,
            bytes: 0,
        }
    }

    fn outcome(txns: Vec<TxnRecord>, open: &[(i64, i64)]) -> ReplayOutcome {
        ReplayOutcome {
            txns,
            open: open
                .iter()
                .map(|&(producer_id, first_offset)| OpenTxn {
                    producer_id,
                    producer_epoch: 0,
                    first_offset,
                    last_timestamp: 0,
                    first_held_offset: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_removed_marker_reopens_a_transaction_begun_below_the_end() {
        let o = outcome(
            vec![
                txn(1, 0, 8, TxnEnd::Abort, 1),  // reopened
                txn(2, 1, 3, TxnEnd::Commit, 1), // closed below the end
                txn(3, 6, 9, TxnEnd::Commit, 1), // removed whole
                txn(4, 4, -1, TxnEnd::Open, 1),  // open at the log's end
            ],
            &[(4, 4)],
        );
        let a = AfterTruncation::of(&o, 5);
        assert_eq!(a.open_producers, vec![1, 4]);
        assert_eq!(a.reopened_count, 1);
        assert_eq!(
            (
                a.reopened[0].producer_id,
                a.reopened[0].first_offset,
                a.reopened[0].commit
            ),
            (1, 0, false)
        );
        assert!(!a.unknown_start);
        assert_eq!(a.first_open_offset, Some(0));
        assert_eq!(a.open_count([].iter()), Some(2));
        // A snapshot's open transaction the walk leaves open here: still known.
        assert_eq!(a.open_count([4].iter()), Some(2));
        // One the walk does not: unknown.
        assert_eq!(a.open_count([2].iter()), None);
        // Nothing removed at the log's end: only the open one.
        let a = AfterTruncation::of(&o, 10);
        assert_eq!((a.open_producers, a.reopened_count), (vec![4], 0));
    }

    #[test]
    fn a_removed_marker_of_a_transaction_not_seen_begin_makes_the_count_unknown() {
        let o = outcome(vec![txn(1, 7, 7, TxnEnd::Abort, 0)], &[]);
        let a = AfterTruncation::of(&o, 5);
        assert!(a.unknown_start);
        assert_eq!(a.reopened_count, 0);
        assert_eq!(a.open_count([].iter()), None);
        // Below the end, that marker is kept: nothing unknown.
        let a = AfterTruncation::of(&o, 8);
        assert_eq!(a.open_count([].iter()), Some(0));
    }
}
