//! v2 batches whose records' timestamps differ from the Java producer's: timestamps chosen by
//! the application, out of order within a batch (every non-Java client takes the first
//! record's as the batch's base), and batches without any timestamp, converted by the leader
//! from an old client's magic-0 messages.

use super::{before_crc, dump_lines, write_and_check};
use klogscan::testkit::{Batch, Codec, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// Record timestamps set by the application, older than the batch's first record: every
/// non-Java client takes the first record's timestamp as baseTimestamp and writes the others'
/// deltas from it, negative ones included — sarama (IBM/sarama `produce_set.go`,
/// `produceSet.add`: `TimestampDelta: timestamp.Sub(…FirstTimestamp)`; `buildRequest` sets
/// MaxTimestamp from the largest delta, at least the first), franz-go (`pkg/kgo/sink.go`,
/// `recBatch` `firstTimestamp` / `maxTimestampDelta`, `promisedRec.appendTo`), librdkafka
/// (`src/rdkafka_msgset_writer.c`, `rd_kafka_msgset_writer_write_msg_v2`: `rkm_timestamp -
/// msetw_firstmsg.timestamp`), kafka-go (`protocol/record_v2.go`, `writeToVersion2`). The
/// leader keeps baseTimestamp and the records and sets maxTimestamp to the largest record
/// timestamp (`LogValidator.assignOffsetsNonCompressed`, `setMaxTimestamp` in the in-place
/// compressed path), which the time index follows (`LogSegment.append`). A batch whose later
/// records are all older keeps its first record's timestamp as maxTimestamp.
#[test]
fn record_timestamps_older_than_the_first_record() {
    let idem = Producer::idempotent(700, 0);
    let mut p = PartitionBuilder::new("telemetry", 0).segment_bytes(600);
    for i in 0..12i64 {
        let t = p.now();
        let codec = match i % 3 {
            0 => Codec::None,
            1 => Codec::Lz4,
            _ => Codec::Zstd,
        };
        // a device flushing late readings: first the newest, then older ones
        let b = Batch::new(if i % 2 == 0 { idem } else { Producer::PLAIN })
            .record(Rec::kv("d1", "now").at(t))
            .record(Rec::kv("d2", "late").at(t - 3_600_000))
            .record(Rec::kv("d3", "later").at(t + 250))
            .record(Rec::kv("d4", "day-old").at(t - 86_400_000))
            .codec(codec)
            .at(t);
        p.append(b);
    }
    // every later record older than the first: maxTimestamp is the first's
    let t = p.now();
    p.append(
        Batch::new(idem)
            .record(Rec::value("a").at(t))
            .record(Rec::value("b").at(t - 10))
            .record(Rec::value("c").at(t - 20))
            .at(t),
    );
    let q = write_and_check(LogDirBuilder::new(1).partition(p));
    assert!(q.manifest.partitions[0].segments.len() >= 3);
    q.assert_quiet();
    let m = &q.manifest.partitions[0];
    let last = m.batches.last().unwrap();
    assert_eq!(last.max_timestamp, last.first_timestamp);
    // kafka-dump-log: the batch's maxTimestamp, each record's own timestamp
    let seg = m.segments.last().unwrap().1.clone();
    let dump = dump_lines(&[seg]);
    let n = dump.len();
    assert!(before_crc(&dump[n - 4]).contains(&format!(" CreateTime: {t} size: ")));
    let want = [
        format!(
            "| offset: 48 CreateTime: {t} keySize: -1 valueSize: 1 sequence: 24 headerKeys: []"
        ),
        format!(
            "| offset: 49 CreateTime: {} keySize: -1 valueSize: 1 sequence: 25 headerKeys: []",
            t - 10
        ),
        format!(
            "| offset: 50 CreateTime: {} keySize: -1 valueSize: 1 sequence: 26 headerKeys: []",
            t - 20
        ),
    ];
    assert_eq!(dump[n - 3..], want);
}

/// A client too old to send timestamps — sarama with its `Config.Version` below 0.10
/// (`produce_set.go`, `produceSet.add` writes magic-0 messages), kafka-python with
/// `api_version` 0.9 (`kafka/record/legacy_records.py`, `LegacyRecordBatchBuilder` magic 0),
/// librdkafka with `api.version.request=false` and `broker.version.fallback` 0.9 — sends
/// magic 0; a leader whose log is v2 converts it (`LogValidator.convertAndAssignOffsetsNonCompressed`,
/// and `buildRecordsAndAssignOffsets` for a compressed set, which recompresses with the Java
/// codec): each record keeps `RecordBatch.NO_TIMESTAMP` (-1), so `MemoryRecordsBuilder` writes
/// baseTimestamp -1, deltas 0 and maxTimestamp -1. `LogSegment.append` adds no time index
/// entry for -1 (not above `maxTimestampSoFar`'s initial -1). Produce v0–v2 exist up to
/// Kafka 3.9 (KIP-896 removed them in 4.0), so such batches stay in logs written until then.
#[test]
fn old_clients_converted_to_v2_without_timestamps() {
    let no_ts = |s: &mut klogscan::testkit::BatchSpec| {
        s.base_timestamp = -1;
        for r in &mut s.records {
            r.timestamp_delta = 0;
        }
    };
    let mut p = PartitionBuilder::new("legacy-app", 0).leader_epoch(1);
    p.append(Batch::new(Producer::PLAIN).records(2));
    for i in 0..4 {
        let codec = if i % 2 == 0 { Codec::None } else { Codec::Gzip };
        p.append(
            Batch::new(Producer::PLAIN)
                .records(3)
                .codec(codec)
                .tweak(no_ts),
        );
    }
    p.append(Batch::new(Producer::idempotent(800, 0)).records(2));
    let q = write_and_check(LogDirBuilder::new(1).partition(p));
    q.assert_quiet();
    let dump = dump_lines(&q.segments(0));
    // batch 2 (offsets 2..4): the line after the first batch's line and its 2 records
    assert_eq!(
        before_crc(&dump[3]),
        format!(
            "baseOffset: 2 lastOffset: 4 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 \
             producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: false \
             deleteHorizonMs: OptionalLong.empty position: {} CreateTime: -1 size: 118 magic: 2 \
             compresscodec: none",
            q.manifest.partitions[0].batches[1].position
        )
    );
    assert_eq!(
        dump[4],
        "| offset: 2 CreateTime: -1 keySize: 5 valueSize: 7 sequence: -1 headerKeys: []"
    );
}
