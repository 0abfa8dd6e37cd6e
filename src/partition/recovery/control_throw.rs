//! A control batch whose record the broker's producer-state update throws at
//! ([`ControlThrow`]), found by the walk of a segment `LogSegment.recover` keeps.

use serde::{Deserialize, Serialize};

/// A control batch with a producer id that `ProducerAppendInfo.append` cannot take
/// (`EndTransactionMarker.deserialize`): a record that does not decode throws
/// `InvalidRecordException` — `LogSegment.recover` has counted the batch as valid
/// already, so it catches it and truncates right after the batch —, a type other than
/// COMMIT/ABORT `IllegalArgumentException` (`ensureTransactionMarkerControlType`), and a
/// null key (`ControlRecordType.parseTypeId`) or COMMIT/ABORT value
/// (`EndTransactionMarker.deserializeValue`) `NullPointerException`: both read the
/// buffer's size without a null check. Neither of the last two is caught by the recovery
/// or the load. A rebuild's replay (`loadProducersFromRecords`) catches none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ControlThrow {
    /// Byte position and offsets of the batch.
    pub position: u64,
    pub offset: i64,
    pub last_offset: i64,
    /// `Some(type id)`: not COMMIT/ABORT (`IllegalArgumentException`); `None`: a
    /// COMMIT/ABORT record that does not decode (`InvalidRecordException`), or a record
    /// with a null field (`null`).
    pub not_end_txn: Option<i16>,
    /// The record's null field (`NullPointerException`); absent from bundles of an
    /// earlier klogscan, which took it for a record that does not decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<NullField>,
}

/// A null field of a control record ([`crate::read::format::NullField`]), as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NullField {
    /// The key (`ControlRecordType.parseTypeId`).
    Key,
    /// A COMMIT/ABORT record's value (`EndTransactionMarker.deserializeValue`).
    Value,
}

impl ControlThrow {
    /// What the replay throws at it.
    pub fn exception(&self) -> &'static str {
        if self.null.is_some() {
            "NullPointerException"
        } else if self.not_end_txn.is_some() {
            "IllegalArgumentException"
        } else {
            "InvalidRecordException"
        }
    }

    /// Whether `LogSegment.recover` catches the throw (`InvalidRecordException`, keeping
    /// the batch and truncating after it); it catches neither of the others.
    pub fn caught_by_recovery(&self) -> bool {
        self.null.is_none() && self.not_end_txn.is_none()
    }

    /// The batch's control record, in words.
    pub fn what(&self) -> String {
        match self.null {
            Some(NullField::Key) => {
                return "the control record's key is null (ControlRecordType.parseTypeId reads its size)".to_string();
            }
            Some(NullField::Value) => {
                return "the COMMIT/ABORT record's value is null (EndTransactionMarker.deserializeValue reads its size)".to_string();
            }
            None => {}
        }
        match self.not_end_txn {
            Some(t) => format!(
                "the control record's type {t} ({:?}) is not COMMIT or ABORT (EndTransactionMarker.ensureTransactionMarkerControlType)",
                crate::read::format::ControlType::from_id(t)
            ),
            None => "the COMMIT/ABORT record does not decode (EndTransactionMarker.deserialize)"
                .to_string(),
        }
    }

    /// The throw at `ev`, a batch `LogSegment.recover` keeps, if its record throws.
    pub(super) fn of(ev: &crate::partition::event::BatchEvent) -> Option<ControlThrow> {
        use crate::partition::event::ControlInfo;
        if ev.magic < 2 || !ev.has_producer_id() || !ev.crc_valid {
            return None;
        }
        let (not_end_txn, null) = match ev.control? {
            ControlInfo::Malformed => (None, None),
            ControlInfo::Null(crate::read::format::NullField::Key) => (None, Some(NullField::Key)),
            ControlInfo::Null(crate::read::format::NullField::Value) => {
                (None, Some(NullField::Value))
            }
            ControlInfo::Other(kind) => (Some(kind.id()), None),
            ControlInfo::Marker { .. } | ControlInfo::Empty => return None,
        };
        Some(ControlThrow {
            position: ev.position,
            offset: ev.base_offset,
            last_offset: ev.last_offset,
            not_end_txn,
            null,
        })
    }
}
