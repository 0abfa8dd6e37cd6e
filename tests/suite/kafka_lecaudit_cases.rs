//! `LeaderEpochFileCacheTest` (core/src/test/scala/unit/kafka/server/epoch/, apache/kafka trunk
//! of 2024-10; moved to storage/src/test/java/org/apache/kafka/storage/internals/epoch/ since,
//! where three methods were renamed), the methods no earlier test cited. Each test writes the
//! `leader-epoch-checkpoint` the Kafka test's cache would leave beside the batches whose
//! appends (or truncations) produced it, runs `verify` and `scan` through the library
//! (`request::verify`, `request::run`: what the CLI calls) and asserts klogscan's answer for
//! Kafka's case and for a near miss that flips it.
//!
//! What the tests hold klogscan to (storage/src/main/java/…/epoch/LeaderEpochFileCache.java,
//! …/log/LogLoader.java, core/src/main/scala/kafka/log/UnifiedLog.scala):
//! * the constructor reads the file and feeds each entry, in file order, to `assign`: an entry
//!   repeating the latest epoch from a later offset is skipped, any other first drops, from the
//!   newest down, every entry whose epoch or start is not below its own
//!   (`maybeTruncateNonMonotonicEntries`); a negative epoch or offset throws
//!   `IllegalArgumentException`;
//! * `assign` writes the file synchronously; `truncateFromEndAsyncFlush` and
//!   `truncateFromStartAsyncFlush` write it in the background, so a crash can leave the file
//!   from before a truncation — which `LogLoader.load` repeats: it cuts the cache at the
//!   recovered log end and at the checkpointed log start (`log-start-offset-checkpoint`, 0
//!   without an entry);
//! * `truncateFromEnd(o)` removes every entry starting at or after `o`; `truncateFromStart(o)`
//!   removes every entry starting at or before `o` and puts the newest of them back, starting
//!   at `o` (`UnifiedLog.maybeIncrementLogStartOffset`);
//! * `clearAndFlush` (a v0/v1 append, `UnifiedLog.truncateFullyAndStartAt`) writes a file with
//!   no entry;
//! * `endOffsetFor(epoch, logEnd)` answers a consumer's `OffsetsForLeaderEpoch`: the log end
//!   for the latest epoch, the next entry's start for an older one (floor epoch in a gap),
//!   undefined for `-1` and above every entry.
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is `#[ignore =
//! "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::common::quiet::loud;
use crate::kafka_consumer_validation_cases::write_epochs;
use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, LogDirBuilder, Manifest, PartitionBuilder, Producer};
use klogscan::verify::{BrokerVersion, VerifyReport};
use std::path::Path;
use tempfile::TempDir;

mod answers;
mod assign;
mod load;
mod truncation;

// ----- helpers ----------------------------------------------------------------------------

/// The topic of the checkpoint cases.
const TOPIC: &str = "lec";

/// `topic-0` from offset `start`: for each `(epoch, n)` one batch of `n` records at that leader
/// epoch, in order.
fn batches_of(topic: &str, start: i64, layout: &[(i32, usize)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, 0).start_offset(start);
    for &(epoch, n) in layout {
        p.set_leader_epoch(epoch);
        p.append(Batch::new(Producer::PLAIN).records(n));
    }
    p
}

/// `lec-0` (see [`batches_of`]).
fn batches(start: i64, layout: &[(i32, usize)]) -> PartitionBuilder {
    batches_of(TOPIC, start, layout)
}

/// A log dir written by [`write`]: kept alive with the partition's manifest.
struct Written {
    _dir: TempDir,
    m: Manifest,
}

impl Written {
    fn log_dir(&self) -> &Path {
        self.m.dir.parent().unwrap()
    }

    /// `verify` of the log dir for a broker of `version` (`None`: not known); no input error.
    fn verify_as(&self, version: Option<BrokerVersion>) -> VerifyReport {
        let v = request::verify(&Request::new([self.log_dir()]), version)
            .unwrap()
            .report;
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        v
    }

    fn verify(&self) -> VerifyReport {
        self.verify_as(None)
    }

    /// `scan` of the log dir; no input error.
    fn scan(&self) -> ScanReport {
        let r = request::run(&Request::new([self.log_dir()]))
            .unwrap()
            .report;
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        r
    }

    /// `verify`'s `leader_epoch_checkpoint_mismatch` findings, `severity: message` each.
    fn mismatches(&self) -> Vec<String> {
        let v = self.verify();
        of_kind(v.findings(), Kind::LeaderEpochCheckpointMismatch)
    }

    /// No `leader_epoch_checkpoint_mismatch`, and nothing at warning or above from `scan` or
    /// `verify`.
    fn assert_quiet(&self) {
        let v = self.verify();
        let (m, vl) = (
            of_kind(v.findings(), Kind::LeaderEpochCheckpointMismatch),
            loud(v.findings()),
        );
        let s = loud(&self.scan().findings);
        assert!(
            m.is_empty() && vl.is_empty() && s.is_empty(),
            "mismatch: {m:#?}\nverify: {vl:#?}\nscan: {s:#?}"
        );
    }

    /// One `leader_epoch_checkpoint_mismatch`, a warning whose message holds `needle`; and
    /// `scan` says nothing at warning or above (the file is `verify`'s to judge).
    fn assert_mismatch(&self, needle: &str) {
        let m = self.mismatches();
        assert_eq!(m.len(), 1, "{m:#?}");
        assert!(
            m[0].starts_with("Warning") && m[0].contains(needle),
            "{m:#?}"
        );
        let s = loud(&self.scan().findings);
        assert!(s.is_empty(), "scan: {s:#?}");
    }
}

/// `severity: message` of each finding of `kind`.
fn of_kind<'a>(fs: impl IntoIterator<Item = &'a Finding>, kind: Kind) -> Vec<String> {
    (fs.into_iter())
        .filter(|f| f.kind == kind)
        .map(|f| format!("{:?}: {}", f.severity, f.message))
        .collect()
}

/// Write `p` as broker 1's only partition in a log dir built by `ld`, its
/// `leader-epoch-checkpoint` replaced by `entries`.
fn write(ld: LogDirBuilder, p: PartitionBuilder, entries: &[(i32, i64)]) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let m = ld.partition(p).write(dir.path()).unwrap();
    let m = m.partitions.into_iter().next().unwrap();
    write_epochs(&m.dir, entries);
    Written { _dir: dir, m }
}

/// A log dir shut down cleanly (`.kafka_cleanshutdown`, the checkpoints at the log end).
fn clean() -> LogDirBuilder {
    LogDirBuilder::new(1)
}

/// A log dir after a crash: no `.kafka_cleanshutdown`, the recovery point at the log end (the
/// last flush reached it: the load recovers nothing).
fn crashed() -> LogDirBuilder {
    LogDirBuilder::new(1).clean_shutdown(false)
}
