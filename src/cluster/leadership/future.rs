//! `abandoned_future_replica`: a `-future` copy (an inter-log-dir move in progress) that the
//! cluster's metadata, as of the metadata log's end, already assigns to its log dir.
//!
//! A KRaft broker moving a replica between its log dirs (KIP-858, 3.7 and later) tells the
//! controller the new directory once the `-future` copy has caught up
//! (`AssignReplicasToDirs`), then swaps the copies. Stopped between the two, it finds at its
//! next start a `-future` log whose log dir's `directory.id` is the one the image assigns
//! (`PartitionRegistration.directory(brokerId)`): `LogManager.recoverAbandonedFutureLogs`
//! (from `BrokerMetadataPublisher.initializeManagers`, 3.7.1 and later) makes it the current
//! log (`replaceCurrentWithFutureLog`: the copy is renamed `<topic>-<partition>`) and renames
//! the current log of the same topic id `-delete`, to be deleted. What the copy holds is then
//! what the broker serves; what only the current log holds is gone from this broker.
//!
//! Judged as the stray check judges: the copy's log dir names its node id and directory id
//! and is of the metadata log's cluster, its `partition.metadata` names a topic id, and the
//! history holds every change of that partition; the verdict holds as of the log's end.

use super::ClusterHistory;
use crate::cluster::report::ScanReport;
use crate::discover::identity::{Identities, same_cluster};
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::evidence::NonLiveJoint;
use crate::finding::{CopyKind, Finding, Kind, Severity};
use crate::partition::recovery::BrokerVersion;
use crate::read::format::checkpoint::encode_uuid;
use serde_json::json;
use std::collections::HashMap;

/// The `abandoned_future_replica` findings of the `-future` copies of `h`'s cluster in
/// `report`, with their partition index.
pub(super) fn check(
    h: &ClusterHistory,
    report: &ScanReport,
    inv: &Inventory,
    version: Option<BrokerVersion>,
) -> Vec<(Option<usize>, Finding)> {
    let futures = |p: &&crate::partition::results::PartitionReport| {
        p.source.copy == CopyKind::Future && same_cluster(&h.source, &p.source).is_same()
    };
    // Most scans hold no `-future` copy: nothing indexed, no `meta.properties` read again.
    if version.is_some_and(|v| v < BrokerVersion(3, 7, 1))
        || !report.partitions.iter().any(|p| futures(&p))
    {
        return Vec::new();
    }
    let dirs: HashMap<String, &PartitionDir> = inv
        .partitions
        .iter()
        .map(|d| (d.path.display().to_string(), d))
        .collect();
    let ids = Identities::load(inv);
    let mut out = Vec::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if !futures(&p) {
            continue;
        }
        let (Some(node), Some(dir)) = (p.source.broker_id, dirs.get(&p.path)) else {
            continue;
        };
        let Some(topic_id) = crate::cluster::replicas::topic_id_in(inv, dir) else {
            continue;
        };
        let here = ids.log_dir(dir.log_dir.as_deref()).directory_id;
        let Some(t) = h.history.partitions.get(&(topic_id, p.partition)) else {
            continue;
        };
        if !super::stray::covers(h, t) || t.removed_at.is_some() {
            continue;
        }
        let Some(state) = t.steps.last().map(|s| &s.state) else {
            continue;
        };
        let assigned = state.directory(node).map(|d| encode_uuid(&d));
        if here.is_none() || assigned != here {
            continue;
        }
        // The current log of the same topic id on the same node, which the swap deletes.
        let current = report.partitions.iter().find(|c| {
            c.source.copy == CopyKind::Live
                && c.source.broker_id == Some(node)
                && c.topic == p.topic
                && c.partition == p.partition
                && same_cluster(&c.source, &p.source).is_same()
                && dirs
                    .get(&c.path)
                    .and_then(|d| crate::cluster::replicas::topic_id_in(inv, d))
                    == Some(topic_id)
        });
        let pinned = report
            .partition_findings(i)
            .iter()
            .filter(|f| crate::finding::evidence::read::<NonLiveJoint>(f).hanging_if_live)
            .count();
        out.push((
            Some(i),
            finding(
                h,
                p,
                node,
                (here.unwrap_or_default(), state.offset),
                current,
                pinned,
            ),
        ));
    }
    out
}

fn finding(
    h: &ClusterHistory,
    p: &crate::partition::results::PartitionReport,
    node: i32,
    (dir_id, assigned_at): (String, i64),
    current: Option<&crate::partition::results::PartitionReport>,
    pinned: usize,
) -> Finding {
    let (topic, partition, end) = (&p.topic, p.partition, h.log.end_offset);
    let ends = |r: &crate::partition::results::PartitionReport| {
        r.log_end_offset
            .map_or_else(|| "no batch".into(), |e| format!("end offset {e}"))
    };
    let replaced = match current {
        Some(c) => format!(
            "and renames the current log {} ({}) `-delete`, to be deleted; the copy has {}",
            c.path,
            ends(c),
            ends(p)
        ),
        None => format!(
            "(no current log of the same topic id is in the inputs); the copy has {}",
            ends(p)
        ),
    };
    let lost = match (current.and_then(|c| c.log_end_offset), p.log_end_offset) {
        (Some(c), Some(f)) if c > f => format!(
            "; offsets {f} to {} of the current log are then on no log of node {node} (the broker fetches them again from the leader if it is a follower; if it leads, they are lost unless another replica holds them)",
            c - 1
        ),
        (Some(_), None) => format!("; the current log's batches are then on no log of node {node}"),
        _ => String::new(),
    };
    let pins = if pinned > 0 {
        format!(
            "; the copy's {pinned} open transaction(s) then pin the partition's last stable offset (its open_transaction findings say hanging_if_live)"
        )
    } else {
        String::new()
    };
    let msg = format!(
        "{topic}-{partition} on node {node}: the -future copy {} is in the log dir the metadata assigns the replica to (directory.id {dir_id}, since metadata offset {assigned_at}; the log ends at {end}): the broker's next start makes the copy its live log {replaced}{lost}{pins}",
        p.path
    );
    Finding::new(Kind::AbandonedFutureReplica, topic, partition, msg)
        .severity(Severity::Warning)
        .evidence(json!({
            "node_id": node, "directory_id": dir_id, "assigned_at": assigned_at,
            "metadata_offset": end, "metadata_log": h.log.path,
            "future_log_end_offset": p.log_end_offset,
            "current_path": current.map(|c| c.path.clone()),
            "current_log_end_offset": current.and_then(|c| c.log_end_offset),
            "open_transactions_then_live": pinned,
        }))
        .broker("LogManager.recoverAbandonedFutureLogs (BrokerMetadataPublisher.initializeManagers, Kafka 3.7.1 and later) finds a -future log whose log dir's directory.id is the one the image assigns (PartitionRegistration.directory) and calls replaceCurrentWithFutureLog: the copy becomes the current log, the current log of the same topic id is renamed -delete and deleted after file.delete.delay.ms")
        .client_error("none until the swap; then clients read the copy's records (what only the current log held is served by this broker no more)")
        .remediation("the move was accepted by the controller and the broker stopped before swapping: let the next start finish it, but first compare the two copies' ends — copy the current directory aside if it holds batches the copy lacks and no other replica holds them")
}
