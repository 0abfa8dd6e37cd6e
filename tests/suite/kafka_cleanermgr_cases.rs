//! `LogCleanerManagerTest` (core/src/test/scala/unit/kafka/log/LogCleanerManagerTest.scala,
//! apache/kafka trunk of 2024-10) and the `LogCleanerTest` methods about what cleaning leaves
//! on disk, the ones no earlier audit cited: the cleaner's `cleaner-offset-checkpoint`
//! against the log start and the log end, after a truncation, in a file the broker cannot
//! parse, per partition and per log dir (a move between log dirs), and the cleaned log
//! below the first uncleanable offset.
//!
//! What the tests hold klogscan to is `LogCleanerManager` (core/src/main/scala/kafka/log/):
//! * `cleanableOffsets` takes the checkpointed offset as the first dirty offset when it lies
//!   in `[log start, log end]`, and otherwise resets it to the log start (a warning in the
//!   broker's log when it was above the log end: "data corruption at the end of the log");
//!   `grabFilthiestCompactedLog` writes the reset back (`forceUpdateCheckpoint`);
//! * the cleaned range stops at the first uncleanable offset: the last stable offset, the
//!   active segment's base, the first segment within `min.compaction.lag.ms`; a pass writes
//!   that segment base to the checkpoint (`doneCleaning` → `updateCheckpoints`);
//! * `maybeTruncateCheckpoint` lowers the entry to the active segment's base when
//!   `LogManager.truncateTo` cuts below it;
//! * `updateCheckpoints` keeps the entries of every log the broker holds and drops the
//!   partition a deletion names; `alterCheckpointDir` moves the entry to the log dir a
//!   replica moved to;
//! * `allCleanerCheckpoints` reads every log dir's file through
//!   `CheckpointFileWithFailureHandler.read`: an `IOException` reports the log dir to
//!   `LogDirFailureChannel`, any other exception escapes to the cleaner thread.
//!
//! Each test writes the files the Kafka test's log would leave (the partition directories
//! and the log dir's checkpoints, the cleaner's written by hand as `OffsetCheckpointFile`
//! writes it), and runs `scan`, `verify` and the merge of the broker's `collect` bundle
//! through the library (`kafka_quiet_cluster_cases::Brokers::check`). Where klogscan
//! disagrees with Kafka the test asserts Kafka's answer and is
//! `#[ignore = "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines};
use klogscan::finding::{Finding, Kind};
use klogscan::results::ScanReport;
use klogscan::testkit::files::encode_offset_checkpoint;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

mod checkpoint;
mod cleaned;
mod dirs;

// ----- helpers ----------------------------------------------------------------------------

/// The record `LogCleanerManagerTest.appendRecords` writes at `offset`: key `key-<offset>`,
/// value `value-<offset>`.
fn keyed_record(offset: i64) -> Rec {
    Rec::kv(format!("key-{offset}"), format!("value-{offset}"))
}

/// A log shaped as `LogCleanerManagerTest.setupIncreasinglyFilthyLogs` writes it
/// (`writeRecords` with one record a batch, five batches a segment): `batches` batches of
/// one keyed record, a roll after the first and then after every fifth, so the segments
/// start at 0, 1, 6, 11, …; the batch at offset `txn_at` is producer 7's transactional one,
/// left open.
fn filthy(topic: &str, partition: i32, batches: i64, txn_at: Option<i64>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition);
    for i in 0..batches {
        let o = p.next_offset();
        let b = if Some(o) == txn_at {
            Batch::new(Producer::transactional(7, 0)).sequence(0)
        } else {
            Batch::new(Producer::PLAIN)
        };
        p.append(b.record(keyed_record(o)));
        if i % 5 == 0 {
            p.roll();
        }
    }
    p
}

/// The empty active segment `writeRecords`' last roll leaves at `base` (its indexes trimmed
/// to nothing at a clean close; the producer snapshot at its base is the testkit's, written
/// at the log end).
fn empty_active_segment(log_dir: &Path, topic: &str, partition: i32, base: i64) {
    let dir = log_dir.join(format!("{topic}-{partition}"));
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(dir.join(format!("{base:020}.{ext}")), b"").unwrap();
    }
}

/// Write `cleaner-offset-checkpoint` of `log_dir` as `OffsetCheckpointFile.write` does.
fn cleaner_checkpoint(log_dir: &Path, entries: &[(&str, i32, i64)]) {
    let entries: Vec<(String, i32, i64)> = (entries.iter())
        .map(|(t, p, o)| (t.to_string(), *p, *o))
        .collect();
    std::fs::write(
        log_dir.join("cleaner-offset-checkpoint"),
        encode_offset_checkpoint(&entries),
    )
    .unwrap();
}

/// Broker 1 with the one log dir `data` written from `ld`, its cleaner checkpoint holding
/// `cleaned` (none written when `None`).
fn one_broker(ld: LogDirBuilder, cleaned: Option<&[(&str, i32, i64)]>) -> (Brokers, PathBuf) {
    let mut b = Brokers::new();
    let dir = b.write(1, "data", ld, None);
    if let Some(entries) = cleaned {
        cleaner_checkpoint(&dir, entries);
    }
    (b, dir)
}

/// `verify`'s findings of `kind`.
fn verified(v: &Verdict, kind: Kind) -> Vec<&Finding> {
    v.verify.findings().filter(|f| f.kind == kind).collect()
}

/// `verify`'s `checkpoint_inconsistent` findings about the cleaner's checkpoint.
fn cleaner_findings(v: &Verdict) -> Vec<&Finding> {
    (verified(v, Kind::CheckpointInconsistent).into_iter())
        .filter(|f| f.message.contains("cleaner-offset-checkpoint"))
        .collect()
}

/// `(compacted, compacted_from)` of `topic`-`partition`'s copies in `r`, in report order.
fn compaction(r: &ScanReport, topic: &str, partition: i32) -> Vec<(Option<bool>, Option<String>)> {
    (r.partitions.iter())
        .filter(|p| p.topic == topic && p.partition == partition)
        .map(|p| (p.compacted, p.compacted_from.clone()))
        .collect()
}

/// The partition known compacted from its log dir's cleaner checkpoint, in the scan and in
/// the merge of the broker's bundle.
fn assert_compacted_by_checkpoint(v: &Verdict, topic: &str, partition: i32) {
    let want = (Some(true), Some("cleaner-offset-checkpoint".to_string()));
    for (what, r) in [("scan", &v.scan), ("merge", &v.merge)] {
        let got = compaction(r, topic, partition);
        assert!(
            !got.is_empty() && got.iter().all(|c| *c == want),
            "{what}: {topic}-{partition}: {got:?}"
        );
    }
}

/// Nothing at warning or above from `scan`, `verify` or the merge.
fn assert_no_alarm(v: &Verdict) {
    v.assert_no_alarm();
}
