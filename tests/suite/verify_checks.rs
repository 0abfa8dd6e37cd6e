//! `verify`'s cross-checks on testkit scenarios: each finding kind with a scenario that
//! must raise it (damaged file) and the same scenario undamaged that must not; and the
//! recovery prediction on crash-like scenarios, to the exact byte.
#![cfg(feature = "testkit")]

use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::{
    AbortedTxn, Batch, Damage, FaultKind, LogDirBuilder, Manifest, PartitionBuilder,
    PartitionFileOptions, Producer, Target,
};
use klogscan::verify::{
    BrokerVersion, PartitionVerification, VerifyOptions, verify, verify_partition,
};
use std::path::Path;

const VERIFY_KINDS: &[Kind] = &[
    Kind::IndexCorrupt,
    Kind::IndexMismatch,
    Kind::TimeindexMismatch,
    Kind::TxnindexMismatch,
    Kind::SnapshotCorrupt,
    Kind::SnapshotMismatch,
    Kind::LeaderEpochCheckpointMismatch,
    Kind::CheckpointInconsistent,
    Kind::LsoBelowLogStart,
    Kind::LeftoverFile,
];

/// A partition with idempotent and transactional traffic over three segments, indexes
/// every 200 bytes, one aborted and one committed transaction, one transaction left open
/// (started after the last roll), and leader epochs 3 then 4.
fn busy(opts: PartitionFileOptions) -> PartitionBuilder {
    let idem = Producer::idempotent(500, 0);
    let a = Producer::transactional(700, 2);
    let b = Producer::transactional(800, 0);
    let mut p = PartitionBuilder::new("busy", 0)
        .leader_epoch(3)
        .broker_files(opts.index_interval(200));
    for _ in 0..4 {
        p.append(Batch::new(idem).records(3));
    }
    p.append(Batch::new(a).records(2));
    p.append(Batch::new(b).records(2));
    p.append(Batch::new(idem).records(3));
    p.abort(a, 9); // aborted, non-empty: a .txnindex entry
    p.roll();
    p.append(Batch::new(a.bumped()).records(2)); // new epoch, new transaction
    p.commit(b, 9);
    p.set_leader_epoch(4);
    p.commit(a.bumped(), 9);
    p.append(Batch::new(idem).records(3));
    p.roll();
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(b).records(1)); // open at the end
    p.append(Batch::new(idem).records(3));
    p
}

fn write(p: PartitionBuilder, clean: bool) -> (tempfile::TempDir, Manifest) {
    write_with(LogDirBuilder::new(1).clean_shutdown(clean), p)
}

fn write_with(ld: LogDirBuilder, p: PartitionBuilder) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

fn run(dir: &Path) -> PartitionVerification {
    verify_partition(dir, &VerifyOptions::default()).unwrap()
}

fn of_kind(v: &PartitionVerification, k: Kind) -> Vec<&klogscan::Finding> {
    v.findings.iter().filter(|f| f.kind == k).collect()
}

/// No verify-kind finding at all, and the prediction is a no-op.
fn assert_clean(v: &PartitionVerification) {
    let bad: Vec<_> = v
        .findings
        .iter()
        .filter(|f| VERIFY_KINDS.contains(&f.kind))
        .collect();
    assert!(bad.is_empty(), "unexpected findings: {bad:#?}");
}

#[test]
fn undamaged_partition_is_consistent_and_recovery_is_a_no_op() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    assert!(m.segments.len() == 3);
    let v = run(&m.dir);
    assert_clean(&v);
    let p = &v.prediction;
    assert_eq!(p.clean_shutdown, Some(true));
    assert!(p.recovered_segments.is_empty());
    assert!(p.truncation.is_none() && p.deleted_segments.is_empty());
    assert_eq!(p.log_end_offset_after, Some(m.log_end_offset));
    assert_eq!(p.producer_state.snapshot_offset, Some(m.log_end_offset));
    assert_eq!(p.producer_state.open_transactions, Some(1));
    assert!(p.load_failure.is_none());
    // the indexes really hold entries, so the negative case checks something
    let idx = std::fs::metadata(m.dir.join("00000000000000000000.index")).unwrap();
    assert!(idx.len() >= 16);
    assert!(
        m.dir
            .join(format!("{:020}.txnindex", m.segments[0].0))
            .exists()
    );
}

#[test]
fn index_position_off_by_some_bytes_is_an_index_mismatch() {
    let (_d, m) = write(
        busy(
            PartitionFileOptions::default().damage(Damage::IndexPositionDelta {
                segment: 0,
                entry: 1,
                delta: 5,
            }),
        ),
        true,
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::IndexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].segment.as_deref(), Some("00000000000000000000.index"));
    assert_eq!(f[0].evidence["mismatches"], 1);
    assert_eq!(f[0].evidence["entries"][0]["slot"], 1);
    assert_eq!(
        f[0].evidence["entries"][0]["check"]["kind"],
        "not_a_batch_start"
    );
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn index_with_a_partial_entry_is_index_corrupt() {
    let mut p = busy(PartitionFileOptions::default());
    p.fault(
        Target::File("00000000000000000000.index".into()),
        FaultKind::AppendGarbage(vec![0, 0, 1]),
    );
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::IndexCorrupt);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("neither positive nor a multiple of 8"),
        "{}",
        f[0].message
    );
    assert_eq!(f[0].severity, Severity::Error);
    // a 2.2 broker runs the sanity check at load and recovers the segment
    let old = verify_partition(
        &m.dir,
        &VerifyOptions {
            broker_version: Some(BrokerVersion(2, 2, 1)),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(old.prediction.recovered_segments.len(), 1);
    assert!(
        old.prediction.recovered_segments[0]
            .reason
            .starts_with("corrupt offset index")
    );
    assert!(v.prediction.recovered_segments.is_empty());
}

#[test]
fn missing_index_is_info_and_a_recovery_trigger() {
    let (_d, m) = write(
        busy(PartitionFileOptions::default().damage(Damage::MissingIndex { segment: 1 })),
        true,
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::IndexCorrupt);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(v.prediction.recovered_segments.len(), 1);
    assert_eq!(
        v.prediction.recovered_segments[0].segment,
        format!("{:020}.log", m.segments[1].0)
    );
    assert!(v.prediction.truncation.is_none());
}

#[test]
fn time_index_timestamp_changed_is_a_timeindex_mismatch() {
    let mut p = busy(PartitionFileOptions::default());
    // slot 0's timestamp, lowest byte
    p.fault(
        Target::File("00000000000000000000.timeindex".into()),
        FaultKind::FlipByte {
            position: 7,
            mask: 0x01,
        },
    );
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TimeindexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(
        f[0].evidence["entries"][0]["check"]["kind"],
        "timestamp_mismatch"
    );
    assert!(of_kind(&v, Kind::IndexMismatch).is_empty());
}

#[test]
fn dropped_txnindex_entry_is_a_txnindex_mismatch() {
    let (_d, m) = write(
        busy(
            PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
                segment: 0,
                entry: 0,
            }),
        ),
        true,
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TxnindexMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(f[0].message.contains("missing"), "{}", f[0].message);
    assert_eq!(f[0].producer_id, None);
    assert_eq!(f[0].evidence["entries"][0]["producer_id"], 700);
    assert_eq!(f[0].severity, Severity::Error);
}

#[test]
fn extra_and_wrong_txnindex_entries() {
    let mut p = busy(PartitionFileOptions::default());
    let name = "00000000000000000000.txnindex";
    // lastStableOffset of entry 0, lowest byte: wrong LSO
    p.fault(
        Target::File(name.into()),
        FaultKind::FlipByte {
            position: 33,
            mask: 0x40,
        },
    );
    // an abort no marker backs
    p.fault(
        Target::File(name.into()),
        FaultKind::AppendGarbage(encode_txn_index(&[AbortedTxn {
            producer_id: 999,
            first_offset: 1,
            last_offset: 25,
            last_stable_offset: 26,
        }])),
    );
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TxnindexMismatch);
    let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(f.len(), 2, "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("no matching ABORT")));
    assert!(
        msgs.iter()
            .any(|m| m.contains("wrong firstOffset or lastStableOffset"))
    );
}

#[test]
fn txnindex_entry_below_base_makes_the_broker_recover_the_segment() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let last_base = m.segments[2].0;
    std::fs::write(
        m.dir.join(format!("{last_base:020}.txnindex")),
        encode_txn_index(&[AbortedTxn {
            producer_id: 700,
            first_offset: 0,
            last_offset: 1,
            last_stable_offset: 2,
        }]),
    )
    .unwrap();
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::TxnindexMismatch);
    assert!(
        f.iter()
            .any(|f| f.message.contains("is less than start offset")),
        "{f:#?}"
    );
    assert_eq!(v.prediction.recovered_segments.len(), 1);
    assert!(
        v.prediction.recovered_segments[0]
            .reason
            .starts_with("corrupt transaction index")
    );
}

#[test]
fn stale_snapshot_is_a_snapshot_mismatch_naming_the_open_transaction() {
    let (_d, m) = write(
        busy(PartitionFileOptions::default().damage(Damage::StaleSnapshot)),
        true,
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::SnapshotMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].offset, Some(m.log_end_offset));
    let diffs = f[0].evidence["differences"].as_array().unwrap();
    // producer 800's transaction opened after the last roll: missing from the stale copy
    assert!(
        diffs
            .iter()
            .any(|d| d["producer_id"] == 800 && d["problem"] == "open_transaction_missing"),
        "{diffs:#?}"
    );
    // producer 500 wrote after the roll: its last offset differs
    assert!(diffs.iter().any(|d| d["producer_id"] == 500));
}

#[test]
fn snapshot_keeping_a_transaction_the_log_closed() {
    // a's transaction is open at the first roll and closed by the ABORT right after it;
    // the end snapshot repeats the roll state.
    let a = Producer::transactional(1, 0);
    let mut p = PartitionBuilder::new("t", 0)
        .broker_files(PartitionFileOptions::default().damage(Damage::StaleSnapshot));
    p.append(Batch::new(a).records(2));
    p.roll();
    p.abort(a, 3);
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::SnapshotMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("keeps a transaction open from offset 0 that the log closed"),
        "{}",
        f[0].message
    );
}

#[test]
fn corrupt_snapshot_falls_back_to_the_older_one() {
    let mut p = busy(PartitionFileOptions::default());
    let (_d0, m0) = write(busy(PartitionFileOptions::default()), true);
    let end = m0.log_end_offset;
    p.fault(
        Target::File(format!("{end:020}.snapshot")),
        FaultKind::FlipByte {
            position: 20,
            mask: 0xff,
        },
    );
    // A clean shutdown: no recovery's rebuild deletes the corrupt snapshot before the final
    // rebuild reads it.
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::SnapshotCorrupt);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("Snapshot is corrupt (CRC is no longer valid)")
    );
    let ps = &v.prediction.producer_state;
    assert_eq!(ps.snapshot_offset, Some(m.segments[2].0));
    assert_eq!(ps.replay_from, Some(m.segments[2].0));
    assert!(
        v.prediction
            .leftovers
            .iter()
            .any(|l| l.kind == "corrupt_snapshot")
    );
}

#[test]
fn leader_epoch_checkpoint_disagreeing_with_the_batches() {
    let mut p = busy(PartitionFileOptions::default());
    let f = Target::File("leader-epoch-checkpoint".into());
    p.fault(f.clone(), FaultKind::Truncate { len: 0 });
    p.fault(f, FaultKind::AppendGarbage(b"0\n2\n3 0\n4 9\n".to_vec()));
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::LeaderEpochCheckpointMismatch);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("at offset 9 the checkpoint gives epoch 4 but the lineage the batches give (each epoch from its first batch above the epochs before it, as recovery rebuilds the cache) gives epoch 3"),
        "{}",
        f[0].message
    );
    // the undamaged file is "0\n2\n3 0\n4 <first epoch-4 offset>\n"
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let text = std::fs::read_to_string(m.dir.join("leader-epoch-checkpoint")).unwrap();
    assert!(text.starts_with("0\n2\n3 0\n4 "), "{text}");
}

#[test]
fn checkpoints_inconsistent_with_the_log() {
    let (_d, m0) = write(busy(PartitionFileOptions::default()), true);
    let leo = m0.log_end_offset;
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .high_watermark("busy", 0, leo + 5)
            .recovery_point("busy", 0, leo + 1),
        busy(PartitionFileOptions::default()),
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::CheckpointInconsistent);
    assert_eq!(f.len(), 2, "{:#?}", v.findings);
    assert!(f.iter().any(|f| f.message.starts_with(&format!(
        "high watermark (replication-offset-checkpoint) {}",
        leo + 5
    ))));
    assert!(f.iter().any(|f| f.message.starts_with("recovery point")));
    assert_eq!(v.prediction.high_watermark, Some(leo + 5));
    // log start above the log end: every segment goes
    let (_d, m) = write_with(
        LogDirBuilder::new(1).log_start_offset("busy", 0, leo + 10),
        busy(PartitionFileOptions::default()),
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::CheckpointInconsistent);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(v.prediction.deleted_segments.len(), 3);
    assert_eq!(v.prediction.log_end_offset_after, Some(leo + 10));
}

#[test]
fn open_transaction_below_the_log_start_offset() {
    // b's last transaction opened at offset 30 is still open at the end; a log start at 31
    // (DeleteRecords) is above it.
    let (_d, m) = write_with(
        LogDirBuilder::new(1).log_start_offset("busy", 0, 31),
        busy(PartitionFileOptions::default()),
    );
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::LsoBelowLogStart);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].producer_id, Some(800));
    // The scan reads the checkpoint too: the log starts at 31 and the LSO is clamped there,
    // as the broker reports it (kafka-semantics §2).
    assert_eq!(v.scan.log_start_offset, Some(31));
    assert_eq!(v.scan.last_stable_offset, Some(31));
    assert!(
        f[0].remediation
            .as_deref()
            .unwrap()
            .contains("--start-offset")
    );
    // at log start 0 nothing, and the LSO is the transaction's first offset
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let v = run(&m.dir);
    assert!(of_kind(&v, Kind::LsoBelowLogStart).is_empty());
    assert_eq!(v.scan.log_start_offset, Some(0));
    assert_eq!(v.scan.last_stable_offset, Some(30));
}

/// The crash-like scenario of the issue: a garbage tail on the active segment, a `.swap`
/// leftover and a stale snapshot, after an unclean shutdown.
#[test]
fn crash_like_scenario_predicts_the_truncation_exactly() {
    let mut p = busy(
        PartitionFileOptions::default()
            .damage(Damage::StaleSnapshot)
            .damage(Damage::Leftover {
                segment: 1,
                suffix: ".swap".into(),
            }),
    );
    p.fault(
        Target::LastLog,
        FaultKind::AppendGarbage(vec![
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x63, 0xff, 0xff, 0xff, 0xf0, 1, 2, 3,
        ]),
    );
    let (_d, m) = write(p, false);
    let last = m.segments.last().unwrap();
    let len = std::fs::metadata(&last.1).unwrap().len();
    let valid = len - 15;
    let v = run(&m.dir);
    let pr = &v.prediction;
    assert_eq!(pr.clean_shutdown, Some(false));
    let t = pr.truncation.as_ref().expect("truncation");
    assert_eq!(t.segment, format!("{:020}.log", last.0));
    assert_eq!(t.position, valid);
    assert_eq!(t.offset, m.log_end_offset);
    assert_eq!(t.bytes_removed, 15);
    assert!(pr.deleted_segments.is_empty());
    // recovery point = LEO: the active segment is recovered after the unclean shutdown;
    // the swapped-in segment 1 is not, though its `.index` lay in the swapped range
    // (deleted first) and no `.index.swap` was left: the load's first pass reads the swap
    // segment's next offset, which creates its (preallocated) offset index, renamed with it
    let rec: Vec<(&str, &str)> = pr
        .recovered_segments
        .iter()
        .map(|r| (r.segment.as_str(), &*r.reason))
        .collect();
    assert_eq!(rec.len(), 1, "{rec:?}");
    assert_eq!(rec[0].0, format!("{:020}.log", last.0));
    // the swap completes over segment 1
    let swap = pr.leftovers.iter().find(|l| l.kind == "swap").unwrap();
    assert!(
        swap.action
            .contains(&format!("replaces {:020}.log", m.segments[1].0)),
        "{}",
        swap.action
    );
    assert_eq!(of_kind(&v, Kind::LeftoverFile).len(), 1);
    assert_eq!(of_kind(&v, Kind::SnapshotMismatch).len(), 1);
    // the log dir's unclean_shutdown finding
    let r = verify(
        &[m.dir.parent().unwrap().to_path_buf()],
        &VerifyOptions::default(),
    );
    assert_eq!(
        r.findings()
            .filter(|f| f.kind == Kind::UncleanShutdown)
            .count(),
        1
    );
}

/// A CRC failure in the middle segment with recovery point 0: recovery truncates there
/// and deletes the later segment.
#[test]
fn corrupt_batch_mid_log_truncates_and_deletes_later_segments() {
    let mut p = busy(PartitionFileOptions::default());
    let (_d0, m0) = write(busy(PartitionFileOptions::default()), true);
    let seg1: Vec<_> = m0
        .batches
        .iter()
        .filter(|b| b.segment_base == m0.segments[1].0)
        .collect();
    let victim = seg1[1];
    p.fault(
        Target::Log(1),
        FaultKind::FlipByte {
            position: victim.position + 70,
            mask: 0x10,
        },
    );
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("busy", 0, 0),
        p,
    );
    let v = run(&m.dir);
    let pr = &v.prediction;
    let t = pr.truncation.as_ref().unwrap();
    assert_eq!(t.segment, format!("{:020}.log", m.segments[1].0));
    assert_eq!(t.position, victim.position);
    assert_eq!(t.offset, seg1[0].last_offset + 1);
    assert_eq!(t.first_removed_offset, Some(victim.base_offset));
    assert_eq!(
        pr.deleted_segments,
        vec![format!("{:020}.log", m.segments[2].0)]
    );
    assert_eq!(pr.log_end_offset_after, Some(seg1[0].last_offset + 1));
    assert_eq!(pr.recovered_segments.len(), 2);
    // snapshots above the new end are deleted; the recovery of segment 1 leaves one at its
    // new end (`LogLoader.recoverSegment`), the newest stray above every base left: loaded
    assert_eq!(
        pr.producer_state.snapshot_offset,
        Some(seg1[0].last_offset + 1)
    );
    assert!(pr.leftovers.iter().any(|l| l.kind == "snapshot_beyond_log"));
    // after a clean shutdown the broker trusts it
    let (_d, m) = {
        let mut p = busy(PartitionFileOptions::default());
        p.fault(
            Target::Log(1),
            FaultKind::FlipByte {
                position: victim.position + 70,
                mask: 0x10,
            },
        );
        write(p, true)
    };
    let v = run(&m.dir);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.unrecovered_corruption.len(), 1);
}

#[test]
fn non_transactional_write_in_a_transaction_fails_the_load() {
    let part = |snapshots: bool| {
        let a = Producer::transactional(1, 0);
        let mut p = PartitionBuilder::new("t", 0).broker_files(PartitionFileOptions {
            snapshots,
            ..Default::default()
        });
        p.append(Batch::new(a).records(2));
        p.append(
            Batch::new(Producer::idempotent(1, 0))
                .records(1)
                .sequence(2),
        );
        p
    };
    // no snapshot: the recovery of the segment replays the log from its start and throws
    // (the final rebuild would start at the snapshot the recovery leaves at the log end)
    let (_d, m) = write(part(false), false);
    let v = run(&m.dir);
    let lf = v.prediction.load_failure.as_ref().expect("load failure");
    assert_eq!(lf.kind, "non_transactional_write_in_transaction");
    assert_eq!(lf.exception, "InvalidTxnStateException");
    assert_eq!(lf.offset, Some(2));
    // the load stops in that recovery: no final rebuild, no log end after it
    assert_eq!(v.prediction.load_stops_at.as_deref(), Some("recovery"));
    assert_eq!(v.prediction.producer_state.replay_from, None);
    assert_eq!(v.prediction.log_end_offset_after, None);
    // a snapshot at the log end after an unclean shutdown: nothing is replayed by the
    // rebuild, but the segment holding the recovery point is recovered, which replays it
    let (_d, m) = write(part(true), false);
    let v = run(&m.dir);
    assert_eq!(v.prediction.producer_state.replay_from, None);
    let lf = v.prediction.load_failure.as_ref().expect("load failure");
    assert_eq!(lf.offset, Some(2));
    // the same after a clean shutdown: nothing recovered, nothing replayed, the load succeeds
    let (_d, m) = write(part(true), true);
    let v = run(&m.dir);
    assert!(v.prediction.recovered_segments.is_empty());
    assert!(v.prediction.load_failure.is_none());
    assert_eq!(v.prediction.producer_state.replay_from, Some(3));
}

#[test]
fn leftovers_and_orphans() {
    let p = busy(PartitionFileOptions::default().damage(Damage::Leftover {
        segment: 0,
        suffix: ".deleted".into(),
    }));
    let (_d, m) = write(p, true);
    std::fs::write(m.dir.join("00000000000000999999.index"), []).unwrap();
    let v = run(&m.dir);
    let f = of_kind(&v, Kind::LeftoverFile);
    assert_eq!(f.len(), 2, "{f:#?}");
    assert!(
        v.prediction
            .leftovers
            .iter()
            .any(|l| l.kind == "deleted" && l.action.starts_with("deleted at startup"))
    );
    assert!(
        v.prediction
            .leftovers
            .iter()
            .any(|l| l.kind == "orphan_index")
    );
}

/// Two replicas of the same topic-partition in two log dirs: each directory's findings stay
/// with it.
#[test]
fn findings_are_attributed_to_their_own_directory() {
    let root = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(busy(PartitionFileOptions::default()))
        .write(&root.path().join("a"))
        .unwrap();
    LogDirBuilder::new(2)
        .partition(busy(PartitionFileOptions::default().damage(
            Damage::IndexPositionDelta {
                segment: 0,
                entry: 0,
                delta: 1,
            },
        )))
        .write(&root.path().join("b"))
        .unwrap();
    let r = verify(&[root.path().to_path_buf()], &VerifyOptions::default());
    assert_eq!(r.partitions.len(), 2);
    let by_dir = |d: &str| {
        r.partitions
            .iter()
            .find(|p| p.path().contains(&format!("/{d}/")))
            .unwrap()
    };
    assert!(of_kind(by_dir("a"), Kind::IndexMismatch).is_empty());
    assert_eq!(of_kind(by_dir("b"), Kind::IndexMismatch).len(), 1);
    assert_eq!(
        r.findings()
            .filter(|f| f.kind == Kind::IndexMismatch)
            .count(),
        1
    );
}

mod load_checks;
mod noncanonical;
mod stop_reasons;
mod txn_index;

/// The snapshots above the end recovery truncates to are deleted unread
/// (`ProducerStateManager.truncateAndReload` at the end of `LogLoader.load`): none of them
/// becomes the broker's state, so none is held against the log's producers. Here the
/// corrupt COMMIT marker at 22 is where recovery stops; the replay, which reads on past it
/// without that marker, differs from the snapshots at 27 and 34 in producer 800's
/// transaction — the corruption's doing, which `crc_mismatch` and the truncation name.
/// Until this check, both snapshots were `snapshot_mismatch` warnings saying the broker
/// would load them as they are. Near miss: after a clean shutdown no recovery runs, the
/// snapshot at 34 is the one the load reads, and the differences are said.
#[test]
fn snapshots_above_the_recovered_end_are_not_compared() {
    let (_d0, m0) = write(busy(PartitionFileOptions::default()), true);
    let victim = (m0.batches.iter())
        .filter(|b| b.segment_base == m0.segments[1].0)
        .nth(1)
        .unwrap()
        .position;
    let faulty = || {
        let mut p = busy(PartitionFileOptions::default());
        p.fault(
            Target::Log(1),
            FaultKind::FlipByte {
                position: victim + 70,
                mask: 0x10,
            },
        );
        p
    };
    let (_d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("busy", 0, 0),
        faulty(),
    );
    let v = run(&m.dir);
    assert_eq!(v.prediction.log_end_offset_after, Some(22));
    let beyond: Vec<&str> = (v.prediction.leftovers.iter())
        .filter(|l| l.kind == "snapshot_beyond_log")
        .map(|l| l.file.as_str())
        .collect();
    assert_eq!(
        beyond,
        [
            "00000000000000000027.snapshot",
            "00000000000000000034.snapshot"
        ]
    );
    assert!(
        of_kind(&v, Kind::SnapshotMismatch).is_empty(),
        "{:#?}",
        v.findings
    );
    assert_eq!(of_kind(&v, Kind::CrcMismatch).len(), 1);
    let (_d, m) = write(faulty(), true);
    let v = run(&m.dir);
    assert!(v.prediction.truncation.is_none());
    let said: Vec<Option<i64>> = (of_kind(&v, Kind::SnapshotMismatch).iter())
        .map(|f| f.offset)
        .collect();
    assert_eq!(said, [Some(27), Some(34)], "{:#?}", v.findings);
}
