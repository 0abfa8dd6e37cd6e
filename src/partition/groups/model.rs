//! What the group replay rebuilds: groups, members, assignments, topologies, offsets.

use serde::Serialize;
use std::collections::BTreeMap;

/// The group types of Kafka 4.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupType {
    /// The classic protocol (JoinGroup/SyncGroup), or a "simple" group that only commits
    /// offsets.
    Classic,
    /// KIP-848 consumer groups.
    Consumer,
    /// KIP-932 share groups.
    Share,
    /// KIP-1071 streams groups.
    Streams,
}

impl GroupType {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupType::Classic => "classic",
            GroupType::Consumer => "consumer",
            GroupType::Share => "share",
            GroupType::Streams => "streams",
        }
    }
    /// Parse `classic|consumer|share|streams`.
    pub fn parse(s: &str) -> Option<GroupType> {
        [
            GroupType::Classic,
            GroupType::Consumer,
            GroupType::Share,
            GroupType::Streams,
        ]
        .into_iter()
        .find(|t| t.as_str().eq_ignore_ascii_case(s))
    }
}

/// Whether a group exists at the end of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupState {
    /// The group exists.
    Live,
    /// A streams group whose last metadata carries the "uncertain" stored-description
    /// epoch (-2): a KIP-1331 deletion started (the barrier) and did not finish.
    DeletionUnfinished,
    /// Its metadata was tombstoned (the coordinator removed it).
    Deleted,
}

/// One member.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Member {
    pub member_id: String,
    /// -1 after its current-assignment tombstone (the member left).
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: i8,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// Subscribed topics (consumer, share; classic: not decoded).
    pub subscribed_topics: Vec<String>,
    /// Assigned partitions (`topic-id:p`) or tasks (`subtopology:p`, prefixed by
    /// `standby:`/`warmup:`).
    pub assigned: Vec<String>,
    /// Partitions (or tasks, as [`Self::assigned`]) the member still holds while it revokes
    /// them (`PartitionsPendingRevocation`, `*TasksPendingRevocation`).
    pub pending_revocation: Vec<String>,
    /// Streams: the topology epoch the member runs.
    pub topology_epoch: Option<i32>,
    /// Streams: the process id.
    pub process_id: Option<String>,
    /// Offset of the member's last record.
    pub last_offset: i64,
}

/// A streams group's topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Topology {
    pub epoch: i32,
    pub subtopologies: Vec<String>,
    pub source_topics: Vec<String>,
    /// The subtopologies' internal repartition topics they read from (`TopicInfo.Name`):
    /// with `source_topics`, what `StreamsTopology.sourceTopicMap` holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repartition_source_topics: Vec<String>,
    pub offset: i64,
}

impl Topology {
    /// Whether the topology reads `topic` (`StreamsTopology.sourceTopicMap`: the source
    /// and repartition source topics; a source regex names none).
    pub(crate) fn reads(&self, topic: &str) -> bool {
        self.source_topics.iter().any(|t| t == topic)
            || self.repartition_source_topics.iter().any(|t| t == topic)
    }
}

/// One committed offset (defined with the walk's results, which keep them for the
/// consumer view).
pub use crate::partition::walked::Committed;

/// KIP-1331 state of a streams group's topology description.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DescriptionEpochs {
    /// `StoredDescriptionTopologyEpoch`: -1 none, -2 uncertain (the deletion barrier).
    pub stored: i32,
    /// `FailedDescriptionTopologyEpoch`: the topology epoch whose plugin call failed.
    pub failed: i32,
    /// Offset of the first of the consecutive metadata values carrying -2, if the last
    /// one does.
    pub uncertain_since: Option<i64>,
    /// How many consecutive metadata values carried -2 (one per cleanup attempt).
    pub uncertain_writes: u32,
    /// True when the last -2 was cleared to -1 (a successful plugin delete) and no
    /// tombstone followed yet.
    pub cleared_after_barrier: bool,
}

/// A group as the coordinator's load leaves it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub group_id: String,
    #[serde(rename = "type")]
    pub group_type: GroupType,
    pub state: GroupState,
    /// A simple classic group (`ClassicGroup.isSimpleGroup`): no protocol type and no
    /// member — created by offset commits alone, or loaded from a group record of an empty
    /// group without protocol type.
    pub simple: bool,
    /// Group epoch (classic: generation).
    pub epoch: i32,
    /// Target assignment epoch: a consumer, share or streams group starts at 0 (`ModernGroup`'s
    /// `TimelineInteger`) until a target assignment metadata value sets it, and is -1 after
    /// that record's tombstone; a classic group has none (-1).
    pub assignment_epoch: i32,
    /// Whether a target assignment metadata value set [`Self::assignment_epoch`]: klogscan's
    /// own epoch checks compare only with an epoch the log holds.
    #[serde(skip)]
    pub(crate) assignment_epoch_seen: bool,
    pub metadata_hash: i64,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    /// A classic group's `currentStateTimestamp` (group metadata value version 2 and later;
    /// -1 none): when it entered its state, the base of an Empty group's offset expiry
    /// (`ClassicGroup.offsetExpirationCondition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_state_timestamp: Option<i64>,
    pub members: BTreeMap<String, Member>,
    /// Target assignment per member.
    pub target_assignment: BTreeMap<String, Vec<String>>,
    pub topology: Option<Topology>,
    pub validated_topology_epoch: i32,
    pub description: DescriptionEpochs,
    /// Consumer groups: resolved regular expressions → topics.
    pub regular_expressions: BTreeMap<String, Vec<String>>,
    pub offsets: Vec<Committed>,
    /// The `__consumer_offsets` partition and its directory.
    pub partition: i32,
    pub path: String,
    /// Offset of the group's first and last record in this load: its metadata, member and
    /// assignment records (offset commits create a simple group, which then keeps the
    /// offset of its first commit, but do not move `last_offset`; `offsets` carries each
    /// commit's own record offset).
    pub first_offset: i64,
    pub last_offset: i64,
    /// Offset of the metadata tombstone that deleted it.
    pub deleted_at: Option<i64>,
    /// `cluster.id` of the log dir holding the partition (`meta.properties`), when known:
    /// the same group id in two clusters is two groups.
    #[serde(default)]
    pub cluster_id: Option<String>,
}

impl Group {
    pub(crate) fn new(id: &str, t: GroupType, offset: i64) -> Group {
        Group {
            group_id: id.to_string(),
            group_type: t,
            state: GroupState::Live,
            simple: false,
            epoch: 0,
            assignment_epoch: if t == GroupType::Classic { -1 } else { 0 },
            assignment_epoch_seen: false,
            metadata_hash: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            current_state_timestamp: None,
            members: BTreeMap::new(),
            target_assignment: BTreeMap::new(),
            topology: None,
            validated_topology_epoch: -1,
            description: DescriptionEpochs {
                stored: -1,
                failed: -1,
                ..Default::default()
            },
            regular_expressions: BTreeMap::new(),
            offsets: Vec::new(),
            partition: 0,
            path: String::new(),
            first_offset: offset,
            last_offset: offset,
            deleted_at: None,
            cluster_id: None,
        }
    }
}
