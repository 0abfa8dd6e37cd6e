//! Partitions of one topic in one broker log dir naming different topic ids:
//! `topic_id_conflict`.
//!
//! A topic deleted and created again under its name while a broker held some of its
//! partitions (offline, or a dead log dir brought back) leaves that broker with logs of
//! two incarnations: each `partition.metadata` keeps the id of the topic its log was
//! created for (`UnifiedLog.initializeTopicId`). The broker serves only the current one:
//! a ZooKeeper-mode broker answers the controller's LeaderAndIsr for a log of another id
//! with `INCONSISTENT_TOPIC_ID` (`ReplicaManager.becomeLeaderOrFollower`,
//! `hasConsistentTopicId`; `LogManager.getOrCreateLog` throws
//! `InconsistentTopicIdException`) and the partition stays unserved there; a KRaft broker
//! renames a log of an id its metadata image lacks `-stray` at load
//! (`LogManager.isStrayKraftReplica`, 3.7.1 and later; deleted by 3.0 to 3.6).
//!
//! In ZooKeeper mode the same bytes have a second reading (KAFKA-12835, 2.8.0): a
//! controller below IBP 2.8 rewrote the topic's znode without its id and the next 2.8
//! controller assigned a new one, so logs created before keep the first id and later ones
//! the second — the topic never deleted, the old-id logs its live data; the broker refuses
//! them all the same. The finding names both readings there.
//!
//! What the bytes prove: one log dir (a directory holding a broker file, so one broker's)
//! holds live directories of one topic whose ids differ, so all but one id are not the
//! topic's current one — which one is current they do not say. Where the KRaft metadata
//! history judged one of the directories (`stray_replica`, from its image), that finding
//! says it: this check runs after the leadership stage and leaves those topics alone.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use serde_json::json;

use super::replicas::topic_id_in;
use super::report::ScanReport;
use crate::discover::identity::Identities;
use crate::discover::layout::{DirKind, Inventory, PartitionDir, is_kraft_metadata};
use crate::finding::{Finding, Kind};
use crate::read::format::checkpoint::encode_uuid;

/// The check, after the leadership stage: one `topic_id_conflict` per topic and broker log
/// dir, on the topic's first directory there (report order), unless a directory of it is
/// a `stray_replica`.
pub fn check(report: &mut ScanReport, inv: &Inventory) {
    let extra = conflicts(report, inv);
    report.add_partition_findings(extra);
}

fn conflicts(report: &ScanReport, inv: &Inventory) -> BTreeMap<usize, Vec<Finding>> {
    let mut out: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    // Live directories with a `partition.metadata`, by (log dir, topic): only groups of
    // two or more read their files.
    let mut groups: HashMap<(&std::path::Path, &str), Vec<&PartitionDir>> = HashMap::new();
    for p in &inv.partitions {
        let (Some(DirKind::Normal), Some(tp), Some(ld)) = (&p.kind, &p.tp, &p.log_dir) else {
            continue;
        };
        if is_kraft_metadata(&tp.topic) || !has_id_file(inv, p) {
            continue;
        }
        groups
            .entry((ld.as_path(), tp.topic.as_str()))
            .or_default()
            .push(p);
    }
    groups.retain(|(ld, _), g| g.len() >= 2 && inv.broker_log_dir(ld));
    if groups.is_empty() {
        return out;
    }
    let ids = Identities::load(inv);
    let index: HashMap<&str, usize> = (report.partitions.iter().enumerate())
        .map(|(i, r)| (r.path.as_str(), i))
        .collect();
    let stray =
        |i: usize| (report.partition_findings(i).iter()).any(|f| f.kind == Kind::StrayReplica);
    let mut keys: Vec<_> = groups.keys().copied().collect();
    keys.sort();
    // Every member's file read once, in parallel (one small file per partition of every
    // topic with two or more partitions in a log dir: most of a broker's).
    let members: Vec<&PartitionDir> = keys
        .iter()
        .flat_map(|k| groups[k].iter().copied())
        .collect();
    let read: Vec<Option<[u8; 16]>> = members.par_iter().map(|p| topic_id_in(inv, p)).collect();
    let mut read = read.into_iter();
    for key in keys {
        let (ld, topic) = key;
        let mut by_id: BTreeMap<[u8; 16], Vec<(usize, &PartitionDir)>> = BTreeMap::new();
        let mut judged = false;
        for p in &groups[&key] {
            let at = index.get(p.path.to_string_lossy().as_ref()).copied();
            judged |= at.is_some_and(stray);
            if let (Some(id), Some(i)) = (read.next().flatten(), at) {
                by_id.entry(id).or_default().push((i, p));
            }
        }
        if by_id.len() < 2 || judged {
            continue;
        }
        let kraft = ids.log_dir(Some(ld)).meta_version == Some(1);
        for g in by_id.values_mut() {
            g.sort_by_key(|(i, _)| *i);
        }
        let first = (by_id.values().map(|g| g[0].0)).min().unwrap_or(0);
        out.entry(first)
            .or_default()
            .push(finding(report, (ld, topic), &by_id, first, kraft));
    }
    out
}

/// Whether `p` has a `partition.metadata` (for an inventory rebuilt from bundles: the
/// collect's file list said so).
fn has_id_file(inv: &Inventory, p: &PartitionDir) -> bool {
    match inv.recorded_partition(&p.path) {
        Some(r) => r.partition_metadata,
        None => p.partition_metadata.is_some(),
    }
}

/// The finding of `topic`'s directories in log dir `ld` (`kraft`: its `meta.properties`
/// is a KRaft node's, where KAFKA-12835's reading does not arise).
fn finding(
    report: &ScanReport,
    (ld, topic): (&std::path::Path, &str),
    by_id: &BTreeMap<[u8; 16], Vec<(usize, &PartitionDir)>>,
    first: usize,
    kraft: bool,
) -> Finding {
    let p = &report.partitions[first];
    let name = |i: usize| {
        let r = &report.partitions[i];
        format!("{}-{}", r.topic, r.partition)
    };
    let listed: Vec<String> = by_id
        .iter()
        .map(|(id, g)| {
            let parts: Vec<String> = g.iter().map(|(i, _)| name(*i)).collect();
            format!("{} ({})", encode_uuid(id), parts.join(", "))
        })
        .collect();
    let ids_json: Vec<_> = by_id
        .iter()
        .map(|(id, g)| {
            json!({
                "topic_id": encode_uuid(id),
                "partitions": g.iter().map(|(i, _)| report.partitions[*i].partition).collect::<Vec<_>>(),
                "paths": g.iter().map(|(i, _)| report.partitions[*i].path.as_str()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let shown = ld.display().to_string();
    let dir = crate::escape::text(&shown);
    Finding::new(
        Kind::TopicIdConflict,
        &p.topic,
        p.partition,
        format!(
            "log dir {dir} holds partitions of topic {} under {} topic ids: {}; {}",
            crate::escape::text(topic),
            by_id.len(),
            crate::escape::text(&listed.join("; ")),
            if kraft {
                "all but one are logs of another incarnation of the topic (deleted and created again under its name while this broker held them), which the broker does not serve"
            } else {
                "all but one are not the topic's current id, which the broker does not serve: logs of a deleted incarnation (the topic deleted and created again while this broker held them), or — on a 2.8.0 cluster — the live topic's own logs, after a controller below IBP 2.8 dropped the id and a 2.8 controller gave the topic a new one (KAFKA-12835)"
            }
        ),
    )
    .evidence(json!({
        "log_dir": shown,
        "topic_ids": ids_json,
                "kafka": "UnifiedLog.initializeTopicId, ReplicaManager.becomeLeaderOrFollower (hasConsistentTopicId), LogManager.isStrayKraftReplica",
    }))
    .broker("a ZooKeeper-mode broker answers the controller's LeaderAndIsr for a log whose partition.metadata names another id with INCONSISTENT_TOPIC_ID (ReplicaManager.becomeLeaderOrFollower; LogManager.getOrCreateLog throws InconsistentTopicIdException): that partition stays unserved on this broker; a KRaft broker renames a log of an id its metadata image lacks <topic>-<partition>.<uuid>-stray at load (LogManager.isStrayKraftReplica, 3.7.1 and later; deleted by 3.0 to 3.6)")
    .remediation(format!(
        "find the topic's current id (kafka-topics.sh --bootstrap-server <broker> --describe {} shows its TopicId), then, with the broker stopped, move the directories of the other ids out of the log dir (keep them as evidence: their records are a deleted incarnation's); the broker re-creates and re-fetches the current partitions it hosts{}",
        crate::escape::topic_regex_flag(&crate::escape::ShellArgs::default().topic(topic)),
        if kraft {
            ""
        } else {
            ". If the topic was never deleted (KAFKA-12835), their records are the live topic's: instead move only their partition.metadata files aside — a log without one takes the id the controller gives it (LogManager.getOrCreateLog → UnifiedLog.assignTopicId)"
        }
    ))
}
