//! The record format as Kafka's clients-side unit tests state it, byte by byte
//! (apache/kafka trunk of 2024-10: clients/src/test/java/org/apache/kafka/common/utils/
//! `ByteUtilsTest`, clients/src/test/java/org/apache/kafka/common/record/
//! `DefaultRecordBatchTest`, `DefaultRecordTest`, `MemoryRecordsTest`, `FileRecordsTest`,
//! `LegacyRecordTest` and `SimpleLegacyRecordTest`), the methods no earlier test cited.
//! Each test reads what the Kafka test builds with the format crate's views and asserts
//! Kafka's answer — the value, or the refusal with the structure, field and byte position
//! klogscan names — with a near miss that flips it. What a whole segment makes of the same
//! bytes (`scan`, `verify`, `dump`) is `tests/suite/kafka_fmtaudit_cases/`.

mod batches;
mod framing;
mod legacy;
mod records;
mod varints;

use klogscan_format::bytes::{put_varint, put_varlong};

// ----- shared: a v2 batch and its records, encoded ---------------------------------------

/// A v2 batch of `count` records (`records` already encoded), its fields as given and its
/// CRC computed.
#[allow(clippy::too_many_arguments)]
pub fn batch(
    base_offset: i64,
    epoch: i32,
    attributes: i16,
    last_offset_delta: i32,
    base_ts: i64,
    max_ts: i64,
    producer: (i64, i16, i32),
    count: i32,
    records: &[u8],
) -> Vec<u8> {
    let mut b = base_offset.to_be_bytes().to_vec();
    b.extend(((49 + records.len()) as i32).to_be_bytes());
    b.extend(epoch.to_be_bytes());
    b.push(2);
    b.extend([0; 4]);
    b.extend(attributes.to_be_bytes());
    b.extend(last_offset_delta.to_be_bytes());
    b.extend(base_ts.to_be_bytes());
    b.extend(max_ts.to_be_bytes());
    b.extend(producer.0.to_be_bytes());
    b.extend(producer.1.to_be_bytes());
    b.extend(producer.2.to_be_bytes());
    b.extend(count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// One record: key `k`, value `v`, no header, at the deltas given.
pub fn record(ts_delta: i64, offset_delta: i32, k: &[u8], v: &[u8]) -> Vec<u8> {
    let mut body = vec![0u8];
    put_varlong(&mut body, ts_delta);
    put_varint(&mut body, offset_delta);
    for f in [k, v] {
        put_varint(&mut body, f.len() as i32);
        body.extend_from_slice(f);
    }
    put_varint(&mut body, 0);
    let mut r = Vec::new();
    put_varint(&mut r, body.len() as i32);
    r.extend(body);
    r
}
