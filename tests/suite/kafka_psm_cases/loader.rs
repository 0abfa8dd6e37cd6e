//! `LogLoaderTest`'s producer-state and recovery cases as a broker's log dir on disk:
//! `verify` (through `request::verify`) predicts what `LogLoader.load` does on the next
//! start — which segments it recovers (`recoverLog`, `loadSegmentFiles`), which snapshots
//! it deletes and loads — and the scan's replay gives the producer state and the aborted
//! transactions the rebuilt `.txnindex` holds.

use super::{deleted_snapshots, entry, kinds, one_at, scan};
use crate::common::cases::{aborted, recovered};
use klogscan::finding::Kind;
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::PartitionVerification;
use tempfile::TempDir;

fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

fn verify(m: &Manifest) -> PartitionVerification {
    super::verify_at(m.dir.parent().unwrap())
}

fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

/// `LogLoaderTest.testLoadingLogKeepsLargestStrayProducerStateSnapshot`: producer 1 writes
/// sequences 0 | 1 | 2, 3 in three segments (bases 0, 1, 2); the broker left snapshots at 1,
/// 2 and 4 (the log end, at close). An empty stray snapshot at 3 is deleted on load; 4,
/// above every segment base, is kept and loaded.
#[test]
fn loading_log_keeps_largest_stray_producer_state_snapshot() {
    let p0 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(p0, 0));
    p.roll();
    p.append(one_at(p0, 1));
    p.roll();
    p.append(one_at(p0, 2));
    p.append(one_at(p0, 3));
    let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(false), p);
    let snaps: Vec<_> = m
        .other_files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".snapshot"))
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        snaps,
        ["1", "2", "4"].map(|o| format!("{:020}.snapshot", o.parse::<i64>().unwrap()))
    );
    let stray = format!("{:020}.snapshot", 3);
    std::fs::write(m.dir.join(&stray), b"").unwrap();
    let v = verify(&m);
    assert_eq!(
        deleted_snapshots(&v),
        vec![(stray, "stray_snapshot".to_string())]
    );
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(4));
}

/// `LogLoaderTest.testRecoverAfterNonMonotonicCoordinatorEpochWrite`: two ABORTs of producer
/// 1, the second a day later (the leader had expired the producer) with coordinator epoch 4
/// after 5 (KAFKA-9144). Recovery relaxes the check and takes the latest write: the state
/// holds the second marker's timestamp and coordinator epoch, and the load does not fail.
/// The regression is still reported (brokers ≤ 2.4.0 refused to load it), with the expiry
/// that explains why the leader took it.
#[test]
fn recover_after_non_monotonic_coordinator_epoch_write() {
    const DAY: i64 = 86_400_000;
    let t0 = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("ll", 0)
        .time_step(0)
        .broker_files(PartitionFileOptions::default());
    p.abort(t0, 5);
    p.advance_time(DAY);
    p.abort(t0, 4);
    let (_d, m, r) = scan(&p);
    assert_eq!(
        kinds(&r),
        vec![
            (Kind::MarkerWithoutTransaction, Some(0)),
            (Kind::CoordinatorEpochRegression, Some(1)),
            (Kind::MarkerWithoutTransaction, Some(1)),
        ]
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::CoordinatorEpochRegression)
        .unwrap();
    assert_eq!(f.evidence["exceeds_producer_id_expiration"], true);
    let s = super::state(&r, 1);
    assert_eq!(
        (s.coordinator_epoch, s.last_timestamp),
        (4, m.batches[1].first_timestamp)
    );
    assert_eq!(entry(&r, 1), (0, -1, -1, None));
    let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(false), p);
    let v = verify(&m);
    assert!(
        v.prediction.load_failure.is_none(),
        "{:#?}",
        v.prediction.load_failure
    );
    assert!(v.prediction.truncation.is_none());
}

/// The log of `LogLoaderTest.testFullTransactionIndexRecovery` (and of
/// `testRecoverOnlyLastSegment`, `testRecoverLastSegmentWithNoSnapshots`): producers 1–4
/// interleave transactions with plain data; producer 1 aborts at 29, 3 commits at 58, 2
/// aborts at 74, 4 commits at 89. Segments roll every 640 bytes.
fn four_transactions(files: PartitionFileOptions) -> PartitionBuilder {
    let t = |pid| Producer::transactional(pid, 0);
    let mut p = PartitionBuilder::new("ll", 0)
        .segment_bytes(640)
        .broker_files(files);
    let plain = |n| Batch::new(Producer::PLAIN).records(n);
    p.append(Batch::new(t(1)).records(5)); // 0..4
    p.append(plain(3)); // 5..7
    p.append(Batch::new(t(2)).records(2)); // 8..9
    p.append(Batch::new(t(1)).records(4)); // 10..13
    p.append(Batch::new(t(3)).records(3)); // 14..16
    p.append(plain(2)); // 17..18
    p.append(Batch::new(t(1)).records(10)); // 19..28
    p.abort(t(1), 0); // 29
    p.append(Batch::new(t(2)).records(6)); // 30..35
    p.append(Batch::new(t(4)).records(3)); // 36..38
    p.append(plain(10)); // 39..48
    p.append(Batch::new(t(3)).records(9)); // 49..57
    p.commit(t(3), 0); // 58
    p.append(Batch::new(t(4)).records(8)); // 59..66
    p.append(Batch::new(t(2)).records(7)); // 67..73
    p.abort(t(2), 0); // 74
    p.append(plain(10)); // 75..84
    p.append(Batch::new(t(4)).records(4)); // 85..88
    p.commit(t(4), 0); // 89
    p
}

const KAFKA_ABORTED: [(i64, i64, i64, i64); 2] = [(1, 0, 29, 8), (2, 8, 74, 36)];

/// `LogLoaderTest.testFullTransactionIndexRecovery`: every offset and transaction index
/// deleted; the broker recovers every segment and rebuilds the aborted transactions
/// `(1, 0, 29, LSO 8)` and `(2, 8, 74, LSO 36)`.
#[test]
fn full_transaction_index_recovery() {
    let p = four_transactions(PartitionFileOptions::default());
    let (_d, m, r) = scan(&p);
    assert_eq!(m.log_end_offset, 90);
    assert!(m.segments.len() > 2, "{} segments", m.segments.len());
    assert_eq!(aborted(&r), KAFKA_ABORTED);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(false), p);
    for (base, _) in &m.segments {
        for ext in ["index", "txnindex"] {
            let f = m.dir.join(format!("{base:020}.{ext}"));
            if f.exists() {
                std::fs::remove_file(f).unwrap();
            }
        }
    }
    let v = verify(&m);
    let all: Vec<String> = m.segments.iter().map(|(b, _)| seg(*b)).collect();
    assert_eq!(recovered(&v), all);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(90));
    assert_eq!(aborted(&super::scan_dir(&m.dir)), KAFKA_ABORTED);
}

/// `LogLoaderTest.testRecoverOnlyLastSegment` and `testRecoverLastSegmentWithNoSnapshots`:
/// the last segment's offset and transaction indexes deleted, the recovery point at its
/// base, an unclean shutdown: only that segment is recovered; with the snapshots deleted
/// too, the recovery's producer-state rebuild replays from the start of the log (Kafka's
/// test counts the segments read). Either way the recovery leaves a snapshot at the log end
/// (`LogLoader.recoverSegment`), which the final rebuild loads. The aborted transactions
/// are the same either way.
#[test]
fn recover_only_last_segment_with_and_without_snapshots() {
    for snapshots in [true, false] {
        let files = PartitionFileOptions {
            snapshots,
            ..PartitionFileOptions::default()
        };
        let p = four_transactions(files);
        let last = p
            .write(tempfile::tempdir().unwrap().path())
            .unwrap()
            .segments;
        let last_base = last.last().unwrap().0;
        let (_d, m) = write(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("ll", 0, last_base),
            p,
        );
        for ext in ["index", "txnindex"] {
            let f = m.dir.join(format!("{last_base:020}.{ext}"));
            if f.exists() {
                std::fs::remove_file(f).unwrap();
            }
        }
        let v = verify(&m);
        assert_eq!(recovered(&v), vec![seg(last_base)], "snapshots {snapshots}");
        assert!(v.prediction.truncation.is_none());
        let ps = &v.prediction.producer_state;
        assert_eq!((ps.snapshot_offset, ps.replay_from), (Some(90), Some(90)));
        assert_eq!(aborted(&super::scan_dir(&m.dir)), KAFKA_ABORTED);
    }
}

/// `LogLoaderTest.testProducerSnapshotsRecoveryAfterUncleanShutdown` (current message
/// format): 101 single-record batches over at least five segments, an unclean shutdown with
/// the recovery point one past the base of the fourth segment from the end: exactly the
/// segments from that one on are recovered, and nothing is truncated.
#[test]
fn producer_snapshots_recovery_after_unclean_shutdown() {
    let mut p = PartitionBuilder::new("ll", 0)
        .segment_bytes(640)
        .broker_files(PartitionFileOptions::default());
    for i in 0..=100 {
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let bases: Vec<i64> = p
        .write(tempfile::tempdir().unwrap().path())
        .unwrap()
        .segments
        .iter()
        .map(|s| s.0)
        .collect();
    assert!(bases.len() >= 5, "{bases:?}");
    let rp_segment = bases[bases.len() - 4];
    let (_d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, rp_segment + 1),
        p,
    );
    let v = verify(&m);
    let after: Vec<String> = bases
        .iter()
        .filter(|b| **b >= rp_segment)
        .map(|b| seg(*b))
        .collect();
    assert_eq!(recovered(&v), after);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(101));
    // near miss: after a clean shutdown nothing is recovered
    let (_d, m) = {
        let mut p = PartitionBuilder::new("ll", 0)
            .segment_bytes(640)
            .broker_files(PartitionFileOptions::default());
        for i in 0..=100 {
            p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
        }
        write(
            LogDirBuilder::new(1)
                .clean_shutdown(true)
                .recovery_point("ll", 0, rp_segment + 1),
            p,
        )
    };
    assert!(recovered(&verify(&m)).is_empty());
}

/// A log dir after an unclean shutdown with the recovery point at 0 (Kafka's `createLog`)
/// and DeleteRecords to offset 1 (`log-start-offset-checkpoint`).
fn after_delete_records_to_1() -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 0)
        .log_start_offset("ll", 0, 1)
}

/// `LogLoaderTest.testLoadProducersAfterDeleteRecordsMidSegment`: producers 1 and 2 write
/// at offsets 0 and 1, then DeleteRecords moves the log start to 1 inside the segment. On
/// load both producers are kept (the snapshot at the log end holds them, and the segment
/// still holds both batches).
#[test]
fn load_producers_after_delete_records_mid_segment() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(Producer::idempotent(1, 0), 0));
    p.append(one_at(Producer::idempotent(2, 0), 0));
    let (_d, m) = write(after_delete_records_to_1(), p);
    let v = verify(&m);
    let ps = &v.prediction.producer_state;
    assert_eq!((ps.snapshot_offset, ps.producers), (Some(2), Some(2)));
    assert_eq!(v.prediction.log_start_offset_after, Some(1));
}

/// `LogLoaderTest.testLoadProducersAfterDeleteRecordsOnSegment`: producer 1 writes at 0 in
/// the first segment, producer 2 at 1 in the second; DeleteRecords to 1 and retention
/// delete the first segment. After an unclean shutdown (recovery point 0) the broker
/// recovers the remaining segment — its intermediate rebuild deletes every snapshot outside
/// (log start, segment base] — and producer 2 is the only producer left.
#[test]
fn load_producers_after_delete_records_on_segment() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(Producer::idempotent(1, 0), 0));
    p.roll();
    p.append(one_at(Producer::idempotent(2, 0), 0));
    let (_d, m) = write(after_delete_records_to_1(), p);
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = m.dir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(1)]);
    assert_eq!(v.prediction.producer_state.producers, Some(1));
    assert_eq!(v.prediction.log_start_offset_after, Some(1));
}

/// The clean-shutdown side of `LogLoaderTest.testLoadProducersAfterDeleteRecordsOnSegment`
/// (Kafka's test takes the unclean one): nothing is recovered, the snapshot at the log end
/// is loaded as is (`ProducerStateManager.loadFromSnapshot`), and it still holds producer 1,
/// whose only batch was in the deleted segment: the broker starts with both producers,
/// though the remaining log shows one. Deleting records does not remove producer state.
#[test]
fn load_producers_after_delete_records_on_segment_clean_shutdown() {
    let (_d, m) = deleted_first_segment(0);
    let v = verify(&m);
    assert!(recovered(&v).is_empty(), "{:?}", recovered(&v));
    let ps = &v.prediction.producer_state;
    assert_eq!((ps.snapshot_offset, ps.replay_from), (Some(2), Some(2)));
    assert_eq!(ps.producers, Some(2));
    assert_eq!(v.prediction.log_start_offset_after, Some(1));
    // The CLI keeps no producer states (only each one's last offset): the same answer.
    let dir = m.dir.parent().unwrap();
    let run = crate::common::run::klogscan(
        &[
            "verify".as_ref(),
            dir.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        None,
        60,
    );
    let out: serde_json::Value = serde_json::from_str(&run.out).unwrap();
    let p = &out["partitions"][0];
    assert_eq!(p["prediction"]["producer_state"]["producers"], 2, "{p:#}");
}

/// The same log, producer 1's batch written `producer.id.expiration.ms` (one day) before
/// producer 2's: loading the snapshot at the reference time (producer 2's batch) drops
/// the expired entry (`ProducerStateManager.isProducerExpired`), so one producer is left.
#[test]
fn snapshot_entries_expired_at_load_are_not_loaded() {
    let (_d, m) = deleted_first_segment(86_400_000);
    let v = verify(&m);
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(2));
    assert_eq!(v.prediction.producer_state.producers, Some(1));
}

/// A KRaft broker loads its logs before it applies the metadata log's dynamic configs: on
/// the first publish `BrokerMetadataPublisher.onMetadataUpdate` runs `initializeManagers`
/// (`LogManager.startup`, which loads every log) before `DynamicConfigPublisher`, and the
/// `DynamicBrokerConfig` the broker starts with holds no value of the metadata log. So the
/// snapshot's producers expire at the load against the static `producer.id.expiration.ms`
/// (its default, a day: the static config is not on disk), whatever dynamic value the
/// metadata log sets. Producer 1 an hour before the reference time under a cluster-wide
/// dynamic 100 ms: kept at the load (two producers), while the scan's replay holds the
/// appends against the dynamic value (producer 2's jump to sequence 5 fifteen seconds
/// later is no `sequence_gap`: the leader had expired it). Near miss: a day before, the
/// load drops producer 1.
#[test]
fn a_dynamic_expiration_is_not_in_force_when_the_logs_load() {
    use crate::kafka_kraft_managers_cases::broker_config;
    use klogscan::testkit::metadata::MetadataLogBuilder;
    use klogscan::testkit::scenario::DEFAULT_START_MS;
    for (gap, want) in [(3_600_000, Some(2)), (86_400_000, Some(1))] {
        let mut p = two_producers_a_segment_each(Producer::idempotent(1, 0), gap);
        p.advance_time(15_000);
        p.append(Batch::new(Producer::idempotent(2, 0)).sequence(5));
        let ld = LogDirBuilder::new(1)
            .cluster_id("c1")
            .clean_shutdown(true)
            .recovery_point("ll", 0, 3)
            .log_start_offset("ll", 0, 1);
        let (d, m) = write(ld, p);
        remove_first_segment(&m);
        // Written when the partition's first batch is (the reference time is the newest
        // timestamp of the cluster's logs).
        let mut meta = MetadataLogBuilder::new(DEFAULT_START_MS);
        meta.batch(&[broker_config("", "producer.id.expiration.ms", Some("100"))]);
        meta.write(m.dir.parent().unwrap()).unwrap();
        let opts = klogscan::results::ScanOptions::default();
        let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &opts);
        assert!(
            !kinds(&r).iter().any(|(k, _)| *k == Kind::SequenceGap),
            "the dynamic value is read: {:?}",
            kinds(&r)
        );
        let req = klogscan::request::Request::new([d.path()]);
        let a = klogscan::request::verify(&req, None).unwrap();
        let v = (a.report.partitions.iter())
            .find(|v| v.topic == "ll")
            .expect("ll-0 verified");
        let ps = &v.prediction.producer_state;
        assert_eq!(ps.snapshot_offset, Some(3), "gap {gap}");
        assert_eq!(ps.producers, want, "gap {gap}");
    }
}

/// The same log with producer 1's batch transactional and never ended: the snapshot at the
/// log end holds its open transaction (`ProducerStateManager.loadProducerEntry` puts it
/// back among the ongoing ones, and an entry with an open transaction never expires), so
/// after a clean shutdown the broker starts with it open, though its segment is gone and
/// the remaining log shows none; the same a day later.
#[test]
fn an_open_transaction_of_a_deleted_segment_lives_on_in_the_snapshot() {
    for gap in [0, 86_400_000] {
        let (_d, m) = deleted_first_segment_of(Producer::transactional(1, 0), gap);
        let ps = verify(&m).prediction.producer_state;
        assert_eq!(ps.snapshot_offset, Some(2));
        assert_eq!(
            (ps.producers, ps.open_transactions),
            (Some(2), Some(1)),
            "gap {gap}"
        );
    }
}

/// After an unclean shutdown every segment from the recovery point on is recovered, each
/// by a producer-state manager of its own that leaves a snapshot at the segment's end
/// (`LogLoader.recoverSegment`); the final rebuild loads the last of them, and
/// `ProducerStateManager.loadFromSnapshot` drops the producers expired at that load
/// (`isProducerExpired`: idle `producer.id.expiration.ms`, one day, or more). Producer 1's
/// batch is exactly a day older than producer 2's (the reference time; the testkit's clock
/// also moves 1 s a batch): one producer is left. Negative twins: a millisecond less than a
/// day, both are left; with producer 1's transaction open, it never expires.
#[test]
fn producers_expired_at_a_recovery_s_reload_are_not_loaded() {
    let cases = [
        (Producer::idempotent(1, 0), 86_399_000, (Some(1), Some(0))),
        (Producer::idempotent(1, 0), 86_398_999, (Some(2), Some(0))),
        (
            Producer::transactional(1, 0),
            86_399_000,
            (Some(2), Some(1)),
        ),
    ];
    for (first, gap, want) in cases {
        let (_d, m) = two_segments_recovered(first, gap);
        let ps = verify(&m).prediction;
        assert_eq!(ps.recovered_segments.len(), 2, "{ps:#?}");
        let ps = ps.producer_state;
        assert_eq!(
            (ps.producers, ps.open_transactions),
            want,
            "{first:?} {gap}"
        );
    }
}

/// Producer 1 at offset 0 in the first segment, producer 2 at 1 in the second, `gap_ms`
/// apart; an unclean shutdown with the recovery point at 0.
fn two_segments_recovered(first: Producer, gap_ms: i64) -> (TempDir, Manifest) {
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, 0);
    write(ld, two_producers_a_segment_each(first, gap_ms))
}

/// `first` at offset 0 in the first segment, producer 2 at 1 in the second, `gap_ms` apart.
fn two_producers_a_segment_each(first: Producer, gap_ms: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    p.append(one_at(first, 0));
    p.advance_time(gap_ms);
    p.roll();
    p.append(one_at(Producer::idempotent(2, 0), 0));
    p
}

/// Producer 1 at offset 0 in the first segment, producer 2 at 1 in the second, `gap_ms`
/// apart; the first segment deleted (log start 1), a clean shutdown.
fn deleted_first_segment(gap_ms: i64) -> (TempDir, Manifest) {
    deleted_first_segment_of(Producer::idempotent(1, 0), gap_ms)
}

/// [`deleted_first_segment`] with `first` writing the first batch.
fn deleted_first_segment_of(first: Producer, gap_ms: i64) -> (TempDir, Manifest) {
    let p = two_producers_a_segment_each(first, gap_ms);
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(true)
        .recovery_point("ll", 0, 2)
        .log_start_offset("ll", 0, 1);
    let (d, m) = write(ld, p);
    remove_first_segment(&m);
    (d, m)
}

/// Delete the first segment (base 0) of `m` and its indexes.
fn remove_first_segment(m: &Manifest) {
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let f = m.dir.join(format!("{:020}.{ext}", 0));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
}

/// `LogLoaderTest.testCorruptIndexRebuild`: 200 single-record batches in many segments,
/// every offset and time index overwritten with two spaces, an unclean shutdown with the
/// recovery point at 0: every segment is recovered (its indexes rebuilt) and the log keeps
/// all 200 offsets. Each corrupt index is reported. Since Kafka 2.3 `LogSegment.sanityCheck`
/// no longer reads offset and time indexes at load, so after a clean shutdown nothing is
/// recovered and the corrupt indexes stay in service.
#[test]
fn corrupt_index_rebuild() {
    let build = || {
        let mut p = PartitionBuilder::new("ll", 0)
            .segment_bytes(2000)
            .broker_files(PartitionFileOptions::default().index_interval(1));
        for i in 0..200 {
            p.append(Batch::new(Producer::PLAIN).values([format!("{i:010}")]));
        }
        p
    };
    for clean in [false, true] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("ll", 0, 0);
        let (_d, m) = write(ld, build());
        assert!(m.segments.len() > 2);
        for (base, _) in &m.segments {
            for ext in ["index", "timeindex"] {
                std::fs::write(m.dir.join(format!("{base:020}.{ext}")), b"  ").unwrap();
            }
        }
        let v = verify(&m);
        let corrupt = v
            .findings
            .iter()
            .filter(|f| f.kind == Kind::IndexCorrupt)
            .count();
        assert_eq!(corrupt, 2 * m.segments.len(), "{:#?}", v.findings);
        let all: Vec<String> = m.segments.iter().map(|(b, _)| seg(*b)).collect();
        if clean {
            assert!(recovered(&v).is_empty(), "{:?}", recovered(&v));
        } else {
            assert_eq!(recovered(&v), all);
        }
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(200));
    }
}

/// `LogLoaderTest.testLogEndLessThanStartAfterReopen` and
/// `testCorruptedLogRecoveryDoesNotDeleteProducerStateSnapshotsPostRecovery`: nine
/// single-record segments (bases 0–8, snapshots at 1–9), DeleteRecords to 4, then segment 1
/// overwritten with garbage. After an unclean shutdown recovery truncates segment 1 to
/// nothing and deletes every later segment; the log now ends below its start (4), so every
/// segment goes and the log restarts empty at 4. No snapshot survives: those at or below 4
/// are below the log start, the others above the new log end.
#[test]
fn log_end_less_than_start_after_reopen() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for i in 0..9 {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    let (_d, m) = write(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("ll", 0, 0)
            .log_start_offset("ll", 0, 4),
        p,
    );
    assert_eq!(m.segments.len(), 9);
    std::fs::write(m.dir.join(seg(1)), b"corruptRecord").unwrap();
    let v = verify(&m);
    let pr = &v.prediction;
    let t = pr.truncation.as_ref().expect("a truncation");
    assert_eq!((t.segment.as_str(), t.position), (seg(1).as_str(), 0));
    let all: Vec<String> = m.segments.iter().map(|(b, _)| seg(*b)).collect();
    assert_eq!(pr.deleted_segments, all);
    assert_eq!(
        (pr.log_start_offset_after, pr.log_end_offset_after),
        (Some(4), Some(4))
    );
    let mut gone: Vec<(String, String)> = deleted_snapshots(&v);
    gone.sort();
    let want: Vec<(String, String)> = (1..=9)
        .map(|o| {
            let why = if o <= 4 {
                "snapshot_below_log_start"
            } else {
                "snapshot_beyond_log"
            };
            (format!("{o:020}.snapshot"), why.to_string())
        })
        .collect();
    assert_eq!(gone, want);
    assert_eq!(pr.producer_state.snapshot_offset, None);
}

/// `LogLoaderTest.testLogRecoversForLeaderEpoch`: batches at leader epochs 1, 2, 2, 3
/// (offsets 0–3) and a `leader-epoch-checkpoint` cut back to its first entry `1 0`. The
/// checkpoint disagrees with the batches (epochs 2 from 1 and 3 from 3 are missing); the
/// whole checkpoint raises nothing.
#[test]
fn log_recovers_for_leader_epoch() {
    let mut p = PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default());
    for e in [1, 2, 2, 3] {
        p.set_leader_epoch(e);
        p.append(Batch::new(Producer::PLAIN).values(["random"]));
    }
    let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(false), p);
    let ckpt = m.dir.join("leader-epoch-checkpoint");
    assert_eq!(
        std::fs::read_to_string(&ckpt).unwrap(),
        "0\n3\n1 0\n2 1\n3 3\n"
    );
    let mismatches = |v: &PartitionVerification| {
        v.findings
            .iter()
            .filter(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
            .count()
    };
    assert_eq!(mismatches(&verify(&m)), 0);
    std::fs::write(&ckpt, "0\n1\n1 0\n").unwrap();
    let v = verify(&m);
    assert_eq!(mismatches(&v), 1, "{:#?}", v.findings);
    let f = v
        .findings
        .iter()
        .find(|f| f.kind == Kind::LeaderEpochCheckpointMismatch)
        .unwrap();
    assert!(
        f.message
            .contains("at offset 1 the checkpoint gives epoch 1 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 2"),
        "{}",
        f.message
    );
}
