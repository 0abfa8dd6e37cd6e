//! Decoders used by the dump: KRaft control-record values rendered as the JSON that
//! Kafka's generated `*JsonConverter`s print (`kafka-format.md` §5, KRaft control
//! records), and the Scala `--transaction-log-decoder` text (`kafka-semantics.md` §6.1,
//! §7.2).
//!
//! Everything here reads untrusted bytes through [`Cursor`]: a malformed value gives a
//! [`FormatError`], never a panic.

use crate::format::bytes::Cursor;
use crate::format::error::{FormatError, Problem};
use crate::format::txnlog::{self, LogKey};
use base64::Engine;

/// Skip a tagged-field section (uvarint count, then per field: tag, size, bytes).
fn skip_tagged(cur: &mut Cursor<'_>) -> Result<(), FormatError> {
    let n = cur.uvarint("taggedFieldsCount")?;
    for _ in 0..n {
        cur.uvarint("tag")?;
        let size = cur.uvarint("tagSize")?;
        cur.take(size as usize, "taggedField")?;
    }
    Ok(())
}

/// Compact array length (uvarint length+1, 0 = null → `None`).
fn compact_len(cur: &mut Cursor<'_>, field: &'static str) -> Result<Option<usize>, FormatError> {
    let n = cur.uvarint(field)?;
    if n == 0 {
        return Ok(None);
    }
    let len = (n - 1) as usize;
    // Every element takes at least one byte: a larger count cannot be genuine.
    if len > cur.remaining() {
        return Err(cur.err(field, Problem::OutOfRange { value: len as i64 }));
    }
    Ok(Some(len))
}

/// Compact nullable string, returned as a JSON literal (`null` or a quoted string).
fn compact_string_json(cur: &mut Cursor<'_>, field: &'static str) -> Result<String, FormatError> {
    let n = cur.uvarint(field)?;
    if n == 0 {
        return Ok("null".to_string());
    }
    let s = cur.take((n - 1) as usize, field)?;
    Ok(json_str(&String::from_utf8_lossy(s)))
}

/// A JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Kafka's `Uuid.toString()`: URL-safe base64 without padding of the 16 bytes.
fn uuid(cur: &mut Cursor<'_>, field: &'static str) -> Result<String, FormatError> {
    let b = cur.take(16, field)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b))
}

/// `SnapshotHeaderRecord` as Kafka's JSON converter prints it:
/// `{"version":V,"lastContainedLogTimestamp":T}`.
pub fn snapshot_header_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "SnapshotHeaderRecord");
    let version = cur.i16("version")?;
    let ts = cur.i64("lastContainedLogTimestamp")?;
    skip_tagged(&mut cur)?;
    Ok(format!(
        "{{\"version\":{version},\"lastContainedLogTimestamp\":{ts}}}"
    ))
}

/// `SnapshotFooterRecord`: `{"version":V}`.
pub fn snapshot_footer_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "SnapshotFooterRecord");
    let version = cur.i16("version")?;
    skip_tagged(&mut cur)?;
    Ok(format!("{{\"version\":{version}}}"))
}

/// `KRaftVersionRecord`: `{"version":V,"kRaftVersion":K}`.
pub fn kraft_version_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "KRaftVersionRecord");
    let version = cur.i16("version")?;
    let kv = cur.i16("kRaftVersion")?;
    skip_tagged(&mut cur)?;
    Ok(format!("{{\"version\":{version},\"kRaftVersion\":{kv}}}"))
}

/// `VotersRecord`: `{"version":V,"voters":[{"voterId":…,"voterDirectoryId":"…",
/// "endpoints":[{"name":…,"host":…,"port":…}],"kRaftVersionFeature":{"minSupportedVersion":…,
/// "maxSupportedVersion":…}}]}`.
pub fn voters_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "VotersRecord");
    let version = cur.i16("version")?;
    let mut s = format!("{{\"version\":{version},\"voters\":");
    match compact_len(&mut cur, "voters")? {
        None => s.push_str("null"),
        Some(n) => {
            s.push('[');
            for i in 0..n {
                if i > 0 {
                    s.push(',');
                }
                let id = cur.i32("voterId")?;
                let dir = uuid(&mut cur, "voterDirectoryId")?;
                s.push_str(&format!(
                    "{{\"voterId\":{id},\"voterDirectoryId\":\"{dir}\",\"endpoints\":"
                ));
                match compact_len(&mut cur, "endpoints")? {
                    None => s.push_str("null"),
                    Some(m) => {
                        s.push('[');
                        for j in 0..m {
                            if j > 0 {
                                s.push(',');
                            }
                            let name = compact_string_json(&mut cur, "name")?;
                            let host = compact_string_json(&mut cur, "host")?;
                            let port = cur
                                .take(2, "port")
                                .map(|b| u16::from_be_bytes([b[0], b[1]]))?;
                            skip_tagged(&mut cur)?;
                            s.push_str(&format!(
                                "{{\"name\":{name},\"host\":{host},\"port\":{port}}}"
                            ));
                        }
                        s.push(']');
                    }
                }
                let min = cur.i16("minSupportedVersion")?;
                let max = cur.i16("maxSupportedVersion")?;
                skip_tagged(&mut cur)?;
                skip_tagged(&mut cur)?;
                s.push_str(&format!(
                    ",\"kRaftVersionFeature\":{{\"minSupportedVersion\":{min},\"maxSupportedVersion\":{max}}}}}"
                ));
            }
            s.push(']');
        }
    }
    skip_tagged(&mut cur)?;
    s.push('}');
    Ok(s)
}

/// `LeaderChangeMessage` (v0: voter ids only; v1 adds a directory id per voter):
/// `{"version":V,"leaderId":L,"voters":[{"voterId":…}],"grantingVoters":[…]}`.
/// Used by the JSON Lines output (the 3.x text form prints only `controlType:
/// LEADER_CHANGE(2)`).
pub fn leader_change_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "LeaderChangeMessage");
    let version = cur.i16("version")?;
    let leader = cur.i32("leaderId")?;
    let mut s = format!("{{\"version\":{version},\"leaderId\":{leader}");
    for field in ["voters", "grantingVoters"] {
        s.push_str(&format!(",\"{field}\":"));
        match compact_len(&mut cur, "voters")? {
            None => s.push_str("null"),
            Some(n) => {
                s.push('[');
                for i in 0..n {
                    if i > 0 {
                        s.push(',');
                    }
                    let id = cur.i32("voterId")?;
                    s.push_str(&format!("{{\"voterId\":{id}"));
                    if version >= 1 {
                        let dir = uuid(&mut cur, "voterDirectoryId")?;
                        s.push_str(&format!(",\"voterDirectoryId\":\"{dir}\""));
                    }
                    skip_tagged(&mut cur)?;
                    s.push('}');
                }
                s.push(']');
            }
        }
    }
    skip_tagged(&mut cur)?;
    s.push('}');
    Ok(s)
}

/// The Scala `--transaction-log-decoder` (`TransactionLog.formatRecordKeyAndValue`):
/// `(key, payload)` in the positions where the default decoder prints the raw key and value.
///
/// * key v0 → `transaction_metadata::transactionalId=<id>`, any other key version →
///   `unknown::version=N` (and no payload);
/// * payload → `producerId:P,producerEpoch:E,state=<State>,partitions=[t-p,…],
///   txnLastUpdateTimestamp=T,txnTimeoutMs=M`, or `<DELETE>` for a tombstone.
///
/// Difference from Kafka: the Scala tool prints the partitions from a hash set (an order
/// that depends on the JVM); here they print in the order stored in the record.
pub fn transaction_log(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(Option<String>, Option<String>), FormatError> {
    let key = key.ok_or(FormatError::new(
        "transaction log key",
        "key",
        0,
        Problem::Invalid("record has a null key"),
    ))?;
    let id = match txnlog::parse_key(key)? {
        LogKey::Unknown { version } => {
            return Ok((Some(format!("unknown::version={version}")), None));
        }
        LogKey::Transaction(k) => k.transactional_id,
    };
    let key_s = format!(
        "transaction_metadata::transactionalId={}",
        id.as_deref().unwrap_or("null")
    );
    let Some(v) = txnlog::parse_value(value)? else {
        return Ok((Some(key_s), Some("<DELETE>".into())));
    };
    let mut parts = Vec::new();
    for tp in v.partitions.iter().flatten() {
        let topic = tp.topic.as_deref().unwrap_or("null");
        for p in &tp.partition_ids {
            parts.push(format!("{topic}-{p}"));
        }
    }
    let payload = format!(
        "producerId:{},producerEpoch:{},state={},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
        v.producer_id,
        v.producer_epoch,
        v.state.name(),
        parts.join(","),
        v.last_update_ms,
        v.timeout_ms
    );
    Ok((Some(key_s), Some(payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kraft_records() {
        // SnapshotHeader v0, ts 1234, no tagged fields
        let mut v = vec![0, 0];
        v.extend_from_slice(&1234i64.to_be_bytes());
        v.push(0);
        assert_eq!(
            snapshot_header_json(&v).unwrap(),
            r#"{"version":0,"lastContainedLogTimestamp":1234}"#
        );
        assert_eq!(
            snapshot_footer_json(&[0, 0, 0]).unwrap(),
            r#"{"version":0}"#
        );
        assert_eq!(
            kraft_version_json(&[0, 0, 0, 1, 0]).unwrap(),
            r#"{"version":0,"kRaftVersion":1}"#
        );
        // Voters: one voter id 1, zero uuid, one endpoint CONTROLLER/localhost:9093, feature 0..1
        let mut v = vec![0, 0, 2];
        v.extend_from_slice(&1i32.to_be_bytes());
        v.extend_from_slice(&[0u8; 16]);
        v.push(2);
        v.push(11);
        v.extend_from_slice(b"CONTROLLER");
        v.push(10);
        v.extend_from_slice(b"localhost");
        v.extend_from_slice(&9093u16.to_be_bytes());
        v.push(0);
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(
            voters_json(&v).unwrap(),
            r#"{"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}"#
        );
        // truncated input is an error, not a panic
        assert!(voters_json(&v[..v.len() - 3]).is_err());
        assert!(snapshot_header_json(&[0]).is_err());
        // absurd array length
        assert!(voters_json(&[0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    }

    #[test]
    fn leader_change() {
        let mut v = vec![0, 0];
        v.extend_from_slice(&1i32.to_be_bytes());
        v.push(2);
        v.extend_from_slice(&1i32.to_be_bytes());
        v.push(0);
        v.push(2);
        v.extend_from_slice(&1i32.to_be_bytes());
        v.push(0);
        v.push(0);
        assert_eq!(
            leader_change_json(&v).unwrap(),
            r#"{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}"#
        );
    }

    #[test]
    fn txn_log_unknown_and_tombstone() {
        assert_eq!(
            transaction_log(Some(&[0, 3, 0, 0]), None).unwrap(),
            (Some("unknown::version=3".into()), None)
        );
        assert_eq!(
            transaction_log(Some(&[0, 0, 0, 1, b'x']), None).unwrap(),
            (
                Some("transaction_metadata::transactionalId=x".into()),
                Some("<DELETE>".into())
            )
        );
        assert!(transaction_log(Some(&[0, 0, 0, 9, b'x']), None).is_err());
        assert!(transaction_log(Some(&[0, 0, 0, 1, b'x']), Some(&[0, 0, 1])).is_err());
    }
}
