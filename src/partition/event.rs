//! Views → events: the compact, owned summary of one batch that the producer-state replay
//! consumes. Built from the 61-byte header (plus the control record of a control batch),
//! so the replay never needs the batch bytes or decompression.

use crate::read::format::{self, BatchView, Compression, Control, LegacyMessage, TimestampType};

/// What the control record of a control batch said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlInfo {
    /// COMMIT or ABORT.
    Marker {
        commit: bool,
        coordinator_epoch: i32,
    },
    /// Another control type (KRaft LEADER_CHANGE, SNAPSHOT_*, KRAFT_*, unknown).
    Other(format::ControlType),
    /// A control batch with no records (left by the cleaner; Kafka skips it).
    Empty,
    /// The control record could not be decoded (`format::batch_control` on the batch gives
    /// the error; it is not stored here, to keep the event small: ~64 bytes of every
    /// event, for a case that happens once in a damaged log).
    Malformed,
    /// The control record could not be decoded because a field Kafka reads is null: its
    /// key, or a COMMIT/ABORT's value ([`format::NullField`]). Kafka's readers throw
    /// `NullPointerException` there, not the `InvalidRecordException` of
    /// [`ControlInfo::Malformed`].
    Null(format::NullField),
}

impl ControlInfo {
    /// The control record does not decode (malformed or a null field).
    pub fn undecodable(self) -> bool {
        matches!(self, ControlInfo::Malformed | ControlInfo::Null(_))
    }
}

/// One batch (v2) or one legacy entry, as the replay sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchEvent {
    /// Index of the segment in the partition's segment list.
    pub segment: u32,
    /// Byte position in the segment file.
    pub position: u64,
    /// Size on disk.
    pub size: u32,
    pub magic: i8,
    /// First offset (v2 baseOffset; for legacy entries, the entry offset).
    pub base_offset: i64,
    pub last_offset: i64,
    pub records_count: i32,
    pub partition_leader_epoch: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub last_sequence: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub control: Option<ControlInfo>,
    pub compression: Compression,
    pub timestamp_type: TimestampType,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    /// The batch went through the cleaner (delete-horizon bit).
    pub delete_horizon: bool,
    /// Stored CRC matches.
    pub crc_valid: bool,
    /// For control markers: the record's timestamp (what Kafka stores as lastTimestamp).
    pub marker_timestamp: i64,
}

impl BatchEvent {
    /// Whether a broker's clock set the batch's timestamp, not a client's: a COMMIT/ABORT
    /// marker (the partition leader writes it, `MemoryRecords.withEndTransactionMarker` at
    /// its own time) or a LogAppendTime batch (`LogValidator` stamps it on append).
    pub fn broker_stamped(&self) -> bool {
        self.is_control || self.timestamp_type == TimestampType::LogAppendTime
    }

    /// Summarise a v2 batch. `check_crc = false` skips the CRC (reported as valid).
    pub fn from_v2(b: &BatchView<'_>, segment: u32, check_crc: bool) -> BatchEvent {
        let control = b.is_control().then(|| {
            // A compressed marker (rare: only the append path refuses one) is read as
            // recovery reads it, decompressed; a control record is a few bytes, so the
            // output is capped at 4 KiB (a bomb costs no more than that per batch). An
            // uncompressed one is read in place (the decompressor allocates nothing unused).
            match format::batch_control_with(b, &mut format::Decompressor::new(4096)) {
                Ok(None) => ControlInfo::Empty,
                Ok(Some(Control::EndTxn { commit, marker })) => ControlInfo::Marker {
                    commit,
                    coordinator_epoch: marker.coordinator_epoch,
                },
                Ok(Some(Control::Other { kind, .. })) => ControlInfo::Other(kind),
                Err(e) => {
                    format::NullField::of(&e).map_or(ControlInfo::Malformed, ControlInfo::Null)
                }
            }
        });
        let marker_timestamp = if b.is_control() {
            control_record_timestamp(b)
        } else {
            b.max_timestamp()
        };
        BatchEvent {
            segment,
            position: b.position(),
            size: b.size() as u32,
            magic: b.magic(),
            base_offset: b.base_offset(),
            last_offset: b.last_offset(),
            records_count: b.records_count(),
            partition_leader_epoch: b.partition_leader_epoch(),
            producer_id: b.producer_id(),
            producer_epoch: b.producer_epoch(),
            base_sequence: b.base_sequence(),
            last_sequence: b.last_sequence(),
            is_transactional: b.is_transactional(),
            is_control: b.is_control(),
            control,
            compression: b.compression(),
            timestamp_type: b.timestamp_type(),
            base_timestamp: b.base_timestamp(),
            max_timestamp: b.max_timestamp(),
            delete_horizon: b.has_delete_horizon(),
            crc_valid: !check_crc || b.is_valid(),
            marker_timestamp,
        }
    }

    /// Summarise a legacy (magic 0/1) entry: no producer fields. For a compressed wrapper
    /// the first offset is not known without decompressing; `base_offset` is then the
    /// wrapper (last) offset.
    pub fn from_legacy(m: &LegacyMessage<'_>, segment: u32, check_crc: bool) -> BatchEvent {
        BatchEvent {
            segment,
            position: m.position(),
            size: m.size() as u32,
            magic: m.magic() as i8,
            base_offset: m.offset(),
            last_offset: m.offset(),
            records_count: 1,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            is_transactional: false,
            is_control: false,
            control: None,
            compression: m.compression(),
            timestamp_type: m.timestamp_type(),
            base_timestamp: m.timestamp(),
            max_timestamp: m.timestamp(),
            delete_horizon: false,
            crc_valid: !check_crc || m.is_valid(),
            marker_timestamp: m.timestamp(),
        }
    }

    /// A legacy (v0/v1) entry whose CRC holds but whose body does not parse (its key or
    /// value lengths run past the entry, or it ends too early): `LogSegment.recover` checks
    /// only a legacy entry's size and CRC (`LegacyRecord.ensureValid`), so to the broker it is
    /// a valid batch of last offset `offset` (`AbstractLegacyRecordBatch.lastOffset`) that
    /// counts towards the index interval, the offset range and the next offset. Nothing of it
    /// can be replayed: it carries no record (`records_count` 0, which a parsed legacy entry
    /// never has) and is seen only by the recovery check ([`BatchEvent::is_recovery_only`]).
    pub(crate) fn recovery_only(
        segment: u32,
        position: u64,
        size: u32,
        magic: i8,
        offset: i64,
    ) -> BatchEvent {
        BatchEvent {
            segment,
            position,
            size,
            magic,
            base_offset: offset,
            last_offset: offset,
            records_count: 0,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            is_transactional: false,
            is_control: false,
            control: None,
            compression: Compression::None,
            timestamp_type: TimestampType::NoTimestampType,
            base_timestamp: -1,
            max_timestamp: -1,
            delete_horizon: false,
            crc_valid: true,
            marker_timestamp: -1,
        }
    }

    /// An event made by [`BatchEvent::recovery_only`]: for the recovery model only, never
    /// for the producer-state replay or the batch counts.
    pub(crate) fn is_recovery_only(&self) -> bool {
        self.magic < 2 && self.records_count == 0
    }

    /// The commit/abort marker, if this is one.
    pub fn marker(&self) -> Option<(bool, i32)> {
        match self.control {
            Some(ControlInfo::Marker {
                commit,
                coordinator_epoch,
            }) => Some((commit, coordinator_epoch)),
            _ => None,
        }
    }

    /// A batch that carries a producer id (`producerId ≥ 0`).
    pub fn has_producer_id(&self) -> bool {
        self.producer_id >= 0
    }
}

/// The timestamp of a control batch's record (`baseTimestamp + delta`, or maxTimestamp
/// under LogAppendTime). Falls back to maxTimestamp when the record cannot be read.
fn control_record_timestamp(b: &BatchView<'_>) -> i64 {
    if b.timestamp_type() == TimestampType::LogAppendTime || b.records_count() < 1 {
        return b.max_timestamp();
    }
    let mut recs = format::Records::new(b.records_bytes(), 1, 0);
    match recs.next() {
        Some(Ok(r)) => b.base_timestamp().wrapping_add(r.timestamp_delta),
        _ => b.max_timestamp(),
    }
}

/// Re-exported from the format layer, where entry classification lives.
pub use crate::read::format::{Classified, classify};

#[cfg(test)]
mod tests {
    /// One event is kept per batch of every window in flight: keep it compact (it was
    /// 168 bytes while `ControlInfo::Malformed` held a `FormatError`).
    #[test]
    fn batch_event_stays_compact() {
        assert!(std::mem::size_of::<super::BatchEvent>() <= 104);
        assert!(std::mem::size_of::<super::ControlInfo>() <= 8);
    }
}
