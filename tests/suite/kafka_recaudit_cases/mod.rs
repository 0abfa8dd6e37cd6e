//! How Kafka writes and reads control records and record batches, the test classes no
//! earlier klogscan test cited (clients/src/test/java/org/apache/kafka/common/record/,
//! apache/kafka trunk of 2024-10): `EndTransactionMarkerTest`, `ControlRecordTypeTest` and
//! `MemoryRecordsBuilderTest` (`ControlRecordUtilsTest`'s three methods were cited already;
//! there is no `AbortedTxnTest`). Each test writes the batch or control record a broker
//! would hold in a segment for the Kafka test's case, runs `scan`, `verify` and, where the
//! reading is the point, `dump`, and asserts what Kafka does with it — and a near miss
//! that flips the answer.
//!
//! What the tests hold klogscan to (clients/…/record/EndTransactionMarker.java,
//! ControlRecordType.java, MemoryRecordsBuilder.java; storage/…/log/LogSegment.java,
//! ProducerAppendInfo.java, UnifiedLog.java):
//! * `ControlRecordType.parseTypeId` needs a key of 4 bytes or more with a version of 0 or
//!   more (`InvalidRecordException`); a higher version is read as version 0, its extra bytes
//!   ignored; a type it does not know is `UNKNOWN`;
//! * `EndTransactionMarker.deserializeValue` first refuses a type other than COMMIT/ABORT
//!   (`IllegalArgumentException`), then a value under 6 bytes or of a negative version
//!   (`InvalidRecordException`); a higher version is read as version 0, extra bytes
//!   ignored. Neither checks for a null key or value: reading its size throws
//!   `NullPointerException`;
//! * the load decodes the first record of every control batch with a producer id
//!   (`LogSegment.recover` → `updateProducerState` → `ProducerAppendInfo.append`, and the
//!   rebuild's `loadProducersFromRecords`); `recover` counts the batch valid before that
//!   update and catches only `InvalidRecordException` (and `CorruptRecordException`): it
//!   keeps the batch and truncates after it, and the next replay reading it throws; any
//!   other throw fails the load where it happens. A control batch without a producer id is
//!   not decoded by the load;
//! * `MemoryRecordsBuilder` refuses, for the bytes it writes: a transactional batch without
//!   a producer id, a producer id with epoch -1 or (on data) a negative base sequence, an
//!   end-transaction marker in a batch that is not transactional or not a control batch,
//!   a LEADER_CHANGE without a partition leader epoch, offsets that do not increase, and
//!   zstd below magic 2. A LogAppendTime batch keeps its first record's timestamp as the
//!   base and the append time as maxTimestamp; a CreateTime batch's maxTimestamp is its
//!   largest record timestamp; a delete horizon is the base timestamp.
//!
//! Where klogscan disagreed with Kafka the test asserts Kafka's answer; the fix is in
//! `src/` (docs/testing.md, "Kafka test audit: control records and the batch builder").
#![cfg(feature = "testkit")]

use klogscan::finding::Kind;
use klogscan::testkit::{Batch, BatchSpec, LogDirBuilder, PartitionBuilder, Producer, RecordSpec};

mod builder;
mod control_types;
mod markers;
mod timestamps;

// ----- helpers ----------------------------------------------------------------------------

/// The transactional producer of the Kafka tests (`pid 9809, epoch 15`).
fn txn() -> Producer {
    Producer::transactional(9809, 15)
}

use crate::common::one_log_dir::Written;

impl Written {
    /// `verify`'s load failure, `(exception, offset)`.
    fn load_failure(&self) -> Option<(String, Option<i64>)> {
        let v = self.verify();
        let f = v.partitions[0].prediction.load_failure.as_ref()?;
        Some((f.exception.clone(), f.offset))
    }

    /// `verify`'s truncation at load: `(offset truncated to, first offset removed)`.
    fn truncation(&self) -> Option<(i64, Option<i64>)> {
        let v = self.verify();
        let t = v.partitions[0].prediction.truncation.as_ref()?;
        Some((t.offset, t.first_removed_offset))
    }

    /// The messages of `scan`'s findings of `kind`.
    fn messages(&self, kind: Kind) -> Vec<String> {
        let r = self.scan(false);
        (r.findings.iter())
            .filter(|f| f.kind == kind)
            .map(|f| f.message.clone())
            .collect()
    }

    /// `dump --deep-iteration` of the partition's segments: the record lines (`| …`).
    fn dump_records(&self) -> Vec<String> {
        self.dump_lines("|")
    }
}

/// Write `p` as broker 1's only partition in a log dir built by `ld`.
fn write(ld: LogDirBuilder, p: PartitionBuilder) -> Written {
    Written::write(ld, p)
}

/// A log dir shut down cleanly.
fn clean() -> LogDirBuilder {
    LogDirBuilder::new(1)
}

/// A log dir after a crash whose recovery point of `orders-0` is 0: the next start
/// recovers the whole partition (`LogSegment.recover` reads every batch).
fn crashed() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point(TOPIC, 0, 0)
}

/// The data partition of the cases.
const TOPIC: &str = "orders";

/// A control key: `version`, `type`, then `extra` bytes.
fn key(version: i16, type_id: i16, extra: &[u8]) -> Option<Vec<u8>> {
    let mut k = version.to_be_bytes().to_vec();
    k.extend_from_slice(&type_id.to_be_bytes());
    k.extend_from_slice(extra);
    Some(k)
}

/// An end-transaction marker value: `version`, `coordinatorEpoch`, then `extra` bytes.
fn value(version: i16, coordinator_epoch: i32, extra: &[u8]) -> Option<Vec<u8>> {
    let mut v = version.to_be_bytes().to_vec();
    v.extend_from_slice(&coordinator_epoch.to_be_bytes());
    v.extend_from_slice(extra);
    Some(v)
}

/// `orders-0`: two records of [`txn`]'s transaction (0–1), a control batch at 2 holding one
/// record of `key` and `value`, under `producer` (its id, epoch and transactional bit),
/// then a plain record at 3.
fn txn_then_control(
    producer: Producer,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    p.append(Batch::new(txn()).records(2));
    let (base_offset, base_timestamp) = (p.next_offset(), p.now());
    p.append_spec(BatchSpec {
        base_offset,
        partition_leader_epoch: 0,
        transactional: producer.transactional,
        control: true,
        base_timestamp,
        producer_id: producer.id,
        producer_epoch: producer.epoch,
        records: vec![RecordSpec {
            key,
            value,
            ..RecordSpec::default()
        }],
        ..BatchSpec::default()
    });
    p.append(Batch::new(Producer::PLAIN).records(1));
    p
}

/// A control batch of the KRaft leader at `base_offset` and partition leader epoch
/// `epoch`, holding one record of `type_id` and `value` (no producer id, uncompressed).
fn raft_control(base_offset: i64, epoch: i32, type_id: i16, value: Vec<u8>) -> BatchSpec {
    BatchSpec {
        base_offset,
        partition_leader_epoch: epoch,
        control: true,
        base_timestamp: 1_700_000_000_000,
        records: vec![RecordSpec {
            key: key(0, type_id, &[]),
            value: Some(value),
            ..RecordSpec::default()
        }],
        ..BatchSpec::default()
    }
}

/// [`txn_then_control`] under [`txn`], after a crash (the load recovers it all).
fn marker_case(key: Option<Vec<u8>>, value: Option<Vec<u8>>) -> Written {
    write(crashed(), txn_then_control(txn(), key, value))
}
