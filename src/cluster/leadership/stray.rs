//! `stray_replica`: a live partition directory of a KRaft broker that the cluster's metadata,
//! as of the metadata log's end, no longer assigns to that broker.
//!
//! At its start a KRaft broker catches up with the controller's metadata before it loads its
//! logs, then holds each log against that image (`LogManager.isStrayKraftReplica`, from
//! `BrokerMetadataPublisher.initializeManagers`; 3.7.1 and later): a log is stray when it has
//! no topic id (no `partition.metadata`), when the image has no partition for its topic id
//! and partition number (the topic deleted, or created again under another id), or when the
//! image's replicas of it do not include the broker. What becomes of a stray log depends on
//! the release ([`fate`]).
//!
//! Only what the inputs prove is judged: a live directory (not `-delete`, `-future`,
//! `-stray`) whose log dir names its node id, in the cluster of the replayed metadata log.
//! The image is the history's last state, so a verdict holds "as of" the metadata log's end;
//! a topic id the history never names is not judged (it may have been deleted before the
//! history starts, or created after the copy ends), nor a partition whose state the history
//! may miss a change of (a record the replay could not apply after its first state).

use super::ClusterHistory;
use super::replay::Timeline;
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::recovery::BrokerVersion;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::metadata::TopicId;
use serde::Serialize;
use std::collections::HashMap;

/// Why the image does not keep the log.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reason {
    /// No `partition.metadata` (3.7.1 and later only).
    NoTopicId,
    /// The topic id on disk was removed (`RemoveTopicRecord`) at `removed_at`; `recreated`:
    /// the name's live incarnation at the end, `(id, offset of its TopicRecord)`.
    TopicDeleted {
        removed_at: i64,
        recreated: Option<(TopicId, i64)>,
    },
    /// The partition's replicas at the end do not include the node; `since`: the metadata
    /// offset of the state that left it out.
    NotAReplica { since: i64 },
}

impl Reason {
    fn id(&self) -> &'static str {
        match self {
            Reason::NoTopicId => "no_topic_id",
            Reason::TopicDeleted {
                recreated: Some(_), ..
            } => "topic_recreated",
            Reason::TopicDeleted { .. } => "topic_deleted",
            Reason::NotAReplica { .. } => "not_a_replica",
        }
    }
}

#[derive(Debug, Serialize)]
struct StrayEvidence<'a> {
    /// `reason` and `node_id`, as `verify` reads them back.
    #[serde(flatten)]
    joint: crate::finding::evidence::StrayJoint,
    /// The topic id of the directory's `partition.metadata` (`None`: no such file).
    topic_id_on_disk: Option<String>,
    /// The live topic id of the topic's name in the image (`None`: no live topic of that name).
    image_topic_id: Option<String>,
    /// The image's replicas of the partition (`None`: the image has no such partition).
    image_replicas: Option<&'a [i32]>,
    /// The metadata offset of the `RemoveTopicRecord` of the id on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    topic_removed_at: Option<i64>,
    /// The metadata offset of the `TopicRecord` of the name's live incarnation, when it
    /// replaced the id on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    topic_recreated_at: Option<i64>,
    /// The metadata offset of the partition state that left the node out of its replicas.
    #[serde(skip_serializing_if = "Option::is_none")]
    replicas_changed_at: Option<i64>,
    /// The metadata log's end: the verdict holds as of this offset.
    metadata_offset: i64,
    metadata_log: &'a str,
    /// `--broker-version` (`None`: unknown; the broker text then names every release range).
    broker_version: Option<String>,
}

/// The `stray_replica` findings of the live partitions of `h`'s cluster in `report`, with
/// their partition index.
pub(super) fn check(
    h: &ClusterHistory,
    report: &ScanReport,
    inv: &Inventory,
    version: Option<BrokerVersion>,
) -> Vec<(Option<usize>, Finding)> {
    let dirs: HashMap<String, &PartitionDir> = inv
        .partitions
        .iter()
        .map(|d| (d.path.display().to_string(), d))
        .collect();
    let mut out = Vec::new();
    for (i, p) in report.partitions.iter().enumerate() {
        if !p.source.copy.is_live()
            || crate::discover::layout::is_kraft_metadata(&p.topic)
            || !same_cluster(&h.source, &p.source).is_same()
        {
            continue;
        }
        let (Some(node), Some(dir)) = (p.source.broker_id, dirs.get(&p.path)) else {
            continue;
        };
        let on_disk = crate::cluster::replicas::topic_id_in(inv, dir);
        let Some(reason) = judge(
            h,
            (inv, dir),
            on_disk,
            (&p.topic, p.partition),
            node,
            version,
        ) else {
            continue;
        };
        out.push((
            Some(i),
            finding(h, (&p.topic, p.partition), node, on_disk, &reason, version),
        ));
    }
    out
}

/// Why `dir` (`topic`-`partition` of node `node`, topic id `on_disk`) is stray in `h`'s
/// image, or `None`: kept, or not judged.
fn judge(
    h: &ClusterHistory,
    (inv, dir): (&Inventory, &PartitionDir),
    on_disk: Option<TopicId>,
    (topic, partition): (&str, i32),
    node: i32,
    version: Option<BrokerVersion>,
) -> Option<Reason> {
    let Some(id) = on_disk else {
        // No `partition.metadata` at all (one that is there but does not read is not
        // judged; a directory named file by file was not listed whole): a stray reason
        // from 3.7.1 only — before, the log loads and takes the id the image gives it.
        // Judged only for a topic the history names: a metadata log that never names it
        // is no history of it (a copy cut short, or not this cluster's whole log).
        let absent = match inv.recorded_partition(&dir.path) {
            // An inventory rebuilt from bundles: what the collect's file list held.
            Some(r) => !r.partition_metadata,
            None => !dir.partial && dir.partition_metadata.is_none(),
        };
        // 3.7.0's search throws on it instead (the start stops: `fate`) — on the first log
        // without an id, before it looks the log up in the image: whatever the history
        // names.
        let counts = version.is_none_or(|v| v >= BrokerVersion(3, 7, 0));
        let named = version == Some(BrokerVersion(3, 7, 0))
            || h.history.topics.iter().any(|t| t.topic == topic);
        return (absent && counts && named).then_some(Reason::NoTopicId);
    };
    if let Some(removed) = h
        .history
        .topics
        .iter()
        .find(|t| !t.created && t.topic_id == id)
    {
        // A removed topic id never comes back: whatever the history misses, the image
        // has no partition of it.
        let recreated =
            live_topic(h, topic).filter(|(live, at)| *live != id && *at > removed.offset);
        return Some(Reason::TopicDeleted {
            removed_at: removed.offset,
            recreated,
        });
    }
    let t = h.history.partitions.get(&(id, partition))?;
    if !covers(h, t) {
        return None;
    }
    let last = t.steps.last()?;
    if last.state.replicas.contains(&node) {
        return None;
    }
    // The first state of the latest run of states without the node.
    let since = t
        .steps
        .iter()
        .rev()
        .take_while(|s| !s.state.replicas.contains(&node))
        .last()
        .map_or(last.state.offset, |s| s.state.offset);
    Some(Reason::NotAReplica { since })
}

/// Whether the history holds every change of `t` since its first state: no record the
/// replay could not apply lies at or after it (a snapshot's state with any such record is
/// not trusted: its offsets are the snapshot's).
pub(super) fn covers(h: &ClusterHistory, t: &Timeline) -> bool {
    let Some(first) = t.steps.first() else {
        return false;
    };
    h.log.gaps.is_empty()
        || !first.state.from_snapshot && h.log.gaps.iter().all(|&g| g < first.state.offset)
}

/// The live incarnation of `topic` at the history's end: `(id, offset of its TopicRecord)`.
fn live_topic(h: &ClusterHistory, topic: &str) -> Option<(TopicId, i64)> {
    let created = h
        .history
        .topics
        .iter()
        .rfind(|t| t.created && t.topic == topic)?;
    let removed = h
        .history
        .topics
        .iter()
        .any(|t| !t.created && t.topic_id == created.topic_id);
    (!removed).then_some((created.topic_id, created.offset))
}

/// What the next start of a broker of `version` does with a stray log (`no_topic_id`: one
/// without a topic id, which is stray from 3.7.1 only).
fn fate(version: Option<BrokerVersion>, no_topic_id: bool) -> String {
    const RENAMED_AT_LOAD: &str = "Kafka 3.7.1 and later rename it `<topic>-<partition>.<uuid>-stray` while its log dir loads (LogManager.loadLog with LogManager.isStrayKraftReplica, from BrokerMetadataPublisher.initializeManagers) and keep it aside: never served, never deleted by the broker";
    const RENAMED_AFTER_LOAD: &str = "Kafka 3.7.0 loads it, then renames it `<topic>-<partition>.<uuid>-stray` before the replica manager starts (LogManager.deleteStrayKRaftReplicas: asyncDelete with isStray) and keeps it aside: never served, never deleted by the broker";
    const DELETED: &str = "Kafka 3.0 to 3.6 load it, then delete it (BrokerMetadataPublisher.findStrayPartitions, ReplicaManager.deleteStrayReplicas: renamed `-delete`, removed after file.delete.delay.ms) — unless a log of the broker has no topic id, when the search throws, the fault is logged and no stray log is removed at that start (loaded, never served)";
    const NONE: &str =
        "Kafka 2.8 (KRaft early access) has no stray handling: the log is loaded and never served";
    const NO_ID_370: &str = "Kafka 3.7.0's stray search throws on a log without a topic id (LogManager.findStrayReplicas) and the broker does not start (fatal fault: Error starting LogManager)";
    const NO_ID_BEFORE: &str = "before 3.7 a missing topic id is no stray reason: the log is loaded, and served again when the image assigns the partition to the broker (the id is written then); Kafka 3.0 to 3.6's stray search throws on it, the fault is logged and no stray log of the broker is removed at that start";
    match (version, no_topic_id) {
        (None, false) => format!("{RENAMED_AT_LOAD}; {RENAMED_AFTER_LOAD}; {DELETED}; {NONE}"),
        (None, true) => format!("{RENAMED_AT_LOAD}; {NO_ID_370}; {NO_ID_BEFORE}"),
        (Some(v), _) if v >= BrokerVersion(3, 7, 1) => RENAMED_AT_LOAD.into(),
        (Some(BrokerVersion(3, 7, 0)), true) => NO_ID_370.into(),
        (Some(v), _) if v >= BrokerVersion(3, 7, 0) => RENAMED_AFTER_LOAD.into(),
        (Some(v), _) if v >= BrokerVersion(3, 0, 0) => DELETED.into(),
        (Some(_), _) => NONE.into(),
    }
}

fn finding(
    h: &ClusterHistory,
    (topic, partition): (&str, i32),
    node: i32,
    on_disk: Option<TopicId>,
    reason: &Reason,
    version: Option<BrokerVersion>,
) -> Finding {
    let end = h.log.end_offset;
    let image = on_disk.and_then(|id| h.history.partitions.get(&(id, partition)));
    let live = live_topic(h, topic);
    // The image's replicas: of the id on disk while it lives, else of the name's live
    // incarnation (what the broker would be assigned under the new id).
    let live_state = live.and_then(|(id, _)| h.history.partitions.get(&(id, partition)));
    let replicas = match reason {
        Reason::NotAReplica { .. } => image,
        _ => live_state,
    }
    .filter(|t| t.removed_at.is_none())
    .and_then(|t| t.current())
    .map(|s| s.replicas.as_slice());
    let why = match reason {
        Reason::NoTopicId => format!(
            "the directory has no partition.metadata, so its log has no topic id{}",
            match replicas {
                Some(r) => format!(" (the image assigns the partition to {r:?})"),
                None => String::new(),
            }
        ),
        Reason::TopicDeleted {
            removed_at,
            recreated: None,
        } => format!(
            "its topic id {} was deleted at metadata offset {removed_at}",
            on_disk.map(|i| encode_uuid(&i)).unwrap_or_default()
        ),
        Reason::TopicDeleted {
            removed_at,
            recreated: Some((id, at)),
        } => format!(
            "its topic id {} was deleted at metadata offset {removed_at} and the topic created again under id {} at offset {at}",
            on_disk.map(|i| encode_uuid(&i)).unwrap_or_default(),
            encode_uuid(id)
        ),
        Reason::NotAReplica { since } => format!(
            "its replicas are {:?} since metadata offset {since}, without node {node}",
            replicas.unwrap_or_default()
        ),
    };
    let releases = if *reason == Reason::NoTopicId && version.is_none() {
        " for Kafka 3.7.1 and later"
    } else {
        ""
    };
    let stops = *reason == Reason::NoTopicId && version == Some(BrokerVersion(3, 7, 0));
    let msg = if stops {
        format!(
            "{topic}-{partition} on node {node}: {why}; Kafka 3.7.0's stray search throws on such a log (LogManager.findStrayReplicas), so the broker's next start fails"
        )
    } else {
        format!(
            "{topic}-{partition} on node {node} is a stray replica{releases} as of the metadata log's end (offset {end}): {why}. The broker catches up with the controller's metadata before it loads its logs, so its next start does not keep this copy as a live log (unless the metadata changed after offset {end})"
        )
    };
    let evidence = StrayEvidence {
        joint: crate::finding::evidence::StrayJoint {
            reason: reason.id().to_string(),
            node_id: node,
        },
        topic_id_on_disk: on_disk.map(|i| encode_uuid(&i)),
        image_topic_id: live.map(|(i, _)| encode_uuid(&i)),
        image_replicas: replicas,
        topic_removed_at: match reason {
            Reason::TopicDeleted { removed_at, .. } => Some(*removed_at),
            _ => None,
        },
        topic_recreated_at: match reason {
            Reason::TopicDeleted {
                recreated: Some((_, at)),
                ..
            } => Some(*at),
            _ => None,
        },
        replicas_changed_at: match reason {
            Reason::NotAReplica { since } => Some(*since),
            _ => None,
        },
        metadata_offset: end,
        metadata_log: h.log.path.as_str(),
        broker_version: version.map(|v| v.to_string()),
    };
    Finding::new(Kind::StrayReplica, topic, partition, msg)
        .severity(if stops {
            Severity::Error
        } else {
            Severity::Warning
        })
        .evidence(serde_json::to_value(&evidence).unwrap_or_default())
        .broker(fate(version, *reason == Reason::NoTopicId))
        .client_error("none: no client reads a replica the broker does not host")
        .remediation(if *reason == Reason::NoTopicId {
            "find why partition.metadata is missing (the broker writes it before the first append, so a log without it usually holds nothing: a partition created just before an unclean shutdown, a damaged disk); when the image assigns the partition to the broker, a 3.7.1+ start creates a new log and replicates it from the leader; copy the directory first if its data is still needed, and remove the `-stray` directory once it is not (the broker never removes it)"
        } else {
            "confirm the reassignment or deletion was intended (the metadata records at the offsets named); before Kafka 3.7 the next start deletes the data, so copy the directory first if it is still needed; from 3.7 the `-stray` directory can be removed once it is no longer needed (the broker never removes it)"
        })
}

#[cfg(test)]
mod tests {
    use super::{BrokerVersion as V, fate};

    #[test]
    fn each_release_range_gets_its_own_fate() {
        let f = |v| fate(Some(v), false);
        assert!(f(V(4, 0, 0)).starts_with("Kafka 3.7.1 and later"));
        assert!(f(V(3, 7, 1)).starts_with("Kafka 3.7.1 and later"));
        assert!(f(V(3, 7, 0)).starts_with("Kafka 3.7.0 loads it"));
        assert!(f(V(3, 6, 2)).contains("ReplicaManager.deleteStrayReplicas"));
        assert!(f(V(3, 0, 0)).contains("ReplicaManager.deleteStrayReplicas"));
        assert!(f(V(2, 8, 1)).contains("no stray handling"));
        let unknown = fate(None, false);
        for s in ["3.7.1 and later", "3.7.0", "3.0 to 3.6", "2.8"] {
            assert!(unknown.contains(s), "{s}");
        }
        let no_id = fate(None, true);
        assert!(no_id.contains("does not start") && no_id.contains("no stray reason"));
    }
}
