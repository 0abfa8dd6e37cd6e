//! `ProducerStateManagerTest`'s snapshot, truncation, reload and first-unstable-offset
//! cases. The manager's `truncateAndReload(logStart, logEnd)` is the call `LogLoader.load`
//! makes once the log start checkpoint and the recovery's truncation have fixed those
//! offsets (and each segment recovery makes with the segment's base as the end), so each
//! case is the log dir whose load makes that call; `truncateFullyAndStartAt` is the load of
//! a log that ends below its log start checkpoint (`deleteSegmentsIfLogStartGreaterThanLogEnd`).

use super::*;
use crate::common::cases::{entry, lso, scan, scan_dir, state};
use klogscan::testkit::{Batch, PartitionFileOptions, Producer};

/// A data batch of one record at sequence `seq` (Kafka's tests append one sequence at a
/// time).
fn one_at(p: Producer, seq: i32) -> Batch {
    Batch::new(p).records(1).sequence(seq)
}

/// A partition writing its broker files (indexes, a snapshot at every roll and at the log
/// end).
fn partition(start: i64) -> PartitionBuilder {
    PartitionBuilder::new("psm", 0)
        .start_offset(start)
        .broker_files(PartitionFileOptions::default())
}

/// An unclean shutdown with the recovery point at `rp`.
fn unclean(rp: i64) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("psm", 0, rp)
}

/// `maxTransactionTimeoutMs + LATE_TRANSACTION_BUFFER_MS` with the broker default maximum
/// transaction timeout (15 minutes; Kafka's test sets 5, a broker setting not on disk).
const LATE: i64 = 900_000 + 300_000;

/// `(producer, late by the broker's metric)` of every open or hanging transaction
/// `verify` reports at `now`, by producer.
fn late_at(m: &Manifest, now: i64) -> Vec<(i64, bool)> {
    let v = verify_with(m, ScanOptions::default().with_now_ms(now));
    let mut l: Vec<(i64, bool)> = of_kinds(
        &v.findings,
        &[Kind::OpenTransaction, Kind::HangingTransaction],
    )
    .into_iter()
    .map(|f| {
        (
            f.producer_id.unwrap(),
            f.evidence["late_by_broker_metric"] == true,
        )
    })
    .collect();
    l.sort_unstable();
    l
}

fn one(findings: &[Finding], k: Kind) -> &Finding {
    let v = of_kinds(findings, &[k]);
    assert_eq!(v.len(), 1, "expected one {k}: {findings:#?}");
    v[0]
}

// ----- the first unstable offset's segment position ---------------------------------------

/// The value length that puts the transaction of [`first_offset_metadata_log`] at byte
/// 234224 of its segment.
const FILLER: usize = 173_232;

/// Plain records 990000–992340 and one at 992341 whose value is [`FILLER`] bytes long,
/// then producer 1's transaction at 992342; with `roll`, that transaction starts a
/// segment of its own.
fn first_offset_metadata_log(roll: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("psm", 0).start_offset(990_000);
    p.append(Batch::new(Producer::PLAIN).records(2341));
    p.append(Batch::new(Producer::PLAIN).values(["x".repeat(FILLER)]));
    if roll {
        p.roll();
    }
    p.append(Batch::new(Producer::transactional(1, 0)).records(1));
    p
}

/// `ProducerStateManagerTest.testTxnFirstOffsetMetadataCached`: a transaction begun at
/// offset 992342, at byte 234224 of the segment based at 990000; the first unstable offset
/// is that whole position (`LogOffsetMetadata(992342, 990000, 234224)`), not just the
/// offset. On disk the position is where the batch lies: the scan's last stable offset is
/// 992342 and its `open_transaction` finding names the segment `…990000.log` and byte
/// 234224. Near miss: the same transaction at the head of a segment of its own is at byte 0
/// of `…992342.log`.
#[test]
fn txn_first_offset_metadata_cached() {
    let (_d, m, r) = scan(&first_offset_metadata_log(false));
    let b = &m.batches[2];
    assert_eq!(
        (b.base_offset, b.segment_base, b.position),
        (992_342, 990_000, 234_224)
    );
    assert_eq!(lso(&r), Some(992_342));
    let f = one(&r.findings, Kind::OpenTransaction);
    assert_eq!(
        (f.offset, f.segment.as_deref(), f.position),
        (Some(992_342), Some(seg(990_000).as_str()), Some(234_224))
    );
    assert_eq!(entry(&r, 1), (0, 0, 992_342, Some(992_342)));
    let (_d, _m, r) = scan(&first_offset_metadata_log(true));
    assert_eq!(lso(&r), Some(992_342));
    let f = one(&r.findings, Kind::OpenTransaction);
    assert_eq!(
        (f.offset, f.segment.as_deref(), f.position),
        (Some(992_342), Some(seg(992_342).as_str()), Some(0))
    );
}

// ----- late transactions across reloads and truncations -----------------------------------

/// Producer 39 (epoch 2) opens a transaction at offset 100 at time t0, plain records fill
/// 101–149, producer 57 (epoch 9) opens one at 150 at t0 + 500; a clean shutdown leaves the
/// snapshot at 151, the log end. Returns t0.
fn two_open_transactions() -> (TempDir, Manifest, i64) {
    let mut p = partition(100).time_step(0);
    let t0 = p.now();
    p.append(one_at(Producer::transactional(39, 2), 0));
    p.append(Batch::new(Producer::PLAIN).records(49));
    p.append(one_at(Producer::transactional(57, 9), 0).at(t0 + 500));
    let (d, m) = write(LogDirBuilder::new(1), p);
    (d, m, t0)
}

/// `ProducerStateManagerTest.testHasLateTransactionInitializedAfterReload`: transactions of
/// producers 39 and 57 opened 500 ms apart, a snapshot taken, and a new manager reloaded
/// from it: a transaction is still late once idle longer than the maximum transaction
/// timeout plus the 5-minute buffer, because the reload takes each producer's last
/// timestamp from the snapshot. On disk: after a clean shutdown the load reads the
/// snapshot at 151 (both transactions open, nothing replayed), which agrees with the log;
/// at t0 + 500 neither is late, one millisecond past the bound 39's is (57's not), and
/// 500 ms later still only 39's: the metric looks at the oldest open transaction only
/// (`hasLateTransaction`, `oldestTxnLastTimestamp`), so the partition counts through 39. Negative twin: the snapshot holding a later timestamp for 39 than
/// its batch is a `snapshot_mismatch` on that field — the state the broker would load (and
/// its metric) is not the log's; klogscan's lateness is the log's.
#[test]
fn has_late_transaction_initialized_after_reload() {
    let (_d, m, t0) = two_open_transactions();
    let v = verify(&m);
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    assert_eq!(loaded(&v), (Some(151), false));
    assert_eq!(v.prediction.producer_state.replay_from, Some(151));
    assert_eq!(counts(&v), (Some(2), Some(2)));
    let e = snapshot_entries(&m, 151);
    assert_eq!(
        e.iter()
            .map(|e| (e.producer_id, e.timestamp, e.current_txn_first_offset))
            .collect::<Vec<_>>(),
        vec![(39, t0, 100), (57, t0 + 500, 150)]
    );
    assert_eq!(late_at(&m, t0 + 500), vec![(39, false), (57, false)]);
    assert_eq!(late_at(&m, t0 + LATE), vec![(39, false), (57, false)]);
    assert_eq!(late_at(&m, t0 + LATE + 1), vec![(39, true), (57, false)]);
    assert_eq!(late_at(&m, t0 + LATE + 501), vec![(39, true), (57, false)]);

    let later = [
        SnapshotEntry {
            timestamp: t0 + 1000,
            ..e[0]
        },
        e[1],
    ];
    std::fs::write(
        m.dir.join(snap(151)),
        klogscan::testkit::files::encode_snapshot(&later),
    )
    .unwrap();
    let v = verify(&m);
    let f = one(&v.findings, Kind::SnapshotMismatch);
    assert_eq!(f.segment.as_deref(), Some(snap(151).as_str()));
    let d = &f.evidence["differences"][0];
    assert_eq!(
        (&d["producer_id"], &d["problem"]),
        (&39.into(), &"fields_differ".into())
    );
    assert_eq!(d["fields"][0]["field"], "timestamp");
    assert_eq!(d["fields"][0]["snapshot"], t0 + 1000);
}

/// Plain records 0–79 and 80–99, then producer 39's transaction at 100; an unclean
/// shutdown with the recovery point at 0. With `damage`, the batch at 80 fails its CRC.
fn late_transaction_at_100(damage: bool) -> (TempDir, Manifest) {
    let mut p = partition(0);
    p.append(Batch::new(Producer::PLAIN).records(80));
    p.append(Batch::new(Producer::PLAIN).records(20));
    p.append(one_at(Producer::transactional(39, 2), 0));
    let (d, m) = write(unclean(0), p);
    if damage {
        flip(&m, 0, m.batches[1].position + 70);
    }
    (d, m)
}

/// `ProducerStateManagerTest.testHasLateTransactionUpdatedAfterPartialTruncation`:
/// producer 39's transaction at offset 100 is late; `truncateAndReload(0, 80)` drops it
/// (no snapshot is left at or below 80) and nothing is late any more. On disk: the batch
/// at 80 fails its CRC, so the recovery after an unclean shutdown truncates the log to
/// offset 80, and the broker starts with no open transaction, though the bytes still hold
/// the late one (the scan reports it late). Negative twin: undamaged, the load keeps it
/// open.
#[test]
fn has_late_transaction_updated_after_partial_truncation() {
    let (_d, m) = late_transaction_at_100(true);
    let now = m.batches[2].first_timestamp + LATE + 1;
    assert_eq!(late_at(&m, now), vec![(39, true)]);
    let v = verify(&m);
    let t = v.prediction.truncation.as_deref().expect("a truncation");
    assert_eq!(
        (t.segment.as_str(), t.position, t.offset),
        (seg(0).as_str(), m.batches[1].position, 80)
    );
    assert_eq!(v.prediction.log_end_offset_after, Some(80));
    assert_eq!(v.prediction.producer_state.open_transactions, Some(0));
    let (_d, m) = late_transaction_at_100(false);
    assert_eq!(late_at(&m, now), vec![(39, true)]);
    let v = verify(&m);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(counts(&v), (Some(1), Some(1)));
}

/// Producer 39's transaction at offset 100 (log end 101), DeleteRecords to 150 recorded in
/// `log-start-offset-checkpoint`.
fn late_transaction_below_log_start(clean: bool) -> (TempDir, Manifest) {
    let mut p = partition(100);
    p.append(one_at(Producer::transactional(39, 2), 0));
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(clean)
        .log_start_offset("psm", 0, 150);
    write(ld, p)
}

/// `ProducerStateManagerTest.testHasLateTransactionUpdatedAfterFullTruncation`: producer
/// 39's transaction at 100 is late; `truncateFullyAndStartAt(150)` clears it. On disk:
/// the log ends at 101 below its log start checkpoint 150, so the load deletes every
/// segment, calls `truncateFullyAndStartAt(150)` (which deletes every snapshot) and starts
/// an empty log at 150: no producer, no open transaction; after a clean shutdown the final
/// rebuild finds no snapshot and is skipped (`UnifiedLog.rebuildProducerState`).
///
/// klogscan predicts the same (`partition::recovery::ending`): segments and snapshot
/// deleted, the log restarting empty at 150, 0 producers and 0 open transactions, and the
/// rebuild skipped after a clean shutdown.
#[test]
fn has_late_transaction_updated_after_full_truncation() {
    for clean in [true, false] {
        let (_d, m) = late_transaction_below_log_start(clean);
        let v = verify(&m);
        let pr = &v.prediction;
        assert_eq!(pr.deleted_segments, vec![seg(100)]);
        assert_eq!(
            (pr.log_start_offset_after, pr.log_end_offset_after),
            (Some(150), Some(150))
        );
        assert_eq!(
            deleted_snapshots(&v),
            vec![(snap(101), "snapshot_below_log_start")]
        );
        assert_eq!(counts(&v), (Some(0), Some(0)), "clean {clean}");
        assert_eq!(pr.producer_state.skipped, clean);
    }
}

// ----- appends without producer state ------------------------------------------------------

/// Producer 1 writes sequences 0 and 1 (offsets 0, 1), then `seq` at offset 2 in a second
/// segment; an unclean shutdown with the recovery point at 2. With `deleted`, DeleteRecords
/// moved the log start to 2 and retention deleted the first segment.
fn replica_log(seq: i32, deleted: bool) -> (TempDir, Manifest) {
    let p1 = Producer::idempotent(1, 0);
    let mut p = partition(0);
    p.append(one_at(p1, 0));
    p.append(one_at(p1, 1));
    p.roll();
    p.append(one_at(p1, seq));
    let ld = if deleted {
        unclean(2).log_start_offset("psm", 0, 2)
    } else {
        unclean(2)
    };
    let (d, m) = write(ld, p);
    if deleted {
        remove_segment(&m, 0);
    }
    (d, m)
}

/// `ProducerStateManagerTest.testAcceptAppendWithoutProducerStateOnReplica`: producer 1
/// wrote sequences 0 and 1, a reload left no state for it (the snapshot lay out of range),
/// and a replica then appends sequence 2: accepted, the state holds epoch 0 with first and
/// last sequence 2. On disk: the first segment (sequences 0, 1) deleted below the log start
/// 2; the load deletes the snapshot at 2 (at the log start), so the recovery of the segment
/// at 2 replays it with no state for the producer: sequence 2 is taken as it is (no
/// finding), and the broker starts with one producer. Negative twins: sequence 3 there is
/// taken the same way; with the first segment kept, sequence 3 after 1 is a
/// `sequence_gap` (a leader would refuse it), which the replica's state takes all the same.
#[test]
fn accept_append_without_producer_state_on_replica() {
    let seq_findings = |findings: &[Finding]| {
        of_kinds(
            findings,
            &[
                Kind::SequenceGap,
                Kind::DuplicateSequence,
                Kind::InvalidFirstSequence,
            ],
        )
        .len()
    };
    let (_d, m) = replica_log(2, true);
    let r = scan_dir(&m.dir);
    assert_eq!(seq_findings(&r.findings), 0, "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (0, 2, 2, None));
    assert_eq!(state(&r, 1).offset_delta, 0, "first sequence = last = 2");
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(2)]);
    assert!(
        deleted_snapshots(&v).contains(&(snap(2), "snapshot_below_log_start")),
        "{:?}",
        deleted_snapshots(&v)
    );
    assert_eq!(counts(&v), (Some(1), Some(0)));

    let (_d, m) = replica_log(3, true);
    let r = scan_dir(&m.dir);
    assert_eq!(seq_findings(&r.findings), 0, "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (0, 3, 2, None));

    let (_d, m) = replica_log(3, false);
    let r = scan_dir(&m.dir);
    let g = one(&r.findings, Kind::SequenceGap);
    assert_eq!(g.offset, Some(2));
    assert_eq!(
        (&g.evidence["expected"], &g.evidence["found"]),
        (&2.into(), &3.into())
    );
    assert_eq!(entry(&r, 1), (0, 3, 2, None));
}

// ----- which snapshots a load keeps -----------------------------------------------------------

/// `ProducerStateManagerTest.testTruncateAndReloadRemovesOutOfRangeSnapshots`: snapshots
/// at 1–5 (producer 1, one sequence an offset), then `truncateAndReload(1, 3)`: the oldest
/// snapshot left is 2 and the newest 3. On disk: one single-batch segment per offset
/// (bases 0–4, snapshots at 1–4 and 5, the log end), DeleteRecords to 1, and garbage in the
/// segment at 3, after an unclean shutdown: recovery empties the segment at 3 and deletes
/// the one at 4, so the load runs `truncateAndReload(1, 3)` (the recovery of the segment at
/// 3 runs it too, with the recovery point there): the snapshot at 1 (at the log start) and
/// those at 4 and 5 (beyond the log end) are deleted, 2 and 3 are kept and 3 is loaded. The
/// same with the recovery point at 0 (every segment recovered; the snapshot at 3 is then
/// the one the recovery of the segment at 2 writes).
#[test]
fn truncate_and_reload_removes_out_of_range_snapshots() {
    for rp in [3, 0] {
        let p1 = Producer::idempotent(1, 0);
        let mut p = partition(0);
        for i in 0..5 {
            if i > 0 {
                p.roll();
            }
            p.append(one_at(p1, i));
        }
        let (_d, m) = write(unclean(rp).log_start_offset("psm", 0, 1), p);
        assert_eq!(snapshot_files(&m), vec![1, 2, 3, 4, 5]);
        std::fs::write(m.dir.join(seg(3)), b"corruptRecord").unwrap();
        let v = verify(&m);
        let pr = &v.prediction;
        let t = pr.truncation.as_deref().expect("a truncation");
        assert_eq!((t.segment.as_str(), t.offset), (seg(3).as_str(), 3));
        assert_eq!(pr.deleted_segments, vec![seg(4)]);
        assert_eq!(
            (pr.log_start_offset_after, pr.log_end_offset_after),
            (Some(1), Some(3))
        );
        assert_eq!(
            deleted_snapshots(&v),
            vec![
                (snap(1), "snapshot_below_log_start"),
                (snap(4), "snapshot_beyond_log"),
                (snap(5), "snapshot_beyond_log"),
            ],
            "recovery point {rp}"
        );
        assert_eq!(loaded(&v), (Some(3), rp == 0), "recovery point {rp}");
    }
}

/// Producer 1 writes sequences 0 and 1 (offsets 0, 1), then 2 in a second segment:
/// snapshots at 2 (the roll) and 3 (the log end), as `testTruncateFullyAndStartAt` and
/// `testDeleteSnapshotsBefore` take them.
fn snapshots_at_2_and_3() -> PartitionBuilder {
    let p1 = Producer::idempotent(1, 0);
    let mut p = partition(0);
    p.append(one_at(p1, 0));
    p.append(one_at(p1, 1));
    p.roll();
    p.append(one_at(p1, 2));
    p
}

/// `ProducerStateManagerTest.testTruncateFullyAndStartAt`: snapshots at 2 and 3, then
/// `truncateFullyAndStartAt(0)` deletes both (the appends after it are a live log). On
/// disk the load calls `truncateFullyAndStartAt` when the log ends below its log start
/// checkpoint: here the log ends at 3 and the checkpoint says 4, so both segments and both
/// snapshots are deleted and the log restarts empty at 4, no snapshot loaded; after a clean
/// or an unclean shutdown. (What producer state klogscan predicts for that log is
/// `has_late_transaction_updated_after_full_truncation`.)
#[test]
fn truncate_fully_and_start_at() {
    for clean in [true, false] {
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .log_start_offset("psm", 0, 4);
        let (_d, m) = write(ld, snapshots_at_2_and_3());
        assert_eq!(snapshot_files(&m), vec![2, 3]);
        let v = verify(&m);
        let pr = &v.prediction;
        assert_eq!(pr.deleted_segments, vec![seg(0), seg(2)], "clean {clean}");
        assert_eq!(
            (pr.log_start_offset_after, pr.log_end_offset_after),
            (Some(4), Some(4))
        );
        assert_eq!(
            deleted_snapshots(&v),
            vec![
                (snap(2), "snapshot_below_log_start"),
                (snap(3), "snapshot_below_log_start"),
            ]
        );
        assert_eq!(loaded(&v), (None, false));
        assert!(pr.truncation.is_none());
    }
}

/// `ProducerStateManagerTest.testDeleteSnapshotsBefore`: snapshots at 2 and 3;
/// `deleteSnapshotsBefore(3)` leaves 3, `deleteSnapshotsBefore(4)` none. On disk, the log
/// dir each of those leaves, after a clean shutdown: with both or only 3 the load reads 3
/// and starts with producer 1; with none the rebuild is skipped and the producer
/// forgotten. Negative twin: with none after an unclean shutdown the recovery of the last
/// segment rebuilds it from the log start and leaves a new snapshot at 3.
#[test]
fn delete_snapshots_before() {
    for (removed, clean, want) in [
        (vec![], true, (Some(3), false, false, Some(1))),
        (vec![2], true, (Some(3), false, false, Some(1))),
        (vec![2, 3], true, (None, false, true, Some(0))),
        (vec![2, 3], false, (Some(3), true, false, Some(1))),
    ] {
        let (_d, m) = write(
            LogDirBuilder::new(1).clean_shutdown(clean),
            snapshots_at_2_and_3(),
        );
        remove_snapshots(&m, removed.clone());
        let v = verify(&m);
        let ps = &v.prediction.producer_state;
        assert_eq!(
            (
                ps.snapshot_offset,
                ps.snapshot_written_at_load,
                ps.skipped,
                ps.producers
            ),
            want,
            "removed {removed:?}, clean {clean}"
        );
        assert!(deleted_snapshots(&v).is_empty());
        assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    }
}

/// Producer 1 writes sequences 1 and 2 at offsets 1 and 2, then 3 and 4 in a second
/// segment: snapshots at 3 and 5, DeleteRecords to 3, a clean shutdown.
fn reload_snapshots_log() -> (TempDir, Manifest) {
    let p1 = Producer::idempotent(1, 0);
    let mut p = partition(1);
    p.append(one_at(p1, 1));
    p.append(one_at(p1, 2));
    p.roll();
    p.append(one_at(p1, 3));
    p.append(one_at(p1, 4));
    write(LogDirBuilder::new(1).log_start_offset("psm", 0, 3), p)
}

/// `ProducerStateManagerTest.testReloadSnapshots`: producer 1's sequences 1–4 at offsets
/// 1–4, snapshots at 3 and 5; `truncateAndReload(3, 5)` deletes the one at 3 (at the log
/// start) and keeps 5. On disk: that log with DeleteRecords to 3, loaded after a clean
/// shutdown: 3 is deleted, 5 loaded, producer 1 kept (last sequence 4 at offset 4). The
/// second half of the test (writing the file at 3 back and `truncateFullyAndReloadSnapshots`)
/// is the follower bootstrap from tiered storage (`TierStateMachine` restoring a remote
/// snapshot), not a load: not expressible.
#[test]
fn reload_snapshots() {
    let (_d, m) = reload_snapshots_log();
    assert_eq!(snapshot_files(&m), vec![3, 5]);
    let v = verify(&m);
    assert_eq!(
        deleted_snapshots(&v),
        vec![(snap(3), "snapshot_below_log_start")]
    );
    assert_eq!(loaded(&v), (Some(5), false));
    assert_eq!(v.prediction.log_start_offset_after, Some(3));
    assert_eq!(counts(&v), (Some(1), Some(0)));
    let e = snapshot_entries(&m, 5);
    assert_eq!(
        e.iter()
            .map(|e| (e.producer_id, e.last_sequence, e.last_offset))
            .collect::<Vec<_>>(),
        vec![(1, 4, 4)]
    );
}

// ----- the first unstable offset after a truncation -----------------------------------------

/// Producer 1's transaction at 99 (sequence 0), plain records 100–104, its COMMIT at 105,
/// then its non-transactional sequence 1 at 106; segments based at 99, 100 and 106, so the
/// snapshots at 100 (transaction open from 99) and 106 (none open) are the ones Kafka's
/// test takes. An unclean shutdown with the recovery point at `cut`, the high watermark
/// at 106, no snapshot at the log end (the broker crashed); the first batch of the segment
/// at `cut` fails its CRC, so recovery truncates the log to `cut`. `keep_100`: whether the
/// snapshot at 100 is kept.
fn committed_then_truncated_to(cut: i64, keep_100: bool) -> (TempDir, Manifest) {
    let t = Producer::transactional(1, 0);
    let mut p = partition(99);
    p.append(one_at(t, 0));
    p.roll();
    p.append(Batch::new(Producer::PLAIN).records(5));
    p.commit(t, 0);
    p.roll();
    p.append(one_at(Producer::idempotent(1, 0), 1));
    let (d, m) = write(unclean(cut).high_watermark("psm", 0, 106), p);
    assert_eq!(snapshot_files(&m), vec![100, 106, 107]);
    remove_snapshots(&m, [107]);
    if !keep_100 {
        remove_snapshots(&m, [100]);
    }
    flip(&m, cut, 70);
    (d, m)
}

/// `ProducerStateManagerTest.testFirstUnstableOffsetAfterTruncation`: a transaction at 99
/// (snapshot at 100), committed at 105 with the high watermark at 106 (snapshot at 106),
/// then data at 106. `truncateAndReload(0, 100)` loads the snapshot at 100: the first
/// unstable offset is 99 again. On disk: recovery truncates the log to 100, removing the
/// COMMIT, so the broker starts with the transaction open — and, the COMMIT having been
/// acknowledged, `transaction_reopened_at_recovery` says the last stable offset stays at
/// 99. `truncateAndReload(0, 106)` loads the snapshot at 106: nothing unstable. On disk:
/// a truncation to 106 keeps the COMMIT, and the broker starts with no open transaction —
/// here with the snapshot at 100 gone (with it, see
/// `first_unstable_offset_after_truncation_to_106_loads_the_newest_snapshot`).
#[test]
fn first_unstable_offset_after_truncation() {
    let (_d, m) = committed_then_truncated_to(100, true);
    let v = verify(&m);
    let pr = &v.prediction;
    let t = pr.truncation.as_deref().expect("a truncation");
    assert_eq!((t.segment.as_str(), t.offset), (seg(100).as_str(), 100));
    assert_eq!(pr.deleted_segments, vec![seg(106)]);
    assert_eq!(
        deleted_snapshots(&v),
        vec![(snap(106), "snapshot_beyond_log")]
    );
    assert_eq!(loaded(&v), (Some(100), false));
    assert_eq!(pr.producer_state.open_transactions, Some(1));
    let f = one(&v.findings, Kind::TransactionReopenedAtRecovery);
    assert_eq!(f.offset, Some(99));
    assert_eq!(
        (
            &f.evidence["truncated_to"],
            &f.evidence["last_stable_offset_after"]
        ),
        (&100.into(), &99.into())
    );
    assert_eq!(f.evidence["transactions"][0]["marker_offset"], 105);

    let (_d, m) = committed_then_truncated_to(106, false);
    let v = verify(&m);
    let pr = &v.prediction;
    let t = pr.truncation.as_deref().expect("a truncation");
    assert_eq!((t.segment.as_str(), t.offset), (seg(106).as_str(), 106));
    assert_eq!(loaded(&v), (Some(106), false));
    assert_eq!(pr.producer_state.open_transactions, Some(0));
    assert!(of_kinds(&v.findings, &[Kind::TransactionReopenedAtRecovery]).is_empty());
}

/// The second half of `ProducerStateManagerTest.testFirstUnstableOffsetAfterTruncation`
/// with both of its snapshots on disk: the log truncated to 106, the snapshots at 100
/// (transaction open from 99) and 106 (none open). `truncateAndReload(0, 106)` — the
/// recovery of the segment at 106 and the final rebuild both make it — loads the newest,
/// 106: the broker starts with no open transaction, nothing unstable.
///
/// klogscan counts the open transactions of the one snapshot the load's state descends
/// from (`chain::Chain::origin`); it counted those of every snapshot at or below the new
/// log end, so the older one at 100, which the load never reads, made the count unknown.
#[test]
fn first_unstable_offset_after_truncation_to_106_loads_the_newest_snapshot() {
    let (_d, m) = committed_then_truncated_to(106, true);
    let v = verify(&m);
    assert_eq!(v.prediction.log_end_offset_after, Some(106));
    assert_eq!(loaded(&v), (Some(106), false));
    assert_eq!(v.prediction.producer_state.open_transactions, Some(0));
}

/// Producer 1 writes at offset 0, producer 2 at offset 1, `gap_ms` later; DeleteRecords to
/// 1, a clean shutdown (snapshot at 2, the log end).
fn two_producers_log_start_1(gap_ms: i64) -> (TempDir, Manifest) {
    let mut p = partition(0);
    p.append(one_at(Producer::idempotent(1, 0), 0));
    p.advance_time(gap_ms);
    p.append(one_at(Producer::idempotent(2, 0), 0));
    write(LogDirBuilder::new(1).log_start_offset("psm", 0, 1), p)
}

/// `ProducerStateManagerTest.testLoadFromSnapshotRetainsNonExpiredProducers`: producers 1
/// (offset 0) and 2 (offset 1), a snapshot at 2, `truncateAndReload(1, 2)`: both are kept,
/// producer 1 with its last data at offset 0 below the log start. On disk: DeleteRecords
/// to 1 and a clean shutdown: the snapshot at 2 is in range and loaded, and the broker
/// starts with both producers. Negative twin: producer 1's batch a day (plus the
/// testkit's one-second step) older than producer 2's is expired at the load, taken at
/// the newest timestamp: one producer.
#[test]
fn load_from_snapshot_retains_non_expired_producers() {
    let (_d, m) = two_producers_log_start_1(0);
    let e = snapshot_entries(&m, 2);
    assert_eq!(
        e.iter()
            .map(|e| (e.producer_id, e.last_sequence, e.last_offset))
            .collect::<Vec<_>>(),
        vec![(1, 0, 0), (2, 0, 1)]
    );
    let v = verify(&m);
    assert!(deleted_snapshots(&v).is_empty());
    assert_eq!(loaded(&v), (Some(2), false));
    assert_eq!(v.prediction.log_start_offset_after, Some(1));
    assert_eq!(counts(&v), (Some(2), Some(0)));
    let (_d, m) = two_producers_log_start_1(DAY);
    assert_eq!(counts(&verify(&m)), (Some(1), Some(0)));
}

// ----- writing snapshots ---------------------------------------------------------------------

/// One producer's sequences 0 and 1 at offsets 0 and 1, the snapshot at 2 taken.
fn take_snapshot_log() -> (TempDir, Manifest) {
    let p1 = Producer::idempotent(1, 0);
    let mut p = partition(0);
    p.append(one_at(p1, 0));
    p.append(one_at(p1, 1));
    write(LogDirBuilder::new(1), p)
}

/// `ProducerStateManagerTest.testTakeSnapshot`: after two appends `takeSnapshot` writes one
/// non-empty file. On disk: that file (`…02.snapshot`, 56 bytes: header and one 46-byte
/// entry) holds producer 1 at epoch 0, last sequence 1 at offset 1, no transaction, and
/// agrees with the log; it is the one a clean load reads. Negative twin: an empty file
/// there is a corrupt snapshot, deleted at load.
#[test]
fn take_snapshot() {
    let (_d, m) = take_snapshot_log();
    assert_eq!(snapshot_files(&m), vec![2]);
    assert_eq!(std::fs::metadata(m.dir.join(snap(2))).unwrap().len(), 56);
    let e = snapshot_entries(&m, 2);
    assert_eq!(
        e,
        vec![SnapshotEntry {
            producer_id: 1,
            epoch: 0,
            last_sequence: 1,
            last_offset: 1,
            offset_delta: 0,
            timestamp: m.batches[1].max_timestamp,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        }]
    );
    let v = verify(&m);
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
    assert_eq!(loaded(&v), (Some(2), false));
    std::fs::write(m.dir.join(snap(2)), b"").unwrap();
    let v = verify(&m);
    assert_eq!(
        snapshot_findings(&v),
        vec![(Kind::SnapshotCorrupt, snap(2))]
    );
    assert_eq!(deleted_snapshots(&v), vec![(snap(2), "corrupt_snapshot")]);
}

/// `ProducerStateManagerTest.testSkipSnapshotIfOffsetUnchanged`: a second `takeSnapshot`
/// at an unchanged map end offset writes nothing. On disk: after a clean shutdown the final
/// rebuild loads the snapshot at the log end (1) and takes its snapshot at the same
/// offset, which writes nothing: the broker keeps the file as it is (`snapshot_written_at_load`
/// false). Negative twin: after an unclean shutdown the recovery's rebuild deletes the
/// snapshot at 1 (above the segment's base) and the recovery writes a new one there.
#[test]
fn skip_snapshot_if_offset_unchanged() {
    for clean in [true, false] {
        let mut p = partition(0);
        p.append(one_at(Producer::idempotent(1, 0), 0));
        let ld = LogDirBuilder::new(1)
            .clean_shutdown(clean)
            .recovery_point("psm", 0, 0);
        let (_d, m) = write(ld, p);
        assert_eq!(snapshot_files(&m), vec![1]);
        let v = verify(&m);
        assert_eq!(loaded(&v), (Some(1), !clean), "clean {clean}");
        assert!(deleted_snapshots(&v).is_empty());
        assert_eq!(counts(&v), (Some(1), Some(0)));
    }
}
