//! The records a node's replay refuses, which the history does not apply where brokers skip
//! them (`metadata_record_rejected`): a broker's metadata loader hands each record's replay
//! to a fault handler that logs the exception and goes on without the record
//! (`MetadataBatchLoader.loadBatch`, `MetadataLoader`'s snapshot load; fatal only on a node
//! with the controller role, `SharedServer`), while a controller's replay of a committed
//! record is fatal (`QuorumController`).
//!
//! * replica directories `PartitionRegistration` refuses ([`RefusedDirectories`]);
//! * a leader recovery state other than RECOVERED (0) or RECOVERING (1)
//!   ([`RefusedRecoveryState`]);
//! * a broker registration change of a broker, or at a broker epoch, the image does not
//!   register, or with a fencing or controlled-shutdown value outside its enum
//!   ([`RefusedBrokerChange`]);
//! * a `TopicRecord` of a topic name already live, which only a controller refuses
//!   ([`RefusedTopic`]);
//! * a partition record of a topic, or a `PartitionChangeRecord` of a partition, the image
//!   does not hold ([`RefusedTarget`]).

use crate::read::format::metadata::{MetaRecord, PartitionChange, PartitionRecord, TopicId};
use serde::{Deserialize, Serialize};

/// A partition record `PartitionRegistration` refuses for its replica directories: a
/// `PartitionRecord` listing directories of another number than its replicas
/// (`checkDirectories`: `InvalidReplicaDirectoriesException`), or a `PartitionChangeRecord`
/// doing so for the replicas it sets, or leaving the partition with assigned directories
/// of another number than its replicas (`merge`, then the constructor:
/// `IllegalArgumentException`). Directories all MIGRATING (the zero id), or none, read as
/// MIGRATING for every replica (`defaultToMigrating`) and are never refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedDirectories {
    pub offset: i64,
    /// `PartitionRecord` or `PartitionChangeRecord`.
    pub record: String,
    pub topic_id: TopicId,
    pub partition: i32,
    /// How many replicas and directories the partition would have.
    pub replicas: usize,
    pub directories: usize,
    /// The Java exception the node's replay throws.
    pub exception: String,
}

/// Whether `dirs` reads as MIGRATING for every replica (`PartitionRegistration`'s
/// `migratingDirectories`: none, or every one the zero id).
fn migrating(dirs: &[[u8; 16]]) -> bool {
    dirs.iter().all(|d| *d == [0; 16])
}

/// [`RefusedDirectories`] of a `PartitionRecord`, if refused.
pub(super) fn refused_record(r: &PartitionRecord, offset: i64) -> Option<RefusedDirectories> {
    (!r.directories.is_empty() && r.directories.len() != r.replicas.len()).then(|| {
        RefusedDirectories {
            offset,
            record: "PartitionRecord".into(),
            topic_id: r.topic_id,
            partition: r.partition_id,
            replicas: r.replicas.len(),
            directories: r.directories.len(),
            exception: "InvalidReplicaDirectoriesException".into(),
        }
    })
}

/// [`RefusedDirectories`] of a `PartitionChangeRecord` merged into the partition's state
/// `cur` (its replicas and directories), if refused.
pub(super) fn refused_change(
    cur: (&[i32], &[[u8; 16]]),
    c: &PartitionChange,
    offset: i64,
) -> Option<RefusedDirectories> {
    let replicas = c.replicas.as_ref().map_or(cur.0.len(), Vec::len);
    let refused = |directories: usize, exception: &str| RefusedDirectories {
        offset,
        record: "PartitionChangeRecord".into(),
        topic_id: c.topic_id,
        partition: c.partition_id,
        replicas,
        directories,
        exception: exception.into(),
    };
    if let (Some(r), Some(d)) = (&c.replicas, &c.directories)
        && !d.is_empty()
        && d.len() != r.len()
    {
        return Some(refused(d.len(), "InvalidReplicaDirectoriesException"));
    }
    let dirs = c.directories.as_deref().unwrap_or(cur.1);
    (!migrating(dirs) && dirs.len() != replicas)
        .then(|| refused(dirs.len(), "IllegalArgumentException"))
}

/// A partition record whose leader recovery state `LeaderRecoveryState` refuses: a
/// `PartitionRecord`'s not RECOVERED (0) or RECOVERING (1) (`LeaderRecoveryState.of`, in
/// `PartitionRegistration`'s constructor), a `PartitionChangeRecord`'s none of those nor
/// -1, which keeps the state (`LeaderRecoveryState.changeTo`, in `merge`): both throw
/// `IllegalArgumentException` ("Value … is not a valid leader recovery state").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedRecoveryState {
    pub offset: i64,
    /// `PartitionRecord` or `PartitionChangeRecord`.
    pub record: String,
    pub topic_id: TopicId,
    pub partition: i32,
    /// The value the record carries.
    pub leader_recovery_state: i8,
}

/// [`RefusedRecoveryState`] of a `PartitionRecord`, if refused.
pub(super) fn recovery_of_record(r: &PartitionRecord, offset: i64) -> Option<RefusedRecoveryState> {
    (!matches!(r.leader_recovery_state, 0 | 1)).then(|| RefusedRecoveryState {
        offset,
        record: "PartitionRecord".into(),
        topic_id: r.topic_id,
        partition: r.partition_id,
        leader_recovery_state: r.leader_recovery_state,
    })
}

/// [`RefusedRecoveryState`] of a `PartitionChangeRecord`, if refused.
pub(super) fn recovery_of_change(c: &PartitionChange, offset: i64) -> Option<RefusedRecoveryState> {
    (!matches!(c.leader_recovery_state, -1..=1)).then(|| RefusedRecoveryState {
        offset,
        record: "PartitionChangeRecord".into(),
        topic_id: c.topic_id,
        partition: c.partition_id,
        leader_recovery_state: c.leader_recovery_state,
    })
}

/// A broker registration record a node's replay throws on. `FenceBrokerRecord`,
/// `UnfenceBrokerRecord` and `BrokerRegistrationChangeRecord` need the broker registered at
/// the record's broker epoch (`ClusterControlManager.replayRegistrationChange` and
/// `ClusterDelta.getBrokerOrThrow`: "no broker registration found for that id", "… with that
/// epoch found"), and a `BrokerRegistrationChangeRecord`'s `Fenced` and
/// `InControlledShutdown` must be values of their enums (`BrokerRegistrationFencingChange`:
/// -1, 0, 1; `BrokerRegistrationInControlledShutdownChange`: 0, 1): controllers and brokers
/// throw alike. An `UnregisterBrokerRecord` needs the same registration on a controller
/// (`ClusterControlManager.replay`), while a broker removes whatever it holds of the id
/// (`ClusterDelta.replay` checks nothing): `brokers_skip` false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedBrokerChange {
    pub offset: i64,
    /// The record type's name.
    pub record: String,
    pub broker: i32,
    /// The broker epoch the record names.
    pub epoch: i64,
    /// The epoch of the broker's registration (`None`: not registered).
    pub registered_epoch: Option<i64>,
    /// Why the replay throws, in the words of Kafka's exception.
    pub reason: String,
    /// Brokers skip it too (they apply an `UnregisterBrokerRecord`).
    pub brokers_skip: bool,
}

/// [`RefusedBrokerChange`] of `record`, if refused, `registered_epoch` the epoch of the
/// broker's registration before it (`None`: not registered). A
/// value outside its enum is refused whatever the image; a missing registration or another
/// epoch only when `sure`, the replay holding every registration before the record (see
/// `replay::apply_broker`): otherwise a record it could not read may have registered the
/// broker.
pub(super) fn broker_change(
    registered_epoch: Option<i64>,
    sure: bool,
    record: &MetaRecord,
    offset: i64,
) -> Option<RefusedBrokerChange> {
    let (name, broker, epoch, brokers_skip) = match record {
        MetaRecord::FenceBroker { id, epoch } => ("FenceBrokerRecord", *id, *epoch, true),
        MetaRecord::UnfenceBroker { id, epoch } => ("UnfenceBrokerRecord", *id, *epoch, true),
        MetaRecord::BrokerRegistrationChange(c) => (
            "BrokerRegistrationChangeRecord",
            c.broker_id,
            c.broker_epoch,
            true,
        ),
        MetaRecord::UnregisterBroker {
            broker_id,
            broker_epoch,
        } => ("UnregisterBrokerRecord", *broker_id, *broker_epoch, false),
        _ => return None,
    };
    let reason = match (record, registered_epoch) {
        (MetaRecord::BrokerRegistrationChange(c), _) if !matches!(c.fenced, -1..=1) => {
            format!("unknown value for fenced field: {}", c.fenced)
        }
        (MetaRecord::BrokerRegistrationChange(c), _)
            if !matches!(c.in_controlled_shutdown, 0 | 1) =>
        {
            let v = c.in_controlled_shutdown;
            format!("unknown value for inControlledShutdown field: {v}")
        }
        _ if !sure => return None,
        (_, None) => "no broker registration found for that id".into(),
        (_, Some(e)) if e != epoch => "no broker registration with that epoch found".into(),
        _ => return None,
    };
    Some(RefusedBrokerChange {
        offset,
        record: name.into(),
        broker,
        epoch,
        registered_epoch,
        reason,
        brokers_skip,
    })
}

/// A `TopicRecord` of a name already live: `ReplicationControlManager.replay`
/// throws ("Found duplicate TopicRecord for …", `ReplicationControlManagerTest.
/// testDuplicateTopicIdReplay`), so every controller stops; a broker's `TopicsDelta.replay`
/// takes it (a new topic image under the record's id; under the same id, one without the
/// partitions before it), which the replay does not model: it keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedTopic {
    pub offset: i64,
    pub topic: String,
    pub topic_id: TopicId,
    /// The id of the live topic of that name (the record's own, or another).
    pub live_id: TopicId,
}

/// A partition record naming what the image does not hold: a `PartitionRecord` of a topic
/// id not live, a `PartitionChangeRecord` of a topic id not live or of a partition its live
/// topic lacks. `ReplicationControlManager.replay` throws on both ("Tried to create partition
/// …, but no topic with that ID was found", "… no partition with that id was found"), so
/// every controller stops. A broker's `TopicsDelta` takes a record of a live topic's missing
/// partition to `TopicDelta.replay`, which throws ("Unable to find partition …"): the loader
/// logs it and goes on without the record. A record of a topic id not live makes the
/// broker's `TopicsDelta.getOrCreateTopicDelta` keep a topic delta over no topic image (a
/// change's `TopicDelta.replay` throws on it at once, a `PartitionRecord`'s does not):
/// `TopicDelta.apply` then throws (a `NullPointerException`) when the loader applies the
/// metadata delta holding it (`MetadataBatchLoader.applyDeltaAndUpdate`: "Error generating
/// new metadata image"), and the broker keeps its image from before that delta — every
/// record loaded with it is lost to that broker (which ones, the log does not say). The
/// history applies none of these records and every other one. Judged only while the replay
/// holds every record before it (no gap at or before it): a record it could not read may
/// have created the topic or partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedTarget {
    pub offset: i64,
    /// `PartitionRecord` or `PartitionChangeRecord`.
    pub record: String,
    pub topic_id: TopicId,
    pub partition: i32,
    /// The topic id is live (only the partition is missing).
    pub topic_live: bool,
    /// The topic of that id was removed at this metadata offset (`None`: never created).
    pub removed_at: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::format::metadata::BrokerRegistrationChange;

    fn brc(fenced: i8, shutdown: i8) -> MetaRecord {
        MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 10,
            fenced,
            in_controlled_shutdown: shutdown,
            ..Default::default()
        })
    }

    /// A missing registration or another epoch only while the replay is sure of the
    /// registrations; a value outside its enum always; an unregistration refused for the
    /// controllers only.
    #[test]
    fn what_a_node_refuses_of_a_registration_change() {
        let fence = MetaRecord::FenceBroker { id: 1, epoch: 10 };
        assert!(broker_change(Some(10), true, &fence, 5).is_none());
        let x = broker_change(None, true, &fence, 5).expect("not registered");
        assert_eq!((x.registered_epoch, x.brokers_skip), (None, true));
        assert!(broker_change(None, false, &fence, 5).is_none(), "unsure");
        let x = broker_change(Some(11), true, &brc(1, 0), 5).expect("another epoch");
        assert_eq!(x.reason, "no broker registration with that epoch found");
        assert!(broker_change(Some(10), true, &brc(-1, 1), 5).is_none());
        let x = broker_change(None, false, &brc(3, 0), 5).expect("outside the enum");
        assert_eq!(x.reason, "unknown value for fenced field: 3");
        let gone = MetaRecord::UnregisterBroker {
            broker_id: 1,
            broker_epoch: 9,
        };
        let x = broker_change(Some(10), true, &gone, 5).expect("another epoch");
        assert!(!x.brokers_skip);
        assert!(broker_change(Some(10), true, &MetaRecord::NoOp, 5).is_none());
    }
}
