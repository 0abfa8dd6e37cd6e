//! Rule 31: anomalies in the transaction coordinator's own log.
//!
//! [`HistoryChecker`] is fed every `__transaction_state` record of one partition copy in
//! offset order (by the replay that builds the copy's model, `super::model`) and replays
//! each transactional id's history. Record-level anomalies are found as the records come
//! (`invalid_transition`, `retried_append`, `epoch_regression`, `pid_change`,
//! `tombstone_while_in_progress`, `unknown_state`, `unknown_key_version`,
//! `undecodable_record`); the time-based ones
//! (`prepare_without_complete`, `ongoing_past_timeout`) need the scan's reference time and
//! are computed from the latest record of each id by [`HistoryChecker::time_anomalies`].
//! `super::anomaly_text::to_finding` turns an [`Anomaly`] into a
//! `transaction_state_anomaly` finding.
//!
//! Compaction keeps, per key, a suffix of the history (the newest record of the cleaned
//! part and everything after it), so the first record of an id has no predecessor and
//! is not checked against one. A tombstone ends an id's history: the next record starts
//! a new one.

use super::Source;
use crate::cluster::txns::{CoordRecord, CoordValue, RecordProblem, UnreadBatch};
use crate::finding::{Kind, Severity};
use crate::read::format::txnlog::TxnState;
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
    /// The id's previous Prepare*/Complete* value written again (`CoordValue::repeats`): an
    /// append that failed after reaching the log, retried.
    RetriedAppend,
    /// A PrepareAbort at a fenced epoch after a Prepare* whose append failed after
    /// reaching the log (`crate::cluster::txns::input::supersedes_failed_prepare`): the
    /// transaction timed out or a new producer instance aborted it. A PrepareCommit whose
    /// COMMIT the data partitions hold is settled against it (`super::sent`): that
    /// EndTxn's, from the coordinator epoch that appended it, makes the pair an
    /// [`AnomalyKind::InvalidTransition`].
    FailedPrepareAborted,
    /// The producer epoch went down with the same producer id.
    EpochRegression,
    /// The producer epoch moved by a step no transition of the coordinator takes (same
    /// producer id; `TransactionMetadata`'s transitions).
    EpochStep,
    /// The producer id changed outside epoch exhaustion, an Empty rotation or the
    /// previous/next producer id links.
    PidChange,
    /// The latest state is Prepare* and older than timeout + margin (`super::prepare_limit_ms`):
    /// markers never delivered.
    PrepareWithoutComplete,
    /// The latest state is Ongoing and started longer than timeout + margin ago (never for a
    /// two-phase-commit transaction: `super::ongoing_limit_ms`).
    OngoingPastTimeout,
    /// A tombstone while a transaction was in progress.
    TombstoneWhileInProgress,
    /// A status byte outside 0..=7: the coordinator's load stops at this record.
    UnknownState,
    /// A key version other than 0: the coordinator skips the record.
    UnknownKeyVersion,
    /// A value version outside 0–1 on a copy loaded by Kafka 4.3 or later: the
    /// coordinator skips the record (before 4.3 it is an [`Self::UndecodableRecord`]).
    UnknownValueVersion,
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
            AnomalyKind::RetriedAppend => "retried_append",
            AnomalyKind::FailedPrepareAborted => "failed_prepare_aborted",
            AnomalyKind::EpochRegression => "epoch_regression",
            AnomalyKind::EpochStep => "epoch_step",
            AnomalyKind::PidChange => "pid_change",
            AnomalyKind::PrepareWithoutComplete => "prepare_without_complete",
            AnomalyKind::OngoingPastTimeout => "ongoing_past_timeout",
            AnomalyKind::TombstoneWhileInProgress => "tombstone_while_in_progress",
            AnomalyKind::UnknownState => "unknown_state",
            AnomalyKind::UnknownKeyVersion => "unknown_key_version",
            AnomalyKind::UnknownValueVersion => "unknown_value_version",
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
            AnomalyKind::UnknownKeyVersion
            | AnomalyKind::UnknownValueVersion
            | AnomalyKind::RetriedAppend
            | AnomalyKind::FailedPrepareAborted => Severity::Info,
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
    /// A value of a version the reader does not know, with the reader's message.
    UnknownValue { version: i16, error: String },
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
    /// The batch's partition leader epoch: the epoch of the coordinator that appended it
    /// (-1 unknown), which the markers it sends for the record carry.
    pub coordinator_epoch: i32,
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
    /// The COMMIT markers of the previous record's PrepareCommit the data partitions hold
    /// (a `failed_prepare_aborted` pair, settled against them by `super::sent`).
    pub sent: Option<Box<super::sent::Sent>>,
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

/// Whether `cur`'s epoch is one a transition from `prev` (same producer id, epoch not
/// lower) writes: `TransactionMetadata.prepareAddPartitions` keeps the epoch (Ongoing),
/// `prepareIncrementProducerEpoch` adds one (Empty, InitProducerId; or keeps it) but never
/// from an exhausted epoch (≥ [`EXHAUSTED_EPOCH`], `isProducerEpochExhausted`: it throws, and
/// `TransactionCoordinator.handleInitProducerId` rotates to a new producer id at epoch 0
/// instead, `prepareProducerIdRotation`;
/// `TransactionMetadataTest.testBumpEpochNotAllowedIfEpochsExhausted`),
/// `prepareAbortOrCommit` adds one under TV2 and keeps it before (PrepareCommit), a fence
/// adds one more (`prepareFenceProducerEpoch`: a PrepareAbort after Ongoing, +0 or +1 before
/// TV2, +1 or +2 under it, +0 under it from 32767; after Empty or a Complete* only TV2
/// aborts, +1), and
/// `prepareComplete` copies the Prepare's (Complete*). A step the coordinator never takes
/// means records were lost or written otherwise.
fn epoch_step_ok(prev: &TxnSnapshot, cur: &TxnSnapshot, tv2: bool) -> bool {
    use TxnState::*;
    let d = i32::from(cur.producer_epoch) - i32::from(prev.producer_epoch);
    match cur.state {
        Ongoing => d == 0,
        // Only InitProducerId writes Empty: the epochs past 32766 that Kafka does write (the
        // fence of a timeout abort, the TV2 EndTxn bump; KAFKA-20090, KAFKA-20310) are
        // Prepare*/Complete* values. Keeping the epoch stays legal at 32766: an Empty whose
        // append failed after reaching the log is written again at the same epoch.
        Empty => d == 0 || (d == 1 && prev.producer_epoch < EXHAUSTED_EPOCH),
        PrepareCommit => d == i32::from(tv2),
        PrepareAbort => match prev.state {
            // Since KAFKA-20090 (4.3) an abort at 32767 goes through unbumped:
            // `prepareFenceProducerEpoch` keeps Short.MaxValue and
            // `TransactionMetadata.prepareAbortOrCommit` lets a TV2 PrepareAbort there keep
            // it (`TransactionMetadataTest.testFenceProducerNotAllowedIfItWouldOverflow`).
            Ongoing | PrepareEpochFence if tv2 && prev.producer_epoch == i16::MAX => d == 0,
            Ongoing | PrepareEpochFence if tv2 => d == 1 || d == 2,
            Ongoing | PrepareEpochFence => d == 0 || d == 1,
            _ => tv2 && d == 1,
        },
        CompleteCommit | CompleteAbort => d == 0,
        Dead | PrepareEpochFence => true,
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
    /// `(partition dir, transactional id)` whose latest v1 value carried
    /// `ClientTransactionVersion` 2: a v0 value after it (written once `transaction.version`
    /// was downgraded, `TransactionLog.valueToBytes`) may still be a TV2 client's.
    tv2_ids: std::collections::BTreeSet<(String, String)>,
    /// `(partition dir, transactional id)` whose latest value is an Empty at epoch 0 under a
    /// producer id its previous value did not have (an InitProducerId rotation), with that
    /// previous producer id: the rotation's append may have failed after reaching the log
    /// (`TransactionStateManager.appendTransactionToLog`), leaving the coordinator at the
    /// exhausted value before it, whose next InitProducerId rotates again (any new producer
    /// id) but never returns to the old one.
    rotated_from: BTreeMap<(String, String), i64>,
    /// The copy's coordinator skips a value of an unknown version (Kafka 4.3 and later:
    /// `super::model::Replay::skip_unknown_value_versions`).
    value_versions_skipped: bool,
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
    /// [`LoadTail::tail`] when a later segment follows it: the load's read never crosses
    /// a segment (`LocalLog.read` returns the batches of one segment), so the batches of
    /// other key versions that end a segment stop it as surely as those that end the log
    /// (`TransactionStateManagerTest.testLoadTransactionMetadataContainingSegmentEndingWithEmptyBatch`
    /// builds that segment end; KAFKA-17941). Nothing read after it changes that.
    stalled: Option<usize>,
}

impl HistoryChecker {
    /// The copy's coordinator skips a value of an unknown version (Kafka 4.3 and later).
    pub(super) fn skip_unknown_value_versions(&mut self) {
        self.value_versions_skipped = true;
    }

    /// Feed one decoded record (records of a partition copy in offset order), found in
    /// segment `segment` at `source`; `retry`: its value repeats the id's previous one
    /// (a retried append, `CoordValue::repeats`).
    pub fn record(&mut self, r: &CoordRecord, segment: &str, source: Source, retry: bool) {
        let mut at = HistoryRecord {
            source,
            segment: segment.to_string(),
            position: r.position,
            timestamp: r.timestamp,
            coordinator_epoch: r.coordinator_epoch,
            content: Content::Tombstone,
        };
        let problem = r.problem.as_deref();
        if let (None, false, Some(i)) = (self.load.stalled, self.load.stopped, self.load.tail)
            && self.anomalies[i].current.segment != at.segment
        {
            self.load.stalled = Some(i);
        }
        // A skipped value (Kafka 4.3 and later) neither stops the load nor is read.
        let skipped_value = matches!(problem, Some(RecordProblem::ValueVersion { .. }))
            && self.value_versions_skipped;
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
                self.load.stopped |= problem.is_some() && !skipped_value;
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
            (Some(RecordProblem::ValueVersion { version, error }), _) => Content::UnknownValue {
                version: *version,
                error: error.clone(),
            },
            (Some(p), _) => Content::Undecodable(p.error().unwrap_or_default().to_string()),
            (None, None) => Content::Tombstone,
            (None, Some(v)) => Content::Value(TxnSnapshot::of(v)),
        };
        let slot = (at.source.path.clone(), id.clone());
        let prev = self.latest.get(&slot).cloned();
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
            Content::UnknownValue { .. } => {
                let kind = match skipped_value {
                    true => AnomalyKind::UnknownValueVersion,
                    false => AnomalyKind::UndecodableRecord,
                };
                self.push(kind, Some(id), prev, at);
                return;
            }
            Content::Tombstone => {
                let was = prev.as_ref().and_then(|p| match p.content {
                    Content::Value(v) => Some(v.state),
                    _ => None,
                });
                if was.is_some_and(TxnState::is_in_progress) {
                    self.push(
                        AnomalyKind::TombstoneWhileInProgress,
                        Some(id),
                        prev,
                        at.clone(),
                    );
                }
            }
            Content::Value(cur) => self.value_anomalies(&id, prev.as_ref(), &at, *cur, retry),
            Content::UnknownKey(_) => {}
        }
        self.latest.insert(slot, at);
    }

    /// Whether an Empty of `cur`'s new producer id may follow `p`, the id's previous value,
    /// of another producer id, without an exhausted epoch or a link between them. The
    /// coordinator hands out a new producer id only to an id it holds no state for, or on
    /// an exhausted epoch (`TransactionCoordinator.handleInitProducerId`: otherwise
    /// `prepareIncrementProducerEpoch` keeps the producer id;
    /// `TransactionCoordinatorTest.testInitProducerIdWithInvalidEpochAfterProducerIdRotation`).
    /// Its state may still differ from `p`: when `p` is an Empty at epoch 0 (a new id's first
    /// value, or a rotation's) whose append failed after reaching the log, the coordinator
    /// holds no state or the exhausted value before `p`, and rotates again — to any new
    /// producer id, never back to the rotated one.
    fn new_id_may_follow(
        &self,
        id: &str,
        at: &HistoryRecord,
        p: &TxnSnapshot,
        cur: &TxnSnapshot,
    ) -> bool {
        if p.state != TxnState::Empty || p.producer_epoch != 0 {
            return false;
        }
        let slot = (at.source.path.clone(), id.to_string());
        self.rotated_from.get(&slot) != Some(&cur.producer_id)
    }

    /// Remember (or forget) that `cur`, the id's value at `at`, rotated from `prev`'s
    /// producer id (see [`HistoryChecker::new_id_may_follow`]).
    fn note_rotation(
        &mut self,
        id: &str,
        at: &HistoryRecord,
        prev: Option<TxnSnapshot>,
        cur: &TxnSnapshot,
    ) {
        // Rotations are rare: the common record builds no key here.
        match prev {
            Some(p)
                if cur.state == TxnState::Empty
                    && cur.producer_epoch == 0
                    && p.producer_id != cur.producer_id =>
            {
                let slot = (at.source.path.clone(), id.to_string());
                self.rotated_from.insert(slot, p.producer_id);
            }
            _ if self.rotated_from.is_empty() => {}
            _ => {
                let slot = (at.source.path.clone(), id.to_string());
                self.rotated_from.remove(&slot);
            }
        }
    }

    /// The anomalies of value `cur` of `id` (record `at`) after `prev`, the id's previous
    /// record; `retry`: `cur` repeats the previous value (`CoordValue::repeats`), one
    /// transition written twice, which no transition rule reads as a second one.
    fn value_anomalies(
        &mut self,
        id: &str,
        prev: Option<&HistoryRecord>,
        at: &HistoryRecord,
        cur: TxnSnapshot,
        retry: bool,
    ) {
        let transient = matches!(cur.state, TxnState::Dead | TxnState::PrepareEpochFence);
        let prev_value = prev.and_then(|p| match p.content {
            Content::Value(v) => Some(v),
            _ => None,
        });
        let mut kinds = Vec::new();
        match prev_value {
            Some(_) if retry => kinds.push(AnomalyKind::RetriedAppend),
            Some(p) => {
                // The transition's version: a v1 value carries the EndTxn request's own
                // (`TransactionMetadata.completeTransitionTo` checks the new value's); a v0
                // value (a broker at `transaction.version` 0) carries none.
                let tv2 = cur.client_transaction_version >= 2
                    || (cur.version < 1 && p.client_transaction_version >= 2);
                // Two v0 values after a TV2 one: the client may still run TV2 (a
                // downgrade applies to the values written, not to a running producer's
                // requests): either version's steps.
                let slot = (at.source.path.clone(), id.to_string());
                let either = cur.version < 1 && p.version < 1 && self.tv2_ids.contains(&slot);
                let key = |v: &TxnSnapshot| (v.state, v.producer_id, v.producer_epoch);
                let failed =
                    crate::cluster::txns::input::supersedes_failed_prepare(key(&p), key(&cur), tv2);
                if failed {
                    kinds.push(AnomalyKind::FailedPrepareAborted);
                } else if transient || !valid_transition(p.state, cur.state, tv2) {
                    kinds.push(AnomalyKind::InvalidTransition);
                }
                // An Empty whose append failed after reaching the log
                // (`TransactionStateManager.appendTransactionToLog`: the coordinator keeps
                // its old state, epoch one lower): the still-current producer's next record
                // follows the old epoch — one below the Empty, or, a TV2 abort, at it.
                let failed_empty = p.state == TxnState::Empty
                    && (i32::from(cur.producer_epoch) == i32::from(p.producer_epoch) - 1
                        || (tv2
                            && cur.state == TxnState::PrepareAbort
                            && cur.producer_epoch == p.producer_epoch));
                let step_ok = |tv2: bool| epoch_step_ok(&p, &cur, tv2);
                if p.producer_id == cur.producer_id {
                    if failed_empty {
                        // Read as that failed append: no step to judge.
                    } else if cur.producer_epoch < p.producer_epoch {
                        kinds.push(AnomalyKind::EpochRegression);
                    } else if !failed
                        && !transient
                        && valid_transition(p.state, cur.state, tv2)
                        && !(step_ok(tv2) || (either && (step_ok(false) || step_ok(true))))
                    {
                        kinds.push(AnomalyKind::EpochStep);
                    }
                } else if !(p.producer_epoch >= EXHAUSTED_EPOCH
                    || cur.previous_producer_id == p.producer_id
                    || p.next_producer_id == cur.producer_id
                    || (cur.state == TxnState::Empty && self.new_id_may_follow(id, at, &p, &cur)))
                {
                    kinds.push(AnomalyKind::PidChange);
                }
            }
            None if transient => kinds.push(AnomalyKind::InvalidTransition),
            None => {}
        }
        self.note_rotation(id, at, prev_value, &cur);
        if cur.version >= 1 {
            let slot = (at.source.path.clone(), id.to_string());
            if cur.client_transaction_version >= 2 {
                self.tv2_ids.insert(slot);
            } else {
                self.tv2_ids.remove(&slot);
            }
        }
        for kind in kinds {
            self.push(kind, Some(id.to_string()), prev.cloned(), at.clone());
        }
    }

    /// At the end of a copy: `TransactionStateManager.loadTransactionMetadata` moves its
    /// read position past a batch only when the batch holds a record of the current key
    /// version, and reads again from there while a read returns bytes; a read returns the
    /// batches of one segment (`LocalLog.read`). When a segment (the log's last one, or one
    /// a later segment follows) ends with batches holding only records of other key
    /// versions (and no record the load fails on came before), the same read returns them
    /// forever: the load never completes. The first of those records' anomaly becomes
    /// [`AnomalyKind::LoadNeverCompletes`] — unless a batch whose records were not read
    /// (`unread`) may follow it.
    pub fn settle_load(&mut self, unread: &[UnreadBatch]) {
        let tail = self.load.tail.take();
        let stall = match self.load.stalled.take() {
            Some(i) => Some(i),
            None if !self.load.stopped => tail,
            None => None,
        };
        if let Some(i) = stall {
            let offset = self.anomalies[i].current.source.offset;
            if !unread.iter().any(|u| u.may_follow(offset)) {
                self.anomalies[i].kind = AnomalyKind::LoadNeverCompletes;
            }
        }
    }

    /// KAFKA-17941 (Kafka 4.0.0; on the 3.9 branch since its backport of September 2025):
    /// `loadTransactionMetadata` moves its read position past every batch, so the records of
    /// other key versions that end a log are skipped and the load completes: for a copy no
    /// release before it loads, the [`AnomalyKind::LoadNeverCompletes`] record is again one
    /// more [`AnomalyKind::UnknownKeyVersion`].
    pub fn load_completes_since_4_0(&mut self) {
        for a in &mut self.anomalies {
            if a.kind == AnomalyKind::LoadNeverCompletes {
                a.kind = AnomalyKind::UnknownKeyVersion;
            }
        }
    }

    /// Whether the copy's load never completes on a release before 4.0.0
    /// ([`AnomalyKind::LoadNeverCompletes`]).
    pub fn load_never_completes(&self) -> bool {
        (self.anomalies.iter()).any(|a| a.kind == AnomalyKind::LoadNeverCompletes)
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
            sent: None,
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
            let kind = match v.state {
                TxnState::PrepareCommit | TxnState::PrepareAbort
                    if now.saturating_sub(v.last_update_ms)
                        > super::prepare_limit_ms(v.timeout_ms) =>
                {
                    AnomalyKind::PrepareWithoutComplete
                }
                TxnState::Ongoing => {
                    let started = if v.start_ms >= 0 {
                        v.start_ms
                    } else {
                        v.last_update_ms
                    };
                    // A two-phase-commit transaction never times out.
                    let Some(limit) = super::ongoing_limit_ms(v.timeout_ms) else {
                        continue;
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
                sent: None,
            });
        }
        out
    }
}

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

    fn snap(state: TxnState, producer_id: i64, producer_epoch: i16) -> TxnSnapshot {
        TxnSnapshot {
            state,
            producer_id,
            previous_producer_id: -1,
            next_producer_id: -1,
            producer_epoch,
            timeout_ms: 60_000,
            last_update_ms: 0,
            start_ms: -1,
            version: 0,
            client_transaction_version: 0,
        }
    }

    /// `prepareIncrementProducerEpoch` bumps up to the exhausted epoch, never from it.
    #[test]
    fn an_init_producer_id_bump_stops_at_the_exhausted_epoch() {
        use TxnState::*;
        for prev in [Empty, CompleteCommit, CompleteAbort] {
            for tv2 in [false, true] {
                let ok = |from: i16, to: i16| {
                    epoch_step_ok(&snap(prev, 10, from), &snap(Empty, 10, to), tv2)
                };
                assert!(ok(EXHAUSTED_EPOCH - 1, EXHAUSTED_EPOCH), "{prev:?}");
                assert!(ok(EXHAUSTED_EPOCH, EXHAUSTED_EPOCH), "{prev:?}");
                assert!(!ok(EXHAUSTED_EPOCH, i16::MAX), "{prev:?}");
            }
        }
        // The TV2 bumps past 32766 that Kafka writes stay legal.
        let ongoing = snap(Ongoing, 10, EXHAUSTED_EPOCH);
        assert!(epoch_step_ok(
            &ongoing,
            &snap(PrepareCommit, 10, i16::MAX),
            true
        ));
        assert!(epoch_step_ok(
            &ongoing,
            &snap(PrepareAbort, 10, i16::MAX),
            true
        ));
        assert!(epoch_step_ok(
            &ongoing,
            &snap(PrepareAbort, 10, i16::MAX),
            false
        ));
        let prepared = snap(PrepareAbort, 10, i16::MAX);
        assert!(epoch_step_ok(
            &prepared,
            &snap(CompleteAbort, 10, i16::MAX),
            true
        ));
        let empty = snap(Empty, 10, EXHAUSTED_EPOCH);
        assert!(epoch_step_ok(
            &empty,
            &snap(PrepareAbort, 10, i16::MAX),
            true
        ));
    }

    /// KAFKA-20090 (4.3): a TV2 abort of an Ongoing transaction at 32767 keeps 32767.
    #[test]
    fn a_tv2_abort_at_the_last_epoch_keeps_it() {
        use TxnState::*;
        let ongoing = snap(Ongoing, 10, i16::MAX);
        assert!(epoch_step_ok(
            &ongoing,
            &snap(PrepareAbort, 10, i16::MAX),
            true
        ));
        let below = snap(Ongoing, 10, EXHAUSTED_EPOCH);
        assert!(!epoch_step_ok(
            &below,
            &snap(PrepareAbort, 10, EXHAUSTED_EPOCH),
            true
        ));
    }
}
