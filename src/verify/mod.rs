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
//! `checkpoint_inconsistent`, `lso_below_log_start`, `leftover_file`, `unclean_shutdown`).
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

mod checks;
pub mod render;

pub use crate::partition::recovery::{
    BrokerVersion, LeftoverAction, LoadFailure, ProducerRebuild, RecoveryPrediction,
    SegmentRecovery, TruncationPrediction,
};

use crate::discover::layout::{self, Inventory};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::scan::{self, PartitionReport, ScanOptions, SeverityCounts};
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Options of a verification.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Options of the underlying scan (`capture_snapshots` is forced on; `progress` is not
    /// used).
    pub scan: ScanOptions,
    /// The broker version that will load the data (`--broker-version`); `None`: a current
    /// broker (≥ 2.4.1). Below 2.4.1 a coordinator-epoch regression fails the load
    /// (KAFKA-9144); below 2.3 the offset/time index sanity checks run at load.
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
    /// What the broker would do on its next start.
    pub prediction: RecoveryPrediction,
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
    pub partitions: Vec<PartitionVerification>,
    /// Every finding: per partition, then the log-dir level ones (`unclean_shutdown`,
    /// leftovers of the log dir, unreadable paths).
    pub findings: Vec<Finding>,
    pub errors: Vec<(PathBuf, String)>,
    /// What the verification changed about its inputs (a file named on its own read with
    /// its whole partition directory, [`verify`]).
    pub notes: Vec<String>,
}

impl VerifyReport {
    /// The highest severity among the findings.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
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
    let report = verify_owned(inv, opts);
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
    let mut r = verify_owned(inv, opts);
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
    verify_with(Inv::Borrowed(inv), opts)
}

/// [`verify_inventory`] over an inventory of its own: each partition's file lists are let
/// go once its checks have read them (≈ 400 bytes an empty partition of the inventory's
/// peak; the same report).
fn verify_owned(mut inv: Inventory, opts: &VerifyOptions) -> VerifyReport {
    verify_with(Inv::Owned(&mut inv), opts)
}

/// The inventory [`in_blocks`] reads partitions' files from, and may let go of.
enum Inv<'a> {
    Borrowed(&'a Inventory),
    Owned(&'a mut Inventory),
}

impl Inv<'_> {
    fn get(&self) -> &Inventory {
        match self {
            Inv::Borrowed(i) => i,
            Inv::Owned(i) => i,
        }
    }

    /// The partitions from `at` on are verified and not read again: an inventory of
    /// verify's own lets them go (the vector's tail given back in place).
    fn done_from(&mut self, at: usize) {
        if let Inv::Owned(inv) = self {
            inv.partitions.truncate(at);
            inv.partitions.shrink_to_fit();
        }
    }
}

fn verify_with(mut access: Inv<'_>, opts: &VerifyOptions) -> VerifyReport {
    let inv = access.get();
    let mut scan_opts = opts.scan.clone();
    scan_opts.capture_snapshots = true;
    scan_opts.collect_index_verdicts = true;
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
    let mut scan = crate::pipeline::analyse(inv, &scan_opts);
    let by_path = ByPath::of(inv);
    let per_partition: Vec<Vec<Finding>> = (0..scan.partitions.len())
        .map(|k| scan.partition_findings(k).to_vec())
        .collect();
    let parts = std::mem::take(&mut scan.partitions);
    // The rest of the scan (its findings, copied per partition above) is not read again.
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
            // The cross-checks' findings carry the partition's identity too.
            crate::discover::identity::apply_source(&r.source, &mut findings);
            findings
                .sort_by_key(|f| (f.offset.unwrap_or(i64::MAX), f.position.unwrap_or(u64::MAX)));
            crate::finding::assign_ids(&mut findings);
            // The verification's identity is the report's, moved rather than copied.
            Some(PartitionVerification {
                topic: std::mem::take(&mut r.topic),
                partition: r.partition,
                source: std::mem::take(&mut r.source),
                prediction,
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
    for p in &report.partitions {
        report.findings.extend(p.findings.iter().cloned());
    }
    for (ld, files) in inv.log_dirs.iter().zip(&log_dirs) {
        report.findings.extend(checks::log_dir_findings(ld, files));
    }
    for (path, why) in inv.errors.iter().filter(|e| !inv.is_input_error(e)) {
        report.findings.push(
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
    report.summary = summarise(&report);
    report
}

/// Partitions verified at a time by [`in_blocks`].
const BLOCK: usize = 4096;

/// `verify_one` over every partition and its findings, in order, a [`BLOCK`] of partitions
/// at a time taken off the end of the scan's vector, whose memory is given back as it
/// goes (shrinking a vector's tail is done in place by the allocator): the scan's reports
/// and the verifications made of them are never both whole. Before, both vectors were
/// alive at the end (1 312 and 2 032 bytes a partition). A partition `verify_one` drops
/// (`None`) is left out. After each block, `done` is told which inventory partitions it
/// read: the partitions from the block's first report's on are not read again.
fn in_blocks(
    mut parts: Vec<PartitionReport>,
    mut findings: Vec<Vec<Finding>>,
    access: &mut Inv<'_>,
    verify_one: impl Fn(
        &Inventory,
        usize,
        PartitionReport,
        Vec<Finding>,
    ) -> Option<PartitionVerification>
    + Sync,
    mut done: impl FnMut(&mut Inv<'_>, usize),
) -> Vec<PartitionVerification> {
    // Reserved whole once: grown block by block, each reallocation left the old copy as
    // a hole in the heap that the next blocks' small allocations did not fill.
    let mut out: Vec<PartitionVerification> = Vec::with_capacity(parts.len());
    while !parts.is_empty() {
        let at = parts.len().saturating_sub(BLOCK);
        let block = parts.split_off(at);
        let block_findings = findings.split_off(at.min(findings.len()));
        parts.shrink_to_fit();
        findings.shrink_to_fit();
        // An indexed collect (one vector, written in place), then the `None`s dropped.
        let inv = access.get();
        let verified: Vec<Option<PartitionVerification>> = block
            .into_par_iter()
            .zip(block_findings)
            .enumerate()
            .map(|(j, (r, f))| verify_one(inv, at + j, r, f))
            .collect();
        done(access, at);
        // Blocks come last first: reversed here, and the whole once at the end.
        out.extend(verified.into_iter().rev().flatten());
        // The block's reports (and the inventory's partitions let go) are freed: their
        // pages go back to the system rather than stay resident as holes between the
        // small allocations kept.
        crate::pipeline::release_freed_memory();
    }
    out.reverse();
    out.shrink_to_fit();
    out
}

/// Each report's inventory partition, when every report has one and they come in the
/// inventory's order (strictly increasing): `None` otherwise.
fn in_order<'a>(
    inv: &Inventory,
    by_path: &ByPath,
    paths: impl ExactSizeIterator<Item = &'a str>,
) -> Option<Vec<u32>> {
    let mut order = Vec::with_capacity(paths.len());
    for path in paths {
        let i = by_path.index_of(inv, path)? as u32;
        if order.last().is_some_and(|last| *last >= i) {
            return None;
        }
        order.push(i);
    }
    Some(order)
}

/// The inventory's partitions sorted by their path as the reports write it: the report's
/// path is the directory's `display()`, and `to_string_lossy` gives the same text,
/// borrowed when it is UTF-8 (4 bytes a partition; a map of borrowed paths cost ≈ 45).
struct ByPath(Vec<u32>);

impl ByPath {
    fn of(inv: &Inventory) -> Self {
        let mut by_path: Vec<u32> = (0..inv.partitions.len() as u32).collect();
        by_path.sort_unstable_by(|a, b| path_of(inv, *a).cmp(&path_of(inv, *b)));
        ByPath(by_path)
    }

    fn index_of(&self, inv: &Inventory, path: &str) -> Option<usize> {
        let k = self
            .0
            .binary_search_by(|i| (*path_of(inv, *i)).cmp(path))
            .ok()?;
        Some(self.0[k] as usize)
    }
}

fn path_of(inv: &Inventory, i: u32) -> std::borrow::Cow<'_, str> {
    inv.partitions[i as usize].path.to_string_lossy()
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
    for f in &r.findings {
        match f.severity {
            Severity::Error => s.findings.error += 1,
            Severity::Warning => s.findings.warning += 1,
            Severity::Info => s.findings.info += 1,
        }
    }
    s.non_live = crate::discover::identity::non_live_counts(
        r.partitions.iter().map(|p| &p.source),
        &r.findings,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inventory(paths: &[&str]) -> Inventory {
        let mut inv = Inventory::default();
        for p in paths {
            let mut d = crate::discover::layout::PartitionDir::default();
            d.path = PathBuf::from(p);
            inv.partitions.push(d);
        }
        inv
    }

    #[test]
    fn reports_in_the_inventorys_order_are_matched_by_position() {
        let inv = inventory(&["/d/b-0", "/d/a-0", "/d/c-0"]);
        let by_path = ByPath::of(&inv);
        let order = |paths: &[&str]| in_order(&inv, &by_path, paths.iter().copied());
        assert_eq!(order(&["/d/b-0", "/d/a-0", "/d/c-0"]), Some(vec![0, 1, 2]));
        // A partition the stage did not select is skipped: still in order.
        assert_eq!(order(&["/d/b-0", "/d/c-0"]), Some(vec![0, 2]));
        assert_eq!(order(&[]), Some(vec![]));
    }

    #[test]
    fn reports_out_of_order_repeated_or_unknown_are_found_by_path() {
        let inv = inventory(&["/d/b-0", "/d/a-0", "/d/c-0"]);
        let by_path = ByPath::of(&inv);
        let order = |paths: &[&str]| in_order(&inv, &by_path, paths.iter().copied());
        assert_eq!(order(&["/d/a-0", "/d/b-0"]), None);
        assert_eq!(order(&["/d/b-0", "/d/b-0"]), None);
        assert_eq!(order(&["/d/b-0", "/d/x-0"]), None);
        assert_eq!(by_path.index_of(&inv, "/d/c-0"), Some(2));
        assert_eq!(by_path.index_of(&inv, "/d/x-0"), None);
    }

    /// More partitions than a block, some with batches, a corrupt tail and a copy: the
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
        let let_go = render::to_json(&verify_owned(inv, &opts));
        assert_eq!(kept["partitions"].as_array().unwrap().len(), BLOCK + 13);
        assert_eq!(kept, let_go);
        assert_eq!(kept["summary"]["truncated"], 1, "{}", kept["summary"]);
    }
}
