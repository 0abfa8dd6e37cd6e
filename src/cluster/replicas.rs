//! Compare the replicas of one partition (rule 33; a follower's log is a prefix copy of the
//! leader's: `ReplicaFetcherThread.processPartitionData`).
//!
//! A copied tree of several brokers holds several directories for the same
//! topic-partition. Followers append the leader's batches as they are
//! (`UnifiedLog.appendAsFollower` assigns nothing); `partitionLeaderEpoch` is outside the
//! CRC and left out of the comparison (a retried batch two leaders appended differs only
//! there), so over the offset range both copies hold,
//! the batch at a base offset must have the same CRC, last offset and size in both.
//! [`compare`] walks each copy's batch headers (no decompression; one small tuple per
//! batch) and reports a `replica_divergence` finding per pair of copies that differ inside
//! their common range, with the COMMIT/ABORT markers one copy has and the other lacks.
//!
//! # Which directories are copies of each other
//!
//! Two partition directories of the same topic-partition (kind `Normal` or `Future`;
//! `-delete`/`-stray` directories may hold an older incarnation and are skipped) are
//! compared when:
//!
//! * their `partition.metadata` topic ids, when both are readable, are equal; and
//! * both log dirs' `meta.properties` carry the same non-empty `cluster.id`, or both
//!   directories are in the same log dir ([`crate::discover::identity::same_cluster`], the one
//!   "same cluster" rule of every join); or, when either has no cluster id and the log
//!   dirs differ, the two paths are *broker siblings*: below their common
//!   ancestor, the first components are `<stem><digits>` with the same stem and different
//!   digits (`broker1`/`broker2`, `kafka-1`/`kafka-3`, `1`/`2`) and the rest of the paths
//!   are identical (`broker1/data/t-0` vs `broker2/data/t-0`).
//!
//! Unrelated data dirs that happen to hold a partition of the same name (two projects'
//! `_schemas-0`) have different cluster ids or non-sibling paths, and are not compared.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use serde_json::json;

use crate::cluster::report::ScanReport;
use crate::discover::identity::{ClusterMatch, Identities, same_cluster};
use crate::discover::layout::{DirKind, Inventory, PartitionDir};
use crate::finding::{Finding, Kind, Source};
use crate::partition::results::ScanOptions;
use crate::partition::walked::SegmentNames;
use crate::read::segment::{self, Item, MmapMode, walk_entries_items};

mod tail;
mod truncation;
mod unreplicated;
pub(crate) use truncation::truncation_point;
use truncation::{
    Truncation, epochs_in_one_copy, lineages, pending_truncation, with_epochs_in_one_copy,
    with_high_watermarks, with_truncation, without_epochs,
};
pub(crate) use unreplicated::demote_unreplicated_markers;

/// At most this many missing markers are listed per direction in a finding.
pub const MAX_LISTED_MARKERS: usize = 20;

/// One batch header, as compared across replicas (kept per batch by the scan's walk of
/// a partition with copies in the inputs).
pub use crate::partition::walked::BatchKey;

/// The batch headers of one partition copy, in file order.
#[derive(Debug, Clone, Default)]
pub struct CopyBatches {
    pub batches: Vec<BatchKey>,
    /// Segment file names, indexed by [`BatchKey::segment`].
    pub segments: SegmentNames,
}

/// Read the batch headers of every segment of `p`, read-only. Unreadable files and
/// entries that do not frame are skipped (the scan reports them). Memory: one key per
/// batch; a batch larger than `segment::BIG_ENTRY` is keyed from its header.
#[cfg(feature = "testkit")]
pub fn read_copy(p: &PartitionDir, max_bytes: Option<u64>) -> CopyBatches {
    read_copy_with(p, max_bytes, MmapMode::Auto)
}

/// [`read_copy`] under the read policy `mmap` (`--mmap`, [`segment::policy`]).
pub fn read_copy_with(p: &PartitionDir, max_bytes: Option<u64>, mmap: MmapMode) -> CopyBatches {
    let mut out = CopyBatches::default();
    for seg in &p.segments {
        let Some(log) = &seg.log else { continue };
        let len = std::fs::metadata(log).map_or(0, |m| m.len());
        let policy = segment::policy(mmap, max_bytes.map_or(len, |m| m.min(len)));
        let seg_idx = out.segments.len() as u32;
        out.segments.push(
            &log.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
        );
        let batches = &mut out.batches;
        // Headers only: an entry too large to hold is checked streaming and keyed from its
        // header (`BatchKey::of_big`), never buffered whole.
        let _ = walk_entries_items(log, policy, max_bytes, |item| match item {
            Item::Entry(e) => batches.extend(BatchKey::of(e, seg_idx)),
            Item::Big(b) => batches.extend(BatchKey::of_big(&b, seg_idx)),
        });
    }
    out.batches.sort_by_key(|b| b.base_offset);
    out
}

/// The batch headers of a scanned copy, from what its walk kept (`None` when the walk
/// kept none: results made without a copy in view).
pub fn walked_copy(
    inputs: &crate::partition::walked::ClusterInputs,
    names: &SegmentNames,
) -> Option<CopyBatches> {
    let mut batches = inputs.batches.as_deref()?.to_vec();
    batches.sort_by_key(|b| b.base_offset);
    Some(CopyBatches {
        batches,
        segments: names.clone(),
    })
}

/// A COMMIT/ABORT marker: `(offset, producer id, epoch, commit)`.
pub type Marker = (i64, i64, i16, bool);

/// How two copies differ over their common offset range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// `[first, last]` offsets both copies hold.
    pub common: (i64, i64),
    /// First offset at which they differ.
    pub first_offset: i64,
    /// The batches at `first_offset` in each copy (`None`: that copy has no batch there).
    pub first: (Option<BatchKey>, Option<BatchKey>),
    /// Batch positions that differ (a batch in one copy only counts once).
    pub differing_batches: u64,
    /// Markers in the first copy's common range absent from the second's, and vice versa.
    pub markers_only_in: (Vec<Marker>, Vec<Marker>),
    /// True when every difference is what independent log cleaning can produce: batches
    /// absent from one copy, or the same offsets in a smaller batch of the same kind and
    /// producer (the cleaner keeps a v2 batch's base and last offset).
    pub compaction_explainable: bool,
}

/// Compare two copies over the offset range both hold. `None` when they agree there
/// (or share no range: one is behind/ahead, or retention deleted older segments).
pub fn diverge(a: &[BatchKey], b: &[BatchKey]) -> Option<Divergence> {
    let (fa, la) = (a.first()?, a.iter().map(|x| x.last_offset).max()?);
    let (fb, lb) = (b.first()?, b.iter().map(|x| x.last_offset).max()?);
    let lo = fa.base_offset.max(fb.base_offset);
    let hi = la.min(lb);
    if lo > hi {
        return None;
    }
    let inside = |x: &&BatchKey| x.base_offset >= lo && x.last_offset <= hi;
    let ra: Vec<&BatchKey> = a.iter().filter(inside).collect();
    let rb: Vec<&BatchKey> = b.iter().filter(inside).collect();
    // A batch starting in the common range and ending past it: the other copy's batches
    // there have boundaries it lacks (the cleaner keeps a v2 batch's base and last offset,
    // so that is never cleaning), and it is what that copy holds at their offsets.
    let straddles =
        |x: &&BatchKey| x.base_offset >= lo && x.base_offset <= hi && x.last_offset > hi;
    let (sa, sb): (Vec<&BatchKey>, Vec<&BatchKey>) = (
        a.iter().filter(straddles).collect(),
        b.iter().filter(straddles).collect(),
    );
    let over = |s: &[&BatchKey], k: &BatchKey| {
        s.iter()
            .find(|s| s.base_offset <= k.last_offset && s.last_offset >= k.base_offset)
            .map(|s| **s)
    };
    let (mut i, mut j) = (0, 0);
    let mut first: Option<(i64, Option<BatchKey>, Option<BatchKey>)> = None;
    let mut count = 0u64;
    let mut explainable = true;
    let mut note = |off: i64, x: Option<BatchKey>, y: Option<BatchKey>| {
        count += 1;
        if first.is_none() {
            first = Some((off, x, y));
        }
    };
    while i < ra.len() || j < rb.len() {
        match (ra.get(i), rb.get(j)) {
            (Some(x), Some(y)) if x.base_offset == y.base_offset => {
                if (x.last_offset, x.crc, x.size) != (y.last_offset, y.crc, y.size) {
                    if x.last_offset != y.last_offset
                        || x.size == y.size
                        || (x.is_control, x.producer_id, x.producer_epoch)
                            != (y.is_control, y.producer_id, y.producer_epoch)
                    {
                        explainable = false;
                    }
                    note(x.base_offset, Some(**x), Some(**y));
                }
                i += 1;
                j += 1;
            }
            (Some(x), y) if y.is_none_or(|y| x.base_offset < y.base_offset) => {
                let other = over(&sb, x);
                if y.is_some_and(|y| y.base_offset <= x.last_offset) || other.is_some() {
                    explainable = false; // batch boundaries cross
                }
                note(x.base_offset, Some(**x), other);
                i += 1;
            }
            (x, Some(y)) => {
                let other = over(&sa, y);
                if x.is_some_and(|x| x.base_offset <= y.last_offset) || other.is_some() {
                    explainable = false;
                }
                note(y.base_offset, other, Some(**y));
                j += 1;
            }
            _ => break,
        }
    }
    let (first_offset, xa, xb) = first?;
    let markers = |r: &[&BatchKey]| -> BTreeSet<Marker> {
        r.iter()
            .filter_map(|k| {
                k.marker
                    .map(|c| (k.base_offset, k.producer_id, k.producer_epoch, c))
            })
            .collect()
    };
    let (ma, mb) = (markers(&ra), markers(&rb));
    Some(Divergence {
        common: (lo, hi),
        first_offset,
        first: (xa, xb),
        differing_batches: count,
        markers_only_in: (
            ma.difference(&mb).copied().collect(),
            mb.difference(&ma).copied().collect(),
        ),
        compaction_explainable: explainable,
    })
}

/// The topic id of `p`'s `partition.metadata` (`None`: absent or unreadable).
pub(crate) fn topic_id(p: &PartitionDir) -> Option<[u8; 16]> {
    p.read_topic_id()
}

/// The topic id of `p`'s `partition.metadata` in `inv`: read from the file, or what a
/// bundle recorded of it for an inventory rebuilt from bundles.
pub(crate) fn topic_id_in(inv: &Inventory, p: &PartitionDir) -> Option<[u8; 16]> {
    inv.topic_id(p)
}

/// `broker1` → `("broker", "1")`; `None` without a trailing number.
fn split_number(name: &str) -> Option<(&str, &str)> {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    (stem.len() < name.len()).then(|| (stem, &name[stem.len()..]))
}

/// The broker-sibling rule of the module docs.
pub fn broker_siblings(a: &Path, b: &Path) -> bool {
    let ca: Vec<Component> = a.components().collect();
    let cb: Vec<Component> = b.components().collect();
    let common = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&ca[common..], &cb[common..]);
    if ra.len() != rb.len() || ra.len() < 2 || ra[1..] != rb[1..] {
        return false;
    }
    let (Some(x), Some(y)) = (ra[0].as_os_str().to_str(), rb[0].as_os_str().to_str()) else {
        return false;
    };
    match (split_number(x), split_number(y)) {
        (Some((sx, nx)), Some((sy, ny))) => sx == sy && nx != ny,
        _ => false,
    }
}

/// Whether two directories of the same topic-partition are replicas of each other (the
/// rule of the module docs), given how the two directories' clusters compare
/// ([`crate::discover::identity::same_cluster`], the notion every join uses): the same cluster id
/// or the same log dir joins, different ids never, and an unknown cluster falls back to the
/// broker-sibling rule. `topic_id` gives each directory's `partition.metadata` topic id (read from the file, or
/// what a bundle recorded of it).
fn are_replicas_with(
    a: &PartitionDir,
    b: &PartitionDir,
    cluster: ClusterMatch,
    topic_id: impl Fn(&PartitionDir) -> Option<[u8; 16]>,
) -> bool {
    let usable = |p: &PartitionDir| {
        p.tp.is_some() && matches!(p.kind, Some(DirKind::Normal) | Some(DirKind::Future { .. }))
    };
    if !usable(a) || !usable(b) || a.tp != b.tp || a.path == b.path {
        return false;
    }
    if let (Some(x), Some(y)) = (topic_id(a), topic_id(b))
        && x != y
    {
        return false;
    }
    match cluster {
        ClusterMatch::SameId | ClusterMatch::SameLogDir => true,
        ClusterMatch::Different => false,
        ClusterMatch::Unknown => broker_siblings(&a.path, &b.path),
    }
}

/// Two live directories of one broker (the same known broker id): captures of one replica
/// taken at different times (a copy before and after an incident, a backup), not two
/// replicas — a broker holds one live log of a partition (`LogManager.loadLogs` refuses
/// "Duplicate log directories"). A `-future` directory beside the live one is the log an
/// inter-log-dir move is filling: compared as before.
fn same_replica_twice(a: &PartitionDir, b: &PartitionDir, sa: &Source, sb: &Source) -> bool {
    let live = |p: &PartitionDir| matches!(p.kind, Some(DirKind::Normal));
    live(a) && live(b) && sa.broker_id.is_some() && sa.broker_id == sb.broker_id
}

/// A scanned copy: its index in `report.partitions` and its inventory entry.
pub type ScannedCopy<'a> = (usize, &'a PartitionDir);

/// The pairs `(i, j)` (indexes into `report.partitions`, `i < j`) of scanned copies that
/// are replicas of each other, with the inventory entry of each.
pub fn replica_pairs<'a>(
    report: &ScanReport,
    inv: &'a Inventory,
) -> Vec<(ScannedCopy<'a>, ScannedCopy<'a>)> {
    let groups = copy_groups(report, inv);
    if groups.is_empty() {
        return Vec::new();
    }
    let ids = Identities::load(inv);
    let recorded_id = |p: &PartitionDir| topic_id_in(inv, p);
    let mut out = Vec::new();
    for copies in groups {
        for (n, &(i, a)) in copies.iter().enumerate() {
            for &(j, b) in &copies[n + 1..] {
                let (sa, sb) = (ids.source(a), ids.source(b));
                let m = same_cluster(&sa, &sb);
                if are_replicas_with(a, b, m, recorded_id) && !same_replica_twice(a, b, &sa, &sb) {
                    out.push(((i, a), (j, b)));
                }
            }
        }
    }
    out
}

/// The scanned directories of one topic-partition, in groups of two or more (report order
/// within a group), each with its inventory entry: the candidates of every join between
/// copies of a partition.
pub(crate) fn copy_groups<'a>(
    report: &ScanReport,
    inv: &'a Inventory,
) -> Vec<Vec<ScannedCopy<'a>>> {
    // The reports in topic-partition order (stable: report order among copies), then each
    // run of two or more copies matched to its inventory entries. One index per report
    // and, only with copies, one borrowed path per directory: an inventory of 100 000
    // partitions without copies costs ≈ 0.4 MB here, not a map of every path and group.
    let parts = &report.partitions;
    let mut order: Vec<u32> = (0..parts.len() as u32).collect();
    order.sort_by_key(|&i| {
        (
            parts[i as usize].topic.as_str(),
            parts[i as usize].partition,
        )
    });
    let key = |i: u32| {
        (
            parts[i as usize].topic.as_str(),
            parts[i as usize].partition,
        )
    };
    let runs: Vec<&[u32]> = order
        .chunk_by(|&a, &b| key(a) == key(b))
        .filter(|run| run.len() >= 2)
        .collect();
    if runs.is_empty() {
        return Vec::new();
    }
    // `Path::to_string_lossy` is the report path's `display().to_string()`, borrowed when
    // the path is UTF-8.
    let by_path: std::collections::HashMap<std::borrow::Cow<'_, str>, &PartitionDir> = inv
        .partitions
        .iter()
        .map(|p| (p.path.to_string_lossy(), p))
        .collect();
    runs.into_iter()
        .map(|run| {
            run.iter()
                .filter_map(|&i| {
                    let p = by_path.get(parts[i as usize].path.as_str())?;
                    Some((i as usize, *p))
                })
                .collect::<Vec<ScannedCopy<'a>>>()
        })
        .filter(|g| g.len() >= 2)
        .collect()
}

fn batch_json(segments: &SegmentNames, k: &Option<BatchKey>) -> serde_json::Value {
    match k {
        None => serde_json::Value::Null,
        Some(k) => json!({
            "base_offset": k.base_offset,
            "last_offset": k.last_offset,
            "crc": k.crc,
            "size": k.size,
            "is_control": k.is_control,
            "producer_id": k.producer_id,
            "producer_epoch": k.producer_epoch,
            "segment": segments.get(k.segment),
            "position": k.position,
        }),
    }
}

fn markers_json(m: &[Marker]) -> serde_json::Value {
    m.iter()
        .take(MAX_LISTED_MARKERS)
        .map(|&(offset, pid, epoch, commit)| {
            json!({
                "offset": offset,
                "producer_id": pid,
                "producer_epoch": epoch,
                "type": if commit { "COMMIT" } else { "ABORT" },
            })
        })
        .collect()
}

fn to_finding(
    topic: &str,
    partition: i32,
    paths: (&str, &str),
    segments: (&SegmentNames, &SegmentNames),
    d: &Divergence,
    truncation: Option<Truncation<'_>>,
) -> Finding {
    let (ma, mb) = &d.markers_only_in;
    let mut msg = format!(
        "replicas {} and {} differ at offset {} ({} batch(es) differ in common range {}..={})",
        paths.0, paths.1, d.first_offset, d.differing_batches, d.common.0, d.common.1
    );
    if !ma.is_empty() || !mb.is_empty() {
        msg.push_str(&format!(
            "; {} COMMIT/ABORT marker(s) only in the first, {} only in the second",
            ma.len(),
            mb.len()
        ));
    }
    let mut evidence = json!({
        "common_range": {"first_offset": d.common.0, "last_offset": d.common.1},
        "first_difference": {
            "offset": d.first_offset,
            "batches": [batch_json(segments.0, &d.first.0), batch_json(segments.1, &d.first.1)],
        },
        "differing_batches": d.differing_batches,
        "compaction_explainable": d.compaction_explainable,
        "markers_only_in": [markers_json(ma), markers_json(mb)],
        "markers_only_in_counts": [ma.len(), mb.len()],
    });
    crate::finding::evidence::merge(
        &mut evidence,
        &crate::finding::evidence::DivergenceJoint {
            copies: vec![paths.0.to_string(), paths.1.to_string()],
        },
    );
    let mut f = Finding::new(Kind::ReplicaDivergence, topic, partition, msg)
        .offset(d.first_offset)
        .evidence(evidence)
        .broker(
            "never notices: followers truncate to the leader's epoch boundaries on fetch, \
             so a divergence inside the common range survives until that replica leads",
        )
        .remediation(
            "find which replica is authoritative (leader epoch history, ISR at the time); \
             reassign or delete the diverged replica so it re-fetches from the leader",
        );
    if let Some(t) = truncation {
        f = with_truncation(f, d, &t);
    }
    if let Some(k) = d.first.0.or(d.first.1) {
        f.position = Some(k.position);
        let names = if d.first.0.is_some() {
            segments.0
        } else {
            segments.1
        };
        f.segment = names.get(k.segment).map(Cow::into_owned);
    }
    f
}

/// Compare every pair of scanned copies that are replicas of the same topic-partition
/// and add a `replica_divergence` finding per diverging pair to the first copy's
/// findings, keeping `finding_range`s and the summary counts right.
#[cfg(feature = "testkit")]
pub fn compare(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) {
    let extra = check(report, inv, opts, &[]);
    report.add_partition_findings(extra);
}

/// `batches` (sorted by base offset) from the first one ending at or above `start`.
fn from_log_start(batches: &[BatchKey], start: i64) -> &[BatchKey] {
    let k = batches
        .iter()
        .position(|b| b.last_offset >= start)
        .unwrap_or(batches.len());
    &batches[k..]
}

/// The replica comparison as a cluster check: a `replica_divergence` finding per diverging
/// pair, keyed by the first copy's partition index.
pub fn check(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    _histories: &[crate::cluster::leadership::ClusterHistory],
) -> BTreeMap<usize, Vec<Finding>> {
    let pairs = replica_pairs(report, inv);
    if pairs.is_empty() {
        return BTreeMap::new();
    }
    // The scan's walk kept every batch key of a copied partition, sorted by base offset;
    // a partition whose results lack them is read (results from elsewhere: sorted) here.
    let mut owned: BTreeMap<usize, CopyBatches> = BTreeMap::new();
    for &((i, a), (j, b)) in &pairs {
        for (k, p) in [(i, a), (j, b)] {
            let carried = &report.partitions[k].carried;
            let inputs = &carried.cluster_inputs;
            let usable = inputs
                .batches
                .as_ref()
                .is_some_and(|b| b.is_sorted_by_key(|x| x.base_offset));
            if !usable && !owned.contains_key(&k) {
                let c = walked_copy(inputs, &carried.segment_names)
                    .unwrap_or_else(|| read_copy_with(p, opts.max_bytes, opts.mmap));
                owned.insert(k, c);
            }
        }
    }
    let copy = |k: usize| -> (&[BatchKey], &SegmentNames) {
        match owned.get(&k) {
            Some(c) => (&c.batches, &c.segments),
            None => {
                let c = &report.partitions[k].carried;
                let batches = c.cluster_inputs.batches.as_deref().unwrap_or(&[]);
                (batches, &c.segment_names)
            }
        }
    };
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    for ((i, di), (j, dj)) in pairs {
        let ((ba, sa), (bb, sb)) = (copy(i), copy(j));
        // Below both copies' log starts no reader fetches from either
        // (`UnifiedLog.read` → `checkLogStartOffset` throws `OffsetOutOfRangeException`,
        // whichever leads), and `deleteOldSegments` removes it: what differs there is never
        // served. The batches wholly below the earlier log start are left out (the loss check
        // counts from the log start too). Above it one copy still serves its own.
        let starts = [i, j].map(|k| report.partitions[k].log_start_offset);
        let start = starts[0].zip(starts[1]).map(|(a, b)| a.min(b));
        let (ba, bb) = match start {
            Some(s) => (from_log_start(ba, s), from_log_start(bb, s)),
            None => (ba, bb),
        };
        // A batch that fails its CRC in either copy is that copy's own damage, reported by
        // its integrity finding: its position is left out of the comparison (a flipped bit
        // in a header changes its key, not what the replicas hold).
        let damaged: BTreeSet<i64> = [i, j]
            .iter()
            .flat_map(|&k| report.partitions[k].carried.damaged().iter())
            .filter(|d| d.remote_segment.is_none())
            .map(|d| d.base_offset)
            .collect();
        let (fa, fb);
        let (ba, bb) = if damaged.is_empty() {
            (ba, bb)
        } else {
            let keep = |k: &[BatchKey]| -> Vec<BatchKey> {
                k.iter()
                    .filter(|x| !damaged.contains(&x.base_offset))
                    .copied()
                    .collect()
            };
            (fa, fb) = (keep(ba), keep(bb));
            (&fa[..], &fb[..])
        };
        let Some(d) = diverge(ba, bb) else {
            let keys = [(ba, sa), (bb, sb)];
            if let Some((k, f)) = tail::acknowledged_tail(report, inv, ((i, di), (j, dj)), keys) {
                extra.entry(k).or_default().push(f);
            }
            continue;
        };
        {
            let r = &report.partitions[i];
            // Each broker's cleaner compacts its own copy on its own schedule
            // (`LogCleaner`; `MemoryRecords.filterTo` keeps a v2 batch's offsets), and
            // nothing reconciles them: on a partition treated as compacted, differences
            // that cleaning alone can make are no divergence. Treated as compacted as the
            // replay reads it (`PartitionReport::compaction`): the stated policy, else the
            // cleaner's traces in either copy's batches (the topic's policy is one).
            let compacted = [i, j]
                .iter()
                .any(|&k| report.partitions[k].compaction().is_some());
            if compacted && d.compaction_explainable {
                continue;
            }
            let lines = lineages(report, inv, ((i, di), (j, dj)));
            let truncation = pending_truncation(report, &lines, &d).map(|(k, to_offset)| {
                let p = &report.partitions[k];
                let raft = crate::discover::layout::is_kraft_metadata(&p.topic);
                let dir = if k == i { di } else { dj };
                Truncation {
                    path: &p.path,
                    to_offset,
                    high_watermark: p.high_watermark,
                    raft,
                    // Read only for the metadata log (a diverging pair of its copies).
                    snapshot_end: raft
                        .then(|| crate::cluster::leadership::load::newest_snapshot_end(inv, dir))
                        .flatten(),
                }
            });
            let no_epochs = truncation
                .is_none()
                .then(|| without_epochs(report, &lines))
                .flatten();
            let mut f = to_finding(
                &r.topic,
                r.partition,
                (&r.path, &report.partitions[j].path),
                (sa, sb),
                &d,
                truncation,
            );
            if let Some(hws) = no_epochs {
                f = with_high_watermarks(f, &d, hws);
            } else if epochs_in_one_copy(&lines[0], &lines[1]) {
                f = with_epochs_in_one_copy(f);
            }
            extra.entry(i).or_default().push(f);
        }
    }
    extra
}
