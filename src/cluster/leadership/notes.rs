//! What the metadata log says about itself: records that do not decode or that a node's replay
//! refuses (a producer id block going back, a voter change of more than one voter, replica
//! directories not one per replica, a leader recovery state outside its enum, a broker
//! registration change of a broker or epoch not registered, a partition record of a topic or
//! partition the image lacks), record types or versions this reader does not know, and
//! metadata transactions the loader never applies.

use super::ClusterHistory;
use crate::finding::{Finding, Kind, Severity};
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::metadata::MetaRecord;
use serde::Serialize;

const TOPIC: &str = "__cluster_metadata";
/// At most this many undecodable records are reported one by one.
pub const MAX_UNDECODABLE: usize = 50;

#[derive(Serialize)]
struct UnknownEvidence<'a> {
    api_key: i16,
    version: i16,
    records: u64,
    metadata_log: &'a str,
}

#[derive(Serialize)]
struct TxnEvidence<'a> {
    begin_offset: Option<i64>,
    abort_offset: Option<i64>,
    records: usize,
    reason: &'a str,
    metadata_log: &'a str,
}

/// The findings of the metadata log itself, with the partition index they belong to.
pub(super) fn of_log(h: &ClusterHistory, meta: Option<usize>) -> Vec<(Option<usize>, Finding)> {
    let path = h.log.path.as_str();
    let mut out = Vec::new();
    for u in h.log.undecodable.iter().take(MAX_UNDECODABLE) {
        let node = match (u.source.as_str(), u.read_at_start) {
            ("segment", Some(true)) => {
                "every start of the node reads it (metadata_log_unreadable says what the node does)"
            }
            ("snapshot", Some(true)) => {
                "it is in the latest snapshot, which every start opens (metadata_snapshot_unreadable says what the node does)"
            }
            (_, Some(false)) => {
                "no start of the node reads it (below the latest snapshot's end, or in an older snapshot); a follower fetching it would"
            }
            ("bootstrap", _) => {
                "it is in bootstrap.checkpoint, which is not the log: the history does not replay it"
            }
            _ => "whether a start reads it is not recorded (a bundle of an older build)",
        };
        out.push(
            Finding::new(
                Kind::MetadataRecordUndecodable,
                TOPIC,
                0,
                format!(
                    "{}: the metadata record at offset {} does not decode ({}); {node}. The history goes on without it: what it changed is unknown, so the epochs and ISRs inferred after it assume it changed none",
                    u.file, u.offset, u.reason
                ),
            )
            .offset(u.offset)
            .segment(u.file.clone())
            .evidence(serde_json::json!({
                "reason": u.reason,
                "source": u.source,
                "read_at_start": u.read_at_start,
                "metadata_log": path,
                "undecodable_records": h.log.undecodable.len(),
            }))
            .broker("no node applies it: RecordsIterator throws on the whole batch (MetadataRecordSerde: MetadataParseException). Kafka 3.8+: a node reading it at start (KafkaRaftClient.initialize) does not start, a follower fetching it halts (fatal raft IO thread fault). Kafka 3.5–3.7: the metadata loader's fault handler is fatal on a node with the controller role; a broker logs it (metadata-load-error-count) and goes on without the batch's records")
            .remediation("inspect it with kafka-dump-log.sh --cluster-metadata-decoder or klogscan dump; the leadership history may miss the change it held (later elections carry history_gap_before)"),
        );
    }
    for ((api_key, version), n) in &h.log.unknown {
        out.push(
            Finding::new(
                Kind::MetadataRecordUnknown,
                TOPIC,
                0,
                format!(
                    "{n} metadata record(s) of type {api_key} version {version}, which this reader does not know, were kept raw and not replayed"
                ),
            )
            .evidence(
                serde_json::to_value(UnknownEvidence {
                    api_key: *api_key,
                    version: *version,
                    records: *n,
                    metadata_log: path,
                })
                .unwrap_or_default(),
            )
            .broker("a node of a release that knows the type and version applies it; an older one cannot read it (MetadataRecordSerde: MetadataParseException, an unknown type or an unsupported version) and behaves as for a record that does not decode (metadata_record_undecodable): since Kafka 3.8 it does not start when the record lies where every start reads")
            .remediation("none needed unless the history looks incomplete: a newer klogscan may know the type"),
        );
    }
    for t in &h.history.dropped_txns {
        if t.abort.is_some() {
            continue;
        }
        let f = txn_finding(
            h,
            Some(t.begin),
            None,
            t.records,
            "the metadata log ends inside a metadata transaction (KIP-868): its records are not applied",
        );
        out.push(match level_without_transactions(h, t.begin) {
            Some(level) => open_txn_unsupported(f, t.begin, level),
            None => f,
        });
    }
    // The first one stops every controller replaying it: the later ones are counted.
    if let Some(&(offset, prev, next)) = h.history.producer_id_regressions.first() {
        let n = h.history.producer_id_regressions.len();
        out.push(
            Finding::new(
                Kind::MetadataRecordRejected,
                TOPIC,
                0,
                format!(
                    "metadata offset {offset}: a ProducerIdsRecord sets the next producer id to {next}, not above {prev} (the record before it): a controller replaying it throws (\"Next Producer ID from replayed record ({next}) is not greater than current next Producer ID in block\") and stops{}",
                    if n > 1 { format!("; {} more such record(s) follow", n - 1) } else { String::new() }
                ),
            )
            .offset(offset)
            .evidence(serde_json::json!({
                "record": "ProducerIdsRecord",
                "next_producer_id": next,
                "previous_next_producer_id": prev,
                "rejected_records": n,
                "metadata_log": path,
            }))
            .broker("ProducerIdControlManager.replay throws on it, and a controller's replay of a committed record is fatal (QuorumController: \"Unable to apply ProducerIdsRecord record at offset …\", the process-terminating fault handler): every controller loading the log stops there, so the quorum has no active controller once they restart; brokers apply it (ProducerIdsDelta.replay checks nothing), and a controller that ran past it would hand out producer id blocks already given: two producers on one id fence each other")
            .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: the record means the log was rewritten or a controller bug wrote it; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
        );
    }
    if let Some(f) = voter_change_rejected(h) {
        out.push(f);
    }
    if let Some(f) = directories_rejected(h, path) {
        out.push(f);
    }
    if let Some(f) = recovery_state_rejected(h, path) {
        out.push(f);
    }
    if let Some(f) = broker_change_rejected(h, path) {
        out.push(f);
    }
    if let Some(f) = topic_rejected(h, path) {
        out.push(f);
    }
    if let Some(f) = target_rejected(h, path) {
        out.push(f);
    }
    for (offset, why) in &h.history.txn_errors {
        out.push(txn_finding(h, None, Some(*offset), 0, why).severity(Severity::Warning));
    }
    out.into_iter().map(|f| (meta, f)).collect()
}

fn txn_finding(
    h: &ClusterHistory,
    begin: Option<i64>,
    at: Option<i64>,
    records: usize,
    reason: &str,
) -> Finding {
    let offset = begin.or(at).unwrap_or(0);
    Finding::new(
        Kind::MetadataTransactionIncomplete,
        TOPIC,
        0,
        format!("metadata offset {offset}: {reason}"),
    )
    .offset(offset)
    .evidence(
        serde_json::to_value(TxnEvidence {
            begin_offset: begin,
            abort_offset: at,
            records,
            reason,
            metadata_log: &h.log.path,
        })
        .unwrap_or_default(),
    )
    .broker("the metadata loader publishes nothing of an open transaction (MetadataBatchLoader.maybeFlushBatches); a new active controller aborts it")
    .remediation("none: a controller that takes over writes the AbortTransactionRecord")
}

/// `MetadataVersion.IBP_3_6_IV1`'s level: the first with metadata transactions
/// (`isMetadataTransactionSupported`).
const TRANSACTIONS_LEVEL: i16 = 13;

/// The `metadata.version` level a controller holds when it activates over a log that ends
/// inside the transaction begun at `begin`, when it is below [`TRANSACTIONS_LEVEL`]. The
/// controller replays each committed record as it comes, an open transaction's too (its
/// records are reverted only by an `AbortTransactionRecord`: `OffsetControlManager.replay`),
/// so the level is the last `metadata.version` record of the open transaction, else the one
/// the history applied before it. `None` when no such record is in the history (a log without
/// one is treated as 3.0-IV1, but a bootstrap or snapshot the history lacks may hold one),
/// when a gap the replay could not read lies at or after it (the gap may raise it), or when
/// the level has transactions.
fn level_without_transactions(h: &ClusterHistory, begin: i64) -> Option<i16> {
    let in_txn = (h.log.entries.iter().rev())
        .filter(|e| e.offset >= begin && !e.from_snapshot)
        .find_map(|e| match &e.record {
            MetaRecord::FeatureLevel {
                name,
                feature_level,
            } if name == "metadata.version" => Some((e.offset, *feature_level)),
            _ => None,
        });
    let before = (h.history.metadata_versions.iter())
        .rev()
        .find(|(o, _)| *o < begin)
        .copied();
    let (at, level) = in_txn.or(before)?;
    let gap_after = h.log.gaps.iter().any(|g| *g >= at);
    (level < TRANSACTIONS_LEVEL && !gap_after).then_some(level)
}

/// `f` (a transaction the log ends inside) when the controllers' `metadata.version` has no
/// metadata transactions: a new active controller cannot abort it.
/// `ActivationRecordsGenerator.recordsForNonEmptyLog` throws on an in-progress transaction
/// below 3.6-IV1 ("… does not support transactions. Cannot continue."; Kafka's
/// `QuorumControllerTest.testActivationRecordsPartialTransactionNoSupport`), and
/// `QuorumController`'s `CompleteActivationEvent` hands it to the fatal fault handler: every
/// controller that wins the election over the committed record exits. No controller below
/// that version writes a `BeginTransactionRecord` (it wraps a result in a transaction only
/// when `isMetadataTransactionSupported`).
fn open_txn_unsupported(f: Finding, begin: i64, level: i16) -> Finding {
    let mut f = f
        .severity(Severity::Error)
        .broker("a controller activating as leader aborts an open metadata transaction only at metadata.version 3.6-IV1 or later: below it ActivationRecordsGenerator throws (\"Detected in-progress transaction … does not support transactions. Cannot continue.\") and QuorumController's fatal fault handler stops the controller, so every controller that wins the election over the committed record exits and the quorum has no active controller; brokers publish nothing of the open transaction (MetadataBatchLoader)")
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: no controller at this metadata.version writes a BeginTransactionRecord, so the log was rewritten or written by another tool; ask the Kafka community before editing anything");
    f.message = format!(
        "metadata offset {begin}: the metadata log ends inside a metadata transaction (KIP-868) at metadata.version level {level}, which has no metadata transactions: a controller activating over it cannot abort it and stops"
    );
    if let Some(e) = f.evidence.as_object_mut() {
        e.insert("metadata_version_level".into(), level.into());
    }
    f
}

/// The first `VotersRecord` a node's start refuses: `KRaftControlRecordStateMachine` reads
/// every KRaft control record from the latest snapshot on (the snapshot's own voter set at
/// its end, then the log's, the uncommitted tail included) into `VoterSetHistory.addAt`,
/// which throws `IllegalArgumentException` on a set that shares no majority with the one
/// before it read from the log or a snapshot (`VoterSet.hasOverlappingMajority`: more than
/// one voter removed, or more than one added; the configured and bootstrapped sets are not
/// compared). Nothing catches it, so no node whose copy holds the record starts. Voters
/// are compared by id: Kafka compares id and directory id, so a set this finds refused is
/// refused there too, while a voter re-added under a new directory id with another change
/// may be refused there and not here (silence where the ids cannot tell).
fn voter_change_rejected(h: &ClusterHistory) -> Option<Finding> {
    // A `VotersRecord` that did not decode leaves the set before it unknown: the next one
    // is compared with nothing (it may have been the one change between them).
    let sets = (h.log.quorum.iter())
        .filter(|q| q.control_type == "KRAFT_VOTERS")
        .map(|q| (q.offset, q.voters.as_deref()));
    let mut before: Option<(i64, &[i32])> = None;
    let mut refused = None;
    for (offset, set) in sets {
        let Some(set) = set else {
            before = None;
            continue;
        };
        if let Some((_, prev)) = before {
            let removed: Vec<i32> = prev.iter().filter(|v| !set.contains(v)).copied().collect();
            let added: Vec<i32> = set.iter().filter(|v| !prev.contains(v)).copied().collect();
            if removed.len() > 1 || added.len() > 1 {
                refused = Some((offset, prev, set, removed, added));
                break;
            }
        }
        before = Some((offset, set));
    }
    let (offset, prev, set, removed, added) = refused?;
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {offset}: a VotersRecord changes the voters from {prev:?} to {set:?} ({} removed, {} added at once): a node's start throws on it (VoterSetHistory.addAt: the sets share no majority) and the node does not start",
                removed.len(),
                added.len()
            ),
        )
        .offset(offset)
        .evidence(serde_json::json!({
            "record": "VotersRecord",
            "voters": set,
            "previous_voters": prev,
            "removed": removed,
            "added": added,
            "metadata_log": h.log.path,
        }))
        .broker("KafkaRaftClient.initialize → KRaftControlRecordStateMachine reads the KRaft control records from the latest snapshot to the log end, and VoterSetHistory.addAt throws IllegalArgumentException on a voter set without an overlapping majority with the one before it (VoterSet.hasOverlappingMajority); nothing catches it: no controller or broker whose copy of the metadata log holds the record starts (a running follower fetching it stops its raft thread). The leader never writes such a change: AddRaftVoter and RemoveRaftVoter change one voter at a time")
        .remediation("keep every node's metadata log (cp -a) before anything restarts: a record no leader writes means the log was rewritten, copied from another cluster or written by a bug; compare the copies (klogscan history, kafka-dump-log.sh --cluster-metadata-decoder) and ask the Kafka community before editing anything"),
    )
}

/// The first partition record whose replica directories a node's replay refuses
/// (`replay::RefusedDirectories`): every controller loading the log stops there (its
/// replay of a committed record is fatal, `QuorumController`); a broker's metadata loader
/// hands the exception to its fault handler, which is fatal only on a node with the
/// controller role (`SharedServer`'s metadata loading fault handler), so a broker logs it
/// (`metadata-load-error-count`) and goes on without the record.
fn directories_rejected(h: &ClusterHistory, path: &str) -> Option<Finding> {
    let refused = &h.history.refused_directories;
    let first = refused.first()?;
    let topic = (h.history.topics.iter())
        .find(|t| t.topic_id == first.topic_id)
        .map(|t| t.topic.as_str())
        .unwrap_or("?");
    let n = refused.len();
    let which = format!("{}-{}", crate::escape::text(topic), first.partition);
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {}: a {} gives {which} {} replica directories for its {} replicas: a node replaying it throws ({}: PartitionRegistration takes one directory per replica, or none) — a controller stops, a broker skips the record{}",
                first.offset,
                first.record,
                first.directories,
                first.replicas,
                first.exception,
                if n > 1 { format!("; {} more such record(s) follow", n - 1) } else { String::new() }
            ),
        )
        .offset(first.offset)
        .evidence(serde_json::json!({
            "record": first.record,
            "topic": topic,
            "partition": first.partition,
            "replicas": first.replicas,
            "directories": first.directories,
            "java_exception": first.exception,
            "rejected_records": n,
            "metadata_log": path,
        }))
        .broker("PartitionRegistration refuses it (a PartitionRecord's directories through checkDirectories, a PartitionChangeRecord's through merge and the constructor): a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker's metadata loader hands it to its fault handler, fatal only with the controller role (SharedServer): a broker logs it (metadata-load-error-count) and goes on without the record, its image of the partition as before")
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: no controller writes such a record (PartitionChangeBuilder sets one directory per replica), so the log was rewritten or written by another tool; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
    )
}

/// The name of `topic_id` in `h`'s history (`?`: none), escaped.
fn topic_name(h: &ClusterHistory, topic_id: &crate::read::format::metadata::TopicId) -> String {
    let name = (h.history.topics.iter())
        .find(|t| t.topic_id == *topic_id)
        .map(|t| t.topic.as_str())
        .unwrap_or("?");
    crate::escape::text(name).into_owned()
}

/// "; N more such record(s) follow" when `n` > 1.
fn more(n: usize) -> String {
    if n > 1 {
        format!("; {} more such record(s) follow", n - 1)
    } else {
        String::new()
    }
}

/// The first partition record whose leader recovery state a node's replay refuses
/// (`replay::RefusedRecoveryState`: `LeaderRecoveryState.of` or `changeTo` throws): as for
/// replica directories, every controller loading the log stops there and a broker logs it
/// and goes on without the record.
fn recovery_state_rejected(h: &ClusterHistory, path: &str) -> Option<Finding> {
    let refused = &h.history.refused_recovery_states;
    let first = refused.first()?;
    let topic = topic_name(h, &first.topic_id);
    let which = format!("{topic}-{}", first.partition);
    let allowed = if first.record == "PartitionRecord" {
        "RECOVERED (0) or RECOVERING (1)"
    } else {
        "RECOVERED (0), RECOVERING (1) or -1 (unchanged)"
    };
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {}: a {} gives {which} the leader recovery state {}, not {allowed}: a node replaying it throws (IllegalArgumentException: not a valid leader recovery state) — a controller stops, a broker skips the record{}",
                first.offset, first.record, first.leader_recovery_state, more(refused.len())
            ),
        )
        .offset(first.offset)
        .evidence(serde_json::json!({
            "record": first.record,
            "topic": topic,
            "partition": first.partition,
            "leader_recovery_state": first.leader_recovery_state,
            "java_exception": "IllegalArgumentException",
            "rejected_records": refused.len(),
            "metadata_log": path,
        }))
        .broker("LeaderRecoveryState.of (a PartitionRecord, PartitionRegistration's constructor) or LeaderRecoveryState.changeTo (a PartitionChangeRecord, PartitionRegistration.merge) throws on any other value: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker's metadata loader hands it to its fault handler, fatal only with the controller role (SharedServer): a broker logs it (metadata-load-error-count) and goes on without the record, its image of the partition as before")
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: no controller writes such a value (PartitionChangeBuilder writes RECOVERING on an unclean election and RECOVERED once the leader says it recovered), so the log was rewritten or written by another tool; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
    )
}

/// The first broker registration record a node's replay throws on
/// (`replay::RefusedBrokerChange`): every controller loading the log stops there; brokers
/// skip a fence, unfence or registration change the same way (`ClusterDelta.replay`
/// throws too) but apply an `UnregisterBrokerRecord`.
fn broker_change_rejected(h: &ClusterHistory, path: &str) -> Option<Finding> {
    let refused = &h.history.refused_broker_changes;
    let first = refused.first()?;
    let registered = match first.registered_epoch {
        Some(e) => format!("broker {} is registered at broker epoch {e}", first.broker),
        None => format!("broker {} is not registered", first.broker),
    };
    let brokers = if first.brokers_skip {
        "a broker skips the record"
    } else {
        "a broker applies it"
    };
    let broker = if first.brokers_skip {
        "ClusterControlManager.replay (replayRegistrationChange) and the brokers' ClusterDelta.replay (getBrokerOrThrow) both need the broker registered at the record's broker epoch, and a BrokerRegistrationChangeRecord's Fenced and InControlledShutdown must be values of BrokerRegistrationFencingChange and BrokerRegistrationInControlledShutdownChange: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker's metadata loader hands it to its fault handler, fatal only with the controller role (SharedServer): a broker logs it (metadata-load-error-count) and goes on without the record, the broker's registration, fencing and controlled shutdown as before"
    } else {
        "ClusterControlManager.replay of an UnregisterBrokerRecord needs the broker registered at the record's broker epoch: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker applies it (ClusterDelta.replay checks nothing: whatever registration it holds of the id goes)"
    };
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {}: {} {} for broker {} at broker epoch {} — {registered}: a node replaying it throws ({}) — a controller stops, {brokers}{}",
                first.offset,
                if first.record.starts_with('U') { "an" } else { "a" },
                first.record,
                first.broker,
                first.epoch,
                first.reason,
                more(refused.len())
            ),
        )
        .offset(first.offset)
        .evidence(serde_json::json!({
            "record": first.record,
            "broker_id": first.broker,
            "broker_epoch": first.epoch,
            "registered_epoch": first.registered_epoch,
            "reason": first.reason,
            "brokers_skip": first.brokers_skip,
            "rejected_records": refused.len(),
            "metadata_log": path,
        }))
        .broker(broker)
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: the controller writes these records only for a registered broker at its epoch, so the log was rewritten, lost records or was written by another tool; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
    )
}

/// The first `TopicRecord` of a live topic's name (`replay::RefusedTopic`): every controller
/// loading the log stops there; brokers apply it.
fn topic_rejected(h: &ClusterHistory, path: &str) -> Option<Finding> {
    let refused = &h.history.refused_topics;
    let first = refused.first()?;
    let same = first.topic_id == first.live_id;
    let (id, live) = (encode_uuid(&first.topic_id), encode_uuid(&first.live_id));
    let what = if same {
        format!("with the topic id it is live under ({id})")
    } else {
        format!("under topic id {id} while it is live under {live}")
    };
    let broker = if same {
        "a broker applies it: its image takes a new topic of that id without the partitions it had (TopicsDelta.replay starts the topic's delta from an empty image), which the history does not follow (it keeps them)"
    } else {
        "a broker applies it: its image holds both topic ids, the name pointing to the new one"
    };
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {}: a TopicRecord creates {} {what}: a controller replaying it throws (\"Found duplicate TopicRecord for …\") and stops; {broker}{}",
                first.offset,
                crate::escape::text(&first.topic),
                more(refused.len())
            ),
        )
        .offset(first.offset)
        .evidence(serde_json::json!({
            "record": "TopicRecord",
            "topic": first.topic,
            "topic_id": id,
            "live_topic_id": live,
            "rejected_records": refused.len(),
            "metadata_log": path,
        }))
        .broker("ReplicationControlManager.replay throws on a TopicRecord whose name is live (no RemoveTopicRecord in between), whatever its id: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; brokers apply it (TopicsDelta.replay checks nothing)")
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: the controller creates a topic only under a name not in use (CreateTopics answers TOPIC_ALREADY_EXISTS), so the log was rewritten, lost a RemoveTopicRecord or was written by another tool; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
    )
}

/// The first partition record of a topic or partition the image does not hold
/// (`replay::RefusedTarget`): every controller loading the log stops there; a broker skips a
/// change of a live topic's missing partition, and keeps its image from before the whole
/// metadata delta holding a record of a topic id not live.
fn target_rejected(h: &ClusterHistory, path: &str) -> Option<Finding> {
    let refused = &h.history.refused_targets;
    let first = refused.first()?;
    let id = encode_uuid(&first.topic_id);
    let name = topic_name(h, &first.topic_id);
    let p = first.partition;
    let (what, exception, broker) = match (first.topic_live, first.removed_at) {
        (true, _) => (
            format!("partition {p} of topic {name} ({id}), which has no such partition"),
            "no partition with that id was found",
            "a broker skips the record (TopicDelta.replay: \"Unable to find partition\")",
        ),
        (false, Some(at)) => (
            format!("partition {p} of topic {name} ({id}), removed at metadata offset {at}"),
            "no topic with that ID was found",
            "what a broker does depends on which metadata delta its loader applied the removal in, which the log does not say (an earlier one: applying the delta holding this record throws and the broker's image stays as before it; the same one: the change brings the removed topic back into its image)",
        ),
        (false, None) => (
            format!("partition {p} of topic id {id}, which no TopicRecord created"),
            "no topic with that ID was found",
            "applying the metadata delta holding it throws on a broker, whose image stays as before that delta",
        ),
    };
    let kafka_broker = if first.topic_live {
        "ReplicationControlManager.replay throws on a PartitionChangeRecord of a partition its topic does not have: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker's TopicDelta.replay throws too, and its metadata loader hands that to its fault handler (MetadataBatchLoader.loadBatch; fatal only with the controller role, SharedServer): it logs it (metadata-load-error-count) and goes on without the record, the partition as absent as before"
    } else {
        "ReplicationControlManager.replay throws on a partition record of a topic id it does not hold: a controller's replay of a committed record is fatal (QuorumController, the process-terminating fault handler), so every controller loading the log stops there and the quorum has no active controller once they restart; a broker's TopicsDelta.getOrCreateTopicDelta starts the topic's delta from the image the delta began with: with no topic of that id there, applying the metadata delta holding the record throws (TopicDelta.apply reads the missing topic image; a PartitionChangeRecord's own replay throws first; MetadataBatchLoader.applyDeltaAndUpdate: \"Error generating new metadata image\"), the broker logs it (metadata-load-error-count) and keeps its image from before that delta, without every record loaded with it (which ones depends on how the loader grouped the batches); a removal applied in the same delta leaves that image holding the topic, and the change revives it"
    };
    Some(
        Finding::new(
            Kind::MetadataRecordRejected,
            TOPIC,
            0,
            format!(
                "metadata offset {}: a {} of {what}: a controller replaying it throws (\"{exception}\") and stops; {broker}{}",
                first.offset,
                first.record,
                more(refused.len())
            ),
        )
        .offset(first.offset)
        .evidence(serde_json::json!({
            "record": first.record,
            "topic_id": id,
            "partition": first.partition,
            "topic_live": first.topic_live,
            "topic_removed_at": first.removed_at,
            "rejected_records": refused.len(),
            "metadata_log": path,
        }))
        .broker(kafka_broker)
        .remediation("keep the controllers' metadata logs (cp -a) before anything restarts: the controller writes a partition record only for a topic and partition it holds (CreateTopics, CreatePartitions, elections and reassignments all start from the image), so the log was rewritten, lost the records that created them or was written by another tool; compare the controllers' copies (klogscan history, kafka-metadata-shell.sh) and ask the Kafka community before editing anything"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::leadership::{MetadataLog, QuorumEvent};

    fn history(sets: &[Option<&[i32]>]) -> ClusterHistory {
        let quorum = (sets.iter().enumerate())
            .map(|(i, v)| QuorumEvent {
                offset: 10 + i as i64,
                time: 0,
                raft_epoch: 1,
                control_type: "KRAFT_VOTERS".into(),
                leader_id: None,
                voters: v.map(<[i32]>::to_vec),
                kraft_version: None,
            })
            .collect();
        let log = MetadataLog {
            quorum,
            ..Default::default()
        };
        ClusterHistory::from_log(Default::default(), log)
    }

    /// One voter added or removed at a time passes; two at once is refused at the record
    /// (`VoterSet.hasOverlappingMajority`); a set that did not decode between them leaves
    /// the change unknown, and nothing is said.
    #[test]
    fn only_a_change_of_more_than_one_voter_is_refused() {
        let one_at_a_time = history(&[Some(&[1, 2, 3]), Some(&[1, 2, 3, 4]), Some(&[2, 3, 4])]);
        assert!(voter_change_rejected(&one_at_a_time).is_none());
        let replaced = history(&[Some(&[1, 2, 3]), Some(&[1, 2, 4])]);
        assert!(voter_change_rejected(&replaced).is_none());
        let two = history(&[Some(&[1, 2, 3]), Some(&[1]), Some(&[1, 5, 6])]);
        let f = voter_change_rejected(&two).expect("refused");
        assert_eq!((f.kind, f.offset), (Kind::MetadataRecordRejected, Some(11)));
        assert_eq!(f.evidence["removed"], serde_json::json!([2, 3]));
        let unknown = history(&[Some(&[1, 2, 3]), None, Some(&[3, 4, 5])]);
        assert!(voter_change_rejected(&unknown).is_none());
    }
}
