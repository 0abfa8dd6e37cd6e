//! KRaft metadata records (`__cluster_metadata` values and `.checkpoint` snapshots) as typed
//! values, every field of the record types a history of the cluster needs, tagged fields
//! included.
//!
//! A metadata record's value is a frame (`AbstractApiMessageSerde`): frame version
//! (unsigned varint, 1), record type (`apiKey`, unsigned varint), record version (unsigned
//! varint), then the generated message body in its flexible encoding. The one reader of
//! those bodies is the table of [`super::metadata_records`]; [`decode_record`] turns its value
//! tree into a [`MetaRecord`]. The dump prints the same tree, the compaction knowledge and the
//! leadership replay read the typed value: one decode for all three.
//!
//! Field names follow Kafka's `metadata/src/main/resources/common/metadata/*.json` schemas.
//! Record types the history does not use (ACLs, quotas, SCRAM credentials, delegation
//! tokens) read and check as any other, and come back as [`MetaRecord::Other`]; a type or
//! version no schema of the table covers comes back as [`MetaRecord::Unknown`] with its
//! bytes, as Kafka's loader of a newer release would see it.

use super::groups::{Val, Why};
use super::metadata_records::{MetadataError, decode, lookup};
use serde::{Deserialize, Serialize};

/// `ConfigResource.Type.TOPIC`.
pub const RESOURCE_TOPIC: i8 = 2;
/// `ConfigResource.Type.BROKER`.
pub const RESOURCE_BROKER: i8 = 4;
/// `PartitionChangeRecord.Leader`: the leader did not change (`LeaderConstants.NO_LEADER_CHANGE`).
pub const NO_LEADER_CHANGE: i32 = -2;
/// `Leader`: the partition has no leader (`LeaderConstants.NO_LEADER`).
pub const NO_LEADER: i32 = -1;

/// A topic id (`Uuid`), its 16 bytes.
pub type TopicId = [u8; 16];

/// `PartitionRecord` (api key 3, versions 0–2).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PartitionRecord {
    pub partition_id: i32,
    pub topic_id: TopicId,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub removing_replicas: Vec<i32>,
    pub adding_replicas: Vec<i32>,
    pub leader: i32,
    /// Tag 0: 1 while the leader elected by an unclean election recovers (`LeaderRecoveryState`).
    pub leader_recovery_state: i8,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// Version 1+ (KIP-858): the log dir of each replica.
    pub directories: Vec<[u8; 16]>,
    /// Version 2+, tag 1 (KIP-966); `None`: null.
    pub eligible_leader_replicas: Option<Vec<i32>>,
    /// Version 2+, tag 2 (KIP-966); `None`: null.
    pub last_known_elr: Option<Vec<i32>>,
}

/// `PartitionChangeRecord` (api key 5, versions 0–2): every field but the ids is tagged and
/// `None` (null, or `-2`/`-1` for `Leader`/`LeaderRecoveryState`) when it did not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionChange {
    pub partition_id: i32,
    pub topic_id: TopicId,
    pub isr: Option<Vec<i32>>,
    /// `-2` ([`NO_LEADER_CHANGE`]): unchanged; `-1`: no leader; else the new leader.
    pub leader: i32,
    pub replicas: Option<Vec<i32>>,
    pub removing_replicas: Option<Vec<i32>>,
    pub adding_replicas: Option<Vec<i32>>,
    /// `-1`: unchanged.
    pub leader_recovery_state: i8,
    pub directories: Option<Vec<[u8; 16]>>,
    pub eligible_leader_replicas: Option<Vec<i32>>,
    pub last_known_elr: Option<Vec<i32>>,
}

impl Default for PartitionChange {
    fn default() -> Self {
        PartitionChange {
            partition_id: -1,
            topic_id: [0; 16],
            isr: None,
            leader: NO_LEADER_CHANGE,
            replicas: None,
            removing_replicas: None,
            adding_replicas: None,
            leader_recovery_state: -1,
            directories: None,
            eligible_leader_replicas: None,
            last_known_elr: None,
        }
    }
}

/// `RegisterBrokerRecord` (api key 0, versions 0–4), without its endpoints, features and
/// (version 4) cordoned log dirs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RegisterBroker {
    pub broker_id: i32,
    pub is_migrating_zk_broker: bool,
    pub incarnation_id: [u8; 16],
    pub broker_epoch: i64,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub log_dirs: Vec<[u8; 16]>,
}

/// `BrokerRegistrationChangeRecord` (api key 17, versions 0–3; without version 3's cordoned
/// log dirs): `fenced` and
/// `in_controlled_shutdown` are `BrokerRegistrationFencingChange` /
/// `BrokerRegistrationInControlledShutdownChange` values (0 none, 1 fence or in shutdown,
/// -1 unfence).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BrokerRegistrationChange {
    pub broker_id: i32,
    pub broker_epoch: i64,
    pub fenced: i8,
    pub in_controlled_shutdown: i8,
    pub log_dirs: Vec<[u8; 16]>,
}

/// One metadata record, typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MetaRecord {
    RegisterBroker(RegisterBroker),
    UnregisterBroker {
        broker_id: i32,
        broker_epoch: i64,
    },
    Topic {
        name: String,
        topic_id: TopicId,
    },
    Partition(PartitionRecord),
    Config {
        resource_type: i8,
        resource_name: String,
        name: String,
        /// `None`: the config was deleted (back to the default).
        value: Option<String>,
    },
    PartitionChange(PartitionChange),
    FenceBroker {
        id: i32,
        epoch: i64,
    },
    UnfenceBroker {
        id: i32,
        epoch: i64,
    },
    RemoveTopic {
        topic_id: TopicId,
    },
    FeatureLevel {
        name: String,
        feature_level: i16,
    },
    ProducerIds {
        broker_id: i32,
        broker_epoch: i64,
        next_producer_id: i64,
    },
    BrokerRegistrationChange(BrokerRegistrationChange),
    NoOp,
    ZkMigrationState {
        state: i8,
    },
    /// KIP-868: the records up to the matching End/Abort are applied together or not at all.
    BeginTransaction {
        name: Option<String>,
    },
    EndTransaction,
    AbortTransaction {
        reason: Option<String>,
    },
    RegisterController {
        controller_id: i32,
        incarnation_id: [u8; 16],
    },
    ClearElr {
        /// Empty: every topic.
        topic_name: String,
    },
    /// A type of the table the history does not use (ACLs, quotas, credentials, tokens),
    /// read and checked.
    Other {
        api_key: i16,
        version: i16,
    },
    /// A type or version no schema here covers: kept raw.
    Unknown {
        api_key: i16,
        version: i16,
        bytes: Vec<u8>,
    },
}

impl MetaRecord {
    /// `MetadataRecordType` name of the record, or `UNKNOWN`.
    pub fn type_name(&self) -> &'static str {
        match self {
            MetaRecord::Unknown { .. } => "UNKNOWN",
            MetaRecord::Other { api_key, .. } => lookup(*api_key).map_or("UNKNOWN", |t| t.name),
            r => lookup(r.api_key()).map_or("UNKNOWN", |t| t.name),
        }
    }

    /// The record's api key (`MetadataRecordType` id).
    pub fn api_key(&self) -> i16 {
        match self {
            MetaRecord::RegisterBroker(_) => 0,
            MetaRecord::UnregisterBroker { .. } => 1,
            MetaRecord::Topic { .. } => 2,
            MetaRecord::Partition(_) => 3,
            MetaRecord::Config { .. } => 4,
            MetaRecord::PartitionChange(_) => 5,
            MetaRecord::FenceBroker { .. } => 7,
            MetaRecord::UnfenceBroker { .. } => 8,
            MetaRecord::RemoveTopic { .. } => 9,
            MetaRecord::FeatureLevel { .. } => 12,
            MetaRecord::ProducerIds { .. } => 15,
            MetaRecord::BrokerRegistrationChange(_) => 17,
            MetaRecord::NoOp => 20,
            MetaRecord::ZkMigrationState { .. } => 21,
            MetaRecord::BeginTransaction { .. } => 23,
            MetaRecord::EndTransaction => 24,
            MetaRecord::AbortTransaction { .. } => 25,
            MetaRecord::RegisterController { .. } => 27,
            MetaRecord::ClearElr { .. } => 28,
            MetaRecord::Other { api_key, .. } | MetaRecord::Unknown { api_key, .. } => *api_key,
        }
    }
}

/// Why a metadata record does not decode: the text of Kafka's `MetadataParseException`.
pub type RecordError = MetadataError;

/// The frame of a value: `(frame version, api key, version)` when its three varints read.
fn frame(value: &[u8]) -> Option<(u32, u32, u32)> {
    let mut pos = 0usize;
    let mut next = || -> Option<u32> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = *value.get(pos)?;
            pos += 1;
            v |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    Some((next()?, next()?, next()?))
}

/// Decode a metadata record value. An unknown type, or a version above the table's, is
/// [`MetaRecord::Unknown`] (not an error: a newer controller wrote it); a value that does
/// not read as its schema is an error.
pub fn decode_record(value: &[u8]) -> Result<MetaRecord, RecordError> {
    let (t, version, v) = match decode(value) {
        Ok(d) => d,
        Err(MetadataError::UnknownType(k)) => return Ok(unknown(value, k)),
        Err(MetadataError::Message(k, e)) if e.why == Why::UnsupportedVersion => {
            return Ok(unknown(value, k));
        }
        Err(e) => return Err(e),
    };
    let int = |n: &str| v.int(n);
    let text = |n: &str| match v.get(n) {
        Some(Val::Str(Some(b))) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    };
    let uuid = |n: &str| match v.get(n) {
        Some(Val::Uuid(b)) => <[u8; 16]>::try_from(*b).unwrap_or([0; 16]),
        _ => [0; 16],
    };
    let ints = |n: &str| {
        v.items(n)
            .iter()
            .map(|x| x.int() as i32)
            .collect::<Vec<i32>>()
    };
    let opt_ints = |n: &str| match v.get(n) {
        Some(Val::Array(Some(items))) => Some(items.iter().map(|x| x.int() as i32).collect()),
        _ => None,
    };
    let uuids = |n: &str| match v.get(n) {
        Some(Val::Array(Some(items))) => Some(
            items
                .iter()
                .map(|x| match x {
                    Val::Uuid(b) => <[u8; 16]>::try_from(*b).unwrap_or([0; 16]),
                    _ => [0; 16],
                })
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    Ok(match t.id {
        0 => MetaRecord::RegisterBroker(RegisterBroker {
            broker_id: int("BrokerId") as i32,
            is_migrating_zk_broker: int("IsMigratingZkBroker") != 0,
            incarnation_id: uuid("IncarnationId"),
            broker_epoch: int("BrokerEpoch"),
            rack: text("Rack"),
            fenced: int("Fenced") != 0,
            in_controlled_shutdown: int("InControlledShutdown") != 0,
            log_dirs: uuids("LogDirs").unwrap_or_default(),
        }),
        1 => MetaRecord::UnregisterBroker {
            broker_id: int("BrokerId") as i32,
            broker_epoch: int("BrokerEpoch"),
        },
        2 => MetaRecord::Topic {
            name: text("Name").unwrap_or_default(),
            topic_id: uuid("TopicId"),
        },
        3 => MetaRecord::Partition(PartitionRecord {
            partition_id: int("PartitionId") as i32,
            topic_id: uuid("TopicId"),
            replicas: ints("Replicas"),
            isr: ints("Isr"),
            removing_replicas: ints("RemovingReplicas"),
            adding_replicas: ints("AddingReplicas"),
            leader: int("Leader") as i32,
            leader_recovery_state: int("LeaderRecoveryState") as i8,
            leader_epoch: int("LeaderEpoch") as i32,
            partition_epoch: int("PartitionEpoch") as i32,
            directories: uuids("Directories").unwrap_or_default(),
            eligible_leader_replicas: opt_ints("EligibleLeaderReplicas"),
            last_known_elr: opt_ints("LastKnownElr"),
        }),
        4 => MetaRecord::Config {
            resource_type: int("ResourceType") as i8,
            resource_name: text("ResourceName").unwrap_or_default(),
            name: text("Name").unwrap_or_default(),
            value: text("Value"),
        },
        5 => MetaRecord::PartitionChange(PartitionChange {
            partition_id: int("PartitionId") as i32,
            topic_id: uuid("TopicId"),
            isr: opt_ints("Isr"),
            leader: int("Leader") as i32,
            replicas: opt_ints("Replicas"),
            removing_replicas: opt_ints("RemovingReplicas"),
            adding_replicas: opt_ints("AddingReplicas"),
            leader_recovery_state: int("LeaderRecoveryState") as i8,
            directories: uuids("Directories"),
            eligible_leader_replicas: opt_ints("EligibleLeaderReplicas"),
            last_known_elr: opt_ints("LastKnownElr"),
        }),
        7 => MetaRecord::FenceBroker {
            id: int("Id") as i32,
            epoch: int("Epoch"),
        },
        8 => MetaRecord::UnfenceBroker {
            id: int("Id") as i32,
            epoch: int("Epoch"),
        },
        9 => MetaRecord::RemoveTopic {
            topic_id: uuid("TopicId"),
        },
        12 => MetaRecord::FeatureLevel {
            name: text("Name").unwrap_or_default(),
            feature_level: int("FeatureLevel") as i16,
        },
        15 => MetaRecord::ProducerIds {
            broker_id: int("BrokerId") as i32,
            broker_epoch: int("BrokerEpoch"),
            next_producer_id: int("NextProducerId"),
        },
        17 => MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: int("BrokerId") as i32,
            broker_epoch: int("BrokerEpoch"),
            fenced: int("Fenced") as i8,
            in_controlled_shutdown: int("InControlledShutdown") as i8,
            log_dirs: uuids("LogDirs").unwrap_or_default(),
        }),
        20 => MetaRecord::NoOp,
        21 => MetaRecord::ZkMigrationState {
            state: int("ZkMigrationState") as i8,
        },
        23 => MetaRecord::BeginTransaction { name: text("Name") },
        24 => MetaRecord::EndTransaction,
        25 => MetaRecord::AbortTransaction {
            reason: text("Reason"),
        },
        27 => MetaRecord::RegisterController {
            controller_id: int("ControllerId") as i32,
            incarnation_id: uuid("IncarnationId"),
        },
        28 => MetaRecord::ClearElr {
            topic_name: text("TopicName").unwrap_or_default(),
        },
        k => MetaRecord::Other {
            api_key: k,
            version,
        },
    })
}

fn unknown(value: &[u8], api_key: i16) -> MetaRecord {
    let version = frame(value).map_or(-1, |(_, _, v)| i16::try_from(v).unwrap_or(-1));
    MetaRecord::Unknown {
        api_key,
        version,
        bytes: value.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `PartitionChangeRecord` v2 with its tagged fields, written by hand: leader 3
    /// (tag 1), ISR [3] (tag 0), ELR [1] (tag 6).
    #[test]
    fn partition_change_tags() {
        let mut v = vec![1u8, 5, 2];
        v.extend_from_slice(&7i32.to_be_bytes());
        v.extend_from_slice(&[9; 16]);
        v.push(3); // three tagged fields
        v.extend_from_slice(&[0, 5, 2, 0, 0, 0, 3]); // Isr: compact array of one
        v.extend_from_slice(&[1, 4, 0, 0, 0, 3]); // Leader
        v.extend_from_slice(&[6, 5, 2, 0, 0, 0, 1]); // EligibleLeaderReplicas
        let MetaRecord::PartitionChange(c) = decode_record(&v).unwrap() else {
            panic!("not a change");
        };
        assert_eq!(
            (
                c.partition_id,
                c.topic_id,
                c.leader,
                c.isr,
                c.eligible_leader_replicas
            ),
            (7, [9; 16], 3, Some(vec![3]), Some(vec![1]))
        );
        assert_eq!(
            (c.replicas, c.last_known_elr, c.leader_recovery_state),
            (None, None, -1)
        );
        // Every prefix is an error value, never a panic.
        for n in 0..v.len() {
            assert!(decode_record(&v[..n]).is_err(), "{n}");
        }
    }

    /// A `RegisterBrokerRecord` written by hand (`RegisterBrokerRecord.json`): `LogDirs` is
    /// tagged field 0 from version 3 (KIP-858), a compact array of uuids; absent (version 3
    /// without the tag, or version 2) it reads empty.
    #[test]
    fn register_broker_log_dirs_are_tag_0_from_v3() {
        let record = |version: u8, tags: &[u8]| {
            let mut v = vec![1u8, 0, version];
            v.extend_from_slice(&7i32.to_be_bytes()); // BrokerId
            v.push(0); // IsMigratingZkBroker (v2+)
            v.extend_from_slice(&[5; 16]); // IncarnationId
            v.extend_from_slice(&42i64.to_be_bytes()); // BrokerEpoch
            v.extend_from_slice(&[1, 1, 0]); // no EndPoints, no Features, Rack null
            v.extend_from_slice(&[1, 0]); // Fenced, InControlledShutdown (v1+)
            v.extend_from_slice(tags);
            v
        };
        let mut tags = vec![1u8, 0, 33, 3]; // one tag: 0, 33 bytes, an array of two
        tags.extend_from_slice(&[0xa; 16]);
        tags.extend_from_slice(&[0xb; 16]);
        let v3 = record(3, &tags);
        let MetaRecord::RegisterBroker(b) = decode_record(&v3).unwrap() else {
            panic!("not a registration");
        };
        assert_eq!(
            (b.broker_id, b.broker_epoch, b.fenced, b.log_dirs),
            (7, 42, true, vec![[0xa; 16], [0xb; 16]])
        );
        for bare in [record(3, &[0]), record(2, &[0])] {
            let MetaRecord::RegisterBroker(b) = decode_record(&bare).unwrap() else {
                panic!("not a registration");
            };
            assert!(b.log_dirs.is_empty());
        }
        // Version 2 has no tagged field 0 to read: its tag is skipped, not read as LogDirs.
        let MetaRecord::RegisterBroker(b) = decode_record(&record(2, &tags)).unwrap() else {
            panic!("not a registration");
        };
        assert!(b.log_dirs.is_empty());
        for n in 0..v3.len() {
            assert!(decode_record(&v3[..n]).is_err(), "{n}");
        }
    }

    /// Kafka 4.3 (KIP-1066, metadata.version 4.3-IV0) writes `RegisterBrokerRecord` v4 and
    /// `BrokerRegistrationChangeRecord` v3, which add the broker's cordoned log dirs as
    /// tagged field 1 and 3: the registration, its log dirs and the fencing change read as
    /// before. Near miss: a version above those is kept raw.
    #[test]
    fn kafka_4_3_broker_registrations_read_with_their_new_tag_skipped() {
        let cordoned = |tag: u8| {
            let mut t = vec![tag, 17, 2]; // an array of one uuid
            t.extend_from_slice(&[0xc; 16]);
            t
        };
        let mut v = vec![1u8, 0, 4];
        v.extend_from_slice(&7i32.to_be_bytes());
        v.push(0);
        v.extend_from_slice(&[5; 16]);
        v.extend_from_slice(&42i64.to_be_bytes());
        v.extend_from_slice(&[1, 1, 0, 0, 0]); // unfenced, not in controlled shutdown
        v.extend_from_slice(&[2, 0, 17, 2]); // two tags: LogDirs (one dir) …
        v.extend_from_slice(&[0xa; 16]);
        v.extend_from_slice(&cordoned(1)); // … and the cordoned ones
        let MetaRecord::RegisterBroker(b) = decode_record(&v).unwrap() else {
            panic!("not a registration");
        };
        assert_eq!(
            (b.broker_id, b.broker_epoch, b.fenced, b.log_dirs),
            (7, 42, false, vec![[0xa; 16]])
        );
        let change = |version: u8| {
            let mut c = vec![1u8, 17, version];
            c.extend_from_slice(&7i32.to_be_bytes());
            c.extend_from_slice(&43i64.to_be_bytes());
            c.extend_from_slice(&[2, 0, 1, 0xff]); // two tags: Fenced -1 (unfence) …
            c.extend_from_slice(&cordoned(3)); // … and the cordoned log dirs
            c
        };
        let MetaRecord::BrokerRegistrationChange(c) = decode_record(&change(3)).unwrap() else {
            panic!("not a registration change");
        };
        assert_eq!((c.broker_id, c.broker_epoch, c.fenced), (7, 43, -1));
        // A null list of cordoned dirs reads too.
        let mut null = v[..v.len() - 19].to_vec();
        null.extend_from_slice(&[1, 1, 0]);
        assert!(matches!(
            decode_record(&null).unwrap(),
            MetaRecord::RegisterBroker(RegisterBroker { broker_id: 7, .. })
        ));
        v[2] = 5;
        assert!(matches!(
            decode_record(&v).unwrap(),
            MetaRecord::Unknown {
                api_key: 0,
                version: 5,
                ..
            }
        ));
        assert!(matches!(
            decode_record(&change(4)).unwrap(),
            MetaRecord::Unknown {
                api_key: 17,
                version: 4,
                ..
            }
        ));
    }

    #[test]
    fn unknown_versions_and_types_are_kept_raw() {
        let v = [1u8, 5, 7, 0];
        assert_eq!(
            decode_record(&v).unwrap(),
            MetaRecord::Unknown {
                api_key: 5,
                version: 7,
                bytes: v.to_vec()
            }
        );
        assert!(matches!(
            decode_record(&[1, 120, 0]).unwrap(),
            MetaRecord::Unknown { api_key: 120, .. }
        ));
        assert_eq!(MetaRecord::NoOp.type_name(), "NO_OP_RECORD");
    }
}
