//! Control records (`ControlRecordType.parse`, `EndTransactionMarker.deserializeValue`): the key `(version i16, type i16)` and the
//! EndTxnMarker value `(version i16, coordinatorEpoch i32)`.

use super::bytes::{be_i16, be_i32};
use super::error::{FormatError, Problem};

/// Control record type (key field `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ControlType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
    /// A type this reader does not know; readers must ignore it.
    Unknown(i16),
}

impl ControlType {
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlType::Abort,
            1 => ControlType::Commit,
            2 => ControlType::LeaderChange,
            3 => ControlType::SnapshotHeader,
            4 => ControlType::SnapshotFooter,
            5 => ControlType::KraftVersion,
            6 => ControlType::KraftVoters,
            n => ControlType::Unknown(n),
        }
    }
    pub fn id(self) -> i16 {
        match self {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
            ControlType::LeaderChange => 2,
            ControlType::SnapshotHeader => 3,
            ControlType::SnapshotFooter => 4,
            ControlType::KraftVersion => 5,
            ControlType::KraftVoters => 6,
            ControlType::Unknown(n) => n,
        }
    }
    /// Kafka's enum name (`ABORT`, `COMMIT`, `LEADER_CHANGE`, …, `UNKNOWN`).
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Abort => "ABORT",
            ControlType::Commit => "COMMIT",
            ControlType::LeaderChange => "LEADER_CHANGE",
            ControlType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlType::KraftVersion => "KRAFT_VERSION",
            ControlType::KraftVoters => "KRAFT_VOTERS",
            ControlType::Unknown(_) => "UNKNOWN",
        }
    }
    /// COMMIT or ABORT.
    pub fn is_end_txn(self) -> bool {
        matches!(self, ControlType::Abort | ControlType::Commit)
    }
}

/// A parsed control-record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlKey {
    pub version: i16,
    pub kind: ControlType,
}

/// The problem of a control record whose key is null.
const NULL_KEY: &str = "control record has a null key";
/// The problem of a COMMIT/ABORT record whose value is null.
const NULL_VALUE: &str = "end transaction marker has a null value";

/// A null field of a control record, the reason it does not decode. Kafka's readers take
/// the field's size without a null check, so they throw `NullPointerException` where a
/// field too short throws `InvalidRecordException`: the key's in
/// `ControlRecordType.parseTypeId`, a COMMIT/ABORT value's in
/// `EndTransactionMarker.deserializeValue` (after its type check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NullField {
    Key,
    Value,
}

impl NullField {
    /// The null field `e` (an error of [`parse_control`]) reports, if that is its problem.
    pub fn of(e: &FormatError) -> Option<NullField> {
        match e.problem {
            Problem::Invalid(NULL_KEY) if e.structure == "control record" => Some(NullField::Key),
            Problem::Invalid(NULL_VALUE) if e.structure == "end transaction marker" => {
                Some(NullField::Value)
            }
            _ => None,
        }
    }
}

/// Parse a control record key. Kafka rejects a key shorter than 4 bytes and a negative
/// version; a higher version is read as version 0 with extra bytes ignored.
pub fn parse_control_key(key: Option<&[u8]>) -> Result<ControlKey, FormatError> {
    let key = key.ok_or(FormatError::new(
        "control record",
        "key",
        0,
        Problem::Invalid(NULL_KEY),
    ))?;
    if key.len() < 4 {
        return Err(FormatError::truncated(
            "control record",
            "key",
            0,
            4,
            key.len() as u64,
        ));
    }
    let version = be_i16(key, 0);
    if version < 0 {
        return Err(FormatError::new(
            "control record",
            "key.version",
            0,
            Problem::OutOfRange {
                value: version as i64,
            },
        ));
    }
    Ok(ControlKey {
        version,
        kind: ControlType::from_id(be_i16(key, 2)),
    })
}

/// The value of a COMMIT/ABORT control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct EndTxnMarker {
    pub version: i16,
    pub coordinator_epoch: i32,
}

/// Parse an EndTxnMarker value (at least 6 bytes, version ≥ 0).
pub fn parse_end_txn_value(value: Option<&[u8]>) -> Result<EndTxnMarker, FormatError> {
    let value = value.ok_or(FormatError::new(
        "end transaction marker",
        "value",
        0,
        Problem::Invalid(NULL_VALUE),
    ))?;
    if value.len() < 6 {
        return Err(FormatError::truncated(
            "end transaction marker",
            "value",
            0,
            6,
            value.len() as u64,
        ));
    }
    let version = be_i16(value, 0);
    if version < 0 {
        return Err(FormatError::new(
            "end transaction marker",
            "version",
            0,
            Problem::OutOfRange {
                value: version as i64,
            },
        ));
    }
    Ok(EndTxnMarker {
        version,
        coordinator_epoch: be_i32(value, 2),
    })
}

/// What the first record of a control batch says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// COMMIT or ABORT with its coordinator epoch.
    EndTxn { commit: bool, marker: EndTxnMarker },
    /// Any other control type (KRaft records, unknown types), kept raw.
    Other { kind: ControlType, key_version: i16 },
}

impl Control {
    pub fn kind(&self) -> ControlType {
        match *self {
            Control::EndTxn { commit: true, .. } => ControlType::Commit,
            Control::EndTxn { commit: false, .. } => ControlType::Abort,
            Control::Other { kind, .. } => kind,
        }
    }
}

/// Decode a control record from its key and value.
pub fn parse_control(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<Control, FormatError> {
    let k = parse_control_key(key)?;
    match k.kind {
        ControlType::Abort | ControlType::Commit => Ok(Control::EndTxn {
            commit: k.kind == ControlType::Commit,
            marker: parse_end_txn_value(value)?,
        }),
        kind => Ok(Control::Other {
            kind,
            key_version: k.version,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        let c = parse_control(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 7])).unwrap();
        assert_eq!(
            c,
            Control::EndTxn {
                commit: true,
                marker: EndTxnMarker {
                    version: 0,
                    coordinator_epoch: 7
                }
            }
        );
        assert_eq!(
            parse_control(Some(&[0, 0, 0, 0]), Some(&[0, 0, 0, 0, 0, 7]))
                .unwrap()
                .kind(),
            ControlType::Abort
        );
        assert!(parse_control(Some(&[0, 0, 0]), None).is_err());
        let null =
            |k: Option<&[u8]>, v: Option<&[u8]>| NullField::of(&parse_control(k, v).unwrap_err());
        assert_eq!(null(None, Some(&[0; 6])), Some(NullField::Key));
        assert_eq!(null(Some(&[0, 0, 0, 1]), None), Some(NullField::Value));
        assert_eq!(null(Some(&[0, 0, 0, 1]), Some(&[0; 2])), None);
        assert_eq!(null(Some(&[0, 0]), None), None);
        assert!(parse_control(Some(&[0xff, 0xff, 0, 1]), Some(&[0, 0, 0, 0, 0, 7])).is_err());
        assert!(parse_control(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0])).is_err());
        assert_eq!(
            parse_control(Some(&[0, 0, 0, 9]), None).unwrap().kind(),
            ControlType::Unknown(9)
        );
        assert_eq!(
            parse_control(Some(&[0, 0, 0, 3]), None).unwrap().kind(),
            ControlType::SnapshotHeader
        );
    }
}
