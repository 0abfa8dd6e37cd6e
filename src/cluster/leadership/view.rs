//! The history as the `history` command shows it: per partition its timeline, filtered by
//! topic, partition and time, with each election's choice.

use super::elections::Choice;
use super::replay::{BrokerEvent, ConfigEvent, PartitionState, StepKind, TopicEvent};
use super::{ClusterHistory, SnapshotId};
use crate::read::format::metadata::MetaRecord;
use serde::Serialize;

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    pub topic: Option<String>,
    pub partition: Option<i32>,
    /// Only entries at or after this time (ms).
    pub from_ms: Option<i64>,
    /// Only entries at or before this time (ms).
    pub to_ms: Option<i64>,
}

impl HistoryFilter {
    fn time(&self, t: i64) -> bool {
        self.from_ms.is_none_or(|f| t >= f) && self.to_ms.is_none_or(|u| t <= u)
    }
    fn tp(&self, topic: &str, partition: i32) -> bool {
        self.topic.as_deref().is_none_or(|t| t == topic)
            && self.partition.is_none_or(|p| p == partition)
    }
}

/// One row of a partition's timeline: the state after a record, what made it, and the
/// election it held.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub state: PartitionState,
    /// What made the row.
    pub source: StepKind,
    /// When this row elected a leader: `isr`, `elr` or `unclean`.
    pub election: Option<Choice>,
}

/// One partition.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionView {
    pub topic: String,
    pub partition: i32,
    pub topic_id: String,
    pub removed_at: Option<i64>,
    pub rows: Vec<Row>,
}

/// One cluster's history.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterView {
    pub metadata_log: String,
    pub cluster_id: Option<String>,
    pub snapshot: Option<SnapshotId>,
    pub end_offset: i64,
    /// Where the node's recovery truncates this copy (`MetadataLog::recovery_stop`): the
    /// history ends there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_stop: Option<i64>,
    pub records: usize,
    pub partitions: Vec<PartitionView>,
    pub brokers: Vec<BrokerEvent>,
    pub topics: Vec<TopicEvent>,
    pub configs: Vec<ConfigEvent>,
    /// `metadata.version` and the other feature levels of `bootstrap.checkpoint`.
    pub bootstrap_features: Vec<(String, i16)>,
}

/// The view of `h` under `f`.
pub fn view(h: &ClusterHistory, f: &HistoryFilter) -> ClusterView {
    let mut partitions = Vec::new();
    for t in h.history.partitions.values() {
        if !f.tp(&t.topic, t.partition) {
            continue;
        }
        let rows: Vec<Row> = t
            .steps
            .iter()
            .filter(|s| f.time(s.state.time))
            .map(|s| {
                let st = &s.state;
                let election = h
                    .elections
                    .iter()
                    .find(|e| {
                        e.topic_id == t.topic_id
                            && e.partition == t.partition
                            && e.offset == st.offset
                    })
                    .map(|e| e.choice);
                Row {
                    state: st.clone(),
                    source: s.kind,
                    election,
                }
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        partitions.push(PartitionView {
            topic: t.topic.clone(),
            partition: t.partition,
            topic_id: crate::read::format::checkpoint::encode_uuid(&t.topic_id),
            removed_at: t.removed_at,
            rows,
        });
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    let topic_ok = |t: &str| f.topic.as_deref().is_none_or(|x| x == t);
    ClusterView {
        metadata_log: h.log.path.clone(),
        cluster_id: h.source.cluster_id.as_deref().map(str::to_string),
        snapshot: h.log.snapshot.clone(),
        end_offset: h.log.end_offset,
        recovery_stop: h.log.recovery_stop,
        records: h.log.entries.len(),
        partitions,
        brokers: h
            .history
            .brokers
            .iter()
            .filter(|b| f.time(b.time))
            .cloned()
            .collect(),
        topics: h
            .history
            .topics
            .iter()
            .filter(|t| f.time(t.time) && topic_ok(&t.topic))
            .cloned()
            .collect(),
        configs: h
            .history
            .configs
            .iter()
            .filter(|c| f.time(c.time) && (c.scope != "topic" || topic_ok(&c.resource)))
            .cloned()
            .collect(),
        bootstrap_features: h
            .log
            .bootstrap
            .iter()
            .filter_map(|e| match &e.record {
                MetaRecord::FeatureLevel {
                    name,
                    feature_level,
                } => Some((name.clone(), *feature_level)),
                _ => None,
            })
            .collect(),
    }
}
