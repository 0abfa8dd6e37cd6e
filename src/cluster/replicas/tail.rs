//! Two copies that agree over the offsets both hold, one of them behind in leader epochs and
//! longer: following the other, it truncates past the other's log end
//! (`AbstractFetcherThread.getOffsetTruncationState`; `Partition.readRecords` answers its
//! last fetched epoch with the leader's end of that epoch, below its fetch offset,
//! `PartitionTest.testLastFetchedOffsetValidation`), and its records from there are ones the
//! other copy lacks. Said only when those records lie below its checkpointed high watermark:
//! acknowledged records lost, as an unclean election loses them (a tail at or above it is
//! the normal remains of a failover: the old leader's unreplicated writes).

use super::{BatchKey, ScannedCopy, SegmentNames};
use crate::cluster::report::ScanReport;
use crate::discover::layout::{DirKind, Inventory};
use crate::finding::{Finding, Kind, Severity};
use serde_json::json;

/// One copy's batch keys (from the comparison's start) and segment names.
pub(super) type Keys<'a> = (&'a [BatchKey], &'a SegmentNames);

/// The finding for the acknowledged tail of pair `(a, b)` whose batches `keys` do not
/// differ where both hold offsets, keyed by the copy that loses it.
pub(super) fn acknowledged_tail(
    report: &ScanReport,
    inv: &Inventory,
    (a, b): (ScannedCopy<'_>, ScannedCopy<'_>),
    keys: [Keys<'_>; 2],
) -> Option<(usize, Finding)> {
    // A `-future` log follows the live one and never leads; the metadata log has no
    // checkpointed high watermark (its own truncation is `KafkaRaftClient`'s).
    let live = |(_, d): ScannedCopy<'_>| !matches!(d.kind, Some(DirKind::Future { .. }));
    let (pa, pb) = (&report.partitions[a.0], &report.partitions[b.0]);
    if !live(a) || !live(b) || crate::discover::layout::is_kraft_metadata(&pa.topic) {
        return None;
    }
    // Cheap first: the longer copy's checkpoint must cover offsets past the shorter's end.
    let (ea, eb) = (pa.log_end_offset?, pb.log_end_offset?);
    let (long, short_end) = if ea > eb { (pa, eb) } else { (pb, ea) };
    if long.high_watermark.is_none_or(|h| h <= short_end) {
        return None;
    }
    let lines = super::truncation::lineages(report, inv, (a, b));
    let latest = |k: usize| lines[k].1.last().map(|e| e.0);
    let (behind, ahead) = match latest(0)?.cmp(&latest(1)?) {
        std::cmp::Ordering::Less => (0, 1),
        std::cmp::Ordering::Greater => (1, 0),
        std::cmp::Ordering::Equal => return None,
    };
    let (rb, ra) = (
        &report.partitions[lines[behind].0],
        &report.partitions[lines[ahead].0],
    );
    let (end, other_end, hw) = (rb.log_end_offset?, ra.log_end_offset?, rb.high_watermark?);
    let to = super::truncation_point(&lines[behind].1, end, &lines[ahead].1, other_end)?;
    let from = to.max(other_end);
    if from >= end || from >= hw {
        return None;
    }
    let (kb, names) = keys[behind];
    let batch = kb.iter().find(|k| k.last_offset >= from);
    let common = common_range(keys[0].0, keys[1].0);
    let acked_end = hw.min(end);
    let message = format!(
        "replicas {} and {} hold the same batches where both hold offsets{}, but {} is behind in leader epochs and holds offsets {from}..{} past the other's log end {other_end}: following the other it truncates to offset {to} (AbstractFetcherThread.getOffsetTruncationState) and its records at [{from}, {acked_end}), below its checkpointed high watermark {hw}, are removed and the other copy lacks them — acknowledged data lost",
        pa.path,
        pb.path,
        common.map_or_else(String::new, |(f, l)| format!(" ({f}..={l})")),
        rb.path,
        end - 1,
    );
    let mut evidence = json!({
        "common_range": common.map(|(f, l)| json!({"first_offset": f, "last_offset": l})),
        "tail": {"replica": rb.path, "first_offset": from, "log_end_offset": end, "other_log_end_offset": other_end},
        "truncation": {"replica": rb.path, "to_offset": to, "high_watermark": hw, "acknowledged": true},
    });
    crate::finding::evidence::merge(
        &mut evidence,
        &crate::finding::evidence::DivergenceJoint {
            copies: vec![pa.path.clone(), pb.path.clone()],
        },
    );
    let mut f = Finding::new(Kind::ReplicaDivergence, &rb.topic, rb.partition, message)
        .offset(from)
        .evidence(evidence)
        .broker(format!(
            "the replica behind in leader epochs truncates to offset {to} when it follows (AbstractFetcherThread.getOffsetTruncationState) and its records from offset {from} are gone from it"
        ))
        .remediation(format!(
            "copy {}'s directory before it follows (the other copy lacks its acknowledged offsets [{from}, {acked_end})); look for the unclean election in the leadership history (klogscan history)",
            rb.path
        ));
    f.severity = Severity::Error;
    if let Some(k) = batch {
        f.position = Some(k.position);
        f.segment = names.get(k.segment).map(std::borrow::Cow::into_owned);
    }
    Some((lines[behind].0, f))
}

/// `[first, last]` offsets both copies' batches cover, when they overlap.
fn common_range(a: &[BatchKey], b: &[BatchKey]) -> Option<(i64, i64)> {
    let first = a.first()?.base_offset.max(b.first()?.base_offset);
    let last = a.last()?.last_offset.min(b.last()?.last_offset);
    (first <= last).then_some((first, last))
}
