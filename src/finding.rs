//! Findings: anomalies reported as data, not errors.
//!
//! Every [`Kind`] has a stable snake_case id (documented in `docs/findings.md`), a
//! default [`Severity`], and a sentence on what a broker does about it.

use serde::{Deserialize, Serialize};
use std::fmt;

crate::internal_mod! {
    /// Typed evidence at the stage joints.
    mod evidence;
}

/// How bad a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $sev:ident; )*) => {
        /// The stable finding kinds.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Kind {
            $( $(#[$doc])* $variant, )*
        }

        impl Kind {
            /// Every kind, in documentation order.
            pub const ALL: &'static [Kind] = &[ $( Kind::$variant, )* ];

            /// The stable snake_case id.
            pub fn id(self) -> &'static str {
                match self { $( Kind::$variant => $id, )* }
            }

            /// The default severity.
            pub fn default_severity(self) -> Severity {
                match self { $( Kind::$variant => Severity::$sev, )* }
            }

            /// Look a kind up by its id.
            pub fn from_id(id: &str) -> Option<Kind> {
                match id { $( $id => Some(Kind::$variant), )* _ => None }
            }
        }
    };
}

kinds! {
    // --- file and batch integrity ---
    /// Stored CRC does not match the bytes (rule 1).
    CrcMismatch = "crc_mismatch", Error;
    /// A partial entry at the end of a file (rule 2).
    TruncatedBatch = "truncated_batch", Error;
    /// Bytes after the last whole batch that do not frame as an entry (rule 2).
    TrailingBytes = "trailing_bytes", Warning;
    /// A zero-filled tail after the last batch (preallocated segment after a crash).
    PreallocatedTail = "preallocated_tail", Info;
    /// Header or record structure that Kafka rejects (rules 3, 4, 11, codec errors, varints).
    InvalidBatch = "invalid_batch", Error;
    /// A batch whose offsets do not increase past the previous batch (rule 5).
    OffsetRegression = "offset_regression", Error;
    /// Offsets skipped between consecutive batches (rule 6).
    OffsetGap = "offset_gap", Info;
    /// Batch offsets outside what the segment's base offset allows (rule 7).
    SegmentOffsetOutOfRange = "segment_offset_out_of_range", Error;
    /// A segment's batches reaching the next segment's base offset (the next one not
    /// starting after them).
    SegmentPastNextBase = "segment_past_next_base", Error;
    /// partitionLeaderEpoch decreasing with offset (rule 8).
    LeaderEpochRegression = "leader_epoch_regression", Warning;
    /// `--deep`: records without a key on a topic treated as compacted (the cleaner drops them).
    KeylessRecordOnCompactedTopic = "keyless_record_on_compacted_topic", Warning;
    // --- producer epoch / sequence ---
    /// A producer's epoch went down (rule 12).
    ProducerEpochRegression = "producer_epoch_regression", Error;
    /// Data after a marker of the same producer at a higher epoch (rule 13, KAFKA-9144).
    ZombieWrite = "zombie_write", Error;
    /// A new epoch that does not start at sequence 0 (rule 14).
    InvalidFirstSequence = "invalid_first_sequence", Warning;
    /// Sequence discontinuity within an epoch (rule 15).
    SequenceGap = "sequence_gap", Error;
    /// The same sequence range written twice (rule 16).
    DuplicateSequence = "duplicate_sequence", Error;
    /// Producer fields inconsistent with the batch kind (rules 18–19).
    InvalidProducerFields = "invalid_producer_fields", Warning;
    // --- transactions and markers ---
    /// A transaction open at the end of the log, idle longer than `--hanging-after` (rule 20).
    HangingTransaction = "hanging_transaction", Error;
    /// A transaction open at the end of the log, younger than `--hanging-after`.
    OpenTransaction = "open_transaction", Info;
    /// A marker with a lower coordinator epoch than an earlier one (rule 22).
    CoordinatorEpochRegression = "coordinator_epoch_regression", Warning;
    /// A COMMIT/ABORT marker with no open transaction (rule 23).
    MarkerWithoutTransaction = "marker_without_transaction", Info;
    /// Markers of different types for the same producer and epoch (rule 23 b).
    ConflictingMarkers = "conflicting_markers", Error;
    /// A TV2 producer's COMMIT/ABORT at or below the epoch of the data it closes (rules 21, 27).
    MarkerEpochNotBumped = "marker_epoch_not_bumped", Warning;
    /// A TV0/1 producer's COMMIT above the epoch of the data it closes (rule 27).
    CommitEpochAboveData = "commit_epoch_above_data", Info;
    /// A `__consumer_offsets` record the group coordinator cannot deserialize (rule 32).
    OffsetsRecordUndecodable = "offsets_record_undecodable", Error;
    /// A `__consumer_offsets` record of a type no Kafka release writes (rule 32).
    OffsetsRecordUnknownType = "offsets_record_unknown_type", Warning;
    /// A `__share_group_state` record the share coordinator's load throws on (rule 32).
    ShareStateRecordUndecodable = "share_state_record_undecodable", Error;
    /// A share partition live at the end of `__share_group_state` with no snapshot at or
    /// above the log start: its state is an update's alone (lost on load).
    ShareStateLost = "share_state_lost", Warning;
    /// A live share partition's snapshot holds a state batch below its start offset:
    /// `SharePartition.maybeInitialize` refuses it.
    ShareStateBatchBelowStart = "share_state_batch_below_start", Error;
    /// A live share partition's latest snapshot lowered the state epoch below an earlier
    /// snapshot's, no tombstone between: the share coordinator fences every write of it.
    ShareStateEpochFenced = "share_state_epoch_fenced", Error;
    /// A live share partition's served state holds a batch in a delivery state no
    /// `RecordState` has: `SharePartition.maybeInitialize` fails on it.
    ShareStateUnknownDeliveryState = "share_state_unknown_delivery_state", Error;
    /// A share group's start offset on a partition, as its share coordinator serves it,
    /// past the partition's log end: the group stalls there.
    ShareStartBeyondLogEnd = "share_start_beyond_log_end", Error;
    /// An open transaction continued at a new epoch without a marker (rule 25).
    TransactionEpochChange = "transaction_epoch_change", Warning;
    /// Non-transactional data while the producer has an open transaction (rule 26).
    NonTransactionalWriteInTransaction = "non_transactional_write_in_transaction", Error;
    /// An anomaly in the coordinator's own log, `__transaction_state` (rule 31; `evidence.anomaly`).
    TransactionStateAnomaly = "transaction_state_anomaly", Warning;
    // --- other files of the partition (issue: verify) ---
    /// An offset index that cannot be read as Kafka would (size, ordering).
    IndexCorrupt = "index_corrupt", Error;
    /// An offset index entry that disagrees with the log (rule 9).
    IndexMismatch = "index_mismatch", Warning;
    /// A time index entry that disagrees with the log (rule 9).
    TimeindexMismatch = "timeindex_mismatch", Warning;
    /// A `.txnindex` that disagrees with the aborted transactions recomputed from markers (rule 28).
    TxnindexMismatch = "txnindex_mismatch", Error;
    /// A producer snapshot the broker would reject (version, CRC, size).
    SnapshotCorrupt = "snapshot_corrupt", Warning;
    /// A producer snapshot that disagrees with the state rebuilt from the log (rule 29).
    SnapshotMismatch = "snapshot_mismatch", Warning;
    /// Several producer snapshot files of one offset (the broker keeps one, in listing order).
    ProducerSnapshotDuplicate = "producer_snapshot_duplicate", Warning;
    /// `leader-epoch-checkpoint` disagrees with the batches' partitionLeaderEpoch.
    LeaderEpochCheckpointMismatch = "leader_epoch_checkpoint_mismatch", Warning;
    /// Checkpoint files inconsistent with the log (HW, recovery point, log start).
    CheckpointInconsistent = "checkpoint_inconsistent", Warning;
    /// An open transaction starting below the log start offset (rule 30).
    LsoBelowLogStart = "lso_below_log_start", Warning;
    /// `.deleted`/`.cleaned`/`.swap`/`.tmp` files or `-delete/-future/-stray` directories.
    LeftoverFile = "leftover_file", Info;
    /// No `.kafka_cleanshutdown` in the log directory: the next start runs recovery.
    UncleanShutdown = "unclean_shutdown", Info;
    /// A directory in a log dir whose name Kafka cannot parse as a partition's
    /// (`lost+found`, `backup-old`): the broker's log loading throws and it does not start.
    ForeignDirectory = "foreign_directory", Error;
    /// A file in a partition directory whose name the broker's load parses as an offset
    /// and cannot (`notes.log`, `backup.index`, `abc.snapshot`): the load throws
    /// `NumberFormatException` and the broker does not start.
    UnparseableFileName = "unparseable_file_name", Error;
    /// A segment file in a partition directory under a name the broker does not give it
    /// (`5.log`, `00000000000000000500.copy.log`): the load reads the offset in the name and
    /// opens the segment under the broker's name instead — created empty when absent — so
    /// the file is never read (error when that changes the log; info when the file is
    /// just ignored or deleted).
    NoncanonicalSegmentName = "noncanonical_segment_name", Error;
    // --- across replicas (rule 33) ---
    /// Two replicas of a partition hold different batches over the offsets both hold.
    ReplicaDivergence = "replica_divergence", Warning;
    // --- the group coordinator's log ---
    /// A `__consumer_offsets` record the group coordinator's replay rejects (its load throws).
    GroupLoadFailure = "group_load_failure", Error;
    /// A streams group left at the KIP-1331 deletion barrier (stored description epoch -2).
    GroupDeletionUnfinished = "group_deletion_unfinished", Warning;
    /// A group's tombstones out of the coordinator's order, or its records left live after it.
    GroupTombstonesIncomplete = "group_tombstones_incomplete", Error;
    /// A group or target assignment epoch that goes down, or an assignment above the group epoch.
    GroupEpochRegression = "group_epoch_regression", Error;
    /// An offset commit in a non-transactional batch with a producer id: Kafka 4.x's load
    /// holds it pending for ever, Kafka 3.x's applies it.
    GroupOffsetCommitInIdempotentBatch = "group_offset_commit_in_idempotent_batch", Warning;
    // --- across the partitions of a transaction and its coordinator ---
    /// One transaction committed on some partitions and aborted on others.
    TransactionOutcomeMismatch = "transaction_outcome_mismatch", Error;
    /// A completed transaction whose marker never reached one of its partitions.
    TransactionMarkerMissing = "transaction_marker_missing", Error;
    /// Transactional data on a partition the coordinator's transaction never listed.
    TransactionPartitionUnlisted = "transaction_partition_unlisted", Warning;
    /// PrepareCommit/PrepareAbort with no Complete record past the transaction timeout.
    TransactionStuckInPrepare = "transaction_stuck_in_prepare", Error;
    /// A TV2 producer left at epoch 32767 (rotation lost: KAFKA-20310 / KAFKA-20090 shapes).
    ProducerStuckAtExhaustedEpoch = "producer_stuck_at_exhausted_epoch", Error;
    /// A producer id rotation whose retry fails after a coordinator failover (KAFKA-20310 / KAFKA-20357).
    ProducerFencedOnRetryAfterFailover = "producer_fenced_on_retry_after_failover", Warning;
    // --- the analysis itself ---
    /// A file that could not be read (I/O error); the analysis of it is incomplete.
    UnreadableFile = "unreadable_file", Error;
    /// The per-segment budget of decompressed bytes was spent: later compressed batches
    /// were checked by header and CRC only.
    DecompressionBudgetExceeded = "decompression_budget_exceeded", Warning;
    /// A batch too large to hold in memory: header and CRC checked streaming, records not decoded.
    BatchNotDecoded = "batch_not_decoded", Warning;
    // --- what the next start does with one broker's log dirs ---
    /// One broker holds a topic-partition in two of its log dirs: its start fails
    /// (`LogManager.loadLog`'s "Duplicate log directories").
    DuplicateLogDirectories = "duplicate_log_directories", Error;
    /// A log dir's `meta.properties` names a reserved `directory.id`: its broker's start
    /// fails (`MetaPropertiesEnsemble.verify`, 3.7 and later).
    ReservedDirectoryId = "reserved_directory_id", Error;
    /// A log dir's `meta.properties` that the broker's reader refuses: an error dir, offline
    /// from the start (the metadata log dir's stops it; 3.7 and later).
    MetaPropertiesRefused = "meta_properties_refused", Error;
    /// A v0 `meta.properties` without a node id (`broker.id`) or a `cluster.id`, read for a
    /// broker since 4.0 (KRaft only): its start fails (`KafkaRaftServer.initializeLogDirs`).
    MetaPropertiesIncomplete = "meta_properties_incomplete", Error;
    /// A log dir of a broker since 4.0 holding the files a broker writes but no
    /// `meta.properties`: its start fails if the directory is one of its `log.dirs`
    /// (`KafkaRaftServer.initializeLogDirs`).
    MetaPropertiesMissing = "meta_properties_missing", Warning;
    /// Two log dirs of one broker carry the same `directory.id` (`MetaPropertiesEnsemble.verify`),
    /// or a log dir carries one the metadata log registers for another broker
    /// (`ClusterControlManager.registerBroker`): its start fails (3.7 and later).
    DuplicateDirectoryId = "duplicate_directory_id", Error;
    /// One broker's log dirs whose `meta.properties` differ where a broker before 3.7
    /// compares them whole: its start fails (`InconsistentBrokerMetadataException`).
    InconsistentBrokerMetadata = "inconsistent_broker_metadata", Error;
    /// The KRaft metadata log in two log dirs of one node: one of them is not its
    /// `metadata.log.dir`, and the start fails (`KafkaRaftServer.initializeLogDirs`).
    UnexpectedMetadataLogDir = "unexpected_metadata_log_dir", Error;
    /// An entry of the broker's `remote-log-index-cache` whose index fails its sanity check:
    /// `RemoteIndexCache.init` throws and the start with remote storage enabled fails.
    RemoteIndexCacheCorrupt = "remote_index_cache_corrupt", Error;
    // --- what the next start loses (the recovery model against the checkpoints) ---
    /// Recovery truncates below the checkpointed high watermark: acknowledged data lost on this replica.
    TruncationBelowHighWatermark = "truncation_below_high_watermark", Error;
    /// That truncation removes the markers of acknowledged transactions begun below it: the
    /// restarted copy holds them open.
    TransactionReopenedAtRecovery = "transaction_reopened_at_recovery", Error;
    // --- what consumers saw: committed offsets against their partitions ---
    /// A group's committed offset above the partition's log end (records it read are gone).
    CommittedOffsetBeyondLogEnd = "committed_offset_beyond_log_end", Error;
    /// A group's committed offset below the partition's log start (records it never read are gone).
    CommittedOffsetBelowLogStart = "committed_offset_below_log_start", Warning;
    /// A group's committed offset at the last stable offset a hanging transaction holds.
    GroupBlockedByHangingTransaction = "group_blocked_by_hanging_transaction", Error;
    /// A transactional offset commit held pending by a hanging transaction (UNSTABLE_OFFSET_COMMIT).
    GroupOffsetsPendingInHangingTransaction = "group_offsets_pending_in_hanging_transaction", Error;
    /// A committed leader epoch that the partition's leader-epoch lineage does not hold.
    CommittedLeaderEpochUnknown = "committed_leader_epoch_unknown", Warning;
    /// A committed offset past the end of its own leader epoch on the copy (KIP-320: the
    /// epoch's tail the group read was truncated).
    CommittedOffsetPastEpochEnd = "committed_offset_past_epoch_end", Warning;
    /// A committed offset made for another incarnation of its topic: the commit's topic id
    /// is not the partition's (a topic deleted and created again under its name).
    CommittedOffsetTopicIdMismatch = "committed_offset_topic_id_mismatch", Warning;
    // --- the KRaft metadata log: leadership history ---
    /// A leader elected outside the ISR (and outside the ELR when the ISR was empty).
    UncleanLeaderElection = "unclean_leader_election", Warning;
    /// A metadata record that does not decode: the history goes on without it.
    MetadataRecordUndecodable = "metadata_record_undecodable", Warning;
    /// Metadata records of a type or version this reader does not know, kept raw.
    MetadataRecordUnknown = "metadata_record_unknown", Info;
    /// A metadata record a node's replay throws on (a `ProducerIdsRecord` whose next
    /// producer id does not go up: every controller replaying it stops; a `VotersRecord`
    /// changing more than one voter at once: no node holding it starts; a partition record
    /// whose replica directories are not one per replica: controllers stop, brokers skip it).
    MetadataRecordRejected = "metadata_record_rejected", Error;
    /// A metadata transaction (KIP-868) the log ends inside, or framing the loader rejects.
    MetadataTransactionIncomplete = "metadata_transaction_incomplete", Info;
    /// A live metadata log whose segments start above every snapshot it holds
    /// (`KafkaMetadataLog.recoverSnapshots`: "Inconsistent snapshot state"; the node does not start).
    MetadataSnapshotInconsistent = "metadata_snapshot_inconsistent", Error;
    /// The latest snapshot of a live metadata log, which the node opens at every start,
    /// fails `RecordsSnapshotReader`'s checks (no header first, a CRC, a record type or
    /// framing `RecordsIterator` refuses): the node does not start.
    MetadataSnapshotUnreadable = "metadata_snapshot_unreadable", Error;
    /// A record of a live metadata log that every start decodes (from the latest
    /// snapshot's end to the log end) fails `RecordsIterator`'s checks: since Kafka 3.8 the
    /// node does not start.
    MetadataLogUnreadable = "metadata_log_unreadable", Error;
    /// A file of a live metadata log whose name `Snapshots.parse` reads as a snapshot id but
    /// is not Kafka's name for it: deleted at start, or kept as an id no file is opened for.
    MetadataSnapshotMisnamed = "metadata_snapshot_misnamed", Warning;
    /// A live metadata log whose `partition.metadata` names another topic id than the
    /// metadata topic's (`UnifiedLog.initializeTopicId`: the node does not start).
    MetadataLogTopicIdMismatch = "metadata_log_topic_id_mismatch", Error;
    /// A live metadata log's `quorum-state` that `FileQuorumStateStore` cannot read (not
    /// JSON, no or an unsupported `data_version`, a mandatory field missing): the node
    /// does not start.
    QuorumStateUnreadable = "quorum_state_unreadable", Error;
    /// A live metadata log's `quorum-state` naming a leader for an epoch whose
    /// `LeaderChangeMessage` in the cluster's metadata log names another: no quorum elects two
    /// leaders for one epoch, so the file is foreign or was edited.
    QuorumStateLeaderConflict = "quorum_state_leader_conflict", Warning;
    /// Live partition directories of one topic in one broker log dir whose
    /// `partition.metadata` files name different topic ids: all but one are of another
    /// incarnation of the topic, which the broker refuses to serve.
    TopicIdConflict = "topic_id_conflict", Warning;
    /// A live partition directory of a KRaft broker that the cluster's metadata (as of the
    /// metadata log's end) no longer assigns to it: its next start does not keep it as a
    /// live log (`LogManager.isStrayKraftReplica`: renamed `-stray`; deleted before 3.7).
    StrayReplica = "stray_replica", Warning;
    /// A `-future` copy in the log dir the cluster's metadata (as of the metadata log's
    /// end) assigns the replica to: the broker's next start makes it the live log and
    /// deletes the current one (`LogManager.recoverAbandonedFutureLogs`, 3.7.1 and later).
    AbandonedFutureReplica = "abandoned_future_replica", Warning;
    // --- tiered storage (KIP-405) ---
    /// Offsets between the log start and the local log start no finished remote segment serves.
    RemoteSegmentGap = "remote_segment_gap", Error;
    /// A remote segment left in COPY_SEGMENT_STARTED while later events follow (orphan objects).
    RemoteCopyUnfinished = "remote_copy_unfinished", Warning;
    /// A remote segment left in DELETE_SEGMENT_STARTED while later events follow.
    RemoteDeleteUnfinished = "remote_delete_unfinished", Warning;
    /// A finished remote segment outside the partition's leader-epoch lineage: passed over by time and size retention, still read.
    RemoteSegmentAbandonedLineage = "remote_segment_abandoned_lineage", Warning;
    /// `log-start-offset-checkpoint` disagrees with the remote segments.
    RemoteLogStartMismatch = "remote_log_start_mismatch", Warning;
    /// A finished remote segment absent from the remote storage given.
    RemoteSegmentMissing = "remote_segment_missing", Error;
    /// A remote segment whose objects disagree with its metadata (offsets, size).
    RemoteSegmentMismatch = "remote_segment_mismatch", Error;
    /// A remote segment whose metadata says its transaction index is empty while the index
    /// object holds aborted transactions (read_committed remote fetches skip it).
    RemoteTxnIndexHidden = "remote_txn_index_hidden", Error;
    /// A remote segment whose transaction index lacks aborted transactions its ABORT
    /// markers end (read_committed remote fetches serve their records).
    RemoteTxnIndexIncomplete = "remote_txn_index_incomplete", Error;
    /// A remote segment whose transaction index holds entries ending at no ABORT marker of
    /// their producer (read_committed remote fetches skip that producer's committed records).
    RemoteTxnIndexExtra = "remote_txn_index_extra", Error;
    /// A `__remote_log_metadata` record the broker's metadata consumer cannot deserialize (or,
    /// a snapshot record, cannot ask for its user partition).
    RemoteMetadataUndecodable = "remote_metadata_undecodable", Error;
    /// A `__remote_log_metadata` record the cache throws on: the metadata consumer stops there.
    RemoteMetadataConsumerStopped = "remote_metadata_consumer_stopped", Error;
    /// A remote segment's objects that cannot be read (encrypted): only its metadata is checked.
    RemoteSegmentUnreadable = "remote_segment_unreadable", Info;
    /// A remote segment's object with damaged batches (CRC, framing, header): served as stored.
    RemoteSegmentCorrupt = "remote_segment_corrupt", Error;
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

/// A kind reads back from its id (results exchanged between processes).
impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = String::deserialize(d)?;
        Kind::from_id(&id)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown finding kind {id:?}")))
    }
}

/// One anomaly, with its evidence. Field names are the JSON report's contract
/// (`docs/report-schema.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Finding {
    pub kind: Kind,
    pub severity: Severity,
    pub topic: String,
    pub partition: i32,
    /// The offset the finding is about (a batch's base offset, a transaction's first offset).
    pub offset: Option<i64>,
    /// Byte position in `segment`.
    pub position: Option<u64>,
    /// File name of the segment (or other file) involved.
    pub segment: Option<String>,
    pub producer_id: Option<i64>,
    pub producer_epoch: Option<i16>,
    /// One line, self-contained.
    pub message: String,
    /// The batches and values involved.
    pub evidence: serde_json::Value,
    /// What a broker does about it: rejects on append / warns on recovery / never notices.
    pub broker_behaviour: String,
    /// The client error a producer would have seen, with its KIP-691/KIP-1050 class.
    pub client_error: Option<String>,
    /// What to do, where something can be done.
    pub remediation: Option<String>,
    /// Stable id within a report, derived from the finding's identity (kind, copy, partition,
    /// offset, producer): the same finding gets the same id in every run over the same inputs.
    /// Assigned by `assign_ids` when the report is complete.
    pub id: String,
    /// Ids of the findings this one follows from (its root causes), when known.
    pub caused_by: Vec<String>,
    /// Where the evidence lives: cluster, broker, log dir, partition directory, copy kind.
    pub source: Source,
    /// The consumer group the finding is about (consumer findings only; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// Which copy of a partition a directory holds (its directory name's suffix, as `LocalLog`
/// names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CopyKind {
    /// `topic-N`: the copy the broker serves.
    #[default]
    Live,
    /// `topic-N.<uuid>-future`: an inter-log-dir move in progress (KIP-113).
    Future,
    /// `topic-N.<uuid>-delete`: scheduled for asynchronous deletion.
    Delete,
    /// `topic-N.<uuid>-stray`: a KRaft stray replica the broker no longer hosts (KIP-858).
    Stray,
}

impl CopyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CopyKind::Live => "live",
            CopyKind::Future => "future",
            CopyKind::Delete => "delete",
            CopyKind::Stray => "stray",
        }
    }
    /// Only the live copy gets live-partition verdicts (hanging transactions, LSO, `abort`).
    pub fn is_live(self) -> bool {
        self == CopyKind::Live
    }
}

/// Identity of the evidence a finding (or partition report) comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Source {
    /// `cluster.id` from the log dir's `meta.properties`, when present (shared by every
    /// source of the log dir: one allocation, not one per partition and finding).
    pub cluster_id: Option<std::sync::Arc<str>>,
    /// `node.id` (KRaft) or `broker.id` (ZooKeeper) from `meta.properties`.
    pub broker_id: Option<i32>,
    /// The log dir (a `log.dirs` entry) holding the partition directory (shared as
    /// `cluster_id` is).
    pub log_dir: Option<std::sync::Arc<str>>,
    /// The partition directory (or file) the finding is about.
    pub path: Option<String>,
    /// Which copy of the partition the directory holds.
    pub copy: CopyKind,
    /// The log dir's `meta.properties` is version 1: a KRaft node wrote it, so the
    /// broker's properties file names it by `node.id` (what `kafka-server-stop.sh
    /// --node-id` matches). Absent (false): version 0 — a ZooKeeper-mode broker (named by
    /// `broker.id`), or one migrated from ZooKeeper to KRaft, which keeps its version-0
    /// file — or no readable file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kraft: bool,
}

/// How an open transaction's message says where the last stable offset is (the replay's
/// `open_txn_finding` ends the message with it); a rewrite that makes no claim on the LSO
/// drops it ([`Finding::drop_lso_clause`]).
pub(crate) const LSO_CLAUSE: &str = "; the last stable offset ";

impl Finding {
    /// Drop the clause on the last stable offset that ends an open transaction's message
    /// ([`LSO_CLAUSE`]), for a copy that pins none.
    pub(crate) fn drop_lso_clause(&mut self) {
        if let Some(at) = self.message.find(LSO_CLAUSE) {
            self.message.truncate(at);
        }
    }

    /// Whether this is an `unreadable_file` finding a command says on stderr itself: a file
    /// a walk could not (fully) read — a partition's, or a segment named outside a
    /// partition directory (partition -1) — and not one of the paths discovery could not
    /// read at all (`errors`, the report's `errors`), whose findings name them as their
    /// `segment` and which are said with the other input errors.
    pub fn is_unread_file(&self, errors: &[(std::path::PathBuf, String)]) -> bool {
        let listed = || {
            self.partition < 0
                && self
                    .segment
                    .as_ref()
                    .is_some_and(|s| errors.iter().any(|(p, _)| p.display().to_string() == *s))
        };
        self.kind == Kind::UnreadableFile && !listed()
    }

    /// Whether this is an `unreadable_file` finding of the file at `path`: its `segment` is
    /// that path, or that file's name in the finding's partition directory
    /// (`source.path`). What a check asks to say a file once, never its message's text.
    pub fn names_unreadable_file(&self, path: &std::path::Path) -> bool {
        use std::path::Path;
        self.kind == Kind::UnreadableFile
            && self.segment.as_deref().is_some_and(|s| {
                let dir = self.source.path.as_deref().map(Path::new);
                Path::new(s) == path || dir.is_some_and(|d| d.join(s) == path)
            })
    }

    /// A finding of `kind` with its default severity, for `topic`-`partition`.
    pub fn new(kind: Kind, topic: &str, partition: i32, message: impl Into<String>) -> Self {
        Finding {
            kind,
            severity: kind.default_severity(),
            topic: topic.to_string(),
            partition,
            offset: None,
            position: None,
            segment: None,
            producer_id: None,
            producer_epoch: None,
            message: message.into(),
            evidence: serde_json::Value::Object(Default::default()),
            broker_behaviour: String::new(),
            client_error: None,
            remediation: None,
            id: String::new(),
            caused_by: Vec::new(),
            source: Source::default(),
            group: None,
        }
    }
    pub fn severity(mut self, s: Severity) -> Self {
        self.severity = s;
        self
    }
    pub fn offset(mut self, o: i64) -> Self {
        self.offset = Some(o);
        self
    }
    pub fn position(mut self, p: u64) -> Self {
        self.position = Some(p);
        self
    }
    pub fn segment(mut self, s: impl Into<String>) -> Self {
        self.segment = Some(s.into());
        self
    }
    pub fn producer(mut self, pid: i64, epoch: i16) -> Self {
        self.producer_id = Some(pid);
        self.producer_epoch = Some(epoch);
        self
    }
    pub fn evidence(mut self, e: serde_json::Value) -> Self {
        self.evidence = e;
        self
    }
    pub fn broker(mut self, b: impl Into<String>) -> Self {
        self.broker_behaviour = b.into();
        self
    }
    pub fn client_error(mut self, c: impl Into<String>) -> Self {
        self.client_error = Some(c.into());
        self
    }
    pub fn remediation(mut self, r: impl Into<String>) -> Self {
        self.remediation = Some(r.into());
        self
    }
    /// The consumer group the finding is about.
    pub fn group(mut self, g: impl Into<String>) -> Self {
        self.group = Some(g.into());
        self
    }
    /// Link this finding to the finding it follows from: the cause's id, or its key
    /// ([`Finding::identity_key`]), which `assign_ids` resolves.
    pub fn caused_by(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        if !self.caused_by.contains(&id) {
            self.caused_by.push(id);
        }
        self
    }
    /// The content-derived key of this finding: kind, topic-partition (none for a finding of
    /// no partition), offset, producer.
    /// A rule links a follow-on finding to its cause with [`Finding::caused_by`] and the
    /// cause's key (`identity_key`); `assign_ids` resolves keys to ids within the same
    /// partition directory.
    pub fn identity_key(&self) -> String {
        identity_key(
            self.kind,
            &self.topic,
            self.partition,
            self.offset,
            self.producer_id,
        )
    }
}

/// The key of a finding with these fields (see [`Finding::identity_key`]).
pub(crate) fn identity_key(
    kind: Kind,
    topic: &str,
    partition: i32,
    offset: Option<i64>,
    producer_id: Option<i64>,
) -> String {
    let mut s = String::with_capacity(48);
    use std::fmt::Write as _;
    // A finding of no topic-partition (a log dir's, a broker's) is named by its kind alone.
    if topic.is_empty() && partition < 0 {
        s.push_str(kind.id());
    } else {
        let _ = write!(s, "{}:{topic}-{partition}", kind.id());
    }
    if let Some(o) = offset {
        let _ = write!(s, "@{o}");
    }
    if let Some(p) = producer_id {
        let _ = write!(s, ":p{p}");
    }
    s
}

/// Give every finding its id — its key, prefixed with `b<broker>:` when the broker is known
/// and `<copy>:` for a non-live copy, with `#2`, `#3`, … on repeats in report order — and
/// resolve `caused_by` keys to the ids of the findings they name in the same partition
/// directory (same `source.path`, else the same topic-partition). Links that resolve to
/// nothing (the cause is not in the report) are dropped. Idempotent.
pub(crate) fn assign_ids(findings: &mut [Finding]) {
    assign_ids_in(&mut [findings]);
}

/// [`assign_ids`] over one report's findings held in several lists (`groups`, in report
/// order: `verify` keeps each partition's own), so that a link from one list to a
/// finding of another (a coordinator finding explaining a partition's hanging
/// transaction) resolves as it does in one list, and ids are unique across them all.
pub(crate) fn assign_ids_in(groups: &mut [&mut [Finding]]) {
    use std::collections::HashMap;
    let mut seen: HashMap<String, u32> = HashMap::new();
    for f in groups.iter_mut().flat_map(|g| g.iter_mut()) {
        let mut id = String::new();
        if let Some(b) = f.source.broker_id {
            id.push_str(&format!("b{b}:"));
        }
        if !f.source.copy.is_live() {
            id.push_str(f.source.copy.as_str());
            id.push(':');
        }
        id.push_str(&f.identity_key());
        let n = seen.entry(id.clone()).or_insert(0);
        *n += 1;
        f.id = if *n == 1 { id } else { format!("{id}#{n}") };
    }
    // (path or topic-partition, key) → first id with that key there; and key → first id
    // anywhere, for links across partitions (a coordinator finding explaining a
    // partition's hanging transaction).
    let mut by_key: HashMap<(String, String), String> = HashMap::new();
    let mut anywhere: HashMap<String, String> = HashMap::new();
    let all_ids: std::collections::HashSet<String> = groups
        .iter()
        .flat_map(|g| g.iter())
        .map(|f| f.id.clone())
        .collect();
    for f in groups.iter().flat_map(|g| g.iter()) {
        let place = place_of(f);
        by_key
            .entry((place, f.identity_key()))
            .or_insert_with(|| f.id.clone());
        anywhere
            .entry(f.identity_key())
            .or_insert_with(|| f.id.clone());
    }
    for f in groups.iter_mut().flat_map(|g| g.iter_mut()) {
        if f.caused_by.is_empty() {
            continue;
        }
        let place = place_of(f);
        let mut resolved = Vec::with_capacity(f.caused_by.len());
        for c in &f.caused_by {
            // A key names a finding of the same directory first; an id stands for itself;
            // else the first finding anywhere with that key.
            let id = by_key
                .get(&(place.clone(), c.clone()))
                .cloned()
                .or_else(|| all_ids.contains(c).then(|| c.clone()))
                .or_else(|| anywhere.get(c).cloned());
            if let Some(id) = id
                && id != f.id
                && !resolved.contains(&id)
            {
                resolved.push(id);
            }
        }
        f.caused_by = resolved;
    }
}

fn place_of(f: &Finding) -> String {
    match &f.source.path {
        Some(p) => p.clone(),
        None => format!("{}-{}", f.topic, f.partition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &k in Kind::ALL {
            assert!(seen.insert(k.id()), "duplicate id {}", k.id());
            assert!(k.id().chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert_eq!(Kind::from_id(k.id()), Some(k));
        }
        assert_eq!(Kind::ZombieWrite.default_severity(), Severity::Error);
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Error);
    }

    /// A link from one list's finding to a finding of another list resolves when the ids
    /// are given over both (`verify` keeps each partition's findings apart), and is
    /// dropped when each list is numbered alone; a key repeated across lists gets `#2`.
    #[test]
    fn links_resolve_across_the_lists_of_one_report() {
        let cause = || {
            Finding::new(
                Kind::TransactionStuckInPrepare,
                "__transaction_state",
                0,
                "",
            )
        };
        let effect = Finding::new(Kind::HangingTransaction, "orders", 0, "")
            .caused_by(cause().identity_key());
        let (mut a, mut b) = (vec![cause()], vec![effect.clone(), cause()]);
        assign_ids_in(&mut [&mut a, &mut b]);
        assert_eq!(b[0].caused_by, [a[0].id.clone()]);
        assert_eq!(b[1].id, format!("{}#2", a[0].id));
        let (mut a, mut b) = (vec![cause()], vec![effect]);
        assign_ids(&mut a);
        assign_ids(&mut b);
        assert!(b[0].caused_by.is_empty());
        let mut dirs = vec![Finding::new(Kind::UncleanShutdown, "", -1, ""); 2];
        assign_ids(&mut dirs);
        assert_eq!(
            [&dirs[0].id, &dirs[1].id],
            ["unclean_shutdown", "unclean_shutdown#2"]
        );
    }
}
