//! A `replica_divergence` the metadata log explains as the routine end of a clean leader
//! change: the two copies' leader-epoch lineages fork at an epoch the controller gave to a
//! member of the ISR (or, with the ISR empty, of the ELR), and the copies differ only from
//! that epoch's start on.
//!
//! A leader chosen from the ISR holds every committed record (`PartitionChangeBuilder.
//! isValidNewLeader`; the ELR keeps that guarantee, KIP-966): what the old leader holds past
//! the new epoch's start was never committed — written above its high watermark, answered at
//! most to an `acks=1` producer — and it truncates it at its next fetch as a follower
//! (`AbstractFetcherThread.truncateToEpochEndOffsets`, KIP-101/279). A copy stopped before
//! that fetch (a controlled shutdown moves leadership away and stops the fetchers of
//! replicas out of the ISR, `ReplicaManager.applyLocalFollowersDelta`) keeps the tail on
//! disk. The divergence is then info, saying so; an unclean election (linked by
//! `links`), a fork the history does not explain, and a tail the old tail's copy's
//! high-watermark checkpoint covers (committed records: an ISR member that lost its unflushed tail in an
//! unclean shutdown may still be elected, the failure KIP-966's ELR closes) keep their
//! severity.

use super::ClusterHistory;
use super::elections::{Choice, Election};
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::finding::evidence::DivergenceJoint;
use crate::finding::{Kind, Severity};
use serde_json::json;
use std::collections::HashMap;

/// An election with the history that holds it.
type Elected<'a> = (&'a ClusterHistory, &'a Election);

/// The new leader's epoch and its start where two lineages fork after their last shared
/// epoch `last`, and whether the second lineage holds it: each copy's first epoch after
/// `last`, the newer of the two (when both fork at one position, the smaller epoch is the
/// old leader's own); `None` when neither goes on or both go on with the same epoch.
fn new_epoch(last: Option<i32>, a: &[(i32, i64)], b: &[(i32, i64)]) -> Option<((i32, i64), bool)> {
    let first_after = |l: &[(i32, i64)]| l.iter().find(|e| last.is_none_or(|c| e.0 > c)).copied();
    match (first_after(a), first_after(b)) {
        (Some(x), Some(y)) if x.0 > y.0 => Some((x, false)),
        (Some(x), Some(y)) if y.0 > x.0 => Some((y, true)),
        (Some(x), None) => Some((x, false)),
        (None, Some(y)) => Some((y, true)),
        _ => None,
    }
}

/// Lower, in place, the divergences a clean election explains (true when one was).
pub(super) fn apply(
    report: &mut ScanReport,
    inv: &crate::discover::layout::Inventory,
    histories: &[ClusterHistory],
) -> bool {
    let candidate = |f: &crate::finding::Finding| {
        f.kind == Kind::ReplicaDivergence
            && f.severity == Severity::Warning
            && f.caused_by.is_empty()
    };
    if !report.findings.iter().any(candidate) {
        return false;
    }
    let mut soften: Vec<(usize, String, serde_json::Value)> = Vec::new();
    let by_path: HashMap<&str, usize> = (report.partitions.iter().enumerate())
        .map(|(i, p)| (p.path.as_str(), i))
        .collect();
    // Each history's elections by topic-partition and the epoch they began.
    let elections: HashMap<(&str, i32, i32), Vec<Elected<'_>>> = histories
        .iter()
        .flat_map(|h| h.elections.iter().map(move |e| (h, e)))
        .fold(HashMap::new(), |mut m, (h, e)| {
            m.entry((e.topic.as_str(), e.partition, e.leader_epoch))
                .or_default()
                .push((h, e));
            m
        });
    for (fi, f) in report.findings.iter().enumerate() {
        // An error says the behind copy's own high-watermark checkpoint covered what it
        // loses (`replicas::truncation`): committed records, whatever the election.
        if !candidate(f) {
            continue;
        }
        let copies = crate::finding::evidence::read::<DivergenceJoint>(f).copies;
        let copy = |k: usize| {
            let path = copies.get(k)?;
            by_path.get(path.as_str()).map(|&i| &report.partitions[i])
        };
        let (Some(a), Some(b)) = (copy(0), copy(1)) else {
            continue;
        };
        let Some((last, _)) =
            super::links::fork(&a.carried.leader_epochs, &b.carried.leader_epochs)
        else {
            continue;
        };
        let Some(((epoch, start), b_is_new)) =
            new_epoch(last, &a.carried.leader_epochs, &b.carried.leader_epochs)
        else {
            continue;
        };
        let old = if b_is_new { a } else { b };
        // The old tail's copy's checkpoint at or below the new epoch's start: nothing of
        // the tail was committed as far as it recorded (the new leader's passes the start
        // as soon as it writes).
        let committed_past = old.high_watermark.is_none_or(|hw| hw > start);
        if f.offset.is_none_or(|o| o < start) || committed_past {
            continue;
        }
        let election = elections
            .get(&(a.topic.as_str(), a.partition, epoch))
            .into_iter()
            .flatten()
            .filter(|(h, _)| same_cluster(&h.source, &a.source).is_same())
            .map(|(_, e)| *e)
            .find(|e| {
                !super::loss::other_incarnation(inv, &a.path, &e.topic_id)
                    && !super::loss::other_incarnation(inv, &b.path, &e.topic_id)
            });
        let Some(e) = election.filter(|e| matches!(e.choice, Choice::Isr | Choice::Elr)) else {
            continue;
        };
        let from = if e.choice == Choice::Isr {
            "ISR"
        } else {
            "ELR"
        };
        let clause = format!(
            "; but the metadata log shows the change into epoch {epoch} (metadata offset {}) chose broker {} from the {from}: what a copy holds past offset {start} at an earlier epoch was never committed, and that copy truncates it at its next fetch as a follower",
            e.offset, e.leader
        );
        let ev = json!({"epoch": epoch, "epoch_start": start, "metadata_offset": e.offset, "leader": e.leader, "chosen_from": from});
        soften.push((fi, clause, ev));
    }
    let any = !soften.is_empty();
    for (fi, clause, ev) in soften {
        let f = &mut report.findings[fi];
        f.message.push_str(&clause);
        f.severity = Severity::Info;
        if let Some(m) = f.evidence.as_object_mut() {
            m.insert("clean_election".into(), ev);
        }
        f.broker_behaviour = "the copy behind the new epoch truncates its uncommitted tail at its next fetch from the leader (AbstractFetcherThread.truncateToEpochEndOffsets, KIP-101/279); nothing committed differs".into();
        f.remediation = None;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::new_epoch;

    /// The newer epoch after the shared ones is the new leader's, on whichever copy holds
    /// it; both going on at one position, the larger wins (the smaller is the old leader's).
    #[test]
    fn the_new_epoch_is_the_newer_after_the_fork() {
        let (old, new) = ([(4, 0), (5, 100)], [(4, 0), (6, 100)]);
        assert_eq!(new_epoch(Some(4), &old, &new), Some(((6, 100), true)));
        assert_eq!(new_epoch(Some(4), &new, &old), Some(((6, 100), false)));
        assert_eq!(new_epoch(Some(4), &[(4, 0)], &new), Some(((6, 100), true)));
        assert_eq!(new_epoch(Some(4), &[(4, 0)], &[(4, 0)]), None);
        assert_eq!(new_epoch(None, &[(1, 0)], &[(2, 0)]), Some(((2, 0), true)));
    }
}
