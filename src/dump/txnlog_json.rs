//! `__transaction_state` records as Kafka 4.x's `DumpLogSegments --transaction-log-decoder`
//! prints them (`TransactionLogMessageParser`: the generated JSON converters of
//! `TransactionLogKey`/`TransactionLogValue`; shapes from `DumpLogSegmentsTest`):
//!
//! * key → `{"type":"0","data":{"transactionalId":"…"}}` (the type is the key's apiKey);
//! * value → `{"version":"<v>","data":{…}}` with the fields in schema order; the tagged
//!   fields of v1 (`previousProducerId`, `nextProducerId`, `nextProducerEpoch`,
//!   `clientTransactionVersion`) only when they differ from their defaults; a null
//!   partition array prints `null`; the status is the raw int8 (not validated);
//! * tombstone → `<DELETE>`; another key type → `Unknown record type N at offset O, skipping.`
//!   and no value; an undecodable record → `Error at offset O, skipping. <why>`; a record
//!   without key → `Failed to decode message at offset O using the specified decoder (message
//!   had a missing key)`.
//!
//! The error sentences after `skipping.` are klogscan's (the Java tool prints the generated
//! reader's exception text).

use super::decoders::json_str;
use crate::read::format::txnlog::{self, LogKey, TxnLogValue};
use std::fmt::Write as _;

/// Byte position of `TransactionStatus` in a value (after version, producer id, epoch and
/// timeout: the same in v0 and v1).
const STATUS_AT: usize = 16;

/// Longest value text built (a crafted partition list could be huge).
const MAX_TEXT: usize = 4 << 20;

/// The key and value text of one record.
pub fn transaction_log_json(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> (Option<String>, Option<String>) {
    let Some(key) = key else {
        return (
            Some(format!(
                "Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
            )),
            None,
        );
    };
    let id = match txnlog::parse_key(key) {
        Ok(LogKey::Unknown { version }) => {
            return (
                Some(format!(
                    "Unknown record type {version} at offset {offset}, skipping."
                )),
                None,
            );
        }
        Ok(LogKey::Transaction(k)) => match k.transactional_id {
            Some(id) => id,
            None => {
                return (
                    Some(error(
                        offset,
                        "non-nullable field transactionalId was serialized as null",
                    )),
                    None,
                );
            }
        },
        Err(e) => return (Some(error(offset, &e.to_string())), None),
    };
    let key_s = format!(
        "{{\"type\":\"0\",\"data\":{{\"transactionalId\":{}}}}}",
        json_str(&id)
    );
    let Some(value) = value else {
        return (Some(key_s), Some("<DELETE>".into()));
    };
    match value_json(value) {
        Ok(v) => (Some(key_s), Some(v)),
        Err(e) => (Some(error(offset, &e)), None),
    }
}

fn error(offset: i64, why: &str) -> String {
    format!("Error at offset {offset}, skipping. {why}")
}

/// The value's JSON; the status byte is printed as stored, whatever it is.
fn value_json(value: &[u8]) -> Result<String, String> {
    let status = value.get(STATUS_AT).map(|&b| b as i8);
    let parsed = match txnlog::parse_value(Some(value)) {
        Ok(v) => v,
        Err(e) if e.field == "transactionStatus" && value.len() > STATUS_AT => {
            let mut patched = value.to_vec();
            patched[STATUS_AT] = 0;
            return match txnlog::parse_value(Some(&patched)) {
                Ok(Some(v)) => render(&v, status.unwrap_or(0)),
                Ok(None) => Err(e.to_string()),
                Err(e) => Err(e.to_string()),
            };
        }
        Err(e) => return Err(e.to_string()),
    };
    match parsed {
        Some(v) => render(&v, status.unwrap_or(0)),
        None => Ok("<DELETE>".into()),
    }
}

fn render(v: &TxnLogValue<'_>, status: i8) -> Result<String, String> {
    let flex = v.version >= 1;
    let mut s = String::with_capacity(256);
    let _ = write!(
        s,
        "{{\"version\":\"{}\",\"data\":{{\"producerId\":{}",
        v.version, v.producer_id
    );
    if flex && v.previous_producer_id != -1 {
        let _ = write!(s, ",\"previousProducerId\":{}", v.previous_producer_id);
    }
    if flex && v.next_producer_id != -1 {
        let _ = write!(s, ",\"nextProducerId\":{}", v.next_producer_id);
    }
    let _ = write!(s, ",\"producerEpoch\":{}", v.producer_epoch);
    if flex && v.next_producer_epoch != -1 {
        let _ = write!(s, ",\"nextProducerEpoch\":{}", v.next_producer_epoch);
    }
    let _ = write!(
        s,
        ",\"transactionTimeoutMs\":{},\"transactionStatus\":{status},\"transactionPartitions\":",
        v.timeout_ms
    );
    match &v.partitions {
        None => s.push_str("null"),
        Some(ps) => {
            s.push('[');
            for (i, tp) in ps.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                let topic = tp.topic.as_deref().map_or("null".to_string(), json_str);
                let ids: Vec<String> = tp.partition_ids.iter().map(i32::to_string).collect();
                let _ = write!(
                    s,
                    "{{\"topic\":{topic},\"partitionIds\":[{}]}}",
                    ids.join(",")
                );
                if s.len() > MAX_TEXT {
                    return Err(format!(
                        "transactionPartitions: decoded text above {MAX_TEXT} bytes"
                    ));
                }
            }
            s.push(']');
        }
    }
    let _ = write!(
        s,
        ",\"transactionLastUpdateTimestampMs\":{},\"transactionStartTimestampMs\":{}",
        v.last_update_ms, v.start_ms
    );
    if flex && v.client_transaction_version != 0 {
        let _ = write!(
            s,
            ",\"clientTransactionVersion\":{}",
            v.client_transaction_version
        );
    }
    s.push_str("}}");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "testkit")]
    use crate::testkit::txnlog::{TxnValue, key};

    /// The exact lines of `DumpLogSegmentsTest.testTransactionLogMessageParser`.
    #[cfg(feature = "testkit")]
    #[test]
    fn kafka_test_lines() {
        let (k, v) = transaction_log_json(
            Some(&key("txnId")),
            Some(
                &TxnValue::new(123, 0, 0)
                    .partitions(&[])
                    .times(0, 0)
                    .timeout(0)
                    .encode(),
            ),
            0,
        );
        assert_eq!(
            k.as_deref(),
            Some(r#"{"type":"0","data":{"transactionalId":"txnId"}}"#)
        );
        assert_eq!(
            v.as_deref(),
            Some(
                r#"{"version":"0","data":{"producerId":123,"producerEpoch":0,"transactionTimeoutMs":0,"transactionStatus":0,"transactionPartitions":[],"transactionLastUpdateTimestampMs":0,"transactionStartTimestampMs":0}}"#
            )
        );
        let v1 = TxnValue::new(12, 2, 0)
            .partitions(&[("topic1", &[0, 1, 2]), ("topic2", &[3, 4, 5])])
            .times(123, 13)
            .timeout(14)
            .v1(11, 10, 0)
            .encode();
        let (_, v) = transaction_log_json(Some(&key("txnId")), Some(&v1), 0);
        assert_eq!(
            v.as_deref(),
            Some(
                r#"{"version":"1","data":{"producerId":12,"previousProducerId":11,"nextProducerId":10,"producerEpoch":2,"transactionTimeoutMs":14,"transactionStatus":0,"transactionPartitions":[{"topic":"topic1","partitionIds":[0,1,2]},{"topic":"topic2","partitionIds":[3,4,5]}],"transactionLastUpdateTimestampMs":123,"transactionStartTimestampMs":13}}"#
            )
        );
        let (_, v) = transaction_log_json(Some(&key("txnId")), None, 0);
        assert_eq!(v.as_deref(), Some("<DELETE>"));
    }

    /// Tagged fields at non-default values (NextProducerEpoch, ClientTransactionVersion),
    /// a null partition array and an unknown status byte.
    #[cfg(feature = "testkit")]
    #[test]
    fn tagged_fields_null_array_and_raw_status() {
        let v = TxnValue::new(5, 32767, 9)
            .null_partitions()
            .times(1, -1)
            .v1(-1, 6, 2)
            .next_epoch(0)
            .encode();
        let (_, v) = transaction_log_json(Some(&key("a")), Some(&v), 3);
        assert_eq!(
            v.as_deref(),
            Some(
                r#"{"version":"1","data":{"producerId":5,"nextProducerId":6,"producerEpoch":32767,"nextProducerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":9,"transactionPartitions":null,"transactionLastUpdateTimestampMs":1,"transactionStartTimestampMs":-1,"clientTransactionVersion":2}}"#
            )
        );
    }

    #[test]
    fn unknown_type_missing_key_and_errors() {
        assert_eq!(
            transaction_log_json(Some(&[0x7f, 0xff]), Some(&[]), 0),
            (
                Some("Unknown record type 32767 at offset 0, skipping.".into()),
                None
            )
        );
        assert_eq!(
            transaction_log_json(None, None, 4).0.as_deref(),
            Some(
                "Failed to decode message at offset 4 using the specified decoder (message had a missing key)"
            )
        );
        let (k, v) = transaction_log_json(Some(&[0, 0, 0, 1, b'x']), Some(&[0, 0, 1]), 7);
        assert!(k.unwrap().starts_with("Error at offset 7, skipping. "));
        assert_eq!(v, None);
        // never panics on noise
        for n in 0..64u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
            let _ = transaction_log_json(Some(&bytes), Some(&bytes), 0);
            let _ = transaction_log_json(Some(&[0, 0, 0, 1, b'x']), Some(&bytes), 0);
        }
    }
}
