//! Typed evidence at the stage joints: the parts of a finding's `evidence` that one stage
//! writes and a later stage reads back (the coordinator confirmation reads the partition
//! replay's open transactions, the triage reads both). Writer and reader go through the
//! same structs, serialized into the JSON and deserialized from it, so a renamed or retyped
//! field changes both at once; the JSON keeps its shape (report schema v1).

use super::Finding;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One batch as findings show it (`first_batch`, `last_marker`, `marker`, …).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BatchEvidence {
    pub offset: i64,
    pub last_offset: i64,
    pub position: u64,
    pub segment: String,
    /// `data`, `commit`, `abort`, …
    #[serde(rename = "type")]
    pub kind: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub timestamp: i64,
    /// Markers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator_epoch: Option<i32>,
    /// Data of a producer only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sequence: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sequence: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_leader_epoch: Option<i32>,
}

/// What an open transaction's finding (`hanging_transaction`, `open_transaction`) holds for
/// the stages after the replay. Each field reads on its own: one of another shape does not
/// hide the others.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OpenTxnJoint {
    /// The transaction's first batch.
    #[serde(default, deserialize_with = "lenient")]
    pub first_batch: Option<BatchEvidence>,
    /// The producer's last marker in the partition (before the transaction).
    #[serde(default, deserialize_with = "lenient")]
    pub last_marker: Option<BatchEvidence>,
    /// The reference time of the verdict (ms).
    #[serde(default, deserialize_with = "lenient")]
    pub reference_time_ms: Option<i64>,
    /// Where read_committed consumers stop.
    #[serde(default, deserialize_with = "lenient")]
    pub last_stable_offset: Option<i64>,
    /// The coordinator epoch of the producer's last marker (-1: none), as
    /// `kafka-transactions.sh find-hanging` lists it.
    #[serde(default, deserialize_with = "lenient")]
    pub coordinator_epoch: Option<i32>,
    /// The producer's last activity in the partition (ms).
    #[serde(default, deserialize_with = "lenient")]
    pub last_timestamp: Option<i64>,
    /// How long the transaction was idle at the reference time (ms).
    #[serde(default, deserialize_with = "lenient")]
    pub idle_ms: Option<i64>,
    /// The idleness above which it is hanging (`--hanging-after`, ms).
    #[serde(default, deserialize_with = "lenient")]
    pub hanging_after_ms: Option<i64>,
    /// What opened it, when the replay knows (a zombie write, a late write after a marker).
    #[serde(default, deserialize_with = "lenient")]
    pub root_cause: Option<String>,
    /// The broker's clock the idleness ran from, when later than `last_timestamp` (ms): a
    /// marker or LogAppendTime batch before it in its partition (the replay), or an earlier
    /// transaction's marker elsewhere in the log dir (`cluster::txns::clock`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub broker_clock_floor_ms: Option<i64>,
    /// The partition holding that earlier marker, when the floor came from another one.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub broker_clock_floor_from: Option<String>,
}

/// What a `zombie_write` finding holds for the stages after the replay.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ZombieJoint {
    /// The marker at the higher epoch the zombie wrote after.
    pub marker: Option<BatchEvidence>,
    /// Transaction version 2, an ABORT one epoch above the write: a coordinator timeout
    /// abort left it as well as a fencing (two readings of the client's fate; the key is
    /// written only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timeout_abort_possible: bool,
}

/// One data partition offset a pending transactional offset commit names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PendingOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// What a `group_offsets_pending_in_hanging_transaction` finding holds for the consumers
/// view's filter (`evidence.pending_offsets`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PendingJoint {
    #[serde(default)]
    pub pending_offsets: Vec<PendingOffset>,
}

/// Whether an unfinished streams-group deletion (`deletion_unfinished`) is a deletion at
/// all: an empty group's barrier (`true`) or a topology push's (`false`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletionJoint {
    #[serde(default)]
    pub deletion: bool,
}

/// Which group coordinators' loads throw on a `__consumer_offsets` record
/// (`evidence.load_fails_in` of a `group_load_failure`): what its broker text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LoadFailsIn {
    /// Kafka 4.x's (what a finding without the field means). A 3.x release stated to
    /// `verify --broker-version` decides it by KAFKA-14869 (`partition::groups::release`):
    /// the record is of a key version 3.x's own coordinator does not replay.
    #[default]
    #[serde(rename = "kafka_4")]
    Kafka4,
    /// Kafka ≤ 3.x's (`GroupMetadataManager.loadGroupsAndOffsets`) and 4.x's.
    #[serde(rename = "kafka_3_and_4")]
    Kafka3And4,
    /// Kafka 4.x's before KAFKA-19862; the releases with it accept the record.
    #[serde(rename = "kafka_4_before_kafka_19862")]
    Kafka4BeforeKafka19862,
    /// Kafka 4.x's before KAFKA-20254; the releases with it accept the record.
    #[serde(rename = "kafka_4_before_kafka_20254")]
    Kafka4BeforeKafka20254,
    /// Kafka 4.x's before KAFKA-19453: the 4.0 releases (the fix is in 4.1.0 and later,
    /// never on the 4.0 branch); the releases with it accept the record.
    #[serde(rename = "kafka_4_before_kafka_19453")]
    Kafka4BeforeKafka19453,
    /// Kafka ≤ 3.x's and 4.x's before KAFKA-20570 (4.2.2, 4.3.2, 4.4.0 and later have it:
    /// never on the 4.0 and 4.1 branches); the releases with it accept the record.
    #[serde(rename = "kafka_3_and_4_before_kafka_20570")]
    Kafka3And4BeforeKafka20570,
    /// Kafka 3.x's before KAFKA-14869 (3.0.0–3.4.0): the first record of a key version
    /// other than 0–2, or of a value version above 3, which those loads throw on. Only a
    /// finding for such a release stated to `verify --broker-version`: the replay keeps it
    /// unreported otherwise (`load_fails` false until that release decides it).
    #[serde(rename = "kafka_3_before_kafka_14869")]
    Kafka3BeforeKafka14869,
    /// Kafka 4.2's and later's: a field 4.1 does not read (a streams group metadata value's
    /// `LastAssignmentConfigs`); 4.0 and 4.1 load the record.
    #[serde(rename = "kafka_4_since_4_2")]
    Kafka4Since42,
}

/// [`LoadFailsIn`] as the evidence carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoadJoint {
    #[serde(default)]
    pub load_fails_in: LoadFailsIn,
}

/// What decides a scoped group load failure for a stated release, as the group replay
/// writes it (`partition::groups::replay`): the group's type (`streams` groups came in 4.1)
/// and, for a classic subscription, the first release whose reader throws on its shape
/// (`3.3`: earlier ones read it as a buffer underflow the load tolerates).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct ScopeJoint {
    #[serde(default)]
    pub group_type: Option<String>,
    #[serde(default)]
    pub fails_since: Option<String>,
}

/// The release `verify --broker-version` stated, on a `group_load_failure` whose scope
/// (`load_fails_in`, before a fix) that release is certainly in: its load throws at the
/// record, and no later record is reached by it (`partition::groups::release`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReleaseJoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_version: Option<String>,
}

/// When a finding happened, as the filters (`--since`/`--until`) and the triage read it:
/// the timestamp of the batch it is about (`batch`, else `first_batch`, else `marker`),
/// else its own `timestamp` or `last_timestamp`, else the earliest of the records it
/// compares (`previous` and `current`: the coordinator records of a
/// `transaction_state_anomaly`) or of the index entries it lists (`entries`:
/// `timeindex_mismatch`). Each is a field a writer names; no other part of the evidence is
/// searched for a time. Negative times are unknown.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct WhenJoint {
    #[serde(default, deserialize_with = "lenient_object")]
    batch: Option<Stamped>,
    #[serde(default, deserialize_with = "lenient_object")]
    first_batch: Option<Stamped>,
    #[serde(default, deserialize_with = "lenient_object")]
    marker: Option<Stamped>,
    #[serde(default, deserialize_with = "lenient")]
    timestamp: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    last_timestamp: Option<i64>,
    #[serde(default, deserialize_with = "lenient_object")]
    previous: Option<Stamped>,
    #[serde(default, deserialize_with = "lenient_object")]
    current: Option<Stamped>,
    #[serde(default, deserialize_with = "lenient")]
    entries: Option<Vec<Stamped>>,
}

/// The timestamp of a batch-shaped evidence object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
struct Stamped {
    #[serde(default, deserialize_with = "lenient")]
    timestamp: Option<i64>,
}

/// `Some` when the value has `T`'s shape, `None` otherwise (another writer's field of the
/// same name never fails the whole joint).
fn lenient<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).ok())
}

/// [`lenient`] for an object only (a list never reads as a struct).
fn lenient_object<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.is_object().then(|| T::deserialize(v).ok()).flatten())
}

impl WhenJoint {
    /// When `f` happened; `None` when its evidence holds no time.
    pub fn time_of(f: &Finding) -> Option<i64> {
        let w: WhenJoint = read(f);
        let known = |t: Option<i64>| t.filter(|t| *t >= 0);
        [w.batch, w.first_batch, w.marker]
            .into_iter()
            .map(|b| known(b.and_then(|b| b.timestamp)))
            .chain([known(w.timestamp), known(w.last_timestamp)])
            .find_map(|t| t)
            .or_else(|| {
                let compared = [w.previous, w.current].into_iter().flatten();
                let listed = w.entries.into_iter().flatten();
                compared
                    .chain(listed)
                    .filter_map(|b| known(b.timestamp))
                    .min()
            })
    }
}

/// The typed part `T` of an evidence value not (yet) in a finding (its default when the
/// value lacks it).
pub fn read_value<'a, T: Deserialize<'a> + Default>(v: &'a Value) -> T {
    T::deserialize(v).unwrap_or_default()
}

/// The two copies a `replica_divergence` compares (`evidence.copies`, first the copy the
/// finding is on): what the leadership stage reads to judge where their lineages fork.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DivergenceJoint {
    #[serde(default)]
    pub copies: Vec<String>,
}

/// What the rewrite of a non-live copy's finding adds (`identity::demote_non_live`): the
/// copy kind, and for an open transaction that would be hanging in a live copy,
/// `hanging_if_live` (what `abandoned_future_replica` counts).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NonLiveJoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hanging_if_live: bool,
}

/// The coordinator's verdict on an open transaction (`evidence.coordinator`): what the
/// triage reads of the confirmation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CoordinatorJoint {
    /// `alive`, `markers_pending`, `moved_on`, `unavailable`, …
    pub verdict: String,
    /// The transactional id the producer maps to, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactional_id: Option<String>,
    /// Whether the coordinator's state leaves the transaction hanging (`false`: it still
    /// owns it — its current transaction lists the partition, Ongoing or Prepare*, which is
    /// what `kafka-transactions.sh find-hanging` drops); `None` when it was not confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hanging: Option<bool>,
}

impl CoordinatorJoint {
    /// The coordinator still owns `f`'s transaction: no `find-hanging` row, no abort.
    pub fn owned_by_coordinator(f: &Finding) -> bool {
        CoordinatorJoint::of(f).and_then(|c| c.hanging) == Some(false)
    }
}

/// The annotation of a finding by the coordinator confirmation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
struct Annotated {
    coordinator: Option<CoordinatorJoint>,
}

/// Merge the fields of `joint` (a struct serializing to a map) into `evidence`.
pub fn merge(evidence: &mut Value, joint: &impl Serialize) {
    if let (Value::Object(m), Ok(Value::Object(j))) = (evidence, serde_json::to_value(joint)) {
        m.extend(j);
    }
}

/// What `verify` reads back of a `stray_replica` (`cluster::leadership::stray` writes
/// it): why the directory is stray and the node it is on — a 3.7.0 broker's start stops
/// at a log without a topic id (`verify::brokers::stray_search_stops`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrayJoint {
    /// `no_topic_id`, `topic_deleted`, `topic_recreated` or `not_a_replica`.
    pub reason: String,
    pub node_id: i32,
}

/// The typed part `T` of `f`'s evidence (its default when the evidence lacks it).
pub fn read<'a, T: Deserialize<'a> + Default>(f: &'a Finding) -> T {
    T::deserialize(&f.evidence).unwrap_or_default()
}

impl CoordinatorJoint {
    /// The coordinator's verdict on `f`, when the confirmation annotated it.
    pub fn of(f: &Finding) -> Option<CoordinatorJoint> {
        read::<Annotated>(f).coordinator
    }

    /// Put `annotation` (the confirmation's evidence, holding this joint's fields) at
    /// `evidence.coordinator`.
    pub fn annotate(evidence: &mut Value, annotation: Value) {
        let Ok(Value::Object(key)) = serde_json::to_value(Annotated {
            coordinator: Some(CoordinatorJoint::default()),
        }) else {
            return;
        };
        if let (Value::Object(m), Some((k, _))) = (evidence, key.into_iter().next()) {
            m.insert(k, annotation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Kind;
    use serde_json::json;

    /// What a writer merges is what a reader gets back; the keys sit where the JSON had
    /// them; the coordinator's annotation goes under its key and reads back typed.
    #[test]
    fn joints_round_trip_through_the_json() {
        let marker = BatchEvidence {
            offset: 4,
            last_offset: 4,
            position: 120,
            segment: "00000000000000000000.log".into(),
            kind: "commit".into(),
            producer_id: 7,
            producer_epoch: 2,
            timestamp: 1_000,
            coordinator_epoch: Some(3),
            ..BatchEvidence::default()
        };
        let joint = OpenTxnJoint {
            first_batch: None,
            last_marker: Some(marker.clone()),
            reference_time_ms: Some(9_000),
            last_stable_offset: Some(5),
            coordinator_epoch: Some(3),
            last_timestamp: Some(1_000),
            idle_ms: Some(8_000),
            hanging_after_ms: Some(900_000),
            root_cause: None,
            broker_clock_floor_ms: None,
            broker_clock_floor_from: None,
        };
        let mut ev = json!({"idle_ms": 1});
        merge(&mut ev, &joint);
        assert_eq!(ev["last_marker"]["type"], "commit");
        assert_eq!(ev["last_marker"]["coordinator_epoch"], 3);
        assert!(ev["last_marker"].get("base_sequence").is_none());
        assert!(ev["first_batch"].is_null());
        let mut f = Finding::new(Kind::HangingTransaction, "t", 0, "m").evidence(ev);
        assert_eq!(read::<OpenTxnJoint>(&f), joint);
        assert_eq!(CoordinatorJoint::of(&f), None);
        let mut annotation = json!({"confirmed": true});
        let verdict = CoordinatorJoint {
            verdict: "alive".into(),
            transactional_id: Some("app".into()),
            hanging: Some(false),
        };
        merge(&mut annotation, &verdict);
        CoordinatorJoint::annotate(&mut f.evidence, annotation);
        assert_eq!(f.evidence["coordinator"]["verdict"], "alive");
        assert_eq!(f.evidence["coordinator"]["hanging"], false);
        assert_eq!(CoordinatorJoint::of(&f), Some(verdict));
        assert!(CoordinatorJoint::owned_by_coordinator(&f));
        // Unreadable evidence gives the default, not a panic.
        let g = Finding::new(Kind::ZombieWrite, "t", 0, "m").evidence(json!({"marker": 3}));
        assert_eq!(read::<ZombieJoint>(&g), ZombieJoint::default());
    }
}
