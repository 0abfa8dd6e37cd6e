//! The broker's checkpoint files and what a log dir's failure to read them does at the next
//! start, for the Kafka tests no earlier klogscan test cited (apache/kafka trunk of 2024-10):
//! `CleanShutdownFileHandlerTest` (storage/src/test/java/…/checkpoint/), the checkpoint and
//! load methods of `LogManagerTest` (core/src/test/scala/unit/kafka/log/), `LogDirFailureTest`
//! (core/src/test/scala/unit/kafka/server/) and the read paths of `CheckpointFile`,
//! `CheckpointFileWithFailureHandler`, `OffsetCheckpointFile` and `LeaderEpochCheckpointFile`
//! that `LogManager.loadLogs`, `LogManager.loadLog`, `UnifiedLog.apply` and `LogLoader.load`
//! take. (Kafka names no `CheckpointFileTest` nor `OffsetCheckpointFileTest` since 3.3: they
//! became the `…WithFailureHandlerTest`s, whose methods `kafka_small_file_cases` cites.)
//!
//! Each test writes the log dir the Kafka test's broker leaves (or the file its reader is
//! given), runs `verify` and `scan` through the library (`request::verify`, `request::run`:
//! what the CLI calls) and asserts what the broker does at its next start, with a near miss
//! that flips the answer. What the tests hold klogscan to:
//! * `LogManager.loadLogs` reads `recovery-point-offset-checkpoint` and
//!   `log-start-offset-checkpoint` once per log dir and catches any exception of the read
//!   (recovery point 0, each first segment's base); `CheckpointFileWithFailureHandler.read`
//!   has reported an `IOException` to `LogDirFailureChannel` before, so the log dir goes
//!   offline once the broker runs;
//! * `LogManager.loadLog` looks its own partition up (`getOrDefault(tp, 0)`): entries of
//!   partitions the log dir does not hold are never read, and of two entries of one partition
//!   the later wins (`OffsetCheckpointFile.read` fills a `HashMap`);
//! * `CheckpointFile`'s constructor creates a missing file empty, and an empty file is no
//!   entry; the version and count lines are `Integer.parseInt` of the whole line (no trim),
//!   an entry is split on `\s+` (trailing whitespace dropped, leading whitespace an empty
//!   first field);
//! * the leader-epoch-checkpoint is read by `UnifiedLog.apply` (the `LeaderEpochFileCache`
//!   constructor, through `CheckpointFileWithFailureHandler.read`): an `IOException` is
//!   reported to `LogDirFailureChannel` and thrown as a `KafkaStorageException`, which
//!   `LogManager.loadLogs` skips since 3.2.1 (KAFKA-13773) and rethrows before — the broker
//!   then does not start; any other exception is rethrown by every version;
//! * `.kafka_cleanshutdown` decides a clean shutdown by its existence alone
//!   (`CleanShutdownFileHandler.exists`); its content is read only for the broker epoch a
//!   KRaft broker registers with (`CleanShutdownFileHandler.read`, any failure an empty
//!   epoch).
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is `#[ignore =
//! "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::common::quiet::loud;
use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, PartitionVerification, VerifyReport};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod clean_shutdown;
mod epoch_file;
mod offsets;
mod paths;

// ----- helpers ----------------------------------------------------------------------------

/// The topic of the cases.
const TOPIC: &str = "ck";

/// `topic-partition`: `segments` segments of `per` one-record batches each, at leader epoch
/// 0, the segments rolled between them.
pub(crate) fn log_of(topic: &str, partition: i32, segments: usize, per: usize) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition);
    for s in 0..segments {
        if s > 0 {
            p.roll();
        }
        for _ in 0..per {
            p.append(Batch::new(Producer::PLAIN).records(1));
        }
    }
    p
}

/// A log dir written to a temporary directory: kept alive with its path.
pub(crate) struct Dir {
    _t: TempDir,
    pub(crate) root: PathBuf,
}

impl Dir {
    /// Write `ld` (broker 1's log dir).
    pub(crate) fn write(ld: LogDirBuilder) -> Dir {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("data");
        ld.write(&root).unwrap();
        Dir { _t: t, root }
    }

    /// Replace the log dir's `file` with `text`.
    pub(crate) fn put(&self, file: &str, text: &str) {
        std::fs::write(self.root.join(file), text).unwrap();
    }

    /// `verify` of `path` for a broker of `version` (`None`: not known); no input error.
    pub(crate) fn verify_path(path: &Path, version: Option<BrokerVersion>) -> VerifyReport {
        let v = request::verify(&Request::new([path]), version)
            .unwrap()
            .report;
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        v
    }

    pub(crate) fn verify_as(&self, version: Option<BrokerVersion>) -> VerifyReport {
        Dir::verify_path(&self.root, version)
    }

    pub(crate) fn verify(&self) -> VerifyReport {
        self.verify_as(None)
    }

    /// `scan` of the log dir; no input error.
    pub(crate) fn scan(&self) -> ScanReport {
        let r = request::run(&Request::new([&self.root])).unwrap().report;
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        r
    }
}

/// The verification of `topic-partition` in `v`.
pub(crate) fn part<'a>(
    v: &'a VerifyReport,
    topic: &str,
    partition: i32,
) -> &'a PartitionVerification {
    (v.partitions.iter())
        .find(|p| p.topic == topic && p.partition == partition)
        .unwrap_or_else(|| panic!("no {topic}-{partition}: {:#?}", v.partitions))
}

/// The segments `verify` predicts the load recovers in `p`, by base offset.
pub(crate) fn recovered(p: &PartitionVerification) -> Vec<i64> {
    (p.prediction.recovered_segments.iter())
        .map(|s| s.segment.trim_end_matches(".log").parse().unwrap())
        .collect()
}

/// The log dir's findings about `file` (`partition` -1, `segment` the file's name).
pub(crate) fn about<'a>(v: &'a VerifyReport, file: &str) -> Vec<&'a Finding> {
    (v.findings())
        .filter(|f| f.partition == -1 && f.segment.as_deref() == Some(file))
        .collect()
}

/// Nothing at warning or above from `verify` or `scan`.
pub(crate) fn assert_quiet(d: &Dir, v: &VerifyReport) {
    let (vl, sl) = (loud(v.findings()), loud(&d.scan().findings));
    assert!(
        vl.is_empty() && sl.is_empty(),
        "verify: {vl:#?}\nscan: {sl:#?}"
    );
}

/// `kind`'s findings of `v`.
pub(crate) fn of_kind(v: &VerifyReport, kind: Kind) -> Vec<&Finding> {
    v.findings().filter(|f| f.kind == kind).collect()
}
