//! Our own table-driven description of the coordinator record schemas of
//! `__consumer_offsets` (group coordinator) and `__share_group_state` (share
//! coordinator), from Kafka's JSON message definitions (`OffsetCommitKey.json` and its
//! siblings under `group-coordinator/src/main/resources/common/message/`; they are not
//! vendored: this is a description written for klogscan).
//!
//! A record's key is `int16 type` + key body (keys are never flexible, version 0); its
//! value is `int16 version` + value body at that version, or null (a tombstone).

/// A field type.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U16,
    F64,
    Uuid,
    Str,
    Bytes,
    Array(&'static Ty),
    Struct(&'static [Field]),
}

/// A field's default (the value when absent at a version, or when a tagged field is not
/// written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dft {
    /// 0, "", empty array/bytes, false.
    Zero,
    /// An integer.
    Int(i64),
    /// null.
    Null,
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The schema's name; the JSON name is this with a lower-case first letter.
    pub name: &'static str,
    pub ty: Ty,
    /// First and last version the field is in.
    pub min: i16,
    pub max: i16,
    /// Nullable in every version the field is in.
    pub nullable: bool,
    /// Tag, for tagged fields (flexible versions only).
    pub tag: Option<u32>,
    pub default: Dft,
}

/// A field present from version 0 on.
pub const fn f(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        min: 0,
        max: i16::MAX,
        nullable: false,
        tag: None,
        default: Dft::Zero,
    }
}

impl Field {
    pub const fn v(mut self, min: i16, max: i16) -> Field {
        self.min = min;
        self.max = max;
        self
    }
    pub const fn null(mut self) -> Field {
        self.nullable = true;
        self
    }
    pub const fn dft(mut self, d: Dft) -> Field {
        self.default = d;
        self
    }
    pub const fn tag(mut self, tag: u32, d: Dft) -> Field {
        self.tag = Some(tag);
        self.default = d;
        self
    }
    /// True when the field is part of `version`.
    pub fn in_version(&self, version: i16) -> bool {
        version >= self.min && version <= self.max
    }
}

/// A message (key or value) schema.
#[derive(Debug)]
pub struct Schema {
    pub name: &'static str,
    pub fields: &'static [Field],
    pub max_version: i16,
    /// First flexible version (`i16::MAX`: never flexible).
    pub flexible_from: i16,
}

/// Where a record type stands in Kafka 4.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Current,
    /// Still defined, no longer written with values (id 4, KIP-1101).
    Deprecated,
    /// Removed from Kafka (ids 9 and 18, May 2025): a 4.1+ loader skips them as unknown.
    Retired,
    /// Only in proof-of-concept branches (id 24): never written by a release.
    Poc,
}

/// One record type of a coordinator topic.
#[derive(Debug)]
pub struct RecordType {
    pub id: i16,
    pub key: Schema,
    pub value: Schema,
    pub status: Status,
}

impl RecordType {
    /// The name without the `Key` suffix (`ConsumerGroupMetadata`).
    pub fn name(&self) -> &'static str {
        self.key.name.strip_suffix("Key").unwrap_or(self.key.name)
    }
}

const NEVER: i16 = i16::MAX;

const fn key(name: &'static str, fields: &'static [Field]) -> Schema {
    Schema {
        name,
        fields,
        max_version: 0,
        flexible_from: NEVER,
    }
}
const fn val(name: &'static str, fields: &'static [Field]) -> Schema {
    Schema {
        name,
        fields,
        max_version: 0,
        flexible_from: 0,
    }
}
const fn rt(id: i16, key: Schema, value: Schema) -> RecordType {
    RecordType {
        id,
        key,
        value,
        status: Status::Current,
    }
}
const fn rt_s(id: i16, key: Schema, value: Schema, status: Status) -> RecordType {
    RecordType {
        id,
        key,
        value,
        status,
    }
}

// --- shared pieces ---
const STR: Ty = Ty::Str;
const I32S: Ty = Ty::Array(&Ty::I32);
const I16S: Ty = Ty::Array(&Ty::I16);
const STRS: Ty = Ty::Array(&Ty::Str);
const GROUP_KEY: &[Field] = &[f("GroupId", STR)];
const MEMBER_KEY: &[Field] = &[f("GroupId", STR), f("MemberId", STR)];
const OFFSET_KEY: &[Field] = &[f("group", STR), f("topic", STR), f("partition", Ty::I32)];
const SHARE_STATE_KEY: &[Field] = &[
    f("GroupId", STR),
    f("TopicId", Ty::Uuid),
    f("Partition", Ty::I32),
];
const TOPIC_PARTITIONS: &[Field] = &[f("TopicId", Ty::Uuid), f("Partitions", I32S)];
const TOPIC_PARTITIONS_EPOCHS: &[Field] = &[
    f("TopicId", Ty::Uuid),
    f("Partitions", I32S),
    f("AssignmentEpochs", I32S).null().tag(0, Dft::Null),
];
const PARTITION_METADATA: &[Field] = &[f("Partition", Ty::I32), f("Racks", STRS)];
const TOPIC_METADATA: &[Field] = &[
    f("TopicId", Ty::Uuid),
    f("TopicName", STR),
    f("NumPartitions", Ty::I32),
    f(
        "PartitionMetadata",
        Ty::Array(&Ty::Struct(PARTITION_METADATA)),
    ),
];
const PARTITION_METADATA_VALUE: &[Field] = &[f("Topics", Ty::Array(&Ty::Struct(TOPIC_METADATA)))];
const TASK_IDS: Ty = Ty::Array(&Ty::Struct(&[
    f("SubtopologyId", STR),
    f("Partitions", I32S),
]));
const STATE_BATCHES: Ty = Ty::Array(&Ty::Struct(&[
    f("FirstOffset", Ty::I64),
    f("LastOffset", Ty::I64),
    f("DeliveryState", Ty::I8),
    f("DeliveryCount", Ty::I16),
]));
const KEY_VALUE: Ty = Ty::Array(&Ty::Struct(&[f("Key", STR), f("Value", STR)]));
const TOPIC_CONFIG: Ty = Ty::Array(&Ty::Struct(&[f("key", STR), f("value", STR)]));
const TOPIC_INFO: Ty = Ty::Array(&Ty::Struct(&[
    f("Name", STR),
    f("Partitions", Ty::I32),
    f("ReplicationFactor", Ty::I16),
    f("TopicConfigs", TOPIC_CONFIG),
]));
const TOPIC_PARTITION_LIST: Ty = Ty::Array(&Ty::Struct(&[f("topic", STR), f("partitions", I32S)]));

const MEMBER_METADATA: &[Field] = &[
    f("memberId", STR),
    f("groupInstanceId", STR).v(3, NEVER).null().dft(Dft::Null),
    f("clientId", STR),
    f("clientHost", STR),
    f("rebalanceTimeout", Ty::I32).v(1, NEVER).dft(Dft::Int(-1)),
    f("sessionTimeout", Ty::I32),
    f("subscription", Ty::Bytes),
    f("assignment", Ty::Bytes),
];

/// The record types of `__consumer_offsets`, by id (0–24; 9 and 18 retired, 24 a POC).
pub static CONSUMER_OFFSETS: &[RecordType] = &[
    rt(
        0,
        key("LegacyOffsetCommitKey", OFFSET_KEY),
        val(
            "LegacyOffsetCommitValue",
            &[
                f("offset", Ty::I64),
                f("metadata", STR),
                f("commitTimestamp", Ty::I64),
            ],
        )
        .non_flexible(0),
    ),
    rt(
        1,
        key("OffsetCommitKey", OFFSET_KEY),
        val(
            "OffsetCommitValue",
            &[
                f("offset", Ty::I64),
                f("leaderEpoch", Ty::I32).v(3, NEVER).dft(Dft::Int(-1)),
                f("metadata", STR),
                f("commitTimestamp", Ty::I64),
                f("expireTimestamp", Ty::I64).v(1, 1).dft(Dft::Int(-1)),
                f("topicId", Ty::Uuid).v(4, NEVER).tag(0, Dft::Zero),
            ],
        )
        .versions(4, 4),
    ),
    rt(
        2,
        key("GroupMetadataKey", &[f("group", STR)]),
        val(
            "GroupMetadataValue",
            &[
                f("protocolType", STR),
                f("generation", Ty::I32),
                f("protocol", STR).null(),
                f("leader", STR).null(),
                f("currentStateTimestamp", Ty::I64)
                    .v(2, NEVER)
                    .dft(Dft::Int(-1)),
                f("members", Ty::Array(&Ty::Struct(MEMBER_METADATA))),
            ],
        )
        .versions(4, 4),
    ),
    rt(
        3,
        key("ConsumerGroupMetadataKey", GROUP_KEY),
        val(
            "ConsumerGroupMetadataValue",
            &[
                f("Epoch", Ty::I32),
                f("MetadataHash", Ty::I64).tag(0, Dft::Zero),
            ],
        ),
    ),
    rt_s(
        4,
        key("ConsumerGroupPartitionMetadataKey", GROUP_KEY),
        val(
            "ConsumerGroupPartitionMetadataValue",
            PARTITION_METADATA_VALUE,
        ),
        Status::Deprecated,
    ),
    rt(
        5,
        key("ConsumerGroupMemberMetadataKey", MEMBER_KEY),
        val(
            "ConsumerGroupMemberMetadataValue",
            &[
                f("InstanceId", STR).null(),
                f("RackId", STR).null(),
                f("ClientId", STR),
                f("ClientHost", STR),
                f("SubscribedTopicNames", STRS),
                f("SubscribedTopicRegex", STR).null(),
                f("RebalanceTimeoutMs", Ty::I32).dft(Dft::Int(-1)),
                f("ServerAssignor", STR).null(),
                f(
                    "ClassicMemberMetadata",
                    Ty::Struct(&[
                        f("SessionTimeoutMs", Ty::I32),
                        f(
                            "SupportedProtocols",
                            Ty::Array(&Ty::Struct(&[f("Name", STR), f("Metadata", Ty::Bytes)])),
                        ),
                    ]),
                )
                .null()
                .tag(0, Dft::Null),
            ],
        ),
    ),
    rt(
        6,
        key("ConsumerGroupTargetAssignmentMetadataKey", GROUP_KEY),
        val(
            "ConsumerGroupTargetAssignmentMetadataValue",
            &[
                f("AssignmentEpoch", Ty::I32),
                f("AssignmentTimestamp", Ty::I64).tag(0, Dft::Zero),
            ],
        ),
    ),
    rt(
        7,
        key("ConsumerGroupTargetAssignmentMemberKey", MEMBER_KEY),
        val(
            "ConsumerGroupTargetAssignmentMemberValue",
            &[f(
                "TopicPartitions",
                Ty::Array(&Ty::Struct(TOPIC_PARTITIONS)),
            )],
        ),
    ),
    rt(
        8,
        key("ConsumerGroupCurrentMemberAssignmentKey", MEMBER_KEY),
        val(
            "ConsumerGroupCurrentMemberAssignmentValue",
            &[
                f("MemberEpoch", Ty::I32),
                f("PreviousMemberEpoch", Ty::I32),
                f("State", Ty::I8),
                f(
                    "AssignedPartitions",
                    Ty::Array(&Ty::Struct(TOPIC_PARTITIONS_EPOCHS)),
                ),
                f(
                    "PartitionsPendingRevocation",
                    Ty::Array(&Ty::Struct(TOPIC_PARTITIONS_EPOCHS)),
                ),
            ],
        ),
    ),
    rt_s(
        9,
        key("ShareGroupPartitionMetadataKey", GROUP_KEY),
        val("ShareGroupPartitionMetadataValue", PARTITION_METADATA_VALUE),
        Status::Retired,
    ),
    rt(
        10,
        key("ShareGroupMemberMetadataKey", MEMBER_KEY),
        val(
            "ShareGroupMemberMetadataValue",
            &[
                f("RackId", STR).null(),
                f("ClientId", STR),
                f("ClientHost", STR),
                f("SubscribedTopicNames", STRS),
            ],
        ),
    ),
    rt(
        11,
        key("ShareGroupMetadataKey", GROUP_KEY),
        val(
            "ShareGroupMetadataValue",
            &[f("Epoch", Ty::I32), f("MetadataHash", Ty::I64)],
        ),
    ),
    rt(
        12,
        key("ShareGroupTargetAssignmentMetadataKey", GROUP_KEY),
        val(
            "ShareGroupTargetAssignmentMetadataValue",
            // KAFKA-20266 (March 2026): the time the assignment was computed, tag 0.
            &[
                f("AssignmentEpoch", Ty::I32),
                f("AssignmentTimestamp", Ty::I64).tag(0, Dft::Zero),
            ],
        ),
    ),
    rt(
        13,
        key("ShareGroupTargetAssignmentMemberKey", MEMBER_KEY),
        val(
            "ShareGroupTargetAssignmentMemberValue",
            &[f(
                "TopicPartitions",
                Ty::Array(&Ty::Struct(TOPIC_PARTITIONS)),
            )],
        ),
    ),
    rt(
        14,
        key("ShareGroupCurrentMemberAssignmentKey", MEMBER_KEY),
        val(
            "ShareGroupCurrentMemberAssignmentValue",
            &[
                f("MemberEpoch", Ty::I32),
                f("PreviousMemberEpoch", Ty::I32),
                f("State", Ty::I8),
                f(
                    "AssignedPartitions",
                    Ty::Array(&Ty::Struct(TOPIC_PARTITIONS)),
                ),
            ],
        ),
    ),
    rt(
        15,
        key("ShareGroupStatePartitionMetadataKey", GROUP_KEY),
        val(
            "ShareGroupStatePartitionMetadataValue",
            &[
                f(
                    "InitializingTopics",
                    Ty::Array(&Ty::Struct(TOPIC_PARTITIONS_INFO)),
                ),
                f(
                    "InitializedTopics",
                    Ty::Array(&Ty::Struct(TOPIC_PARTITIONS_INFO)),
                ),
                f(
                    "DeletingTopics",
                    Ty::Array(&Ty::Struct(&[f("TopicId", Ty::Uuid), f("TopicName", STR)])),
                ),
            ],
        ),
    ),
    rt(
        16,
        key(
            "ConsumerGroupRegularExpressionKey",
            &[f("GroupId", STR), f("RegularExpression", STR)],
        ),
        val(
            "ConsumerGroupRegularExpressionValue",
            &[
                f("Topics", STRS),
                f("Version", Ty::I64),
                f("Timestamp", Ty::I64),
            ],
        ),
    ),
    rt(
        17,
        key("StreamsGroupMetadataKey", GROUP_KEY),
        val(
            "StreamsGroupMetadataValue",
            &[
                f("Epoch", Ty::I32),
                f("MetadataHash", Ty::I64),
                f("ValidatedTopologyEpoch", Ty::I32).tag(0, Dft::Int(-1)),
                f("LastAssignmentConfigs", KEY_VALUE)
                    .null()
                    .tag(1, Dft::Null),
                f("StoredDescriptionTopologyEpoch", Ty::I32).tag(2, Dft::Int(-1)),
                f("FailedDescriptionTopologyEpoch", Ty::I32).tag(3, Dft::Int(-1)),
            ],
        ),
    ),
    rt_s(
        18,
        key("StreamsGroupPartitionMetadataKey", GROUP_KEY),
        val(
            "StreamsGroupPartitionMetadataValue",
            PARTITION_METADATA_VALUE,
        ),
        Status::Retired,
    ),
    rt(
        19,
        key("StreamsGroupMemberMetadataKey", MEMBER_KEY),
        val(
            "StreamsGroupMemberMetadataValue",
            &[
                f("InstanceId", STR).null(),
                f("RackId", STR).null(),
                f("ClientId", STR),
                f("ClientHost", STR),
                f("RebalanceTimeoutMs", Ty::I32).dft(Dft::Int(-1)),
                f("TopologyEpoch", Ty::I32),
                f("ProcessId", STR),
                f(
                    "UserEndpoint",
                    Ty::Struct(&[f("Host", STR), f("Port", Ty::U16)]),
                )
                .null()
                .dft(Dft::Null),
                f("ClientTags", KEY_VALUE),
            ],
        ),
    ),
    rt(
        20,
        key("StreamsGroupTargetAssignmentMetadataKey", GROUP_KEY),
        val(
            "StreamsGroupTargetAssignmentMetadataValue",
            // KAFKA-20266 (March 2026): the time the assignment was computed, tag 0.
            &[
                f("AssignmentEpoch", Ty::I32),
                f("AssignmentTimestamp", Ty::I64).tag(0, Dft::Zero),
            ],
        ),
    ),
    rt(
        21,
        key("StreamsGroupTargetAssignmentMemberKey", MEMBER_KEY),
        val(
            "StreamsGroupTargetAssignmentMemberValue",
            &[
                f("ActiveTasks", TASK_IDS),
                f("StandbyTasks", TASK_IDS),
                f("WarmupTasks", TASK_IDS),
            ],
        ),
    ),
    rt(
        22,
        key("StreamsGroupCurrentMemberAssignmentKey", MEMBER_KEY),
        val(
            "StreamsGroupCurrentMemberAssignmentValue",
            &[
                f("MemberEpoch", Ty::I32),
                f("PreviousMemberEpoch", Ty::I32),
                f("State", Ty::I8),
                f("ActiveTasks", TASK_IDS),
                f("StandbyTasks", TASK_IDS),
                f("WarmupTasks", TASK_IDS),
                f("ActiveTasksPendingRevocation", TASK_IDS),
                f("StandbyTasksPendingRevocation", TASK_IDS),
                f("WarmupTasksPendingRevocation", TASK_IDS),
            ],
        ),
    ),
    rt(
        23,
        key("StreamsGroupTopologyKey", GROUP_KEY),
        val(
            "StreamsGroupTopologyValue",
            &[
                f("Epoch", Ty::I32),
                f(
                    "Subtopologies",
                    Ty::Array(&Ty::Struct(&[
                        f("SubtopologyId", STR),
                        f("SourceTopics", STRS),
                        f("SourceTopicRegex", STRS),
                        f("StateChangelogTopics", TOPIC_INFO),
                        f("RepartitionSinkTopics", STRS),
                        f("RepartitionSourceTopics", TOPIC_INFO),
                        f(
                            "CopartitionGroups",
                            Ty::Array(&Ty::Struct(&[
                                f("SourceTopics", I16S),
                                f("SourceTopicRegex", I16S),
                                f("RepartitionSourceTopics", I16S),
                            ])),
                        ),
                    ])),
                ),
            ],
        ),
    ),
    rt_s(
        24,
        key("StreamsGroupTargetAssignmentResolvedTopicIdsKey", GROUP_KEY),
        val(
            "StreamsGroupTargetAssignmentResolvedTopicIdsValue",
            &[
                f("AssignmentEpoch", Ty::I32),
                f(
                    "ResolvedTopicIdsBySubtopology",
                    Ty::Array(&Ty::Struct(&[
                        f("SubtopologyId", STR),
                        f("TopicIds", Ty::Array(&Ty::Uuid)),
                    ])),
                ),
            ],
        ),
        Status::Poc,
    ),
];

const TOPIC_PARTITIONS_INFO: &[Field] = &[
    f("TopicId", Ty::Uuid),
    f("TopicName", STR),
    f("Partitions", I32S),
];

/// The record types of `__share_group_state`.
pub static SHARE_GROUP_STATE: &[RecordType] = &[
    rt(
        0,
        key("ShareSnapshotKey", SHARE_STATE_KEY),
        val(
            "ShareSnapshotValue",
            &[
                f("SnapshotEpoch", Ty::I32),
                f("StateEpoch", Ty::I32),
                f("LeaderEpoch", Ty::I32),
                f("StartOffset", Ty::I64),
                f("DeliveryCompleteCount", Ty::I32).tag(0, Dft::Int(-1)),
                f("CreateTimestamp", Ty::I64),
                f("WriteTimestamp", Ty::I64),
                f("StateBatches", STATE_BATCHES),
            ],
        ),
    ),
    rt(
        1,
        key("ShareUpdateKey", SHARE_STATE_KEY),
        val(
            "ShareUpdateValue",
            &[
                f("SnapshotEpoch", Ty::I32),
                f("LeaderEpoch", Ty::I32),
                f("StartOffset", Ty::I64),
                f("DeliveryCompleteCount", Ty::I32).tag(0, Dft::Int(-1)),
                f("StateBatches", STATE_BATCHES),
            ],
        ),
    ),
];

/// The consumer protocol's subscription (embedded in classic `consumer` group members),
/// versions 0–3, never flexible.
pub static CONSUMER_PROTOCOL_SUBSCRIPTION: Schema = Schema {
    name: "ConsumerProtocolSubscription",
    fields: &[
        f("Topics", STRS),
        f("UserData", Ty::Bytes).null().dft(Dft::Null),
        f("OwnedPartitions", TOPIC_PARTITION_LIST).v(1, NEVER),
        f("GenerationId", Ty::I32).v(2, NEVER).dft(Dft::Int(-1)),
        f("RackId", STR).v(3, NEVER).null().dft(Dft::Null),
    ],
    max_version: 3,
    flexible_from: NEVER,
};

/// The consumer protocol's assignment, versions 0–3, never flexible.
pub static CONSUMER_PROTOCOL_ASSIGNMENT: Schema = Schema {
    name: "ConsumerProtocolAssignment",
    fields: &[
        f("AssignedPartitions", TOPIC_PARTITION_LIST),
        f("UserData", Ty::Bytes).null().dft(Dft::Null),
    ],
    max_version: 3,
    flexible_from: NEVER,
};

impl Schema {
    const fn non_flexible(mut self, max: i16) -> Schema {
        self.max_version = max;
        self.flexible_from = NEVER;
        self
    }
    const fn versions(mut self, max: i16, flexible_from: i16) -> Schema {
        self.max_version = max;
        self.flexible_from = flexible_from;
        self
    }
    /// True when `version` uses the flexible (compact, tagged) encoding.
    pub fn flexible(&self, version: i16) -> bool {
        version >= self.flexible_from
    }
}

/// The record type `id` of `table`.
pub fn lookup(table: &'static [RecordType], id: i16) -> Option<&'static RecordType> {
    table.iter().find(|t| t.id == id)
}
