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
//! `links`), a fork the history does not explain, and a tail either copy's high-watermark
//! checkpoint covers (committed records: an ISR member that lost its unflushed tail in an
//! unclean shutdown may still be elected, the failure KIP-966's ELR closes) keep their
//! severity.

use super::ClusterHistory;
use super::elections::{Choice, Election};
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::finding::{Kind, Severity};
use serde_json::json;
use std::collections::HashMap;

/// An election with the history that holds it.
type Elected<'a> = (&'a ClusterHistory, &'a Election);

/// Lower, in place, the divergences a clean election explains (true when one was).
pub(super) fn apply(
    report: &mut ScanReport,
    inv: &crate::discover::layout::Inventory,
    histories: &[ClusterHistory],
) -> bool {
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
        if f.kind != Kind::ReplicaDivergence
            || f.severity != Severity::Warning
            || !f.caused_by.is_empty()
        {
            continue;
        }
        let Some(copies) = f.evidence.get("copies").and_then(|c| c.as_array()) else {
            continue;
        };
        let copy = |k: usize| {
            let path = copies.get(k)?.as_str()?;
            by_path.get(path).map(|&i| &report.partitions[i])
        };
        let (Some(a), Some(b)) = (copy(0), copy(1)) else {
            continue;
        };
        let Some((_, epoch)) =
            super::links::fork(&a.carried.leader_epochs, &b.carried.leader_epochs)
        else {
            continue;
        };
        // Where the new epoch starts: the earlier of the copies' starts of it.
        let Some(start) = (a.carried.leader_epochs.iter())
            .chain(&b.carried.leader_epochs)
            .filter(|e| e.0 == epoch)
            .map(|e| e.1)
            .min()
        else {
            continue;
        };
        // The copy holding the old tail is the one whose lineage does not start the new
        // epoch there; its checkpoint at or below that start: nothing of the tail was
        // committed as far as it recorded (one copy only: both holding the epoch there is
        // no such fork).
        let has_epoch = |c: &crate::partition::results::PartitionReport| {
            c.carried.leader_epochs.contains(&(epoch, start))
        };
        let old = match (has_epoch(a), has_epoch(b)) {
            (true, false) => b,
            (false, true) => a,
            _ => continue,
        };
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
