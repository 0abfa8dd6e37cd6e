//! The log layer's Kafka tests added, or whose assertions changed, between the 2024-10 trunk
//! (apache/kafka) and the 2026-08 trunk (confluentinc/kafka, Apache trunk with Confluent's
//! merges), for the methods no earlier klogscan test cited. The cases come from
//! `LogSegmentTest` (KAFKA-806), `TransactionIndexTest` (KAFKA-19562) and the cleaner's
//! integration tests restored with KAFKA-13093 (`LogCleanerParameterizedIntegrationTest`);
//! the other new or changed methods of `UnifiedLogTest`, `LogLoaderTest`, `LogSegmentsTest`,
//! `LocalLogTest`, `LogCleanerTest`, `LogCleanerManagerTest`, `ProducerStateManagerTest`,
//! `OffsetIndexTest`, `TimeIndexTest`, `LogValidatorTest`, `LeaderEpochFileCacheTest` and
//! `LogManagerTest` leave no bytes of their own, are API changes, or are covered by an
//! earlier case (docs/testing.md's table says which).
//!
//! Each test writes the partition directory the Kafka test's log leaves, runs `scan` and
//! `verify` through the library (`request::run`, `request::verify`: what the CLI calls) and
//! asserts what the next start's `LogLoader` and the readers of those files do, with a near
//! miss that flips the answer. What the tests hold klogscan to:
//! * since KAFKA-806 (4.0) `LogSegment.append` walks the batches of one append and adds an
//!   offset-index entry (the batch's last offset at its own position) and a time-index entry
//!   (the segment's max timestamp so far and the last offset of the batch holding it)
//!   whenever more than `index.interval.bytes` were written since the last entry — the shape
//!   `LogSegment.recover` rebuilds; before, one append (a follower's fetch of many batches)
//!   got at most one entry, the append's largest offset at the append's first position;
//! * since KAFKA-13093 (4.0) the cleaner writes every legacy (magic 0/1) batch it keeps as
//!   a v2 batch (`MemoryRecords.filterTo` → `buildRetainedRecordsInto`): a magic-0 message
//!   becomes a single-record batch at its own offset, CreateTime, timestamp −1, no
//!   producer, partition leader epoch −1; `LogSegment.recover` assigns no epoch for a
//!   negative one and the time index takes no entry for a timestamp of −1;
//! * since KAFKA-19562 (4.4) `TransactionIndex` reads an entry's version as its whole int16
//!   and loads version 0 alone; before, the hand-written `AbortedTxn.version()` read the
//!   first byte (`00 01` and `ff 00` loaded). Any other version throws a `KafkaException`
//!   that `LogLoader.loadSegmentFiles` does not catch: the log does not load.
//!
//! Where klogscan disagrees with Kafka the test asserts Kafka's answer and is `#[ignore =
//! "divergence: …"]`.
#![cfg(feature = "testkit")]

use crate::common::quiet::{lines, loud, scan_dir, verify_dir};
use klogscan::finding::{Finding, Kind};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, LogDirManifest};
use klogscan::verify::{BrokerVersion, VerifyReport};
use std::path::PathBuf;
use tempfile::TempDir;

mod cleaner_v2;
mod index806;
mod txnindex;

// ----- helpers ----------------------------------------------------------------------------

/// A log dir written by the testkit, kept with what it wrote.
pub(crate) struct Written {
    _t: TempDir,
    pub(crate) root: PathBuf,
    pub(crate) m: LogDirManifest,
}

impl Written {
    pub(crate) fn new(ld: LogDirBuilder) -> Written {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("data");
        let m = ld.write(&root).unwrap();
        Written { _t: t, root, m }
    }

    pub(crate) fn scan(&self) -> ScanReport {
        scan_dir(&self.root, false)
    }

    pub(crate) fn verify(&self) -> VerifyReport {
        verify_dir(&self.root)
    }

    /// `verify --broker-version v`.
    pub(crate) fn verify_as(&self, v: BrokerVersion) -> VerifyReport {
        let r = request::verify(&Request::new([&self.root]), Some(v)).unwrap();
        assert!(r.report.errors.is_empty(), "{:?}", r.report.errors);
        r.report
    }

    /// The partition directory of the first partition written.
    pub(crate) fn pdir(&self) -> PathBuf {
        self.m.partitions[0].dir.clone()
    }
}

/// `kind`'s findings among `fs`.
pub(crate) fn of_kind<'a>(
    fs: impl IntoIterator<Item = &'a Finding>,
    kind: Kind,
) -> Vec<&'a Finding> {
    fs.into_iter().filter(|f| f.kind == kind).collect()
}

/// Nothing at warning or above from `scan` and `verify`.
pub(crate) fn assert_quiet(w: &Written) -> (ScanReport, VerifyReport) {
    let (s, v) = (w.scan(), w.verify());
    let (sl, vl) = (loud(&s.findings), loud(v.findings()));
    assert!(
        sl.is_empty() && vl.is_empty(),
        "scan: {sl:#?}\nverify: {vl:#?}"
    );
    (s, v)
}

/// Every finding of `scan` and `verify`, one line each (for failure messages).
pub(crate) fn all(s: &ScanReport, v: &VerifyReport) -> String {
    format!(
        "scan: {:#?}\nverify: {:#?}",
        lines(&s.findings),
        lines(v.findings())
    )
}
