//! The group coordinator's load, replayed offline: every `__consumer_offsets` record in
//! offset order through the rules of Kafka 4.x `GroupCoordinatorShard.replay`, which
//! dispatches to `OffsetMetadataManager.replay` (offset commits, pending while their
//! transaction is open, applied by `replayEndTransactionMarker`) and the
//! `GroupMetadataManager.replay(...)` overloads (one per record type). What those
//! methods throw on (a record for a group of another type, a tombstone out of the
//! coordinator's order) is kept as an [`Anomaly`] and the record skipped, so the replay
//! goes on past the point where the broker's load would stop.

use super::model::{Committed, Group, GroupState, GroupType, Member, Topology};
use super::values::{assignment, key_group, tasks};
use crate::finding::evidence;
use crate::read::format::groups::{self, Outcome, StructVal, Topic};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The member epoch a member gets when its current assignment is tombstoned
/// (`LEAVE_GROUP_MEMBER_EPOCH`); a member record may be tombstoned only after that.
pub(crate) const LEAVE_GROUP_MEMBER_EPOCH: i32 = -1;

/// The stored-description epoch of the KIP-1331 deletion barrier ("uncertain").
pub(crate) const UNCERTAIN: i32 = -2;

/// One record of the coordinator's log.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub offset: i64,
    /// The producer id of a transactional batch (its offset commits stay pending until
    /// the batch's COMMIT/ABORT marker); `None` otherwise.
    pub producer_id: Option<i64>,
    /// The producer id of a non-transactional batch that has one (an idempotent
    /// producer's; see [`crate::partition::walked::LogRecord::idempotent_producer_id`]).
    pub idempotent_producer_id: Option<i64>,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// Position of the record's batch in its segment, and the segment's file name.
    pub position: u64,
    pub segment: &'a str,
}

/// What the replay found wrong, and one anomaly with where it is and the Kafka method
/// that models it: defined with the walk's typed results ([`crate::partition::walked`]), which keep
/// them per partition for the cluster check.
pub use crate::partition::walked::{GroupAnomaly as Anomaly, GroupAnomalyKind as AnomalyKind};

mod classic;
mod duplicates;
mod idempotent;
mod offsets;
mod owners;
mod share;
mod three;

/// The key version (record type) of a record's key: its first two bytes.
pub(crate) fn key_version(key: &[u8]) -> Option<i16> {
    Some(i16::from_be_bytes(key.get(..2)?.try_into().ok()?))
}

/// A key written in an open transaction: group, key bytes, record type, offset.
type PendingKey = (String, Vec<u8>, i16, i64);

/// The state of one `__consumer_offsets` partition's load.
#[derive(Debug, Default)]
pub struct Replay {
    pub groups: BTreeMap<String, Group>,
    /// Groups removed by a metadata tombstone (the last removal of each id).
    pub deleted: BTreeMap<String, Group>,
    offsets: BTreeMap<String, BTreeMap<(String, i32), Committed>>,
    pending: BTreeMap<i64, Vec<(String, Committed)>>,
    /// Live record keys per group: key bytes → (record type, offset of the value).
    live_keys: BTreeMap<String, BTreeMap<Vec<u8>, (i16, i64)>>,
    /// Keys of values in open transactions, per producer: live once committed.
    pending_keys: BTreeMap<i64, Vec<PendingKey>>,
    /// Commits of idempotent batches a 4.x load holds pending, by (group, topic, partition).
    idempotent: BTreeMap<(String, String, i32), idempotent::Stuck>,
    /// Last group and assignment epoch per group id, cleared by a deletion.
    epochs: BTreeMap<String, (GroupType, i32, i32)>,
    /// Who holds each partition (consumer) or active task (streams) of each group.
    owners: owners::Owners,
    pub anomalies: Vec<Anomaly>,
    /// Whether a share group state partition metadata record (type 15) was read: only 4.1+
    /// coordinators write one, so no 4.0 load is in question (`replay::share`).
    share_state_seen: bool,
    /// Whether the first record a 3.x load before KAFKA-14869 throws on was met
    /// (`replay::three`).
    before_14869_seen: bool,
    /// Records read, and records of types a 4.x loader skips (no schema, or retired).
    pub records: u64,
    pub skipped_types: BTreeMap<i16, u64>,
    pub partition: i32,
    pub path: String,
    /// Records not read, as `<segment>: <why>` (a batch that does not decompress, one too
    /// large to hold, a segment that could not be read): the groups may miss them.
    pub unread: Vec<String>,
}

impl Replay {
    pub fn new(partition: i32, path: &str) -> Replay {
        Replay {
            partition,
            path: path.to_string(),
            ..Default::default()
        }
    }

    fn anomaly(
        &mut self,
        kind: AnomalyKind,
        at: &Input<'_>,
        group: &str,
        message: String,
        evidence: Value,
        load_fails: bool,
    ) {
        self.anomalies.push(Anomaly {
            kind,
            group: (!group.is_empty()).then(|| group.to_string()),
            offset: at.offset,
            position: at.position,
            segment: at.segment.to_string(),
            message,
            evidence,
            load_fails,
            severity: None,
            key_version: at.key.and_then(key_version),
        });
    }

    /// Replay one record.
    pub fn record(&mut self, at: Input<'_>) {
        self.records += 1;
        self.before_kafka_14869(&at);
        // Retired types (9, 18: removed in 4.1, skipped as unknown by the loader) and one
        // never released (24) are skipped by their key's type alone: the loader knows no
        // schema for them (`UnknownRecordTypeException`, logged and ignored by
        // `CoordinatorLoaderImpl`), so bytes that fit no schema of klogscan's fail nothing.
        if let Some(id @ (9 | 18 | 24)) = at.key.and_then(key_version) {
            *self.skipped_types.entry(id).or_default() += 1;
            return;
        }
        let d = match groups::decode(Topic::ConsumerOffsets, at.key, at.value) {
            Ok(Outcome::Record(d)) => d,
            Ok(Outcome::UnknownType { id: t, .. }) => {
                *self.skipped_types.entry(t).or_default() += 1;
                return;
            }
            Err(e) => {
                let msg = format!(
                    "record at offset {} does not deserialize: {e}; the coordinator's load throws (\"{}\")",
                    at.offset,
                    e.kafka_message()
                );
                self.anomaly(
                    AnomalyKind::Undecodable,
                    &at,
                    "",
                    msg,
                    json!({"error": e.to_string(), "kafka_message": e.kafka_message()}),
                    true,
                );
                return;
            }
        };
        let id = d.rtype.id;
        let group = key_group(&d.key);
        if let Some(k) = at.key {
            match (at.producer_id, d.value.is_some()) {
                (Some(pid), true) => self.pending_keys.entry(pid).or_default().push((
                    group.clone(),
                    k.to_vec(),
                    id,
                    at.offset,
                )),
                (_, true) => {
                    let keys = self.live_keys.entry(group.clone()).or_default();
                    keys.insert(k.to_vec(), (id, at.offset));
                }
                (_, false) => {
                    if let Some(keys) = self.live_keys.get_mut(&group) {
                        keys.remove(k);
                    }
                    // A tombstone also ends the transactions' pending values of its key
                    // (`OffsetMetadataManager.replay` removes the pending offsets of the
                    // key; `deleteAllOffsets` writes such tombstones for a group deleted
                    // while a transaction holds offsets of it): their COMMIT marker later
                    // makes nothing live.
                    for keys in self.pending_keys.values_mut() {
                        keys.retain(|(_, pk, _, _)| pk.as_slice() != k);
                    }
                }
            }
        }
        let value = d.value.as_ref().map(|(_, v)| v);
        match id {
            10..=14 => self.share_before_kafka_19453(&at, &group, id, &d.key, value.is_none()),
            15 => self.share_state_seen = true,
            _ => {}
        }
        match id {
            0 | 1 => self.offset_commit(&at, &group, &d.key, value),
            2 => self.classic(&at, &group, value),
            3 | 11 | 17 => self.group_metadata(&at, &group, id, value),
            6 | 12 | 20 => self.target_metadata(&at, &group, id, value),
            7 | 13 | 21 => self.target_member(&at, &group, id, &d.key, value),
            5 | 10 | 19 => self.member_metadata(&at, &group, id, &d.key, value),
            8 | 14 | 22 => self.current_assignment(&at, &group, id, &d.key, value),
            _ => self.other(&at, &group, id, &d.key, value),
        }
    }

    /// `getOrMaybeCreatePersisted{Consumer,Share,Streams}Group`: the group of type `t`,
    /// created when `create`; `Ok(None)` when absent (a tombstone for an unknown group is
    /// ignored; for share groups since KAFKA-19453, what 4.0 throws being reported by
    /// `share_before_kafka_19453` first); `Err` when a group of another type exists (the
    /// load throws). A simple
    /// classic group (`ClassicGroup.isSimpleGroup`: created by an offset commit, or loaded
    /// without protocol type and members) gives way to a consumer group.
    fn group_mut(
        &mut self,
        at: &Input<'_>,
        id: &str,
        t: GroupType,
        create: bool,
    ) -> Option<&mut Group> {
        let existing = self.groups.get(id).map(|g| (g.group_type, g.simple));
        match existing {
            Some((gt, _)) if gt == t => {}
            Some((GroupType::Classic, true)) if t == GroupType::Consumer => {
                let g = Group::new(id, t, at.offset);
                self.groups.insert(id.to_string(), g);
            }
            // A simple classic group (offsets replayed before the group's records: a
            // classic group migrated to streams whose tombstone the cleaner removed) and a
            // streams record: `getOrMaybeCreatePersistedStreamsGroup` threw before
            // KAFKA-20254 and replaces the simple group since, as the consumer path does.
            // Said for the releases before it; the replay goes on as the releases with it.
            Some((GroupType::Classic, true)) if t == GroupType::Streams => {
                let msg = format!(
                    "record at offset {} is for streams group {id:?}, but the group is a simple classic group (offsets committed before the group's records): Kafka 4.x's load throws before KAFKA-20254 (\"Group {id} is not a streams group\"); releases with it replace the simple group",
                    at.offset
                );
                self.anomaly(
                    AnomalyKind::LoadFailure,
                    at,
                    id,
                    msg,
                    json!({"group_id": id, "record_group_type": t.as_str(), "existing_group_type": "classic", "existing_is_simple": true,
                           "kafka": "GroupMetadataManager.getOrMaybeCreatePersistedStreamsGroup",
                           "load_fails_in": evidence::LoadFailsIn::Kafka4BeforeKafka20254}),
                    true,
                );
                let g = Group::new(id, t, at.offset);
                self.groups.insert(id.to_string(), g);
            }
            Some((gt, simple)) => {
                let msg = format!(
                    "record at offset {} is for {} group {id:?}, but the group is a {}{} group: the coordinator's load throws (\"Group {id} is not a {} group\")",
                    at.offset,
                    t.as_str(),
                    if simple { "simple " } else { "" },
                    gt.as_str(),
                    t.as_str()
                );
                self.anomaly(
                    AnomalyKind::LoadFailure,
                    at,
                    id,
                    msg,
                    json!({"group_id": id, "record_group_type": t.as_str(), "existing_group_type": gt.as_str(), "existing_is_simple": simple,
                           "kafka": "GroupMetadataManager.getOrMaybeCreatePersisted*Group"}),
                    true,
                );
                return None;
            }
            None if create => {
                self.groups
                    .insert(id.to_string(), Group::new(id, t, at.offset));
            }
            None => return None,
        }
        let g = self.groups.get_mut(id)?;
        g.last_offset = at.offset;
        Some(g)
    }

    /// `removeGroup`: keep a snapshot of the group as deleted.
    fn remove_group(&mut self, at: &Input<'_>, id: &str) {
        if let Some(mut g) = self.groups.remove(id) {
            g.state = GroupState::Deleted;
            g.deleted_at = Some(at.offset);
            g.last_offset = at.offset;
            self.deleted.insert(id.to_string(), g);
        }
        self.epochs.remove(id);
        self.owners.remove_group(id);
    }

    /// A group epoch (or classic generation) must not go down while the group lives.
    fn check_epoch(&mut self, at: &Input<'_>, group: &str, t: GroupType, epoch: i32, what: &str) {
        let prev = self.epochs.get(group).copied();
        let assignment = match prev {
            Some((pt, e, a)) if pt == t => {
                if epoch < e {
                    let msg = format!(
                        "{} group {group:?}: {what} {epoch} at offset {} is below the earlier {e} without the group being deleted in between",
                        t.as_str(),
                        at.offset
                    );
                    self.anomaly(
                        AnomalyKind::EpochRegression,
                        at,
                        group,
                        msg,
                        json!({"group_id": group, "group_type": t.as_str(), "epoch": epoch, "previous_epoch": e, "field": what}),
                        false,
                    );
                }
                a
            }
            _ => -1,
        };
        self.epochs
            .insert(group.to_string(), (t, epoch, assignment));
    }

    fn group_metadata(&mut self, at: &Input<'_>, group: &str, id: i16, v: Option<&StructVal<'_>>) {
        let t = match id {
            3 => GroupType::Consumer,
            11 => GroupType::Share,
            _ => GroupType::Streams,
        };
        let Some(v) = v else {
            let Some(g) = self.group_mut(at, group, t, false) else {
                return;
            };
            let (members, target, epoch, seen) = (
                g.members.len(),
                g.target_assignment.len(),
                g.assignment_epoch,
                g.assignment_epoch_seen,
            );
            let problem = if members > 0 {
                Some(format!("the group still has {members} members"))
            } else if target > 0 && t != GroupType::Streams {
                Some(format!("the target assignment still has {target} members"))
            } else if epoch != -1 && seen {
                Some(format!(
                    "its target assignment metadata (epoch {epoch}) was not tombstoned first"
                ))
            } else if epoch != -1 {
                // `ModernGroup` starts its target assignment epoch at 0: only the metadata
                // tombstone sets the -1 the group's tombstone requires.
                Some(format!(
                    "no target assignment metadata tombstone came first (the group's target assignment epoch is {epoch}, the value a group starts with, not the -1 that tombstone sets)"
                ))
            } else {
                None
            };
            if let Some(p) = problem {
                let msg = format!(
                    "{} group {group:?} tombstoned at offset {} but {p}: the coordinator's load throws (\"Received a tombstone record to delete group {group} but …\")",
                    t.as_str(),
                    at.offset
                );
                self.anomaly(
                    AnomalyKind::TombstonesIncomplete,
                    at,
                    group,
                    msg,
                    json!({"group_id": group, "group_type": t.as_str(), "members": members, "target_assignment_members": target, "assignment_epoch": epoch,
                           "kafka": "GroupMetadataManager.replay(*GroupMetadataKey, *GroupMetadataValue)"}),
                    true,
                );
                return;
            }
            self.remove_group(at, group);
            return;
        };
        let epoch = v.int("Epoch") as i32;
        if self.group_mut(at, group, t, true).is_none() {
            return;
        }
        self.check_epoch(at, group, t, epoch, "group epoch");
        let Some(g) = self.groups.get_mut(group) else {
            return;
        };
        g.epoch = epoch;
        g.metadata_hash = v.int("MetadataHash");
        if t == GroupType::Streams {
            g.validated_topology_epoch = v.int("ValidatedTopologyEpoch") as i32;
            let stored = v.int("StoredDescriptionTopologyEpoch") as i32;
            let d = &mut g.description;
            if stored == UNCERTAIN {
                if d.stored == UNCERTAIN {
                    d.uncertain_writes += 1;
                } else {
                    d.uncertain_since = Some(at.offset);
                    d.uncertain_writes = 1;
                }
                d.cleared_after_barrier = false;
            } else {
                d.cleared_after_barrier = d.stored == UNCERTAIN && stored == -1;
                d.uncertain_since = None;
                d.uncertain_writes = 0;
            }
            d.stored = stored;
            d.failed = v.int("FailedDescriptionTopologyEpoch") as i32;
            self.streams_config_duplicates(at, group, v);
        }
    }

    fn target_metadata(&mut self, at: &Input<'_>, group: &str, id: i16, v: Option<&StructVal<'_>>) {
        let t = match id {
            6 => GroupType::Consumer,
            12 => GroupType::Share,
            _ => GroupType::Streams,
        };
        let Some(g) = self.group_mut(at, group, t, v.is_some()) else {
            return;
        };
        let Some(v) = v else {
            let n = g.target_assignment.len();
            if n > 0 {
                let msg = format!(
                    "{} group {group:?}: target assignment metadata tombstoned at offset {} while the assignment still has {n} members: the coordinator's load throws",
                    t.as_str(),
                    at.offset
                );
                self.anomaly(
                    AnomalyKind::TombstonesIncomplete,
                    at,
                    group,
                    msg,
                    json!({"group_id": group, "group_type": t.as_str(), "target_assignment_members": n,
                           "kafka": "GroupMetadataManager.replay(*GroupTargetAssignmentMetadataKey, …)"}),
                    true,
                );
                return;
            }
            g.assignment_epoch = -1;
            g.assignment_epoch_seen = false;
            if let Some(e) = self.epochs.get_mut(group) {
                e.2 = -1;
            }
            return;
        };
        let epoch = v.int("AssignmentEpoch") as i32;
        g.assignment_epoch = epoch;
        g.assignment_epoch_seen = true;
        // Compared only with a group epoch replayed earlier: after compaction the group's
        // metadata value may sit after its assignment (a later rewrite at the same epoch).
        let Some(&(_, group_epoch, prev)) = self.epochs.get(group) else {
            return;
        };
        if let Some(e) = self.epochs.get_mut(group) {
            e.2 = epoch;
        }
        let problem = if prev != -1 && epoch < prev {
            Some(format!("is below the earlier {prev}"))
        } else if epoch > group_epoch {
            Some(format!("is above the group epoch {group_epoch}"))
        } else {
            None
        };
        if let Some(p) = problem {
            let msg = format!(
                "{} group {group:?}: target assignment epoch {epoch} at offset {} {p}",
                t.as_str(),
                at.offset
            );
            self.anomaly(
                AnomalyKind::EpochRegression,
                at,
                group,
                msg,
                json!({"group_id": group, "group_type": t.as_str(), "assignment_epoch": epoch, "previous_assignment_epoch": prev, "group_epoch": group_epoch}),
                false,
            );
        }
    }

    fn target_member(
        &mut self,
        at: &Input<'_>,
        group: &str,
        id: i16,
        k: &StructVal<'_>,
        v: Option<&StructVal<'_>>,
    ) {
        let t = match id {
            7 => GroupType::Consumer,
            13 => GroupType::Share,
            _ => GroupType::Streams,
        };
        let member = k.str("MemberId").unwrap_or_default();
        let Some(g) = self.group_mut(at, group, t, v.is_some()) else {
            return;
        };
        match v {
            None => {
                g.target_assignment.remove(&member);
            }
            Some(v) => {
                let a = if t == GroupType::Streams {
                    tasks(v, ["ActiveTasks", "StandbyTasks", "WarmupTasks"])
                } else {
                    let mut out = Vec::new();
                    assignment(v.items("TopicPartitions"), "TopicId", "", &mut out);
                    out
                };
                g.target_assignment.insert(member, a);
            }
        }
    }
}

impl Replay {
    fn member_metadata(
        &mut self,
        at: &Input<'_>,
        group: &str,
        id: i16,
        k: &StructVal<'_>,
        v: Option<&StructVal<'_>>,
    ) {
        let t = match id {
            5 => GroupType::Consumer,
            10 => GroupType::Share,
            _ => GroupType::Streams,
        };
        let member = k.str("MemberId").unwrap_or_default();
        let Some(g) = self.group_mut(at, group, t, v.is_some()) else {
            return;
        };
        let Some(v) = v else {
            let Some(m) = g.members.get(&member) else {
                return;
            };
            let problem = if m.member_epoch != LEAVE_GROUP_MEMBER_EPOCH {
                Some(format!(
                    "its current assignment was not tombstoned first (member epoch {})",
                    m.member_epoch
                ))
            } else if g.target_assignment.contains_key(&member) {
                Some("its target assignment was not tombstoned first".to_string())
            } else {
                None
            };
            if let Some(p) = problem {
                let msg = format!(
                    "{} group {group:?}: member {member:?} tombstoned at offset {} but {p}: the coordinator's load throws (\"Received a tombstone record to delete member {member} but …\")",
                    t.as_str(),
                    at.offset
                );
                self.anomaly(
                    AnomalyKind::TombstonesIncomplete,
                    at,
                    group,
                    msg,
                    json!({"group_id": group, "group_type": t.as_str(), "member_id": member,
                           "kafka": "GroupMetadataManager.replay(*GroupMemberMetadataKey, …)"}),
                    true,
                );
                return;
            }
            g.members.remove(&member);
            return;
        };
        let m = g.members.entry(member.clone()).or_insert_with(|| Member {
            member_id: member.clone(),
            ..Default::default()
        });
        m.last_offset = at.offset;
        m.instance_id = v.str("InstanceId");
        m.rack_id = v.str("RackId");
        m.client_id = v.str("ClientId").unwrap_or_default();
        m.client_host = v.str("ClientHost").unwrap_or_default();
        m.subscribed_topics = v.strings("SubscribedTopicNames");
        if t == GroupType::Streams {
            m.topology_epoch = Some(v.int("TopologyEpoch") as i32);
            m.process_id = v.str("ProcessId");
        }
    }

    fn current_assignment(
        &mut self,
        at: &Input<'_>,
        group: &str,
        id: i16,
        k: &StructVal<'_>,
        v: Option<&StructVal<'_>>,
    ) {
        let t = match id {
            8 => GroupType::Consumer,
            14 => GroupType::Share,
            _ => GroupType::Streams,
        };
        let member = k.str("MemberId").unwrap_or_default();
        let Some(g) = self.group_mut(at, group, t, v.is_some()) else {
            return;
        };
        let Some(v) = v else {
            if let Some(m) = g.members.get_mut(&member) {
                m.member_epoch = LEAVE_GROUP_MEMBER_EPOCH;
                m.previous_member_epoch = LEAVE_GROUP_MEMBER_EPOCH;
                m.assigned.clear();
                m.pending_revocation.clear();
                m.last_offset = at.offset;
            }
            self.owners.release(group, &member);
            return;
        };
        let target_epoch = g.assignment_epoch_seen.then_some(g.assignment_epoch);
        let m = g.members.entry(member.clone()).or_insert_with(|| Member {
            member_id: member.clone(),
            ..Default::default()
        });
        m.last_offset = at.offset;
        m.member_epoch = v.int("MemberEpoch") as i32;
        let member_epoch = m.member_epoch;
        m.previous_member_epoch = v.int("PreviousMemberEpoch") as i32;
        m.state = v.int("State") as i8;
        (m.assigned, m.pending_revocation) = if t == GroupType::Streams {
            (
                tasks(v, ["ActiveTasks", "StandbyTasks", "WarmupTasks"]),
                tasks(
                    v,
                    [
                        "ActiveTasksPendingRevocation",
                        "StandbyTasksPendingRevocation",
                        "WarmupTasksPendingRevocation",
                    ],
                ),
            )
        } else {
            let (mut assigned, mut pending) = (Vec::new(), Vec::new());
            assignment(v.items("AssignedPartitions"), "TopicId", "", &mut assigned);
            let revoking = v.items("PartitionsPendingRevocation");
            assignment(revoking, "TopicId", "", &mut pending);
            (assigned, pending)
        };
        self.claim(at, group, t, &member);
        // A member reconciles towards the target assignment: its epoch never passes the
        // target assignment epoch replayed before it (unknown after compaction: skipped).
        if let Some(target_epoch) = target_epoch
            && member_epoch > target_epoch
        {
            let msg = format!(
                "{} group {group:?}: member {member:?} at epoch {member_epoch} (offset {}) is above the target assignment epoch {target_epoch}",
                t.as_str(),
                at.offset
            );
            self.anomaly(
                AnomalyKind::EpochRegression,
                at,
                group,
                msg,
                json!({"group_id": group, "group_type": t.as_str(), "member_id": member, "member_epoch": member_epoch, "assignment_epoch": target_epoch}),
                false,
            );
        }
    }

    /// Types 4 (consumer partition metadata), 15 (share state partition metadata), 16
    /// (regular expressions), 23 (streams topology).
    fn other(
        &mut self,
        at: &Input<'_>,
        group: &str,
        id: i16,
        k: &StructVal<'_>,
        v: Option<&StructVal<'_>>,
    ) {
        let t = match id {
            4 | 16 => GroupType::Consumer,
            15 => GroupType::Share,
            23 => GroupType::Streams,
            _ => return,
        };
        let Some(g) = self.group_mut(at, group, t, v.is_some()) else {
            return;
        };
        match (id, v) {
            (16, Some(v)) => {
                g.regular_expressions.insert(
                    k.str("RegularExpression").unwrap_or_default(),
                    v.strings("Topics"),
                );
            }
            (16, None) => {
                g.regular_expressions
                    .remove(&k.str("RegularExpression").unwrap_or_default());
            }
            (23, Some(v)) => {
                let mut t = Topology {
                    epoch: v.int("Epoch") as i32,
                    offset: at.offset,
                    ..Default::default()
                };
                for s in v.items("Subtopologies") {
                    let Some(s) = s.as_struct() else { continue };
                    t.subtopologies
                        .push(s.str("SubtopologyId").unwrap_or_default());
                    t.source_topics.extend(s.strings("SourceTopics"));
                    let repartition = s.items("RepartitionSourceTopics");
                    t.repartition_source_topics
                        .extend((repartition.iter()).filter_map(|r| r.as_struct()?.str("Name")));
                }
                g.topology = Some(t);
            }
            (23, None) => g.topology = None,
            _ => {}
        }
        if let (15, Some(v)) = (id, v) {
            self.share_state_duplicates(at, group, v);
        }
    }

    /// End of the log: attach offsets to their groups, mark streams groups left at the
    /// KIP-1331 barrier, and report deleted groups whose records stay live.
    pub fn finish(&mut self) {
        self.finish_read(true);
    }

    /// [`Self::finish`] for a log read to its end (`whole`) or cut short (`--max-bytes`):
    /// a cut log's end is not the log's, so no end-of-log verdict (a barrier without an
    /// outcome, a deleted group's leftover records) is drawn on it.
    pub fn finish_read(&mut self, whole: bool) {
        for (g, offs) in std::mem::take(&mut self.offsets) {
            let target = match self.groups.get_mut(&g) {
                Some(x) => Some(x),
                None => self.deleted.get_mut(&g),
            };
            if let Some(x) = target {
                x.offsets = offs.into_values().collect();
            }
        }
        for g in self.groups.values_mut().chain(self.deleted.values_mut()) {
            g.partition = self.partition;
            g.path = self.path.clone();
        }
        self.drop_kafka_4_0_share_failures();
        if whole {
            super::check::end_of_log(self);
            self.idempotent_anomalies();
        }
    }

    /// Live record keys of `group` (type, offset), for the end-of-log checks.
    pub(crate) fn live_keys_of(&self, group: &str) -> Vec<(i16, i64)> {
        self.live_keys
            .get(group)
            .map(|m| m.values().copied().collect())
            .unwrap_or_default()
    }
}
