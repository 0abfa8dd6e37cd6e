//! One compact record per transaction of a partition, as the replay's recovery view sees
//! it (as `ProducerStateManager` / `ProducerAppendInfo.appendEndTxnMarker` track it): transactional data of a producer opens a transaction
//! when none is open, any COMMIT/ABORT marker of that producer closes it (a marker with
//! nothing open is an *empty* transaction). Non-transactional data is not part of any
//! transaction. These records are the per-partition input of the cluster-wide join
//! (the `txns` module), so they are serde-serialisable and small (one partition may hold
//! millions of transactions).

use crate::partition::event::BatchEvent;
use serde::{Deserialize, Serialize};

/// How a partition's transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnEnd {
    /// No marker yet (open at the end of the log).
    Open,
    Commit,
    Abort,
}

impl TxnEnd {
    pub fn name(self) -> &'static str {
        match self {
            TxnEnd::Open => "open",
            TxnEnd::Commit => "commit",
            TxnEnd::Abort => "abort",
        }
    }
}

/// One transaction of one producer in one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnRecord {
    pub producer_id: i64,
    /// Epoch of the first data batch (of the marker, for an empty transaction).
    pub producer_epoch: i16,
    /// Epoch of the marker, -1 while open.
    pub marker_epoch: i16,
    /// Coordinator epoch of the marker, -1 while open.
    pub coordinator_epoch: i32,
    pub end: TxnEnd,
    /// Base offset of the first data batch (the marker's offset for an empty transaction).
    pub first_offset: i64,
    /// Last offset of the last data batch, -1 for an empty transaction.
    pub last_data_offset: i64,
    /// Offset of the marker, -1 while open.
    pub marker_offset: i64,
    /// First data batch's timestamp (first record's for CreateTime, the batch's for
    /// LogAppendTime), or the marker's for an empty transaction.
    pub first_timestamp: i64,
    /// The marker's timestamp, or the last data batch's maxTimestamp while open.
    pub last_timestamp: i64,
    /// Records in the data batches (markers not counted).
    pub records: u32,
    /// Data batches (0: an empty transaction, a marker alone).
    pub batches: u32,
    /// Bytes of the data batches on disk.
    pub bytes: u64,
}

impl TxnRecord {
    /// A marker with no transaction data before it.
    pub fn is_empty(&self) -> bool {
        self.batches == 0
    }
    /// Still open at the end of the log.
    pub fn is_open(&self) -> bool {
        self.end == TxnEnd::Open
    }
    /// marker timestamp − first timestamp, for a closed transaction with data.
    pub fn duration_ms(&self) -> Option<i64> {
        (!self.is_open() && !self.is_empty() && self.first_timestamp >= 0).then(|| {
            self.last_timestamp
                .saturating_sub(self.first_timestamp)
                .max(0)
        })
    }
}

/// The growing part of an open transaction's record. It lives in the producer's
/// open-transaction slot of the replay (`entry::OpenTxnState`), which already holds the
/// opening batch (first offset, epoch, first timestamp): one open transaction costs these
/// 40 bytes, not a second map entry of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenRecord {
    /// Base offset of its first data batch the log holds: the opening batch's, or, for a
    /// transaction begun below the log start (known from a producer snapshot), the first
    /// the replay meets (-1 until then).
    pub first_held: i64,
    pub last_data_offset: i64,
    pub last_timestamp: i64,
    pub records: u32,
    pub batches: u32,
    pub bytes: u64,
}

impl OpenRecord {
    /// The record of a transaction opened by `ev` (already counted).
    pub fn opened_by(ev: &BatchEvent) -> OpenRecord {
        let mut r = OpenRecord {
            first_held: ev.base_offset,
            last_data_offset: ev.last_offset,
            last_timestamp: ev.max_timestamp,
            records: 0,
            batches: 0,
            bytes: 0,
        };
        r.add(ev);
        r
    }

    /// The record of a transaction open below the log start, known from a producer
    /// snapshot only (`seed`): none of its batches is held.
    pub fn seeded(first_offset: i64, last_timestamp: i64) -> OpenRecord {
        OpenRecord {
            first_held: -1,
            last_data_offset: first_offset,
            last_timestamp,
            records: 0,
            batches: 0,
            bytes: 0,
        }
    }

    /// One more transactional data batch of the transaction.
    pub fn add(&mut self, ev: &BatchEvent) {
        let records = u32::try_from(ev.records_count.max(0)).unwrap_or(0);
        if self.first_held < 0 {
            self.first_held = ev.base_offset;
        }
        self.last_data_offset = ev.last_offset;
        self.last_timestamp = ev.max_timestamp;
        self.records = self.records.saturating_add(records);
        self.batches = self.batches.saturating_add(1);
        self.bytes = self.bytes.saturating_add(u64::from(ev.size));
    }

    /// The full record, still open, of the transaction of `producer_id` opened at
    /// `first_offset` at `producer_epoch` (`first_timestamp`: see [`TxnRecord`]).
    pub fn record(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        first_offset: i64,
        first_timestamp: i64,
    ) -> TxnRecord {
        TxnRecord {
            producer_id,
            producer_epoch,
            marker_epoch: -1,
            coordinator_epoch: -1,
            end: TxnEnd::Open,
            first_offset,
            last_data_offset: self.last_data_offset,
            marker_offset: -1,
            first_timestamp,
            last_timestamp: self.last_timestamp,
            records: self.records,
            batches: self.batches,
            bytes: self.bytes,
        }
    }
}

/// The closed [`TxnRecord`]s of a partition, in marker order. The replay keeps each open
/// one in its producer's entry ([`OpenRecord`]) and hands it over when a marker closes it.
#[derive(Debug, Default)]
pub struct TxnRecorder {
    done: Vec<TxnRecord>,
}

impl TxnRecorder {
    /// A COMMIT/ABORT marker `ev` of a producer (`producer_id ≥ 0`) closes `open`, the
    /// record of its open transaction, or — with none open — is an empty transaction.
    pub fn close(
        &mut self,
        open: Option<TxnRecord>,
        ev: &BatchEvent,
        commit: bool,
        coordinator_epoch: i32,
    ) {
        let ts = ev.marker_timestamp;
        let mut r = open.unwrap_or(TxnRecord {
            producer_id: ev.producer_id,
            producer_epoch: ev.producer_epoch,
            marker_epoch: -1,
            coordinator_epoch: -1,
            end: TxnEnd::Open,
            first_offset: ev.base_offset,
            last_data_offset: -1,
            marker_offset: -1,
            first_timestamp: ts,
            last_timestamp: ts,
            records: 0,
            batches: 0,
            bytes: 0,
        });
        r.end = if commit {
            TxnEnd::Commit
        } else {
            TxnEnd::Abort
        };
        r.marker_epoch = ev.producer_epoch;
        r.coordinator_epoch = coordinator_epoch;
        r.marker_offset = ev.base_offset;
        r.last_timestamp = ts;
        self.done.push(r);
    }

    /// The closed transactions so far, in marker order.
    pub fn closed(&self) -> &[TxnRecord] {
        &self.done
    }

    /// Every transaction: the closed ones in marker order, then `open` (the caller gives
    /// them by first offset, then producer id).
    pub fn finish(self, open: impl IntoIterator<Item = TxnRecord>) -> Vec<TxnRecord> {
        let mut out = self.done;
        out.extend(open);
        out
    }
}

/// A producer's first batch in a partition whose whole history the replay holds (the log
/// starts at offset 0, no producer snapshot seeded it, not compacted nor internal): a
/// transactional data batch whose baseSequence is above 0, which the leader accepted only
/// because it held no state for the producer (`ProducerAppendInfo.checkSequence` with an
/// empty `currentEntry`). A leader refuses it when the producer runs transactions v2
/// (KAFKA-18202), which only the coordinator's record says: the cluster stage decides
/// (`cluster::txns::first_sequence`). Rare (a producer's first batch in a partition starts
/// at 0 unless something went wrong), and at most `MAX_FIRST_TXN_BATCHES` are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirstTxnBatch {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    /// The batch, as findings show it.
    pub(crate) batch: crate::finding::evidence::BatchEvidence,
    /// The producer had earlier batches here, but idle past `producer.id.expiration.ms`
    /// before this one: the leader may have expired its state (the replay's reading), so
    /// its sequence rules did not judge the batch; a TV2 leader refuses it either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
}

/// The most [`FirstTxnBatch`]es one partition keeps (the later ones are not judged).
pub const MAX_FIRST_TXN_BATCHES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_stays_compact() {
        // Millions of these may be held: keep an eye on the size.
        assert!(std::mem::size_of::<TxnRecord>() <= 80);
        // Held per open transaction, inside the producer's open-transaction box (40 since
        // it keeps a seeded transaction's first held batch, `first_held`).
        assert!(std::mem::size_of::<OpenRecord>() <= 40);
    }
}
