//! Decoders used by the dump: KRaft control-record values rendered as the JSON that
//! Kafka's generated `*JsonConverter`s print (KRaft control records:
//! `ControlRecordUtils`), the Scala `--transaction-log-decoder` text
//! (`DumpLogSegments.TransactionLogMessageParser`), and the Scala `--offsets-decoder` text
//! for `__consumer_offsets` (`DumpLogSegments.OffsetsMessageParser`).
//!
//! Everything here reads untrusted bytes through [`Cursor`]: a malformed value gives a
//! [`FormatError`], never a panic.

use crate::read::format::bytes::Cursor;
use crate::read::format::error::{FormatError, Problem};
use crate::read::format::kraft;
use crate::read::format::txnlog::{self, LogKey};
use base64::Engine;

/// A JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// `SnapshotHeaderRecord` as Kafka's JSON converter prints it:
/// `{"version":V,"lastContainedLogTimestamp":T}`.
pub fn snapshot_header_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "SnapshotHeaderRecord");
    let version = cur.i16("version")?;
    let ts = cur.i64("lastContainedLogTimestamp")?;
    cur.tagged_fields(|_, _| {})?;
    Ok(format!(
        "{{\"version\":{version},\"lastContainedLogTimestamp\":{ts}}}"
    ))
}

/// `SnapshotFooterRecord`: `{"version":V}`.
pub fn snapshot_footer_json(value: &[u8]) -> Result<String, FormatError> {
    let mut cur = Cursor::new(value, 0, "SnapshotFooterRecord");
    let version = cur.i16("version")?;
    cur.tagged_fields(|_, _| {})?;
    Ok(format!("{{\"version\":{version}}}"))
}

/// `KRaftVersionRecord`: `{"version":V,"kRaftVersion":K}`.
pub fn kraft_version_json(value: &[u8]) -> Result<String, FormatError> {
    let k = kraft::kraft_version(value)?;
    Ok(format!(
        "{{\"version\":{},\"kRaftVersion\":{}}}",
        k.version, k.kraft_version
    ))
}

fn opt_json(s: &Option<String>) -> String {
    s.as_deref().map_or_else(|| "null".to_string(), json_str)
}

/// Kafka's `Uuid.toString()`: URL-safe base64 without padding of the 16 bytes.
fn uuid_text(u: &[u8; 16]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(u)
}

/// `VotersRecord`: `{"version":V,"voters":[{"voterId":…,"voterDirectoryId":"…",
/// "endpoints":[{"name":…,"host":…,"port":…}],"kRaftVersionFeature":{"minSupportedVersion":…,
/// "maxSupportedVersion":…}}]}`.
pub fn voters_json(value: &[u8]) -> Result<String, FormatError> {
    let v = kraft::voters(value)?;
    let mut s = format!("{{\"version\":{},\"voters\":", v.version);
    match &v.voters {
        None => s.push_str("null"),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    let endpoints = match &e.endpoints {
                        None => "null".to_string(),
                        Some(es) => {
                            let es: Vec<String> = es
                                .iter()
                                .map(|p| {
                                    format!(
                                        "{{\"name\":{},\"host\":{},\"port\":{}}}",
                                        opt_json(&p.name),
                                        opt_json(&p.host),
                                        p.port
                                    )
                                })
                                .collect();
                            format!("[{}]", es.join(","))
                        }
                    };
                    format!(
                        "{{\"voterId\":{},\"voterDirectoryId\":\"{}\",\"endpoints\":{endpoints},\"kRaftVersionFeature\":{{\"minSupportedVersion\":{},\"maxSupportedVersion\":{}}}}}",
                        e.voter_id,
                        uuid_text(&e.directory_id),
                        e.kraft_version_feature.0,
                        e.kraft_version_feature.1
                    )
                })
                .collect();
            s.push_str(&format!("[{}]", items.join(",")));
        }
    }
    s.push('}');
    Ok(s)
}

/// `LeaderChangeMessage`, read at schema version 0 as Kafka reads it (voter ids only):
/// `{"version":V,"leaderId":L,"voters":[{"voterId":…}],"grantingVoters":[…]}`.
/// The text form prints it after ` LeaderChange: ` as Kafka 4.1+ does (before 4.1 the
/// tool printed only `controlType: LEADER_CHANGE(2)`); the JSON Lines output carries it
/// parsed.
pub fn leader_change_json(value: &[u8]) -> Result<String, FormatError> {
    let lc = kraft::leader_change(value)?;
    let list = |l: &Option<Vec<kraft::Voter>>| match l {
        None => "null".to_string(),
        Some(vs) => {
            let items: Vec<String> = vs
                .iter()
                .map(|v| match &v.directory_id {
                    Some(d) => format!(
                        "{{\"voterId\":{},\"voterDirectoryId\":\"{}\"}}",
                        v.voter_id,
                        uuid_text(d)
                    ),
                    None => format!("{{\"voterId\":{}}}", v.voter_id),
                })
                .collect();
            format!("[{}]", items.join(","))
        }
    };
    Ok(format!(
        "{{\"version\":{},\"leaderId\":{},\"voters\":{},\"grantingVoters\":{}}}",
        lc.version,
        lc.leader_id,
        list(&lc.voters),
        list(&lc.granting_voters)
    ))
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
    let mut text_len = 0usize;
    for tp in v.partitions.iter().flatten() {
        let topic = tp.topic.as_deref().unwrap_or("null");
        for p in &tp.partition_ids {
            text_len += topic.len() + 13;
            if text_len > MAX_DECODED_TEXT {
                return Err(FormatError::new(
                    "transaction log value",
                    "transactionPartitions",
                    0,
                    Problem::TooLarge {
                        limit: MAX_DECODED_TEXT as u64,
                    },
                ));
            }
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

/// Longest text a decoder builds for one record; beyond it the record is an error (the
/// texts repeat topic names per partition, so crafted input could multiply its size).
const MAX_DECODED_TEXT: usize = 4 << 20;

/// Scala's `"%X".format(BigInt(1, bytes))`: upper-case hex without leading zeros (`""`
/// for no bytes, `"0"` for all-zero bytes).
fn scala_hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return String::new();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    let trimmed = hex.trim_start_matches('0');
    if trimmed.is_empty() {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

/// A consumer-protocol assignment blob as Java prints `Assignment.partitions()` (a
/// `List<TopicPartition>`: `[t-0, t-1]`), with `:HEX` of the user data when there is any.
fn consumer_assignment(blob: &[u8], budget: &mut usize) -> Result<String, FormatError> {
    // Members the leader assigned nothing get a zero-length assignment (SyncGroup's
    // "Setting empty assignments for members"): no partitions.
    if blob.is_empty() {
        return Ok("[]".to_string());
    }
    let mut cur = Cursor::new(blob, 0, "consumer protocol assignment");
    let _version = cur.i16("version")?;
    let n = cur
        .schema_array_len(false, "assignedPartitions")?
        .unwrap_or(0);
    let mut parts = Vec::new();
    for _ in 0..n {
        let topic = cur
            .schema_string(false, "topic")?
            .map_or_else(|| "null".into(), String::from_utf8_lossy);
        let m = cur.schema_array_len(false, "partitions")?.unwrap_or(0);
        for _ in 0..m {
            // Each 4-byte partition repeats the topic name in the text: bound the output
            // of the whole record (crafted bytes could otherwise turn 1 MiB into gigabytes).
            *budget = budget.checked_sub(topic.len() + 13).ok_or(cur.err(
                "assignedPartitions",
                Problem::TooLarge {
                    limit: MAX_DECODED_TEXT as u64,
                },
            ))?;
            parts.push(format!("{topic}-{}", cur.i32("partition")?));
        }
    }
    let user = cur.schema_bytes(false, "userData")?.map(scala_hex);
    let list = format!("[{}]", parts.join(", "));
    Ok(match user {
        Some(h) if !h.is_empty() => format!("{list}:{h}"),
        _ => list,
    })
}

/// The Scala `--offsets-decoder` text (Kafka 2.x–3.7 `GroupMetadataManager.formatRecordKeyAndValue`),
/// selected by `--legacy-decoder-text` (Kafka 3.8+ prints JSON: [`super::coordinator_json`]),
/// for one `__consumer_offsets` record at `offset`, rendered from the format layer's
/// decoding ([`crate::read::format::groups`]):
///
/// * key types 0/1 (offset commit) → `offset_commit::group=<g>,partition=<topic>-<p>`;
///   payload `offset=<o>` or `offset=<o>,metadata=<m>` (value versions 0–4);
/// * key type 2 (group metadata) → `group_metadata::group=<g>`; payload
///   `{"protocolType":…,"protocol":…,"generationId":…,"assignment":"{member=[t-0, t-1],…}"}`
///   (for protocol type `consumer` the assignment blobs are decoded; others print as hex);
/// * a null value → payload `<DELETE>`;
/// * any other key type (KIP-848 consumer/share/streams group records, which the ≤3.7
///   tool did not know) → `Unknown record type N at offset O, skipping.` and no payload.
///
/// Differences from Kafka: members print in stored order (the Scala tool iterates a hash
/// map), and a value that does not parse gives an error string instead of aborting.
pub fn offsets(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> Result<(Option<String>, Option<String>), FormatError> {
    use crate::read::format::groups::{self, Outcome, Topic};
    let key_bytes = key.ok_or(FormatError::new(
        "offsets key",
        "key",
        0,
        Problem::Invalid("record has a null key"),
    ))?;
    let unknown = |t: i16| {
        Ok((
            Some(format!(
                "Unknown record type {t} at offset {offset}, skipping."
            )),
            None,
        ))
    };
    if let Some(t) = groups::key_type(key_bytes)
        && !(0..=2).contains(&t)
    {
        return unknown(t);
    }
    let d = match groups::decode(Topic::ConsumerOffsets, key, value)? {
        Outcome::Record(d) => d,
        Outcome::UnknownType { id, .. } => return unknown(id),
    };
    let or_null = |s: Option<String>| s.unwrap_or_else(|| "null".into());
    if d.rtype.id == 2 {
        let key_s = format!("group_metadata::group={}", or_null(d.key.str("group")));
        let Some((_, v)) = d.value else {
            return Ok((Some(key_s), Some("<DELETE>".into())));
        };
        let protocol_type = v.str("protocolType").unwrap_or_default();
        let mut assignment = Vec::new();
        let mut budget = MAX_DECODED_TEXT;
        for m in v.items("members") {
            let Some(m) = m.as_struct() else { continue };
            let member = m.str("memberId").unwrap_or_default();
            let blob = match m.get("assignment") {
                Some(crate::read::format::groups::Val::Bytes(Some(b))) => *b,
                _ => &[],
            };
            let text = if protocol_type == "consumer" {
                consumer_assignment(blob, &mut budget)?
            } else {
                budget = budget.saturating_sub(2 * blob.len());
                scala_hex(blob)
            };
            budget = budget
                .checked_sub(member.len() + 2)
                .ok_or(FormatError::new(
                    "group metadata value",
                    "members",
                    0,
                    Problem::TooLarge {
                        limit: MAX_DECODED_TEXT as u64,
                    },
                ))?;
            assignment.push(format!("{member}={text}"));
        }
        let payload = format!(
            "{{\"protocolType\":{},\"protocol\":{},\"generationId\":{},\"assignment\":{}}}",
            json_str(&protocol_type),
            v.str("protocol")
                .as_deref()
                .map_or("null".to_string(), json_str),
            v.int("generation"),
            json_str(&format!("{{{}}}", assignment.join(",")))
        );
        return Ok((Some(key_s), Some(payload)));
    }
    let key_s = format!(
        "offset_commit::group={},partition={}-{}",
        or_null(d.key.str("group")),
        or_null(d.key.str("topic")),
        d.key.int("partition")
    );
    let Some((_, v)) = d.value else {
        return Ok((Some(key_s), Some("<DELETE>".into())));
    };
    let metadata = v.str("metadata").unwrap_or_default();
    let committed = v.int("offset");
    let payload = if metadata.is_empty() {
        format!("offset={committed}")
    } else {
        format!("offset={committed},metadata={metadata}")
    };
    Ok((Some(key_s), Some(payload)))
}

/// What the group coordinator checks when it loads a `__consumer_offsets` record (kept
/// for the decoder's tests; rule 32 calls [`crate::read::format::groups::validate`]).
#[cfg(test)]
fn validate_offsets_record(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<Option<i16>, FormatError> {
    crate::read::format::groups::validate(
        crate::read::format::groups::Topic::ConsumerOffsets,
        key,
        value,
    )
    .map_err(FormatError::from)
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

    /// Classic (non-flexible) encoders for `__consumer_offsets` test records.
    fn s16(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            None => out.extend_from_slice(&(-1i16).to_be_bytes()),
            Some(s) => {
                out.extend_from_slice(&(s.len() as i16).to_be_bytes());
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    fn b32(out: &mut Vec<u8>, b: Option<&[u8]>) {
        match b {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    fn offset_key(kind: i16, group: &str, topic: &str, p: i32) -> Vec<u8> {
        let mut k = kind.to_be_bytes().to_vec();
        s16(&mut k, Some(group));
        s16(&mut k, Some(topic));
        k.extend_from_slice(&p.to_be_bytes());
        k
    }
    fn assignment(parts: &[(&str, &[i32])], user: Option<&[u8]>) -> Vec<u8> {
        let mut a = 0i16.to_be_bytes().to_vec();
        a.extend_from_slice(&(parts.len() as i32).to_be_bytes());
        for (t, ps) in parts {
            s16(&mut a, Some(t));
            a.extend_from_slice(&(ps.len() as i32).to_be_bytes());
            for p in *ps {
                a.extend_from_slice(&p.to_be_bytes());
            }
        }
        b32(&mut a, user);
        a
    }

    /// Key and v3 value of a classic `consumer` group "grp" (protocol "range", leader
    /// "m1") with these members and assignment blobs.
    fn group_v3(generation: i32, members: &[(&str, Vec<u8>)]) -> (Vec<u8>, Vec<u8>) {
        let mut key = 2i16.to_be_bytes().to_vec();
        s16(&mut key, Some("grp"));
        let mut v = 3i16.to_be_bytes().to_vec();
        s16(&mut v, Some("consumer"));
        v.extend_from_slice(&generation.to_be_bytes());
        s16(&mut v, Some("range"));
        s16(&mut v, Some("m1"));
        v.extend_from_slice(&123i64.to_be_bytes());
        v.extend_from_slice(&(members.len() as i32).to_be_bytes());
        for (id, a) in members {
            s16(&mut v, Some(id));
            s16(&mut v, None); // groupInstanceId
            s16(&mut v, Some("client"));
            s16(&mut v, Some("/10.0.0.1"));
            v.extend_from_slice(&300_000i32.to_be_bytes());
            v.extend_from_slice(&45_000i32.to_be_bytes());
            b32(&mut v, Some(b"sub"));
            b32(&mut v, Some(a));
        }
        (key, v)
    }

    #[test]
    fn offsets_commit_values_of_every_version() {
        // The record of a real dump (Strimzi blog, Kafka 3.x: keySize 26, valueSize 24):
        // `key: offset_commit::group=my-group,partition=wc-input-0 payload: offset=1`.
        let key = offset_key(1, "my-group", "wc-input", 0);
        assert_eq!(key.len(), 26);
        let mut v3 = 3i16.to_be_bytes().to_vec();
        v3.extend_from_slice(&1i64.to_be_bytes());
        v3.extend_from_slice(&(-1i32).to_be_bytes());
        s16(&mut v3, Some(""));
        v3.extend_from_slice(&1_680_383_688_085i64.to_be_bytes());
        assert_eq!(v3.len(), 24);
        let want_key = "offset_commit::group=my-group,partition=wc-input-0";
        assert_eq!(
            offsets(Some(&key), Some(&v3), 1).unwrap(),
            (Some(want_key.into()), Some("offset=1".into()))
        );
        // v1 (with expireTimestamp) and metadata; v0 from a type-0 key.
        let mut v1 = 1i16.to_be_bytes().to_vec();
        v1.extend_from_slice(&42i64.to_be_bytes());
        s16(&mut v1, Some("meta"));
        v1.extend_from_slice(&5i64.to_be_bytes());
        v1.extend_from_slice(&6i64.to_be_bytes());
        assert_eq!(
            offsets(Some(&offset_key(0, "g", "t", 3)), Some(&v1), 9).unwrap(),
            (
                Some("offset_commit::group=g,partition=t-3".into()),
                Some("offset=42,metadata=meta".into())
            )
        );
        // v4: flexible (compact metadata string, tagged fields after).
        let mut v4 = 4i16.to_be_bytes().to_vec();
        v4.extend_from_slice(&7i64.to_be_bytes());
        v4.extend_from_slice(&3i32.to_be_bytes());
        v4.extend_from_slice(&[3, b'h', b'i']);
        v4.extend_from_slice(&8i64.to_be_bytes());
        v4.push(0);
        assert_eq!(
            offsets(Some(&key), Some(&v4), 1).unwrap().1.as_deref(),
            Some("offset=7,metadata=hi")
        );
        // Tombstone, unknown value version, truncated value, unknown key type, no key.
        assert_eq!(
            offsets(Some(&key), None, 1).unwrap().1.as_deref(),
            Some("<DELETE>")
        );
        let mut v9 = v3.clone();
        v9[1] = 9;
        assert!(offsets(Some(&key), Some(&v9), 1).is_err());
        assert!(offsets(Some(&key), Some(&v3[..20]), 1).is_err());
        assert_eq!(
            offsets(Some(&[0, 5, 0, 1, b'g']), Some(b"xx"), 77).unwrap(),
            (
                Some("Unknown record type 5 at offset 77, skipping.".into()),
                None
            )
        );
        assert!(offsets(None, Some(&v3), 1).is_err());
    }

    #[test]
    fn offsets_group_metadata() {
        // v3 consumer group with two members: one assignment with user data (printed as
        // Scala's BigInt hex: upper case, no leading zeros), one empty.
        let (key, v) = group_v3(
            10,
            &[
                (
                    "m1",
                    assignment(
                        &[("foo", &[0, 1]), ("bar", &[2])],
                        Some(&[0x00, 0x0a, 0xbc]),
                    ),
                ),
                ("m2", assignment(&[], None)),
            ],
        );
        assert_eq!(
            offsets(Some(&key), Some(&v), 4).unwrap(),
            (
                Some("group_metadata::group=grp".into()),
                Some(
                    r#"{"protocolType":"consumer","protocol":"range","generationId":10,"assignment":"{m1=[foo-0, foo-1, bar-2]:ABC,m2=[]}"}"#
                        .into()
                )
            )
        );
        // v0, another protocol type: assignments print as hex; a null protocol.
        let mut v0 = 0i16.to_be_bytes().to_vec();
        s16(&mut v0, Some("sr"));
        v0.extend_from_slice(&2i32.to_be_bytes());
        s16(&mut v0, None);
        s16(&mut v0, None);
        v0.extend_from_slice(&1i32.to_be_bytes());
        s16(&mut v0, Some("w"));
        s16(&mut v0, Some("c"));
        s16(&mut v0, Some("h"));
        v0.extend_from_slice(&1i32.to_be_bytes());
        b32(&mut v0, Some(b""));
        b32(&mut v0, Some(&[0x01, 0xff]));
        assert_eq!(
            offsets(Some(&key), Some(&v0), 4).unwrap().1.as_deref(),
            Some(
                r#"{"protocolType":"sr","protocol":null,"generationId":2,"assignment":"{w=1FF}"}"#
            )
        );
        assert_eq!(
            offsets(Some(&key), None, 4).unwrap().1.as_deref(),
            Some("<DELETE>")
        );
        // A consumer assignment blob that does not parse is an error, not a panic.
        let mut bad = v.clone();
        bad.truncate(bad.len() - 3);
        assert!(offsets(Some(&key), Some(&bad), 4).is_err());
        assert_eq!(scala_hex(&[0, 0]), "0");
        assert_eq!(scala_hex(&[]), "");
    }

    #[test]
    fn decoded_text_is_bounded() {
        // One 30 000-byte topic with 100 000 partitions: 430 KB of bytes, 3 GB of text
        // unbounded. It must be refused, not built.
        let topic = "t".repeat(30_000);
        let parts: Vec<i32> = (0..100_000).collect();
        let blob = assignment(&[(&topic, &parts)], None);
        let e = consumer_assignment(&blob, &mut MAX_DECODED_TEXT.clone()).unwrap_err();
        assert!(matches!(e.problem, Problem::TooLarge { .. }), "{e}");
    }

    #[test]
    fn empty_assignments_are_normal() {
        // SyncGroup gives members the leader assigned nothing a zero-length assignment.
        let (key, v) = group_v3(5, &[("m1", Vec::new())]);
        assert_eq!(
            offsets(Some(&key), Some(&v), 0).unwrap().1.as_deref(),
            Some(
                r#"{"protocolType":"consumer","protocol":"range","generationId":5,"assignment":"{m1=[]}"}"#
            )
        );
        assert_eq!(validate_offsets_record(Some(&key), Some(&v)), Ok(None));
        // A malformed (non-empty) assignment fails the display only, not the coordinator's
        // load, which never parses assignments.
        let mut bad = v.clone();
        let at = bad.len() - 4;
        bad.truncate(at);
        b32(&mut bad, Some(b"\x00"));
        assert!(offsets(Some(&key), Some(&bad), 0).is_err());
        assert_eq!(validate_offsets_record(Some(&key), Some(&bad)), Ok(None));
        assert_eq!(validate_offsets_record(Some(&[0, 99]), None), Ok(Some(99)));
        // Type 7 (a KIP-848 target assignment member) is read now: a key without its
        // group id does not deserialize.
        assert!(validate_offsets_record(Some(&[0, 7]), None).is_err());
        assert!(validate_offsets_record(None, None).is_err());
    }

    #[test]
    fn offsets_decoders_never_panic_on_noise() {
        // Deterministic noise, and mutations of valid records (every byte of the key and
        // value flipped): only values or errors, never a panic.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in 0..64usize {
            for _ in 0..50 {
                let key: Vec<u8> = (0..len % 24).map(|_| next() as u8).collect();
                let value: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                for t in [0u8, 1, 2] {
                    let mut k = key.clone();
                    if k.len() >= 2 {
                        k[0] = 0;
                        k[1] = t;
                    }
                    let _ = offsets(Some(&k), Some(&value), 0);
                    let _ = validate_offsets_record(Some(&k), Some(&value));
                }
            }
        }
        let (gk, gv) = group_v3(1, &[("m", assignment(&[("t", &[0, 1])], Some(&[1, 2])))]);
        let (ck, cv) = {
            let mut v = 3i16.to_be_bytes().to_vec();
            v.extend_from_slice(&5i64.to_be_bytes());
            v.extend_from_slice(&0i32.to_be_bytes());
            s16(&mut v, Some("meta"));
            v.extend_from_slice(&6i64.to_be_bytes());
            (offset_key(1, "g", "t", 0), v)
        };
        for (k, v) in [(gk, gv), (ck, cv)] {
            for i in 0..k.len() + v.len() {
                for mask in [0x01u8, 0x80, 0xff] {
                    let (mut k2, mut v2) = (k.clone(), v.clone());
                    if i < k.len() {
                        k2[i] ^= mask;
                    } else {
                        v2[i - k.len()] ^= mask;
                    }
                    let _ = offsets(Some(&k2), Some(&v2), 0);
                    let _ = validate_offsets_record(Some(&k2), Some(&v2));
                    let _ = offsets(Some(&k2), Some(&v2[..v2.len() / 2]), 0);
                }
            }
        }
    }
}
