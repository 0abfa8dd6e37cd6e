//! Producer ids, epochs and sequences as non-Java clients write them: franz-go's sequence 0
//! without a producer id, sarama's and librdkafka's own epoch bumps (no InitProducerId for an
//! idempotent producer), the messages an application produces again after librdkafka failed
//! them at a local timeout.

use super::{before_crc, dump_lines, write_and_check};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, Codec, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// franz-go with `DisableIdempotentWrite` (twmb/franz-go `pkg/kgo/sink.go`,
/// `seqRecBatch.appendTo`: "a negative producer ID means we are not using idempotence" sets
/// the sequence to 0) writes producer id -1, epoch -1 and baseSequence **0**, where the Java
/// producer writes -1. The leader keeps the header as sent: `LogValidator.validateBatch`
/// refuses only a batch *with* a producer id and a negative sequence,
/// `assignOffsetsNonCompressed` and the in-place compressed path rewrite the offsets,
/// maxTimestamp and leader epoch only, and a rebuilt batch carries `firstBatch.baseSequence()`
/// on (`buildRecordsAndAssignOffsets`). `ProducerStateManager` ignores a batch without a
/// producer id (`UnifiedLog.analyzeAndValidateProducerState`: `batch.hasProducerId`).
/// `kafka-dump-log` prints such a batch with `baseSequence: 0 lastSequence: 2` and its records
/// with sequences 0..2 (`DefaultRecordBatch.lastSequence`, `DefaultRecord.readFrom`), which
/// klogscan's dump must print too.
#[test]
fn franz_go_batches_without_idempotence_carry_sequence_zero() {
    let mut p = PartitionBuilder::new("clicks", 0).leader_epoch(2);
    for i in 0..8 {
        let codec = if i % 2 == 0 { Codec::None } else { Codec::Lz4 };
        p.append(
            Batch::new(Producer::PLAIN)
                .records(3)
                .codec(codec)
                .tweak(|s| s.base_sequence = 0),
        );
    }
    let q = write_and_check(LogDirBuilder::new(1).partition(p));
    q.assert_quiet();
    // klogscan knows this shape (kafkajs writes it too): at most one info per partition
    let infos: Vec<_> = q
        .scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidProducerFields)
        .collect();
    assert!(infos.len() <= 1, "{infos:#?}");
    let dump = dump_lines(&q.segments(0));
    assert_eq!(
        before_crc(&dump[0]),
        "baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: -1 \
         producerEpoch: -1 partitionLeaderEpoch: 2 isTransactional: false isControl: false \
         deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1572948000002 size: 118 \
         magic: 2 compresscodec: none"
    );
    assert_eq!(
        dump[1],
        "| offset: 0 CreateTime: 1572948000000 keySize: 5 valueSize: 7 sequence: 0 headerKeys: []"
    );
    assert_eq!(
        dump[3],
        "| offset: 2 CreateTime: 1572948000002 keySize: 5 valueSize: 7 sequence: 2 headerKeys: []"
    );
}

/// sarama's idempotent producer bumps its epoch itself when a batch fails for good (IBM/sarama
/// `async_producer.go`, `bumpIdempotentProducerEpoch` → `transaction_manager.go`,
/// `transactionManager.bumpEpoch`: `producerEpoch++`, every partition's sequence back to 0),
/// without an InitProducerId; the Java producer does the same
/// (`TransactionManager.bumpIdempotentProducerEpoch`). Every bump moves every partition: a
/// partition that received nothing at epoch 1 goes from epoch 0 straight to epoch 2. At epoch
/// `Short.MAX_VALUE` sarama asks for a new producer id instead (`newTransactionManager`), so
/// an idempotent producer really writes at epoch 32767. The leader accepts each: a higher
/// epoch (`ProducerAppendInfo.checkProducerEpoch` refuses only a lower one) starting at
/// sequence 0 (`checkSequence`), any epoch for a non-transactional batch.
#[test]
fn sarama_idempotent_epoch_bumps_skip_epochs_and_reach_the_maximum() {
    let s = Producer::idempotent(5000, 0);
    let mut p0 = PartitionBuilder::new("events", 0);
    let mut p1 = PartitionBuilder::new("events", 1);
    p0.append(Batch::new(s).records(3));
    p1.append(Batch::new(s).records(2));
    p0.append(Batch::new(s).records(2));
    // a batch on partition 2 fails for good: epoch 1; partition 0 writes at it
    p0.append(Batch::new(s.with_epoch(1)).records(2));
    // another failure: epoch 2; partition 1 moves from 0 to 2
    p0.append(Batch::new(s.with_epoch(2)).records(1));
    p1.append(Batch::new(s.with_epoch(2)).records(4));
    p1.append(Batch::new(s.with_epoch(2)).records(1));
    // a long-lived producer at its last epochs, then a new producer id
    let old = Producer::idempotent(5001, 32766);
    p0.append(Batch::new(old).records(2));
    p0.append(Batch::new(old.with_epoch(32767)).records(2));
    p0.append(Batch::new(old.with_epoch(32767)).records(1));
    p0.append(Batch::new(Producer::idempotent(5002, 0)).records(2));
    let q = write_and_check(LogDirBuilder::new(1).partition(p0).partition(p1));
    q.assert_quiet();
}

/// librdkafka's idempotent producer, when a message times out in flight
/// (`message.timeout.ms`), drains every partition and bumps its own epoch
/// (confluentinc/librdkafka `src/rdkafka_idempotence.c`, `rd_kafka_idemp_drain_epoch_bump0`
/// then `rd_kafka_idemp_drain_done`: "The idempotent producer can bump its own epoch",
/// `rd_kafka_pid_bump` in `rdkafka_proto.h`), with the sequences of every partition based at
/// 0 again. The timed-out messages are failed to the application as possibly persisted: the
/// batch may well be in the log, and the application that produces them again writes them
/// once more at the new epoch. The log then holds the same records twice, under two epochs of
/// one producer id — what the leader accepted (a higher epoch from sequence 0,
/// `ProducerAppendInfo.checkSequence`), not a duplicate it would have refused (its
/// `DUPLICATE_SEQUENCE` check compares sequences within one epoch,
/// `ProducerStateEntry.findDuplicateBatch`).
#[test]
fn librdkafka_epoch_bump_after_a_timeout_and_the_messages_produced_again() {
    let r = Producer::idempotent(6000, 3);
    let order = |i: usize| Rec::kv(format!("order-{i}"), format!("{{\"id\":{i}}}"));
    let mut p0 = PartitionBuilder::new("orders", 0);
    let mut p1 = PartitionBuilder::new("orders", 1);
    let mut i = 0;
    for _ in 0..3 {
        let mut b = Batch::new(r).codec(Codec::SnappyRaw);
        for _ in 0..5 {
            b = b.record(order(i));
            i += 1;
        }
        p0.append(b);
    }
    p1.append(Batch::new(r).records(4).codec(Codec::SnappyRaw));
    // the third batch (orders 10..14) was written, its answer never came: epoch 4
    let mut again = Batch::new(r.bumped()).codec(Codec::SnappyRaw);
    for j in 10..15 {
        again = again.record(order(j));
    }
    p0.append(again);
    p0.append(
        Batch::new(r.bumped())
            .record(order(15))
            .codec(Codec::SnappyRaw),
    );
    p1.append(Batch::new(r.bumped()).records(2).codec(Codec::SnappyRaw));
    let q = write_and_check(LogDirBuilder::new(1).partition(p0).partition(p1));
    q.assert_quiet();
    assert_eq!(q.manifest.partitions[0].batches[3].base_sequence, 0);
}
