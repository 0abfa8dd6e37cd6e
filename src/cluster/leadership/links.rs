//! `caused_by` links from the findings an unclean election explains to its finding:
//!
//! * a `replica_divergence` between replicas whose leader-epoch lineages fork at the epoch
//!   the unclean election began (the replicas agree up to the epoch before; one holds what
//!   the old leader wrote, the other what the new leader wrote from the same offsets on);
//! * a `hanging_transaction` whose COMMIT/ABORT exists only on the replica of the broker
//!   that lost the election: the new leader's log never got the marker, so its transaction
//!   stays open (KAFKA-20716).

use super::ClusterHistory;
use super::check::ElectionLink;
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::finding::Kind;
use crate::partition::results::PartitionReport;

/// The first epoch at which two lineages differ, and the last epoch they share.
pub(crate) fn fork(a: &[(i32, i64)], b: &[(i32, i64)]) -> Option<(Option<i32>, i32)> {
    // Compared from the later log start: retention or cleaning moves a copy's first entry
    // up to its log start (`truncateFromStart`), which is no fork.
    let (a, b) = match (a.first(), b.first()) {
        (Some(x), Some(y)) => {
            let start = x.1.max(y.1);
            (from_start(a, start), from_start(b, start))
        }
        _ => (a.to_vec(), b.to_vec()),
    };
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let last = common.checked_sub(1).map(|i| a[i].0);
    match (a.get(common), b.get(common)) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some((last, x.0)),
        (Some(x), Some(y)) => Some((last, x.0.min(y.0))),
    }
}

/// A lineage as `LeaderEpochFileCache.truncateFromStart(start)` leaves it: of the entries
/// starting at or below `start`, the newest, moved up to start there.
fn from_start(l: &[(i32, i64)], start: i64) -> Vec<(i32, i64)> {
    let below = l.iter().take_while(|e| e.1 <= start).count();
    let mut out: Vec<(i32, i64)> = Vec::with_capacity(l.len());
    if below > 0 {
        out.push((l[below - 1].0, start));
    }
    out.extend_from_slice(&l[below..]);
    out
}

/// The unclean election between `last` (exclusive) and `epoch` (inclusive), the latest.
fn election_at<'a>(
    links: &[&'a ElectionLink],
    last: Option<i32>,
    epoch: i32,
) -> Option<&'a ElectionLink> {
    links
        .iter()
        .filter(|l| l.epoch <= epoch && last.is_none_or(|c| l.epoch > c))
        .max_by_key(|l| l.epoch)
        .copied()
}

fn other_copies<'a>(
    report: &'a ScanReport,
    me: &'a PartitionReport,
) -> impl Iterator<Item = &'a PartitionReport> + 'a {
    report.partitions.iter().filter(move |p| {
        p.topic == me.topic
            && p.partition == me.partition
            && p.path != me.path
            && p.source.copy.is_live()
            && same_cluster(&me.source, &p.source).is_same()
    })
}

/// Whether `p`'s kept batch headers hold a COMMIT/ABORT of `pid` above `offset`
/// (`None`: its headers were not kept).
fn has_marker_after(p: &PartitionReport, pid: i64, offset: i64) -> Option<bool> {
    let batches = p.carried.cluster_inputs.batches.as_ref()?;
    Some(
        batches
            .iter()
            .any(|b| b.marker.is_some() && b.producer_id == pid && b.base_offset > offset),
    )
}

/// Add the links to `report`'s findings.
pub(super) fn apply(
    report: &mut ScanReport,
    inv: &crate::discover::layout::Inventory,
    _histories: &[ClusterHistory],
    links: &[ElectionLink],
) {
    let by_tp = super::check::by_partition(links);
    let mut add: Vec<(usize, String)> = Vec::new();
    for (fi, f) in report.findings.iter().enumerate() {
        let Some(mine) = by_tp.get(&(f.topic.as_str(), f.partition)) else {
            continue;
        };
        let Some(me) = report
            .partitions
            .iter()
            .find(|p| p.source.path.is_some() && p.source.path == f.source.path)
        else {
            continue;
        };
        // Elections of another incarnation of the topic (deleted and created again under
        // its name) explain nothing in this directory.
        let mine: Vec<&ElectionLink> = mine
            .iter()
            .copied()
            .filter(|l| !super::loss::other_incarnation(inv, &me.path, &l.topic_id))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mine = &mine;
        match f.kind {
            Kind::ReplicaDivergence => {
                let link = other_copies(report, me)
                    .filter_map(|o| fork(&me.carried.leader_epochs, &o.carried.leader_epochs))
                    .filter_map(|(last, epoch)| election_at(mine, last, epoch))
                    .min_by_key(|l| l.epoch);
                if let Some(l) = link {
                    add.push((fi, l.key.clone()));
                }
            }
            Kind::HangingTransaction => {
                let (Some(pid), Some(offset)) = (f.producer_id, f.offset) else {
                    continue;
                };
                if has_marker_after(me, pid, offset) == Some(true) {
                    continue;
                }
                for l in mine.iter() {
                    let Some(loser) = l.loser else { continue };
                    let marker_on_loser = other_copies(report, me).any(|o| {
                        o.source.broker_id == Some(loser)
                            && has_marker_after(o, pid, offset) == Some(true)
                    });
                    if marker_on_loser && me.source.broker_id != Some(loser) {
                        add.push((fi, l.key.clone()));
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    for (fi, key) in add {
        let f = &mut report.findings[fi];
        if !f.caused_by.contains(&key) {
            f.caused_by.push(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fork;

    /// Lineages are compared from the later log start: retention that moved one copy's
    /// first entry up (epoch 3 from 0 on one, from 40 on the other) is no fork; a
    /// different epoch after it is.
    #[test]
    fn a_trimmed_lineage_is_no_fork() {
        let full = [(3, 0), (5, 50), (7, 80)];
        let trimmed = [(3, 40), (5, 50), (7, 80)];
        assert_eq!(fork(&full, &trimmed), None);
        let forked = [(3, 40), (5, 50), (8, 80)];
        assert_eq!(fork(&full, &forked), Some((Some(5), 7)));
        // Epoch 5 trimmed to 60 on one copy: both start at epoch 5 from 60, then agree.
        assert_eq!(fork(&full, &[(5, 60), (7, 80)]), None);
    }
}
