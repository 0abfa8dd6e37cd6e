//! `klogscan verify`: cross-examine every file of a partition (indexes, time indexes,
//! transaction indexes, producer snapshots, `leader-epoch-checkpoint`, the log dir's offset
//! checkpoints, leftovers) against the log, and predict what a broker's `LogLoader` would do
//! with the partition on its next start (`LogLoader.load`, `LogSegment.recover`).
//!
//! Entry points: [`verify`] for any mix of paths (like [`crate::pipeline::scan`]) and
//! [`verify_partition`] for one partition directory. Both return the [`RecoveryPrediction`]
//! of each partition and the findings (the scan's findings plus the cross-checks:
//! `index_corrupt`, `index_mismatch`, `timeindex_mismatch`, `txnindex_mismatch`,
//! `snapshot_corrupt`, `snapshot_mismatch`, `leader_epoch_checkpoint_mismatch`,
//! `checkpoint_inconsistent`, `lso_below_log_start`, `leftover_file`, `unclean_shutdown`,
//! `foreign_directory`, `unparseable_file_name`).
//!
//! ```
//! # #[cfg(feature = "testkit")] {
//! use klogscan::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target};
//! use klogscan::verify::{verify_partition, VerifyOptions};
//! let dir = tempfile::tempdir().unwrap();
//! let mut p = PartitionBuilder::new("orders", 0);
//! p.append(Batch::new(Producer::idempotent(7, 0)).records(3));
//! p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
//! p.fault(Target::LastLog, FaultKind::AppendGarbage(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3]));
//! LogDirBuilder::new(1).clean_shutdown(false).partition(p).write(dir.path()).unwrap();
//!
//! let v = verify_partition(&dir.path().join("orders-0"), &VerifyOptions::default()).unwrap();
//! let t = v.prediction.truncation.as_ref().expect("the garbage tail is cut off");
//! assert_eq!(t.offset, 5); // the new log end offset
//! assert!(t.position > 0);
//! assert_eq!(v.prediction.log_end_offset_after, Some(5));
//! # }
//! ```

mod blocks;
mod brokers;
mod checks;
pub mod render;

pub use crate::partition::recovery::{
    BrokerVersion, LeftoverAction, LoadFailure, ProducerRebuild, RecoveryPrediction,
    SegmentRecovery, TruncationPrediction,
};
pub use brokers::BrokerStartup;

use crate::discover::layout::{self, Inventory};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::scan::{self, PartitionReport, ScanOptions, SeverityCounts};
use blocks::{ByPath, Inv, in_blocks, in_order};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Options of a verification.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Options of the underlying scan (`capture_snapshots` is forced on; `progress` is not
    /// used).
    pub scan: ScanOptions,
    /// The broker version that will load the data (`--broker-version`); `None`: a current
    /// broker (≥ 3.4.0). Below 2.4.1 a coordinator-epoch regression fails the load
    /// (KAFKA-9144); below 2.3 the offset/time index sanity checks run at load; below
    /// 3.4.0 a loaded producer expires after 7 days, not 1
    /// (`recovery::producer_expiration_ms`).
    pub broker_version: Option<BrokerVersion>,
}

/// Totals of a verification.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifySummary {
    pub partitions: usize,
    /// Partitions with at least one segment recovered at load.
    pub recovered: usize,
    /// Partitions whose log would be truncated.
    pub truncated: usize,
    /// Partitions that would fail to load.
    pub load_failures: usize,
    pub findings: SeverityCounts,
    /// The `-future`/`-delete`/`-stray` copies among `partitions`, and their findings (also
    /// counted in `findings`).
    pub non_live: crate::discover::identity::NonLiveCounts,
    /// With filters: the partitions verified before the filters chose what is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysed: Option<usize>,
}

/// The verification of one partition.
///
/// Its directory and log dir are its [`source`](Self::source)'s ([`path`](Self::path),
/// [`log_dir`](Self::log_dir)): kept once, not also beside it (≈ 100 bytes a partition).
#[derive(Debug, Clone)]
pub struct PartitionVerification {
    pub topic: String,
    pub partition: i32,
    /// Cluster, broker, log dir, path and copy kind (as in the scan report).
    pub source: crate::finding::Source,
    /// What the broker would do on its next start (boxed: a verification is kept for every
    /// partition until it is rendered, in one vector reserved whole while the scan's reports
    /// are still alive; inline, the prediction's 432 bytes doubled that vector's 304).
    pub prediction: Box<RecoveryPrediction>,
    /// This partition's findings (scan findings and cross-checks), sorted by offset.
    pub findings: Vec<Finding>,
    /// The scan's counts and offsets of the partition. The scan's whole report (its
    /// replay outcome, segment walks, index verdicts, snapshot states) is dropped once the
    /// cross-checks and the prediction have read it: a verification is kept for every
    /// partition until it is rendered.
    pub scan: ScanFigures,
}

impl PartitionVerification {
    /// The partition directory (as displayed; empty when the source has none).
    pub fn path(&self) -> &str {
        self.source.path.as_deref().unwrap_or_default()
    }

    /// The log dir holding the partition, when known.
    pub fn log_dir(&self) -> Option<&str> {
        self.source.log_dir.as_deref()
    }
}

/// The same members as when `path` and `log_dir` were fields of their own (`scan` is not
/// serialised).
impl Serialize for PartitionVerification {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = s.serialize_struct("PartitionVerification", 7)?;
        m.serialize_field("topic", &self.topic)?;
        m.serialize_field("partition", &self.partition)?;
        m.serialize_field("path", self.path())?;
        m.serialize_field("log_dir", &self.log_dir())?;
        m.serialize_field("source", &self.source)?;
        m.serialize_field("prediction", &self.prediction)?;
        m.serialize_field("findings", &self.findings)?;
        m.end()
    }
}

/// What the scan counted in a partition and where its log starts and ends (the numbers
/// of its [`PartitionReport`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanFigures {
    pub segments: usize,
    pub batches: u64,
    /// Every record, control records included.
    pub records: u64,
    pub bytes: u64,
    /// Offset of the first batch (may be above the first segment's base offset).
    pub first_offset: Option<i64>,
    pub log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub last_stable_offset: Option<i64>,
    /// Newest batch timestamp (`None`: no batch was read).
    pub max_timestamp: Option<i64>,
    pub producers: usize,
    pub transactions: crate::partition::results::TxnCounts,
    /// `--max-bytes` stopped the walk inside a segment.
    pub partially_read: bool,
}

impl ScanFigures {
    /// The figures of a scan's report.
    pub fn of(r: &PartitionReport) -> ScanFigures {
        ScanFigures {
            segments: r.segments,
            batches: r.batches,
            records: r.records,
            bytes: r.bytes,
            first_offset: r.first_offset(),
            log_start_offset: r.log_start_offset,
            log_end_offset: r.log_end_offset,
            last_stable_offset: r.last_stable_offset,
            max_timestamp: r.max_timestamp(),
            producers: r.producers,
            transactions: r.transactions,
            partially_read: r.partially_read,
        }
    }
}

/// The result of [`verify`].
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    pub inputs: Vec<String>,
    pub summary: VerifySummary,
    /// Each partition's verification, with that partition's findings.
    pub partitions: Vec<PartitionVerification>,
    /// The findings of no partition: the log dirs' (`unclean_shutdown`, leftovers of the
    /// log dir) and the unreadable paths. Every finding, in the JSON document's order, is
    /// [`Self::findings`]; a finding is held once, by its partition or here (not copied
    /// into one list for the whole report: a finding-heavy tree's findings are most of
    /// its report).
    pub log_dir_findings: Vec<Finding>,
    pub errors: Vec<(PathBuf, String)>,
    /// What the verification changed about its inputs (a file named on its own read with
    /// its whole partition directory, [`verify`]).
    pub notes: Vec<String>,
    /// The starts that one broker's log dirs stop, by their `meta.properties`
    /// (the log dirs' `meta.properties` against each other; JSON `broker_startup`, only when not empty).
    pub broker_startup: Vec<BrokerStartup>,
}

impl VerifyReport {
    /// Every finding: each partition's, in the partitions' order, then
    /// [`Self::log_dir_findings`] (the JSON document's `findings`).
    pub fn findings(&self) -> impl Iterator<Item = &Finding> + Clone + '_ {
        self.partitions
            .iter()
            .flat_map(|p| p.findings.iter())
            .chain(self.log_dir_findings.iter())
    }

    /// The highest severity among the findings.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings().map(|f| f.severity).max()
    }
    /// True when no partition could be analysed (partitions hidden by the filters were).
    pub fn nothing_read(&self) -> bool {
        self.partitions.is_empty() && self.summary.analysed.unwrap_or(0) == 0
    }
    /// True when partitions were verified but the filters selected none of them.
    pub fn matched_nothing(&self) -> bool {
        self.partitions.is_empty() && self.summary.analysed.unwrap_or(0) > 0
    }
}

/// Why [`verify_partition`] could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The path is not (or does not hold exactly one) partition directory.
    #[error("{0}: not a partition directory")]
    NotAPartition(PathBuf),
    /// The path could not be read.
    #[error("{0}: {1}")]
    Unreadable(PathBuf, String),
}

/// Verify one partition directory: cross-check its files and predict its recovery.
///
/// The parent directory is used as the partition's log dir when it holds broker files
/// (`recovery-point-offset-checkpoint`, `.kafka_cleanshutdown`, …); otherwise the shutdown
/// state is unknown and the prediction assumes an unclean shutdown with recovery point 0
/// (see [`RecoveryPrediction::clean_shutdown`]). Files are opened read-only.
pub fn verify_partition(
    dir: &Path,
    opts: &VerifyOptions,
) -> Result<PartitionVerification, VerifyError> {
    let inv = layout::discover(&[dir.to_path_buf()]);
    if let Some((p, why)) = inv.errors.first() {
        return Err(VerifyError::Unreadable(p.clone(), why.clone()));
    }
    if inv.partitions.len() != 1 || inv.partitions[0].partial {
        return Err(VerifyError::NotAPartition(dir.to_path_buf()));
    }
    let report = verify_owned(inv, opts, None);
    report
        .partitions
        .into_iter()
        .next()
        .ok_or_else(|| VerifyError::NotAPartition(dir.to_path_buf()))
}

/// Verify everything under `paths` (broker data dirs, partition dirs, or directories above
/// them), as `klogscan verify` does.
///
/// A file named on its own (`…/orders-0/00000000000000000000.log`) stands for its
/// partition directory when that directory is named like one (`topic-N`): the prediction
/// is what a broker's `LogLoader` does with the whole directory (every segment, index and
/// snapshot beside the named file, the log dir's checkpoints), so a sibling that was not
/// named is read rather than reported missing, and the log end offset is the directory's,
/// not the named segment's. Each widened directory is listed in [`VerifyReport::notes`].
pub fn verify(paths: &[PathBuf], opts: &VerifyOptions) -> VerifyReport {
    let (inv, notes) = discover_widened(paths, opts);
    verify_discovered(paths, inv, notes, opts, None)
}

/// The inventory [`verify`] analyses over `paths`, each file named on its own widened to
/// its partition directory, and the notes saying which were.
pub(crate) fn discover_widened(
    paths: &[PathBuf],
    opts: &VerifyOptions,
) -> (Inventory, Vec<String>) {
    let discover = |paths: &[PathBuf]| {
        let mut inv = layout::discover_with(
            paths,
            layout::DiscoverOptions {
                follow_symlinks: opts.scan.follow_symlinks,
            },
        );
        crate::discover::identity::apply_given(&mut inv, &opts.scan.cluster_ids);
        inv
    };
    let mut inv = discover(paths);
    let mut notes = Vec::new();
    if let Some(widened) = whole_partitions(paths, &inv, &mut notes) {
        inv = discover(&widened);
    }
    (inv, notes)
}

/// [`verify`] over `inv` and `notes`, [`discover_widened`] of `paths`; `leadership`: the
/// replay of the inventory's metadata logs when the caller made it before the scan
/// (`crate::pipeline::analyse_streaming_with`).
pub(crate) fn verify_discovered(
    paths: &[PathBuf],
    inv: Inventory,
    notes: Vec<String>,
    opts: &VerifyOptions,
    leadership: Option<crate::pipeline::Leadership>,
) -> VerifyReport {
    let mut r = verify_owned(inv, opts, leadership);
    r.inputs = paths.iter().map(|p| p.display().to_string()).collect();
    r.notes = notes;
    r
}

/// The inputs with every file named on its own inside a `topic-N` directory replaced by
/// that directory (once), or `None` when no file was named that way.
fn whole_partitions(
    paths: &[PathBuf],
    inv: &Inventory,
    notes: &mut Vec<String>,
) -> Option<Vec<PathBuf>> {
    let dirs: Vec<&Path> = inv
        .partitions
        .iter()
        .filter(|p| p.partial && p.tp.is_some() && p.path.is_dir())
        .map(|p| p.path.as_path())
        .collect();
    if dirs.is_empty() {
        return None;
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        let parent = path.parent().filter(|_| !path.is_dir());
        let widened = parent.and_then(|d| dirs.iter().find(|w| same_dir(w, d)));
        let next = widened.map_or_else(|| path.clone(), |d| d.to_path_buf());
        if !out.contains(&next) {
            out.push(next);
        }
    }
    for d in &dirs {
        notes.push(format!(
            "{}: files of this partition were named one by one; verify read the whole \
             directory, as a broker loads it",
            d.display()
        ));
    }
    Some(out)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Verify an already discovered inventory.
pub fn verify_inventory(inv: &Inventory, opts: &VerifyOptions) -> VerifyReport {
    verify_with(Inv::Borrowed(inv), opts, None)
}

/// [`verify_inventory`] over an inventory of its own, let go block by block behind the
/// scan's reports once their checks have read it (the same report).
fn verify_owned(
    mut inv: Inventory,
    opts: &VerifyOptions,
    leadership: Option<crate::pipeline::Leadership>,
) -> VerifyReport {
    verify_with(Inv::Owned(&mut inv), opts, leadership)
}

/// The verification of the inventory `access` gives; `leadership`: the replay of its
/// metadata logs when the caller made it before the scan.
fn verify_with(
    mut access: Inv<'_>,
    opts: &VerifyOptions,
    leadership: Option<crate::pipeline::Leadership>,
) -> VerifyReport {
    let inv = access.get();
    let mut scan_opts = opts.scan.clone();
    scan_opts.capture_snapshots = true;
    scan_opts.collect_index_verdicts = true;
    // The cluster stage's release-dependent rules (`stray_replica`) describe this release.
    scan_opts.broker_version = opts.broker_version;
    // Partitions are scanned one by one (below): a progress callback would see each
    // partition as a whole scan.
    scan_opts.progress = scan::Progress::default();
    let log_dirs: Vec<crate::partition::recovery::LogDirFiles> = inv
        .log_dirs
        .iter()
        .map(crate::partition::recovery::LogDirFiles::read)
        .collect();
    // One scan of everything: each partition's findings stay with its own directory
    // (several directories may hold the same topic-partition: replicas, -future dirs), and
    // the hanging-transaction reference time is the newest batch of each log dir.
    let mut scan =
        crate::pipeline::analyse_streaming_with(inv, &scan_opts, &mut |_, _| {}, leadership);
    // One broker's log dirs against each other (`meta.properties`) and against the
    // directory ids the metadata logs the scan replayed register, read while the
    // inventory still lists every partition (the blocks below let an own one go).
    let (found, startup) = brokers::check(
        inv,
        &log_dirs,
        opts.broker_version,
        &scan.registered_dirs,
        opts.scan.mmap,
    );
    let by_path = ByPath::of(inv);
    // Each partition's findings, moved out of the scan's list (not copied: for a
    // finding-heavy tree the copy doubled them while both were held).
    let per_partition = scan.take_partition_findings();
    let parts = std::mem::take(&mut scan.partitions);
    // The rest of the scan is not read again. (Moving each block's findings out of the
    // scan's list as the block is verified was measured too: no lower for empty
    // partitions, and 7 % higher for 50 000 partitions of one finding each, the scan's
    // list then held through the blocks.)
    drop(scan);
    let mut report = VerifyReport {
        errors: inv.errors.clone(),
        ..Default::default()
    };
    // Each report's inventory partition. When they come in the inventory's order (the
    // per-partition stage keeps it), an inventory of verify's own is let go block by block
    // behind the reports (≈ 360 bytes a partition and its file names); otherwise each is
    // found by its path.
    let order: Option<Vec<u32>> = match access {
        Inv::Owned(_) => in_order(inv, &by_path, parts.iter().map(|r| r.path.as_str())),
        Inv::Borrowed(_) => None,
    };
    // The file cross-checks of each partition, in parallel; each partition's collected
    // entries are dropped as soon as its index checks have read them.
    let verify_one =
        |inv: &Inventory, k: usize, mut r: PartitionReport, mut findings: Vec<Finding>| {
            let i = match &order {
                Some(order) => order[k] as usize,
                None => by_path.index_of(inv, &r.path)?,
            };
            let p = &inv.partitions[i];
            let ld = p
                .log_dir
                .as_ref()
                .and_then(|d| inv.log_dirs.iter().position(|l| &l.path == d))
                .map(|i| (&inv.log_dirs[i], &log_dirs[i]));
            let prediction = checks::verify_one(
                p,
                ld,
                &r,
                opts,
                &findings_snapshot(&findings),
                &mut findings,
            );
            unread_once(&mut findings);
            // The cross-checks' findings carry the partition's identity too.
            crate::discover::identity::apply_source(&r.source, &mut findings);
            findings
                .sort_by_key(|f| (f.offset.unwrap_or(i64::MAX), f.position.unwrap_or(u64::MAX)));
            // The verification's identity is the report's, moved rather than copied.
            Some(PartitionVerification {
                topic: std::mem::take(&mut r.topic),
                partition: r.partition,
                source: std::mem::take(&mut r.source),
                prediction: Box::new(prediction),
                findings,
                scan: ScanFigures::of(&r),
            })
        };
    let done = |access: &mut Inv<'_>, k: usize| {
        if let Some(order) = &order {
            access.done_from(order.get(k).map_or(usize::MAX, |i| *i as usize));
        }
    };
    report.partitions = crate::partition::scan::with_threads(opts.scan.threads, || {
        in_blocks(parts, per_partition, &mut access, verify_one, done)
    });
    let inv = access.get();
    for (ld, files) in inv.log_dirs.iter().zip(&log_dirs) {
        report
            .log_dir_findings
            .extend(checks::log_dir_findings(ld, files, opts.broker_version));
    }
    report.log_dir_findings.extend(found);
    report.broker_startup = startup;
    let stops = brokers::stray_search_stops(
        report.partitions.iter().flat_map(|p| p.findings.iter()),
        opts.broker_version,
    );
    report.broker_startup.extend(stops);
    for (path, why) in inv.errors.iter().filter(|e| !inv.is_input_error(e)) {
        report.log_dir_findings.push(
            Finding::new(
                Kind::UnreadableFile,
                "",
                -1,
                format!("cannot read {}: {why}", path.display()),
            )
            .segment(path.display().to_string())
            .broker("not applicable: the analysis of this path is incomplete"),
        );
    }
    // Ids across the whole report, as a scan gives them: a link from one partition's
    // finding to another partition's (the coordinator's finding a hanging transaction
    // follows from) resolves only where both are seen.
    let mut lists: Vec<&mut [Finding]> = (report.partitions.iter_mut())
        .map(|p| p.findings.as_mut_slice())
        .filter(|f| !f.is_empty())
        .collect();
    lists.push(&mut report.log_dir_findings);
    crate::finding::assign_ids_in(&mut lists);
    report.summary = summarise(&report);
    report
}

/// A file the scan and a cross-check both needed and could not read is one
/// `unreadable_file` finding (the scan's: the first) among one partition's `findings`.
/// The file is told by the finding's typed `segment` — a file name in the partition's
/// directory, which every one of these findings is of — never by its message: the same
/// file may be worded twice (each read's own error), and two files are never one.
fn unread_once(findings: &mut Vec<Finding>) {
    let mut said = std::collections::HashSet::new();
    findings.retain(|f| {
        f.kind != Kind::UnreadableFile || f.segment.as_ref().is_none_or(|s| said.insert(s.clone()))
    });
}

/// The scan findings the prediction needs (load-failure rules), copied before the
/// cross-checks add theirs.
fn findings_snapshot(f: &[Finding]) -> Vec<Finding> {
    f.iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::NonTransactionalWriteInTransaction | Kind::CoordinatorEpochRegression
            )
        })
        .cloned()
        .collect()
}

fn summarise(r: &VerifyReport) -> VerifySummary {
    let mut s = VerifySummary {
        partitions: r.partitions.len(),
        ..Default::default()
    };
    for p in &r.partitions {
        if !p.prediction.recovered_segments.is_empty() {
            s.recovered += 1;
        }
        if p.prediction.truncation.is_some() {
            s.truncated += 1;
        }
        if p.prediction.load_failure.is_some() {
            s.load_failures += 1;
        }
    }
    for f in r.findings() {
        match f.severity {
            Severity::Error => s.findings.error += 1,
            Severity::Warning => s.findings.warning += 1,
            Severity::Info => s.findings.info += 1,
        }
    }
    s.non_live = crate::discover::identity::non_live_counts(
        r.partitions.iter().map(|p| &p.source),
        r.findings(),
    );
    s
}

#[cfg(test)]
mod tests {
    /// `unread_once` keeps one `unreadable_file` finding a file, the first, whatever their
    /// words; two files' findings stay two even in the same words, and other kinds about
    /// the same file are not touched.
    #[test]
    fn a_file_read_twice_and_unread_is_one_finding_told_by_its_file_not_its_words() {
        use super::*;
        let f = |kind, file: &str, msg: &str| Finding::new(kind, "t", 0, msg).segment(file);
        let snap = "00000000000000000002.snapshot";
        let mut findings = vec![
            f(
                Kind::UnreadableFile,
                snap,
                "cannot read x: Permission denied",
            ),
            f(
                Kind::SnapshotMismatch,
                snap,
                "cannot read x: Permission denied",
            ),
            // The cross-check's read of the same file, worded by its own error.
            f(
                Kind::UnreadableFile,
                snap,
                "cannot read x: file changed during the scan",
            ),
            // Another file, in the same words (never one finding with the first).
            f(
                Kind::UnreadableFile,
                "leader-epoch-checkpoint",
                "cannot read x: Permission denied",
            ),
        ];
        unread_once(&mut findings);
        let kept: Vec<(Kind, &str, &str)> = findings
            .iter()
            .map(|f| (f.kind, f.segment.as_deref().unwrap(), f.message.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                (
                    Kind::UnreadableFile,
                    snap,
                    "cannot read x: Permission denied"
                ),
                (
                    Kind::SnapshotMismatch,
                    snap,
                    "cannot read x: Permission denied"
                ),
                (
                    Kind::UnreadableFile,
                    "leader-epoch-checkpoint",
                    "cannot read x: Permission denied"
                ),
            ]
        );
    }

    use super::blocks::BLOCK;
    use super::*;

    /// More partitions than a block, some with batches, findings and a corrupt tail: the
    /// inventory let go block by block gives the report of the inventory kept whole.
    #[cfg(feature = "testkit")]
    #[test]
    fn an_inventory_let_go_gives_the_same_report() {
        use crate::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target};
        let t = tempfile::tempdir().unwrap();
        let mut b = LogDirBuilder::new(1).clean_shutdown(false);
        for (topic, n) in [("aa", 0), ("mm", 3), ("zz", 1)] {
            let mut p = PartitionBuilder::new(topic, n);
            p.append(Batch::new(Producer::transactional(7, 0)).records(3));
            p.append(Batch::new(Producer::idempotent(8, 0)).records(2));
            if topic == "mm" {
                p.fault(
                    Target::LastLog,
                    FaultKind::AppendGarbage(vec![0xde, 0xad, 1, 2]),
                );
            }
            b = b.partition(p);
        }
        b.write(t.path()).unwrap();
        for i in 0..BLOCK + 10 {
            let d = t.path().join(format!("e{}-{}", i / 100, i % 100));
            std::fs::create_dir(&d).unwrap();
            for x in ["log", "index", "timeindex"] {
                std::fs::File::create(d.join(format!("00000000000000000000.{x}"))).unwrap();
            }
        }
        let opts = VerifyOptions::default();
        let inv = layout::discover(&[t.path().to_path_buf()]);
        let kept = render::to_json(&verify_inventory(&inv, &opts));
        let by_path = ByPath::of(&inv);
        assert!(
            in_order(
                &inv,
                &by_path,
                inv.partitions.iter().map(|p| p.path.to_str().unwrap())
            )
            .is_some()
        );
        // Each partition's scan findings are its verification's (handed over block by block).
        let scan = crate::pipeline::analyse(&inv, &opts.scan);
        let owned = verify_owned(inv, &opts, None);
        let mut carried = 0;
        for (k, r) in scan.partitions.iter().enumerate() {
            let v = owned
                .partitions
                .iter()
                .find(|v| v.path() == r.path)
                .unwrap();
            for f in scan.partition_findings(k) {
                carried += 1;
                // The same finding: its typed fields, not its words.
                let same = |g: &&Finding| {
                    g.identity_key() == f.identity_key()
                        && (&g.segment, g.position) == (&f.segment, f.position)
                };
                assert!(v.findings.iter().any(|g| same(&g)), "{}: {f:?}", r.path);
            }
        }
        assert!(carried >= 3, "{carried}");
        let let_go = render::to_json(&owned);
        assert_eq!(kept["partitions"].as_array().unwrap().len(), BLOCK + 13);
        assert_eq!(kept, let_go);
        assert_eq!(kept["summary"]["truncated"], 1, "{}", kept["summary"]);
    }

    /// The scan's findings are moved to their partitions, not copied: each partition gets
    /// what `partition_findings` reads, a finding of no partition is dropped, and ranges
    /// that are not disjoint (no stage makes them, but the move must not misplace one)
    /// give each partition a copy of its own range. The report's findings are each
    /// partition's, in order, then the log dir's.
    #[cfg(feature = "testkit")]
    #[test]
    fn partition_findings_are_moved_out_of_the_scan() {
        use crate::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target};
        let t = tempfile::tempdir().unwrap();
        let mut b = LogDirBuilder::new(1).clean_shutdown(false);
        for (topic, n) in [("aa", 0), ("bb", 0), ("cc", 2)] {
            let mut p = PartitionBuilder::new(topic, n);
            p.append(Batch::new(Producer::idempotent(8, 0)).records(2));
            if topic != "bb" {
                p.fault(Target::LastLog, FaultKind::AppendGarbage(vec![0xde, 0xad]));
            }
            b = b.partition(p);
        }
        b.write(t.path()).unwrap();
        let inv = layout::discover(&[t.path().to_path_buf()]);
        let opts = VerifyOptions::default();
        let scan = crate::pipeline::analyse(&inv, &opts.scan);
        let want: Vec<Vec<Finding>> = (0..scan.partitions.len())
            .map(|k| scan.partition_findings(k).to_vec())
            .collect();
        assert!(
            want.iter().filter(|f| !f.is_empty()).count() >= 2,
            "{want:?}"
        );
        // A finding of no partition before, between and after the partitions' ranges.
        let mut with_gaps = scan.clone();
        let stray = Finding::new(Kind::UnreadableFile, "", -1, "stray");
        let mut findings = Vec::new();
        for p in &mut with_gaps.partitions {
            findings.push(stray.clone());
            let r = p.carried.finding_range.clone();
            let start = findings.len();
            findings.extend(scan.findings[r].iter().cloned());
            p.carried.finding_range = start..findings.len();
        }
        findings.push(stray.clone());
        with_gaps.findings = findings;
        let moved = with_gaps.take_partition_findings();
        assert_eq!(moved, want);
        assert!(with_gaps.findings.is_empty());
        assert!(
            with_gaps
                .partitions
                .iter()
                .all(|p| p.carried.finding_range.is_empty())
        );
        // Overlapping ranges: every partition's range, copied.
        let mut overlapping = scan.clone();
        let all = 0..overlapping.findings.len();
        for p in &mut overlapping.partitions {
            p.carried.finding_range = all.clone();
        }
        let copied = overlapping.take_partition_findings();
        assert!(copied.iter().all(|f| *f == scan.findings));
        // The report: each partition's findings in order, then the log dir's.
        let r = verify_inventory(&inv, &opts);
        let mut expected: Vec<&Finding> = r.partitions.iter().flat_map(|p| &p.findings).collect();
        expected.extend(&r.log_dir_findings);
        assert!(
            r.log_dir_findings
                .iter()
                .any(|f| f.kind == Kind::UncleanShutdown)
        );
        assert_eq!(r.findings().collect::<Vec<_>>(), expected);
        assert_eq!(r.max_severity(), expected.iter().map(|f| f.severity).max());
    }
}
