//! Per-producer bookkeeping of the replay: the recovery view's state (what a broker's
//! `ProducerStateEntry` holds) plus the little extra the audit view needs.

use crate::partition::event::BatchEvent;

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

/// A data batch of a producer as its [`Entry`] (or open transaction) keeps it: a
/// [`BatchRef`] without what the holder already knows (producer id, epoch, kind; a data
/// batch has no coordinator epoch). 48 bytes instead of 64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DataRef {
    pub base_offset: i64,
    pub last_offset: i64,
    pub position: u64,
    /// maxTimestamp.
    pub timestamp: i64,
    pub segment: u32,
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub leader_epoch: i32,
}

impl DataRef {
    pub(crate) fn of(r: &BatchRef) -> DataRef {
        DataRef {
            base_offset: r.base_offset,
            last_offset: r.last_offset,
            position: r.position,
            timestamp: r.timestamp,
            segment: r.segment,
            base_sequence: r.base_sequence,
            last_sequence: r.last_sequence,
            leader_epoch: r.leader_epoch,
        }
    }

    /// The full reference of this data batch of producer `pid`.
    fn full(&self, pid: i64, epoch: i16, transactional: bool) -> BatchRef {
        BatchRef {
            base_offset: self.base_offset,
            last_offset: self.last_offset,
            position: self.position,
            segment: self.segment,
            producer_id: pid,
            epoch,
            base_sequence: self.base_sequence,
            last_sequence: self.last_sequence,
            leader_epoch: self.leader_epoch,
            kind: if transactional {
                RefKind::TxnData
            } else {
                RefKind::Data
            },
            timestamp: self.timestamp,
            coordinator_epoch: -1,
        }
    }
}

/// A COMMIT/ABORT marker as an [`Entry`] keeps it ([`Markers`]): a [`BatchRef`] without
/// the producer id and the sequences (48 bytes instead of a boxed 64-byte `BatchRef`, an
/// 80-byte heap chunk). A marker's sequences are never reported (`Replay::batch_json`
/// prints the coordinator epoch instead) nor checked: given back as -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MarkerRef {
    pub base_offset: i64,
    pub last_offset: i64,
    pub position: u64,
    /// The marker record's timestamp.
    pub timestamp: i64,
    pub segment: u32,
    pub leader_epoch: i32,
    pub coordinator_epoch: i32,
    pub epoch: i16,
    pub commit: bool,
}

impl MarkerRef {
    fn of(r: &BatchRef) -> MarkerRef {
        MarkerRef {
            base_offset: r.base_offset,
            last_offset: r.last_offset,
            position: r.position,
            timestamp: r.timestamp,
            segment: r.segment,
            leader_epoch: r.leader_epoch,
            coordinator_epoch: r.coordinator_epoch,
            epoch: r.epoch,
            commit: r.kind == RefKind::Commit,
        }
    }

    fn full(&self, pid: i64) -> BatchRef {
        BatchRef {
            base_offset: self.base_offset,
            last_offset: self.last_offset,
            position: self.position,
            segment: self.segment,
            producer_id: pid,
            epoch: self.epoch,
            base_sequence: -1,
            last_sequence: -1,
            leader_epoch: self.leader_epoch,
            kind: if self.commit {
                RefKind::Commit
            } else {
                RefKind::Abort
            },
            timestamp: self.timestamp,
            coordinator_epoch: self.coordinator_epoch,
        }
    }
}

/// The transaction a producer has open. Held in the replay's slab of open transactions
/// (`opentxns::OpenTxns`, its producer's [`Entry`] holds the slot), 104 bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenTxnState {
    /// The producer (-1 in a free slot of the slab).
    pub pid: i64,
    /// The transactional data batch that opened it (at `epoch`).
    pub first_batch: DataRef,
    /// Timestamp of the first batch (for durations).
    pub first_timestamp: i64,
    /// The transaction's per-partition record while open (`txnrec`): kept here, in the
    /// producer's open-transaction slot, rather than in a second map of open transactions.
    pub rec: super::txnrec::OpenRecord,
    /// Epoch of the data that opened it (rule 25, TV inference).
    pub epoch: i16,
    /// Opened by a zombie write (rule 13).
    pub zombie: bool,
    /// Opened by data at the same epoch as the marker just before it, continuing the old
    /// sequence (rule 24, KAFKA-12671 pattern).
    pub late_after_marker: bool,
    /// A non-transactional write of its producer inside it was reported: where Kafka
    /// throws (`ProducerAppendInfo.appendDataBatch`), at the first one, nothing later of
    /// the producer reaches a state check, so later ones are not findings of their own.
    pub non_txn_reported: bool,
    /// The newest broker-stamped timestamp (`Replay`'s `broker_clock`) when the
    /// transaction's last batch was appended: no earlier than it, on the leaders' clocks
    /// (`i64::MIN`: the log proves nothing). Held whole: records stamped months back (a
    /// backfill) must still take it.
    pub clock_floor: i64,
}

impl OpenTxnState {
    /// The batch that opened the transaction.
    pub(crate) fn first(&self) -> BatchRef {
        self.first_batch.full(self.pid, self.epoch, true)
    }

    /// The earliest time, on the broker's clock, its last batch can have been appended,
    /// when the log proves one (`clock_floor`).
    pub(crate) fn clock_floor(&self) -> Option<i64> {
        (self.clock_floor != i64::MIN).then_some(self.clock_floor)
    }

    /// Record that a batch of the transaction was appended after the broker's clock read
    /// `clock` (`Replay`'s newest broker-stamped timestamp).
    pub(crate) fn appended_after(&mut self, clock: i64) {
        self.clock_floor = self.clock_floor.max(clock);
    }
}

/// No open transaction (`Entry::txn`), no marker (`Entry::marker`).
const NONE: u32 = u32::MAX;

/// The producers' last markers, one slot per producer that wrote one (its [`Entry`]
/// holds the slot; a later marker of the producer overwrites it). One vector rather than
/// a box per producer: 300 000 producers' markers are 14 MB in one block, instead of
/// 24 MB of 80-byte heap chunks scattered over the heap (and over the malloc arenas of
/// the threads the replay ran on).
#[derive(Debug, Default)]
pub(crate) struct Markers {
    slots: Vec<MarkerRef>,
}

impl Markers {
    fn get(&self, slot: u32) -> Option<&MarkerRef> {
        self.slots.get(slot as usize)
    }

    /// A new slot holding `m`, [`NONE`] when there are `u32::MAX` already (more markers
    /// than a partition's producer table holds producers).
    fn push(&mut self, m: MarkerRef) -> u32 {
        match u32::try_from(self.slots.len()) {
            Ok(i) if i != NONE => {
                self.slots.push(m);
                i
            }
            _ => NONE,
        }
    }
}

/// State of one producer id, compact (88 bytes; what every producer has inline, what only
/// some have out of line: older cached batches boxed, the last marker in the replay's
/// [`Markers`], the open transaction in its `OpenTxns`). The last event, last timestamp and last batch are
/// derived from the last data batch or marker rather than stored again; the coordinator
/// epoch is the last marker's.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub pid: i64,
    /// The last data batch of this producer (meaningful once `has_data`); while the cache
    /// is not empty it is also its newest batch.
    data: DataRef,
    /// The cache's older batches (`cache_len - 1` of them).
    older: Option<Box<Older>>,
    /// Slot of the last marker of this producer in the replay's [`Markers`], [`NONE`]
    /// when none.
    marker: u32,
    /// Slot of the open transaction in the replay's `OpenTxns`, [`NONE`] when none.
    txn: u32,
    pub epoch: i16,
    /// Epoch of `data`.
    data_epoch: i16,
    /// Number of batches cached at the current epoch (≤ 5).
    cache_len: u8,
    has_data: bool,
    /// `data` is transactional.
    data_txn: bool,
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

/// The cache's batches older than the newest: a ring, so that a sixth batch replaces the
/// oldest without moving the other four. Its slots grow one batch at a time up to four: a
/// producer seen twice holds one older batch, not room for four (1M producer ids with two
/// batches each held 176 bytes of ring each, 80 now).
#[derive(Debug, Clone)]
struct Older {
    /// The batches; `LEN` once full, then written in place.
    ring: Vec<SeqBatch>,
    /// Slot of the oldest batch (once the ring is full; 0 until then).
    head: u8,
    /// The highest last sequence of any batch put in the ring since the cache was cleared,
    /// `i32::MAX` once one of them wrapped. It is not lowered when a batch leaves the ring,
    /// so it may only be too high: the duplicate search then runs in full.
    max_last: i32,
}

impl Older {
    const LEN: usize = NUM_BATCHES_TO_RETAIN - 1;

    fn new() -> Box<Older> {
        Box::new(Older {
            ring: Vec::new(),
            head: 0,
            max_last: i32::MIN,
        })
    }

    /// Put `b` in the ring holding `n` batches (evicting the oldest when full).
    fn push(&mut self, n: usize, b: SeqBatch) {
        const LEN: usize = Older::LEN;
        if n == LEN {
            if let Some(slot) = self.ring.get_mut(self.head as usize) {
                *slot = b;
            }
            self.head = ((self.head as usize + 1) % LEN) as u8;
        } else {
            // Not full: the head is slot 0 and the batches fill slots 0..n.
            let at = (self.head as usize + n) % LEN;
            match self.ring.get_mut(at) {
                Some(slot) => *slot = b,
                None => {
                    self.ring.reserve_exact(1);
                    self.ring.push(b);
                }
            }
        }
        let last = if b.last_sequence < b.base_sequence {
            i32::MAX
        } else {
            b.last_sequence
        };
        self.max_last = self.max_last.max(last);
    }

    /// The `n` batches in the ring, newest first.
    fn newest_first(&self, n: usize) -> impl Iterator<Item = SeqBatch> + '_ {
        const LEN: usize = Older::LEN;
        (0..n.min(LEN))
            .rev()
            .filter_map(move |k| self.ring.get((self.head as usize + k) % LEN).copied())
    }
}

impl SeqBatch {
    fn of(r: &DataRef) -> SeqBatch {
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
        let mut e = Entry::vacant(first.producer_id);
        e.epoch = first.producer_epoch;
        e
    }

    /// An entry of producer `pid` holding nothing (also the placeholder left in the table
    /// while an entry is taken out to be updated).
    /// A producer known only from a snapshot entry (`seed`): its epoch and last
    /// timestamp, no batch cached (its sequence is unknown).
    pub(crate) fn seeded(pid: i64, epoch: i16, last_timestamp: i64) -> Entry {
        let mut e = Entry::vacant(pid);
        e.epoch = epoch;
        e.data_epoch = epoch;
        e.data.timestamp = last_timestamp;
        e
    }

    pub(crate) fn vacant(pid: i64) -> Entry {
        Entry {
            pid,
            data: DataRef::default(),
            older: None,
            marker: NONE,
            txn: NONE,
            epoch: 0,
            data_epoch: 0,
            cache_len: 0,
            has_data: false,
            data_txn: false,
            last_is_marker: false,
            seq_known: false,
            tv2: None,
            marker_bumped: false,
            tv2_not_bumped: false,
        }
    }

    fn marker<'m>(&self, markers: &'m Markers) -> Option<&'m MarkerRef> {
        if self.marker == NONE {
            None
        } else {
            markers.get(self.marker)
        }
    }

    /// The last marker, when it is also the last batch.
    fn marker_last<'m>(&self, markers: &'m Markers) -> Option<&'m MarkerRef> {
        if self.last_is_marker {
            self.marker(markers)
        } else {
            None
        }
    }

    /// Coordinator epoch of the last marker, -1 if none.
    pub(crate) fn coordinator_epoch(&self, markers: &Markers) -> i32 {
        self.marker(markers).map_or(-1, |m| m.coordinator_epoch)
    }

    /// Copy the last marker from `from` to a slot of `to` (a replay keeping only some
    /// producers moves their markers to a smaller [`Markers`]).
    pub(crate) fn move_marker(&mut self, from: &Markers, to: &mut Markers) {
        self.marker = match self.marker(from) {
            Some(&m) => to.push(m),
            None => NONE,
        };
    }

    /// Slot of the open transaction in the replay's `OpenTxns`.
    pub(crate) fn txn(&self) -> Option<u32> {
        (self.txn != NONE).then_some(self.txn)
    }

    pub(crate) fn has_txn(&self) -> bool {
        self.txn != NONE
    }

    pub(crate) fn set_txn(&mut self, slot: u32) {
        self.txn = slot;
    }

    pub(crate) fn take_txn(&mut self) -> Option<u32> {
        let t = self.txn();
        self.txn = NONE;
        t
    }

    /// The last batch of this producer (data or marker).
    pub(crate) fn last_ref(&self, markers: &Markers) -> BatchRef {
        match self.marker_last(markers) {
            Some(m) => m.full(self.pid),
            None => self.data.full(self.pid, self.data_epoch, self.data_txn),
        }
    }

    pub(crate) fn last_marker(&self, markers: &Markers) -> Option<BatchRef> {
        self.marker(markers).map(|m| m.full(self.pid))
    }

    /// maxTimestamp of the last data batch, or the last marker's timestamp.
    pub(crate) fn last_timestamp(&self, markers: &Markers) -> i64 {
        match self.marker_last(markers) {
            Some(m) => m.timestamp,
            None => self.data.timestamp,
        }
    }

    /// The last thing the producer did (`None` before anything was recorded).
    pub(crate) fn last_event(&self, markers: &Markers) -> Option<super::LastEvent> {
        match self.marker_last(markers) {
            Some(m) => Some(super::LastEvent::Marker {
                offset: m.base_offset,
                epoch: m.epoch,
                commit: m.commit,
            }),
            _ if self.has_data => Some(super::LastEvent::Data {
                offset: self.data.base_offset,
                epoch: self.data_epoch,
                transactional: self.data_txn,
            }),
            _ => None,
        }
    }

    /// The cached batches, newest first.
    pub(crate) fn cached_newest_first(&self) -> impl Iterator<Item = SeqBatch> + '_ {
        let n = (self.cache_len as usize).saturating_sub(1);
        self.last_cached()
            .into_iter()
            .chain(self.older.iter().flat_map(move |o| o.newest_first(n)))
    }

    /// True when no cached batch can duplicate or overlap the sequences `base..=last`
    /// (neither wrapping): every cached range, none wrapping, ends below `base`. This is
    /// the healthy producer's next batch, for which the duplicate search of
    /// [`Entry::cached_newest_first`] would find nothing; false says only that the search
    /// must run.
    pub(crate) fn cache_ends_below(&self, base: i32, last: i32) -> bool {
        if self.cache_len == 0 {
            return true;
        }
        let newest = (self.data.base_sequence, self.data.last_sequence);
        base <= last
            && newest.0 <= newest.1
            && newest.1 < base
            && (self.cache_len == 1 || self.older.as_ref().is_none_or(|o| o.max_last < base))
    }

    pub(crate) fn last_cached(&self) -> Option<SeqBatch> {
        (self.cache_len > 0).then(|| SeqBatch::of(&self.data))
    }

    /// Last sequence of the current epoch, -1 if none.
    /// Whether a data batch of this producer was seen.
    pub(crate) fn has_data(&self) -> bool {
        self.has_data
    }

    pub(crate) fn last_sequence(&self) -> i32 {
        if self.cache_len > 0 {
            self.data.last_sequence
        } else {
            -1
        }
    }

    pub(crate) fn clear_cache(&mut self) {
        self.cache_len = 0;
        self.older = None;
    }

    /// Record data batch `cur` as the last data batch and the newest cached one.
    pub(crate) fn record_data(&mut self, cur: BatchRef) {
        if self.cache_len > 0 {
            let prev = SeqBatch::of(&self.data);
            let n = self.cache_len as usize - 1;
            self.older.get_or_insert_with(Older::new).push(n, prev);
            if n < NUM_BATCHES_TO_RETAIN - 1 {
                self.cache_len += 1;
            }
        } else {
            self.cache_len = 1;
        }
        self.data = DataRef::of(&cur);
        self.data_epoch = cur.epoch;
        self.data_txn = cur.kind == RefKind::TxnData;
        self.has_data = true;
        self.last_is_marker = false;
    }

    /// Record marker `cur` (a COMMIT or ABORT) as the last batch and the last marker.
    pub(crate) fn record_marker(&mut self, cur: BatchRef, markers: &mut Markers) {
        let m = MarkerRef::of(&cur);
        match markers.slots.get_mut(self.marker as usize) {
            Some(slot) if self.marker != NONE => *slot = m,
            _ => self.marker = markers.push(m),
        }
        // Without a slot (u32::MAX markers) the marker is not kept: nothing is the last
        // marker then, and the last batch stays the last data batch.
        self.last_is_marker = self.marker != NONE;
    }
}

/// The sequence that must follow `s` (wraps from `i32::MAX` to 0; -1 → 0).
pub(crate) fn next_sequence(s: i32) -> i32 {
    if s == i32::MAX { 0 } else { s.max(-1) + 1 }
}

/// Do two sequence ranges share a sequence? Ranges that wrap past `i32::MAX` are split.
pub(crate) fn ranges_overlap(a: (i32, i32), b: (i32, i32)) -> bool {
    // Neither wraps (every batch of a healthy producer): one comparison instead of the
    // four part pairs below (the duplicate search runs it against up to 5 cached batches
    // per batch).
    if a.1 >= a.0 && b.1 >= b.0 {
        return a.0 <= b.1 && b.0 <= a.1;
    }
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
mod tests;
