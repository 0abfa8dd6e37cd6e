//! What Kafka's producer really does with the error a finding names (clients/src/main/java/
//! org/apache/kafka/clients/producer/internals/TransactionManager.java, `Sender.java`; their
//! tests `TransactionManagerTest`, `SenderTest`), held against the `client_error` text and
//! class klogscan gives the finding: the exception the client meets, its KIP-691 / KIP-1050
//! class, and what the client does next, for the client versions the finding implies.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::finding::Finding;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, state};
use klogscan::testkit::txns::Cluster;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

fn coordinator_only(records: &[(&str, TxnValue)]) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::new(Some("c1")).coordinator(9);
    for (id, v) in records {
        let t = c.now();
        c.coordinator_record(id, Some(v.clone().times(t, t)));
    }
    c.write(dir.path(), 1).unwrap();
    pipeline::scan(&[dir.path().to_path_buf()], &ScanOptions::default())
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

fn tv2(pid: i64, epoch: i16, st: u8, prev: i64, next: i64) -> TxnValue {
    TxnValue::new(pid, epoch, st).v1(prev, next, 2)
}

/// `producer_fenced_on_retry_after_failover`, EndTxn rotation: a TV2 Complete record that
/// rotated producer 50 (epoch 32767) to producer 51 without PreviousProducerId. A client
/// retrying its EndTxn across a coordinator failover is answered INVALID_PRODUCER_ID_MAPPING
/// (`TransactionCoordinator.endTransaction`: `txnMetadata.producerId != producerId &&
/// !retryOnOverflow`).
///
/// A rotation in a Complete record happens only under transaction version 2 (EndTxn v5+),
/// which only 4.0+ clients speak. Since KAFKA-18019 (4.0, "Make INVALID_PRODUCER_ID_MAPPING a
/// fatal error", KIP-890 / KIP-1050) those clients make it fatal everywhere:
/// `TransactionManager.EndTxnHandler.handleResponse` (`error == INVALID_TXN_STATE || error ==
/// INVALID_PRODUCER_ID_MAPPING` → `fatalError(error.exception())`), the AddPartitionsToTxn
/// handler likewise, and `maybeTransitionToErrorState` lists `InvalidPidMappingException` with
/// the fatal exceptions (`TransactionManagerTest.testFatalErrorWhenProduceResponseWithInvalidPidMapping`:
/// `assertTrue(transactionManager.hasFatalError())`). Only clients up to 3.9 called
/// `abortableErrorIfPossible` there, and they never use TV2.
///
/// klogscan says "abortable in the Java client's EndTxn handler … the application aborts the
/// transaction" (src/cluster/txns/exhaustion.rs, `fenced_on_retry`): the wrong class. The
/// producer is unusable: application-recoverable (close it, create a new one).
#[test]
fn end_txn_retry_answered_invalid_pid_mapping_is_fatal_for_tv2_clients() {
    let r = coordinator_only(&[
        (
            "x",
            tv2(50, 32767, state::PREPARE_ABORT, -1, 51).partitions(&[("orders", &[0])]),
        ),
        ("x", tv2(51, 0, state::COMPLETE_ABORT, -1, -1)),
    ]);
    let f = of_kind(&r, Kind::ProducerFencedOnRetryAfterFailover);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].evidence["rotation"], "end_txn");
    let text = f[0].client_error.as_deref().unwrap_or_default();
    assert!(text.contains("InvalidPidMappingException"), "{text}");
    assert!(
        !text.contains("abortable"),
        "a 4.0+ client makes INVALID_PRODUCER_ID_MAPPING on EndTxn fatal (KAFKA-18019): {text}"
    );
    assert!(
        text.contains("fatal") || text.contains("application-recoverable"),
        "{text}"
    );
}

/// `zombie_write` of a transaction-version-2 producer whose late write sits one epoch below
/// the ABORT that closed its transaction: the shape a coordinator's timeout abort leaves under
/// TV2 (`abortTimedOutTransactions` → `prepareFenceProducerEpoch` → `endTransaction` with
/// `isEpochFence`, whose TV2 `prepareAbortOrCommit` bumps once: marker at data epoch + 1;
/// `TransactionCoordinatorTest.shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyTV2`,
/// "single epoch bump").
///
/// A leader holding the producer's state refuses the late write with INVALID_PRODUCER_EPOCH
/// (abortable, `TransactionManager.maybeTransitionToErrorState`). The producer then aborts:
/// its EndTxn(ABORT) at the old epoch finds CompleteAbort one epoch up, which TV2's
/// `TransactionCoordinator.endTransaction` takes as a retry (`retryOnEpochBump`) and answers
/// NONE with the bumped epoch (`TransactionCoordinatorTest.
/// shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2`, isRetry = true;
/// KAFKA-20090's description: "a delayed client EndTxn(ABORT) … with the old epoch … may be
/// treated as a retry path"). `EndTxnHandler` takes the epoch from the response and the
/// producer goes on: producer-abortable, not fenced. Only under TV0/1 (`endTransactionWithTV1`:
/// any epoch mismatch is PRODUCER_FENCED), or when another instance's InitProducerId moved the
/// epoch further, does the abort get PRODUCER_FENCED.
///
/// klogscan's text says, for every zombie write, that the abort's EndTxn gets PRODUCER_FENCED,
/// fatal, application-recoverable (src/partition/state/text.rs `CLIENT_ZOMBIE`, set in
/// src/partition/state/data.rs; `for_kind(ZombieWrite)` in src/report/client.rs), although
/// the replay has inferred TV2 for this producer (`Entry::tv2`): the TV2 timeout case is
/// missing and the class overstated.
#[test]
fn tv2_zombie_one_epoch_below_a_timeout_abort_is_not_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0);
    let e0 = Producer::transactional(7, 0);
    let e1 = e0.with_epoch(1);
    p.append(Batch::new(e0).records(2)); // 0–1
    p.commit(e1, 0); // 2: TV2 COMMIT one epoch up
    p.append(Batch::new(e1).records(2)); // 3–4: the next transaction at the bumped epoch, seq 0
    p.abort(e1.with_epoch(2), 0); // 5: the coordinator's timeout abort (TV2: one bump)
    p.append(Batch::new(e1).records(1)); // 6: the producer's late write at epoch 1, seq 2
    LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    let r = pipeline::scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let z = of_kind(&r, Kind::ZombieWrite);
    assert_eq!(z.len(), 1, "{:#?}", r.findings);
    assert_eq!(z[0].offset, Some(6));
    // the producer is TV2 by its markers
    assert!(
        of_kind(&r, Kind::MarkerEpochNotBumped).is_empty(),
        "{:#?}",
        r.findings
    );
    let text = z[0].client_error.as_deref().unwrap_or_default();
    assert!(
        text.contains("TV2") || text.contains("transaction version 2"),
        "a TV2 producer's abort after a timeout abort is answered as a retry (NONE), not PRODUCER_FENCED: {text}"
    );
}

/// `producer_stuck_at_exhausted_epoch`: a TV2 producer left at epoch 32767 (here a Complete
/// record that kept producer 50 at 32767 because its Prepare named no next producer id — the
/// timeout abort at 32766 skipped the rotation, KAFKA-20090). The client that aborted that
/// transaction got NONE with (50, 32767) (its EndTxn at 32766 is a TV2 retry,
/// `retryOnEpochBump`), so it holds 32767.
///
/// What its next transaction meets in Kafka (4.0 up to KAFKA-20090's fix): the verification
/// AddPartitions at 32767 matches the coordinator's epoch (`handleAddPartitionsToTransaction`:
/// no PRODUCER_FENCED), its data is appended; its EndTxn finds the epoch exhausted, allocates
/// a next producer id and `TransactionMetadata.prepareAbortOrCommit` bumps 32767 to -32768,
/// which `prepareTransitionTo` refuses with IllegalArgumentException ("Illegal new producer
/// epoch"): the request fails with UNKNOWN_SERVER_ERROR, which
/// `TransactionManager.EndTxnHandler` turns into a fatal KafkaException ("Unhandled error in
/// EndTxnResponse"). Nowhere does the coordinator or a leader answer INVALID_PRODUCER_EPOCH or
/// PRODUCER_FENCED to the epoch it handed out itself. (After KAFKA-20090's fix the coordinator
/// logs and rotates the producer id instead: no error at all.)
///
/// klogscan says "InvalidProducerEpochException / ProducerFencedException on the next
/// transaction" (src/cluster/txns/exhaustion.rs, `stuck`): the wrong exception. Lower
/// confidence than the other cases here: the path runs through an unchecked exception in the
/// coordinator (`KafkaApis.handle` → `RequestHandlerHelper.handleError`).
#[test]
fn stuck_at_max_epoch_client_meets_an_unexpected_end_txn_error_not_fencing() {
    let r = coordinator_only(&[
        (
            "x",
            tv2(50, 32766, state::ONGOING, -1, -1).partitions(&[("orders", &[0])]),
        ),
        (
            "x",
            tv2(50, 32767, state::PREPARE_ABORT, -1, -1).partitions(&[("orders", &[0])]),
        ),
        ("x", tv2(50, 32767, state::COMPLETE_ABORT, -1, -1)),
    ]);
    let f = of_kind(&r, Kind::ProducerStuckAtExhaustedEpoch);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let text = f[0].client_error.as_deref().unwrap_or_default();
    assert!(
        !text.contains("InvalidProducerEpochException")
            && !text.contains("ProducerFencedException"),
        "the coordinator accepts epoch 32767 it handed out; the EndTxn fails with UNKNOWN_SERVER_ERROR (fatal KafkaException): {text}"
    );
    // what it does meet, and that the producer is unusable
    assert!(
        text.contains("UNKNOWN_SERVER_ERROR") && text.contains("application-recoverable"),
        "{text}"
    );
}

/// `zombie_write`'s client text by the transaction version the replay inferred and the
/// ABORT's distance from the write (offset 6 each time):
/// * TV2, ABORT at data epoch + 1: both readings (timeout abort answered as a retry, or a
///   fencing), no "next AddPartitionsToTxn" (4.0+ clients send none under TV2);
/// * TV0/1 (COMMIT at the data's epoch), ABORT at + 1: `endTransactionWithTV1` answers any
///   other epoch PRODUCER_FENCED — the fenced text, unchanged (negative case);
/// * TV2, ABORT at + 2 (a 4.0/4.1 fence abort, which bumped twice; or an InitProducerId
///   after a timeout abort): not a retry (`retryOnEpochBump` needs + 1) — the fenced text.
#[test]
fn zombie_write_client_text_by_transaction_version() {
    for (tv2, abort_up) in [(true, 1i16), (false, 1), (true, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("orders", 0);
        let e0 = Producer::transactional(7, 0);
        let e = if tv2 { e0.with_epoch(1) } else { e0 };
        p.append(Batch::new(e0).records(2)); // 0–1
        p.commit(e, 0); // 2: TV2 bumps the COMMIT, TV0/1 does not
        p.append(Batch::new(e).records(2)); // 3–4
        p.abort(e.with_epoch(e.epoch + abort_up), 0); // 5
        p.append(Batch::new(e).records(1)); // 6: the late write
        LogDirBuilder::new(1)
            .partition(p)
            .write(dir.path())
            .unwrap();
        let r = pipeline::scan(&[dir.path().to_path_buf()], &ScanOptions::default());
        let z = of_kind(&r, Kind::ZombieWrite);
        let case = format!("tv2 {tv2}, abort +{abort_up}");
        assert_eq!(z.len(), 1, "{case}: {:#?}", r.findings);
        assert_eq!(z[0].offset, Some(6), "{case}");
        let text = z[0].client_error.as_deref().unwrap_or_default();
        // The typed joint the triage reads: written only for the two readings.
        let two = z[0].evidence.get("timeout_abort_possible");
        assert_eq!(
            two,
            (tv2 && abort_up == 1).then_some(&serde_json::Value::Bool(true)),
            "{case}"
        );
        if tv2 && abort_up == 1 {
            assert!(text.contains("TV2"), "{case}: {text}");
            assert!(text.contains("retryOnEpochBump"), "{case}: {text}");
            assert!(text.contains("producer-abortable"), "{case}: {text}");
            assert!(text.contains("PRODUCER_FENCED"), "{case}: {text}");
            assert!(!text.contains("AddPartitionsToTxn"), "{case}: {text}");
        } else {
            assert!(!text.contains("TV2"), "{case}: {text}");
            assert!(
                text.contains("next AddPartitionsToTxn or EndTxn (the abort) gets PRODUCER_FENCED"),
                "{case}: {text}"
            );
        }
    }
}
