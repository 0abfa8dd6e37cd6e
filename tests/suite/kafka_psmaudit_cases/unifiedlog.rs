//! `UnifiedLogTest` cases no audit cited: the last stable offset under a moving high
//! watermark, the leader's duplicate detection over the last five batches, an empty log,
//! and a snapshot's offset taken from its file name.

use super::*;
use crate::common::cases::{entry, lso, scan, scan_dir};
use klogscan::testkit::{Batch, PartitionFileOptions, Producer};

/// `UnifiedLogTest.testReadCommittedWithConcurrentHighWatermarkUpdates`: producer 15 writes
/// 25 one-record transactions, each aborted at once, while the high watermark follows the
/// log end. Kafka's last stable offset is the smaller of the first undecided offset and the
/// high watermark, so a read_committed read never returns an undecided record. On disk: 25
/// aborted transactions (the index entry of each records the log end after it as its last
/// stable offset), nothing undecided: the last stable offset is the log end, 50. Near miss:
/// the last transaction left open at 48 with the high watermark checkpointed at 46 —
/// klogscan reports the first undecided offset (48) and the checkpointed high watermark
/// (46) side by side; Kafka's bound is the smaller, 46.
#[test]
fn read_committed_with_concurrent_high_watermark_updates() {
    let t = Producer::transactional(15, 0);
    let build = |open_last: bool| {
        let mut p = PartitionBuilder::new("rc", 0);
        for i in 0..25 {
            p.append(Batch::new(t).records(1));
            if !(open_last && i == 24) {
                p.abort(t, 0);
            }
        }
        p
    };
    let opts = ScanOptions::default().with_keep_producers(true);
    let (_b, _d, v) = broker(vec![build(false)], &[("rc", 0, 50)], opts.clone());
    v.assert_no_alarm();
    for (name, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        let pr = part(r, "rc", 0);
        assert_eq!(
            (pr.log_end_offset, pr.last_stable_offset, pr.high_watermark),
            (Some(50), Some(50), Some(50)),
            "{name}"
        );
        let want: Vec<_> = (0..25).map(|k| (15, 2 * k, 2 * k + 1, 2 * k + 2)).collect();
        assert_eq!(aborted_of(r, "rc", 0), want, "{name}");
    }
    // near miss: the last transaction open, the high watermark behind it
    let (_b, _d, v) = broker(vec![build(true)], &[("rc", 0, 46)], opts);
    let pr = part(&v.scan, "rc", 0);
    assert_eq!(
        (pr.log_end_offset, pr.last_stable_offset, pr.high_watermark),
        (Some(49), Some(48), Some(46))
    );
    let kafka_lso = pr.last_stable_offset.min(pr.high_watermark);
    assert_eq!(kafka_lso, Some(46));
    assert!(
        (v.scan.findings.iter()).any(|f| matches!(
            f.kind,
            Kind::OpenTransaction | Kind::HangingTransaction
        ) && f.offset == Some(48)),
        "{:#?}",
        lines(&v.scan.findings)
    );
    assert_eq!(aborted_of(&v.scan, "rc", 0).len(), 24);
}

/// Producer 1, epoch 0: sequences 0–5 one record each, then one batch of sequences 6–8
/// (offsets 6–8), then `extra` — a batch a follower took as it was.
fn duplicates_log(extra: Option<(usize, i32)>) -> PartitionBuilder {
    let p0 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("dup", 0);
    for s in 0..6 {
        p.append(Batch::new(p0).records(1).sequence(s));
    }
    p.append(Batch::new(p0).records(3).sequence(6));
    if let Some((n, s)) = extra {
        p.append(Batch::new(p0).records(n).sequence(s));
    }
    p
}

/// `UnifiedLogTest.testDuplicateAppends`: a leader keeps the metadata of a producer's last
/// five batches; a retry equal to one of them (first and last sequence alike) is answered
/// with the original's offsets and not appended; a batch overlapping one only in part, or
/// repeating a batch older than the last five, is `OutOfOrderSequenceException`. On disk
/// each such batch (a follower's copy takes anything) is the finding of what the leader
/// would have answered: the tail repeated (sequences 6–8) and the batch of sequence 2
/// (within the last five) are exact duplicates of the batches at 6 and 2, answered with
/// their offsets and no error; sequences 7–8 (a part of the tail: a duplicate, not exact)
/// and sequence 1 (older than the last five: a sequence out of order) are refused with
/// `OutOfOrderSequenceException`. Near miss: the next batch,
/// sequence 9, is in order.
#[test]
fn duplicate_appends() {
    let (_d, _m, r) = scan(&duplicates_log(None));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (0, 8, 8, None));
    // (records, first sequence) of the extra batch → (kind, exact, original's offset, the
    // leader's answer an OutOfOrderSequenceException)
    let cases = [
        (
            (3, 6),
            (Kind::DuplicateSequence, Some(true), Some(6), false),
        ),
        (
            (1, 2),
            (Kind::DuplicateSequence, Some(true), Some(2), false),
        ),
        (
            (2, 7),
            (Kind::DuplicateSequence, Some(false), Some(6), true),
        ),
        ((1, 1), (Kind::SequenceGap, None, None, true)),
    ];
    for (extra, want) in cases {
        let (_d, _m, r) = scan(&duplicates_log(Some(extra)));
        assert_eq!(kinds(&r.findings), vec![(want.0, Some(9))], "{extra:?}");
        let f = &r.findings[0];
        let got = (
            f.kind,
            f.evidence["exact"].as_bool(),
            f.evidence["original"]["offset"].as_i64(),
            (f.client_error.as_deref())
                .is_some_and(|c| c.starts_with("OutOfOrderSequenceException")),
        );
        assert_eq!(got, want, "{extra:?}: {:#?}", f);
    }
    // near miss: sequence 9 follows 8
    let (_d, _m, r) = scan(&duplicates_log(Some((1, 9))));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(entry(&r, 1), (0, 9, 9, None));
}

/// `UnifiedLogTest.testLoadEmptyLog`: a partition whose only segment (base 0) is empty
/// loads and takes an append. On disk: nothing to report, a log ending at 0 with nothing
/// undecided (last stable offset 0), a clean start predicted. Near miss: with the one
/// record the test then appends, the log and the last stable offset end at 1.
#[test]
fn load_empty_log() {
    let opts = ScanOptions::default().with_keep_producers(true);
    let mut b = Brokers::new();
    let ld = LogDirBuilder::new(1).partition(PartitionBuilder::new("empty", 0));
    let dir = b.write(1, "data", ld, None);
    // `createEmptyLogs`: an empty segment and offset index at base 0
    for ext in ["log", "index"] {
        std::fs::write(dir.join("empty-0").join(format!("{:020}.{ext}", 0)), b"").unwrap();
    }
    let v = b.check_with(opts.clone());
    v.assert_quiet();
    let pr = part(&v.scan, "empty", 0);
    assert_eq!(
        (pr.log_end_offset, pr.last_stable_offset),
        (Some(0), Some(0))
    );
    assert_eq!(pr.batches, 0);
    let mut p = PartitionBuilder::new("empty", 0);
    p.append(Batch::new(Producer::PLAIN).records(1));
    let (_b, _d, v) = broker(vec![p], &[], opts);
    v.assert_quiet();
    let pr = part(&v.scan, "empty", 0);
    assert_eq!(
        (pr.log_end_offset, pr.last_stable_offset),
        (Some(1), Some(1))
    );
}

/// `UnifiedLogTest.testOffsetFromProducerSnapshotFile`: a snapshot's offset is the number
/// its file name starts with (`UnifiedLog.offsetFromFile`: the name up to its first dot).
/// On disk: a log of producer 1 at 23423420–23423422 and its snapshot
/// `00000000000023423423.snapshot` at the log end: the load takes it, at 23423423, and the
/// replay agrees with it. Near miss: the same file under a name not zero-padded,
/// `23423423.snapshot` — Kafka lists it as a snapshot too (`listSnapshotFiles` keeps every
/// `.snapshot` name) and reads offset 23423423 from it.
#[test]
fn offset_from_producer_snapshot_file() {
    let mut p = PartitionBuilder::new("snap", 0)
        .start_offset(23_423_420)
        .broker_files(PartitionFileOptions::default());
    p.append(Batch::new(Producer::idempotent(1, 0)).records(3));
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    let padded = m.dir.join("00000000000023423423.snapshot");
    assert!(padded.is_file());
    let verify = || {
        let req = klogscan::request::Request::new([dir.path()]);
        let a = klogscan::request::verify(&req, None).unwrap();
        a.report.partitions.into_iter().next().unwrap()
    };
    let v = verify();
    assert_eq!(
        v.prediction.producer_state.snapshot_offset,
        Some(23_423_423)
    );
    assert!(
        !(v.findings.iter())
            .any(|f| matches!(f.kind, Kind::SnapshotCorrupt | Kind::SnapshotMismatch)),
        "{:#?}",
        lines(&v.findings)
    );
    let r = scan_dir(&m.dir);
    assert_eq!(lso(&r), Some(23_423_423));
    // near miss: the name not padded
    std::fs::rename(&padded, m.dir.join("23423423.snapshot")).unwrap();
    let v = verify();
    assert_eq!(
        v.prediction.producer_state.snapshot_offset,
        Some(23_423_423)
    );
}

/// `ProducerStateManagerTest.testRemoveAndMarkSnapshotForDeletionAlreadyDeleted`: a
/// snapshot being deleted is first renamed with the `.deleted` suffix
/// (`removeAndMarkSnapshotForDeletion`); one already gone from disk is simply skipped. On
/// disk, what such a deletion leaves when the broker stops between the rename and the
/// delete: `00000000000000000001.snapshot.deleted` beside the log. The load deletes every
/// `.deleted` file first (`LogLoader.removeTempFilesAndCollectSwapFiles`) and never reads
/// it as a snapshot: it takes the one at the log end (2). Near miss: the file under its
/// own name is a snapshot the load keeps.
#[test]
fn remove_and_mark_snapshot_for_deletion_already_deleted() {
    let p0 = Producer::idempotent(1, 0);
    let mut p = PartitionBuilder::new("psm", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(p0).records(1).sequence(0));
    p.roll();
    p.append(Batch::new(p0).records(1).sequence(1));
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    let snap1 = m.dir.join(format!("{:020}.snapshot", 1));
    assert!(snap1.is_file());
    let verify = || {
        let req = klogscan::request::Request::new([dir.path()]);
        let a = klogscan::request::verify(&req, None).unwrap();
        a.report.partitions.into_iter().next().unwrap()
    };
    let leftovers = |v: &klogscan::verify::PartitionVerification| {
        (v.prediction.leftovers.iter())
            .filter(|l| l.file.contains(".snapshot"))
            .map(|l| l.file.clone())
            .collect::<Vec<_>>()
    };
    // near miss first: the snapshot at 1 under its own name is kept
    let v = verify();
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(2));
    assert!(leftovers(&v).is_empty(), "{:#?}", v.prediction.leftovers);
    std::fs::rename(&snap1, m.dir.join(format!("{:020}.snapshot.deleted", 1))).unwrap();
    let v = verify();
    assert_eq!(v.prediction.producer_state.snapshot_offset, Some(2));
    assert_eq!(
        leftovers(&v),
        vec![format!("{:020}.snapshot.deleted", 1)],
        "{:#?}",
        v.prediction.leftovers
    );
    assert!(
        !(v.findings.iter()).any(|f| f.severity >= Severity::Warning),
        "{:#?}",
        lines(&v.findings)
    );
}
