//! The restart prediction of `verify` on three load paths the broker takes
//! (`kafka-format.md` §9, `kafka-semantics.md` §3.2–§3.4): load failures inside segments
//! recovered below the newest snapshot, snapshots at or below the log start offset, and the
//! clean-shutdown shortcut when only stray snapshots exist. Each scenario has its undamaged
//! variant, whose prediction must stay the ordinary one.
#![cfg(feature = "testkit")]

use klogscan::testkit::{
    Batch, FaultKind, LogDirBuilder, Manifest, PartitionBuilder, Producer, Target,
};
use klogscan::verify::{PartitionVerification, VerifyOptions, verify_partition};
use std::path::Path;

fn write_with(ld: LogDirBuilder, p: PartitionBuilder) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

fn run(dir: &Path) -> PartitionVerification {
    verify_partition(dir, &VerifyOptions::default()).unwrap()
}

fn snapshot_name(offset: i64) -> String {
    format!("{offset:020}.snapshot")
}

fn recovered(v: &PartitionVerification) -> Vec<&str> {
    v.prediction
        .recovered_segments
        .iter()
        .map(|r| r.segment.as_str())
        .collect()
}

/// Segments 0 (idempotent, offsets 0–1), 2 (producer 1 opens a transaction at 2, then
/// writes non-transactional data at 4: rule 26), 5 (idempotent, 5–6). Snapshots at 2, 5, 7.
fn txn_then_plain_write() -> PartitionBuilder {
    let idem = Producer::idempotent(9, 0);
    let mut p = PartitionBuilder::new("t", 0);
    p.append(Batch::new(idem).records(2));
    p.roll();
    p.append(Batch::new(Producer::transactional(1, 0)).records(2));
    p.append(
        Batch::new(Producer::idempotent(1, 0))
            .records(1)
            .sequence(2),
    );
    p.roll();
    p.append(Batch::new(idem).records(2));
    p
}

#[test]
fn unclean_recovery_of_a_segment_below_the_newest_snapshot_fails_the_load() {
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("t", 0, 2),
        txn_then_plain_write(),
    );
    assert_eq!(m.log_end_offset, 7);
    let v = run(&m.dir);
    let pr = &v.prediction;
    // segment 2's recovery throws: segment 5's is not reached, nor the final rebuild
    assert_eq!(recovered(&v), ["00000000000000000002.log"]);
    assert!(pr.truncation.is_none());
    assert_eq!(pr.load_stops_at.as_deref(), Some("recovery"));
    assert_eq!(pr.producer_state.snapshot_offset, None);
    assert_eq!(pr.producer_state.replay_from, None);
    assert_eq!(pr.producer_state.replay_to, None);
    assert_eq!(pr.producer_state.snapshots_after_load, None);
    assert_eq!(pr.log_end_offset_after, None);
    // but recovering segment 2 replays offsets 2..5 with the state rebuilt up to 2
    let lf = pr.load_failure.as_ref().expect("load failure");
    assert_eq!(lf.kind, "non_transactional_write_in_transaction");
    assert_eq!(lf.exception, "InvalidTxnStateException");
    assert_eq!(lf.offset, Some(4));
    assert!(
        lf.message
            .starts_with("recovering segment 00000000000000000002.log after the unclean shutdown"),
        "{}",
        lf.message
    );

    // Undamaged variant: the recovery point is in the last segment, so segment 2 is not
    // recovered and the replay from the snapshot at 7 meets nothing.
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("t", 0, 5),
        txn_then_plain_write(),
    );
    let v = run(&m.dir);
    assert_eq!(recovered(&v), ["00000000000000000005.log"]);
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.producer_state.replay_from, Some(7));
}

/// Before recovering a segment the broker rebuilds the producer state up to its base
/// (`LogLoader.recoverSegment` → `UnifiedLog.rebuildProducerState`) from the newest snapshot
/// at or below that base — the newer ones are deleted by that rebuild's `truncateAndReload` —
/// so a rule broken between that snapshot and the base throws too, however new the newest
/// snapshot on disk is. Recovery point 5 (only the last segment recovered) with the snapshot
/// at 5 lost: the rebuild replays from the snapshot at 2 and meets the non-transactional
/// write at 4; with the one at 2 lost as well, from the log start. With the snapshot at 5
/// kept, nothing below 5 is replayed (the undamaged variant above).
#[test]
fn the_rebuild_before_a_recovery_replays_from_the_snapshot_below_the_segment() {
    for (lost, from) in [
        (&[5][..], "the snapshot at 2"),
        (&[2, 5][..], "the log start 0"),
    ] {
        let (_d, m) = write_with(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("t", 0, 5),
            txn_then_plain_write(),
        );
        for o in lost {
            std::fs::remove_file(m.dir.join(snapshot_name(*o))).unwrap();
        }
        let v = run(&m.dir);
        let pr = &v.prediction;
        assert_eq!(recovered(&v), ["00000000000000000005.log"]);
        // the rebuild before the recovery throws: the recovery's snapshot is never written
        assert_eq!(pr.producer_state.snapshot_offset, None);
        let lf = pr.load_failure.as_ref().expect("load failure");
        assert_eq!(lf.kind, "non_transactional_write_in_transaction");
        assert_eq!(lf.offset, Some(4));
        assert!(
            lf.message.starts_with(&format!(
                "rebuilding the producer state up to offset 5 to recover segment 00000000000000000005.log (from {from})"
            )),
            "{}",
            lf.message
        );
    }
}

/// A truncation at load in a segment recovered for its missing index deletes no later
/// segment and does not end the unclean pass: segment 0 (garbage after its last batch, no
/// `.index`) is recovered and truncated first, then, after the unclean shutdown, segment 5
/// from the recovery point. Segment 0's recovery deleted every snapshot above 0 and left
/// one at 2, so segment 5's rebuild replays [2, 5) and meets the non-transactional write at
/// 4; the final rebuild loads the snapshot segment 5's recovery leaves at the log end.
/// Undamaged twin: with segment 0's index in place, its recovery never runs, segment 5's
/// rebuild loads the snapshot at 5 and replays nothing.
#[test]
fn a_truncation_at_load_does_not_end_the_unclean_recovery() {
    for missing_index in [true, false] {
        let mut p = txn_then_plain_write();
        p.fault(
            Target::Log(0),
            FaultKind::AppendGarbage(vec![0xde, 0xad, 1, 2]),
        );
        let (_d, m) = write_with(
            LogDirBuilder::new(1)
                .clean_shutdown(false)
                .recovery_point("t", 0, 5),
            p,
        );
        if missing_index {
            std::fs::remove_file(m.dir.join("00000000000000000000.index")).unwrap();
        }
        let v = run(&m.dir);
        let pr = &v.prediction;
        assert!(recovered(&v).contains(&"00000000000000000005.log"));
        if missing_index {
            // the load stops in segment 5's rebuild: no final rebuild; segment 0's
            // truncation, over before it, stands
            assert_eq!(pr.producer_state.replay_from, None, "{pr:#?}");
            assert_eq!(pr.load_stops_at.as_deref(), Some("recovery"));
            assert_eq!(
                pr.truncation.as_ref().map(|t| t.segment.as_str()),
                Some("00000000000000000000.log")
            );
            assert_eq!(recovered(&v)[0], "00000000000000000000.log");
            let lf = pr.load_failure.as_ref().expect("load failure");
            assert_eq!(lf.offset, Some(4));
            assert!(
                lf.message.starts_with(
                    "rebuilding the producer state up to offset 5 to recover segment 00000000000000000005.log (from the snapshot at 2)"
                ),
                "{}",
                lf.message
            );
        } else {
            assert!(pr.load_failure.is_none(), "{:#?}", pr.load_failure);
            assert_eq!(pr.producer_state.replay_from, Some(7), "{pr:#?}");
            // the snapshot at 7 is the one segment 5's recovery writes, not the file on disk
            assert!(pr.producer_state.snapshot_written_at_load);
        }
    }
}

#[test]
fn segment_recovered_for_a_missing_index_fails_the_load_even_after_a_clean_shutdown() {
    let (_d, m) = write_with(
        LogDirBuilder::new(1).clean_shutdown(true),
        txn_then_plain_write(),
    );
    std::fs::remove_file(m.dir.join("00000000000000000002.index")).unwrap();
    // Orphaned indexes named before and after the segment whose recovery throws.
    std::fs::write(m.dir.join("00000000000000000001.index"), []).unwrap();
    std::fs::write(m.dir.join("00000000000000000009.index"), []).unwrap();
    let v = run(&m.dir);
    let pr = &v.prediction;
    assert_eq!(recovered(&v), ["00000000000000000002.log"]);
    assert!(!pr.producer_state.skipped);
    // loadSegmentFiles deleted the one it met before segment 2, not the other.
    let action = |f: &str| {
        (pr.leftovers.iter())
            .find(|l| l.file == f)
            .map_or(String::new(), |l| l.action.clone())
    };
    let early = action("00000000000000000001.index");
    assert!(early.starts_with("deleted at startup"), "{early}");
    let late = action("00000000000000000009.index");
    assert!(late.starts_with("not reached"), "{late}");
    // Segment 2's rebuild, before its recovery throws, deleted the snapshot at 7.
    let seven = action(&snapshot_name(7));
    assert!(
        seven.starts_with("deleted by the producer-state rebuild"),
        "{seven}"
    );
    // The recovery's rebuild deleted the snapshots above 2 (the clean shutdown's at 7 too)
    // before the recovery throws; no final rebuild follows.
    assert_eq!(pr.producer_state.replay_from, None);
    assert_eq!(pr.load_stops_at.as_deref(), Some("segment_files"));
    assert!(
        pr.leftovers
            .iter()
            .any(|l| l.kind == "snapshot_replaced_at_recovery" && l.file == snapshot_name(7)),
        "{:#?}",
        pr.leftovers
    );
    let lf = pr.load_failure.as_ref().expect("load failure");
    assert_eq!(lf.kind, "non_transactional_write_in_transaction");
    assert_eq!(lf.exception, "InvalidTxnStateException");
    assert_eq!(lf.offset, Some(4));
    assert!(
        lf.message
            .starts_with("recovering segment 00000000000000000002.log at load"),
        "{}",
        lf.message
    );

    // Undamaged variant: nothing is recovered after a clean shutdown, nothing replayed; the
    // snapshot loaded is the file on disk.
    let (_d, m) = write_with(
        LogDirBuilder::new(1).clean_shutdown(true),
        txn_then_plain_write(),
    );
    let v = run(&m.dir);
    assert!(recovered(&v).is_empty());
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.producer_state.replay_from, Some(7));
    assert!(!v.prediction.producer_state.snapshot_written_at_load);
}

/// Segments 0 (offsets 0–1) and 2 (offsets 2–9), idempotent only; the snapshot at the log
/// end is removed, so the one at 2 is the newest. A clean shutdown: no recovery rewrites
/// the snapshots before the final rebuild reads them.
fn two_segments_snapshot_at_2(log_start: Option<i64>) -> (tempfile::TempDir, Manifest) {
    let idem = Producer::idempotent(9, 0);
    let mut p = PartitionBuilder::new("t", 0);
    p.append(Batch::new(idem).records(2));
    p.roll();
    for _ in 0..4 {
        p.append(Batch::new(idem).records(2));
    }
    let mut ld = LogDirBuilder::new(1).clean_shutdown(true);
    if let Some(ls) = log_start {
        ld = ld.log_start_offset("t", 0, ls);
    }
    let (d, m) = write_with(ld, p);
    assert_eq!(m.log_end_offset, 10);
    std::fs::remove_file(m.dir.join(snapshot_name(10))).unwrap();
    assert!(m.dir.join(snapshot_name(2)).exists());
    (d, m)
}

#[test]
fn snapshot_at_or_below_the_log_start_offset_is_deleted_not_loaded() {
    for log_start in [5, 2] {
        let (_d, m) = two_segments_snapshot_at_2(Some(log_start));
        let v = run(&m.dir);
        let pr = &v.prediction;
        assert_eq!(pr.log_start_offset_after, Some(log_start));
        let below: Vec<_> = pr
            .leftovers
            .iter()
            .filter(|l| l.kind == "snapshot_below_log_start")
            .map(|l| l.file.as_str())
            .collect();
        assert_eq!(below, [snapshot_name(2)], "log start {log_start}");
        assert_eq!(pr.producer_state.snapshot, None, "log start {log_start}");
        assert_eq!(pr.producer_state.snapshot_offset, None);
        assert!(!pr.producer_state.skipped);
        assert_eq!(pr.producer_state.replay_from, Some(log_start));
        assert_eq!(pr.producer_state.replay_to, Some(10));
    }

    // Undamaged variant: no log-start checkpoint, the log starts at 0 and the snapshot at 2
    // is loaded.
    let (_d, m) = two_segments_snapshot_at_2(None);
    let v = run(&m.dir);
    let pr = &v.prediction;
    assert_eq!(pr.log_start_offset_after, Some(0));
    assert!(
        pr.leftovers
            .iter()
            .all(|l| l.kind != "snapshot_below_log_start")
    );
    assert_eq!(pr.producer_state.snapshot, Some(snapshot_name(2)));
    assert_eq!(pr.producer_state.replay_from, Some(2));
    assert_eq!(pr.producer_state.replay_to, Some(10));
}

/// Segments 0 (producer 1's transaction opened at 0, offsets 0–3, never closed) and 4
/// (idempotent, 4–5).
fn open_txn(clean: bool) -> (tempfile::TempDir, Manifest) {
    let a = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("t", 0);
    p.append(Batch::new(a).records(2));
    p.append(Batch::new(a).records(2));
    p.roll();
    p.append(Batch::new(Producer::idempotent(9, 0)).records(2));
    let (d, m) = write_with(LogDirBuilder::new(1).clean_shutdown(clean), p);
    assert_eq!(m.log_end_offset, 6);
    (d, m)
}

/// Replace every snapshot of the partition by one copy of the newest's bytes at `offset`
/// (with `corrupt`, garbage instead).
fn only_snapshot_at(m: &Manifest, offset: i64, corrupt: bool) {
    let newest = m.dir.join(snapshot_name(m.log_end_offset));
    let bytes = if corrupt {
        vec![0u8; 9]
    } else {
        std::fs::read(&newest).unwrap()
    };
    for e in std::fs::read_dir(&m.dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(p).unwrap();
        }
    }
    std::fs::write(m.dir.join(snapshot_name(offset)), bytes).unwrap();
}

#[test]
fn only_a_stray_snapshot_after_a_clean_shutdown_skips_the_rebuild() {
    let (_d, m) = open_txn(true);
    only_snapshot_at(&m, 2, false); // 2: no segment base, below the last base (4)
    let v = run(&m.dir);
    let pr = &v.prediction;
    assert_eq!(pr.leftovers.len(), 1, "{:?}", pr.leftovers);
    assert_eq!(pr.leftovers[0].file, snapshot_name(2));
    assert_eq!(pr.leftovers[0].kind, "stray_snapshot");
    let ps = &pr.producer_state;
    assert!(ps.skipped);
    assert_eq!(ps.snapshot, None);
    assert_eq!(ps.replay_from, None);
    assert_eq!(ps.replay_to, None);
    assert_eq!(ps.producers, Some(0));
    assert_eq!(
        ps.open_transactions,
        Some(0),
        "the open transaction is forgotten"
    );
}

#[test]
fn snapshots_that_survive_stray_removal_keep_the_rebuild_after_a_clean_shutdown() {
    // Undamaged: the broker's own snapshots; the one at the log end is loaded.
    let (_d, m) = open_txn(true);
    let v = run(&m.dir);
    let ps = &v.prediction.producer_state;
    assert!(!ps.skipped);
    assert_eq!(ps.snapshot_offset, Some(6));
    assert_eq!(ps.replay_from, Some(6));
    assert_eq!(ps.open_transactions, Some(1));

    // Only a corrupt snapshot at a segment base: it is not stray, so the rebuild runs; it
    // is deleted when loaded and the log is replayed from its start.
    let (_d, m) = open_txn(true);
    only_snapshot_at(&m, 4, true);
    let v = run(&m.dir);
    let pr = &v.prediction;
    let kinds: Vec<_> = pr.leftovers.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["corrupt_snapshot"]);
    let ps = &pr.producer_state;
    assert!(!ps.skipped);
    assert_eq!(ps.snapshot, None);
    assert_eq!(ps.replay_from, Some(0));
    assert_eq!(ps.replay_to, Some(6));
    assert_eq!(ps.open_transactions, Some(1));

    // The stray-only case after an unclean shutdown: never skipped; the recovery leaves a
    // snapshot at the log end, which the final rebuild loads, the open transaction in it.
    let (_d, m) = open_txn(false);
    only_snapshot_at(&m, 2, false);
    let v = run(&m.dir);
    let ps = &v.prediction.producer_state;
    assert!(!ps.skipped);
    assert_eq!(ps.replay_from, Some(6));
    assert_eq!(ps.open_transactions, Some(1));
}

/// Partitions under a directory with none of a log dir's files (no `meta.properties`, no
/// checkpoint, no `.kafka_cleanshutdown`): the directory is shown as their log dir, but
/// whether the broker shut down cleanly is unknown, and the reason says why (the files,
/// not the directory, are missing); with the files, the shutdown state is known.
#[test]
fn partitions_under_a_directory_without_log_dir_files_have_an_unknown_shutdown_state() {
    let t = tempfile::tempdir().unwrap();
    for d in ["a-0", "b-0"] {
        let p = t.path().join(d);
        std::fs::create_dir(&p).unwrap();
        for x in ["log", "index", "timeindex"] {
            std::fs::File::create(p.join(format!("00000000000000000000.{x}"))).unwrap();
        }
    }
    let r = klogscan::verify::verify(&[t.path().to_path_buf()], &VerifyOptions::default());
    assert_eq!(r.partitions.len(), 2);
    for v in &r.partitions {
        assert_eq!(v.log_dir(), t.path().to_str());
        assert_eq!(v.prediction.clean_shutdown, None);
        let reasons: Vec<&str> = v
            .prediction
            .recovered_segments
            .iter()
            .map(|s| &*s.reason)
            .collect();
        assert_eq!(
            reasons,
            ["shutdown state unknown (no log dir files): assumed unclean"]
        );
    }
    // The same partitions in a broker's log dir after a clean shutdown: known, nothing
    // recovered.
    let mut p = PartitionBuilder::new("a", 0);
    p.append(Batch::new(Producer::idempotent(1, 0)).records(1));
    let (_d, m) = write_with(LogDirBuilder::new(1).clean_shutdown(true), p);
    let v = run(&m.dir);
    assert_eq!(v.prediction.clean_shutdown, Some(true));
    assert!(v.prediction.recovered_segments.is_empty());
}

/// `LogLoader.loadSegmentFiles` takes the segments in name order, recovering one without
/// its offset index before it checks the next one's files: segment 2's recovery (its index
/// removed) throws `InvalidTxnStateException` before segment 5's transaction index, whose
/// entry has an unknown version, is read. Without segment 2's recovery, segment 5's
/// `KafkaException` is the failure.
#[test]
fn an_index_recovery_named_before_a_bad_transaction_index_fails_first() {
    let bad_txnindex = |m: &Manifest| {
        let mut b = vec![1u8, 0];
        for x in [9i64, 5, 6, 6] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        std::fs::write(m.dir.join("00000000000000000005.txnindex"), b).unwrap();
    };
    let (_d, m) = write_with(
        LogDirBuilder::new(1).clean_shutdown(true),
        txn_then_plain_write(),
    );
    bad_txnindex(&m);
    std::fs::remove_file(m.dir.join("00000000000000000002.index")).unwrap();
    let lf = run(&m.dir).prediction.load_failure.expect("load failure");
    assert_eq!(lf.exception, "InvalidTxnStateException", "{lf:?}");
    let (_d, m) = write_with(
        LogDirBuilder::new(1).clean_shutdown(true),
        txn_then_plain_write(),
    );
    bad_txnindex(&m);
    let lf = run(&m.dir).prediction.load_failure.expect("load failure");
    assert_eq!(lf.exception, "KafkaException", "{lf:?}");
}

/// How long a loaded producer outlives its last write depends on the broker: since 3.4.0
/// `producer.id.expiration.ms` (1 day, KIP-854), before it `transactional.id.expiration.ms`
/// (7 days, `LogManager`'s `maxPidExpirationMs`); `ProducerStateManager.loadFromSnapshot`
/// skips an entry expired at the load. Producer 1 writes two days before producer 2 (the
/// reference time), after a clean shutdown with a snapshot at the log end: a current
/// broker (and 3.4.0) loads one producer, 3.3.2 and 2.4.0 both; a producer written an hour
/// before is kept by all (the near miss).
#[test]
fn a_producer_idle_for_two_days_is_loaded_by_brokers_before_3_4_only() {
    use klogscan::partition::recovery::BrokerVersion;
    for (idle, version, want) in [
        (2 * 86_400_000, None, 1),
        (2 * 86_400_000, Some(BrokerVersion(3, 4, 0)), 1),
        (2 * 86_400_000, Some(BrokerVersion(3, 3, 2)), 2),
        (2 * 86_400_000, Some(BrokerVersion(2, 4, 0)), 2),
        (3_600_000, None, 2),
    ] {
        let mut p = PartitionBuilder::new("t", 0);
        p.append(Batch::new(Producer::idempotent(1, 0)).records(2));
        p.advance_time(idle);
        p.append(Batch::new(Producer::idempotent(2, 0)).records(2));
        let (_d, m) = write_with(LogDirBuilder::new(1).clean_shutdown(true), p);
        assert!(m.dir.join(snapshot_name(4)).exists());
        let opts = VerifyOptions {
            broker_version: version,
            ..VerifyOptions::default()
        };
        let v = verify_partition(&m.dir, &opts).unwrap();
        let ps = &v.prediction.producer_state;
        assert_eq!(ps.snapshot.as_deref(), Some(snapshot_name(4).as_str()));
        assert_eq!(ps.producers, Some(want), "idle {idle}, {version:?}: {ps:?}");
    }
}

/// Replace every snapshot of the partition by files named `names`, each holding the
/// newest snapshot's bytes (with `corrupt`, the first holds garbage instead).
fn snapshots_named(m: &Manifest, names: &[&str], corrupt_first: bool) {
    let newest = std::fs::read(m.dir.join(snapshot_name(m.log_end_offset))).unwrap();
    for e in std::fs::read_dir(&m.dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(p).unwrap();
        }
    }
    for (i, n) in names.iter().enumerate() {
        let bytes = if corrupt_first && i == 0 {
            vec![0u8; 9]
        } else {
            newest.clone()
        };
        std::fs::write(m.dir.join(n), bytes).unwrap();
    }
}

/// `ProducerStateManager.listSnapshotFiles` takes every regular file ending `.snapshot`,
/// its offset `Long.parseLong` of the text before the first `.` (`SnapshotFile`): a sign,
/// another width or more text before `.snapshot` still name the snapshot of that offset,
/// which a clean restart loads (before: taken for no snapshot, the rebuild skipped and the
/// open transaction forgotten). A name that does not end `.snapshot` is not one.
#[test]
fn a_snapshot_under_any_name_kafka_parses_is_loaded() {
    for name in [
        "+6.snapshot",
        "6.snapshot",
        "00000000000000000006.copy.snapshot",
        "6.log.snapshot",
    ] {
        let (_d, m) = open_txn(true);
        snapshots_named(&m, &[name], false);
        let v = run(&m.dir);
        let ps = &v.prediction.producer_state;
        assert!(!ps.skipped, "{name}: {ps:?}");
        assert_eq!(ps.snapshot.as_deref(), Some(name));
        assert_eq!(ps.snapshot_offset, Some(6), "{name}");
        assert_eq!(ps.open_transactions, Some(1), "{name}");
    }
    // Near misses: never a snapshot to the broker; the clean restart skips the rebuild.
    for name in ["6.snapshot.bak", "00000000000000000006.snapshots"] {
        let (_d, m) = open_txn(true);
        snapshots_named(&m, &[name], false);
        let ps = run(&m.dir).prediction.producer_state;
        assert!(ps.skipped, "{name}: {ps:?}");
        assert_eq!(ps.open_transactions, Some(0), "{name}");
    }
}

/// `-6.snapshot` is the snapshot of offset -6: at or below the log start, deleted by
/// `truncateAndReload` (out of range), never loaded.
#[test]
fn a_snapshot_named_with_a_negative_offset_is_deleted_at_load() {
    let (_d, m) = open_txn(true);
    snapshots_named(&m, &["-6.snapshot"], false);
    let pr = run(&m.dir).prediction;
    assert!(
        pr.leftovers.iter().any(|l| l.file == "-6.snapshot"),
        "{:?}",
        pr.leftovers
    );
    assert!(pr.producer_state.skipped);
    assert_eq!(pr.producer_state.snapshot, None);
}

/// Two snapshot files of one offset: `loadSnapshots` keeps the last its listing gives.
/// Differing bytes: a warning (which one loads is not known), naming the file the
/// prediction reads; the same bytes: info; one file: nothing.
#[test]
fn snapshot_files_of_one_offset_are_a_finding() {
    let dup = |v: &PartitionVerification| -> Vec<klogscan::finding::Finding> {
        v.findings
            .iter()
            .filter(|f| f.kind == klogscan::finding::Kind::ProducerSnapshotDuplicate)
            .cloned()
            .collect()
    };
    let canonical = snapshot_name(6);
    for (names, corrupt, want) in [
        (
            vec!["+6.snapshot", canonical.as_str()],
            false,
            Some(klogscan::finding::Severity::Info),
        ),
        (
            vec!["+6.snapshot", canonical.as_str()],
            true,
            Some(klogscan::finding::Severity::Warning),
        ),
        (vec![canonical.as_str()], false, None),
        (vec!["+6.snapshot", &snapshot_name(4)], false, None),
    ] {
        let (_d, m) = open_txn(true);
        snapshots_named(&m, &names, corrupt);
        let v = run(&m.dir);
        let found = dup(&v);
        assert_eq!(
            found.first().map(|f| f.severity),
            want,
            "{names:?} {corrupt}: {found:#?}"
        );
        if let Some(f) = found.first() {
            assert_eq!(found.len(), 1);
            assert_eq!(f.offset, Some(6));
            assert_eq!(f.evidence["files"].as_array().map(Vec::len), Some(2));
            assert_eq!(f.evidence["same_bytes"], serde_json::json!(!corrupt));
            if corrupt {
                // The valid one is what the prediction reads.
                assert_eq!(f.evidence["prediction_reads"], serde_json::json!(canonical));
                assert!(f.message.contains("not known"), "{}", f.message);
            }
        }
    }
}

/// Two valid snapshot files of one offset with different producers (`+6.snapshot` holds
/// the newest state, the canonical name an empty one): the broker keeps one of them, which
/// is not known; the prediction reads one, and `producer_snapshot_duplicate` names that
/// very file (before: the finding named the first by name while the prediction loaded the
/// last). A corrupt duplicate beside a valid one is never read under that reading, so the
/// prediction does not say the load deletes it.
#[test]
fn the_duplicate_finding_names_the_snapshot_the_prediction_loads() {
    let canonical = snapshot_name(6);
    let (_d, m) = open_txn(true);
    snapshots_named(&m, &["+6.snapshot", &canonical], false);
    std::fs::write(
        m.dir.join(&canonical),
        klogscan::testkit::files::encode_snapshot(&[]),
    )
    .unwrap();
    let v = run(&m.dir);
    let f = v
        .findings
        .iter()
        .find(|f| f.kind == klogscan::finding::Kind::ProducerSnapshotDuplicate)
        .expect("a duplicate finding");
    let ps = &v.prediction.producer_state;
    assert_eq!(
        f.evidence["prediction_reads"],
        serde_json::json!(ps.snapshot),
        "{f:#?} {ps:?}"
    );
    // The file read holds the open transaction: its load keeps it.
    assert_eq!(ps.snapshot.as_deref(), Some("+6.snapshot"));
    assert_eq!(ps.open_transactions, Some(1), "{ps:?}");

    let (_d, m) = open_txn(true);
    snapshots_named(&m, &["+6.snapshot", &canonical], true);
    let pr = run(&m.dir).prediction;
    assert_eq!(
        pr.producer_state.snapshot.as_deref(),
        Some(canonical.as_str())
    );
    assert!(
        !pr.leftovers.iter().any(|l| l.file == "+6.snapshot"),
        "{:?}",
        pr.leftovers
    );
}

/// A corrupt snapshot file beside a valid one of its offset: the broker keeps one file of
/// the offset, so `snapshot_corrupt` cannot say the broker deletes this one at load; its
/// broker text says it does only if it keeps this file (before: unconditionally). A lone
/// corrupt file keeps the plain text.
#[test]
fn a_corrupt_twin_is_deleted_only_if_the_broker_keeps_it() {
    let corrupt_text = |names: &[&str]| -> String {
        let (_d, m) = open_txn(true);
        snapshots_named(&m, names, true);
        let v = run(&m.dir);
        let f = v
            .findings
            .iter()
            .find(|f| f.kind == klogscan::finding::Kind::SnapshotCorrupt)
            .expect("snapshot_corrupt")
            .clone();
        assert_eq!(f.segment.as_deref(), Some(names[0]));
        f.broker_behaviour
    };
    let canonical = snapshot_name(6);
    let twin = corrupt_text(&["+6.snapshot", &canonical]);
    assert!(
        twin.contains("producer_snapshot_duplicate") && twin.contains("if it keeps this one"),
        "{twin}"
    );
    let alone = corrupt_text(&["+6.snapshot"]);
    assert!(!alone.contains("producer_snapshot_duplicate"), "{alone}");
}

/// In a `-delete` copy no snapshot is ever loaded (its producer state is rebuilt only to
/// offset 0): two differing files of one offset are no finding there; the live copy with
/// the same files has one (`snapshot_files_of_one_offset_are_a_finding`).
#[test]
fn snapshot_files_of_one_offset_in_a_delete_copy_are_no_finding() {
    for delete in [false, true] {
        let (_d, m) = open_txn(true);
        snapshots_named(&m, &["+6.snapshot", &snapshot_name(6)], true);
        let dir = if delete {
            let to = m
                .dir
                .with_file_name("t-0.0123456789abcdef0123456789abcdef-delete");
            std::fs::rename(&m.dir, &to).unwrap();
            to
        } else {
            m.dir.clone()
        };
        let v = run(&dir);
        let n = v
            .findings
            .iter()
            .filter(|f| f.kind == klogscan::finding::Kind::ProducerSnapshotDuplicate)
            .count();
        assert_eq!(
            n,
            usize::from(!delete),
            "delete {delete}: {:#?}",
            v.findings
        );
    }
}
