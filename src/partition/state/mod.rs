//! Events → state → findings: a broker-like producer-state replay per partition
//! (`ProducerStateManager`, `ProducerAppendInfo`).
//!
//! Two views are kept per producer id:
//!
//! * the **recovery view** applies every batch as a broker's replication/recovery does
//!   (`AppendOrigin.REPLICATION`): nothing is rejected, epochs may regress, any marker closes
//!   the open transaction. It is what [`Replay::producers`] and [`Replay::finish`] report;
//! * the **audit view** evaluates each batch, *before* it is applied, against the rules the
//!   leader enforced when it first appended it (`ProducerAppendInfo.checkProducerEpoch` /
//!   `checkSequence`) and emits [`Finding`]s instead of
//!   rejecting. It simulates producer-id expiry (`producer.id.expiration.ms`, 1 day): a
//!   producer with no open transaction idle for longer was unknown to the leader, which then
//!   accepts any sequence.
//!
//! The rules and their false-positive controls are documented in `docs/findings.md`.

mod data;
mod entry;
mod marker;
mod opentxns;
mod partition_rules;
pub(crate) mod pidhash;
mod seed;
mod table;
pub(crate) mod text;
pub(crate) use text::abort_command;
pub mod txnrec;

use crate::finding::evidence::BatchEvidence;
use crate::finding::{Finding, Kind};
use crate::partition::event::BatchEvent;
pub(crate) use entry::next_sequence;
use entry::{BatchRef, Entry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `producer.id.expiration.ms` default (1 day, since 3.4; KIP-854).
pub const PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

/// `ProducerStateManager.isProducerExpired`: a producer without an open transaction whose
/// last timestamp lies `producer.id.expiration.ms` (`expiration_ms`; default
/// [`PRODUCER_ID_EXPIRATION_MS`]) or more before `now`; `gap_ms` is that distance (`None`:
/// not known).
pub fn producer_expired_after(open_txn: bool, gap_ms: Option<i64>, expiration_ms: i64) -> bool {
    !open_txn && gap_ms.is_some_and(|g| g >= expiration_ms)
}

/// [`producer_expired_after`] at a snapshot load taken at `now_ms` (`loadFromSnapshot`), by a
/// broker whose producer state outlives a producer's last write by `expiration_ms`
/// (`recovery::producer_expiration_ms` of its version): a last timestamp of -1 (none) is
/// expired by any real clock; with no reference time (`now_ms` 0: no timestamp in the
/// log, no `--now`) no other producer is taken as expired.
pub fn expired_at_load(
    open_txn: bool,
    last_timestamp: i64,
    now_ms: i64,
    expiration_ms: i64,
) -> bool {
    let gap = if last_timestamp < 0 {
        Some(i64::MAX)
    } else {
        (now_ms > 0).then(|| now_ms.saturating_sub(last_timestamp))
    };
    !open_txn && gap.is_some_and(|g| g >= expiration_ms)
}

/// `transaction.max.timeout.ms` default (15 min).
pub const TRANSACTION_MAX_TIMEOUT_MS: i64 = 900_000;

/// `LATE_TRANSACTION_BUFFER_MS` of the broker's `PartitionsWithLateTransactionsCount` metric.
pub const LATE_TRANSACTION_BUFFER_MS: i64 = 300_000;

/// What the replay knows about the partition.
#[derive(Debug, Clone, Default)]
pub struct PartitionContext {
    pub topic: String,
    pub partition: i32,
    /// File names of the segments, indexed by `BatchEvent::segment`.
    pub segment_names: Vec<String>,
    /// `Some(true)` when the topic is known to be compacted (the coordinators' internal
    /// topics always are: `discover::layout::is_compacted_internal_topic`);
    /// `None` when unknown (then gaps are informational).
    pub compacted: Option<bool>,
    /// The topic's current policy is known to include `compact` (`--compacted`, the KRaft
    /// metadata log): more than `compacted`, which a past cleaning alone also sets.
    pub compact_policy: bool,
    /// `__consumer_offsets`, `__transaction_state`, `__share_group_state`, ….
    pub internal: bool,
    /// `__cluster_metadata` (KRaft): producer-state rules are skipped.
    pub kraft_metadata: bool,
    /// Log start offset from `log-start-offset-checkpoint`, when known.
    pub log_start_offset: Option<i64>,
}

/// Tunables of the replay.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// An open transaction idle longer than this at end of log is hanging (default 15 min).
    pub hanging_after_ms: i64,
    /// The `producer.id.expiration.ms` the replay holds a producer's idle times against:
    /// idle this long or more, the leader may have expired its state
    /// (`ProducerStateManager.removeExpiredProducers`) and taken any sequence or epoch
    /// after it. Default one day (`PRODUCER_ID_EXPIRATION_MS`); the scan lowers it per partition
    /// to the smallest dynamic value the cluster's KRaft metadata log set for the broker
    /// (`discover::compaction::Knowledge::producer_id_expiration`).
    pub producer_id_expiration_ms: i64,
    /// Where a `producer_id_expiration_ms` other than the default comes from (said in the
    /// evidence of the findings that read it); `None`: the default.
    pub producer_id_expiration_from: Option<&'static str>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            hanging_after_ms: 15 * 60 * 1000,
            producer_id_expiration_ms: PRODUCER_ID_EXPIRATION_MS,
            producer_id_expiration_from: None,
        }
    }
}

/// The last thing a producer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LastEvent {
    Data {
        offset: i64,
        epoch: i16,
        transactional: bool,
    },
    Marker {
        offset: i64,
        epoch: i16,
        commit: bool,
    },
}

/// Rebuilt state of one producer id (the columns of `kafka-transactions.sh
/// describe-producers`, plus what a `.snapshot` entry holds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProducerState {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// Coordinator epoch of the last marker, -1 if none.
    pub coordinator_epoch: i32,
    /// Last sequence of the last data batch at the current epoch, -1 if none.
    pub last_sequence: i32,
    /// Last offset of the last data batch, -1 if none.
    pub last_offset: i64,
    /// lastOffset − firstOffset of the last data batch.
    pub offset_delta: i32,
    /// maxTimestamp of the last data batch, or the last marker's timestamp.
    pub last_timestamp: i64,
    /// First offset of the open transaction.
    pub current_txn_first_offset: Option<i64>,
    pub last_event: Option<LastEvent>,
    /// Transaction version inferred from the epoch pattern (markers one epoch above the data).
    pub transaction_version_2: bool,
}

impl ProducerState {
    /// The offset of its last batch or marker (`-1`: none).
    pub fn last_activity(&self) -> i64 {
        match self.last_event {
            Some(LastEvent::Data { offset, .. } | LastEvent::Marker { offset, .. }) => {
                offset.max(self.last_offset)
            }
            None => self.last_offset,
        }
    }
}

/// An aborted transaction, as the `.txnindex` should record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    pub last_stable_offset: i64,
    /// Index of the segment holding the marker.
    pub segment: u32,
    /// The other `lastStableOffset` a follower writes when no other producer's transaction
    /// is open at the marker: the first offset of another producer's transaction starting
    /// after it in the same segment. A follower appends a fetched chunk at once
    /// (`UnifiedLog.appendAsFollower`): every transaction the chunk starts is ongoing when
    /// the completed one's `lastStableOffset` is taken (`ProducerStateManager.lastStableOffset`,
    /// the first ongoing transaction of another producer), so one that starts after the
    /// marker in the same chunk sets it; the leader and recovery append a marker alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follower_last_stable_offset: Option<i64>,
}

/// A transaction open at the end of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenTxn {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub first_offset: i64,
    pub last_timestamp: i64,
    /// For a transaction begun below the log start (its start known from the producer
    /// snapshot the replay was seeded from): its first data batch the log holds, where a
    /// producer-state rebuild without that snapshot opens it again
    /// (`ProducerAppendInfo`: an ongoing transaction starts at the first transactional
    /// batch replayed). `None` when the log holds its first batch, or none of its batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_held_offset: Option<i64>,
}

/// Transaction statistics (klog's `txn-stat`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TxnStats {
    pub committed: u64,
    pub aborted: u64,
    pub open: u64,
    /// Markers that closed no transaction (empty transactions).
    pub empty_commits: u64,
    pub empty_aborts: u64,
    /// Per completed transaction: offsets spanned (marker offset − first offset + 1).
    pub sizes: thin_vec::ThinVec<u64>,
    /// Per completed transaction: marker timestamp − first batch timestamp, in ms.
    pub durations_ms: thin_vec::ThinVec<i64>,
}

/// What the replay concluded about a partition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayOutcome {
    /// Sorted by producer id; empty when the replay was sealed without them
    /// (`Replay::seal` with `keep_producers` false).
    pub producers: Vec<ProducerState>,
    /// Number of producer ids seen (also when `producers` was not kept).
    pub producer_count: usize,
    /// Each producer's last activity (id, offset and timestamp of its last batch or
    /// marker), sorted by id: kept instead of `producers` for `verify`'s rebuild
    /// prediction (`Replay::seal`), empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_activity: Vec<LastActivity>,
    pub log_start_offset: Option<i64>,
    /// Last batch's last offset + 1 (the report's `log_end_offset` also knows the end of
    /// a log that holds no batch: its last segment's base).
    pub log_end_offset: Option<i64>,
    /// First offset of the earliest open transaction (clamped to the log start), else the
    /// log end offset.
    pub last_stable_offset: Option<i64>,
    pub aborted: thin_vec::ThinVec<AbortedTxn>,
    pub open: thin_vec::ThinVec<OpenTxn>,
    pub txn_stats: TxnStats,
    /// Every transaction of the partition, one compact record each (`txnrec`).
    pub txns: Vec<txnrec::TxnRecord>,
    /// The log cleaner has visibly been through the partition: a batch carries the delete
    /// horizon, or holds fewer records than its offset range (`MemoryRecords.filterTo`
    /// rebuilt or emptied it). What `Replay::treated_as_compacted` reads when the cleanup
    /// policy is not declared; later stages read it through
    /// `PartitionReport::compaction` so that they judge the bytes as the replay did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleaner_traces: bool,
    /// The producers whose first batch is transactional and starts above sequence 0, in
    /// a partition whose whole history is here ([`txnrec::FirstTxnBatch`]): what the
    /// cluster stage holds against the coordinator's transaction version. Empty on a
    /// partition treated as compacted.
    #[serde(default, skip_serializing_if = "thin_vec::ThinVec::is_empty")]
    pub first_txn_batches: thin_vec::ThinVec<txnrec::FirstTxnBatch>,
}

/// A finished replay holding only what its conclusion needs (see [`Replay::seal`]).
pub struct SealedReplay {
    /// The replay, its producer table cut down to producers with an open transaction.
    replay: Replay,
    producers: Option<Vec<ProducerState>>,
    producer_count: usize,
    last_activity: Vec<LastActivity>,
}

/// A producer's last batch or marker, as [`ReplayOutcome::last_activity`] keeps it: what a
/// recovery's snapshot loads decide about it (`ProducerStateManager.isProducerExpired`
/// reads its last timestamp; an open transaction keeps it, [`ReplayOutcome::open`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LastActivity {
    pub producer_id: i64,
    /// Offset of its last batch or marker ([`ProducerState::last_activity`]).
    pub offset: i64,
    /// Its last timestamp ([`ProducerState::last_timestamp`]).
    pub timestamp: i64,
}

impl SealedReplay {
    /// Whether the conclusion no longer depends on the reference time: no transaction is
    /// open, so [`Self::finish`] gives the same outcome and findings for any time and may
    /// run as soon as the partition is walked (its replay state is then dropped at once).
    pub fn settled(&self) -> bool {
        self.replay.open_txns.len() == 0
    }

    /// Classify the open transactions against `ref_time_ms` and conclude (as
    /// [`Replay::finish`] would have).
    pub fn finish(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        let SealedReplay {
            replay,
            producers,
            producer_count,
            last_activity,
        } = self;
        let mut out = replay.conclude(ref_time_ms, findings);
        out.producers = producers.unwrap_or_default();
        out.producer_count = producer_count;
        out.last_activity = last_activity;
        out
    }
}

/// The producer-state replay of one partition.
pub struct Replay {
    ctx: PartitionContext,
    opts: ReplayOptions,
    producers: table::ProducerTable,
    /// The open transactions' state, one slot per producer with a transaction open (its
    /// entry holds the slot), ordered by first offset (the LSO is the first): closing one
    /// is a lookup, not a scan (many transactions open at once stay linear).
    open_txns: opentxns::OpenTxns,
    /// The producers' last markers (their entries hold the slots).
    markers: entry::Markers,
    /// The batch with the highest last offset so far (offset rules 5–6).
    prev: Option<BatchRef>,
    /// The last batch with a known partitionLeaderEpoch (rule 8).
    prev_leader_epoch: Option<BatchRef>,
    first_offset: Option<i64>,
    /// Highest last offset + 1.
    log_end: Option<i64>,
    newest_timestamp: Option<i64>,
    /// The newest timestamp so far that the broker's clock wrote, not a client's: a
    /// transaction marker's (the partition leader stamps it,
    /// `KafkaApis.handleWriteTxnMarkersRequest` → `MemoryRecords.withEndTransactionMarker`)
    /// or a `LogAppendTime` batch's. Every batch after it was appended no earlier (on the
    /// leaders' clocks), whatever its records' CreateTime says.
    broker_clock: i64,
    /// The cleaner has visibly been through this partition (delete-horizon bit, or fewer
    /// records than the offset range): the topic is compacted even if not declared.
    cleaned: bool,
    /// The once-per-partition `invalid_producer_fields` (info) for producer id -1 batches
    /// carrying an epoch/sequence was reported.
    benign_fields_reported: bool,
    batches: u64,
    aborted: thin_vec::ThinVec<AbortedTxn>,
    /// The aborts that may still get a follower's `lastStableOffset` (indexes into
    /// `aborted`, in order), and their producer when they all have one: a transaction start
    /// of that producer resolves none of them, and is not made to look at them again (one
    /// transactional producer aborting alone would otherwise rescan a growing list).
    follower_waiting: Vec<usize>,
    follower_waiting_pid: Option<i64>,
    stats: TxnStats,
    txnrec: txnrec::TxnRecorder,
    /// The producer snapshot the replay was seeded from (`seed`), if any.
    seed: Option<Box<seed::Seed>>,
    /// [`ReplayOutcome::first_txn_batches`], as the batches come.
    first_txn_batches: thin_vec::ThinVec<txnrec::FirstTxnBatch>,
    /// The batches so far do not prove the partition's whole history: an offset gap or a
    /// damaged batch came before (a producer's earlier batches may be lost there).
    history_broken: bool,
}

impl Replay {
    /// [`producer_expired_after`] under this replay's `producer.id.expiration.ms`.
    fn producer_expired(&self, open_txn: bool, gap_ms: Option<i64>) -> bool {
        producer_expired_after(open_txn, gap_ms, self.opts.producer_id_expiration_ms)
    }

    /// `ev` (a finding's evidence object) with where the replay's
    /// `producer.id.expiration.ms` comes from, when not the default.
    fn with_expiration_source(&self, mut ev: Value) -> Value {
        if let (Some(from), Value::Object(m)) = (self.opts.producer_id_expiration_from, &mut ev) {
            m.insert("producer_id_expiration_from".into(), from.into());
        }
        ev
    }

    /// A replay of the partition described by `ctx`.
    pub fn new(ctx: PartitionContext, opts: ReplayOptions) -> Self {
        Replay {
            ctx,
            opts,
            producers: table::ProducerTable::default(),
            open_txns: opentxns::OpenTxns::default(),
            markers: entry::Markers::default(),
            prev: None,
            prev_leader_epoch: None,
            first_offset: None,
            log_end: None,
            newest_timestamp: None,
            broker_clock: i64::MIN,
            cleaned: false,
            benign_fields_reported: false,
            batches: 0,
            aborted: thin_vec::ThinVec::new(),
            follower_waiting: Vec::new(),
            follower_waiting_pid: None,
            stats: TxnStats::default(),
            txnrec: txnrec::TxnRecorder::default(),
            seed: None,
            first_txn_batches: thin_vec::ThinVec::new(),
            history_broken: false,
        }
    }

    /// The newest batch/marker timestamp seen so far (a default reference time for
    /// [`Replay::finish`] when the analyst gives none).
    #[cfg(any(test, feature = "testkit"))]
    pub fn newest_timestamp(&self) -> Option<i64> {
        self.newest_timestamp
    }

    /// Whether the partition is treated as compacted: declared so (the coordinators'
    /// internal topics always are), or (when undeclared) visibly cleaned by the log cleaner
    /// in the batches seen so far.
    pub fn treated_as_compacted(&self) -> bool {
        self.ctx.compacted == Some(true) || (self.ctx.compacted.is_none() && self.cleaned)
    }

    /// Apply one batch, in offset order (markers included), pushing findings.
    pub fn apply(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        self.batches += 1;
        if is_cleaner_output(ev) {
            self.cleaned = true;
        }
        self.partition_rules(ev, findings);
        let ts = entry::event_timestamp(ev);
        if ts >= 0 && self.newest_timestamp.is_none_or(|n| ts > n) {
            self.newest_timestamp = Some(ts);
        }
        // A damaged batch's bytes prove nothing: not the clock, not a whole history.
        let broker_stamped = if ev.is_control {
            ev.marker().is_some()
        } else {
            ev.timestamp_type == crate::read::format::TimestampType::LogAppendTime
        };
        if broker_stamped && ts >= 0 && ev.crc_valid {
            self.broker_clock = self.broker_clock.max(ts);
        }
        if !ev.crc_valid {
            self.history_broken = true;
        }
        if self.ctx.kraft_metadata {
            return;
        }
        self.field_rules(ev, findings);
        if ev.producer_id < 0 {
            return;
        }
        if ev.is_control {
            if let Some((commit, coordinator_epoch)) = ev.marker() {
                self.apply_marker(ev, commit, coordinator_epoch, findings);
            }
            // Empty control batches are skipped by Kafka; other/malformed control records
            // are the scan's invalid_batch findings.
        } else {
            self.apply_data(ev, findings);
        }
    }

    /// Whether a batch of producer `pid` was applied (a damaged batch's producer id seen
    /// before it is no phantom: `causes::DamageTracker`).
    pub(crate) fn knows_producer(&self, pid: i64) -> bool {
        self.producers.get(pid).is_some()
    }

    /// Producer `pid`'s epoch and last sequence (−1: no batch cached), when it has state.
    pub(crate) fn sequence_state(&self, pid: i64) -> Option<(i16, i32)> {
        self.producers
            .get(pid)
            .map(|e| (e.epoch, e.last_sequence()))
    }

    /// Whether producer `pid` has a transaction open (which its next marker closes).
    pub(crate) fn has_open_txn(&self, pid: i64) -> bool {
        self.producers.get(pid).is_some_and(|e| e.has_txn())
    }

    /// The producers' state as of now (for comparing with `.snapshot` files mid-replay),
    /// sorted by producer id.
    pub fn producers(&self) -> Vec<ProducerState> {
        let mut v: Vec<ProducerState> = self
            .producers
            .iter()
            .map(|e| {
                producer_state(
                    e.pid,
                    e,
                    &self.open_txns,
                    &self.markers,
                    self.seed.as_deref(),
                )
            })
            .collect();
        v.sort_by_key(|p| p.producer_id);
        v
    }

    /// First offset of the earliest open transaction clamped up to the log start offset,
    /// else the log end offset (`None` before any batch).
    /// Without a checkpointed log start, a seeded replay's floor is the first held
    /// segment's base offset (the log start the broker then has and bounds the LSO at,
    /// `UnifiedLog.updateLogStartOffset`).
    pub fn last_stable_offset(&self) -> Option<i64> {
        let floor = self.seed.as_ref().map(|s| s.floor);
        match self.open_txns.first_offset() {
            Some(f) => Some(match self.ctx.log_start_offset.or(floor) {
                Some(ls) if ls > f => ls,
                _ => f,
            }),
            None => self.log_end,
        }
    }

    /// End of log: classify open transactions against `ref_time_ms` and conclude.
    #[cfg(any(test, feature = "testkit"))]
    pub fn finish(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        self.seal(true, false).finish(ref_time_ms, findings)
    }

    /// The replay of a partition whose batches are all applied, reduced to what
    /// [`SealedReplay::finish`] needs: the entries of producers with an open transaction,
    /// the aborted transactions and statistics, and — with `keep_producers` — the
    /// producers' final state (what `producers` prints). A scan holds one of these per
    /// partition until every partition's reference time is known; the full producer table
    /// is freed here (1 000 partitions × 1 000 producer ids kept whole were 1 GB). With
    /// `keep_last_activity`, each producer's id and last offset too
    /// ([`ReplayOutcome::last_activity`]).
    pub fn seal(mut self, keep_producers: bool, keep_last_activity: bool) -> SealedReplay {
        let producers = keep_producers.then(|| self.producers());
        let last_activity = if keep_last_activity {
            let mut v: Vec<LastActivity> = self
                .producers
                .iter()
                .map(|e| {
                    let p = producer_state(
                        e.pid,
                        e,
                        &self.open_txns,
                        &self.markers,
                        self.seed.as_deref(),
                    );
                    LastActivity {
                        producer_id: p.producer_id,
                        offset: p.last_activity(),
                        timestamp: p.last_timestamp,
                    }
                })
                .collect();
            v.sort_unstable();
            v
        } else {
            Vec::new()
        };
        let producer_count = self.producers.len();
        let mut kept = table::ProducerTable::default();
        let mut kept_markers = entry::Markers::default();
        for (_, pid) in self.open_txns.by_first_offset() {
            if let Some(e) = self.producers.get(pid) {
                let mut e = e.clone();
                e.move_marker(&self.markers, &mut kept_markers);
                kept.insert(e);
            }
        }
        self.producers = kept;
        self.markers = kept_markers;
        SealedReplay {
            replay: self,
            producers,
            producer_count,
            last_activity,
        }
    }

    /// The open transactions' findings and the outcome (producers left empty).
    fn conclude(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        if self.cleaned && self.ctx.compacted.is_none() {
            // The log turned out cleaned (the policy unknown): what cleaning explains was
            // judged before the first trace as on a log nothing removes from — gaps in
            // offsets and sequences. From that trace on the rules read it as compacted;
            // the earlier findings are withdrawn here, once the walk is done with its
            // indexes into the list, so that the whole log has one reading whichever batch
            // shows the cleaner first (`Cleaner.cleanInto` removes whole batches anywhere
            // it ran).
            findings.retain(|f| !cleaning_explains(f.kind));
        }
        let open_order = self.open_txns.by_first_offset();
        let mut open: thin_vec::ThinVec<OpenTxn> =
            thin_vec::ThinVec::with_capacity(open_order.len());
        let mut open_records = Vec::with_capacity(open_order.len());
        let lso = self.last_stable_offset();
        for (first, pid) in open_order {
            let Some(e) = self.producers.get(pid) else {
                continue;
            };
            let Some(t) = e.txn().map(|i| self.open_txns.get(i)) else {
                continue;
            };
            open_records.push(t.rec.record(pid, t.epoch, first, t.first_timestamp));
            open.push(OpenTxn {
                producer_id: pid,
                producer_epoch: e.epoch,
                first_offset: first,
                last_timestamp: e.last_timestamp(&self.markers),
                first_held_offset: Some(t.rec.first_held).filter(|&h| h >= 0 && h != first),
            });
            findings.push(self.open_txn_finding(pid, e, t, ref_time_ms, lso));
        }
        // A cleaner seen after them may have removed earlier batches of their producers.
        let first_txn_batches = if self.treated_as_compacted() {
            thin_vec::ThinVec::new()
        } else {
            self.first_txn_batches
        };
        let mut stats = self.stats;
        stats.open = open.len() as u64;
        // Per completed transaction with data, in marker order: made from the records
        // here rather than kept in two more vectors during the replay.
        for r in self.txnrec.closed().iter().filter(|r| !r.is_empty()) {
            let size = r
                .marker_offset
                .saturating_sub(r.first_offset)
                .saturating_add(1);
            stats.sizes.push(size.max(0) as u64);
            stats
                .durations_ms
                .push(r.last_timestamp.saturating_sub(r.first_timestamp));
        }
        ReplayOutcome {
            producers: Vec::new(),
            producer_count: 0,
            last_activity: Vec::new(),
            log_start_offset: self.ctx.log_start_offset,
            log_end_offset: self.log_end,
            last_stable_offset: lso,
            aborted: self.aborted,
            open,
            txn_stats: stats,
            txns: self.txnrec.finish(open_records),
            cleaner_traces: self.cleaned,
            first_txn_batches,
        }
    }

    // ----- helpers -------------------------------------------------------------------

    fn segment_name(&self, segment: u32) -> String {
        self.ctx
            .segment_names
            .get(segment as usize)
            .cloned()
            .unwrap_or_else(|| format!("segment#{segment}"))
    }

    fn batch_json(&self, r: &BatchRef) -> Value {
        serde_json::to_value(self.batch_evidence(r)).unwrap_or(Value::Null)
    }

    /// Batch `r` as findings show it (typed: later stages read it back).
    fn batch_evidence(&self, r: &BatchRef) -> BatchEvidence {
        let data = !r.is_marker() && r.producer_id >= 0;
        BatchEvidence {
            offset: r.base_offset,
            last_offset: r.last_offset,
            position: r.position,
            segment: self.segment_name(r.segment),
            kind: r.kind.name().to_string(),
            producer_id: r.producer_id,
            producer_epoch: r.epoch,
            timestamp: r.timestamp,
            coordinator_epoch: r.is_marker().then_some(r.coordinator_epoch),
            base_sequence: data.then_some(r.base_sequence),
            last_sequence: data.then_some(r.last_sequence),
            partition_leader_epoch: (r.leader_epoch >= 0).then_some(r.leader_epoch),
        }
    }

    /// A finding about batch `r`, located at it.
    fn at(&self, kind: Kind, r: &BatchRef, message: String) -> Finding {
        let mut f = Finding::new(kind, &self.ctx.topic, self.ctx.partition, message)
            .offset(r.base_offset)
            .position(r.position)
            .segment(self.segment_name(r.segment));
        if r.producer_id >= 0 {
            f = f.producer(r.producer_id, r.epoch);
        }
        f
    }

    fn sequence_rules_apply(&self) -> bool {
        // Coordinator-written internal topics (transactional offset commits always carry
        // baseSequence 0) and compacted topics (whole batches removed) are exempt.
        !self.treated_as_compacted()
    }
}

/// The findings a log cleaner's work explains: removed batches leave offset gaps and
/// sequence jumps (`Cleaner.cleanInto` → `checkBatchRetention` keeps only a producer's
/// last batch), which a compacted log's rules do not report.
fn cleaning_explains(k: Kind) -> bool {
    matches!(
        k,
        Kind::OffsetGap | Kind::SequenceGap | Kind::InvalidFirstSequence | Kind::DuplicateSequence
    )
}

/// The batch went through the log cleaner (or shows its traces).
fn is_cleaner_output(ev: &BatchEvent) -> bool {
    ev.delete_horizon
        || (ev.magic >= 2
            && !ev.is_control
            && ev.records_count >= 0
            && (ev.records_count as i64) < ev.last_offset.saturating_sub(ev.base_offset) + 1)
}

fn producer_state(
    pid: i64,
    e: &Entry,
    txns: &opentxns::OpenTxns,
    markers: &entry::Markers,
    seed: Option<&seed::Seed>,
) -> ProducerState {
    let last = e.last_cached();
    ProducerState {
        producer_id: pid,
        producer_epoch: e.epoch,
        coordinator_epoch: seed::coordinator_epoch(e, markers, seed),
        last_sequence: last.map_or(-1, |b| b.last_sequence),
        last_offset: last.map_or(-1, |b| b.last_offset),
        offset_delta: last.map_or(0, |b| {
            i32::try_from(b.last_offset.saturating_sub(b.base_offset)).unwrap_or(i32::MAX)
        }),
        last_timestamp: e.last_timestamp(markers),
        current_txn_first_offset: e.txn().map(|i| txns.get(i).first_batch.base_offset),
        last_event: e.last_event(markers),
        transaction_version_2: e.tv2 == Some(true),
    }
}

#[cfg(test)]
mod tests;
