//! A transaction a copy holds open whose marker another copy of the partition already has:
//! the copy is a follower that has not fetched the marker yet.
//!
//! A follower appends what the leader has as it fetches (`ReplicaFetcherThread.
//! processPartitionData` → `UnifiedLog.appendAsFollower`), and serves no read past its high
//! watermark, the leader's bounded by its own log end (`UnifiedLog.maybeUpdateHighWatermark`):
//! a follower behind the leader — out of the ISR, or stopped — holds the transaction's data
//! without its COMMIT/ABORT until its next fetch, and pins no last stable offset anyone reads.
//! When another live copy of the same topic-partition in the same cluster holds a marker of
//! the producer past this copy's log end, at an epoch no lower than the transaction's, this
//! copy's `hanging_transaction` is that, not a hanging transaction: it becomes
//! `open_transaction` (info) naming the copy that holds the marker. Run before the cluster
//! checks, which then judge the transaction where it is closed.

use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::finding::{Kind, Severity};
use serde_json::json;
use std::collections::HashMap;

/// Whether `p` is behind `o` on the same history from offset `first` on: every batch `p`
/// holds from there is in `o` too, byte for byte (its offsets and CRC), and `p`'s newest
/// leader epoch starts in `o`'s lineage where it starts in `p`'s — a copy elected leader
/// at a later epoch (which records it at its log end, `UnifiedLog.maybeAssignEpochStartOffset`)
/// or a diverging one is not behind: the old leader's later marker is not its to fetch.
fn behind_on_same_history(
    p: &crate::partition::results::PartitionReport,
    o: &crate::partition::results::PartitionReport,
    first: i64,
) -> bool {
    if !lineage_holds(&p.carried.leader_epochs, &o.carried.leader_epochs) {
        return false;
    }
    let (Some(mine), Some(theirs)) = (
        p.carried.cluster_inputs.batches.as_deref(),
        o.carried.cluster_inputs.batches.as_deref(),
    ) else {
        return false;
    };
    let sorted = theirs.is_sorted_by_key(|x| x.base_offset);
    let held = |b: &crate::partition::walked::BatchKey| {
        let same = |x: &crate::partition::walked::BatchKey| {
            (x.base_offset, x.last_offset, x.crc) == (b.base_offset, b.last_offset, b.crc)
        };
        if sorted {
            let at = theirs.partition_point(|x| x.base_offset < b.base_offset);
            theirs[at..]
                .iter()
                .take_while(|x| x.base_offset == b.base_offset)
                .any(same)
        } else {
            theirs.iter().any(same)
        }
    };
    mine.iter().filter(|b| b.base_offset >= first).all(held)
}

/// The newest leader epoch a copy knows, from its batches and its `leader-epoch-checkpoint`
/// (a leader records its epoch at its log end before any write); `None` when its checkpoint
/// could not be read (then whether it is behind is not known) or it has no epoch at all.
fn newest_epoch(
    inv: &crate::discover::layout::Inventory,
    dirs: &HashMap<String, &crate::discover::layout::PartitionDir>,
    r: &crate::partition::results::PartitionReport,
) -> Option<i32> {
    let batches = r.carried.leader_epochs.last().map(|e| e.0);
    let file = match dirs
        .get(&r.path)
        .map(|d| crate::cluster::epoch_file::read(inv, d))
    {
        Some(Ok(entries)) => entries.and_then(|e| e.last().map(|e| e.epoch)),
        Some(Err(_)) => return None,
        None => None,
    };
    batches.max(file)
}

/// Whether lineage `ol` holds `pl`'s newest entry: the same epoch starting at the same
/// offset, compared from the later of the two lineages' first starts (each copy's first
/// entry starts at its own first batch: retention runs on every replica at its own pace).
fn lineage_holds(pl: &[(i32, i64)], ol: &[(i32, i64)]) -> bool {
    let Some(&(epoch, at)) = pl.last() else {
        return true;
    };
    let from = match (pl.first(), ol.first()) {
        (Some(p), Some(o)) => p.1.max(o.1),
        _ => return false,
    };
    ol.iter()
        .any(|&(e, s)| e == epoch && s.max(from) == at.max(from))
}

/// Rewrite, in place, every `hanging_transaction` of a live copy whose marker a later-
/// reaching live copy of the same partition holds.
pub(crate) fn demote_unreplicated_markers(
    report: &mut ScanReport,
    inv: &crate::discover::layout::Inventory,
) {
    let candidate = |p: &crate::partition::results::PartitionReport| {
        p.source.copy.is_live() && p.carried.cluster_inputs.batches.is_some()
    };
    // Only the topic-partitions where a kept copy holds a hanging transaction are looked at
    // (most scans have none: nothing indexed, no checkpoint read).
    let hanging: std::collections::HashSet<(&str, i32)> = (0..report.partitions.len())
        .filter(|&i| candidate(&report.partitions[i]))
        .filter(|&i| {
            (report.partition_findings(i).iter()).any(|f| f.kind == Kind::HangingTransaction)
        })
        .map(|i| {
            (
                report.partitions[i].topic.as_str(),
                report.partitions[i].partition,
            )
        })
        .collect();
    if hanging.is_empty() {
        return;
    }
    let mut by_tp: HashMap<(&str, i32), Vec<usize>> = HashMap::new();
    for (i, p) in report.partitions.iter().enumerate() {
        let tp = (p.topic.as_str(), p.partition);
        if candidate(p) && hanging.contains(&tp) {
            by_tp.entry(tp).or_default().push(i);
        }
    }
    // The directories of those copies only.
    let wanted: std::collections::HashSet<&str> = (by_tp.values().flatten())
        .map(|&i| report.partitions[i].path.as_str())
        .collect();
    let dirs: HashMap<String, &crate::discover::layout::PartitionDir> = (inv.partitions.iter())
        .map(|d| (d.path.display().to_string(), d))
        .filter(|(p, _)| wanted.contains(p.as_str()))
        .collect();
    // Each candidate copy's newest leader epoch, its batches' and its checkpoint's.
    let mut newest: HashMap<usize, Option<i32>> = HashMap::new();
    let mut newest_of = |i: usize, report: &ScanReport| -> Option<i32> {
        *newest
            .entry(i)
            .or_insert_with(|| newest_epoch(inv, &dirs, &report.partitions[i]))
    };
    let mut rewrites: Vec<(usize, String, i64, bool)> = Vec::new();
    for copies in by_tp.values().filter(|c| c.len() > 1) {
        for &i in copies {
            let p = &report.partitions[i];
            let Some(end) = p.log_end_offset else {
                continue;
            };
            for (k, f) in report.partition_findings(i).iter().enumerate() {
                if f.kind != Kind::HangingTransaction {
                    continue;
                }
                let (Some(pid), Some(epoch), Some(first)) =
                    (f.producer_id, f.producer_epoch, f.offset)
                else {
                    continue;
                };
                let holder = copies.iter().filter(|&&j| j != i).find_map(|&j| {
                    let o = &report.partitions[j];
                    if !same_cluster(&p.source, &o.source).is_same()
                        || !behind_on_same_history(p, o, first)
                    {
                        return None;
                    }
                    // A copy at a later epoch than the holder's (elected leader since,
                    // with nothing written: its checkpoint has the epoch) is not behind.
                    match (newest_of(i, report), newest_of(j, report)) {
                        (Some(mine), Some(theirs)) if mine <= theirs => {}
                        (Some(_), Some(_)) => return None,
                        (None, _) | (_, None) => return None,
                    }
                    o.carried
                        .cluster_inputs
                        .batches
                        .as_deref()?
                        .iter()
                        .find(|b| {
                            b.is_control
                                && b.producer_id == pid
                                && b.producer_epoch >= epoch
                                && b.base_offset > first
                                && b.base_offset >= end
                                && b.marker.is_some()
                        })
                        .map(|b| (o.path.clone(), b.base_offset, b.marker == Some(true)))
                });
                if let Some((path, at, commit)) = holder {
                    let start = p.carried.finding_range.start;
                    rewrites.push((start + k, path, at, commit));
                }
            }
        }
    }
    if rewrites.is_empty() {
        return;
    }
    for (idx, path, at, commit) in rewrites {
        let f = &mut report.findings[idx];
        let marker = if commit { "COMMIT" } else { "ABORT" };
        f.drop_lso_clause();
        f.message = format!(
            "{} — not yet replicated to this copy: {path} holds its {marker} marker at offset {at}, past this copy's log end (a follower behind the leader appends it at its next fetch, and serves no read past its high watermark meanwhile)",
            f.message
        );
        f.kind = Kind::OpenTransaction;
        f.severity = Severity::Info;
        if let Some(e) = f.evidence.as_object_mut() {
            e.insert(
                "marker_on_replica".into(),
                json!({"path": path, "offset": at, "commit": commit}),
            );
        }
        f.broker_behaviour = "a follower appends the marker at its next fetch (ReplicaFetcherThread.processPartitionData); until then it serves no read past its high watermark, so no last stable offset is pinned by this copy".into();
        f.client_error = Some("none: the transaction is closed on the copy consumers read".into());
        f.remediation = None;
    }
    report.recount_findings();
}

#[cfg(test)]
mod tests {
    use super::lineage_holds;

    /// A follower behind holds the leader's newest epoch whatever its own log start; a copy
    /// at a later epoch, or one whose newest epoch starts elsewhere, does not.
    #[test]
    fn a_lineage_is_held_from_the_later_first_start() {
        let leader = [(3, 0), (5, 980)];
        // Retention moved the follower's start past epoch 5's start on the leader.
        assert!(lineage_holds(&[(5, 1000)], &leader));
        assert!(lineage_holds(&[(3, 10), (5, 980)], &leader));
        assert!(lineage_holds(&[], &leader));
        // Elected at a later epoch (recorded at its log end), or epoch 5 from elsewhere.
        assert!(!lineage_holds(&[(5, 980), (6, 1200)], &leader));
        assert!(!lineage_holds(&[(3, 0), (5, 990)], &leader));
        assert!(!lineage_holds(&[(5, 1000)], &[]));
    }
}
