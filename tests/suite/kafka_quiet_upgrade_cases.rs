//! False alarms on clusters that lived through upgrades: log dirs holding files that several
//! Kafka versions wrote side by side — legacy message formats before v2 batches, segments
//! from before the time index, producer snapshots and leader epochs only from the message
//! format upgrade on, partitions from before `partition.metadata`, `meta.properties` of a
//! ZooKeeper broker and of one migrated to KRaft, a metadata log that begins with the
//! migration, transaction-log values before and after `transaction.version` 1 and 2, and
//! `__consumer_offsets` records of every generation up to a classic group's online upgrade to
//! the consumer protocol (apache/kafka trunk of 2024-10; the 3.7.0 tag for the migration,
//! which trunk no longer carries).
//!
//! `scan` (`request::run`, plain and `--deep`) and `verify` (`request::verify`, with each
//! `--broker-version` that could hold the data) must report nothing at warning or above, and
//! `verify` must predict a clean start. Each healthy case cites the Kafka class and method
//! that makes it healthy and has a twin that differs by one fact and must be reported. A case
//! where klogscan raises a warning or an error on healthy data is
//! `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Modules: `format` (magic 0/1 → v2 inside one partition), `layout` (pre-2.8 partition
//! dirs, old checkpoints, ZooKeeper `meta.properties`), `migration` (ZooKeeper → KRaft),
//! `txns` (transaction-log values v0 → v1, TV1 → TV2), `groups` (`__consumer_offsets` from
//! OffsetCommitValue v1 to a consumer group).
#![cfg(feature = "testkit")]

use crate::common::quiet::scan_dir;
pub(crate) use crate::common::quiet::{lines, loud};
use klogscan::finding::{Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::{LogDirBuilder, LogDirManifest};
use klogscan::verify::{BrokerVersion, VerifyReport};
use std::path::Path;
use tempfile::TempDir;

mod format;
mod groups;
mod layout;
mod migration;
mod txns;

/// The cluster id every broker since 0.10.1 writes into `meta.properties` (KIP-78).
pub(crate) const CLUSTER: &str = "Jf3pQm8xT0yWcR5vN2bLkA";

/// A written log dir (or a root of several) and what `scan`, `scan --deep` and `verify` (at
/// each broker version asked) say of it.
pub(crate) struct Quiet {
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: Vec<(Option<&'static str>, VerifyReport)>,
}

/// Write `ld` into a new temporary directory, let `extra` rewrite or add files (what the
/// testkit does not write as the broker of that era did), then scan (plain and deep) and
/// verify it at each of `versions` (`None`: a current broker).
pub(crate) fn check(
    ld: LogDirBuilder,
    extra: impl FnOnce(&Path),
    versions: &[Option<&'static str>],
) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    extra(dir.path());
    let scan = scan_dir(dir.path(), false);
    let deep = scan_dir(dir.path(), true);
    let verify = versions
        .iter()
        .map(|v| {
            let bv = v.map(|s| s.parse::<BrokerVersion>().unwrap());
            let r = request::verify(&Request::new([dir.path()]), bv)
                .unwrap()
                .report;
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            (*v, r)
        })
        .collect();
    Quiet {
        dir,
        manifest,
        scan,
        deep,
        verify,
    }
}

impl Quiet {
    /// Every finding at warning or above, from `scan --deep` and each `verify`, tagged with
    /// where it came from.
    pub(crate) fn all_loud(&self) -> Vec<String> {
        let mut out: Vec<String> = loud(&self.scan.findings)
            .into_iter()
            .map(|l| format!("scan: {l}"))
            .collect();
        out.extend(
            loud(&self.deep.findings)
                .into_iter()
                .map(|l| format!("deep: {l}")),
        );
        for (v, r) in &self.verify {
            out.extend(
                loud(r.findings())
                    .into_iter()
                    .map(|l| format!("verify {v:?}: {l}")),
            );
        }
        out
    }

    /// The kinds of the findings at warning or above, everywhere.
    pub(crate) fn loud_kinds(&self) -> Vec<Kind> {
        let mut k: Vec<Kind> = (self.scan.findings.iter())
            .chain(&self.deep.findings)
            .chain(self.verify.iter().flat_map(|(_, r)| r.findings()))
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| f.kind)
            .collect();
        k.sort_by_key(|k| k.id());
        k.dedup();
        k
    }

    /// Nothing at warning or above anywhere, and a clean start predicted by every `verify`.
    pub(crate) fn assert_quiet(&self) {
        let l = self.all_loud();
        assert!(
            l.is_empty(),
            "{l:#?}\n(all deep findings: {:#?})",
            lines(&self.deep.findings)
        );
        self.assert_clean_start();
    }

    /// The twin: at least one finding of `kind` at warning or above.
    pub(crate) fn assert_reported(&self, kind: Kind) {
        assert!(
            self.loud_kinds().contains(&kind),
            "no {kind:?} at warning or above: {:#?}",
            self.all_loud()
        );
    }

    /// `verify` predicts the start after a clean shutdown (`LogLoader.load` with
    /// `hadCleanShutdown`) for every partition the manifest lists: nothing recovered,
    /// truncated or deleted, no load failure, the log end kept.
    pub(crate) fn assert_clean_start(&self) {
        for (v, r) in &self.verify {
            for m in &self.manifest.partitions {
                let name = format!("{v:?} {}-{}", m.topic, m.partition);
                let p = r
                    .partitions
                    .iter()
                    .find(|p| p.topic == m.topic && p.partition == m.partition)
                    .unwrap_or_else(|| panic!("{name}: not verified"));
                let pr = &p.prediction;
                assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
                assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
                assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
                assert!(pr.unrecovered_corruption.is_empty(), "{name}: {pr:#?}");
                assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
                assert_eq!(pr.log_end_offset_after, Some(m.log_end_offset), "{name}");
            }
            assert!(
                r.broker_startup.iter().all(|s| s.starts != Some(false)),
                "{v:?}: {:#?}",
                r.broker_startup
            );
        }
    }
}

/// Remove `<partition dir>/<name>` (a file an older broker never wrote).
pub(crate) fn remove(dir: &Path, partition: &str, name: &str) {
    std::fs::remove_file(dir.join(partition).join(name)).unwrap();
}

/// `<offset>` as a segment or snapshot file stem.
pub(crate) fn stem(offset: i64) -> String {
    format!("{offset:020}")
}
