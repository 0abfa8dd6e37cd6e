//! False alarms after an ordinary broker crash (kill -9, power loss, OOM kill) that left
//! healthy data: no `.kafka_cleanshutdown`, the log dir's checkpoints a few seconds stale,
//! the active segment's offset and time indexes still preallocated (never trimmed), the
//! active segment itself preallocated (`log.preallocate=true`), a last batch cut by the
//! crash, producer snapshots only up to the last roll, leftovers of an interrupted cleaner,
//! retention or checkpoint write, a `-delete` directory. `verify` must predict what
//! `LogLoader.load` does with it (apache/kafka trunk of 2024-10:
//! storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java, `recoverLog`:
//! every segment from the one holding the recovery point; `LogSegment.recover`: indexes
//! reset and rebuilt, truncation at the first batch that does not read whole), and neither
//! `scan` nor `verify` may raise a warning or an error about the healthy records.
//!
//! The clean-shutdown counterpart is `kafka_valid_data_quiet_cases` (whose helpers are
//! used here). Where klogscan raises more than Kafka's behaviour justifies, the test is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
#![cfg(feature = "testkit")]

use crate::kafka_valid_data_quiet_cases::{check_dir, lines, loud};
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, LogDirBuilder, LogDirManifest, Manifest, PartitionBuilder, PartitionFileOptions,
    Producer,
};
use klogscan::verify::{PartitionVerification, VerifyReport};
use std::path::Path;
use tempfile::TempDir;

mod leftovers;
mod tails;

/// `log.index.size.max.bytes` (`segment.index.bytes`) by default: the length
/// `AbstractIndex` gives a new offset index (10 MiB, a multiple of 8).
pub(crate) const OFFSET_INDEX_BYTES: u64 = 10 * 1024 * 1024;
/// The same for a time index: 10 MiB rounded down to a multiple of 12
/// (`AbstractIndex.roundDownToExactMultiple`).
pub(crate) const TIME_INDEX_BYTES: u64 = OFFSET_INDEX_BYTES / 12 * 12;
/// `index.interval.bytes` used by these logs (an entry every few batches).
pub(crate) const INTERVAL: u64 = 300;

// ----- helpers ----------------------------------------------------------------------------

pub(crate) fn seg(base: i64) -> String {
    format!("{base:020}.log")
}

pub(crate) fn file(base: i64, ext: &str) -> String {
    format!("{base:020}.{ext}")
}

/// The writes of one partition over three or four segments of about 1400 bytes: an idempotent
/// producer, plain batches and two committed transactions, in leader epochs 3 then 4.
pub(crate) fn busy_log(topic: &str) -> PartitionBuilder {
    let idem = Producer::idempotent(31, 0);
    let txn = Producer::transactional(32, 1);
    let mut p = PartitionBuilder::new(topic, 0)
        .segment_bytes(1400)
        .leader_epoch(3)
        .broker_files(PartitionFileOptions::default().index_interval(INTERVAL));
    for i in 0..36 {
        if i == 20 {
            p.set_leader_epoch(4);
        }
        match i % 6 {
            2 => {
                p.append(Batch::new(txn).records(2));
            }
            3 => {
                p.commit(txn, 7);
            }
            0 | 4 => {
                p.append(Batch::new(Producer::PLAIN).records(2));
            }
            _ => {
                p.append(Batch::new(idem).records(3));
            }
        }
    }
    p
}

/// Rewrite the files of `m`'s last segment and snapshots as a crash leaves them: the
/// producer snapshot at the log end is gone (`UnifiedLog.roll` takes one at each new
/// segment's base; only `LogManager.shutdown` → `UnifiedLog.close` takes one at the log
/// end), and the active segment's `.index` and `.timeindex` hold the entries
/// `LogSegment.append` adds (one each time more than `index.interval.bytes` were appended
/// since the last; no final time-index entry, which only `onBecomeInactiveSegment` adds)
/// followed by zeros up to the preallocated length (`AbstractIndex`: a new index is set to
/// `maxIndexSize`; only `trimToValidSize`, at a roll or a close, shortens it).
/// `whole_to`: only the batches ending at or before that byte position count (a crash
/// that cut the last append left no index entry for it).
pub(crate) fn crash_files(m: &Manifest, whole_to: u64) {
    let (base, _) = *m.segments.last().unwrap();
    if base != m.log_end_offset {
        let _ = std::fs::remove_file(m.dir.join(file(m.log_end_offset, "snapshot")));
    }
    let (mut idx, mut tidx) = (Vec::new(), Vec::new());
    let (mut since, mut max_ts, mut max_off, mut last_ts) = (0u64, -1i64, base, -1i64);
    let whole = |b: &&klogscan::testkit::BatchInfo| b.position + b.size <= whole_to;
    for b in m
        .batches
        .iter()
        .filter(|b| b.segment_base == base)
        .filter(whole)
    {
        if b.max_timestamp > max_ts {
            (max_ts, max_off) = (b.max_timestamp, b.last_offset);
        }
        if since > INTERVAL {
            idx.extend_from_slice(&((b.last_offset - base) as i32).to_be_bytes());
            idx.extend_from_slice(&(b.position as i32).to_be_bytes());
            if max_ts > last_ts {
                tidx.extend_from_slice(&max_ts.to_be_bytes());
                tidx.extend_from_slice(&((max_off - base) as i32).to_be_bytes());
                last_ts = max_ts;
            }
            since = 0;
        }
        since += b.size;
    }
    idx.resize(OFFSET_INDEX_BYTES as usize, 0);
    tidx.resize(TIME_INDEX_BYTES as usize, 0);
    std::fs::write(m.dir.join(file(base, "index")), idx).unwrap();
    std::fs::write(m.dir.join(file(base, "timeindex")), tidx).unwrap();
}

/// Grow (or cut) `path` to `len` bytes: zeros past its end, as `RandomAccessFile.setLength`
/// leaves them (`FileRecords.openChannel` with `preallocate`).
pub(crate) fn set_len(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

/// A crashed log dir and what `scan` and `verify` say of it.
pub(crate) struct Crashed {
    /// Holds the files for as long as the case runs.
    pub _dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` (which must say `clean_shutdown(false)`), apply [`crash_files`] to every
/// partition, let `extra` change what a particular crash leaves, then scan and verify.
pub(crate) fn crash(ld: LogDirBuilder, extra: impl FnOnce(&Path, &LogDirManifest)) -> Crashed {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    assert!(!dir.path().join(".kafka_cleanshutdown").exists());
    for m in &manifest.partitions {
        crash_files(m, u64::MAX);
    }
    extra(dir.path(), &manifest);
    let (scan, verify) = check_dir(dir.path());
    Crashed {
        _dir: dir,
        manifest,
        scan,
        verify,
    }
}

impl Crashed {
    /// Nothing at warning or above from `scan` or `verify`.
    pub(crate) fn assert_quiet(&self) {
        let s = loud(&self.scan.findings);
        let v = loud(self.verify.findings());
        assert!(
            s.is_empty() && v.is_empty(),
            "scan: {s:#?}\nverify: {v:#?}\n(all verify findings: {:#?})",
            lines(self.verify.findings())
        );
    }

    pub(crate) fn part(&self, topic: &str) -> &PartitionVerification {
        (self.verify.partitions.iter())
            .find(|p| p.topic == topic)
            .unwrap()
    }

    pub(crate) fn manifest_of(&self, topic: &str) -> &Manifest {
        (self.manifest.partitions.iter())
            .find(|m| m.topic == topic)
            .unwrap()
    }
}

/// The segments `recoverLog` recovers after an unclean shutdown: every one from the one
/// holding `point` (`LogSegments.values(recoveryPoint, MAX)` starts at its floor).
pub(crate) fn from_floor(m: &Manifest, point: i64) -> Vec<String> {
    let bases: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
    let floor = bases.iter().rposition(|&b| b <= point).unwrap_or(0);
    bases[floor..].iter().map(|&b| seg(b)).collect()
}

/// The segments recovered, each once, in order.
pub(crate) fn recovered(v: &PartitionVerification) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &v.prediction.recovered_segments {
        if !out.contains(&s.segment) {
            out.push(s.segment.clone());
        }
    }
    out
}

/// The load keeps the whole log: no truncation, no segment deleted, no failure, nothing
/// unknown, no damage left unrecovered; the log ends at `leo` and the recovery point is the
/// checkpointed one (`recoverLog`: `min(recoveryPoint, logEnd)` after an unclean shutdown).
pub(crate) fn assert_kept_whole(v: &PartitionVerification, leo: i64, point: i64) {
    let p = &v.prediction;
    assert_eq!(p.clean_shutdown, Some(false));
    assert!(p.truncation.is_none(), "{:#?}", p.truncation);
    assert!(p.deleted_segments.is_empty(), "{:?}", p.deleted_segments);
    assert!(p.load_failure.is_none(), "{:#?}", p.load_failure);
    assert!(p.outcome_unknown.is_none(), "{:?}", p.outcome_unknown);
    assert!(p.unrecovered_corruption.is_empty(), "{p:#?}");
    assert_eq!(p.log_end_offset_after, Some(leo));
    assert_eq!(p.recovery_point_after, Some(point.min(leo)));
}

// ----- the ordinary crash --------------------------------------------------------------------

/// `LogLoaderTest.testLogRecoveryIsCalledUponBrokerCrash` (no clean-shutdown file: the
/// load runs with `hadCleanShutdown = false`) and `testLogRecoversToCorrectOffset` (the
/// recovery point at the log end recovers only the last segment), on the files a crash a
/// few seconds after the last append leaves: the recovery-point checkpoint
/// (`log.flush.offset.checkpoint.interval.ms`, 60 s) and the high-watermark checkpoint
/// (`replica.high.watermark.checkpoint.interval.ms`, 5 s) behind the log end but inside the
/// active segment, the active segment's indexes preallocated with their zero tail, no
/// producer snapshot at the log end. `LogSegment.sanityCheck` does not look at the
/// offset or time index (since 2.3), `recoverLog` recovers the active segment only, whose
/// `LogSegment.recover` resets and rebuilds both indexes (`LogSegmentTest.
/// testRecoveryFixesCorruptIndex`, `testRecoveryFixesCorruptTimeIndex`) and takes a
/// producer snapshot at the log end (`LogLoader.recoverSegment`); the log is kept whole.
/// Nothing here is at warning or above.
#[test]
fn kill_nine_a_few_seconds_after_the_last_append() {
    let p = busy_log("orders");
    let leo = p.log_end_offset();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, leo - 5)
        .high_watermark("orders", 0, leo - 3)
        .partition(p);
    let c = crash(ld, |_, _| {});
    let m = c.manifest_of("orders");
    assert!(m.segments.len() >= 3, "{:?}", m.segments);
    let active = m.segments.last().unwrap().0;
    assert!(
        leo - 5 > active,
        "the recovery point lies in the active segment"
    );
    let idx = std::fs::read(m.dir.join(file(active, "index"))).unwrap();
    assert!(idx.len() as u64 == OFFSET_INDEX_BYTES && idx[..8] != [0; 8]);
    c.assert_quiet();
    let v = c.part("orders");
    assert_eq!(recovered(v), vec![seg(active)]);
    assert_kept_whole(v, leo, leo - 5);
    let ps = &v.prediction.producer_state;
    assert_eq!(ps.snapshot_offset, Some(leo));
    assert!(ps.snapshot_written_at_load, "{ps:#?}");
    assert_eq!((ps.producers, ps.open_transactions), (Some(2), Some(0)));
}

/// The recovery-point checkpoint is older than the last roll (the roll's flush of the old
/// segment runs asynchronously, `UnifiedLog.roll` → `flushUptoOffsetExclusive` scheduled,
/// and the checkpoint after it had not been written yet): `recoverLog` recovers every
/// segment from the one holding the recovery point, here the last two, each rebuilt from
/// the roll snapshot below it (`LogLoader.recoverSegment` → `rebuildProducerState`). The
/// log start was moved into the first segment by `DeleteRecords` (an entry in
/// `log-start-offset-checkpoint`), and the `leader-epoch-checkpoint` still begins below
/// it: `LeaderEpochFileCache.truncateFromStartAsyncFlush` had not flushed, which
/// `LogLoader.load` makes good ("the earliest leader epoch may not be flushed during a
/// hard failure"). Quiet; the log kept whole from the checkpointed log start.
#[test]
fn recovery_point_behind_the_last_roll_and_an_unflushed_epoch_truncation() {
    let p = busy_log("orders");
    let leo = p.log_end_offset();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(false)
        .partition(p)
        .recovery_point("orders", 0, 40)
        .high_watermark("orders", 0, leo - 2)
        .log_start_offset("orders", 0, 6);
    let c = crash(ld, |_, m| {
        let lec = std::fs::read_to_string(m.partitions[0].dir.join("leader-epoch-checkpoint"));
        assert!(lec.unwrap().starts_with("0\n2\n3 0\n"));
    });
    let m = c.manifest_of("orders");
    let recover = from_floor(m, 40);
    assert_eq!(recover.len(), 2, "{recover:?}");
    c.assert_quiet();
    let v = c.part("orders");
    assert_eq!(recovered(v), recover);
    assert_kept_whole(v, leo, 40);
    assert_eq!(v.prediction.log_start_offset_after, Some(6));
}
