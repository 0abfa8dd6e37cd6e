//! False alarms on what a Kafka Streams application leaves on the brokers: repartition
//! topics purged after every commit (`TaskManager.maybePurgeCommittedRecords` →
//! `Admin.deleteRecords`), exactly-once v2 transactions of one producer per stream thread
//! across outputs, repartition topics, changelogs and `__consumer_offsets`, compacted
//! changelogs after the cleaner, internal topic names, event-time record timestamps, and the
//! application's consumer group.
//!
//! `scan` (`request::run`, plain and `--deep`) and `verify` (`request::verify`) must report
//! nothing at warning or above, and `verify` must predict a clean start. Each healthy case
//! has a twin that differs by one fact and must be reported. Each case cites the Kafka or
//! Kafka Streams class and method that makes the shape healthy (apache/kafka trunk of
//! 2024-10, `streams/src/main/java/org/apache/kafka/streams/…` for Streams; the 2025-10 tree
//! where it says so). A case where klogscan raises a warning or an error on healthy data is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Modules: `purge` (repartition topics after `deleteRecords`), `eos` (exactly-once v2
//! transactions, a thread restarted under a new process id), `changelog` (compacted
//! changelogs after the cleaner, long internal names), `timestamps` (event time against the
//! broker's clock), `group` (the application's classic group with the Streams assignor's
//! user data).
#![cfg(feature = "testkit")]

use crate::common::quiet::scan_dir;
pub(crate) use crate::common::quiet::{lines, loud};
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, LogDirBuilder, LogDirManifest, Producer, Rec};
use klogscan::verify::VerifyReport;
use serde_json::{Value, json};
use std::path::Path;
use tempfile::TempDir;

mod changelog;
mod eos;
mod group;
mod purge;
mod timestamps;

pub(crate) const MIN: i64 = 60_000;
pub(crate) const DAY: i64 = 86_400_000;
pub(crate) const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;

/// The application (`application.id`, also the group id).
pub(crate) const APP: &str = "wordcount";
/// `<application.id>-<store name>-repartition` (`InternalTopologyBuilder.decorateTopic`).
pub(crate) const REPARTITION: &str =
    "wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
/// `<application.id>-<store name>-changelog` (`ProcessorStateManager.storeChangelogTopic`).
pub(crate) const CHANGELOG: &str = "wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
/// The application's output topic.
pub(crate) const OUTPUT: &str = "word-counts";

// ----- scanning -----------------------------------------------------------------------------

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Quiet {
    pub _dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

/// Write `ld` into a new temporary directory, then scan (plain and deep) and verify it.
pub(crate) fn write_and_check(ld: LogDirBuilder) -> Quiet {
    write_and_check_with(ld, |_| {})
}

/// [`write_and_check`], letting `extra` change files (what the broker did after the writes:
/// segments deleted below a log start, the leader-epoch checkpoint truncated) before the scans.
pub(crate) fn write_and_check_with(ld: LogDirBuilder, extra: impl FnOnce(&Path)) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    extra(dir.path());
    let scan = scan_dir(dir.path(), false);
    let deep = scan_dir(dir.path(), true);
    let verify = request::verify(&Request::new([dir.path()]), None)
        .unwrap()
        .report;
    assert!(verify.errors.is_empty(), "{:?}", verify.errors);
    Quiet {
        _dir: dir,
        manifest,
        scan,
        deep,
        verify,
    }
}

impl Quiet {
    /// Nothing at warning or above from `scan`, `scan --deep` or `verify`, and a clean start
    /// predicted for every partition.
    pub(crate) fn assert_quiet(&self) {
        let s = loud(&self.scan.findings);
        let d = loud(&self.deep.findings);
        let v = loud(self.verify.findings());
        assert!(
            s.is_empty() && d.is_empty() && v.is_empty(),
            "scan: {s:#?}\nscan --deep: {d:#?}\nverify: {v:#?}\n(all deep findings: {:#?})",
            lines(&self.deep.findings)
        );
        self.assert_clean_start();
    }

    /// `verify` predicts the start after a clean shutdown (`LogLoader.load` with
    /// `hadCleanShutdown`): nothing recovered, truncated or deleted, no load failure, the log
    /// end kept; the only leftovers allowed are producer snapshots below a moved log start,
    /// which `ProducerStateManager.truncateAndReload` deletes at the load.
    pub(crate) fn assert_clean_start(&self) {
        assert_eq!(self.verify.partitions.len(), self.manifest.partitions.len());
        for p in &self.verify.partitions {
            let pr = &p.prediction;
            let name = format!("{}-{}", p.topic, p.partition);
            assert_eq!(pr.clean_shutdown, Some(true), "{name}");
            assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
            assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
            assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
            assert!(
                (pr.leftovers.iter()).all(|l| l.kind == "snapshot_below_log_start"),
                "{name}: {:#?}",
                pr.leftovers
            );
            let m = (self.manifest.partitions.iter())
                .find(|m| m.topic == p.topic && m.partition == p.partition)
                .unwrap();
            assert_eq!(pr.log_end_offset_after, Some(m.log_end_offset), "{name}");
        }
    }

    /// The twin's finding: one `kind` at `severity` or above on `topic` in the plain scan.
    pub(crate) fn assert_reported(&self, kind: Kind, severity: Severity, topic: &str) -> &Finding {
        let hit = (self.scan.findings.iter())
            .find(|f| f.kind == kind && f.severity >= severity && f.topic == topic);
        hit.unwrap_or_else(|| {
            panic!(
                "no {kind} >= {} on {topic}: {:#?}",
                severity.as_str(),
                lines(&self.scan.findings)
            )
        })
    }
}

// ----- __consumer_offsets -------------------------------------------------------------------

/// One coordinator record: type, key JSON, value (`(version, JSON)`; `None`: a tombstone).
pub(crate) type CoordRecord = (i16, Value, Option<(i16, Value)>);

/// The `__consumer_offsets` partition of group `g` among the default 50
/// (`GroupMetadataManager.partitionFor`: `Utils.abs(groupId.hashCode) % 50`).
pub(crate) fn offsets_partition(g: &str) -> i32 {
    transaction_partition_for(g, 50)
}

/// A batch of coordinator records at `ts` from `p`, base sequence `seq` (-1 for
/// `storeGroup`, 0 for a transactional `storeOffsets`: the coordinator's
/// `MemoryRecords.withIdempotentRecords`/`withTransactionalRecords` with sequence 0).
pub(crate) fn coordinator_batch(p: Producer, ts: i64, recs: Vec<CoordRecord>) -> Batch {
    let seq = if p.id < 0 { -1 } else { 0 };
    let mut b = Batch::new(p).at(ts);
    for (t, k, v) in recs {
        let (k, v) = record(t, k, v);
        let r = match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        };
        b = b.record(r.at(ts));
    }
    b.tweak(move |s| s.base_sequence = seq)
}

/// `OffsetCommitValue` v3 of group `g` on `topic`-`partition`, with the leader epoch of the
/// record consumed last (`ConsumerCoordinator` commits `OffsetAndMetadata.leaderEpoch`).
pub(crate) fn commit(g: &str, tp: (&str, i32), offset: i64, epoch: i32, ts: i64) -> CoordRecord {
    let (topic, partition) = tp;
    (
        1,
        json!({"group": g, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": epoch, "metadata": "", "commitTimestamp": ts}),
        )),
    )
}
