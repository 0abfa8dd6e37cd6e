//! The producer state a broker holds below a retention-moved log start, read from the
//! producer snapshot at the first held segment (`ProducerStateManager.loadFromSnapshot` /
//! `loadProducerEntry`).
//!
//! Retention (`UnifiedLog.deletableSegments`) stops at the high watermark, not at the last
//! stable offset: a transaction open longer than `retention.ms` loses its head, yet the
//! broker keeps it ongoing (`ProducerStateManager.onLogStartOffsetIncremented` removes no
//! ongoing transaction; a producer with one never expires, `isProducerExpired`), its
//! `currentTxnFirstOffset` below the log start (`DescribeProducers` reports it; only the
//! last stable offset is bounded at the log start, `UnifiedLog.updateLogStartOffset`). The
//! snapshot written when the first held segment was rolled holds that state, as well as
//! each producer's coordinator epoch (of a last marker the log may no longer hold), which
//! `ProducerAppendInfo.checkCoordinatorEpoch` holds a later marker against.
//!
//! Evidence rule: only a snapshot whose offset is the first held segment's base offset is
//! read (it describes exactly the state before the first held batch); one below it would
//! miss the deleted batches between the two, so no seed is taken then. A snapshot that does
//! not parse (CRC) is skipped for the next older one, as `loadFromSnapshot` does, which is
//! then below the base: no seed either.

use super::Replay;
use super::entry::{DataRef, Entry, OpenTxnState};
use super::txnrec::OpenRecord;
use crate::read::format::snapshot::SnapshotEntry;

/// What a seeded replay keeps of its snapshot: its file name (evidence) and the
/// coordinator epochs of the producers' last markers with each producer's last timestamp,
/// sorted by producer id.
#[derive(Debug, Default)]
pub(crate) struct Seed {
    /// The snapshot's file name; its index in the replay's segment names is `segment`.
    pub name: String,
    pub segment: u32,
    /// The log start below which the seeded transactions started (the LSO floor).
    pub floor: i64,
    coordinator_epochs: Vec<(i64, i32, i64)>,
}

impl Seed {
    /// The coordinator epoch the snapshot holds for `pid` (`None`: none, or -1).
    pub(crate) fn coordinator_epoch(&self, pid: i64) -> Option<i32> {
        self.coordinator_state(pid).map(|(c, _)| c)
    }

    /// The coordinator epoch the snapshot holds for `pid` and the producer's last
    /// timestamp there (`None`: no coordinator epoch).
    pub(crate) fn coordinator_state(&self, pid: i64) -> Option<(i32, i64)> {
        self.coordinator_epochs
            .binary_search_by_key(&pid, |&(p, _, _)| p)
            .ok()
            .map(|i| (self.coordinator_epochs[i].1, self.coordinator_epochs[i].2))
    }
}

impl Replay {
    /// Seed the replay, before its first batch, with the producer state of snapshot `name`
    /// taken at `offset` (the first held segment's base offset, above 0): every open
    /// transaction that started below `offset` (`loadProducerEntry` puts it among the
    /// ongoing ones) and every producer's coordinator epoch. Its producers' sequences are
    /// left unknown (the first held batch is not checked against them).
    pub fn seed_from_snapshot(
        &mut self,
        name: &str,
        offset: i64,
        entries: impl Iterator<Item = SnapshotEntry>,
    ) {
        if self.batches > 0 || offset <= 0 {
            return;
        }
        let segment = u32::try_from(self.ctx.segment_names.len()).unwrap_or(u32::MAX);
        let mut ces = Vec::new();
        for s in entries.filter(|s| s.producer_id >= 0) {
            if s.coordinator_epoch >= 0 {
                ces.push((s.producer_id, s.coordinator_epoch, s.timestamp));
            }
            let Some(first) = s.open_txn_first_offset().filter(|&f| f < offset) else {
                continue;
            };
            if self.producers.get(s.producer_id).is_some() {
                continue; // a producer listed twice: the first entry is kept
            }
            let mut e = Entry::seeded(s.producer_id, s.producer_epoch, s.timestamp);
            let slot = self.open_txns.insert(OpenTxnState {
                pid: s.producer_id,
                first_batch: DataRef {
                    base_offset: first,
                    last_offset: first,
                    position: 0,
                    timestamp: s.timestamp,
                    segment,
                    base_sequence: -1,
                    last_sequence: -1,
                    leader_epoch: -1,
                },
                first_timestamp: s.timestamp,
                rec: OpenRecord::seeded(first, s.timestamp),
                epoch: s.producer_epoch,
                zombie: false,
                late_after_marker: false,
                non_txn_reported: false,
                clock_floor: i64::MIN,
            });
            if let Some(i) = slot {
                e.set_txn(i);
                self.producers.insert(e);
            }
        }
        ces.sort_unstable();
        ces.dedup_by_key(|&mut (p, _, _)| p);
        ces.shrink_to_fit();
        self.ctx.segment_names.push(name.to_string());
        self.seed = Some(Box::new(Seed {
            name: name.to_string(),
            segment,
            floor: offset,
            coordinator_epochs: ces,
        }));
    }

    /// Producer `e`'s coordinator epoch: its last marker's, else the seeding snapshot's.
    pub(super) fn coordinator_epoch_of(&self, e: &Entry) -> i32 {
        coordinator_epoch(e, &self.markers, self.seed.as_deref())
    }

    /// The seeding snapshot's name when `segment` is its index (a seeded transaction).
    pub(super) fn seeded_from(&self, segment: u32) -> Option<&str> {
        self.seed
            .as_deref()
            .filter(|s| s.segment == segment)
            .map(|s| s.name.as_str())
    }
}

/// [`Replay::coordinator_epoch_of`] without the replay.
pub(super) fn coordinator_epoch(
    e: &Entry,
    markers: &super::entry::Markers,
    seed: Option<&Seed>,
) -> i32 {
    match e.coordinator_epoch(markers) {
        -1 => seed.and_then(|s| s.coordinator_epoch(e.pid)).unwrap_or(-1),
        c => c,
    }
}
