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

/// Whether every batch `p` holds from offset `first` on is in `o` too, byte for byte (its
/// offsets and CRC): `p` is behind `o` on the same history, not a diverging copy (after an
/// unclean election the old leader's later marker is not the new leader's to fetch).
fn prefix_from(
    p: &crate::partition::results::PartitionReport,
    o: &crate::partition::results::PartitionReport,
    first: i64,
) -> bool {
    let (Some(mine), Some(theirs)) = (
        p.carried.cluster_inputs.batches.as_deref(),
        o.carried.cluster_inputs.batches.as_deref(),
    ) else {
        return false;
    };
    let held: std::collections::HashSet<(i64, i64, u32)> = theirs
        .iter()
        .map(|b| (b.base_offset, b.last_offset, b.crc))
        .collect();
    mine.iter()
        .filter(|b| b.base_offset >= first)
        .all(|b| held.contains(&(b.base_offset, b.last_offset, b.crc)))
}

/// Rewrite, in place, every `hanging_transaction` of a live copy whose marker a later-
/// reaching live copy of the same partition holds.
pub(crate) fn demote_unreplicated_markers(report: &mut ScanReport) {
    let mut by_tp: HashMap<(&str, i32), Vec<usize>> = HashMap::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if p.source.copy.is_live() && p.carried.cluster_inputs.batches.is_some() {
            by_tp
                .entry((p.topic.as_str(), p.partition))
                .or_default()
                .push(i);
        }
    }
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
                    if !same_cluster(&p.source, &o.source).is_same() || !prefix_from(p, o, first) {
                        return None;
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
        if let Some(cut) = f.message.find("; the last stable offset ") {
            f.message.truncate(cut);
        }
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
