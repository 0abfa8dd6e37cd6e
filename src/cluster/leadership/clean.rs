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
//! `links`) and a fork the history does not explain keep their severity.

use super::ClusterHistory;
use super::elections::Choice;
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::finding::{Kind, Severity};
use serde_json::json;

/// Lower, in place, the divergences a clean election explains (true when one was).
pub(super) fn apply(
    report: &mut ScanReport,
    inv: &crate::discover::layout::Inventory,
    histories: &[ClusterHistory],
) -> bool {
    let mut soften: Vec<(usize, String, serde_json::Value)> = Vec::new();
    for (fi, f) in report.findings.iter().enumerate() {
        if f.kind != Kind::ReplicaDivergence
            || f.severity < Severity::Warning
            || !f.caused_by.is_empty()
        {
            continue;
        }
        let Some(copies) = f.evidence.get("copies").and_then(|c| c.as_array()) else {
            continue;
        };
        let path = |k: usize| copies.get(k).and_then(|v| v.as_str());
        let find = |p: &str| report.partitions.iter().find(|r| r.path == p);
        let (Some(a), Some(b)) = (path(0).and_then(find), path(1).and_then(find)) else {
            continue;
        };
        let Some((_, epoch)) =
            super::links::fork(&a.carried.leader_epochs, &b.carried.leader_epochs)
        else {
            continue;
        };
        // Where the new epoch starts, on the copy that has it.
        let Some(start) = a
            .carried
            .leader_epochs
            .iter()
            .chain(&b.carried.leader_epochs)
            .find(|e| e.0 == epoch)
            .map(|e| e.1)
        else {
            continue;
        };
        if f.offset.is_none_or(|o| o < start) {
            continue;
        }
        let election = histories
            .iter()
            .filter(|h| same_cluster(&h.source, &a.source).is_same())
            .flat_map(|h| h.elections.iter())
            .find(|e| {
                e.topic == a.topic
                    && e.partition == a.partition
                    && e.leader_epoch == epoch
                    && !super::loss::other_incarnation(inv, &a.path, &e.topic_id)
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
