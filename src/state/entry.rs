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
    /// The transaction's per-partition record while open (`txnrec`): kept here, in the
    /// producer's open-transaction slot, rather than in a second map of open transactions.
    pub rec: super::txnrec::OpenRecord,
}

/// State of one producer id, compact: what every producer has inline (≈ 112 bytes), what
/// only some have (older cached batches, a marker, an open transaction) boxed. The last
/// event, last timestamp and last batch are derived from the last data batch or marker
/// rather than stored again.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub pid: i64,
    pub epoch: i16,
    /// -1 until a marker is seen.
    pub coordinator_epoch: i32,
    /// The last data batch of this producer (meaningful once `has_data`); while the cache
    /// is not empty it is also its newest batch.
    data: BatchRef,
    /// The cache's older batches (oldest first; `cache_len - 1` of them).
    older: Option<Box<[SeqBatch; NUM_BATCHES_TO_RETAIN - 1]>>,
    /// The last marker of this producer.
    marker: Option<Box<BatchRef>>,
    /// The open transaction.
    pub txn: Option<Box<OpenTxnState>>,
    /// Number of batches cached at the current epoch (≤ 5).
    cache_len: u8,
    has_data: bool,
    /// The last batch was a marker (else data).
    last_is_marker: bool,
    /// False while the sequence of the current epoch is unknown (history starts with a
    /// marker of this producer): any sequence is then accepted.
    pub seq_known: bool,
    /// Latest transaction-version evidence: `Some(true)` TV2, `Some(false)` TV0/1.
    pub tv2: Option<bool>,
    /// The last marker bumped the epoch above the transaction it closed (TV2 pattern or a
    /// fence), recorded to recognise TV2 when the next data starts at the marker's epoch.
    pub marker_bumped: bool,
    /// A TV2 producer's last marker did not bump the epoch (`marker_epoch_not_bumped`): the
    /// TV2 verdict was kept once; a second such marker in a row downgrades it to TV0/1.
    pub tv2_not_bumped: bool,
}

impl SeqBatch {
    fn of(r: &BatchRef) -> SeqBatch {
        SeqBatch {
            base_sequence: r.base_sequence,
            last_sequence: r.last_sequence,
            base_offset: r.base_offset,
            last_offset: r.last_offset,
            position: r.position,
            segment: r.segment,
        }
    }
}

impl Entry {
    /// A producer first seen at `first` (nothing recorded yet: apply it with
    /// [`Entry::record_data`] or [`Entry::record_marker`]).
    pub(crate) fn new(first: &BatchEvent) -> Entry {
        Entry {
            pid: first.producer_id,
            epoch: first.producer_epoch,
            coordinator_epoch: -1,
            data: BatchRef::of(first),
            older: None,
            marker: None,
            txn: None,
            cache_len: 0,
            has_data: false,
            last_is_marker: false,
            seq_known: false,
            tv2: None,
            marker_bumped: false,
            tv2_not_bumped: false,
        }
    }

    /// The last batch of this producer (data or marker).
    pub(crate) fn last_ref(&self) -> BatchRef {
        match (&self.marker, self.last_is_marker) {
            (Some(m), true) => **m,
            _ => self.data,
        }
    }

    pub(crate) fn last_marker(&self) -> Option<BatchRef> {
        self.marker.as_deref().copied()
    }

    /// maxTimestamp of the last data batch, or the last marker's timestamp.
    pub(crate) fn last_timestamp(&self) -> i64 {
        self.last_ref().timestamp
    }

    /// The last thing the producer did (`None` before anything was recorded).
    pub(crate) fn last_event(&self) -> Option<super::LastEvent> {
        if !self.has_data && self.marker.is_none() {
            return None;
        }
        let r = self.last_ref();
        Some(match r.kind {
            RefKind::Commit | RefKind::Abort => super::LastEvent::Marker {
                offset: r.base_offset,
                epoch: r.epoch,
                commit: r.kind == RefKind::Commit,
            },
            _ => super::LastEvent::Data {
                offset: r.base_offset,
                epoch: r.epoch,
                transactional: r.kind == RefKind::TxnData,
            },
        })
    }

    /// The cached batches, newest first.
    pub(crate) fn cached_newest_first(&self) -> impl Iterator<Item = SeqBatch> + '_ {
        let older = self.older.as_deref().map_or(&[][..], |o| {
            &o[..(self.cache_len as usize).saturating_sub(1)]
        });
        self.last_cached()
            .into_iter()
            .chain(older.iter().rev().copied())
    }

    pub(crate) fn last_cached(&self) -> Option<SeqBatch> {
        (self.cache_len > 0).then(|| SeqBatch::of(&self.data))
    }

    /// Last sequence of the current epoch, -1 if none.
    pub(crate) fn last_sequence(&self) -> i32 {
        self.last_cached().map_or(-1, |b| b.last_sequence)
    }

    pub(crate) fn clear_cache(&mut self) {
        self.cache_len = 0;
        self.older = None;
    }

    /// Record data batch `cur` as the last data batch and the newest cached one.
    pub(crate) fn record_data(&mut self, cur: BatchRef) {
        if self.cache_len > 0 {
            let prev = SeqBatch::of(&self.data);
            let older = self
                .older
                .get_or_insert_with(|| Box::new([SeqBatch::default(); NUM_BATCHES_TO_RETAIN - 1]));
            let n = self.cache_len as usize - 1;
            if n == NUM_BATCHES_TO_RETAIN - 1 {
                older.copy_within(1.., 0);
                older[n - 1] = prev;
            } else {
                older[n] = prev;
                self.cache_len += 1;
            }
        } else {
            self.cache_len = 1;
        }
        self.data = cur;
        self.has_data = true;
        self.last_is_marker = false;
    }

    /// Record marker `cur` as the last batch and the last marker.
    pub(crate) fn record_marker(&mut self, cur: BatchRef) {
        match &mut self.marker {
            Some(m) => **m = cur,
            None => self.marker = Some(Box::new(cur)),
        }
        self.last_is_marker = true;
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

    /// One entry per producer id lives in the replay's table (plus ≈ 5–17 bytes of index):
    /// keep it within the ~128 bytes per id of issue #11 (it was 520 bytes).
    #[test]
    fn entry_stays_compact() {
        let size = std::mem::size_of::<Entry>();
        eprintln!("Entry: {size} bytes");
        assert!(size <= 112, "Entry is {size} bytes");
    }

    fn data_event(offset: i64, seq: i32) -> BatchEvent {
        BatchEvent {
            segment: 1,
            position: offset as u64 * 10,
            size: 10,
            magic: 2,
            base_offset: offset,
            last_offset: offset + 1,
            records_count: 2,
            partition_leader_epoch: 0,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: seq,
            last_sequence: seq + 1,
            is_transactional: false,
            is_control: false,
            control: None,
            compression: crate::format::Compression::None,
            timestamp_type: crate::format::TimestampType::CreateTime,
            base_timestamp: offset,
            max_timestamp: offset,
            delete_horizon: false,
            crc_valid: true,
            marker_timestamp: offset,
        }
    }

    #[test]
    fn cache_keeps_the_last_five_batches_newest_first() {
        let mut e = Entry::new(&data_event(0, 0));
        assert_eq!(e.last_event(), None);
        assert_eq!(e.cached_newest_first().count(), 0);
        for i in 0..8 {
            e.record_data(BatchRef::of(&data_event(i * 2, i as i32 * 2)));
            let seqs: Vec<i32> = e.cached_newest_first().map(|b| b.base_sequence).collect();
            let want: Vec<i32> = (0..=i as i32).rev().take(5).map(|k| k * 2).collect();
            assert_eq!(seqs, want);
        }
        assert_eq!(e.last_sequence(), 15);
        assert_eq!(e.last_timestamp(), 14);
        e.clear_cache();
        assert_eq!(e.last_sequence(), -1);
        assert_eq!(e.cached_newest_first().count(), 0);
        // The last data batch survives the cleared cache; a marker then becomes the last.
        assert_eq!(e.last_ref().base_offset, 14);
        let mut m = data_event(20, -1);
        m.is_control = true;
        m.control = Some(crate::event::ControlInfo::Marker {
            commit: true,
            coordinator_epoch: 3,
        });
        e.record_marker(BatchRef::of(&m));
        assert_eq!(e.last_ref().base_offset, 20);
        assert_eq!(e.last_marker().map(|r| r.kind), Some(RefKind::Commit));
        assert!(matches!(
            e.last_event(),
            Some(crate::state::LastEvent::Marker {
                offset: 20,
                commit: true,
                ..
            })
        ));
        e.record_data(BatchRef::of(&data_event(30, 0)));
        assert!(matches!(
            e.last_event(),
            Some(crate::state::LastEvent::Data { offset: 30, .. })
        ));
        assert_eq!(e.last_marker().map(|r| r.base_offset), Some(20));
    }

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
