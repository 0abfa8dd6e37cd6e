//! KRaft metadata records (`__cluster_metadata`, snapshots): our table of every record type
//! of Kafka 4.x (`MetadataRecordType` ids 0–28), read with the coordinator records' generic
//! reader ([`super::groups`]). A record value is framed by `AbstractApiMessageSerde`:
//! unsigned varints frame version (1), type and version, then the message; bytes left over
//! are an error there.
//!
//! The table was transcribed from the facts (names, types, versions, tags, defaults) of
//! Kafka's metadata message definitions; it is our description, not Kafka's files.

use super::groups::reader::{Part, Reader};
use super::groups::schema::{Dft, Schema, Ty, f};
use super::groups::{DecodeError, StructVal};

const NEVER: i16 = i16::MAX;

/// One metadata record type: its id, `MetadataRecordType` name and schema.
#[derive(Debug)]
pub struct MetadataType {
    pub id: i16,
    pub name: &'static str,
    pub schema: Schema,
}

/// Why a metadata record does not read (the text of Kafka's `MetadataParseException`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataError {
    /// Frame version, type or version unreadable or out of range.
    Frame(String),
    /// A type without a schema.
    UnknownType(i16),
    /// The message does not read.
    Message(i16, DecodeError),
    /// Bytes after the message.
    Garbage { api_key: i16, remaining: usize },
}

impl std::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetadataError::Frame(m) => f.write_str(m),
            MetadataError::UnknownType(t) => write!(
                f,
                "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {t}"
            ),
            MetadataError::Message(t, e) => {
                write!(f, "Failed to deserialize record with type {t} ({e})")
            }
            MetadataError::Garbage { api_key, remaining } => {
                write!(f, "Found {remaining} byte(s) of garbage after {api_key}")
            }
        }
    }
}

/// The metadata record type `id`.
pub fn lookup(id: i16) -> Option<&'static MetadataType> {
    METADATA_TYPES.iter().find(|t| t.id == id)
}

/// Read a metadata record value: its type, version and fields.
pub fn decode(value: &[u8]) -> Result<(&'static MetadataType, i16, StructVal<'_>), MetadataError> {
    let mut r = Reader::new(value, Part::Value, true);
    let short = |r: &mut Reader<'_>, what: &'static str| -> Result<i16, MetadataError> {
        let v = r
            .uvarint(what)
            .map_err(|_| MetadataError::Frame(format!("Error reading the {what}")))?;
        i16::try_from(v)
            .map_err(|_| MetadataError::Frame(format!("Value for {what} was too large.")))
    };
    let frame = short(&mut r, "frame version")?;
    if frame == 0 {
        return Err(MetadataError::Frame(
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.".into(),
        ));
    } else if frame != 1 {
        return Err(MetadataError::Frame(format!(
            "Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"
        )));
    }
    let api_key = short(&mut r, "type")?;
    let version = short(&mut r, "version")?;
    let t = lookup(api_key).ok_or(MetadataError::UnknownType(api_key))?;
    let s = r
        .message(&t.schema, version)
        .map_err(|e| MetadataError::Message(api_key, e))?;
    if r.left() > 0 {
        return Err(MetadataError::Garbage {
            api_key,
            remaining: r.left(),
        });
    }
    Ok((t, version, s))
}

pub static METADATA_TYPES: &[MetadataType] = &[
    MetadataType {
        id: 0,
        name: "REGISTER_BROKER_RECORD",
        schema: Schema {
            name: "RegisterBrokerRecord",
            fields: &[
                f("BrokerId", Ty::I32),
                f("IsMigratingZkBroker", Ty::Bool).v(2, NEVER),
                f("IncarnationId", Ty::Uuid),
                f("BrokerEpoch", Ty::I64),
                f(
                    "EndPoints",
                    Ty::Array(&Ty::Struct(&[
                        f("Name", Ty::Str),
                        f("Host", Ty::Str),
                        f("Port", Ty::U16),
                        f("SecurityProtocol", Ty::I16),
                    ])),
                ),
                f(
                    "Features",
                    Ty::Array(&Ty::Struct(&[
                        f("Name", Ty::Str),
                        f("MinSupportedVersion", Ty::I16),
                        f("MaxSupportedVersion", Ty::I16),
                    ])),
                ),
                f("Rack", Ty::Str).null(),
                f("Fenced", Ty::Bool).dft(Dft::Int(1)),
                f("InControlledShutdown", Ty::Bool).v(1, NEVER),
                f("LogDirs", Ty::Array(&Ty::Uuid))
                    .v(3, NEVER)
                    .tag(0, Dft::Zero),
                // Kafka 4.3 (KIP-1066): the broker's cordoned log dirs (no rule reads them).
                f("CordonedLogDirs", Ty::Array(&Ty::Uuid))
                    .null()
                    .v(4, NEVER)
                    .tag(1, Dft::Zero),
            ],
            max_version: 4,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 1,
        name: "UNREGISTER_BROKER_RECORD",
        schema: Schema {
            name: "UnregisterBrokerRecord",
            fields: &[f("BrokerId", Ty::I32), f("BrokerEpoch", Ty::I64)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 2,
        name: "TOPIC_RECORD",
        schema: Schema {
            name: "TopicRecord",
            fields: &[f("Name", Ty::Str), f("TopicId", Ty::Uuid)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 3,
        name: "PARTITION_RECORD",
        schema: Schema {
            name: "PartitionRecord",
            fields: &[
                f("PartitionId", Ty::I32).dft(Dft::Int(-1)),
                f("TopicId", Ty::Uuid),
                f("Replicas", Ty::Array(&Ty::I32)),
                f("Isr", Ty::Array(&Ty::I32)),
                f("RemovingReplicas", Ty::Array(&Ty::I32)),
                f("AddingReplicas", Ty::Array(&Ty::I32)),
                f("Leader", Ty::I32).dft(Dft::Int(-1)),
                f("LeaderRecoveryState", Ty::I8).tag(0, Dft::Int(0)),
                f("LeaderEpoch", Ty::I32).dft(Dft::Int(-1)),
                f("PartitionEpoch", Ty::I32).dft(Dft::Int(-1)),
                f("Directories", Ty::Array(&Ty::Uuid)).v(1, NEVER),
                f("EligibleLeaderReplicas", Ty::Array(&Ty::I32))
                    .v(2, NEVER)
                    .null()
                    .tag(1, Dft::Null),
                f("LastKnownElr", Ty::Array(&Ty::I32))
                    .v(2, NEVER)
                    .null()
                    .tag(2, Dft::Null),
            ],
            max_version: 2,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 4,
        name: "CONFIG_RECORD",
        schema: Schema {
            name: "ConfigRecord",
            fields: &[
                f("ResourceType", Ty::I8),
                f("ResourceName", Ty::Str),
                f("Name", Ty::Str),
                f("Value", Ty::Str).null(),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 5,
        name: "PARTITION_CHANGE_RECORD",
        schema: Schema {
            name: "PartitionChangeRecord",
            fields: &[
                f("PartitionId", Ty::I32).dft(Dft::Int(-1)),
                f("TopicId", Ty::Uuid),
                f("Isr", Ty::Array(&Ty::I32)).null().tag(0, Dft::Null),
                f("Leader", Ty::I32).tag(1, Dft::Int(-2)),
                f("Replicas", Ty::Array(&Ty::I32)).null().tag(2, Dft::Null),
                f("RemovingReplicas", Ty::Array(&Ty::I32))
                    .null()
                    .tag(3, Dft::Null),
                f("AddingReplicas", Ty::Array(&Ty::I32))
                    .null()
                    .tag(4, Dft::Null),
                f("LeaderRecoveryState", Ty::I8).tag(5, Dft::Int(-1)),
                f("Directories", Ty::Array(&Ty::Uuid))
                    .v(1, NEVER)
                    .null()
                    .tag(8, Dft::Null),
                f("EligibleLeaderReplicas", Ty::Array(&Ty::I32))
                    .v(2, NEVER)
                    .null()
                    .tag(6, Dft::Null),
                f("LastKnownElr", Ty::Array(&Ty::I32))
                    .v(2, NEVER)
                    .null()
                    .tag(7, Dft::Null),
            ],
            max_version: 2,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 7,
        name: "FENCE_BROKER_RECORD",
        schema: Schema {
            name: "FenceBrokerRecord",
            fields: &[f("Id", Ty::I32), f("Epoch", Ty::I64)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 8,
        name: "UNFENCE_BROKER_RECORD",
        schema: Schema {
            name: "UnfenceBrokerRecord",
            fields: &[f("Id", Ty::I32), f("Epoch", Ty::I64)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 9,
        name: "REMOVE_TOPIC_RECORD",
        schema: Schema {
            name: "RemoveTopicRecord",
            fields: &[f("TopicId", Ty::Uuid)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 10,
        name: "DELEGATION_TOKEN_RECORD",
        schema: Schema {
            name: "DelegationTokenRecord",
            fields: &[
                f("Owner", Ty::Str),
                f("Requester", Ty::Str),
                f("Renewers", Ty::Array(&Ty::Str)),
                f("IssueTimestamp", Ty::I64),
                f("MaxTimestamp", Ty::I64),
                f("ExpirationTimestamp", Ty::I64),
                f("TokenId", Ty::Str),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 11,
        name: "USER_SCRAM_CREDENTIAL_RECORD",
        schema: Schema {
            name: "UserScramCredentialRecord",
            fields: &[
                f("Name", Ty::Str),
                f("Mechanism", Ty::I8),
                f("Salt", Ty::Bytes),
                f("StoredKey", Ty::Bytes),
                f("ServerKey", Ty::Bytes),
                f("Iterations", Ty::I32),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 12,
        name: "FEATURE_LEVEL_RECORD",
        schema: Schema {
            name: "FeatureLevelRecord",
            fields: &[f("Name", Ty::Str), f("FeatureLevel", Ty::I16)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 14,
        name: "CLIENT_QUOTA_RECORD",
        schema: Schema {
            name: "ClientQuotaRecord",
            fields: &[
                f(
                    "Entity",
                    Ty::Array(&Ty::Struct(&[
                        f("EntityType", Ty::Str),
                        f("EntityName", Ty::Str).null(),
                    ])),
                ),
                f("Key", Ty::Str),
                f("Value", Ty::F64),
                f("Remove", Ty::Bool),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 15,
        name: "PRODUCER_IDS_RECORD",
        schema: Schema {
            name: "ProducerIdsRecord",
            fields: &[
                f("BrokerId", Ty::I32),
                f("BrokerEpoch", Ty::I64).dft(Dft::Int(-1)),
                f("NextProducerId", Ty::I64),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 17,
        name: "BROKER_REGISTRATION_CHANGE_RECORD",
        schema: Schema {
            name: "BrokerRegistrationChangeRecord",
            fields: &[
                f("BrokerId", Ty::I32),
                f("BrokerEpoch", Ty::I64),
                f("Fenced", Ty::I8).tag(0, Dft::Zero),
                f("InControlledShutdown", Ty::I8)
                    .v(1, NEVER)
                    .tag(1, Dft::Zero),
                f("LogDirs", Ty::Array(&Ty::Uuid))
                    .v(2, NEVER)
                    .tag(2, Dft::Zero),
                // Kafka 4.3 (KIP-1066), as in `RegisterBrokerRecord` v4.
                f("CordonedLogDirs", Ty::Array(&Ty::Uuid))
                    .null()
                    .v(3, NEVER)
                    .tag(3, Dft::Zero),
            ],
            max_version: 3,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 18,
        name: "ACCESS_CONTROL_ENTRY_RECORD",
        schema: Schema {
            name: "AccessControlEntryRecord",
            fields: &[
                f("Id", Ty::Uuid),
                f("ResourceType", Ty::I8),
                f("ResourceName", Ty::Str),
                f("PatternType", Ty::I8),
                f("Principal", Ty::Str),
                f("Host", Ty::Str),
                f("Operation", Ty::I8),
                f("PermissionType", Ty::I8),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 19,
        name: "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
        schema: Schema {
            name: "RemoveAccessControlEntryRecord",
            fields: &[f("Id", Ty::Uuid)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 20,
        name: "NO_OP_RECORD",
        schema: Schema {
            name: "NoOpRecord",
            fields: &[],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 21,
        name: "ZK_MIGRATION_STATE_RECORD",
        schema: Schema {
            name: "ZkMigrationStateRecord",
            fields: &[f("ZkMigrationState", Ty::I8)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 22,
        name: "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        schema: Schema {
            name: "RemoveUserScramCredentialRecord",
            fields: &[f("Name", Ty::Str), f("Mechanism", Ty::I8)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 23,
        name: "BEGIN_TRANSACTION_RECORD",
        schema: Schema {
            name: "BeginTransactionRecord",
            fields: &[f("Name", Ty::Str).null().tag(0, Dft::Null)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 24,
        name: "END_TRANSACTION_RECORD",
        schema: Schema {
            name: "EndTransactionRecord",
            fields: &[],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 25,
        name: "ABORT_TRANSACTION_RECORD",
        schema: Schema {
            name: "AbortTransactionRecord",
            fields: &[f("Reason", Ty::Str).null().tag(0, Dft::Null)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 26,
        name: "REMOVE_DELEGATION_TOKEN_RECORD",
        schema: Schema {
            name: "RemoveDelegationTokenRecord",
            fields: &[f("TokenId", Ty::Str)],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 27,
        name: "REGISTER_CONTROLLER_RECORD",
        schema: Schema {
            name: "RegisterControllerRecord",
            fields: &[
                f("ControllerId", Ty::I32),
                f("IncarnationId", Ty::Uuid),
                f("ZkMigrationReady", Ty::Bool),
                f(
                    "EndPoints",
                    Ty::Array(&Ty::Struct(&[
                        f("Name", Ty::Str),
                        f("Host", Ty::Str),
                        f("Port", Ty::U16),
                        f("SecurityProtocol", Ty::I16),
                    ])),
                ),
                f(
                    "Features",
                    Ty::Array(&Ty::Struct(&[
                        f("Name", Ty::Str),
                        f("MinSupportedVersion", Ty::I16),
                        f("MaxSupportedVersion", Ty::I16),
                    ])),
                ),
            ],
            max_version: 0,
            flexible_from: 0,
        },
    },
    MetadataType {
        id: 28,
        name: "CLEAR_ELR_RECORD",
        schema: Schema {
            name: "ClearElrRecord",
            fields: &[f("TopicName", Ty::Str)],
            max_version: 0,
            flexible_from: 0,
        },
    },
];
