//! Transactions version 2 (KIP-890 part 2) and the verification guard (KIP-890 part 1) as
//! they land on disk, held against Kafka's own tests: `TransactionMetadataTest`,
//! `TransactionCoordinatorTest` (core/src/test/scala/unit/kafka/coordinator/transaction/),
//! `ProducerStateManagerTest` (storage/src/test/java/org/apache/kafka/storage/internals/log/)
//! and the KIP-890 cases of core's `UnifiedLogTest`. Sources: the Kafka of 2025-10
//! (4.2.0-SNAPSHOT, /work/.mirror/wtmxxx+kafka-se-homework) where it differs from the
//! apache/kafka trunk of 2024-10 (the non-zero-sequence rules for TV2 producers exist only
//! in the newer one).
//!
//! Each test writes the bytes a case leaves (data batches, COMMIT/ABORT markers,
//! `__transaction_state` values) and scans them as the CLI does. Where Kafka's leader throws
//! (CLIENT origin) the batch on disk must raise the finding of that exception; where it
//! accepts, nothing at warning or above.
#![cfg(feature = "testkit")]

use crate::common::cases::{entry, lso, scan};
use klogscan::Kind;
use klogscan::finding::{Finding, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::path::Path;

// ----- helpers ----------------------------------------------------------------------------

/// `(kind, offset)` of every finding at warning or above.
fn loud(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .map(|f| (f.kind, f.offset))
        .collect()
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// Scan a log dir holding several partitions (data and `__transaction_state`).
fn scan_log_dir(dir: &Path) -> ScanReport {
    pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default())
}

/// `__transaction_state-1` (where `app` belongs among the default 50 partitions) holding
/// `values` of transactional id `id`, in order, one batch each, from `t0` on.
fn coordinator_log(id: &str, values: &[TxnValue], t0: i64) -> PartitionBuilder {
    let mut c = PartitionBuilder::new("__transaction_state", 1);
    for (i, v) in values.iter().enumerate() {
        let t = t0 + 10 * i as i64;
        let v = v.clone().times(t, t0);
        c.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv(key(id), v.encode()))
                .at(t),
        );
    }
    c
}

/// The `transaction_state_anomaly` findings' anomaly ids (`evidence.anomaly`).
fn anomalies(r: &ScanReport) -> Vec<String> {
    of_kind(r, Kind::TransactionStateAnomaly)
        .iter()
        .map(|f| {
            f.evidence
                .get("anomaly")
                .or_else(|| f.evidence.get("kind"))
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// One record of `p` at base sequence `seq`.
fn at_seq(p: Producer, seq: i32) -> Batch {
    Batch::new(p).records(1).sequence(seq)
}

// ----- the coordinator's log --------------------------------------------------------------

/// `TransactionMetadataTest.testTransitFromEmptyToPrepareAbortInV2` and
/// `testTransitFromCompleteAbortToPrepareAbortInV2` (2025-10): under TV2 an EndTxn(ABORT) with
/// no partition added (`noPartitionAdded`) moves Empty or CompleteAbort at epoch 735 to
/// PrepareAbort at 736 (`prepareAbortOrCommit` bumps; the start time is the update time),
/// then CompleteAbort at 736 (`prepareComplete`), no partitions, no marker.
/// `TransactionState.VALID_PREVIOUS_STATES` lists Empty, CompleteCommit and CompleteAbort
/// before PrepareAbort. Nothing to report. The same values with ClientTransactionVersion 0
/// (a v0 PrepareAbort after Empty: `prepareAbortOrCommit` is never reached from Empty
/// under TV0/1) are an `invalid_transition`.
#[test]
fn tv2_abort_from_empty_or_complete_abort_is_a_valid_transition() {
    for before in [state::EMPTY, state::COMPLETE_ABORT] {
        for tv2 in [true, false] {
            let v = |epoch: i16, st: u8| {
                let v = TxnValue::new(100, epoch, st);
                if tv2 { v.v1(-1, -1, 2) } else { v }
            };
            let values = [
                v(735, before),
                v(736, state::PREPARE_ABORT),
                v(736, state::COMPLETE_ABORT),
            ];
            let dir = tempfile::tempdir().unwrap();
            coordinator_log("app", &values, 1_700_000_000_000)
                .write(dir.path())
                .unwrap();
            let r = scan_log_dir(dir.path());
            let a = anomalies(&r);
            let name = format!("before {before}, tv2 {tv2}");
            if tv2 {
                assert!(loud(&r).is_empty(), "{name}: {:#?}", r.findings);
                assert!(a.is_empty(), "{name}: {a:?}");
            } else {
                assert!(
                    a.iter().any(|a| a == "invalid_transition"),
                    "{name}: {a:?} {:#?}",
                    r.findings
                );
            }
        }
    }
}

// ----- the data partitions: sequences ----------------------------------------------------

/// `ProducerStateManagerTest.testRejectNonZeroSequenceForDirectEpochBump` (2025-10):
/// sequences 0–2 at epoch 0, then epoch 1 at sequence 5: `checkSequence` throws
/// `OutOfOrderSequenceException` ("Invalid sequence number for new epoch"); at sequence 0 it
/// is accepted. On disk: `invalid_first_sequence` at the epoch-1 batch, nothing in the twin.
#[test]
fn a_direct_epoch_bump_must_restart_at_sequence_zero() {
    let p0 = Producer::idempotent(7, 0);
    for (seq, refused) in [(5, true), (0, false)] {
        let mut p = PartitionBuilder::new("orders", 0);
        for s in 0..3 {
            p.append(at_seq(p0, s));
        }
        p.append(at_seq(p0.bumped(), seq));
        let (_d, _m, r) = scan(&p);
        if refused {
            assert_eq!(loud(&r), vec![(Kind::InvalidFirstSequence, Some(3))]);
            let f = of_kind(&r, Kind::InvalidFirstSequence)[0];
            assert_eq!(f.severity, Severity::Warning);
            assert_eq!(
                (&f.evidence["expected"], &f.evidence["found"]),
                (&0.into(), &5.into())
            );
        } else {
            assert!(loud(&r).is_empty(), "{:#?}", r.findings);
        }
        // the recovery view takes it either way: epoch 1, last sequence seq
        assert_eq!(entry(&r, 7).0, 1);
    }
}

/// `ProducerStateManagerTest.testAllowNonZeroSequenceForTransactionsV1WithEmptyState` and
/// `UnifiedLogTest.testNonZeroSequenceOnFirstAppendNonZeroEpoch(false)`: a TV0/1
/// transactional producer with no state on the partition may start at sequence 3 (epoch 1):
/// `checkSequence` accepts any sequence when the entry has no epoch. On disk (the log
/// complete from offset 0, no coordinator record saying otherwise): nothing at warning or
/// above; the transaction is open at 0.
#[test]
fn tv1_first_transactional_batch_may_start_at_a_non_zero_sequence() {
    let t1 = Producer::transactional(23, 1);
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(t1).records(2).sequence(3));
    p.commit(t1, 0);
    let (_d, _m, r) = scan(&p);
    assert!(loud(&r).is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 23), (1, 4, 1, None));
    assert_eq!(lso(&r), Some(3));
}

/// `ProducerStateManagerTest.testRejectNonZeroSequenceForTransactionsV2WithEmptyState` and
/// `UnifiedLogTest.testNonZeroSequenceOnFirstAppendNonZeroEpoch(true)` (2025-10,
/// `ProducerAppendInfo.checkSequence`): with a verification entry that supports the epoch
/// bump (a TV2 producer) and no producer state, a transactional batch must start at sequence
/// 0 ("Expected sequence 0 for transactions v2 idempotent producer with no existing state",
/// `OutOfOrderSequenceException`). On disk: `orders-0` complete from offset 0 whose first
/// batch of producer 23 (epoch 1, TV2 by its coordinator record: Ongoing, v1,
/// ClientTransactionVersion 2, listing `orders-0`) starts at sequence 3, which a TV2 leader
/// refuses. The twin at sequence 0 is accepted.
#[test]
fn tv2_first_transactional_batch_must_start_at_sequence_zero() {
    for (seq, refused) in [(3, true), (0, false)] {
        let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
        p.append(
            Batch::new(Producer::transactional(23, 1))
                .records(2)
                .sequence(seq),
        );
        let r = first_batch_case(&tv2_ongoing(1), p, &ScanOptions::default(), |_| {});
        let first_seq = first_sequence_findings(&r);
        if refused {
            assert_eq!(
                first_seq,
                vec![("orders".to_string(), Some(0))],
                "{:#?}",
                r.findings
            );
            let f = of_kind(&r, Kind::InvalidFirstSequence)[0];
            let c = &f.evidence["coordinator_record"];
            assert_eq!(c["transactional_id"], "app", "{:#?}", f.evidence);
            assert_eq!(c["client_transaction_version"], 2);
            assert_eq!(f.evidence["found"], 3);
            assert_eq!(f.producer_id, Some(23));
        } else {
            assert!(first_seq.is_empty(), "{first_seq:?}");
        }
    }
}

const T0: i64 = 1_700_000_000_000;

/// Transactional id `app`'s Ongoing value v1 for producer 23 at `epoch`, listing
/// `orders-0`, with ClientTransactionVersion 2.
fn tv2_ongoing(epoch: i16) -> TxnValue {
    TxnValue::new(23, epoch, state::ONGOING)
        .partitions(&[("orders", &[0])])
        .v1(-1, -1, 2)
}

/// Write `app`'s coordinator record `value` and partition `p` into one log dir,
/// `then(dir)` change it, and scan it with `opts`.
fn first_batch_case(
    value: &TxnValue,
    p: PartitionBuilder,
    opts: &ScanOptions,
    then: impl FnOnce(&Path),
) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    coordinator_log("app", std::slice::from_ref(value), T0)
        .write(dir.path())
        .unwrap();
    // As a broker's log dir holds it: with its producer snapshots and checkpoints.
    klogscan::testkit::LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    then(dir.path());
    pipeline::scan(&[dir.path().to_path_buf()], opts)
}

fn first_sequence_findings(r: &ScanReport) -> Vec<(String, Option<i64>)> {
    of_kind(r, Kind::InvalidFirstSequence)
        .iter()
        .map(|f| (f.topic.clone(), f.offset))
        .collect()
}

/// `orders-0` from offset 0: producer 23's first batch at sequence 3 (epoch 1,
/// transactional).
fn first_batch_at_three() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    p.append(
        Batch::new(Producer::transactional(23, 1))
            .records(2)
            .sequence(3),
    );
    p
}

/// The twins of `tv2_first_transactional_batch_must_start_at_sequence_zero` that a TV2
/// leader accepts or that the files cannot decide, each silent: the coordinator's record
/// of a TV0/1 transaction (`testAllowNonZeroSequenceForTransactionsV1WithEmptyState`:
/// ClientTransactionVersion 0 or 1, or a value v0, which has none), of another epoch of
/// the producer (an earlier or later transaction, which may have run under another
/// version), a log starting above offset 0 (retention may have removed the producer's
/// earlier batches: the leader may have held its state), a producer the snapshot at the
/// log start holds (`currentEntry` not empty), and a compacted topic (the cleaner removes
/// whole batches).
#[test]
fn tv2_first_sequence_needs_the_tv2_record_of_that_epoch_and_the_whole_history() {
    let silent = |what: &str, r: ScanReport| {
        let f = first_sequence_findings(&r);
        assert!(f.is_empty(), "{what}: {f:?}");
    };
    let plain = ScanOptions::default();
    for ctv in [0, 1] {
        let tv1 = TxnValue::new(23, 1, state::ONGOING)
            .partitions(&[("orders", &[0])])
            .v1(-1, -1, ctv);
        silent(
            &format!("ClientTransactionVersion {ctv}"),
            first_batch_case(&tv1, first_batch_at_three(), &plain, |_| {}),
        );
    }
    let v0 = TxnValue::new(23, 1, state::ONGOING).partitions(&[("orders", &[0])]);
    silent(
        "value v0",
        first_batch_case(&v0, first_batch_at_three(), &plain, |_| {}),
    );
    silent(
        "another epoch",
        first_batch_case(&tv2_ongoing(2), first_batch_at_three(), &plain, |_| {}),
    );
    let mut later = PartitionBuilder::new("orders", 0)
        .start_time(T0 + 100)
        .start_offset(10);
    later.append(
        Batch::new(Producer::transactional(23, 1))
            .records(2)
            .sequence(3),
    );
    silent(
        "log start 10",
        first_batch_case(&tv2_ongoing(1), later, &plain, |_| {}),
    );
    // Segment 0 (sequences 0–2 of the same transaction) removed by retention: the
    // snapshot at the first held segment (offset 3) holds producer 23.
    let mut snap = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    snap.append(
        Batch::new(Producer::transactional(23, 1))
            .records(3)
            .sequence(0),
    );
    snap.roll();
    snap.append(
        Batch::new(Producer::transactional(23, 1))
            .records(2)
            .sequence(3),
    );
    let r = first_batch_case(&tv2_ongoing(1), snap, &plain, |dir| {
        let part = dir.join("orders-0");
        assert!(part.join("00000000000000000003.snapshot").exists());
        for ext in ["log", "index", "timeindex"] {
            let f = part.join(format!("00000000000000000000.{ext}"));
            if f.exists() {
                std::fs::remove_file(f).unwrap();
            }
        }
    });
    silent("a snapshot entry at the log start", r);
    let compacted = ScanOptions::default().with_compacted_topics(["orders"]);
    silent(
        "compacted",
        first_batch_case(&tv2_ongoing(1), first_batch_at_three(), &compacted, |_| {}),
    );
}

/// `collect` + `merge` give the scan's answer (the candidates travel in the bundles'
/// replay outcomes), and a `-future` copy of the partition is not judged as the partition.
#[test]
fn tv2_first_sequence_through_bundles_and_on_the_live_copy_alone() {
    use klogscan::bundle;
    use klogscan::finding::CopyKind;
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let brokers = klogscan::testkit::brokers::tv2_first_sequence(data.path()).unwrap();
    let all: Vec<_> = brokers.iter().flatten().cloned().collect();
    let scanned = pipeline::scan(&all, &ScanOptions::default());
    let files: Vec<_> = brokers
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let f = out.path().join(format!("{i}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            bundle::collect(dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect();
    let merged = bundle::merge(&files, &ScanOptions::default())
        .unwrap()
        .report;
    for r in [&scanned, &merged] {
        let f = of_kind(r, Kind::InvalidFirstSequence);
        assert_eq!(f.len(), 1, "{:#?}", r.findings);
        assert_eq!(f[0].source.copy, CopyKind::Live);
        assert_eq!(f[0].offset, Some(0));
        assert_eq!(f[0].source.cluster_id.as_deref(), Some("c1"));
    }
    assert_eq!(
        of_kind(&scanned, Kind::InvalidFirstSequence)[0].evidence,
        of_kind(&merged, Kind::InvalidFirstSequence)[0].evidence
    );
}

// ----- the data partitions: markers and epochs -------------------------------------------

/// `UnifiedLogTest.testTransactionIsOngoingAndVerificationGuardTV2(CLIENT)`: producer 23 at
/// epoch 1 writes idempotent records (sequences 0–1), then transactional ones (2–3), then
/// the coordinator's COMMIT at epoch 1, the epoch of the data (Kafka's own TV2 test writes
/// it unbumped, and `ProducerAppendInfo.appendEndTxnMarker` only checks that the marker's
/// epoch is not below the producer's). Every append succeeds; no transaction is ongoing
/// after the marker. On disk: nothing at warning or above (the producer was never seen
/// bumping, so no TV2 is inferred), nothing open, the last stable offset past the marker.
#[test]
fn idempotent_then_transactional_then_an_unbumped_commit_is_accepted() {
    let idem = Producer::idempotent(23, 1);
    let txn = Producer::transactional(23, 1);
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(idem).records(2).sequence(0));
    p.append(Batch::new(txn).records(2).sequence(2));
    p.commit(txn, 0);
    let (_d, _m, r) = scan(&p);
    assert!(loud(&r).is_empty(), "{:#?}", r.findings);
    assert!(of_kind(&r, Kind::MarkerEpochNotBumped).is_empty());
    assert_eq!(entry(&r, 23), (1, 3, 3, None));
    assert_eq!(lso(&r), Some(5));
}

/// `UnifiedLogTest.testEmptyTransactionStillClearsVerificationGuard(true/false)`: the
/// coordinator's COMMIT for a transaction that wrote nothing to this partition (epoch 2 under
/// TV2, 1 under TV1) is appended to an empty log; nothing is ongoing after it. On disk: the
/// marker closes nothing (`marker_without_transaction`, info), nothing louder.
#[test]
fn a_commit_closing_nothing_is_only_an_info() {
    for epoch in [2i16, 1] {
        let mut p = PartitionBuilder::new("orders", 0);
        p.commit(Producer::transactional(23, epoch), 0);
        let (_d, _m, r) = scan(&p);
        assert!(loud(&r).is_empty(), "epoch {epoch}: {:#?}", r.findings);
        let m = of_kind(&r, Kind::MarkerWithoutTransaction);
        assert_eq!(m.len(), 1, "epoch {epoch}: {:#?}", r.findings);
        assert_eq!((m[0].severity, m[0].offset), (Severity::Info, Some(0)));
        assert_eq!(lso(&r), Some(1));
    }
}

/// Two TV2 transactions of producer 50 (data at e, COMMIT at e + 1, as
/// `TransactionMetadata.prepareAbortOrCommit` bumps under TV2 and the markers carry
/// `producerEpoch`), then the third transaction's data at 2.
fn two_tv2_transactions() -> (PartitionBuilder, Producer) {
    let mut p = PartitionBuilder::new("orders", 0);
    let mut t = Producer::transactional(50, 0);
    for _ in 0..2 {
        p.append(Batch::new(t).records(2));
        t = t.bumped();
        p.commit(t, 0);
    }
    p.append(Batch::new(t).records(2));
    (p, t)
}

/// `TransactionMetadataTest.testEpochBumpOnEndTxn` with `UnifiedLogTest
/// .testStaleProducerEpochReturnsRecoverableErrorForTV2Clients` on a COMMIT: after a TV2
/// COMMIT at the bumped epoch a late produce request of the old epoch is refused
/// (`ProducerAppendInfo.checkProducerEpoch`, `InvalidProducerEpochException`). On disk it is
/// a `zombie_write` (error) at its offset; the same batch at the bumped epoch from sequence
/// 0 (the client's next transaction) is normal.
#[test]
fn tv2_data_below_a_bumped_commit_is_a_zombie_write() {
    for zombie in [true, false] {
        let (mut p, t) = two_tv2_transactions();
        p.commit(t.bumped(), 0);
        let next = if zombie { t } else { t.bumped() };
        let at = p.append(Batch::new(next).records(1).sequence(0));
        let (_d, m, r) = scan(&p);
        let off = m.batches[at].base_offset;
        let z = of_kind(&r, Kind::ZombieWrite);
        if zombie {
            assert_eq!(z.len(), 1, "{:#?}", r.findings);
            assert_eq!((z[0].severity, z[0].offset), (Severity::Error, Some(off)));
        } else {
            assert!(z.is_empty(), "{z:#?}");
            assert!(
                loud(&r).iter().all(|(k, _)| *k == Kind::HangingTransaction),
                "{:#?}",
                r.findings
            );
        }
    }
}

/// `TransactionMetadata.prepareAbortOrCommit` (2025-10): under TV2 every EndTxn bumps the
/// epoch, so the coordinator's markers always carry an epoch above the data's; only an admin
/// abort (`kafka-transactions.sh abort`, WriteTxnMarkers at the producer's epoch) writes one
/// at the data's epoch. `ProducerAppendInfo.appendEndTxnMarker` still accepts such a marker
/// (its only epoch check is "not below the producer's"), so the log loads. On disk, after
/// two bumped COMMITs (TV2 inferred), a COMMIT at the data's epoch is one
/// `marker_epoch_not_bumped` (warning) and nothing that says the broker refused it; the
/// twin, bumped, is quiet.
#[test]
fn a_tv2_commit_at_the_data_epoch_is_a_warning_not_a_refusal() {
    for bumped in [false, true] {
        let (mut p, t) = two_tv2_transactions();
        let at = p.commit(if bumped { t.bumped() } else { t }, 0);
        let (_d, m, r) = scan(&p);
        let off = m.batches[at].base_offset;
        let nb = of_kind(&r, Kind::MarkerEpochNotBumped);
        if bumped {
            assert!(nb.is_empty(), "{nb:#?}");
            assert!(loud(&r).is_empty(), "{:#?}", r.findings);
        } else {
            assert_eq!(loud(&r), vec![(Kind::MarkerEpochNotBumped, Some(off))]);
            assert_eq!(nb[0].severity, Severity::Warning);
            assert_eq!(nb[0].evidence["marker_epoch"], 2);
            assert_eq!(nb[0].evidence["data_epoch"], 2);
        }
        // the marker closes the transaction either way (recovery view)
        assert_eq!(entry(&r, 50).3, None);
        assert_eq!(lso(&r), Some(off + 1));
    }
}

/// `UnifiedLog.updateProducers` (2025-10: "we always bump epoch upon upgrading to TV2") and
/// `TransactionMetadata.prepareAbortOrCommit`: a TV0/1 producer commits at its data's epoch
/// 4; after the `transaction.version` upgrade its next EndTxn is TV2 and the COMMIT carries
/// epoch 5, then the transactions after it run at 5 from sequence 0 and commit at 6. On
/// disk: one `commit_epoch_above_data` (info) saying the producer switched to TV2, nothing
/// louder; a COMMIT two epochs up is still only an info but not the TV2 pattern.
#[test]
fn the_upgrade_to_tv2_bumps_the_epoch_once_and_is_only_an_info() {
    for up in [1i16, 2] {
        let mut p = PartitionBuilder::new("orders", 0);
        let t = Producer::transactional(60, 4);
        p.append(Batch::new(t).records(1));
        p.commit(t, 0);
        p.append(Batch::new(t).records(1));
        let marker = p.commit(t.with_epoch(4 + up), 0);
        let next = t.with_epoch(4 + up);
        p.append(Batch::new(next).records(1).sequence(0));
        p.commit(next.bumped(), 0);
        let (_d, m, r) = scan(&p);
        assert!(loud(&r).is_empty(), "up {up}: {:#?}", r.findings);
        let c = of_kind(&r, Kind::CommitEpochAboveData);
        assert_eq!(c.len(), 1, "up {up}: {:#?}", r.findings);
        assert_eq!(c[0].offset, Some(m.batches[marker].base_offset));
        assert_eq!(c[0].severity, Severity::Info);
        assert_eq!(c[0].evidence["transaction_version_2_after"], up == 1);
    }
}

/// `TransactionCoordinatorTest.shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExisting
/// CompleteTransaction(2)` and `…CompleteCommitTransaction(2)`: a TV2 transactional id ends
/// its transaction at e + 1 (CompleteCommit or CompleteAbort, markers at e + 1); a new
/// producer instance's InitProducerId bumps once more (`prepareIncrementProducerEpoch`):
/// Empty at e + 2, and its transactions run from e + 2 at sequence 0, committing one epoch up.
/// Nothing to report, in the coordinator's log or the data partitions.
#[test]
fn tv2_init_producer_id_after_a_complete_bumps_once_more() {
    use klogscan::testkit::txns::{Cluster, Txn};
    for abort in [false, true] {
        let a = ("orders", 0);
        let b = ("orders", 1);
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cluster::new(Some("c1")).coordinator(4).tv2();
        let p = c.run(&Txn::new("app", Producer::transactional(100, 3), &[a, b]));
        let t = if abort {
            Txn::new("app", p, &[a, b]).abort()
        } else {
            Txn::new("app", p, &[a, b])
        };
        let p = c.run(&t);
        assert_eq!(p.epoch, 5);
        let now = c.now();
        c.coordinator_record(
            "app",
            Some(
                TxnValue::new(100, 6, state::EMPTY)
                    .v1(-1, -1, 2)
                    .times(now, -1),
            ),
        );
        let p = c.run(&Txn::new("app", p.with_epoch(6), &[a, b]));
        c.run(&Txn::new("app", p, &[a]));
        c.advance(30 * 60_000);
        c.plain(a, 1);
        c.write(dir.path(), 1).unwrap();
        let r = scan_log_dir(dir.path());
        assert!(loud(&r).is_empty(), "abort {abort}: {:#?}", r.findings);
        assert!(
            anomalies(&r).is_empty(),
            "abort {abort}: {:?}",
            anomalies(&r)
        );
    }
}
