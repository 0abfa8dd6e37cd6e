//! What a `__consumer_offsets` partition's load ends with, as the walk keeps it for the
//! consumer view: the live groups, every committed offset (applied or pending), and when a
//! coordinator holding the load expires each.

use serde::{Deserialize, Serialize};

/// What a `__consumer_offsets` partition's load ends with: its live groups and their
/// committed offsets, pending transactional ones included.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupOffsets {
    /// `(group id, group type)` of every live group (`classic`, `consumer`, `share`,
    /// `streams`), sorted by id.
    pub groups: Vec<(String, String)>,
    pub commits: Vec<GroupCommit>,
}

/// One committed offset of a group, as its load ends with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupCommit {
    pub group: String,
    #[serde(flatten)]
    pub commit: Committed,
    /// The producer id of a transactional commit whose transaction has no marker: the
    /// coordinator holds it pending (`None`: the commit is applied).
    pub pending_producer: Option<i64>,
    /// When the periodic cleanup of a coordinator holding this load expires the applied
    /// commit (`None`: never, as long as the group stays as loaded, or not judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<Expiry>,
}

/// What decides when a coordinator's cleanup (`OffsetMetadataManager.cleanupExpiredOffsets`,
/// every `offsets.retention.check.interval.ms`) expires a committed offset: its explicit
/// expiry time, or `offsets.retention.minutes` after a base time
/// (`OffsetExpirationConditionImpl.isOffsetExpired`; the base per group type:
/// `ClassicGroup.offsetExpirationCondition`, `ConsumerGroup`'s, `StreamsGroup`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule", content = "ms")]
pub enum Expiry {
    /// A value version 1's `expireTimestamp`: expired from that time on.
    ExpireTimestamp(i64),
    /// The retention counts from the commit time.
    CommitTime(i64),
    /// The retention counts from when the (classic, Empty) group entered its state
    /// (`currentStateTimestamp`).
    EmptySince(i64),
}

impl Expiry {
    /// When the offset is expired, given `offsets.retention.ms`.
    pub fn expires_at(self, retention_ms: i64) -> i64 {
        match self {
            Expiry::ExpireTimestamp(t) => t,
            Expiry::CommitTime(b) | Expiry::EmptySince(b) => b.saturating_add(retention_ms),
        }
    }
}

/// `offsets.retention.minutes`' default since Kafka 2.0 (KIP-186): 7 days, in ms.
pub const DEFAULT_OFFSETS_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// One committed offset (an OffsetCommit value: the leader epoch is -1 before value v3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committed {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// Offset of the record in `__consumer_offsets`.
    pub record_offset: i64,
    /// The id of the topic the commit was made for (`OffsetCommitValue.topicId`, tagged
    /// field of value version 4, written for commits that name the topic by id); `None`
    /// when absent or zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// The explicit expiry time of a value version 1 (`expireTimestamp`; -1, and every
    /// other version, none): when present it alone decides the offset's expiry
    /// (`OffsetAndMetadata.fromRecord`, `OffsetExpirationConditionImpl.isOffsetExpired`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_timestamp: Option<i64>,
}

/// A share partition's start as its load serves it, for the cluster stage to hold against
/// the data partition (`cluster::consumers`): carried in the `__share_group_state`
/// partition's [`super::ClusterInputs`] (made by `partition::share_state`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareStart {
    pub group: String,
    /// The topic id, as `partition.metadata` writes it.
    pub topic_id: String,
    pub partition: i32,
    /// The served start offset (0 or more).
    pub start_offset: i64,
    /// Where the start lands past the served terminal batches (at least `start_offset`).
    pub effective_start: i64,
    /// The offset of the share partition's latest record in `__share_group_state`.
    pub state_offset: i64,
}
