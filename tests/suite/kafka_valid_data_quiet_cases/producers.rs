//! Producers as Kafka's clients write them and a leader accepts them: idempotent producers
//! over many segments, a producer id that expired and came back, KIP-360 epoch bumps,
//! every codec, headers and nulls, a `LogAppendTime` topic.

use super::write_and_check;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::encode_snapshot;
use klogscan::testkit::{
    Batch, Codec, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
};

/// One day: `producer.id.expiration.ms`'s default (`ProducerStateManagerConfig`).
const PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

/// Three idempotent producers interleaved over seven or so segments, each batch in sequence,
/// offset-index entries every 300 bytes, a producer snapshot at every roll and at the log end.
/// `UnifiedLog.roll` takes `ProducerStateManager.takeSnapshot` at the new segment's base
/// (`UnifiedLogTest.testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint`,
/// `testProducerSnapshotAfterSegmentRollOnAppend`), `LogSegment.append` adds an index entry once
/// more than `index.interval.bytes` were written since the last one, and
/// `ProducerAppendInfo.checkSequence` accepts each batch (`lastSeq + 1`).
#[test]
fn idempotent_producers_across_many_segments() {
    let ps = [
        Producer::idempotent(1000, 0),
        Producer::idempotent(1001, 3),
        Producer::idempotent(2000, 0),
    ];
    let mut p = PartitionBuilder::new("events", 0)
        .segment_bytes(800)
        .broker_files(PartitionFileOptions::default().index_interval(300));
    for i in 0..60 {
        p.append(Batch::new(ps[i % 3]).records(1 + i % 4));
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    assert!(q.manifest.partitions[0].segments.len() >= 6);
    q.assert_quiet();
    let v = &q.verify.partitions[0].prediction.producer_state;
    assert_eq!(v.producers, Some(3));
}

/// A producer id idle for longer than `producer.id.expiration.ms` is removed by the periodic
/// check (`UnifiedLog.removeExpiredProducers` → `ProducerStateManager.removeExpiredProducers`,
/// `isProducerExpired`; `UnifiedLogTest.testPeriodicProducerIdExpiration`), so the snapshot
/// of the next roll leaves it out; when it writes again the leader finds no entry and
/// `ProducerAppendInfo.checkSequence` accepts any sequence ("no current producer epoch …
/// accept writes with any sequence number"). Producer 7 resumes at sequence 57 after a
/// 25-hour pause; producer 8 resumes in sequence.
#[test]
fn expired_producer_id_comes_back_with_any_sequence() {
    let p7 = Producer::idempotent(7, 0);
    let p8 = Producer::idempotent(8, 0);
    let mut p = PartitionBuilder::new("events", 0);
    for _ in 0..5 {
        p.append(Batch::new(p7).records(1));
    }
    p.append(Batch::new(p8).records(2));
    p.advance_time(PRODUCER_ID_EXPIRATION_MS + 3_600_000);
    p.roll();
    let roll_base = p.next_offset();
    p.append(Batch::new(p7).records(3).sequence(57));
    p.append(Batch::new(p8).records(2));
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |dir| {
        // both producers had expired when the roll's snapshot was taken
        let path = dir.join(format!("events-0/{roll_base:020}.snapshot"));
        std::fs::write(path, encode_snapshot(&[])).unwrap();
    });
    q.assert_quiet();
    // near miss: an hour's pause does not expire the producer, whose jump to 57 a leader
    // refuses (`OutOfOrderSequenceException`): the gap is reported
    let mut p = PartitionBuilder::new("events", 0);
    for _ in 0..5 {
        p.append(Batch::new(p7).records(1));
    }
    p.advance_time(3_600_000);
    p.append(Batch::new(p7).records(3).sequence(57));
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    let gaps: Vec<_> = q
        .scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::SequenceGap && f.severity >= Severity::Warning)
        .map(|f| f.offset)
        .collect();
    assert_eq!(gaps, [Some(5)]);
}

/// KIP-360: an idempotent producer bumps its own epoch after an unresolved sequence
/// (`TransactionManager.bumpIdempotentEpochAndResetIdIfNeeded`) and a transactional one gets
/// `epoch + 1` from `InitProducerId` after an abort
/// (`TransactionMetadata.prepareIncrementProducerEpoch`); either way the sequence restarts at
/// 0, which `ProducerAppendInfo.checkSequence` demands of a new epoch
/// (`ProducerStateManagerTest.testBasicIdMapping`'s bump to epoch 1 at 0).
#[test]
fn epoch_bumps_restart_the_sequence_at_zero() {
    let idem = Producer::idempotent(9, 0);
    let txn = Producer::transactional(10, 4);
    let mut p = PartitionBuilder::new("events", 0).segment_bytes(900);
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(txn).records(2));
    p.append(Batch::new(idem).records(2));
    p.abort(txn, 0);
    p.append(Batch::new(idem.bumped()).records(2)); // seq 0 at epoch 1
    p.append(Batch::new(txn.bumped()).records(2)); // seq 0 at epoch 5
    p.commit(txn.bumped(), 0);
    p.append(Batch::new(idem.bumped()).records(1)); // seq 2
    p.append(Batch::new(txn.bumped()).records(1)); // seq 2, a new transaction
    p.commit(txn.bumped(), 0);
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

/// Every codec as the Java producer frames it (`Compression.wrapForOutput`: gzip through
/// `GZIPOutputStream`, snappy in snappy-java's xerial stream, LZ4 through `Lz4BlockOutputStream`
/// with 64 KiB blocks, zstd through zstd-jni), small batches and batches large enough for several
/// LZ4 blocks and xerial chunks (`batch.size` raised), as
/// `LogValidator.validateMessagesAndAssignOffsetsCompressed` keeps them in place
/// (`LogValidatorTest.testAbsoluteOffsetAssignmentCompressed`,
/// `testRelativeOffsetAssignmentCompressedV2`).
#[test]
fn every_codec_as_the_java_producer_writes_it() {
    let idem = Producer::idempotent(31, 0);
    let mut p = PartitionBuilder::new("compressed", 0).segment_bytes(200_000);
    for codec in [
        Codec::None,
        Codec::Gzip,
        Codec::SnappyXerial,
        Codec::Lz4,
        Codec::Zstd,
    ] {
        p.append(Batch::new(idem).records(20).codec(codec));
        p.append(Batch::new(Producer::PLAIN).records(5).codec(codec));
        let big = (0..900).map(|i| Rec::kv(format!("k{i}"), format!("{i:0>150}")));
        let mut b = Batch::new(idem).codec(codec);
        for r in big {
            b = b.record(r);
        }
        p.append(b);
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

/// Record headers (one with a null value), null keys and null values (deletes are only
/// refused without a key on a compacted topic: `LogValidator.validateKey`), an empty value,
/// as `DefaultRecord.writeTo` writes them (`DefaultRecordTest.testBasicSerde`).
#[test]
fn headers_null_keys_and_null_values() {
    let idem = Producer::idempotent(5, 0);
    let mut p = PartitionBuilder::new("traces", 0);
    p.append(
        Batch::new(idem)
            .record(Rec::kv("a", "1").header("traceparent", Some(b"00-abc-01")))
            .record(
                Rec::kv("b", "")
                    .header("empty", Some(b""))
                    .header("null", None),
            )
            .record(Rec::tombstone("c").header("reason", Some(b"gdpr"))),
    );
    p.append(Batch::new(Producer::PLAIN).values(["x", "y", "z"]));
    p.append(
        Batch::new(idem)
            .record(Rec::value("no key").header("h", None))
            .codec(Codec::Lz4),
    );
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

/// A topic with `message.timestamp.type=LogAppendTime`: the leader stamps each batch's
/// maxTimestamp with its clock and leaves the records' create times as the client wrote
/// them (`LogValidator.assignOffsetsNonCompressed` and the in-place compressed path:
/// `setMaxTimestamp(LOG_APPEND_TIME, now)`), and never checks those create times
/// (`LogValidator.validateTimestamp` only checks CREATE_TIME topics). One client's clock is
/// three hours ahead, another's two days behind; the time index follows the broker's
/// stamps (`LogSegment.append` with the validator's `maxTimestampMs`;
/// `LogValidatorTest.checkLogAppendTimeNonCompressed`, `checkLogAppendTimeWithoutRecompression`).
#[test]
fn log_append_time_topic_keeps_the_clients_create_times() {
    let ahead = Producer::idempotent(40, 0);
    let behind = Producer::PLAIN;
    let mut p = PartitionBuilder::new("audit", 0)
        .segment_bytes(2000)
        .broker_files(PartitionFileOptions::default().index_interval(200));
    for i in 0..30i64 {
        let now = p.now();
        let (producer, skew) = if i % 2 == 0 {
            (ahead, 3 * 3_600_000)
        } else {
            (behind, -2 * PRODUCER_ID_EXPIRATION_MS)
        };
        let codec = if i % 3 == 0 { Codec::Lz4 } else { Codec::None };
        p.append(
            Batch::new(producer)
                .records(3)
                .codec(codec)
                .at(now + skew)
                .log_append_time()
                .tweak(move |s| s.overrides.max_timestamp = Some(now)),
        );
        // the partition clock follows the broker, not the client
        let next = now + 1000;
        let cur = p.now();
        p.advance_time(next - cur);
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
}

/// A partition that lived through the message-format upgrade (0.10 → 0.11+,
/// `log.message.format.version` / `inter.broker.protocol.version`): magic-1 messages first
/// (uncompressed and a gzip wrapper, some with timestamp -1 from pre-0.10 clients), then v2
/// batches; the leader epoch cache starts at the first v2 batch (`UnifiedLog.appendAsLeader`
/// assigns epochs only for magic ≥ 2, `LeaderEpochFileCache.assign`), as
/// `UnifiedLogTest.testLeaderEpochCacheCreatedAfterMessageFormatUpgrade` and the real 0.10 data
/// show.
#[test]
fn message_format_upgrade_from_magic_1() {
    use klogscan::testkit::Legacy;
    let mut p = PartitionBuilder::new("legacy", 0).leader_epoch(4);
    p.legacy(Legacy::v1().values(["a", "b", "c"]));
    p.legacy(Legacy::v1().values(["d", "e"]).codec(Codec::Gzip));
    p.legacy(Legacy::v1().values(["old-client"]).at(-1));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(3));
    p.append(
        Batch::new(Producer::idempotent(70, 0))
            .records(2)
            .codec(Codec::Lz4),
    );
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    let lec = std::fs::read_to_string(q.manifest.partitions[0].dir.join("leader-epoch-checkpoint"));
    assert_eq!(lec.unwrap(), "0\n1\n4 6\n");
    q.assert_quiet();
}
