//! Typed decoding of `__transaction_state` records (`TransactionLog.readTxnRecordKey` /
//! `readTxnRecordValue`, schemas `TransactionLogKey` / `TransactionLogValue`): the key
//! (`i16` version + transactional id) and the value (v0 non-flexible, v1 flexible with
//! tagged fields), or a tombstone.
//!
//! Strings borrow from the record when they are valid UTF-8 (lossy copies otherwise);
//! only the partition list allocates. Untrusted lengths are checked against the bytes
//! left before anything is allocated, so malformed input gives a [`FormatError`], never
//! a panic or a huge allocation.

use super::bytes::Cursor;
use super::error::{FormatError, Problem};
use std::borrow::Cow;

/// The transaction states of the coordinator (`TransactionState`, the value's status byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TxnState {
    /// 0: no transaction in progress.
    Empty,
    /// 1: a transaction is in progress (partitions added).
    Ongoing,
    /// 2: EndTxn(commit) received; markers being written.
    PrepareCommit,
    /// 3: EndTxn(abort) or a timeout abort; markers being written.
    PrepareAbort,
    /// 4: every COMMIT marker was written.
    CompleteCommit,
    /// 5: every ABORT marker was written.
    CompleteAbort,
    /// 6: transient in-memory state (expiry writes a tombstone instead).
    Dead,
    /// 7: pending state while fencing a producer.
    PrepareEpochFence,
}

impl TxnState {
    /// The state of a status byte (`None` for a byte the coordinator would refuse to load).
    pub fn from_byte(b: i8) -> Option<TxnState> {
        Some(match b {
            0 => TxnState::Empty,
            1 => TxnState::Ongoing,
            2 => TxnState::PrepareCommit,
            3 => TxnState::PrepareAbort,
            4 => TxnState::CompleteCommit,
            5 => TxnState::CompleteAbort,
            6 => TxnState::Dead,
            7 => TxnState::PrepareEpochFence,
            _ => return None,
        })
    }

    /// Kafka's name of the state (as `kafka-dump-log.sh --transaction-log-decoder` prints it).
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// A transaction is in progress: its partitions still wait for data or markers.
    pub fn is_in_progress(self) -> bool {
        matches!(
            self,
            TxnState::Ongoing
                | TxnState::PrepareCommit
                | TxnState::PrepareAbort
                | TxnState::PrepareEpochFence
        )
    }
}

impl std::fmt::Display for TxnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A `__transaction_state` key of version 0.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TxnLogKey<'a> {
    /// The transactional id (`None` when stored with a null length, which Kafka's reader
    /// refuses for this non-nullable field).
    pub transactional_id: Option<Cow<'a, str>>,
}

/// A parsed key: a transaction key, or a key version the coordinator skips on load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogKey<'a> {
    /// Key version 0: transaction metadata.
    Transaction(TxnLogKey<'a>),
    /// Any other key version (the coordinator logs and skips the record).
    Unknown { version: i16 },
}

/// One topic's partitions in a transaction value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TxnTopicPartitions<'a> {
    /// The topic (`None` for a null string, which Kafka's reader refuses: the field is not
    /// nullable).
    pub topic: Option<Cow<'a, str>>,
    /// The partition ids (a null array reads as empty, see [`Self::null_partition_ids`]).
    pub partition_ids: Vec<i32>,
    /// The partition id array was stored as null, which Kafka's reader refuses (the field
    /// is not nullable).
    pub null_partition_ids: bool,
}

/// A `__transaction_state` value (`TransactionLogValue` v0 or v1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TxnLogValue<'a> {
    /// The value's schema version (0 non-flexible, 1 flexible).
    pub version: i16,
    pub producer_id: i64,
    /// Tagged field 0 (v1+), -1 when absent.
    pub previous_producer_id: i64,
    /// Tagged field 1 (v1+), -1 when absent.
    pub next_producer_id: i64,
    pub producer_epoch: i16,
    /// Tagged field 3 (v1+, newer trunk, KIP-939), -1 when absent.
    pub next_producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// `None` when stored as null (the coordinator writes null in `Empty`).
    pub partitions: Option<Vec<TxnTopicPartitions<'a>>>,
    pub last_update_ms: i64,
    /// -1 when no transaction started.
    pub start_ms: i64,
    /// Tagged field 2 (v1+), 0 when absent.
    pub client_transaction_version: i16,
}

impl TxnLogValue<'_> {
    /// True when the value lists `topic`-`partition`.
    pub fn lists(&self, topic: &str, partition: i32) -> bool {
        self.partitions
            .iter()
            .flatten()
            .any(|tp| tp.topic.as_deref() == Some(topic) && tp.partition_ids.contains(&partition))
    }
}

const KEY: &str = "transaction log key";
const VALUE: &str = "transaction log value";

/// Non-flexible (`i16` length) or flexible (uvarint length+1) nullable string.
fn string<'a>(
    cur: &mut Cursor<'a>,
    flexible: bool,
    field: &'static str,
) -> Result<Option<Cow<'a, str>>, FormatError> {
    Ok(cur
        .schema_string(flexible, field)?
        .map(String::from_utf8_lossy))
}

/// Parse a `__transaction_state` key.
pub fn parse_key(key: &[u8]) -> Result<LogKey<'_>, FormatError> {
    let mut c = Cursor::new(key, 0, KEY);
    let version = c.i16("version")?;
    if version != 0 {
        return Ok(LogKey::Unknown { version });
    }
    let transactional_id = string(&mut c, false, "transactionalId")?;
    Ok(LogKey::Transaction(TxnLogKey { transactional_id }))
}

/// Parse a `__transaction_state` value; `Ok(None)` for a tombstone (null value: the
/// transactional id expired and was removed).
pub fn parse_value(value: Option<&[u8]>) -> Result<Option<TxnLogValue<'_>>, FormatError> {
    let Some(value) = value else { return Ok(None) };
    let mut c = Cursor::new(value, 0, VALUE);
    let version = c.i16("version")?;
    if !(0..=1).contains(&version) {
        return Err(c.err(
            "version",
            Problem::OutOfRange {
                value: version as i64,
            },
        ));
    }
    let flex = version >= 1;
    let producer_id = c.i64("producerId")?;
    let producer_epoch = c.i16("producerEpoch")?;
    let timeout_ms = c.i32("transactionTimeoutMs")?;
    let status = c.u8("transactionStatus")? as i8;
    let state = TxnState::from_byte(status).ok_or_else(|| {
        c.err(
            "transactionStatus",
            Problem::OutOfRange {
                value: status as i64,
            },
        )
    })?;
    let partitions = match c.schema_array_len(flex, "transactionPartitions")? {
        None => None,
        Some(n) => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let topic = string(&mut c, flex, "topic")?;
                let mut partition_ids = Vec::new();
                let ids = c.schema_array_len(flex, "partitionIds")?;
                if let Some(m) = ids {
                    // m <= remaining bytes; each id takes four.
                    partition_ids.reserve(m.min(c.remaining() / 4));
                    for _ in 0..m {
                        partition_ids.push(c.i32("partitionId")?);
                    }
                }
                if flex {
                    c.tagged_fields(|_, _| {})?;
                }
                v.push(TxnTopicPartitions {
                    topic,
                    partition_ids,
                    null_partition_ids: ids.is_none(),
                });
            }
            Some(v)
        }
    };
    let last_update_ms = c.i64("transactionLastUpdateTimestampMs")?;
    let start_ms = c.i64("transactionStartTimestampMs")?;
    let (mut previous_producer_id, mut next_producer_id, mut client_transaction_version) =
        (-1i64, -1i64, 0i16);
    let mut next_producer_epoch = -1i16;
    if flex {
        c.tagged_fields(|tag, b| match (tag, b.len()) {
            (0, 8) => previous_producer_id = i64::from_be_bytes(b.try_into().unwrap_or([0; 8])),
            (1, 8) => next_producer_id = i64::from_be_bytes(b.try_into().unwrap_or([0; 8])),
            (2, 2) => client_transaction_version = i16::from_be_bytes([b[0], b[1]]),
            (3, 2) => next_producer_epoch = i16::from_be_bytes([b[0], b[1]]),
            _ => {}
        })?;
    }
    Ok(Some(TxnLogValue {
        version,
        producer_id,
        previous_producer_id,
        next_producer_id,
        producer_epoch,
        next_producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
        client_transaction_version,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// v1 value with one topic and the three known tagged fields, plus an unknown tag.
    fn v1_value() -> Vec<u8> {
        let mut v = vec![0, 1];
        v.extend_from_slice(&42i64.to_be_bytes());
        v.extend_from_slice(&3i16.to_be_bytes());
        v.extend_from_slice(&60_000i32.to_be_bytes());
        v.push(1); // Ongoing
        v.push(2); // one topic
        v.push(4);
        v.extend_from_slice(b"foo");
        v.push(3); // two partitions
        v.extend_from_slice(&0i32.to_be_bytes());
        v.extend_from_slice(&7i32.to_be_bytes());
        v.push(0); // topic tagged fields
        v.extend_from_slice(&1000i64.to_be_bytes());
        v.extend_from_slice(&900i64.to_be_bytes());
        v.push(4); // four tagged fields
        v.extend_from_slice(&[0, 8]);
        v.extend_from_slice(&41i64.to_be_bytes());
        v.extend_from_slice(&[1, 8]);
        v.extend_from_slice(&43i64.to_be_bytes());
        v.extend_from_slice(&[2, 2, 0, 2]);
        v.extend_from_slice(&[9, 1, 0xff]);
        v
    }

    #[test]
    fn next_producer_epoch_tag_3() {
        let mut bytes = v1_value();
        // five tagged fields: add NextProducerEpoch (tag 3, int16) = 7
        let n = bytes.len();
        let at = n - 3 - 4 - 10 - 10 - 1;
        assert_eq!(bytes[at], 4);
        bytes[at] = 5;
        bytes.extend_from_slice(&[3, 2, 0, 7]);
        let v = parse_value(Some(&bytes)).unwrap().unwrap();
        assert_eq!(v.next_producer_epoch, 7);
        assert_eq!(v.client_transaction_version, 2);
        let plain = v1_value();
        let v = parse_value(Some(&plain)).unwrap().unwrap();
        assert_eq!(v.next_producer_epoch, -1);
    }

    #[test]
    fn v1_with_tagged_fields() {
        let bytes = v1_value();
        let v = parse_value(Some(&bytes)).unwrap().unwrap();
        assert_eq!(v.version, 1);
        assert_eq!(
            (v.producer_id, v.previous_producer_id, v.next_producer_id),
            (42, 41, 43)
        );
        assert_eq!((v.producer_epoch, v.timeout_ms), (3, 60_000));
        assert_eq!(v.state, TxnState::Ongoing);
        assert_eq!((v.last_update_ms, v.start_ms), (1000, 900));
        assert_eq!(v.client_transaction_version, 2);
        assert!(v.lists("foo", 7) && v.lists("foo", 0) && !v.lists("foo", 1));
        assert!(!v.lists("bar", 0));
        // every truncation is an error, never a panic
        for n in 0..bytes.len() {
            assert!(parse_value(Some(&bytes[..n])).is_err(), "prefix {n}");
        }
    }

    /// A null topic and a null partition id array decode (as `None` and an empty list,
    /// flagged): refusing them is the coordinator's load's business, not the schema's.
    #[test]
    fn null_topic_and_null_partition_ids_are_flagged() {
        let mut v = vec![0, 0];
        v.extend_from_slice(&5i64.to_be_bytes());
        v.extend_from_slice(&1i16.to_be_bytes());
        v.extend_from_slice(&60_000i32.to_be_bytes());
        v.push(4); // CompleteCommit
        v.extend_from_slice(&2i32.to_be_bytes()); // two topics
        v.extend_from_slice(&(-1i16).to_be_bytes()); // null topic
        v.extend_from_slice(&1i32.to_be_bytes());
        v.extend_from_slice(&3i32.to_be_bytes());
        v.extend_from_slice(&1i16.to_be_bytes());
        v.push(b'b');
        v.extend_from_slice(&(-1i32).to_be_bytes()); // null partition ids
        v.extend_from_slice(&[0; 16]);
        let parsed = parse_value(Some(&v)).unwrap().unwrap();
        let tps = parsed.partitions.unwrap();
        assert_eq!(tps[0].topic, None);
        assert_eq!(
            (tps[0].partition_ids.clone(), tps[0].null_partition_ids),
            (vec![3], false)
        );
        assert_eq!(tps[1].topic.as_deref(), Some("b"));
        assert_eq!(
            (tps[1].partition_ids.clone(), tps[1].null_partition_ids),
            (vec![], true)
        );
    }

    #[test]
    fn keys_tombstones_and_bad_values() {
        assert_eq!(
            parse_key(&[0, 3, 0, 0]).unwrap(),
            LogKey::Unknown { version: 3 }
        );
        match parse_key(&[0, 0, 0, 1, b'x']).unwrap() {
            LogKey::Transaction(k) => assert_eq!(k.transactional_id.as_deref(), Some("x")),
            other => panic!("{other:?}"),
        }
        assert!(parse_key(&[0, 0, 0, 9, b'x']).is_err());
        assert_eq!(parse_value(None).unwrap(), None);
        assert!(parse_value(Some(&[0, 0, 1])).is_err());
        assert!(parse_value(Some(&[0, 2])).is_err());
        // unknown state byte
        let mut v = vec![0, 0];
        v.extend_from_slice(&[0; 14]);
        v.push(8);
        let e = parse_value(Some(&v)).unwrap_err();
        assert_eq!(e.field, "transactionStatus");
        // absurd array count is refused before allocating
        let mut v = vec![0, 0];
        v.extend_from_slice(&[0; 14]);
        v.push(1);
        v.extend_from_slice(&i32::MAX.to_be_bytes());
        let e = parse_value(Some(&v)).unwrap_err();
        assert_eq!(e.field, "transactionPartitions");
    }
}
