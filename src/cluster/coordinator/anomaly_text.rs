//! The `transaction_state_anomaly` finding of a rule-31 [`Anomaly`]
//! ([`super::history`]): its message, evidence (each record's place and decoded fields),
//! broker behaviour and remediation, per sub-id.

use super::TRANSACTION_STATE_TOPIC;
use super::history::{
    Anomaly, AnomalyKind, Content, HistoryRecord, TIMEOUT_MARGIN_MS, TxnSnapshot,
};
use crate::finding::{Finding, Kind};
use crate::read::format::txnlog::TxnState;
use serde_json::{Value, json};

/// The evidence member naming a `transaction_state_anomaly`'s sub-kind (written here, read
/// back only through [`is_anomaly`]).
const ANOMALY_KEY: &str = "anomaly";

/// Whether `f` is the `transaction_state_anomaly` of sub-kind `kind` this module wrote.
pub(super) fn is_anomaly(f: &crate::finding::Finding, kind: AnomalyKind) -> bool {
    f.kind == crate::finding::Kind::TransactionStateAnomaly
        && f.evidence
            .get(ANOMALY_KEY)
            .and_then(serde_json::Value::as_str)
            == Some(kind.id())
}

fn record_json(r: &HistoryRecord) -> Value {
    let mut j = json!({
        "partition": r.source.partition,
        "offset": r.source.offset,
        "segment": r.segment,
        "position": r.position,
        "timestamp": r.timestamp,
    });
    let Value::Object(m) = &mut j else {
        return j;
    };
    match &r.content {
        Content::Value(v) => {
            m.insert("state".into(), json!(v.state.name()));
            m.insert("producer_id".into(), json!(v.producer_id));
            m.insert("producer_epoch".into(), json!(v.producer_epoch));
            m.insert("previous_producer_id".into(), json!(v.previous_producer_id));
            m.insert("next_producer_id".into(), json!(v.next_producer_id));
            m.insert("timeout_ms".into(), json!(v.timeout_ms));
            if super::is_two_phase_commit(v.timeout_ms) {
                m.insert("two_phase_commit".into(), json!(true));
            }
            m.insert("last_update_ms".into(), json!(v.last_update_ms));
            m.insert("start_ms".into(), json!(v.start_ms));
            m.insert("value_version".into(), json!(v.version));
            m.insert(
                "client_transaction_version".into(),
                json!(v.client_transaction_version),
            );
        }
        Content::Tombstone => {
            m.insert("state".into(), json!(null));
            m.insert("tombstone".into(), json!(true));
        }
        Content::UnknownState(b) => {
            m.insert("state_byte".into(), json!(b));
        }
        Content::UnknownKey(v) => {
            m.insert("key_version".into(), json!(v));
        }
        Content::Undecodable(e) => {
            m.insert("error".into(), json!(e));
        }
        Content::UnknownValue { version, error } => {
            m.insert("value_version".into(), json!(version));
            m.insert("error".into(), json!(error));
        }
    }
    j
}

fn describe(r: &HistoryRecord) -> String {
    match &r.content {
        Content::Value(v) => format!(
            "{} (producer {} epoch {}) at offset {}",
            v.state, v.producer_id, v.producer_epoch, r.source.offset
        ),
        Content::Tombstone => format!("a tombstone at offset {}", r.source.offset),
        Content::UnknownState(b) => {
            format!("unknown state byte {b} at offset {}", r.source.offset)
        }
        Content::UnknownKey(v) => format!("key version {v} at offset {}", r.source.offset),
        Content::Undecodable(e) => {
            format!("an undecodable record at offset {} ({e})", r.source.offset)
        }
        Content::UnknownValue { version, error } => format!(
            "a value of version {version} at offset {} ({error})",
            r.source.offset
        ),
    }
}

/// The `transaction_state_anomaly` finding of `a`, on the `__transaction_state` partition
/// at the record's offset and batch position.
pub fn to_finding(a: &Anomaly) -> Finding {
    let cur = &a.current;
    let prev = a.previous.as_ref();
    let cur_v = value_of(cur);
    let (message, broker, remediation) = match a.kind {
        AnomalyKind::InvalidTransition if a.sent.is_some() => {
            let was = prev.map_or("nothing".to_string(), describe);
            let s = a.sent.as_deref().expect("matched: some");
            super::sent::invalid_texts(a, s, (&was, &describe(cur)))
        }
        AnomalyKind::InvalidTransition
        | AnomalyKind::EpochRegression
        | AnomalyKind::EpochStep
        | AnomalyKind::PidChange => transition_texts(a),
        AnomalyKind::RetriedAppend => retry_texts(a),
        AnomalyKind::FailedPrepareAborted => failed_prepare_texts(a),
        AnomalyKind::PrepareWithoutComplete | AnomalyKind::OngoingPastTimeout => time_texts(a),
        _ => record_texts(a),
    };
    let mut evidence = json!({
        ANOMALY_KEY: a.kind.id(),
        "transactional_id": a.transactional_id,
        "current": record_json(cur),
        "previous": prev.map(record_json),
        "path": cur.source.path,
    });
    if let (Some(t), Value::Object(m)) = (a.reference_time_ms, &mut evidence) {
        m.insert("reference_time_ms".into(), json!(t));
        m.insert("margin_ms".into(), json!(TIMEOUT_MARGIN_MS));
    }
    if let (Some(s), Value::Object(m)) = (a.sent.as_deref(), &mut evidence) {
        m.insert("markers_sent".into(), super::sent::evidence(s));
    }
    if let (AnomalyKind::LoadNeverCompletes, Value::Object(m)) = (a.kind, &mut evidence) {
        m.insert("load_fails_in".into(), json!("kafka_before_kafka_17941"));
    }
    let mut f = Finding::new(
        Kind::TransactionStateAnomaly,
        TRANSACTION_STATE_TOPIC,
        cur.source.partition,
        message,
    )
    .severity(a.kind.severity())
    .offset(cur.source.offset)
    .position(cur.position)
    .segment(cur.segment.clone())
    .evidence(evidence)
    .broker(broker);
    if let Some(v) = cur_v {
        f = f.producer(v.producer_id, v.producer_epoch);
    }
    if let Some(r) = remediation {
        f = f.remediation(r);
    }
    f
}

/// A finding's message, broker behaviour and remediation.
pub(super) type Texts = (String, &'static str, Option<String>);

/// The decoded value of a record, when it holds one.
fn value_of(r: &HistoryRecord) -> Option<TxnSnapshot> {
    match &r.content {
        Content::Value(v) => Some(*v),
        _ => None,
    }
}

/// The texts of the transition anomalies (invalid transition, epoch regression, producer id
/// change).
fn transition_texts(a: &Anomaly) -> Texts {
    let cur = &a.current;
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let prev = a.previous.as_ref();
    let cur_v = value_of(cur);
    let prev_v = prev.and_then(value_of);
    let prev_text = prev.map_or("nothing".to_string(), describe);
    let describe_cmd = crate::partition::state::text::describe_command(id);
    match a.kind {
        AnomalyKind::InvalidTransition => {
            let transient = cur_v
                .is_some_and(|v| matches!(v.state, TxnState::Dead | TxnState::PrepareEpochFence));
            (
                if transient {
                    format!(
                        "transactional id {id}: {} is a transient in-memory state the coordinator never writes (previous record: {prev_text})",
                        describe(cur)
                    )
                } else {
                    format!(
                        "transactional id {id}: {} after {prev_text} is not a valid transition (TransactionState.validPreviousStates)",
                        describe(cur)
                    )
                },
                "the coordinator loads the latest value of each id without checking transitions; at runtime it refuses an invalid transition (IllegalStateException), so an invalid pair on disk means records were lost (e.g. a truncated or compacted history) or written by a broken coordinator",
                Some(format!(
                    "check the id's current state with {describe_cmd}; compare with the data partitions' markers"
                )),
            )
        }
        AnomalyKind::EpochRegression => (
            format!(
                "transactional id {id}: producer {} epoch went down from {} to {} ({} after {prev_text})",
                cur_v.map_or(-1, |v| v.producer_id),
                prev_v.map_or(-1, |v| v.producer_epoch),
                cur_v.map_or(-1, |v| v.producer_epoch),
                describe(cur),
            ),
            "the coordinator loads the latest value; a lower epoch lets a fenced (zombie) producer instance with the older epoch write again",
            Some(format!(
                "check {describe_cmd}; look for producer_epoch_regression / zombie_write findings of this producer in the data partitions"
            )),
        ),
        AnomalyKind::EpochStep => (
            format!(
                "transactional id {id}: producer {} epoch moved from {} to {} ({} after {prev_text}), a step no transition of the coordinator takes",
                cur_v.map_or(-1, |v| v.producer_id),
                prev_v.map_or(-1, |v| v.producer_epoch),
                cur_v.map_or(-1, |v| v.producer_epoch),
                describe(cur),
            ),
            "the coordinator loads the latest value as it is; at runtime its transitions write fixed epochs (TransactionMetadata: prepareAddPartitions keeps the epoch, prepareIncrementProducerEpoch adds one, prepareAbortOrCommit adds one under TV2, a fence one more, prepareComplete copies the Prepare's), so another step means records were lost or written by something else",
            Some(format!(
                "check {describe_cmd}; compare with the epochs of this producer's batches and markers in the data partitions"
            )),
        ),
        // AnomalyKind::PidChange
        _ => (
            format!(
                "transactional id {id}: producer id changed from {} to {} ({} after {prev_text}) without epoch exhaustion, an Empty rotation or a previous/next producer id link",
                prev_v.map_or(-1, |v| v.producer_id),
                cur_v.map_or(-1, |v| v.producer_id),
                describe(cur),
            ),
            "the coordinator only hands out a new producer id on InitProducerId (state Empty) or when the epoch is exhausted (epoch ≥ 32766; TV2 links the ids through Previous/NextProducerId); transactions of the old producer id in the data partitions are no longer tracked",
            Some(format!(
                "check {describe_cmd}; open transactions of the old producer id in the data partitions are hanging"
            )),
        ),
    }
}

/// The texts of a retried append: the same transition written twice.
fn retry_texts(a: &Anomaly) -> Texts {
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let prev = a.previous.as_ref().map_or("nothing".to_string(), describe);
    (
        format!(
            "transactional id {id}: {} repeats {prev}: the coordinator wrote the same transition again after an append that reached the log but failed (NOT_ENOUGH_REPLICAS_AFTER_APPEND or REQUEST_TIMED_OUT, answered COORDINATOR_NOT_AVAILABLE)",
            describe(&a.current)
        ),
        "the coordinator retries an append that failed after reaching the leader's log: it re-queues a Complete* record (TransactionMarkerChannelManager.tryAppendToLog), and for a Prepare* record it resets the pending state, so the producer's retried EndTxn writes it again (TransactionStateManager.appendTransactionToLog); both copies are one transition, and the load keeps the later one",
        Some(format!(
            "nothing to repair; the failed append means {TRANSACTION_STATE_TOPIC}-{} was short of in-sync replicas (min.insync.replicas) or slow to replicate at the time: check its replicas then",
            a.current.source.partition
        )),
    )
}

/// The texts of a PrepareAbort after a Prepare* whose append failed
/// ([`AnomalyKind::FailedPrepareAborted`]).
fn failed_prepare_texts(a: &Anomaly) -> Texts {
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let prev = a.previous.as_ref().map_or("nothing".to_string(), describe);
    (
        format!(
            "transactional id {id}: {} follows {prev} with no Complete* between: that Prepare* reached the log but its append failed (answered COORDINATOR_NOT_AVAILABLE), so the coordinator went on from Ongoing and no marker of it was sent; the transaction was then aborted at a fenced epoch (it timed out, or a new producer instance's InitProducerId aborted it){}",
            describe(&a.current),
            a.sent
                .as_deref()
                .map(super::sent::both_readings)
                .unwrap_or_default()
        ),
        "a failed EndTxn append resets the coordinator's pending state (TransactionStateManager.appendTransactionToLog); with no retry from the producer, TransactionCoordinator.abortTimedOutTransactions (or handleInitProducerId) fences the epoch (prepareFenceProducerEpoch) and writes PrepareAbort: the markers are the abort's, and the load keeps the later record",
        Some(
            match a.sent.as_deref().and_then(super::sent::committed_data) {
                Some(parts) => format!(
                    "the transaction ended aborted in this log, but its data on {parts} was closed by a COMMIT and delivered as committed, whichever transaction's marker it was: check downstream for records the producer may have written again after its EndTxn failed; the failed append (if it was one) means {TRANSACTION_STATE_TOPIC}-{} was short of in-sync replicas or slow to replicate at the time",
                    a.current.source.partition
                ),
                None => format!(
                    "nothing to repair; the transaction ended aborted (its producer saw the EndTxn fail and did not retry, or stopped), so whatever it meant to commit was not. The failed append means {TRANSACTION_STATE_TOPIC}-{} was short of in-sync replicas (min.insync.replicas) or slow to replicate at the time: check its replicas then",
                    a.current.source.partition
                ),
            },
        ),
    )
}

/// The texts of the time-based anomalies (Prepare* or Ongoing past the timeout + margin).
fn time_texts(a: &Anomaly) -> Texts {
    let cur = &a.current;
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let cur_v = value_of(cur);
    let describe_cmd = crate::partition::state::text::describe_command(id);
    match a.kind {
        AnomalyKind::PrepareWithoutComplete => {
            let v = cur_v.unwrap_or(NO_VALUE);
            let age = a
                .reference_time_ms
                .unwrap_or(0)
                .saturating_sub(v.last_update_ms);
            (
                format!(
                    "transactional id {id}: last state {} (producer {} epoch {}) at offset {}, last updated {} ms before the reference time ({}): the markers were not all acknowledged (KAFKA-19999 class) or the completion was lost after they were (KAFKA-16352 class) — this log alone cannot tell which, the data partitions' markers can (transaction_stuck_in_prepare)",
                    v.state,
                    v.producer_id,
                    v.producer_epoch,
                    cur.source.offset,
                    age,
                    super::prepare_allowance(v.timeout_ms)
                ),
                "the coordinator retries the markers until every partition acknowledges them and re-sends them whenever it loads the partition; the transactional id cannot start a new transaction (CONCURRENT_TRANSACTIONS) and the data partitions' LSO stays at the transaction's first offset",
                Some(format!(
                    "if a data partition lacks the marker, find why the markers fail (a partition offline, a broker refusing WriteTxnMarkers: check the coordinator's logs); if every partition has it, a reload of this coordinator partition completes the transaction (brokers with the KAFKA-16352 fix, 3.8.0); then check {describe_cmd}; as a last resort abort the data partitions' transactions with `kafka-transactions.sh abort`"
                )),
            )
        }
        // AnomalyKind::OngoingPastTimeout
        _ => {
            let v = cur_v.unwrap_or(NO_VALUE);
            let started = if v.start_ms >= 0 {
                v.start_ms
            } else {
                v.last_update_ms
            };
            (
                format!(
                    "transactional id {id}: Ongoing (producer {} epoch {}) at offset {} since {} ms, {} ms before the reference time, beyond its timeout {} ms + {} ms margin: the coordinator is not aborting it",
                    v.producer_id,
                    v.producer_epoch,
                    cur.source.offset,
                    started,
                    a.reference_time_ms.unwrap_or(0).saturating_sub(started),
                    v.timeout_ms,
                    TIMEOUT_MARGIN_MS
                ),
                "the coordinator checks for timed-out transactions every transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s) and aborts them (fence: epoch + 1, then PrepareAbort); an Ongoing record this old means the coordinator was down, not the leader of this partition, or stuck",
                Some(format!(
                    "check {describe_cmd} and the coordinator's health; if the reference time is wrong, pass --now"
                )),
            )
        }
    }
}

/// The texts of the record-level anomalies (tombstone in progress, unknown state or key
/// version, undecodable record).
fn record_texts(a: &Anomaly) -> Texts {
    let cur = &a.current;
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let prev = a.previous.as_ref();
    let prev_text = prev.map_or("nothing".to_string(), describe);
    match a.kind {
        AnomalyKind::TombstoneWhileInProgress => (
            format!(
                "transactional id {id}: tombstone at offset {} while the id was {prev_text}: the coordinator forgot a transaction in progress",
                cur.source.offset
            ),
            "the coordinator only expires ids in Empty/CompleteCommit/CompleteAbort; after this tombstone nothing will write the transaction's markers, so its data partitions hang",
            Some(
                "find the hanging transactions of the old producer id in the data partitions (`kafka-transactions.sh find-hanging`) and abort them".to_string(),
            ),
        ),
        AnomalyKind::UnknownState => (
            format!(
                "transactional id {id}: {} (previous record: {prev_text})",
                describe(cur)
            ),
            LOAD_STOPS,
            Some(newer_or_corrupt("state")),
        ),
        AnomalyKind::LoadNeverCompletes => (
            format!(
                "{TRANSACTION_STATE_TOPIC} record at offset {} has {}, and every batch from there to the end of its segment (segment {}) holds only records of other key versions (a read of the load never crosses a segment): the load of this partition never completes on a coordinator before Kafka 4.0.0 (KAFKA-17941)",
                cur.source.offset,
                describe(cur),
                cur.segment
            ),
            "before Kafka 4.0.0 (and on the 3.9 branch before KAFKA-17941's backport, September 2025) the coordinator's load (TransactionStateManager.loadTransactionMetadata) moves past a batch only when it holds a transaction record of the current key version, and each read returns the batches of one segment (LocalLog.read); the batches that end this segment hold none, so it reads them again and again: the partition stays loading until its leadership moves, and every transactional id it owns gets COORDINATOR_LOAD_IN_PROGRESS (InitProducerId, AddPartitionsToTxn, EndTxn retry until they time out). Since 4.0.0 the load moves past every batch and skips these records with a warning",
            Some(
                "run Kafka 4.0.0 or later (or the broker version that wrote these records, a newer key version) on the partition's leader, or move the partition's leadership to a replica whose log does not end with them; do not delete the records by hand".to_string(),
            ),
        ),
        AnomalyKind::UnknownKeyVersion => (
            format!(
                "{TRANSACTION_STATE_TOPIC} record at offset {} has {}: not a transaction record",
                cur.source.offset,
                describe(cur)
            ),
            "the coordinator logs and skips records with an unknown key version on load",
            None,
        ),
        AnomalyKind::UnknownValueVersion => (
            format!("transactional id {id}: {}", describe(cur)),
            "the coordinator (Kafka 4.3 and later: TransactionLog.read gives UnknownValueVersion) logs a warning and skips a value of a version it does not read, and loads on: the id keeps the value read before it (a newer broker's update of the id, left by an aborted upgrade, is not applied)",
            None,
        ),
        AnomalyKind::UndecodableRecord if matches!(cur.content, Content::UnknownValue { .. }) => (
            format!("transactional id {id}: {}", describe(cur)),
            VALUE_VERSION_STOPS,
            Some(newer_or_corrupt("value version")),
        ),
        // AnomalyKind::UndecodableRecord
        _ => (
            format!(
                "transactional id {id}: {}",
                describe(cur)
            ),
            LOAD_STOPS,
            Some(
                if matches!(&cur.content, Content::Undecodable(e) if e.contains(super::decode::NEWER_OR_CORRUPT)) {
                    newer_or_corrupt("transaction version")
                } else {
                    "restore the partition from a healthy replica; check the segment's integrity findings".to_string()
                },
            ),
        ),
        }
}

/// Broker behaviour of a value of an unknown version where the loading release is not
/// known to be 4.3 or later.
const VALUE_VERSION_STOPS: &str = "before Kafka 4.3 the coordinator's reader throws on a value version it does not know (TransactionLog.readTxnRecordValue), and the load of this partition stops at this record (it logs \"Error loading transactions from transaction log\" and keeps what it loaded before): the ids written or updated only later are unknown to it or keep an older state. Kafka 4.3 and later (TransactionLog.read's UnknownValueVersion) log a warning, skip the record and load on; which release loads this copy is not known here (`verify --broker-version`, or a KRaft metadata log finalizing metadata.version 4.3-IV0, level 30, says it)";

/// The remediation of a value no known broker writes: its `field` (the state, the
/// transaction version) is one a newer broker may write.
fn newer_or_corrupt(field: &str) -> String {
    format!(
        "a newer broker's {field} or a corrupt value: run the broker version that wrote it, or restore the partition from a healthy replica"
    )
}

/// Broker behaviour of a record the coordinator's load cannot read
/// (`TransactionStateManager.loadTransactionMetadata`: its read loop's error handler logs the
/// error and returns the ids loaded so far, which the coordinator then serves).
const LOAD_STOPS: &str = "the coordinator's load of this partition stops at the first record it cannot read (it logs \"Error loading transactions from transaction log\" and keeps what it loaded before): it serves the transactional ids with the values read up to that record and ignores every later record of the partition, so ids written only later are unknown to it and ids updated later keep an older state (a transaction completed later is completed again or aborted at its timeout; a later producer id or epoch is forgotten)";

/// Placeholder fields for a time anomaly without a value (never built: time anomalies
/// come from values only).
const NO_VALUE: TxnSnapshot = TxnSnapshot {
    state: TxnState::Empty,
    producer_id: -1,
    previous_producer_id: -1,
    next_producer_id: -1,
    producer_epoch: -1,
    timeout_ms: 0,
    last_update_ms: 0,
    start_ms: -1,
    version: 0,
    client_transaction_version: 0,
};
