//! `MemoryRecordsBuilderTest`: the producer fields and control records the builder writes
//! or refuses, as batches on disk.

use super::{clean, crashed, key, raft_control, txn, txn_then_control, value, write};
use crate::common::cases::{aborted, entry, lso};
use crate::kafka_quiet_kraft_cases::leader_change;
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

/// `orders-0` holding one batch of two records written by `producer`, its header changed
/// by `tweak`, and then, if `commit`, the producer's COMMIT.
fn one_batch(
    producer: Producer,
    commit: bool,
    tweak: impl Fn(&mut klogscan::testkit::BatchSpec) + 'static,
) -> super::Written {
    let mut p = PartitionBuilder::new(super::TOPIC, 0);
    p.append(Batch::new(producer).records(2).tweak(tweak));
    if commit {
        p.commit(producer, 0);
    }
    write(clean(), p)
}

/// `MemoryRecordsBuilderTest.testWriteTransactionalRecordSet`: magic 2 writes a
/// transactional batch of producer 9809, epoch 15, from sequence 2342 (below magic 2 the
/// builder refuses). On disk, with its COMMIT: a producer's first batch may start at any
/// sequence (`ProducerAppendInfo.checkSequence` takes any for a producer without state) —
/// nothing is raised, the producer ends at epoch 15, sequence 2343, and the last stable
/// offset is the log end, 3. Near miss: without the COMMIT, the transaction holds the last
/// stable offset at 0.
#[test]
fn a_transactional_batch_from_any_sequence_is_taken() {
    let w = one_batch(txn(), true, |s| s.base_sequence = 2342);
    w.assert_quiet();
    let r = w.state();
    assert_eq!((entry(&r, 9809), lso(&r)), ((15, 2343, 1, None), Some(3)));
    let near = one_batch(txn(), false, |s| s.base_sequence = 2342);
    let r = near.state();
    assert_eq!(
        (entry(&r, 9809), lso(&r)),
        ((15, 2343, 1, Some(0)), Some(0))
    );
}

/// `MemoryRecordsBuilderTest.testWriteTransactionalWithInvalidPID`: a transactional batch
/// without a producer id is refused when the builder closes. On disk: the load keeps no
/// producer state for it (`LogSegment.updateProducerState` needs a producer id) and a
/// read_committed consumer returns it (`CompletedFetch` looks for aborts only in batches
/// with a producer id), so it holds no last stable offset (2) — and
/// `invalid_producer_fields` says what is wrong. Near miss: producer 9809 — its
/// transaction holds the last stable offset at 0.
#[test]
fn a_transactional_batch_without_a_producer_id_is_no_transaction() {
    let no_pid = Producer { id: -1, ..txn() };
    let w = one_batch(no_pid, false, |s| s.base_sequence = 2342);
    let m = w.messages(Kind::InvalidProducerFields);
    assert!(
        m.len() == 1 && m[0].contains("transactional bit set without a producer id"),
        "{m:#?}"
    );
    let r = w.state();
    assert_eq!(lso(&r), Some(2));
    assert!(r.partitions[0].outcome().producers.is_empty());
    let near = one_batch(txn(), false, |s| s.base_sequence = 2342);
    assert_eq!(lso(&near.state()), Some(0));
    assert!(near.messages(Kind::InvalidProducerFields).is_empty());
}

/// `MemoryRecordsBuilderTest.testWriteIdempotentWithInvalidEpoch`: producer 9809 with epoch
/// -1 is refused when the builder closes. On disk the load takes the batch as it is
/// (epoch -1, its transaction open), and `invalid_producer_fields` names the epoch. Near
/// miss: epoch 15, nothing raised.
#[test]
fn a_producer_id_with_epoch_minus_1_is_reported() {
    let w = one_batch(txn().with_epoch(-1), false, |s| s.base_sequence = 2342);
    let m = w.messages(Kind::InvalidProducerFields);
    assert!(
        m.len() == 1 && m[0].contains("producerEpoch -1 with a producer id"),
        "{m:#?}"
    );
    assert_eq!(entry(&w.state(), 9809), (-1, 2343, 1, Some(0)));
    let near = one_batch(txn(), false, |s| s.base_sequence = 2342);
    assert!(near.messages(Kind::InvalidProducerFields).is_empty());
}

/// `MemoryRecordsBuilderTest.testWriteIdempotentWithInvalidBaseSequence`: data of producer
/// 9809 with base sequence -1 is refused when the builder closes; a leader refuses it from
/// a client too (`LogValidator.validateBatch`: "Invalid sequence number"). On disk:
/// `invalid_producer_fields`, naming the producer's `InvalidRecordException`. Near miss:
/// sequence 2342, nothing raised.
#[test]
fn data_with_a_producer_id_and_no_sequence_is_reported() {
    let w = one_batch(txn(), true, |s| s.base_sequence = -1);
    let r = w.scan(false);
    let f: Vec<_> = (r.findings.iter())
        .filter(|f| f.kind == Kind::InvalidProducerFields)
        .collect();
    assert!(
        f.len() == 1
            && f[0]
                .message
                .contains("baseSequence < 0 on a data batch with a producer id")
            && f[0]
                .client_error
                .as_deref()
                .is_some_and(|c| c.contains("InvalidRecordException")),
        "{f:#?}"
    );
    let near = one_batch(txn(), true, |s| s.base_sequence = 2342);
    near.assert_quiet();
}

/// `MemoryRecordsBuilderTest.testWriteEndTxnMarkerNonTransactionalBatch`: an end-transaction
/// marker in a control batch without the transactional bit is refused
/// (`appendEndTxnMarker`). No reader looks at that bit on a control batch: the load
/// (`ProducerAppendInfo.append`), consumers and the cleaner take its COMMIT all the same.
/// On disk: the COMMIT of producer 9809 under the bit cleared commits the transaction (last
/// stable offset 4, the load clean), and `invalid_batch` says it is a batch the
/// coordinator never writes, which no reader refuses (it was silent before). Near miss:
/// the bit set — nothing raised.
#[test]
fn a_marker_without_the_transactional_bit_is_reported_and_still_commits() {
    let bare = Producer::idempotent(9809, 15);
    let w = write(
        crashed(),
        txn_then_control(bare, key(0, 1, &[]), value(0, 0, &[])),
    );
    let r = w.scan(false);
    let f: Vec<_> = (r.findings.iter())
        .filter(|f| f.kind == Kind::InvalidBatch)
        .collect();
    assert!(
        f.len() == 1
            && f[0].offset == Some(2)
            && f[0].message.contains("without the transactional bit")
            && f[0]
                .broker_behaviour
                .contains("a batch Kafka's coordinator never writes"),
        "{f:#?}"
    );
    assert_eq!(lso(&w.state()), Some(4));
    assert_eq!((w.truncation(), w.load_failure()), (None, None));
    let near = write(
        crashed(),
        txn_then_control(txn(), key(0, 1, &[]), value(0, 0, &[])),
    );
    near.assert_quiet();
}

/// `MemoryRecordsBuilderTest.testWriteEndTxnMarkerNonControlBatch`: a marker record in a
/// batch without the control bit is refused ("Control records can only be appended to
/// control batches"). On disk such a batch is data whatever its record says: a
/// transactional batch at 2 holding an ABORT-shaped key and value continues 9809's
/// transaction, which stays open (last stable offset 0), and nothing is invalid. Near
/// miss: the ABORT as a control batch aborts the transaction 0–2.
#[test]
fn a_marker_record_in_a_data_batch_is_data() {
    let build = |control: bool| {
        let mut p = PartitionBuilder::new(super::TOPIC, 0);
        p.append(Batch::new(txn()).records(2));
        if control {
            p.abort(txn(), 0);
        } else {
            let (k, v) = (key(0, 0, &[]).unwrap(), value(0, 0, &[]).unwrap());
            p.append(Batch::new(txn()).record(Rec::kv(k, v)));
        }
        write(clean(), p)
    };
    let w = build(false);
    assert!(w.messages(Kind::InvalidBatch).is_empty());
    let r = w.state();
    assert_eq!((lso(&r), aborted(&r).len()), (Some(0), 0));
    let near = build(true);
    near.assert_quiet();
    let a = aborted(&near.state());
    assert_eq!(
        a.iter().map(|a| (a.0, a.1, a.2)).collect::<Vec<_>>(),
        [(9809, 0, 2)]
    );
}

/// `__cluster_metadata-0` with a LEADER_CHANGE at epoch 5 (leader 1, voters 2 and 3),
/// then one control batch of type `type_id` at `epoch` holding the same message.
fn metadata_with_leader_change(type_id: i16, epoch: i32) -> super::Written {
    let value = || leader_change(1, &[2, 3], &[2, 3]);
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    p.append_spec(raft_control(0, 5, 2, value()));
    p.append_spec(raft_control(1, epoch, type_id, value()));
    write(clean(), p)
}

/// `MemoryRecordsBuilderTest.testWriteLeaderChangeControlBatch`: the LEADER_CHANGE of
/// leader 1 with voters 2 and 3, at partition leader epoch 5, reads back with them. On
/// disk, in the metadata log: `dump` prints the message with leader 1 and voters 2, 3, and
/// nothing is raised. Near miss: the same message under a COMMIT key — the metadata log's
/// reader takes only the KRaft control types (`RecordsIterator.decodeControlRecord`:
/// `IllegalArgumentException`): `metadata_log_unreadable`.
#[test]
fn a_leader_change_reads_back_its_leader_and_voters() {
    let w = metadata_with_leader_change(2, 5);
    w.assert_quiet();
    let lines = w.dump_records();
    let want =
        r#" LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":2},{"voterId":3}],"#;
    assert!(lines.iter().all(|l| l.contains(want)), "{lines:#?}");
    let near = metadata_with_leader_change(1, 5);
    let m = near.messages(Kind::MetadataLogUnreadable);
    assert_eq!(m.len(), 1, "{m:#?}");
}

/// `MemoryRecordsBuilderTest.testWriteLeaderChangeControlBatchWithoutLeaderEpoch`: the
/// builder refuses a LEADER_CHANGE without a partition leader epoch. On disk such a batch
/// (epoch -1 after the epoch-5 one) is read all the same: `LogSegment.recover` assigns only
/// an epoch of 0 or more to the leader-epoch cache and `RecordsIterator` does not look at
/// the epoch — nothing is raised, and `dump` reads the message. Consistent, silent by
/// design: no load or read of the metadata log refuses it, so there is no near miss.
#[test]
fn a_leader_change_without_a_leader_epoch_is_read() {
    let w = metadata_with_leader_change(2, -1);
    w.assert_quiet();
    assert!(w.dump_records()[1].contains(r#""leaderId":1"#));
}
