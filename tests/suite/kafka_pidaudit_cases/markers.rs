//! `TransactionMarkerRequestCompletionHandlerTest`: what the coordinator does with each
//! partition's answer to a WriteTxnMarkers request
//! (`TransactionMarkerRequestCompletionHandler.onComplete`). `NONE` takes the partition off
//! the waiting set; the retriable errors (`UNKNOWN_TOPIC_OR_PARTITION`,
//! `NOT_LEADER_OR_FOLLOWER`, `NOT_ENOUGH_REPLICAS`, `NOT_ENOUGH_REPLICAS_AFTER_APPEND`,
//! `REQUEST_TIMED_OUT`, `KAFKA_STORAGE_ERROR`) and a lost connection send the marker again;
//! `INVALID_PRODUCER_EPOCH`, `TRANSACTION_COORDINATOR_FENCED`, a changed coordinator epoch,
//! `NOT_COORDINATOR` and `COORDINATOR_LOAD_IN_PROGRESS` drop this coordinator's markers of
//! the transaction (another coordinator, or a later transaction, owns the partition's
//! state); the fatal ones (`CORRUPT_MESSAGE`, `MESSAGE_TOO_LARGE`, `RECORD_LIST_TOO_LARGE`,
//! `INVALID_REQUIRED_ACKS`, anything unexpected) throw, and the transaction waits in
//! Prepare* until another coordinator loads it.

use super::*;
use crate::kafka_quiet_cluster_cases::CLUSTER;
use klogscan::testkit::txns::{Cluster, Txn};
use klogscan::testkit::{Batch, Producer};

const T1: (&str, i32) = ("topic1", 0);
const T2: (&str, i32) = ("topic1", 1);

/// Producer 3's transaction of two records on `topic1`-0 (epoch 0), then what `markers`
/// writes after it, 40 s later (the retries' back-off).
fn partition_with(markers: impl FnOnce(&mut PartitionBuilder, Producer)) -> PartitionBuilder {
    let p3 = Producer::transactional(3, 0);
    let mut p = PartitionBuilder::new("topic1", 0);
    p.append(Batch::new(p3).records(2));
    p.advance_time(40_000);
    markers(&mut p, p3);
    p
}

/// `TransactionMarkerRequestCompletionHandlerTest.shouldRetryPartitionWhenUnknownTopicOrPartitionError`,
/// `…shouldRetryPartitionWhenNotLeaderOrFollowerError`, `…NotEnoughReplicasError`,
/// `…NotEnoughReplicasAfterAppendError`, `…KafkaStorageError`,
/// `…shouldReEnqueuePartitionsWhenBrokerDisconnected`,
/// `…shouldCompleteDelayedOperationWhenNoErrors`: the marker is sent again until a leader
/// takes it, so the partition holds it, late. `NOT_ENOUGH_REPLICAS_AFTER_APPEND` comes
/// after the leader appended the marker, so the retry appends it a second time: two COMMITs
/// of one transaction at the same producer and coordinator epochs, which the leader takes
/// (`ProducerAppendInfo.appendEndTxnMarker` checks only the epochs) and which decide
/// nothing more. Nothing raised, the transaction committed once. Near miss: the marker
/// never retried on `topic1`-1 and the CompleteCommit written all the same (what the
/// handler never does: only `NONE` and the message-format errors take a partition off the
/// waiting set): `transaction_marker_missing`.
#[test]
fn retriable_marker_errors_write_the_marker_again() {
    let (_b, v) = broker(vec![partition_with(|p, t| {
        p.commit(t, 0);
        p.advance_time(30_000);
        p.commit(t, 0);
    })]);
    v.assert_quiet();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        let pr = part(r, "topic1", 0);
        assert_eq!(pr.transactions.aborted, 0, "{name}");
        assert_eq!(pr.last_stable_offset, Some(4), "{name}");
    }
    // The same through the coordinator: a committed transaction whose markers came late.
    let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
    c.run(&Txn::new(
        "retried",
        Producer::transactional(3, 0),
        &[T1, T2],
    ));
    run(&c).1.assert_no_alarm();
    // near miss: the retry never reaching `topic1`-1 (the coordinator completed anyway)
    let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
    c.run(&Txn::new("retried", Producer::transactional(3, 0), &[T1, T2]).skip_marker_on(T2));
    let (_b, v) = run(&c);
    assert!(
        (v.scan.findings.iter()).any(|f| f.kind == Kind::TransactionMarkerMissing),
        "{:#?}",
        all(&v)
    );
}

/// `TransactionMarkerRequestCompletionHandlerTest.shouldCompleteDelayedOperationWhenCoordinatorEpochChanged`,
/// `…WhenNotCoordinator`, `…WhenCoordinatorLoading`, `…WhenCoordinatorEpochFenced`: the
/// coordinator that wrote the PrepareCommit (coordinator epoch 0) wrote `topic1`-0's COMMIT,
/// then lost the coordinator partition and dropped its markers; the next leader (epoch 1)
/// loads the PrepareCommit and sends both markers again, then writes CompleteCommit. On
/// disk: `topic1`-0 holds COMMITs of epochs 0 and 1, `topic1`-1 only epoch 1's; nothing
/// raised. Near miss: the old coordinator's marker reaching a partition after the new one's
/// (the write its fence refused, `TRANSACTION_COORDINATOR_FENCED`): a
/// `coordinator_epoch_regression`.
#[test]
fn a_changed_or_fenced_coordinator_drops_its_markers() {
    let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
    c.run(&Txn::new("moved", Producer::transactional(3, 0), &[T1, T2]).failover_after(1));
    let (_b, v) = run(&c);
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        for n in [0, 1] {
            let pr = part(r, "topic1", n);
            assert_eq!(pr.last_stable_offset, pr.log_end_offset, "{name} {n}");
        }
    }
    // near miss: epoch 0's marker after epoch 1's
    let (_b, v) = broker(vec![partition_with(|p, t| {
        p.commit(t, 1);
        p.advance_time(1_000);
        p.commit(t, 0);
    })]);
    assert!(
        has(&v.scan.findings, Kind::CoordinatorEpochRegression, 3),
        "{:#?}",
        all(&v)
    );
}

/// `TransactionMarkerRequestCompletionHandlerTest.shouldCompleteDelayedOperationWhenInvalidProducerEpoch`:
/// a marker is dropped when the partition already holds the producer at a higher epoch — the
/// transaction was completed by a later coordinator (coordinator epoch 1) and the producer
/// went on to epoch 1 — and the old coordinator's COMMIT at epoch 0 arrives last. On disk:
/// data and COMMIT at epoch 0, data from sequence 0 and COMMIT at epoch 1; nothing raised.
/// Near miss: that stale COMMIT at epoch 0 appended after all (the leader refuses it with
/// `INVALID_PRODUCER_EPOCH`): `producer_epoch_regression`.
#[test]
fn a_marker_below_the_producers_epoch_is_dropped() {
    let shape = |stale: bool| {
        partition_with(|p, t| {
            p.commit(t, 1);
            p.append(Batch::new(t.with_epoch(1)).records(2).sequence(0));
            p.commit(t.with_epoch(1), 1);
            if stale {
                p.commit(t, 0);
            }
        })
    };
    let (_b, v) = broker(vec![shape(false)]);
    v.assert_quiet();
    assert_eq!(producers(&v.scan, "topic1", 0), vec![(3, 1, 1)]);
    // near miss: the stale marker on disk
    let (_b, v) = broker(vec![shape(true)]);
    assert!(
        has(&v.scan.findings, Kind::ProducerEpochRegression, 6),
        "{:#?}",
        all(&v)
    );
}

/// `TransactionMarkerRequestCompletionHandlerTest.shouldThrowIllegalStateExceptionWhenUnknownError`,
/// `…CorruptMessageError`, `…MessageTooLargeError`, `…RecordListTooLargeError`,
/// `…InvalidRequiredAcksError`: the handler throws; no marker is written, none is sent
/// again and no Complete follows, so the transaction stays PrepareCommit with its
/// partitions undecided until another coordinator loads it. On disk twenty minutes later:
/// `transaction_stuck_in_prepare`, the partitions' transactions still open. Near miss: the
/// markers and the CompleteCommit written (`NONE`): nothing raised.
#[test]
fn a_fatal_marker_error_leaves_the_transaction_in_prepare() {
    let shape = |stuck: bool| {
        let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
        let t = Txn::new("fatal", Producer::transactional(3, 0), &[T1, T2]);
        c.run(&if stuck { t.stuck_in_prepare() } else { t });
        c.advance(20 * 60_000);
        c.plain(("topic1", 2), 1);
        c
    };
    let (_b, v) = run(&shape(true));
    for (name, fs) in [("scan", &v.scan.findings), ("merge", &v.merge.findings)] {
        assert!(
            fs.iter().any(|f| f.kind == Kind::TransactionStuckInPrepare),
            "{name}: {:#?}",
            lines(fs)
        );
    }
    // near miss: the markers written
    run(&shape(false)).1.assert_no_alarm();
}

/// `TransactionMarkerRequestCompletionHandlerTest.shouldRemoveTopicPartitionFromWaitingSetOnUnsupportedForMessageFormat`:
/// the coordinator listed `old`-0, a topic still at a message format before v2
/// (`message.format.version` below 0.11, which an inter-broker protocol of 3.0 or later
/// ignores, KIP-724), where the leader refused the producer's transactional batches
/// (`LogValidator`: "Transactional records cannot be used with magic version …") and now
/// refuses the marker (`UNSUPPORTED_FOR_MESSAGE_FORMAT`); the handler
/// takes the partition off the waiting set and the transaction completes. On disk: `old`-0
/// holds other clients' magic-1 messages and no marker, `topic1`-0 the data and its COMMIT,
/// the coordinator PrepareCommit and CompleteCommit listing both: nothing raised. Near
/// miss: `old`-0 holding the producer's data (then the marker would have been written) and
/// no marker: `transaction_marker_missing`.
#[test]
fn a_partition_refusing_the_marker_format_is_left_without_one() {
    use klogscan::testkit::Legacy;
    use klogscan::testkit::txnlog::TxnValue;
    use klogscan::testkit::txnlog::state::{COMPLETE_COMMIT, ONGOING, PREPARE_COMMIT};
    let shape = |old_has_data: bool| {
        let p3 = Producer::transactional(3, 0);
        let mut c = Cluster::new(Some(CLUSTER)).coordinator(1);
        let start = c.now();
        let listed: &[(&str, &[i32])] = &[("old", &[0]), ("topic1", &[0])];
        let value = |status: u8, parts: &[(&str, &[i32])], at: i64| {
            let v = TxnValue::new(3, 0, status).timeout(60_000).times(at, start);
            if parts.is_empty() {
                v
            } else {
                v.partitions(parts)
            }
        };
        c.coordinator_record("legacy", Some(value(ONGOING, listed, start)));
        let mut t1 = PartitionBuilder::new("topic1", 0).start_time(start + 10);
        t1.append(Batch::new(p3).records(2));
        let mut old = PartitionBuilder::new("old", 0).start_time(start);
        old.legacy(Legacy::v1().values(["a", "b"]).at(start));
        if old_has_data {
            old.append(Batch::new(p3).records(2).at(start + 20));
        }
        c.advance(100);
        c.coordinator_record("legacy", Some(value(PREPARE_COMMIT, listed, c.now())));
        t1.advance_time(c.now() + 10 - t1.now());
        t1.commit(p3, 0);
        c.advance(100);
        c.coordinator_record("legacy", Some(value(COMPLETE_COMMIT, &[], c.now())));
        c.advance(20 * 60_000);
        let mut b = Brokers::new();
        let dir = b.path(1, "data");
        c.write(&dir, 1).unwrap();
        t1.write(&dir).unwrap();
        old.write(&dir).unwrap();
        b.add(dir);
        let v = b.check_with(opts());
        (b, v)
    };
    let (_b, v) = shape(false);
    v.assert_no_alarm();
    assert_eq!(part(&v.scan, "topic1", 0).last_stable_offset, Some(3));
    // near miss: the producer's data on `old`-0, no marker
    let (_b, v) = shape(true);
    assert!(
        (v.scan.findings.iter())
            .any(|f| f.kind == Kind::TransactionMarkerMissing && f.topic == "old"),
        "{:#?}",
        all(&v)
    );
}
