//! The replay of a metadata log into a leadership history, as the broker's metadata loader
//! applies it.
//!
//! * Partition state: a `PartitionRecord` sets the whole registration; a
//!   `PartitionChangeRecord` merges into it as `PartitionRegistration.merge` does: a null
//!   field keeps the old value, `Leader` -2 (`NO_LEADER_CHANGE`) keeps the leader and its
//!   epoch, any other `Leader` (including -1, no leader) raises the leader epoch by one,
//!   and every change raises the partition epoch by one; `LeaderRecoveryState` -1 keeps the
//!   old state (`LeaderRecoveryState.changeTo`).
//! * Metadata transactions (KIP-868): records between a `BeginTransactionRecord` and its
//!   `EndTransactionRecord` are applied together when the End is read; those before an
//!   `AbortTransactionRecord`, and those of a transaction the log ends inside, are never
//!   applied (`MetadataBatchLoader.replay` / `maybeFlushBatches`).
//! * `ClearElrRecord` empties the ELR and last known ELR of a topic's partitions (all
//!   topics when its name is empty), as `ReplicationControlManager.replay(ClearElrRecord)`.
//! * `RemoveTopicRecord` ends the topic's partitions' timelines.
//! * A record a node's replay throws on is not applied where brokers skip it (their loader
//!   logs it and goes on): replica directories not one per replica, a leader recovery state
//!   `LeaderRecoveryState` does not know, a registration change of a broker or epoch not
//!   registered, a partition record of a topic or partition the image does not hold
//!   (`refused`, kept in the history for `metadata_record_rejected`). A record
//!   only controllers refuse (an `UnregisterBrokerRecord` at another epoch, a `TopicRecord`
//!   of a live topic's name) is kept aside too, and applied as brokers apply it.

use super::refused;
pub use super::refused::{
    RefusedBrokerChange, RefusedDirectories, RefusedRecoveryState, RefusedTarget, RefusedTopic,
};
use crate::read::format::metadata::{
    MetaRecord, NO_LEADER_CHANGE, PartitionChange, PartitionRecord, RESOURCE_BROKER,
    RESOURCE_TOPIC, TopicId,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One record of the metadata log (or of a snapshot), where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaEntry {
    /// Offset in the metadata log (for a snapshot's records: the snapshot's end offset − 1,
    /// where the state they describe holds).
    pub offset: i64,
    /// The record's timestamp (the batch's append time), ms.
    pub time: i64,
    /// The KRaft epoch of the batch (`partitionLeaderEpoch`).
    pub raft_epoch: i32,
    /// True for the records of a snapshot.
    pub from_snapshot: bool,
    pub record: MetaRecord,
}

/// The state of a partition after one record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    pub offset: i64,
    pub time: i64,
    /// True for the state a snapshot (or a `PartitionRecord`) gave whole.
    pub from_snapshot: bool,
    pub leader: i32,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub isr: Vec<i32>,
    pub elr: Vec<i32>,
    pub last_known_elr: Vec<i32>,
    /// 0 recovered, 1 recovering from an unclean election (`LeaderRecoveryState`).
    pub recovery_state: i8,
    pub replicas: Vec<i32>,
    pub adding: Vec<i32>,
    pub removing: Vec<i32>,
    /// Each replica's log dir, by `directory.id` (KIP-858, 3.7 and later: the same order
    /// as `replicas`; empty from a record without them, which `PartitionRegistration`
    /// reads as MIGRATING). Not in the history's JSON.
    #[serde(skip)]
    pub directories: Vec<[u8; 16]>,
}

impl PartitionState {
    fn from_record(r: &PartitionRecord, offset: i64, time: i64, from_snapshot: bool) -> Self {
        PartitionState {
            offset,
            time,
            from_snapshot,
            leader: r.leader,
            leader_epoch: r.leader_epoch,
            partition_epoch: r.partition_epoch,
            isr: r.isr.clone(),
            elr: r.eligible_leader_replicas.clone().unwrap_or_default(),
            last_known_elr: r.last_known_elr.clone().unwrap_or_default(),
            recovery_state: r.leader_recovery_state,
            replicas: r.replicas.clone(),
            adding: r.adding_replicas.clone(),
            removing: r.removing_replicas.clone(),
            directories: r.directories.clone(),
        }
    }

    /// The `directory.id` of the log dir the state assigns `replica`'s copy to
    /// (`PartitionRegistration.directory`; `None`: not a replica, or no directory known).
    pub fn directory(&self, replica: i32) -> Option<[u8; 16]> {
        let i = self.replicas.iter().position(|&r| r == replica)?;
        self.directories.get(i).copied()
    }

    /// `PartitionRegistration.merge`.
    pub fn merge(&self, c: &PartitionChange, offset: i64, time: i64) -> Self {
        let pick =
            |new: &Option<Vec<i32>>, old: &Vec<i32>| new.clone().unwrap_or_else(|| old.clone());
        let (leader, leader_epoch) = if c.leader == NO_LEADER_CHANGE {
            (self.leader, self.leader_epoch)
        } else {
            (c.leader, self.leader_epoch.wrapping_add(1))
        };
        PartitionState {
            offset,
            time,
            from_snapshot: false,
            leader,
            leader_epoch,
            partition_epoch: self.partition_epoch.wrapping_add(1),
            isr: pick(&c.isr, &self.isr),
            elr: pick(&c.eligible_leader_replicas, &self.elr),
            last_known_elr: pick(&c.last_known_elr, &self.last_known_elr),
            recovery_state: if c.leader_recovery_state == -1 {
                self.recovery_state
            } else {
                c.leader_recovery_state
            },
            replicas: pick(&c.replicas, &self.replicas),
            adding: pick(&c.adding_replicas, &self.adding),
            removing: pick(&c.removing_replicas, &self.removing),
            directories: c
                .directories
                .clone()
                .unwrap_or_else(|| self.directories.clone()),
        }
    }
}

/// One step of a partition's timeline: the state after a record, and the change that led
/// there (`None` for a whole `PartitionRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub state: PartitionState,
    pub change: Option<PartitionChange>,
    pub kind: StepKind,
}

/// What made a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A `PartitionRecord` of the snapshot.
    Snapshot,
    /// A `PartitionRecord` of the log (partition created).
    PartitionRecord,
    /// A `PartitionChangeRecord`.
    Change,
    /// A `ClearElrRecord`.
    ClearElr,
}

/// A partition's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    pub topic: String,
    pub topic_id: TopicId,
    pub partition: i32,
    pub steps: Vec<Step>,
    /// The metadata offset of the topic's removal, when removed.
    pub removed_at: Option<i64>,
}

impl Timeline {
    /// The latest state.
    pub fn current(&self) -> Option<&PartitionState> {
        self.steps.last().map(|s| &s.state)
    }
}

/// What happened to a broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrokerChange {
    Registered { fenced: bool, epoch: i64 },
    Unregistered,
    Fenced,
    Unfenced,
    ControlledShutdown,
}

impl BrokerChange {
    /// How the history names it.
    pub fn describe(&self) -> String {
        match self {
            BrokerChange::Registered { fenced, epoch } => format!(
                "registered (broker epoch {epoch}{})",
                if *fenced { ", fenced" } else { "" }
            ),
            BrokerChange::Unregistered => "unregistered".into(),
            BrokerChange::Fenced => "fenced".into(),
            BrokerChange::Unfenced => "unfenced".into(),
            BrokerChange::ControlledShutdown => "in controlled shutdown".into(),
        }
    }
}

/// A broker event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerEvent {
    pub offset: i64,
    pub time: i64,
    pub broker: i32,
    pub change: BrokerChange,
}

/// A topic created or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicEvent {
    pub offset: i64,
    pub time: i64,
    pub topic: String,
    pub topic_id: TopicId,
    pub created: bool,
}

/// The configs the leadership history reads: `unclean.leader.election.enable` and
/// `min.insync.replicas`, set or deleted, for a topic or a broker (an empty broker name:
/// the cluster default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigEvent {
    pub offset: i64,
    pub time: i64,
    /// `topic` or `broker`.
    pub scope: String,
    pub resource: String,
    pub name: String,
    pub value: Option<String>,
}

/// The config names the history keeps.
pub const KEPT_CONFIGS: [&str; 2] = ["unclean.leader.election.enable", "min.insync.replicas"];

/// A metadata transaction (KIP-868) that was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedTxn {
    /// Offset of its `BeginTransactionRecord`.
    pub begin: i64,
    /// Offset of its `AbortTransactionRecord`; `None`: the log ends inside it.
    pub abort: Option<i64>,
    /// Records it held.
    pub records: usize,
}

/// A `PartitionChangeRecord` for a partition the replay holds no state of (the log does
/// not start at a snapshot, or the partition was never created).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    pub offset: i64,
    pub topic_id: TopicId,
    pub partition: i32,
}

/// Everything the replay of one metadata log gives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// Keyed by `(topic id, partition)`.
    pub partitions: BTreeMap<(TopicId, i32), Timeline>,
    pub brokers: Vec<BrokerEvent>,
    pub topics: Vec<TopicEvent>,
    pub configs: Vec<ConfigEvent>,
    pub dropped_txns: Vec<DroppedTxn>,
    pub orphans: Vec<Orphan>,
    /// KIP-868 framing the loader rejects (a Begin inside a transaction, an End or Abort
    /// outside one): `(offset, what)`.
    pub txn_errors: Vec<(i64, String)>,
    /// `metadata.version` as the log sets it (`FeatureLevelRecord`): `(offset, level)`, in
    /// order. What an election record can carry depends on it (leader recovery from 3.2).
    pub metadata_versions: Vec<(i64, i16)>,
    /// `ProducerIdsRecord`s whose next producer id is not above the one before it, which
    /// `ProducerIdControlManager.replay` throws on: `(offset, previous next id, next id)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producer_id_regressions: Vec<(i64, i64, i64)>,
    /// Partition records whose replica directories `PartitionRegistration` refuses (KIP-858:
    /// a list of another length than the replicas'), not applied: what a broker's loader
    /// does after its fault handler logs it; a controller stops there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_directories: Vec<RefusedDirectories>,
    /// Partition records whose leader recovery state `LeaderRecoveryState` refuses, not
    /// applied (as [`History::refused_directories`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_recovery_states: Vec<RefusedRecoveryState>,
    /// Broker registration records a node's replay throws on (a broker or broker epoch not
    /// registered, a value outside its enum): not applied where brokers skip them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_broker_changes: Vec<RefusedBrokerChange>,
    /// `TopicRecord`s naming a live topic, which a controller's replay throws on and brokers
    /// apply (applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_topics: Vec<RefusedTopic>,
    /// Partition records of a topic or partition the image does not hold, which every
    /// node's replay throws on: not applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_targets: Vec<RefusedTarget>,
    /// The first offset the replay could not apply (`MetadataLog::gaps`; replay state):
    /// at and past it the registrations may lack one.
    #[serde(skip)]
    first_gap: Option<i64>,
    /// A broker registration record was kept raw (replay state): any registration may
    /// differ from what the replay holds.
    #[serde(skip)]
    raw_broker_record: bool,
    /// The next producer id the last `ProducerIdsRecord` applied set (replay state).
    #[serde(skip)]
    next_producer_id: Option<i64>,
    /// The registered brokers at the history's end, by id, with the log dirs each
    /// registered (`ClusterControlManager.brokerRegistrations`). Not in the history's JSON.
    #[serde(skip)]
    pub registrations: BTreeMap<i32, Registration>,
}

/// A broker's registration as the image keeps it (`BrokerRegistration`): the directory ids
/// of its log dirs (`BrokerRegistration.directories`, KIP-858: a `RegisterBrokerRecord`'s
/// `LogDirs`, replaced by a `BrokerRegistrationChangeRecord` carrying a non-empty one), gone
/// with an `UnregisterBrokerRecord`. `ClusterControlManager.replay` keeps the same ids in
/// `directoryToBroker`, which `registerBroker` holds a new registration against.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Registration {
    /// The metadata offset of the `RegisterBrokerRecord` (a snapshot's: its end offset − 1).
    pub offset: i64,
    /// The record was a snapshot's.
    pub from_snapshot: bool,
    /// The broker epoch it gave.
    pub epoch: i64,
    pub directories: Vec<[u8; 16]>,
    /// A broker registration record the replay kept raw (a type version it does not know)
    /// came after it: the image may hold another registration, or none.
    pub unsure: bool,
}

impl History {
    /// The `metadata.version` feature level in force at metadata offset `offset`, when the
    /// log set one at or before it.
    pub fn metadata_version_at(&self, offset: i64) -> Option<i16> {
        self.metadata_versions
            .iter()
            .take_while(|(o, _)| *o <= offset)
            .last()
            .map(|(_, l)| *l)
    }
}

/// Replay `entries` (snapshot first, then the log, in offset order), taken as the whole
/// log: [`replay_with_gaps`] without a gap.
pub fn replay(entries: &[MetaEntry]) -> History {
    replay_with_gaps(entries, &[])
}

/// Replay `entries`, which miss the records at `gaps` (`MetadataLog::gaps`: what the replay
/// could not read). Past a gap a broker record is not refused for a registration the
/// history lacks: the gap may hold it.
pub fn replay_with_gaps(entries: &[MetaEntry], gaps: &[i64]) -> History {
    let mut h = History {
        first_gap: gaps.iter().min().copied(),
        ..Default::default()
    };
    let mut names: HashMap<TopicId, String> = HashMap::new();
    let mut pending: Option<(i64, Vec<&MetaEntry>)> = None;
    for e in entries {
        match &e.record {
            MetaRecord::BeginTransaction { .. } => {
                if pending.is_some() {
                    h.txn_errors.push((
                        e.offset,
                        "BeginTransactionRecord while already in a transaction".into(),
                    ));
                } else {
                    pending = Some((e.offset, Vec::new()));
                }
            }
            MetaRecord::EndTransaction => match pending.take() {
                Some((_, held)) => {
                    for r in held {
                        apply(&mut h, &mut names, r);
                    }
                }
                None => h.txn_errors.push((
                    e.offset,
                    "EndTransactionRecord without a BeginTransactionRecord".into(),
                )),
            },
            MetaRecord::AbortTransaction { .. } => match pending.take() {
                Some((begin, held)) => h.dropped_txns.push(DroppedTxn {
                    begin,
                    abort: Some(e.offset),
                    records: held.len(),
                }),
                None => h.txn_errors.push((
                    e.offset,
                    "AbortTransactionRecord without a BeginTransactionRecord".into(),
                )),
            },
            _ => match &mut pending {
                Some((_, held)) => held.push(e),
                None => apply(&mut h, &mut names, e),
            },
        }
    }
    if let Some((begin, held)) = pending {
        h.dropped_txns.push(DroppedTxn {
            begin,
            abort: None,
            records: held.len(),
        });
    }
    h
}

/// Applies one record to the history, as the metadata loader's `replay` of that record type
/// does (see the module's notes); records that change nothing the history keeps are skipped.
fn apply(h: &mut History, names: &mut HashMap<TopicId, String>, e: &MetaEntry) {
    let (offset, time) = (e.offset, e.time);
    match &e.record {
        // `ReplicationControlManager.replay` throws on a name already live (a controller
        // stops); a broker's `TopicsDelta.replay` takes it. Judged only while no record the
        // replay could not read (a removal) lies at or before it.
        MetaRecord::Topic { name, topic_id } => {
            let sure = h.first_gap.is_none_or(|g| g > offset);
            let live = names.iter().find(|(_, n)| *n == name);
            if let (true, Some((live_id, _))) = (sure, live) {
                h.refused_topics.push(refused::RefusedTopic {
                    offset,
                    topic: name.clone(),
                    topic_id: *topic_id,
                    live_id: *live_id,
                });
            }
            names.insert(*topic_id, name.clone());
            h.topics.push(TopicEvent {
                offset,
                time,
                topic: name.clone(),
                topic_id: *topic_id,
                created: true,
            });
        }
        MetaRecord::RemoveTopic { topic_id } => remove_topic(h, names, *topic_id, offset, time),
        // `ProducerIdControlManager.replay`: a next id not above the current block's first
        // (the previous record's next id) throws, and the controller's replay of a
        // committed record is fatal (`QuorumController`: "Unable to apply … record");
        // brokers take any (`ProducerIdsDelta.replay`). The controller keeps its block as
        // it was.
        MetaRecord::ProducerIds {
            next_producer_id, ..
        } => match h.next_producer_id {
            Some(prev) if *next_producer_id <= prev => {
                (h.producer_id_regressions).push((offset, prev, *next_producer_id));
            }
            _ => h.next_producer_id = Some(*next_producer_id),
        },
        // `PartitionRegistration` refuses replica directories of another number than the
        // replicas: the record is not applied (a controller's replay stops there).
        // So does `LeaderRecoveryState` a recovery state other than 0 or 1 (-1 too, for a
        // change: no change).
        MetaRecord::Partition(r) => {
            if let Some(x) = refused_target(h, names, (r.topic_id, r.partition_id), false, e) {
                h.refused_targets.push(x);
            } else if let Some(x) = refused::refused_record(r, offset) {
                h.refused_directories.push(x);
            } else if let Some(x) = refused::recovery_of_record(r, offset) {
                h.refused_recovery_states.push(x);
            } else {
                apply_partition(h, names, r, e);
            }
        }
        MetaRecord::PartitionChange(c) => {
            let cur = (h.partitions.get(&(c.topic_id, c.partition_id)))
                .filter(|t| t.removed_at.is_none())
                .and_then(|t| t.current());
            let target = (c.topic_id, c.partition_id);
            if let Some(x) = cur
                .is_none()
                .then(|| refused_target(h, names, target, true, e))
                .flatten()
            {
                h.refused_targets.push(x);
            } else if let Some(x) =
                cur.and_then(|s| refused::refused_change((&s.replicas, &s.directories), c, offset))
            {
                h.refused_directories.push(x);
            } else if let Some(x) = cur.and(refused::recovery_of_change(c, offset)) {
                h.refused_recovery_states.push(x);
            } else {
                apply_change(h, c, offset, time);
            }
        }
        MetaRecord::ClearElr { topic_name } => clear_elr(h, topic_name, offset, time),
        MetaRecord::FeatureLevel {
            name,
            feature_level,
        } if name == "metadata.version" => h.metadata_versions.push((offset, *feature_level)),
        MetaRecord::Config {
            resource_type,
            resource_name,
            name,
            value,
        } if KEPT_CONFIGS.contains(&name.as_str())
            && (*resource_type == RESOURCE_TOPIC || *resource_type == RESOURCE_BROKER) =>
        {
            h.configs.push(ConfigEvent {
                offset,
                time,
                scope: if *resource_type == RESOURCE_TOPIC {
                    "topic"
                } else {
                    "broker"
                }
                .into(),
                resource: resource_name.clone(),
                name: name.clone(),
                value: value.clone(),
            });
        }
        record => apply_broker(h, record, e),
    }
}

/// `RemoveTopicRecord`: the topic's partitions' timelines end at `offset`.
fn remove_topic(
    h: &mut History,
    names: &mut HashMap<TopicId, String>,
    topic_id: TopicId,
    offset: i64,
    time: i64,
) {
    let name = names.remove(&topic_id).unwrap_or_default();
    for ((id, _), t) in h.partitions.iter_mut() {
        if *id == topic_id && t.removed_at.is_none() {
            t.removed_at = Some(offset);
        }
    }
    h.topics.push(TopicEvent {
        offset,
        time,
        topic: name,
        topic_id,
        created: false,
    });
}

/// [`RefusedTarget`] of the partition record `e` of `topic_id`'s partition `partition`: a
/// `PartitionRecord` if the topic id is not live; a `PartitionChangeRecord` (`change`, its
/// partition without a live state in the history) always. Judged only while no record the
/// replay could not read lies at or before it.
fn refused_target(
    h: &History,
    names: &HashMap<TopicId, String>,
    (topic_id, partition): (TopicId, i32),
    change: bool,
    e: &MetaEntry,
) -> Option<RefusedTarget> {
    let topic_live = names.contains_key(&topic_id);
    if (topic_live && !change) || h.first_gap.is_some_and(|g| g <= e.offset) {
        return None;
    }
    // A change of a partition whose own `PartitionRecord` was refused is that refusal's
    // consequence (a controller stopped there; a broker skips both): said once.
    let refused_record = |record: &str, t: &TopicId, p: i32| {
        record == "PartitionRecord" && *t == topic_id && p == partition
    };
    if (h.refused_directories.iter()).any(|x| refused_record(&x.record, &x.topic_id, x.partition))
        || (h.refused_recovery_states.iter())
            .any(|x| refused_record(&x.record, &x.topic_id, x.partition))
    {
        return None;
    }
    let removed_at = (h.topics.iter().rev())
        .find(|t| t.topic_id == topic_id)
        .filter(|t| !t.created)
        .map(|t| t.offset);
    let record = if change {
        "PartitionChangeRecord"
    } else {
        "PartitionRecord"
    };
    Some(RefusedTarget {
        offset: e.offset,
        record: record.into(),
        topic_id,
        partition,
        topic_live,
        removed_at,
    })
}

/// `PartitionRecord` (or a snapshot's): the whole registration, a new step of the timeline.
fn apply_partition(
    h: &mut History,
    names: &HashMap<TopicId, String>,
    r: &PartitionRecord,
    e: &MetaEntry,
) {
    let topic = names.get(&r.topic_id).cloned().unwrap_or_default();
    let state = PartitionState::from_record(r, e.offset, e.time, e.from_snapshot);
    let t = h
        .partitions
        .entry((r.topic_id, r.partition_id))
        .or_insert_with(|| Timeline {
            topic,
            topic_id: r.topic_id,
            partition: r.partition_id,
            steps: Vec::new(),
            removed_at: None,
        });
    let kind = if e.from_snapshot {
        StepKind::Snapshot
    } else {
        StepKind::PartitionRecord
    };
    t.steps.push(Step {
        state,
        change: None,
        kind,
    });
}

/// `PartitionChangeRecord`: merged into the partition's current state; a change of a
/// partition never registered (or already removed) is an orphan.
fn apply_change(h: &mut History, c: &PartitionChange, offset: i64, time: i64) {
    match h.partitions.get_mut(&(c.topic_id, c.partition_id)) {
        Some(t) if t.removed_at.is_none() => {
            let next = t
                .current()
                .map(|s| s.merge(c, offset, time))
                .expect("a timeline has a first step");
            t.steps.push(Step {
                state: next,
                change: Some(c.clone()),
                kind: StepKind::Change,
            });
        }
        _ => h.orphans.push(Orphan {
            offset,
            topic_id: c.topic_id,
            partition: c.partition_id,
        }),
    }
}

/// `ClearElrRecord`: the ELR and last known ELR of the topic's partitions (every topic's
/// when `topic_name` is empty) emptied, the partition epoch raised by one.
fn clear_elr(h: &mut History, topic_name: &str, offset: i64, time: i64) {
    for t in h.partitions.values_mut() {
        if t.removed_at.is_some() || !(topic_name.is_empty() || topic_name == t.topic) {
            continue;
        }
        let Some(cur) = t.current() else { continue };
        if cur.elr.is_empty() && cur.last_known_elr.is_empty() {
            continue;
        }
        let mut next = cur.clone();
        next.offset = offset;
        next.time = time;
        next.from_snapshot = false;
        next.elr.clear();
        next.last_known_elr.clear();
        next.partition_epoch = next.partition_epoch.wrapping_add(1);
        t.steps.push(Step {
            state: next,
            change: None,
            kind: StepKind::ClearElr,
        });
    }
}

/// The broker registration records: registered, unregistered, fenced, unfenced, in
/// controlled shutdown, and the log dirs each registered broker has
/// ([`History::registrations`]). Any other record is not kept.
///
/// A record the node's replay throws on ([`RefusedBrokerChange`]) is kept aside and, where
/// brokers skip it, not applied; a missing registration is judged only while the replay
/// holds every registration (no gap at or before the record, no broker record kept raw).
fn apply_broker(h: &mut History, record: &MetaRecord, e: &MetaEntry) {
    let sure = !h.raw_broker_record && h.first_gap.is_none_or(|g| g > e.offset);
    let registered = broker_id(record).and_then(|b| h.registrations.get(&b));
    let epoch = registered.map(|r| r.epoch);
    if let Some(x) = refused::broker_change(epoch, sure, record, e.offset) {
        let skip = x.brokers_skip;
        h.refused_broker_changes.push(x);
        if skip {
            return;
        }
    }
    if matches!(record, MetaRecord::Unknown { api_key, .. } if BROKER_RECORDS.contains(api_key)) {
        h.raw_broker_record = true;
    }
    register(&mut h.registrations, record, e);
    let (offset, time) = (e.offset, e.time);
    let mut push = |broker: i32, change: BrokerChange| {
        h.brokers.push(BrokerEvent {
            offset,
            time,
            broker,
            change,
        })
    };
    match record {
        MetaRecord::RegisterBroker(r) => {
            push(
                r.broker_id,
                BrokerChange::Registered {
                    fenced: r.fenced,
                    epoch: r.broker_epoch,
                },
            );
            // `ClusterControlManager.replay` takes the flag from the record (a snapshot's
            // `BrokerRegistration.toRecord`, or a re-registration of the same incarnation,
            // carries it): the broker is shutting down, no acceptable leader.
            if r.in_controlled_shutdown {
                push(r.broker_id, BrokerChange::ControlledShutdown);
            }
        }
        MetaRecord::UnregisterBroker { broker_id, .. } => {
            push(*broker_id, BrokerChange::Unregistered)
        }
        MetaRecord::FenceBroker { id, .. } => push(*id, BrokerChange::Fenced),
        MetaRecord::UnfenceBroker { id, .. } => push(*id, BrokerChange::Unfenced),
        MetaRecord::BrokerRegistrationChange(c) => {
            match c.fenced {
                1 => push(c.broker_id, BrokerChange::Fenced),
                -1 => push(c.broker_id, BrokerChange::Unfenced),
                _ => {}
            }
            if c.in_controlled_shutdown == 1 {
                push(c.broker_id, BrokerChange::ControlledShutdown);
            }
        }
        _ => {}
    }
}

/// [`History::registrations`] after `record`, as `ClusterControlManager.replay` of the
/// broker registration records keeps them: a `RegisterBrokerRecord` sets the broker's
/// registration whole (its `LogDirs` the directories); an `UnregisterBrokerRecord` removes
/// it; a `BrokerRegistrationChangeRecord` of the registration's epoch with a non-empty
/// `LogDirs` replaces the directories (`replayRegistrationChange`: an empty list changes
/// nothing; one of another epoch the controller throws on, and the registration is marked
/// unsure).
/// A broker registration record kept raw may have changed any registration: each is marked
/// unsure.
fn register(regs: &mut BTreeMap<i32, Registration>, record: &MetaRecord, e: &MetaEntry) {
    match record {
        MetaRecord::RegisterBroker(r) => {
            regs.insert(
                r.broker_id,
                Registration {
                    offset: e.offset,
                    from_snapshot: e.from_snapshot,
                    epoch: r.broker_epoch,
                    directories: r.log_dirs.clone(),
                    unsure: false,
                },
            );
        }
        MetaRecord::UnregisterBroker { broker_id, .. } => {
            // The controller also requires the epoch to match (or throws): removed whatever
            // the epoch, so no registration outlives a record that ended it.
            regs.remove(broker_id);
        }
        MetaRecord::BrokerRegistrationChange(c) if !c.log_dirs.is_empty() => {
            if let Some(reg) = regs.get_mut(&c.broker_id) {
                if reg.epoch == c.broker_epoch {
                    reg.directories = c.log_dirs.clone();
                } else {
                    reg.unsure = true;
                }
            }
        }
        MetaRecord::Unknown { api_key, .. } if BROKER_RECORDS.contains(api_key) => {
            regs.values_mut().for_each(|r| r.unsure = true);
        }
        _ => {}
    }
}

/// The api keys of `RegisterBrokerRecord`, `UnregisterBrokerRecord` and
/// `BrokerRegistrationChangeRecord`.
const BROKER_RECORDS: [i16; 3] = [0, 1, 17];

/// The broker a registration change record names.
fn broker_id(record: &MetaRecord) -> Option<i32> {
    match record {
        MetaRecord::FenceBroker { id, .. } | MetaRecord::UnfenceBroker { id, .. } => Some(*id),
        MetaRecord::BrokerRegistrationChange(c) => Some(c.broker_id),
        MetaRecord::UnregisterBroker { broker_id, .. } => Some(*broker_id),
        _ => None,
    }
}
