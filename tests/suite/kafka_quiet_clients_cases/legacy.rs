//! Magic-1 compressed wrappers that non-Java clients sent to brokers of the message-format-v1
//! era, as the leader kept them in place: the client's inner messages (relative offsets 0..n-1,
//! their own timestamps and attributes) under a wrapper whose offset the leader rewrote, and
//! whose timestamp it rewrote — or, on a 0.10.0 broker, left as the client wrote it.

use super::{before_crc, dump_lines, write_and_check};
use klogscan::testkit::encode::{LegacyInner, LegacySpec, legacy_wrapper};
use klogscan::testkit::{BatchInfo, Codec, LogDirBuilder, PartitionBuilder};
use std::path::PathBuf;

const T0: i64 = 1_472_000_000_000; // 2016-08-24, the 0.10.0 era

/// `n` inner messages with null keys, values `v{i}`, timestamps `T0 + i * 100` from `first`.
fn inner(first: i64, n: usize, newest_first: bool) -> Vec<LegacyInner> {
    (0..n)
        .map(|i| {
            let age = if newest_first { n - 1 - i } else { i };
            LegacyInner {
                timestamp: first + age as i64 * 100,
                key: None,
                value: Some(format!("v{i}").into_bytes()),
            }
        })
        .collect()
}

/// Append a legacy entry as raw bytes, with its manifest row (first and last offset, the
/// wrapper's timestamp as its maxTimestamp: what `LogSegment.recover` and the time index take).
fn push(p: &mut PartitionBuilder, w: &LegacySpec, first: i64, codec: Codec) {
    let bytes = w.encode();
    let info = BatchInfo {
        base_offset: first,
        last_offset: w.offset,
        position: 0,
        size: bytes.len() as u64,
        file: PathBuf::new(),
        segment_base: 0,
        magic: 1,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: (w.offset - first + 1) as i32,
        codec,
        transactional: false,
        control: None,
        coordinator_epoch: None,
        partition_leader_epoch: -1,
        first_timestamp: w.timestamp,
        max_timestamp: w.timestamp,
    };
    p.append_raw(bytes, info);
}

/// A wrapper the leader kept in place: the client's inner messages, the absolute last offset
/// written into the wrapper (`buffer.putLong(0, …)` in 0.10.0, `setLastOffset` since),
/// timestamp and attributes as given.
fn kept_wrapper(first: i64, msgs: &[LegacyInner], codec: Codec, ts: i64, attrs: u8) -> LegacySpec {
    let mut w = legacy_wrapper(1, codec, first, msgs, None);
    w.timestamp = ts;
    w.attributes = attrs;
    w
}

/// Kafka 0.10.0's leader, in the in-place path of a compressed magic-1 set, rewrote the
/// wrapper's offset but left its CreateTime timestamp as the client wrote it unless it
/// already was the inner maximum (apache/kafka tag 0.10.0.1,
/// `ByteBufferMessageSet.validateMessagesAndAssignOffsets`: `if (… CREATE_TIME && timestamp ==
/// maxTimestamp) crcUpdateNeeded = false`, no `putLong` of the timestamp; 0.10.1.0's
/// `LogValidator` writes `maxTimestamp` there). Non-Java clients do not write the maximum:
/// sarama and librdkafka take the first message's timestamp (IBM/sarama `produce_set.go`,
/// `buildRequest`: `compMsg.Timestamp = …Messages[0].Msg.Timestamp`; confluentinc/librdkafka
/// `src/rdkafka_msgset_writer.c`, `rd_kafka_msgset_writer_compress`: the outer message gets
/// `msetw_firstmsg.timestamp`), franz-go too (`pkg/kgo/sink.go`,
/// `seqRecBatch.appendToAsMessageSet`: `b.firstTimestamp`), and kafka-python writes 0
/// (dpkp/kafka-python `kafka/record/legacy_records.py`, `LegacyRecordBatchBuilder._maybe_compress`:
/// `timestamp=0`). All of them number the inner messages 0..n-1 (KIP-31), which keeps the
/// set in place. Consumers read each inner message's own CreateTime
/// (`AbstractLegacyRecordBatch`'s deep iterator); the wrapper's timestamp is the batch's
/// maxTimestamp for the time index and retention (`LogSegment.recover`, `largestTimestamp`).
/// `kafka-dump-log` prints the wrapper's timestamp on the entry line and each message's on
/// its record line.
#[test]
fn wrapper_timestamps_a_0_10_0_leader_left_as_the_client_wrote_them() {
    let mut p = PartitionBuilder::new("web-logs", 0);
    // sarama / librdkafka / franz-go: the first message's timestamp, messages in order
    let w0 = kept_wrapper(0, &inner(T0, 4, false), Codec::Gzip, T0, 1);
    push(&mut p, &w0, 0, Codec::Gzip);
    // kafka-python: timestamp 0
    let w1 = kept_wrapper(4, &inner(T0 + 1000, 3, false), Codec::SnappyXerial, 0, 2);
    push(&mut p, &w1, 4, Codec::SnappyXerial);
    // an application's own timestamps, newest first: the first is the maximum
    let w2 = kept_wrapper(7, &inner(T0 + 2000, 3, true), Codec::Gzip, T0 + 2200, 1);
    push(&mut p, &w2, 7, Codec::Gzip);
    let w3 = kept_wrapper(10, &inner(T0 + 3000, 5, false), Codec::Lz4, T0 + 3000, 3);
    push(&mut p, &w3, 10, Codec::Lz4);
    let q = write_and_check(LogDirBuilder::new(1).partition(p));
    q.assert_quiet();
    let dump = dump_lines(&q.segments(0));
    let size0 = w0.encode().len();
    assert_eq!(
        before_crc(&dump[0]),
        format!(
            "offset: 3 position: 0 CreateTime: {T0} size: {size0} magic: 1 compresscodec: gzip"
        )
    );
    assert_eq!(
        before_crc(&dump[4]),
        format!(
            "| offset: 3 CreateTime: {} keySize: -1 valueSize: 2 isValid: true",
            T0 + 300
        )
    );
    assert!(
        dump[4].ends_with('}'),
        "DumpLogSegments' stray brace: {}",
        dump[4]
    );
    assert_eq!(
        before_crc(&dump[5]),
        format!(
            "offset: 6 position: {size0} CreateTime: 0 size: {} magic: 1 compresscodec: snappy",
            w1.encode().len()
        )
    );
    assert_eq!(
        before_crc(&dump[6]),
        format!(
            "| offset: 4 CreateTime: {} keySize: -1 valueSize: 2 isValid: true",
            T0 + 1000
        )
    );
}

/// A LogAppendTime topic on a message-format-v1 broker: the leader stamps the kept wrapper
/// with its clock and the LogAppendTime attribute and leaves the client's inner messages as
/// they are — CreateTime attribute, the client's timestamps (0.10.0.1
/// `ByteBufferMessageSet.validateMessagesAndAssignOffsets`: `putLong(timestampOffset, now)` and
/// `updateAttributes` on the wrapper only; trunk `LogValidator.validateMessagesAndAssignOffsetsCompressed`:
/// `firstBatch.setMaxTimestamp(LOG_APPEND_TIME, now)`). Only a rebuilt set gets the broker's
/// time in every inner message (`MemoryRecordsBuilder.appendLegacyRecord`). Readers give every
/// inner message the wrapper's time and type (`AbstractLegacyRecordBatch`'s deep iterator, for
/// a magic-1 wrapper of type LOG_APPEND_TIME), which is what `kafka-dump-log` prints. The
/// clients are those of the case above (sarama, librdkafka, franz-go, kafka-python), whose
/// inner messages carry attribute 0.
#[test]
fn log_append_time_wrapper_kept_in_place_over_create_time_messages() {
    let mut p = PartitionBuilder::new("audit-v1", 0);
    let now = T0 + 5_000;
    // the clients' clocks: one three hours behind, one at 0 (kafka-python's wrapper time)
    let w0 = kept_wrapper(0, &inner(T0 - 10_800_000, 3, false), Codec::Gzip, now, 0x09);
    push(&mut p, &w0, 0, Codec::Gzip);
    let w1 = kept_wrapper(
        3,
        &inner(T0, 2, true),
        Codec::SnappyXerial,
        now + 1000,
        0x0a,
    );
    push(&mut p, &w1, 3, Codec::SnappyXerial);
    let q = write_and_check(LogDirBuilder::new(1).partition(p));
    q.assert_quiet();
    let dump = dump_lines(&q.segments(0));
    assert_eq!(
        before_crc(&dump[0]),
        format!(
            "offset: 2 position: 0 LogAppendTime: {now} size: {} magic: 1 compresscodec: gzip",
            w0.encode().len()
        )
    );
    assert_eq!(
        before_crc(&dump[1]),
        format!("| offset: 0 LogAppendTime: {now} keySize: -1 valueSize: 2 isValid: true")
    );
    assert_eq!(
        before_crc(&dump[5]),
        format!(
            "| offset: 3 LogAppendTime: {} keySize: -1 valueSize: 2 isValid: true",
            now + 1000
        )
    );
}
