//! False alarms on healthy tiered-storage (KIP-405) clusters: the files a broker with
//! remote storage leaves over a partition's life — local segments above the log start once
//! `local.retention.*` removed what was uploaded, `log-start-offset-checkpoint` below the
//! local log start, `leader-epoch-checkpoint`s whose early epochs are only remote, the
//! `__remote_log_metadata` records of the copy and expiration tasks, the objects of Kafka's
//! `LocalTieredStorage` (storage/src/test/java/org/apache/kafka/server/log/remote/storage/
//! LocalTieredStorage.java, the layout `--remote-storage` reads) — must draw nothing at
//! warning or above from `scan`, `scan --remote-storage DIR`, `verify` or
//! `verify --remote-storage DIR`. Each healthy case has a twin that differs by the one fact
//! that makes it wrong, and that twin must be reported with the kind Kafka's behaviour
//! implies.
//!
//! Kafka's classes and tests are cited from apache/kafka trunk of 2024-10 (core/src/main/java/
//! kafka/log/remote/RemoteLogManager.java and its `RemoteLogManagerTest`; storage/src/main/
//! java/org/apache/kafka/server/log/remote/metadata/storage/: `RemoteLogMetadataCache`,
//! `RemoteLogLeaderEpochState`, `TopicBasedRemoteLogMetadataManager`, and their tests
//! `RemoteLogMetadataCacheTest`, `RemoteLogSegmentLifecycleTest`,
//! `TopicBasedRemoteLogMetadataManagerTest`; core/src/test/scala/unit/kafka/log/
//! UnifiedLogTest.scala's remote-storage cases; `TierStateMachine.buildRemoteLogAuxState`).
//! A test marked `#[ignore = "divergence: …"]` asserts Kafka's answer where klogscan gives
//! another, and fails when run with `--ignored`.
//!
//! Shapes the testkit cannot express: a producer snapshot with content uploaded next to a
//! segment (`TieredLog` writes an empty `.snapshot` object; klogscan replays the remote
//! segments from the log start, so it does not read it), and the follower's remote-built
//! producer snapshot (`buildProducerSnapshotFile`) other than as the roll snapshot the
//! testkit keeps at the local log start.
#![cfg(feature = "testkit")]

pub(crate) use crate::common::quiet::lines;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use klogscan::verify::VerifyReport;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

mod disable;
mod leadership;
mod lifecycle;
mod txns;

// ----- helpers ----------------------------------------------------------------------------

/// `orders-0` of `brokers::tiered_history()`: five segments of 20 offsets, [0,19] and
/// [20,39] in epoch 0, [40,59] epoch 1, [60,79] epoch 1 then 2 from 70, [80,99] epoch 2
/// (the active one); lineage (0,0) (1,40) (2,70).
pub(crate) fn history() -> TieredLog {
    TieredLog::new(klogscan::testkit::brokers::tiered_history())
}

/// Two days after the histories begin: long past any transaction timeout.
pub(crate) fn now_ms() -> i64 {
    klogscan::testkit::scenario::DEFAULT_START_MS + 2 * 86_400_000
}

/// The cluster's files (one or more brokers' log dirs and the shared `remote/` root) and
/// what the four commands say of them.
pub(crate) struct Checked {
    pub _dir: TempDir,
    /// What each `TieredLog` wrote, in order.
    pub written: Vec<TieredManifest>,
    pub scan: ScanReport,
    pub remote: ScanReport,
    pub verify: VerifyReport,
    pub verify_remote: VerifyReport,
}

fn options(remote: Option<PathBuf>) -> ScanOptions {
    ScanOptions::default()
        .with_now_ms(now_ms())
        .with_remote_storage(remote)
}

/// Write every log of `logs` under one temporary directory (each its broker's
/// `broker-<id>/`, all sharing `remote/`), let `extra` change files, then run `scan`,
/// `scan --remote-storage`, `verify` and `verify --remote-storage` over the whole
/// directory, as the CLI does.
pub(crate) fn check(logs: Vec<TieredLog>, extra: impl FnOnce(&Path)) -> Checked {
    let dir = tempfile::tempdir().unwrap();
    let written: Vec<TieredManifest> = logs
        .into_iter()
        .map(|t| t.write(dir.path()).unwrap())
        .collect();
    extra(dir.path());
    check_written(dir, written)
}

/// The four runs of [`check`] over `dir`, whose logs (`written`) are already on disk (and
/// its remote storage at `remote/`, in either layout).
pub(crate) fn check_written(dir: TempDir, written: Vec<TieredManifest>) -> Checked {
    let root = dir.path().join("remote");
    let req = |remote: bool| {
        Request::new([dir.path()]).with_options(options(remote.then(|| root.clone())))
    };
    let scan = request::run(&req(false)).unwrap().report;
    let remote = request::run(&req(true)).unwrap().report;
    let verify = request::verify(&req(false), None).unwrap().report;
    let verify_remote = request::verify(&req(true), None).unwrap().report;
    for errs in [
        &scan.errors,
        &remote.errors,
        &verify.errors,
        &verify_remote.errors,
    ] {
        assert!(errs.is_empty(), "{errs:?}");
    }
    Checked {
        _dir: dir,
        written,
        scan,
        remote,
        verify,
        verify_remote,
    }
}

impl Checked {
    /// Every finding of the four runs, labelled by the run.
    pub(crate) fn all(&self) -> Vec<(&'static str, &Finding)> {
        let mut v: Vec<(&'static str, &Finding)> = Vec::new();
        v.extend(self.scan.findings.iter().map(|f| ("scan", f)));
        v.extend(
            self.remote
                .findings
                .iter()
                .map(|f| ("scan --remote-storage", f)),
        );
        v.extend(self.verify.findings().map(|f| ("verify", f)));
        let vr = self.verify_remote.findings();
        v.extend(vr.map(|f| ("verify --remote-storage", f)));
        v
    }

    /// Nothing at warning or above from any of the four runs.
    pub(crate) fn assert_quiet(&self) {
        let loud: Vec<String> = self
            .all()
            .into_iter()
            .filter(|(_, f)| f.severity >= Severity::Warning)
            .map(|(run, f)| format!("[{run}] {}", lines([f])[0]))
            .collect();
        assert!(
            loud.is_empty(),
            "{loud:#?}\n(all scan --remote-storage findings: {:#?})",
            lines(&self.remote.findings)
        );
    }

    /// The findings of `kind` in `scan` (metadata only) and `scan --remote-storage`.
    pub(crate) fn of(&self, kind: Kind) -> (Vec<&Finding>, Vec<&Finding>) {
        (
            self.scan
                .findings
                .iter()
                .filter(|f| f.kind == kind)
                .collect(),
            self.remote
                .findings
                .iter()
                .filter(|f| f.kind == kind)
                .collect(),
        )
    }

    /// Exactly one finding of `kind` at `offset` on broker `broker`'s `topic` in both scans
    /// and in `verify`, at `severity`: returns the plain scan's.
    pub(crate) fn reported(
        &self,
        kind: Kind,
        broker: i32,
        offset: i64,
        severity: Severity,
    ) -> &Finding {
        let mine = |f: &&Finding| {
            f.kind == kind && (f.source.broker_id == Some(broker) || f.source.broker_id.is_none())
        };
        let all: Vec<(&str, &Finding)> = self.all();
        let mut first: Option<&Finding> = None;
        for run in ["scan", "scan --remote-storage", "verify"] {
            let hits: Vec<&Finding> = (all.iter())
                .filter(|(r, f)| *r == run && mine(f))
                .map(|(_, f)| *f)
                .collect();
            assert_eq!(hits.len(), 1, "[{run}] {kind}: {:#?}", lines(hits.clone()));
            assert_eq!((hits[0].offset, hits[0].severity), (Some(offset), severity));
            first.get_or_insert(hits[0]);
        }
        first.unwrap()
    }

    /// `orders-0`'s report on broker `broker` in `scan` (`remote`: `scan --remote-storage`).
    pub(crate) fn part(&self, broker: i32, remote: bool) -> &klogscan::results::PartitionReport {
        let r = if remote { &self.remote } else { &self.scan };
        (r.partitions.iter())
            .find(|p| p.topic == "orders" && p.source.broker_id == Some(broker))
            .unwrap()
    }

    /// `verify`'s predicted log start after a load of broker `broker`'s `orders-0`.
    pub(crate) fn predicted_log_start(&self, broker: i32) -> Option<i64> {
        (self.verify.partitions.iter())
            .find(|p| p.topic == "orders" && p.source.broker_id == Some(broker))
            .and_then(|p| p.prediction.log_start_offset_after)
    }
}
