//! Rule 31: anomalies in the transaction coordinator's own log.
//!
//! [`HistoryChecker`] is fed every `__transaction_state` record of one partition copy in
//! offset order (by the replay that builds the copy's model, `super::model`) and replays
//! each transactional id's history. Record-level anomalies are found as the records come
//! (`invalid_transition`, `epoch_regression`, `pid_change`, `tombstone_while_in_progress`,
//! `unknown_state`, `unknown_key_version`, `undecodable_record`); the time-based ones
//! (`prepare_without_complete`, `ongoing_past_timeout`) need the scan's reference time and
//! are computed from the latest record of each id by [`HistoryChecker::time_anomalies`].
//! [`to_finding`] turns an [`Anomaly`] into a `transaction_state_anomaly` finding.
//!
//! Compaction keeps, per key, a suffix of the history (the newest record of the cleaned
//! part and everything after it), so the first record of an id has no predecessor and
//! is not checked against one. A tombstone ends an id's history: the next record starts
//! a new one.

use super::{Source, TRANSACTION_STATE_TOPIC};
use crate::cluster::txns::{CoordRecord, CoordValue, RecordProblem, UnreadBatch};
use crate::finding::{Finding, Kind, Severity};
use crate::read::format::txnlog::TxnState;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Epochs at or above this are exhausted (`Short.MAX_VALUE - 1`,
/// `TransactionMetadata.isProducerEpochExhausted`): the coordinator
/// rotates to a new producer id.
pub const EXHAUSTED_EPOCH: i16 = i16::MAX - 1;

/// The margin added to a transaction's timeout before the time-based anomalies fire:
/// 5 min, well above the coordinator's abort check interval (10 s) and the broker's own
/// late-transaction buffer.
pub const TIMEOUT_MARGIN_MS: i64 = crate::partition::state::LATE_TRANSACTION_BUFFER_MS;

/// The anomalies of rule 31 (`evidence.anomaly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AnomalyKind {
    /// A state not allowed after the previous one (`TransactionState.validPreviousStates`), or a transient state on disk.
    InvalidTransition,
    /// The producer epoch went down with the same producer id.
    EpochRegression,
    /// The producer id changed outside epoch exhaustion, an Empty rotation or the
    /// previous/next producer id links.
    PidChange,
    /// The latest state is Prepare* and older than timeout + margin: markers never delivered.
    PrepareWithoutComplete,
    /// The latest state is Ongoing and started longer than timeout + margin ago.
    OngoingPastTimeout,
    /// A tombstone while a transaction was in progress.
    TombstoneWhileInProgress,
    /// A status byte outside 0..=7: the coordinator's load stops at this record.
    UnknownState,
    /// A key version other than 0: the coordinator skips the record.
    UnknownKeyVersion,
    /// A key or value that does not decode, a null key or a null transactional id: the
    /// coordinator's load stops at this record.
    UndecodableRecord,
    /// The first record of another key version in the batches that end the log after the
    /// last batch holding a transaction record: the coordinator's load never completes.
    LoadNeverCompletes,
}

impl AnomalyKind {
    /// The stable snake_case sub-id.
    pub fn id(self) -> &'static str {
        match self {
            AnomalyKind::InvalidTransition => "invalid_transition",
            AnomalyKind::EpochRegression => "epoch_regression",
            AnomalyKind::PidChange => "pid_change",
            AnomalyKind::PrepareWithoutComplete => "prepare_without_complete",
            AnomalyKind::OngoingPastTimeout => "ongoing_past_timeout",
            AnomalyKind::TombstoneWhileInProgress => "tombstone_while_in_progress",
            AnomalyKind::UnknownState => "unknown_state",
            AnomalyKind::UnknownKeyVersion => "unknown_key_version",
            AnomalyKind::UndecodableRecord => "undecodable_record",
            AnomalyKind::LoadNeverCompletes => "load_never_completes",
        }
    }

    /// The severity of its finding.
    pub fn severity(self) -> Severity {
        match self {
            AnomalyKind::PrepareWithoutComplete
            | AnomalyKind::TombstoneWhileInProgress
            | AnomalyKind::UnknownState
            | AnomalyKind::UndecodableRecord
            | AnomalyKind::LoadNeverCompletes => Severity::Error,
            AnomalyKind::UnknownKeyVersion => Severity::Info,
            _ => Kind::TransactionStateAnomaly.default_severity(),
        }
    }
}

/// The decoded fields of one value (what the anomalies compare).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnSnapshot {
    pub state: TxnState,
    pub producer_id: i64,
    pub previous_producer_id: i64,
    pub next_producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub last_update_ms: i64,
    pub start_ms: i64,
    /// The value's schema version.
    pub version: i16,
    pub client_transaction_version: i16,
}

impl TxnSnapshot {
    /// The fields of a decoded value the rules compare.
    pub fn of(v: &CoordValue) -> TxnSnapshot {
        TxnSnapshot {
            state: v.state,
            producer_id: v.producer_id,
            previous_producer_id: v.previous_producer_id,
            next_producer_id: v.next_producer_id,
            producer_epoch: v.producer_epoch,
            timeout_ms: v.timeout_ms,
            last_update_ms: v.last_update_ms,
            start_ms: v.start_ms,
            version: v.version,
            client_transaction_version: v.client_transaction_version,
        }
    }
}

/// What a record held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A decoded value.
    Value(TxnSnapshot),
    /// A null value.
    Tombstone,
    /// A value whose status byte is unknown.
    UnknownState(i64),
    /// A key of another version.
    UnknownKey(i16),
    /// A key or value that does not decode.
    Undecodable(String),
}

/// One `__transaction_state` record: where it is and what it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRecord {
    /// Partition, offset, partition directory.
    pub source: Source,
    /// The segment file name.
    pub segment: String,
    /// The byte position of the batch holding the record.
    pub position: u64,
    /// The batch's max timestamp (the coordinator's append time).
    pub timestamp: i64,
    pub content: Content,
}

/// One rule-31 anomaly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// `None` when the key did not decode.
    pub transactional_id: Option<String>,
    /// The id's previous record (for transition anomalies).
    pub previous: Option<HistoryRecord>,
    /// The record the anomaly is about.
    pub current: HistoryRecord,
    /// The reference time used (time-based anomalies).
    pub reference_time_ms: Option<i64>,
}

/// `TransactionState.validPreviousStates` (`TransactionMetadata.scala`); `tv2` also allows PrepareAbort from Empty and
/// Complete* (TV2 newer trunk: an abort without a transaction in progress).
pub fn valid_transition(prev: TxnState, cur: TxnState, tv2: bool) -> bool {
    use TxnState::*;
    match cur {
        Empty => matches!(prev, Empty | CompleteCommit | CompleteAbort),
        Ongoing => matches!(prev, Ongoing | Empty | CompleteCommit | CompleteAbort),
        PrepareCommit => prev == Ongoing,
        PrepareAbort => {
            matches!(prev, Ongoing | PrepareEpochFence)
                || (tv2 && matches!(prev, Empty | CompleteCommit | CompleteAbort))
        }
        CompleteCommit => prev == PrepareCommit,
        CompleteAbort => prev == PrepareAbort,
        Dead => matches!(prev, Empty | CompleteCommit | CompleteAbort),
        PrepareEpochFence => prev == Ongoing,
    }
}

/// Replays `__transaction_state` records, per partition copy and transactional id.
#[derive(Debug, Clone, Default)]
pub struct HistoryChecker {
    /// `(partition dir, transactional id)` → the id's latest record (value or tombstone).
    pub latest: BTreeMap<(String, String), HistoryRecord>,
    /// The record-level anomalies found so far, in reading order.
    pub anomalies: Vec<Anomaly>,
    /// Where the load's read position stands: see [`HistoryChecker::settle_load`].
    load: LoadTail,
}

/// How far `TransactionStateManager.loadTransactionMetadata` gets through one copy.
#[derive(Debug, Clone, Default)]
struct LoadTail {
    /// The batch (segment, position) of the last record of the current key version.
    last_key_batch: Option<(String, u64)>,
    /// The anomaly of the first record of another key version in a later batch, with no
    /// other record after it.
    tail: Option<usize>,
    /// A record the load fails on was read: it ended there.
    stopped: bool,
}

impl HistoryChecker {
    /// Feed one decoded record (records of a partition copy in offset order), found in
    /// segment `segment` at `source`.
    pub fn record(&mut self, r: &CoordRecord, segment: &str, source: Source) {
        let mut at = HistoryRecord {
            source,
            segment: segment.to_string(),
            position: r.position,
            timestamp: r.timestamp,
            content: Content::Tombstone,
        };
        let problem = r.problem.as_deref();
        match problem {
            Some(RecordProblem::KeyVersion(_)) => {
                let batch = (at.segment.clone(), at.position);
                if self.load.tail.is_none() && self.load.last_key_batch.as_ref() != Some(&batch) {
                    self.load.tail = Some(self.anomalies.len());
                }
            }
            Some(RecordProblem::NullKey | RecordProblem::Key(_)) => {
                self.load.tail = None;
                self.load.stopped = true;
            }
            Some(_) | None => {
                self.load.tail = None;
                self.load.stopped |= problem.is_some();
                self.load.last_key_batch = Some((at.segment.clone(), at.position));
            }
        }
        match problem {
            Some(RecordProblem::NullKey) => {
                at.content = Content::Undecodable("null key".into());
                return self.push(AnomalyKind::UndecodableRecord, None, None, at);
            }
            Some(RecordProblem::Key(e)) => {
                at.content = Content::Undecodable(e.clone());
                return self.push(AnomalyKind::UndecodableRecord, None, None, at);
            }
            Some(RecordProblem::KeyVersion(version)) => {
                at.content = Content::UnknownKey(*version);
                return self.push(AnomalyKind::UnknownKeyVersion, None, None, at);
            }
            _ => {}
        }
        let id = r.transactional_id.clone();
        at.content = match (problem, &r.value) {
            (Some(RecordProblem::UnknownState { byte, .. }), _) => Content::UnknownState(*byte),
            (Some(p), _) => Content::Undecodable(p.error().unwrap_or_default().to_string()),
            (None, None) => Content::Tombstone,
            (None, Some(v)) => Content::Value(TxnSnapshot::of(v)),
        };
        let slot = (at.source.path.clone(), id.clone());
        let prev = self.latest.get(&slot).cloned();
        let prev_value = match &prev {
            Some(HistoryRecord {
                content: Content::Value(v),
                ..
            }) => Some(*v),
            _ => None,
        };
        match &at.content {
            Content::UnknownState(_) => {
                // The coordinator's load stops here; the id's history is unknown after it.
                self.push(AnomalyKind::UnknownState, Some(id), prev, at);
                return;
            }
            Content::Undecodable(_) => {
                self.push(AnomalyKind::UndecodableRecord, Some(id), prev, at);
                return;
            }
            Content::Tombstone => {
                if prev_value.is_some_and(|p| p.state.is_in_progress()) {
                    self.push(
                        AnomalyKind::TombstoneWhileInProgress,
                        Some(id),
                        prev,
                        at.clone(),
                    );
                }
            }
            Content::Value(cur) => {
                let cur = *cur;
                let transient = matches!(cur.state, TxnState::Dead | TxnState::PrepareEpochFence);
                if let Some(p) = prev_value {
                    let tv2 =
                        cur.client_transaction_version >= 2 || p.client_transaction_version >= 2;
                    if transient || !valid_transition(p.state, cur.state, tv2) {
                        self.push(
                            AnomalyKind::InvalidTransition,
                            Some(id.clone()),
                            prev.clone(),
                            at.clone(),
                        );
                    }
                    if p.producer_id == cur.producer_id {
                        if cur.producer_epoch < p.producer_epoch {
                            self.push(
                                AnomalyKind::EpochRegression,
                                Some(id.clone()),
                                prev.clone(),
                                at.clone(),
                            );
                        }
                    } else if !(p.producer_epoch >= EXHAUSTED_EPOCH
                        || cur.state == TxnState::Empty
                        || cur.previous_producer_id == p.producer_id
                        || p.next_producer_id == cur.producer_id)
                    {
                        self.push(
                            AnomalyKind::PidChange,
                            Some(id.clone()),
                            prev.clone(),
                            at.clone(),
                        );
                    }
                } else if transient {
                    self.push(
                        AnomalyKind::InvalidTransition,
                        Some(id.clone()),
                        prev.clone(),
                        at.clone(),
                    );
                }
            }
            Content::UnknownKey(_) => {}
        }
        self.latest.insert(slot, at);
    }

    /// At the end of a copy: `TransactionStateManager.loadTransactionMetadata` moves its
    /// read position past a batch only when the batch holds a record of the current key
    /// version, and reads again from there while a read returns bytes. When the log ends
    /// with batches holding only records of other key versions (and no record the load
    /// fails on came before), the same read returns them forever: the load never
    /// completes. The first of those records' anomaly becomes
    /// [`AnomalyKind::LoadNeverCompletes`] — unless a batch whose records were not read
    /// (`unread`) may follow it.
    pub fn settle_load(&mut self, unread: &[UnreadBatch]) {
        if let (Some(i), false) = (self.load.tail.take(), self.load.stopped) {
            let offset = self.anomalies[i].current.source.offset;
            if !unread.iter().any(|u| u.may_follow(offset)) {
                self.anomalies[i].kind = AnomalyKind::LoadNeverCompletes;
            }
        }
    }

    fn push(
        &mut self,
        kind: AnomalyKind,
        transactional_id: Option<String>,
        previous: Option<HistoryRecord>,
        current: HistoryRecord,
    ) {
        self.anomalies.push(Anomaly {
            kind,
            transactional_id,
            previous,
            current,
            reference_time_ms: None,
        });
    }

    /// The time-based anomalies of the latest record of every id whose partition copy
    /// has a reference time (`ref_time(path)`), in `(path, id)` order.
    pub fn time_anomalies(&self, ref_time: impl Fn(&str) -> Option<i64>) -> Vec<Anomaly> {
        let mut out = Vec::new();
        for ((path, id), rec) in &self.latest {
            let Content::Value(v) = &rec.content else {
                continue;
            };
            let Some(now) = ref_time(path) else { continue };
            let limit = i64::from(v.timeout_ms.max(0)).saturating_add(TIMEOUT_MARGIN_MS);
            let kind = match v.state {
                TxnState::PrepareCommit | TxnState::PrepareAbort
                    if now.saturating_sub(v.last_update_ms) > limit =>
                {
                    AnomalyKind::PrepareWithoutComplete
                }
                TxnState::Ongoing => {
                    let started = if v.start_ms >= 0 {
                        v.start_ms
                    } else {
                        v.last_update_ms
                    };
                    if now.saturating_sub(started) <= limit {
                        continue;
                    }
                    AnomalyKind::OngoingPastTimeout
                }
                _ => continue,
            };
            out.push(Anomaly {
                kind,
                transactional_id: Some(id.clone()),
                previous: None,
                current: rec.clone(),
                reference_time_ms: Some(now),
            });
        }
        out
    }
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
    }
}

/// The `transaction_state_anomaly` finding of `a`, on the `__transaction_state` partition
/// at the record's offset and batch position.
pub fn to_finding(a: &Anomaly) -> Finding {
    let cur = &a.current;
    let prev = a.previous.as_ref();
    let cur_v = value_of(cur);
    let (message, broker, remediation) = match a.kind {
        AnomalyKind::InvalidTransition | AnomalyKind::EpochRegression | AnomalyKind::PidChange => {
            transition_texts(a)
        }
        AnomalyKind::PrepareWithoutComplete | AnomalyKind::OngoingPastTimeout => time_texts(a),
        _ => record_texts(a),
    };
    let mut evidence = json!({
        "anomaly": a.kind.id(),
        "transactional_id": a.transactional_id,
        "current": record_json(cur),
        "previous": prev.map(record_json),
        "path": cur.source.path,
    });
    if let (Some(t), Value::Object(m)) = (a.reference_time_ms, &mut evidence) {
        m.insert("reference_time_ms".into(), json!(t));
        m.insert("margin_ms".into(), json!(TIMEOUT_MARGIN_MS));
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
type Texts = (String, &'static str, Option<String>);

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
                    "transactional id {id}: last state {} (producer {} epoch {}) at offset {}, last updated {} ms before the reference time (timeout {} ms + {} ms margin): the markers were never delivered (KAFKA-19999 class)",
                    v.state,
                    v.producer_id,
                    v.producer_epoch,
                    cur.source.offset,
                    age,
                    v.timeout_ms,
                    TIMEOUT_MARGIN_MS
                ),
                "the coordinator retries the markers until every partition acknowledges them and re-sends them whenever it loads the partition; the transactional id cannot start a new transaction (CONCURRENT_TRANSACTIONS) and the data partitions' LSO stays at the transaction's first offset",
                Some(format!(
                    "find why the markers fail (a partition offline, a broker refusing WriteTxnMarkers: check the coordinator's logs), then check {describe_cmd}; as a last resort abort the data partitions' transactions with `kafka-transactions.sh abort`"
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
                "{TRANSACTION_STATE_TOPIC} record at offset {} has {}, and every batch from there to the end of the log holds only records of other key versions: the coordinator's load of this partition never completes",
                cur.source.offset,
                describe(cur)
            ),
            "the coordinator's load (TransactionStateManager.loadTransactionMetadata) moves past a batch only when it holds a transaction record of the current key version; the batches that end this log hold none, so it reads them again and again: the partition stays loading until its leadership moves, and every transactional id it owns gets COORDINATOR_LOAD_IN_PROGRESS (InitProducerId, AddPartitionsToTxn, EndTxn retry until they time out)",
            Some(
                "run the broker version that wrote these records (a newer key version), or move the partition's leadership to a replica whose log does not end with them; do not delete the records by hand".to_string(),
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

/// The remediation of a value no known broker writes: its `field` (the state, the
/// transaction version) is one a newer broker may write.
fn newer_or_corrupt(field: &str) -> String {
    format!("a newer broker's {field} or a corrupt value: run the broker version that wrote it, or restore the partition from a healthy replica")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_table() {
        use TxnState::*;
        assert!(valid_transition(Ongoing, PrepareCommit, false));
        assert!(!valid_transition(Empty, PrepareCommit, false));
        assert!(!valid_transition(Empty, PrepareAbort, false));
        assert!(valid_transition(Empty, PrepareAbort, true));
        assert!(valid_transition(CompleteAbort, PrepareAbort, true));
        assert!(!valid_transition(PrepareCommit, CompleteAbort, true));
        assert!(valid_transition(PrepareEpochFence, PrepareAbort, false));
        assert!(valid_transition(CompleteCommit, Empty, false));
        assert!(!valid_transition(Ongoing, Empty, false));
    }
}
