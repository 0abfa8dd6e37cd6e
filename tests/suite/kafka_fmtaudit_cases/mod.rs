//! The record format as Kafka's clients-side unit tests state it, the methods no earlier
//! klogscan test cited (clients/src/test/java/org/apache/kafka/common/record/,
//! apache/kafka trunk of 2024-10): `DefaultRecordBatchTest`, `DefaultRecordTest`,
//! `ByteBufferLogInputStreamTest`, `MemoryRecordsTest`, `FileRecordsTest`, `LegacyRecordTest`,
//! `SimpleLegacyRecordTest` and `AbstractLegacyRecordBatchTest`, where what they build can
//! sit in a segment. Byte-level cases (`ByteUtilsTest`'s varints, the header view, sequence
//! arithmetic, one record's refusals with their field and position) are the format
//! crate's `tests/kafka_fmtaudit/`; here each case writes the batch a
//! broker would hold for the Kafka test's case into `orders-0`, runs `scan` (plain and
//! `--deep`), `verify` and, where the reading is the point, `dump`, and asserts what
//! Kafka's readers do with it — with a near miss that flips the answer.
//!
//! What the tests hold klogscan to (clients/…/record/DefaultRecordBatch.java,
//! DefaultRecord.java, ByteBufferLogInputStream.java, FileLogInputStream.java;
//! storage/…/log/LogSegment.java, ProducerAppendInfo.java, LogValidator.java):
//! * `LogSegment.recover` checks each batch's size and CRC (`DefaultRecordBatch.ensureValid`)
//!   and reads no record of a data batch; the CRC-32C covers the bytes from the attributes
//!   on, so the base offset, batch length, partition leader epoch and magic can change
//!   under it (`setLastOffset`, `setPartitionLeaderEpoch`);
//! * `DefaultRecord.readFrom` (consumers, `dump`) and `readPartiallyFrom` (the leader's
//!   `skipKeyValueIterator` over a compressed batch) refuse a record whose key, value or
//!   header runs past its bytes, a negative header count or header key size, and a varlong
//!   cut short — `InvalidRecordException`, which klogscan reports as `invalid_batch` with
//!   `--deep` at the batch, naming the record field;
//! * a batch of no record (`writeEmptyHeader`, what the cleaner retains for a producer)
//!   carries the producer's sequence range all the same (`lastSequence` is
//!   `baseSequence + lastOffsetDelta`), and its sequences wrap past `Integer.MAX_VALUE` to 0;
//! * `FileLogInputStream` (the broker's reader) has no size limit and checks no magic; the
//!   client's `ByteBufferLogInputStream` refuses a batch above its limit or of a magic
//!   outside 0–2;
//! * a legacy message is valid by its size and CRC (`LegacyRecord.isValid`), its key and value
//!   read by their own lengths.
//!
//! Tests marked `#[ignore = "divergence: …"]` assert Kafka's answer where klogscan's lies
//! outside the format layer (docs/testing.md, "Kafka test audit: the record format").
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::testkit::{BatchInfo, BatchSpec, Codec, LogDirBuilder, PartitionBuilder, RecordSpec};

mod batches;
mod cleaned;
mod legacy;
mod records;
mod streams;

/// The data partition of the cases.
const TOPIC: &str = "orders";

use crate::common::one_log_dir::Written;

impl Written {
    /// `(kind, offset)` of every finding at warning or above of `scan` (`--deep` when
    /// `deep`).
    fn loud_kinds(&self, deep: bool) -> Vec<(Kind, Option<i64>)> {
        let r = self.scan(deep);
        (r.findings.iter())
            .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
            .map(|f| (f.kind, f.offset))
            .collect()
    }

    /// The one `invalid_batch` finding of `scan --deep`, after asserting that it is the
    /// only finding at warning or above and that plain `scan` says nothing.
    fn only_deep_invalid(&self) -> Finding {
        assert_eq!(self.loud_kinds(false), vec![], "plain scan");
        let r = self.scan(true);
        let loud: Vec<&Finding> = (r.findings.iter())
            .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
            .collect();
        assert!(
            loud.len() == 1 && loud[0].kind == Kind::InvalidBatch,
            "{:#?}",
            r.findings
        );
        loud[0].clone()
    }

    /// `dump --deep-iteration` of the partition's segments: (batch lines, record lines).
    fn dump(&self) -> (Vec<String>, Vec<String>) {
        (self.dump_lines("baseOffset:"), self.dump_lines("|"))
    }
}

/// Write `p` as broker 1's only partition, shut down cleanly.
fn write(p: PartitionBuilder) -> Written {
    write_in(LogDirBuilder::new(1), p)
}

/// Write `p` as broker 1's only partition after a crash whose recovery point is 0: the
/// next start recovers the whole partition.
fn write_crashed(p: PartitionBuilder) -> Written {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 0, 0);
    write_in(ld, p)
}

fn write_in(ld: LogDirBuilder, p: PartitionBuilder) -> Written {
    Written::write(ld, p)
}

/// The manifest row of `spec` (what `PartitionBuilder::append_spec` records), for an entry
/// whose bytes a case changes after encoding.
fn info_of(spec: &BatchSpec, size: usize) -> BatchInfo {
    BatchInfo {
        base_offset: spec.base_offset,
        last_offset: spec.last_offset(),
        position: 0,
        size: size as u64,
        file: Default::default(),
        segment_base: 0,
        magic: 2,
        producer_id: spec.producer_id,
        producer_epoch: spec.producer_epoch,
        base_sequence: spec.base_sequence,
        record_count: spec.records_count(),
        codec: spec.codec,
        transactional: spec.transactional,
        control: None,
        coordinator_epoch: None,
        partition_leader_epoch: spec.partition_leader_epoch,
        first_timestamp: spec.base_timestamp,
        max_timestamp: spec.max_timestamp(),
    }
}

/// Append `spec` encoded, then changed by `edit` (its CRC left as computed before).
fn append_edited(p: &mut PartitionBuilder, spec: &BatchSpec, edit: impl Fn(&mut Vec<u8>)) {
    let mut bytes = spec.encode();
    edit(&mut bytes);
    let info = info_of(spec, bytes.len());
    p.append_raw(bytes, info);
}

/// A plain record `key`/`value` at `offset_delta`, `timestamp_delta` after the base.
fn rec(offset_delta: i32, timestamp_delta: i64, key: &str, value: &str) -> RecordSpec {
    RecordSpec {
        offset_delta,
        timestamp_delta,
        key: Some(key.as_bytes().to_vec()),
        value: Some(value.as_bytes().to_vec()),
        ..RecordSpec::default()
    }
}

/// A plain batch at `base_offset` and `base_timestamp` holding `records`, compressed with
/// `codec`.
fn plain(
    base_offset: i64,
    base_timestamp: i64,
    codec: Codec,
    records: Vec<RecordSpec>,
) -> BatchSpec {
    BatchSpec {
        base_offset,
        partition_leader_epoch: 0,
        codec,
        base_timestamp,
        records,
        ..BatchSpec::default()
    }
}
