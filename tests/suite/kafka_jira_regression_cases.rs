//! Kafka bug fixes (JIRA) whose bug leaves a signature on a broker's disk. Each case rebuilds
//! what the buggy broker wrote — or what a broker of the fixed version must load without
//! error — as bytes with the testkit, and asserts what klogscan says of it: the finding that
//! names the cause (kind, severity, evidence), `verify`'s prediction of the next start, and a
//! healthy twin that stays quiet. Every case cites the JIRA id, the fixing commit of
//! apache/kafka (trunk) and the regression test the fix added.
//!
//! Already reproduced elsewhere (not repeated here): KAFKA-9144, 12671, 15351, 3160, 6264,
//! 16853, 18202, 18019, 12835, 16511, 10702, 13727 (`kafka_cleaner_cases/txnindex.rs`),
//! 5435/5747 (snapshot loading), 8335, 7866, 8351, 6854, 12964, 9065, 5600, 14869, 8069.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{
    Batch, HeaderOverrides, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions,
    Producer, Rec,
};
use klogscan::verify::PartitionVerification;
use std::path::Path;
use tempfile::TempDir;

mod coordinators;
mod epochs;

// ----- helpers ----------------------------------------------------------------------------

/// A day after the testkit's clock start: the reference time (`--now`) of every scan here.
const NOW: i64 = DEFAULT_START_MS + 86_400_000;

/// Write `p` into broker 1's log dir (`ld`, clean shutdown unless it says otherwise).
fn write(ld: LogDirBuilder, p: PartitionBuilder) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    (dir, m.partitions.into_iter().next().unwrap())
}

/// Scan the log dir holding `m` as the CLI does (`--now` a day on).
fn scan(m: &Manifest) -> ScanReport {
    scan_with(m.dir.parent().unwrap(), ScanOptions::default())
}

fn scan_with(dir: &Path, opts: ScanOptions) -> ScanReport {
    let opts = opts.with_now_ms(NOW).with_keep_producers(true);
    let a = request::run(&Request::new([dir]).with_options(opts)).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    a.report
}

/// `verify` of the log dir holding `m` (its only partition), as the CLI runs it.
fn verify(m: &Manifest) -> PartitionVerification {
    let opts = ScanOptions::default().with_now_ms(NOW);
    let r = Request::new([m.dir.parent().unwrap()]).with_options(opts);
    let a = request::verify(&r, None).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report.partitions.into_iter().next().unwrap()
}

fn of_kind(fs: &[Finding], k: Kind) -> Vec<&Finding> {
    fs.iter().filter(|f| f.kind == k).collect()
}

/// The findings at warning or above.
fn serious(fs: &[Finding]) -> Vec<&Finding> {
    fs.iter()
        .filter(|f| f.severity >= Severity::Warning)
        .collect()
}

/// Write the log dir's `cleaner-offset-checkpoint` with one entry (`LogCleanerManager`'s
/// `doneCleaning` writes it as every offset checkpoint: version 0, count, `topic p offset`).
fn cleaner_checkpoint(m: &Manifest, offset: i64) {
    let text = format!("0\n1\n{} {} {offset}\n", m.topic, m.partition);
    std::fs::write(
        m.dir.parent().unwrap().join("cleaner-offset-checkpoint"),
        text,
    )
    .unwrap();
}

// ----- the log cleaner ------------------------------------------------------------------

/// The control record key of a COMMIT (`ControlRecordType.COMMIT.recordKey()`: version 0,
/// type 1).
const COMMIT_KEY: [u8; 4] = [0, 0, 0, 1];

/// The cleaned `test-0` of `LogCleanerTest.testCleaningWithKeysConflictingWithTxnMarkerKeys`
/// (leader epoch 5): producer 1's transaction (key `1` at 0) and its COMMIT at 1, producer
/// 2's transaction whose one record's key is the bytes of a COMMIT marker's key (2) and its
/// COMMIT at 3. With `bug`, the COMMIT at 1 as a cleaner before the fix leaves it: the
/// record removed (the offset map holds a later offset, 2, for its key) but the batch kept
/// empty, since it is producer 1's last (`BatchRetention.RETAIN_EMPTY`).
fn marker_key_conflict(bug: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("test", 0).leader_epoch(5);
    let p1 = Producer::transactional(1, 0);
    let p2 = Producer::transactional(2, 0);
    p.append(Batch::new(p1).record(Rec::kv("1", "1")));
    if bug {
        let ts = p.now();
        p.advance_time(1000);
        p.append(Batch::new(p1).tweak(move |s| {
            s.control = true;
            s.base_timestamp = -1;
            s.overrides = HeaderOverrides {
                max_timestamp: Some(ts),
                ..HeaderOverrides::default()
            };
        }));
    } else {
        p.commit(p1, 0);
    }
    p.append(Batch::new(p2).record(Rec::kv(COMMIT_KEY, "foo")));
    p.commit(p2, 0);
    p
}

/// KAFKA-14055 (commit 0bc8da7aec8, "Txn markers should not be removed by matching records
/// in the offset map"; `LogCleanerTest.testCleaningWithKeysConflictingWithTxnMarkerKeys`).
/// Before the fix `Cleaner.cleanInto`'s record filter looked a control record's key up in
/// the offset map like a data record's, so a data record keyed `00 00 00 01` deleted an
/// earlier COMMIT marker. What stays on disk: producer 1's committed data at 0 with, at 1,
/// an empty control batch. A broker's producer-state rebuild skips an empty control batch
/// (`ProducerAppendInfo.append`: "the entire transaction has been cleaned"), so the
/// transaction at 0 is open again after the next load and pins the last stable offset at 0
/// (read_committed consumers stop there) although the coordinator completed it long ago;
/// the `cleaner-offset-checkpoint` at 4 says the cleaner passed it, which it never does while
/// it is undecided (`LogCleanerManager.cleanableOffsets`). klogscan must report the hanging
/// transaction at 0 and the checkpoint above it; the log as the fixed cleaner leaves it
/// (marker kept) is quiet.
#[test]
fn kafka_14055_a_marker_deleted_by_a_conflicting_key_hangs_its_transaction() {
    for bug in [true, false] {
        let (_d, m) = write(LogDirBuilder::new(1), marker_key_conflict(bug));
        cleaner_checkpoint(&m, 4);
        let r = scan(&m);
        let hanging = of_kind(&r.findings, Kind::HangingTransaction);
        let checkpoint = of_kind(&r.findings, Kind::CheckpointInconsistent);
        if !bug {
            assert!(serious(&r.findings).is_empty(), "{:#?}", r.findings);
            assert_eq!(r.partitions[0].last_stable_offset, Some(4));
            continue;
        }
        assert_eq!(hanging.len(), 1, "{:#?}", r.findings);
        assert_eq!(
            (hanging[0].offset, hanging[0].producer_id),
            (Some(0), Some(1))
        );
        assert_eq!(hanging[0].severity, Severity::Error);
        assert_eq!(r.partitions[0].last_stable_offset, Some(0));
        let v = verify(&m);
        let checkpoint_v = of_kind(&v.findings, Kind::CheckpointInconsistent);
        assert_eq!(checkpoint_v.len(), 1, "{:#?} {checkpoint:#?}", v.findings);
        assert_eq!(checkpoint_v[0].producer_id, Some(1));
        assert_eq!(checkpoint_v[0].offset, Some(0));
    }
}

/// A segment holding one data batch the cleaner emptied (`DefaultRecordBatch.writeEmptyHeader`:
/// no records, first timestamp −1) of producer 23 at epoch 5, base sequence 10, offset 3,
/// leader epoch 293 — `MemoryRecordsTest.testEmptyBatchRetention`'s batch.
fn empty_only_segment(p: &mut PartitionBuilder, producer: Producer) {
    let ts = p.now();
    p.append(Batch::new(producer).sequence(10).tweak(move |s| {
        s.overrides.max_timestamp = Some(ts);
        s.base_timestamp = -1;
    }));
}

/// KAFKA-7385 (commit 958cdca9bec, "Fix log cleaner behavior when only empty batches are
/// retained"; `MemoryRecordsTest.testEmptyBatchRetention`). When a cleaning pass kept only
/// empty batches, `MemoryRecords.filterTo` reported a max offset of −1 and the cleaner
/// thread died on the append; the fixed cleaner writes the segment, which then holds
/// nothing but the producer's empty batch (offset 3, sequence 10). A broker loads it as the
/// producer's last write — epoch 5, last sequence 10 at offset 3, log end 4 — so the
/// producer's next batch (sequence 11, offset 4) follows it. klogscan must read the
/// empty-only segment without complaint, alone and followed by that next batch, and take
/// the producer's sequence from it.
#[test]
fn kafka_7385_a_segment_of_only_an_empty_batch_keeps_the_producer_sequence() {
    for followed in [false, true] {
        let producer = Producer::idempotent(23, 5);
        let mut p = PartitionBuilder::new("foo", 0)
            .leader_epoch(293)
            .start_offset(3)
            .broker_files(PartitionFileOptions::default());
        empty_only_segment(&mut p, producer);
        if followed {
            p.roll();
            p.append(Batch::new(producer).sequence(11).record(Rec::kv("k", "v")));
        }
        let (_d, m) = write(LogDirBuilder::new(1), p);
        let r = scan(&m);
        let s = r.partitions[0]
            .outcome()
            .producers
            .iter()
            .find(|s| s.producer_id == 23)
            .unwrap();
        let want = if followed { (5, 11, 4) } else { (5, 10, 3) };
        assert_eq!((s.producer_epoch, s.last_sequence, s.last_offset), want);
        assert!(serious(&r.findings).is_empty(), "{:#?}", r.findings);
        let v = verify(&m);
        assert!(serious(&v.findings).is_empty(), "{:#?}", v.findings);
        assert!(v.prediction.load_failure.is_none());
        assert!(v.prediction.truncation.is_none());
        let end = if followed { 5 } else { 4 };
        assert_eq!(v.prediction.log_end_offset_after, Some(end));
    }
}

/// `foo-0` of `LogCleanerManagerTest.testLogStartOffsetLargerThanActiveSegmentBaseOffset`:
/// three batches of three keyed records, all in the one (active) segment.
fn one_active_segment() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("foo", 0).broker_files(PartitionFileOptions::default());
    for _ in 0..3 {
        p.append(Batch::new(Producer::PLAIN).records(3));
    }
    p
}

/// KAFKA-9133 (commit 92dd337688a, "Cleaner should handle log start offset larger than
/// active segment base offset"; `LogCleanerManagerTest.
/// testLogStartOffsetLargerThanActiveSegmentBaseOffset` and
/// `testDirtyOffsetLargerThanActiveSegmentBaseOffset`). After DeleteRecords moved the log
/// start to 2, inside the only segment, the cleaner's `cleaner-offset-checkpoint` (0, below
/// it; or 7, above the active segment's base after an unclean election) made
/// `cleanableOffsets` throw and the cleaner thread die. The fixed cleaner starts from the
/// log start (a checkpoint outside [log start, log end] is reset to it) and cleans nothing
/// of the active segment. These files are what a broker of the fixed version loads: log
/// start 2 kept, nothing recovered; klogscan must not report them. The twin whose log start
/// entry lies above the log end (10 > 9) is reported: the load deletes every segment.
#[test]
fn kafka_9133_a_log_start_inside_the_active_segment_is_normal() {
    for cleaner in [0, 7] {
        let ld = LogDirBuilder::new(1).log_start_offset("foo", 0, 2);
        let (_d, m) = write(ld, one_active_segment());
        assert_eq!((m.segments.len(), m.log_end_offset), (1, 9));
        cleaner_checkpoint(&m, cleaner);
        let v = verify(&m);
        assert!(
            serious(&v.findings).is_empty(),
            "{cleaner}: {:#?}",
            v.findings
        );
        let p = &v.prediction;
        assert_eq!(
            (p.log_start_offset_after, p.log_end_offset_after),
            (Some(2), Some(9))
        );
        assert!(p.deleted_segments.is_empty() && p.truncation.is_none());
    }
    let ld = LogDirBuilder::new(1).log_start_offset("foo", 0, 10);
    let (_d, m) = write(ld, one_active_segment());
    let v = verify(&m);
    let found = of_kind(&v.findings, Kind::CheckpointInconsistent);
    assert_eq!(found.len(), 1, "{:#?}", v.findings);
    assert_eq!(
        v.prediction.deleted_segments.len(),
        1,
        "{:#?}",
        v.prediction
    );
}
