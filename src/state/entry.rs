//! Per-producer bookkeeping of the replay: the recovery view's state (what a broker's
//! `ProducerStateEntry` holds) plus the little extra the audit view needs.

use crate::event::BatchEvent;

/// `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`: the leader's duplicate-detection window.
pub(crate) const NUM_BATCHES_TO_RETAIN: usize = 5;

/// What kind of batch a [`BatchRef`] points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefKind {
    Data,
    TxnData,
    Commit,
    Abort,
    Control,
}

impl RefKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RefKind::Data => "data",
            RefKind::TxnData => "transactional_data",
            RefKind::Commit => "commit",
            RefKind::Abort => "abort",
            RefKind::Control => "control",
        }
    }
}

/// A compact, copyable pointer to a batch (for evidence), with its producer fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchRef {
    pub base_offset: i64,
    pub last_offset: i64,
    pub position: u64,
    pub segment: u32,
    pub producer_id: i64,
    pub epoch: i16,
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub leader_epoch: i32,
    pub kind: RefKind,
    /// maxTimestamp for data, the marker record timestamp for markers.
    pub timestamp: i64,
    /// Markers only (else -1).
    pub coordinator_epoch: i32,
}

impl BatchRef {
    pub(crate) fn of(ev: &BatchEvent) -> BatchRef {
        let (kind, coordinator_epoch) = match ev.marker() {
            Some((true, ce)) => (RefKind::Commit, ce),
            Some((false, ce)) => (RefKind::Abort, ce),
            None if ev.is_control => (RefKind::Control, -1),
            None if ev.is_transactional => (RefKind::TxnData, -1),
            None => (RefKind::Data, -1),
        };
        BatchRef {
            base_offset: ev.base_offset,
            last_offset: ev.last_offset,
            position: ev.position,
            segment: ev.segment,
            producer_id: ev.producer_id,
            epoch: ev.producer_epoch,
            base_sequence: ev.base_sequence,
            last_sequence: ev.last_sequence,
            leader_epoch: ev.partition_leader_epoch,
            kind,
            timestamp: event_timestamp(ev),
            coordinator_epoch,
        }
    }

    pub(crate) fn is_marker(&self) -> bool {
        matches!(self.kind, RefKind::Commit | RefKind::Abort)
    }
}

/// The timestamp Kafka stores as the producer's `lastTimestamp` for this batch.
pub(crate) fn event_timestamp(ev: &BatchEvent) -> i64 {
    if ev.is_control {
        ev.marker_timestamp
    } else {
        ev.max_timestamp
    }
}

/// One cached batch (`BatchMetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SeqBatch {
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub base_offset: i64,
    pub last_offset: i64,
    pub position: u64,
    pub segment: u32,
}

/// The transaction a producer has open.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenTxnState {
    /// The batch that opened it.
    pub first: BatchRef,
    /// Epoch of the data that opened it (rule 25, TV inference).
    pub epoch: i16,
    /// Timestamp of the first batch (for durations).
    pub first_timestamp: i64,
    /// Opened by a zombie write (rule 13).
    pub zombie: bool,
    /// Opened by data at the same epoch as the marker just before it, continuing the old
    /// sequence (rule 24, KAFKA-12671 pattern).
    pub late_after_marker: bool,
}

/// State of one producer id.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub epoch: i16,
    /// -1 until a marker is seen.
    pub coordinator_epoch: i32,
    /// The last ≤ 5 batches at the current epoch, oldest first.
    cache: [SeqBatch; NUM_BATCHES_TO_RETAIN],
    cache_len: usize,
    /// False while the sequence of the current epoch is unknown (history starts with a
    /// marker of this producer): any sequence is then accepted.
    pub seq_known: bool,
    pub last_timestamp: i64,
    pub txn: Option<OpenTxnState>,
    pub last_event: Option<super::LastEvent>,
    /// The last batch of this producer (data or marker).
    pub last_ref: BatchRef,
    pub last_marker: Option<BatchRef>,
    /// The last data batch of this producer.
    pub last_data: Option<BatchRef>,
    /// Latest transaction-version evidence: `Some(true)` TV2, `Some(false)` TV0/1.
    pub tv2: Option<bool>,
    /// The last marker bumped the epoch above the transaction it closed (TV2 pattern or a
    /// fence), recorded to recognise TV2 when the next data starts at the marker's epoch.
    pub marker_bumped: bool,
    /// A TV2 producer's last marker did not bump the epoch (`marker_epoch_not_bumped`): the
    /// TV2 verdict was kept once; a second such marker in a row downgrades it to TV0/1.
    pub tv2_not_bumped: bool,
}

impl Entry {
    pub(crate) fn new(first: &BatchEvent) -> Entry {
        Entry {
            epoch: first.producer_epoch,
            coordinator_epoch: -1,
            cache: [SeqBatch::default(); NUM_BATCHES_TO_RETAIN],
            cache_len: 0,
            seq_known: false,
            last_timestamp: event_timestamp(first),
            txn: None,
            last_event: None,
            last_ref: BatchRef::of(first),
            last_marker: None,
            last_data: None,
            tv2: None,
            marker_bumped: false,
            tv2_not_bumped: false,
        }
    }

    pub(crate) fn cached(&self) -> &[SeqBatch] {
        &self.cache[..self.cache_len]
    }

    pub(crate) fn last_cached(&self) -> Option<&SeqBatch> {
        self.cached().last()
    }

    /// Last sequence of the current epoch, -1 if none.
    pub(crate) fn last_sequence(&self) -> i32 {
        self.last_cached().map_or(-1, |b| b.last_sequence)
    }

    pub(crate) fn clear_cache(&mut self) {
        self.cache_len = 0;
    }

    pub(crate) fn push(&mut self, b: SeqBatch) {
        if self.cache_len == NUM_BATCHES_TO_RETAIN {
            self.cache.copy_within(1.., 0);
            self.cache[NUM_BATCHES_TO_RETAIN - 1] = b;
        } else {
            self.cache[self.cache_len] = b;
            self.cache_len += 1;
        }
    }
}

/// The sequence that must follow `s` (wraps from `i32::MAX` to 0; -1 → 0).
pub(crate) fn next_sequence(s: i32) -> i32 {
    if s == i32::MAX { 0 } else { s.max(-1) + 1 }
}

/// Do two sequence ranges share a sequence? Ranges that wrap past `i32::MAX` are split.
pub(crate) fn ranges_overlap(a: (i32, i32), b: (i32, i32)) -> bool {
    fn parts(r: (i32, i32)) -> [(i32, i32); 2] {
        if r.1 >= r.0 {
            [r, (1, 0)]
        } else {
            [(r.0, i32::MAX), (0, r.1)]
        }
    }
    for x in parts(a) {
        for y in parts(b) {
            if x.0 <= x.1 && y.0 <= y.1 && x.0 <= y.1 && y.0 <= x.1 {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_sequence_wraps_at_int_max() {
        assert_eq!(next_sequence(-1), 0);
        assert_eq!(next_sequence(41), 42);
        assert_eq!(next_sequence(i32::MAX), 0);
    }

    #[test]
    fn overlap_handles_wrapping_ranges() {
        assert!(ranges_overlap((0, 4), (4, 9)));
        assert!(!ranges_overlap((0, 4), (5, 9)));
        assert!(ranges_overlap((i32::MAX - 1, 1), (0, 0)));
        assert!(!ranges_overlap((i32::MAX - 1, 1), (2, 5)));
    }
}
