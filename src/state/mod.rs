//! Events → state → findings: a broker-like producer-state replay per partition
//! (`kafka-semantics.md` §1, §2, §8, §9).
//!
//! Two views are kept per producer id (§9):
//!
//! * the **recovery view** applies every batch as a broker's replication/recovery does
//!   (`AppendOrigin.REPLICATION`): nothing is rejected, epochs may regress, any marker closes
//!   the open transaction. It is what [`Replay::producers`] and [`Replay::finish`] report;
//! * the **audit view** evaluates each batch, *before* it is applied, against the rules the
//!   leader enforced when it first appended it (§1.5–1.6) and emits [`Finding`]s instead of
//!   rejecting. It simulates producer-id expiry (`producer.id.expiration.ms`, 1 day): a
//!   producer with no open transaction idle for longer was unknown to the leader, which then
//!   accepts any sequence.
//!
//! The rules and their false-positive controls are documented in `docs/findings.md`.

mod entry;
mod pidhash;
mod table;
mod text;
pub mod txnrec;

use crate::event::BatchEvent;
use crate::finding::{Finding, Kind, Severity};
use crate::format::Compression;
use entry::{BatchRef, Entry, OpenTxnState, RefKind, next_sequence, ranges_overlap};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// `producer.id.expiration.ms` default (1 day, since 3.4; KIP-854).
pub const PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

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
    /// `Some(true)` when the topic is known to be compacted (internal topics always are);
    /// `None` when unknown (then gaps are informational).
    pub compacted: Option<bool>,
    /// `__consumer_offsets`, `__transaction_state`, `__share_group_state`, ….
    pub internal: bool,
    /// `__cluster_metadata` (KRaft): producer-state rules are skipped.
    pub kraft_metadata: bool,
    /// Log start offset from `log-start-offset-checkpoint`, when known.
    pub log_start_offset: Option<i64>,
}

/// Tunables of the replay.
#[derive(Debug, Clone, Copy)]
pub struct ReplayOptions {
    /// An open transaction idle longer than this at end of log is hanging (default 15 min).
    pub hanging_after_ms: i64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            hanging_after_ms: 15 * 60 * 1000,
        }
    }
}

/// The last thing a producer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// An aborted transaction, as the `.txnindex` should record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    pub last_stable_offset: i64,
    /// Index of the segment holding the marker.
    pub segment: u32,
}

/// A transaction open at the end of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpenTxn {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub first_offset: i64,
    pub last_timestamp: i64,
}

/// Transaction statistics (klog's `txn-stat`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TxnStats {
    pub committed: u64,
    pub aborted: u64,
    pub open: u64,
    /// Markers that closed no transaction (empty transactions).
    pub empty_commits: u64,
    pub empty_aborts: u64,
    /// Per completed transaction: offsets spanned (marker offset − first offset + 1).
    pub sizes: Vec<u64>,
    /// Per completed transaction: marker timestamp − first batch timestamp, in ms.
    pub durations_ms: Vec<i64>,
}

/// What the replay concluded about a partition.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayOutcome {
    /// Sorted by producer id; empty when the replay was sealed without them
    /// ([`Replay::seal`] with `keep_producers` false).
    pub producers: Vec<ProducerState>,
    /// Number of producer ids seen (also when `producers` was not kept).
    pub producer_count: usize,
    pub log_start_offset: Option<i64>,
    /// Last batch's last offset + 1.
    pub log_end_offset: Option<i64>,
    /// First offset of the earliest open transaction (clamped to the log start), else the
    /// log end offset.
    pub last_stable_offset: Option<i64>,
    pub aborted: Vec<AbortedTxn>,
    pub open: Vec<OpenTxn>,
    pub txn_stats: TxnStats,
    /// Every transaction of the partition, one compact record each ([`txnrec`]).
    pub txns: Vec<txnrec::TxnRecord>,
}

/// A finished replay holding only what its conclusion needs (see [`Replay::seal`]).
pub struct SealedReplay {
    /// The replay, its producer table cut down to producers with an open transaction.
    replay: Replay,
    producers: Option<Vec<ProducerState>>,
    producer_count: usize,
}

impl SealedReplay {
    /// Classify the open transactions against `ref_time_ms` and conclude (as
    /// [`Replay::finish`] would have).
    pub fn finish(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        let SealedReplay {
            replay,
            producers,
            producer_count,
        } = self;
        let mut out = replay.conclude(ref_time_ms, findings);
        out.producers = producers.unwrap_or_default();
        out.producer_count = producer_count;
        out
    }
}

/// The producer-state replay of one partition.
pub struct Replay {
    ctx: PartitionContext,
    opts: ReplayOptions,
    producers: table::ProducerTable,
    /// Open transactions `(first offset, producer id)`, ordered by first offset (the LSO is
    /// the first). A producer has at most one; its entry's `txn` holds the same first offset,
    /// so closing one is a lookup, not a scan (many transactions open at once stay linear).
    open: BTreeSet<(i64, i64)>,
    /// The batch with the highest last offset so far (offset rules 5–6).
    prev: Option<BatchRef>,
    /// The last batch with a known partitionLeaderEpoch (rule 8).
    prev_leader_epoch: Option<BatchRef>,
    first_offset: Option<i64>,
    /// Highest last offset + 1.
    log_end: Option<i64>,
    newest_timestamp: Option<i64>,
    /// The cleaner has visibly been through this partition (delete-horizon bit, or fewer
    /// records than the offset range): the topic is compacted even if not declared.
    cleaned: bool,
    /// The once-per-partition `invalid_producer_fields` (info) for producer id -1 batches
    /// carrying an epoch/sequence was reported.
    benign_fields_reported: bool,
    batches: u64,
    aborted: Vec<AbortedTxn>,
    stats: TxnStats,
    txnrec: txnrec::TxnRecorder,
}

impl Replay {
    /// A replay of the partition described by `ctx`.
    pub fn new(ctx: PartitionContext, opts: ReplayOptions) -> Self {
        Replay {
            ctx,
            opts,
            producers: table::ProducerTable::default(),
            open: BTreeSet::new(),
            prev: None,
            prev_leader_epoch: None,
            first_offset: None,
            log_end: None,
            newest_timestamp: None,
            cleaned: false,
            benign_fields_reported: false,
            batches: 0,
            aborted: Vec::new(),
            stats: TxnStats::default(),
            txnrec: txnrec::TxnRecorder::default(),
        }
    }

    /// The partition being replayed.
    pub fn context(&self) -> &PartitionContext {
        &self.ctx
    }

    /// The newest batch/marker timestamp seen so far (a default reference time for
    /// [`Replay::finish`] when the analyst gives none).
    pub fn newest_timestamp(&self) -> Option<i64> {
        self.newest_timestamp
    }

    /// Number of batches applied.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Whether the partition is treated as compacted: declared so, internal, or (when
    /// undeclared) visibly cleaned by the log cleaner in the batches seen so far.
    pub fn treated_as_compacted(&self) -> bool {
        self.ctx.internal
            || self.ctx.compacted == Some(true)
            || (self.ctx.compacted.is_none() && self.cleaned)
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

    /// The producers' state as of now (for comparing with `.snapshot` files mid-replay),
    /// sorted by producer id.
    pub fn producers(&self) -> Vec<ProducerState> {
        let mut v: Vec<ProducerState> = self
            .producers
            .iter()
            .map(|e| producer_state(e.pid, e))
            .collect();
        v.sort_by_key(|p| p.producer_id);
        v
    }

    /// The producer-state entry of one producer id, if seen.
    pub fn producer(&self, producer_id: i64) -> Option<ProducerState> {
        self.producers
            .get(producer_id)
            .map(|e| producer_state(producer_id, e))
    }

    /// The aborted transactions recorded so far (what the `.txnindex` files should hold).
    pub fn aborted(&self) -> &[AbortedTxn] {
        &self.aborted
    }

    /// First offset of the earliest open transaction clamped up to the log start offset,
    /// else the log end offset (`None` before any batch).
    pub fn last_stable_offset(&self) -> Option<i64> {
        match self.open.first().map(|&(f, _)| f) {
            Some(f) => Some(match self.ctx.log_start_offset {
                Some(ls) if ls > f => ls,
                _ => f,
            }),
            None => self.log_end,
        }
    }

    /// End of log: classify open transactions against `ref_time_ms` and conclude.
    pub fn finish(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        self.seal(true).finish(ref_time_ms, findings)
    }

    /// The replay of a partition whose batches are all applied, reduced to what
    /// [`SealedReplay::finish`] needs: the entries of producers with an open transaction,
    /// the aborted transactions and statistics, and — with `keep_producers` — the
    /// producers' final state (what `producers` prints). A scan holds one of these per
    /// partition until every partition's reference time is known; the full producer table
    /// is freed here (1 000 partitions × 1 000 producer ids kept whole were 1 GB).
    pub fn seal(mut self, keep_producers: bool) -> SealedReplay {
        let producers = keep_producers.then(|| self.producers());
        let producer_count = self.producers.len();
        let mut kept = table::ProducerTable::default();
        for &(_, pid) in &self.open {
            if let Some(e) = self.producers.get(pid) {
                kept.insert(e.clone());
            }
        }
        self.producers = kept;
        SealedReplay {
            replay: self,
            producers,
            producer_count,
        }
    }

    /// The open transactions' findings and the outcome (producers left empty).
    fn conclude(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        let mut open: Vec<OpenTxn> = Vec::with_capacity(self.open.len());
        let mut open_records = Vec::with_capacity(self.open.len());
        let lso = self.last_stable_offset();
        for &(first, pid) in &self.open {
            let Some(e) = self.producers.get(pid) else {
                continue;
            };
            let Some(t) = e.txn.as_deref() else { continue };
            open_records.push(t.rec.record(pid, t.epoch, first, t.first_timestamp));
            open.push(OpenTxn {
                producer_id: pid,
                producer_epoch: e.epoch,
                first_offset: first,
                last_timestamp: e.last_timestamp(),
            });
            findings.push(self.open_txn_finding(pid, e, t, ref_time_ms, lso));
        }
        let mut stats = self.stats;
        stats.open = open.len() as u64;
        ReplayOutcome {
            producers: Vec::new(),
            producer_count: 0,
            log_start_offset: self.ctx.log_start_offset,
            log_end_offset: self.log_end,
            last_stable_offset: lso,
            aborted: self.aborted,
            open,
            txn_stats: stats,
            txns: self.txnrec.finish(open_records),
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
        let mut v = json!({
            "offset": r.base_offset,
            "last_offset": r.last_offset,
            "position": r.position,
            "segment": self.segment_name(r.segment),
            "type": r.kind.name(),
            "producer_id": r.producer_id,
            "producer_epoch": r.epoch,
            "timestamp": r.timestamp,
        });
        if let Value::Object(m) = &mut v {
            if r.is_marker() {
                m.insert("coordinator_epoch".into(), json!(r.coordinator_epoch));
            } else if r.producer_id >= 0 {
                m.insert("base_sequence".into(), json!(r.base_sequence));
                m.insert("last_sequence".into(), json!(r.last_sequence));
            }
            if r.leader_epoch >= 0 {
                m.insert("partition_leader_epoch".into(), json!(r.leader_epoch));
            }
        }
        v
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

    // ----- partition rules (5, 6, 8) -------------------------------------------------

    fn partition_rules(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        let cur = BatchRef::of(ev);
        if self.first_offset.is_none() {
            self.first_offset = Some(ev.base_offset);
        }
        // A legacy compressed wrapper carries its last offset only.
        let legacy_wrapper = ev.magic < 2 && ev.compression != Compression::None;
        if let Some(prev) = self.prev {
            let regress = if legacy_wrapper {
                ev.last_offset <= prev.last_offset
            } else {
                ev.base_offset <= prev.last_offset
            };
            if regress {
                let across = prev.segment != cur.segment;
                findings.push(
                    self.at(
                        Kind::OffsetRegression,
                        &cur,
                        format!(
                            "batch at offset {} does not start after the previous batch's last offset {}{}",
                            ev.base_offset,
                            prev.last_offset,
                            if across { " (across segments)" } else { "" }
                        ),
                    )
                    .evidence(json!({
                        "previous": self.batch_json(&prev),
                        "batch": self.batch_json(&cur),
                        "across_segments": across,
                        "overlap": prev.last_offset.saturating_sub(ev.base_offset).saturating_add(1),
                    }))
                    .broker(text::BROKER_OFFSET_REGRESSION)
                    .remediation(
                        "compare with the other replicas' copies of this partition; the overlapping batches are divergent history that truncation should have removed",
                    ),
                );
            } else if !legacy_wrapper
                && ev.base_offset > prev.last_offset.saturating_add(1)
                && !self.treated_as_compacted()
            {
                let missing = ev.base_offset - prev.last_offset - 1;
                let sev = if self.ctx.compacted == Some(false) {
                    Severity::Warning
                } else {
                    Severity::Info
                };
                findings.push(
                    self.at(
                        Kind::OffsetGap,
                        &cur,
                        format!(
                            "{missing} offset(s) missing between {} and {}",
                            prev.last_offset, ev.base_offset
                        ),
                    )
                    .severity(sev)
                    .evidence(json!({
                        "previous": self.batch_json(&prev),
                        "batch": self.batch_json(&cur),
                        "missing_offsets": missing,
                        "across_segments": prev.segment != cur.segment,
                        "compacted": self.ctx.compacted,
                    }))
                    .broker(text::BROKER_OFFSET_GAP),
                );
            }
        }
        if self.prev.is_none_or(|p| ev.last_offset > p.last_offset) {
            self.prev = Some(cur);
            self.log_end = Some(ev.last_offset.saturating_add(1));
        }
        if ev.partition_leader_epoch >= 0 {
            if let Some(p) = self.prev_leader_epoch
                && ev.partition_leader_epoch < p.leader_epoch
            {
                findings.push(
                    self.at(
                        Kind::LeaderEpochRegression,
                        &cur,
                        format!(
                            "partitionLeaderEpoch went down from {} to {} at offset {}",
                            p.leader_epoch, ev.partition_leader_epoch, ev.base_offset
                        ),
                    )
                    .evidence(json!({
                        "previous": self.batch_json(&p),
                        "batch": self.batch_json(&cur),
                        "previous_leader_epoch": p.leader_epoch,
                        "leader_epoch": ev.partition_leader_epoch,
                    }))
                    .broker(text::BROKER_LEADER_EPOCH)
                    .remediation(
                        "compare with leader-epoch-checkpoint and the other replicas: batches written under the older leader epoch after a newer one are divergent history",
                    ),
                );
            }
            self.prev_leader_epoch = Some(cur);
        }
    }

    // ----- producer fields (rules 18–19) ---------------------------------------------

    fn field_rules(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        if ev.magic < 2 {
            return;
        }
        let mut problems: Vec<&'static str> = Vec::new();
        let mut client = None;
        if ev.producer_id < 0 {
            if ev.producer_id != -1 {
                problems.push("producerId below -1");
            }
            // The group coordinator writes __consumer_offsets batches with producer id -1
            // and baseSequence 0 (seen in real broker data): internal topics are exempt.
            if ev.base_sequence != -1 && !self.ctx.internal {
                problems.push("baseSequence set without a producer id");
            }
            if ev.producer_epoch != -1 {
                problems.push("producerEpoch set without a producer id");
            }
            if ev.is_transactional {
                problems.push("transactional bit set without a producer id");
            }
        } else {
            if ev.producer_epoch == -1 {
                problems.push("producerEpoch -1 with a producer id");
            } else if ev.producer_epoch < -1 {
                problems.push("producerEpoch below -1 (epoch overflow, KAFKA-19367 class)");
            }
            if !ev.is_control && ev.base_sequence < 0 && !self.ctx.internal {
                problems.push("baseSequence < 0 on a data batch with a producer id");
                client = Some(text::CLIENT_INVALID_RECORD);
            }
            if !ev.is_control && ev.is_transactional && ev.producer_epoch == i16::MAX {
                problems.push(
                    "transactional data at epoch 32767 (epoch exhaustion, KAFKA-20090 class)",
                );
            }
        }
        if problems.is_empty() {
            return;
        }
        // Producer id -1 with epoch/sequence 0 is what some non-idempotent clients send
        // (kafkajs, seen in real broker data); brokers ignore it. Reported once per
        // partition, as information.
        let benign = ev.producer_id == -1
            && !ev.is_transactional
            && problems
                .iter()
                .all(|p| p.ends_with("without a producer id"));
        if benign {
            if self.benign_fields_reported {
                return;
            }
            self.benign_fields_reported = true;
        }
        let r = BatchRef::of(ev);
        let mut f = self
            .at(
                Kind::InvalidProducerFields,
                &r,
                format!(
                    "batch at offset {}: {}",
                    ev.base_offset,
                    problems.join("; ")
                ),
            )
            .evidence(json!({
                "batch": self.batch_json(&r),
                "problems": problems,
                "transactional": ev.is_transactional,
                "control": ev.is_control,
            }))
            .broker(text::BROKER_FIELDS);
        if benign {
            f = f.severity(Severity::Info);
            f.message.push_str(
                " (a non-idempotent client filling the producer fields; later such batches of this partition are not reported)",
            );
        }
        if ev.producer_id < 0 {
            f.producer_epoch = None;
        }
        if let Some(c) = client {
            f = f.client_error(c);
        }
        findings.push(f);
    }

    // ----- data batches ----------------------------------------------------------------

    fn apply_data(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        let pid = ev.producer_id;
        let cur = BatchRef::of(ev);
        let ts = ev.max_timestamp;
        let seq_rules = self.sequence_rules_apply();
        let compacted = self.treated_as_compacted();
        let Some(e) = self.producers.get(pid) else {
            // First sight: the history starts here, epoch and sequence unknown — accept.
            let mut e = Entry::new(ev);
            if record_data(&mut e, ev, cur, false, false) {
                self.open.insert((ev.base_offset, pid));
            }
            self.producers.insert(e);
            return;
        };
        // The rules read the entry in place; it is updated in place at the end (a clone per
        // batch plus `insert` replacing the old value were ≈ 3 % of a 1-thread scan, in
        // `memmove`).
        let gap_ms = if e.last_timestamp() >= 0 && ts >= 0 {
            Some(ts.saturating_sub(e.last_timestamp()))
        } else {
            None
        };
        let expired = e.txn.is_none() && gap_ms.is_some_and(|g| g >= PRODUCER_ID_EXPIRATION_MS);
        let epoch = ev.producer_epoch;
        let mut zombie = false;

        // Rules 12 and 13: epoch regression, zombie write.
        if epoch < e.epoch {
            findings.push(self.epoch_regression(ev, &cur, e, gap_ms, expired));
            if let Some(m) = e.last_marker()
                && m.epoch > epoch
            {
                zombie = true;
                let opens = ev.is_transactional && e.txn.is_none();
                let f = self
                    .at(
                        Kind::ZombieWrite,
                        &cur,
                        format!(
                            "producer {pid} wrote {} at epoch {epoch} after its {} marker at epoch {} (offset {}){}",
                            if ev.is_transactional { "transactional data" } else { "data" },
                            m.kind.name().to_uppercase(),
                            m.epoch,
                            m.base_offset,
                            if opens { "; it opens a transaction the coordinator will never close" } else { "" }
                        ),
                    )
                    .evidence(json!({
                        "marker": self.batch_json(&m),
                        "batch": self.batch_json(&cur),
                        "opens_transaction": opens,
                        "gap_ms": gap_ms,
                        "exceeds_producer_id_expiration": expired,
                        "producer_id_expiration_ms": PRODUCER_ID_EXPIRATION_MS,
                    }))
                    .broker(text::BROKER_ZOMBIE)
                    .client_error(text::CLIENT_ZOMBIE)
                    .remediation(if opens {
                        "if the transaction is still open at the end of the log it is hanging: abort it with kafka-transactions.sh abort (see the hanging_transaction finding); upgrade brokers past 2.4.1 (KAFKA-9144) and make sure the zombie producer instance is stopped".to_string()
                    } else {
                        "make sure the zombie producer instance is stopped; upgrade brokers past 2.4.1 (KAFKA-9144)".to_string()
                    });
                findings.push(f);
            }
        } else if !expired && seq_rules && (e.seq_known || epoch != e.epoch) {
            // Rules 14–16 (leader CLIENT checks), only while the leader knew the producer.
            // A producer first seen through a marker has a known epoch but no sequence yet:
            // data at another epoch must still start at 0 (rule 14); at the same epoch its
            // sequence cannot be judged.
            self.sequence_rules(ev, &cur, e, gap_ms, compacted, findings);
        }

        // Rules 25 and 26: transactions.
        if let Some(t) = e.txn.as_deref() {
            if !ev.is_transactional {
                findings.push(
                    self.at(
                        Kind::NonTransactionalWriteInTransaction,
                        &cur,
                        format!(
                            "producer {pid} wrote non-transactional data at offset {} while its transaction opened at offset {} is open; a broker reloading this log fails",
                            ev.base_offset, t.first.base_offset
                        ),
                    )
                    .evidence(json!({
                        "transaction_first_batch": self.batch_json(&t.first),
                        "batch": self.batch_json(&cur),
                    }))
                    .broker(text::BROKER_NON_TXN)
                    .client_error(text::CLIENT_NON_TXN)
                    .remediation(
                        "the broker cannot rebuild producer state past this batch: restore this replica from a healthy one, or delete the partition's data on this broker and let it re-replicate",
                    ),
                );
            } else if epoch > t.epoch {
                findings.push(
                    self.at(
                        Kind::TransactionEpochChange,
                        &cur,
                        format!(
                            "producer {pid}'s transaction opened at offset {} at epoch {} continues at epoch {epoch} without a marker",
                            t.first.base_offset, t.epoch
                        ),
                    )
                    .evidence(json!({
                        "transaction_first_batch": self.batch_json(&t.first),
                        "batch": self.batch_json(&cur),
                        "transaction_epoch": t.epoch,
                        "epoch": epoch,
                    }))
                    .broker(text::BROKER_TXN_EPOCH)
                    .remediation(
                        "the coordinator would have aborted the old transaction with a marker at the bumped epoch; check __transaction_state for this producer id",
                    ),
                );
            }
        }

        // Recovery view update.
        // TV2 evidence: data exactly at the epoch of a marker that bumped the epoch above
        // the transaction it closed, starting a fresh sequence.
        let late_after_marker = matches!(e.last_event(), Some(LastEvent::Marker { epoch: me, .. }) if me == epoch)
            && !e.marker_bumped
            && ev.is_transactional
            && e.last_sequence() >= 0
            && ev.base_sequence == next_sequence(e.last_sequence());
        let tv2 = matches!(e.last_event(), Some(LastEvent::Marker { epoch: me, .. }) if me == epoch)
            && e.marker_bumped
            && ev.base_sequence == 0;
        let Some(e) = self.producers.get_mut(pid) else {
            return; // present above; nothing removed it since
        };
        if tv2 {
            e.tv2 = Some(true);
        }
        if record_data(e, ev, cur, zombie, late_after_marker) {
            self.open.insert((ev.base_offset, pid));
        }
    }

    fn epoch_regression(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        gap_ms: Option<i64>,
        expired: bool,
    ) -> Finding {
        let pid = ev.producer_id;
        let prev = e.last_ref();
        let why = if expired {
            "more than producer.id.expiration.ms (1 day) after the producer's last activity: the leader had expired its state and accepted it"
        } else {
            "within producer.id.expiration.ms of the producer's last activity: the leader must have lost the producer's state (KAFKA-9144 on <= 2.4.0, lost snapshots) or this is divergent history"
        };
        let marker = ev.is_control;
        let mut f = self
            .at(
                Kind::ProducerEpochRegression,
                cur,
                format!(
                    "producer {pid} {} at offset {} has epoch {} below epoch {} seen at offset {}; {why}",
                    if marker { "marker" } else { "data" },
                    ev.base_offset,
                    ev.producer_epoch,
                    e.epoch,
                    prev.base_offset
                ),
            )
            .evidence(json!({
                "previous_epoch": e.epoch,
                "epoch": ev.producer_epoch,
                "previous": self.batch_json(&prev),
                "batch": self.batch_json(cur),
                "gap_ms": gap_ms,
                "exceeds_producer_id_expiration": expired,
                "producer_id_expiration_ms": PRODUCER_ID_EXPIRATION_MS,
            }))
            .broker(if marker {
                text::BROKER_EPOCH_MARKER
            } else {
                text::BROKER_EPOCH_DATA
            });
        if !marker {
            f = f.client_error(text::CLIENT_EPOCH);
        }
        f
    }

    fn sequence_rules(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        gap_ms: Option<i64>,
        compacted: bool,
        findings: &mut Vec<Finding>,
    ) {
        let pid = ev.producer_id;
        let epoch = ev.producer_epoch;
        let base = ev.base_sequence;
        let last = ev.last_sequence;
        if base < 0 {
            return; // rule 19, reported by field_rules
        }
        let last_seq = e.last_sequence();
        // Built only when a finding needs it: a JSON map per batch dominated the replay.
        let prev_json = || self.batch_json(&e.last_ref());
        if epoch != e.epoch || last_seq < 0 {
            // Rule 14: a new epoch (or the first data after an epoch-changing marker) must
            // start at 0.
            if base != 0 && !compacted {
                let why = if epoch != e.epoch {
                    format!("new epoch {epoch} (previous {})", e.epoch)
                } else {
                    format!("first data after the epoch-changing marker at epoch {epoch}")
                };
                findings.push(
                    self.at(
                        Kind::InvalidFirstSequence,
                        cur,
                        format!(
                            "producer {pid}: {why} starts at sequence {base} instead of 0 (offset {})",
                            ev.base_offset
                        ),
                    )
                    .evidence(json!({
                        "expected": 0,
                        "found": base,
                        "previous_epoch": e.epoch,
                        "epoch": epoch,
                        "previous": prev_json(),
                        "batch": self.batch_json(cur),
                        "gap_ms": gap_ms,
                    }))
                    .broker(text::BROKER_FIRST_SEQ)
                    .client_error(text::CLIENT_OUT_OF_ORDER),
                );
            }
            return;
        }
        // Same epoch, sequence known: rule 16 first (duplicates), then rule 15.
        let dup = e.cached_newest_first().find(|b| {
            (b.base_sequence == base && b.last_sequence == last)
                || ranges_overlap((b.base_sequence, b.last_sequence), (base, last))
        });
        if let Some(b) = dup {
            let exact = b.base_sequence == base && b.last_sequence == last;
            let orig = json!({
                "offset": b.base_offset,
                "last_offset": b.last_offset,
                "position": b.position,
                "segment": self.segment_name(b.segment),
                "base_sequence": b.base_sequence,
                "last_sequence": b.last_sequence,
            });
            findings.push(
                self.at(
                    Kind::DuplicateSequence,
                    cur,
                    format!(
                        "producer {pid} epoch {epoch}: sequences {base}..{last} at offset {} {} the batch at offset {} ({}..{})",
                        ev.base_offset,
                        if exact { "duplicate" } else { "overlap" },
                        b.base_offset,
                        b.base_sequence,
                        b.last_sequence
                    ),
                )
                .evidence(json!({
                    "exact": exact,
                    "original": orig,
                    "batch": self.batch_json(cur),
                    "gap_ms": gap_ms,
                }))
                .broker(text::BROKER_DUPLICATE)
                .client_error(if exact {
                    text::CLIENT_DUPLICATE_EXACT
                } else {
                    text::CLIENT_OUT_OF_ORDER
                })
                .remediation(
                    "consumers read these records twice; the leader had lost or expired the producer's state when the second copy was appended",
                ),
            );
            return;
        }
        let expected = next_sequence(last_seq);
        if base != expected {
            let gap = base as i64 - expected as i64;
            let mut f = self
                .at(
                    Kind::SequenceGap,
                    cur,
                    format!(
                        "producer {pid} epoch {epoch}: sequence {base} at offset {} where {expected} was expected ({})",
                        ev.base_offset,
                        if gap > 0 {
                            format!("{gap} sequence(s) missing")
                        } else {
                            format!("{} back", -gap)
                        }
                    ),
                )
                .evidence(json!({
                    "expected": expected,
                    "found": base,
                    "gap": gap,
                    "previous": prev_json(),
                    "batch": self.batch_json(cur),
                    "gap_ms": gap_ms,
                    "compacted": self.ctx.compacted,
                }))
                .broker(text::BROKER_SEQ_GAP)
                .client_error(text::CLIENT_OUT_OF_ORDER);
            if self.ctx.compacted.is_none() {
                // Compaction removes whole batches; undeclared topics are not proven.
                f = f.severity(Severity::Warning);
            }
            findings.push(f);
        }
    }

    // ----- markers -----------------------------------------------------------------------

    fn apply_marker(
        &mut self,
        ev: &BatchEvent,
        commit: bool,
        coordinator_epoch: i32,
        findings: &mut Vec<Finding>,
    ) {
        let pid = ev.producer_id;
        let cur = BatchRef::of(ev);
        let ts = ev.marker_timestamp;
        let compacted = self.treated_as_compacted();
        let known = self.producers.get(pid).cloned();
        // History starts at offset 0 (nothing deleted before it): a first-sight marker
        // really closes nothing.
        let history_complete = self.first_offset == Some(0);
        let mut e = match known {
            Some(e) => e,
            None => {
                let e = Entry::new(ev);
                if history_complete && !compacted {
                    findings.push(self.marker_without_txn(ev, &cur, None));
                }
                e
            }
        };
        let first_sight = e.last_event().is_none();
        let type_name = if commit { "COMMIT" } else { "ABORT" };

        if !first_sight {
            let gap_ms = if e.last_timestamp() >= 0 && ts >= 0 {
                Some(ts.saturating_sub(e.last_timestamp()))
            } else {
                None
            };
            let expired = e.txn.is_none() && gap_ms.is_some_and(|g| g >= PRODUCER_ID_EXPIRATION_MS);
            // Rule 12 / 21 (markers).
            if ev.producer_epoch < e.epoch {
                findings.push(self.epoch_regression(ev, &cur, &e, gap_ms, expired));
            }
            // Rule 22.
            if e.coordinator_epoch >= 0 && coordinator_epoch < e.coordinator_epoch {
                let prev = e.last_marker().unwrap_or(e.last_ref());
                findings.push(
                    self.at(
                        Kind::CoordinatorEpochRegression,
                        &cur,
                        format!(
                            "producer {pid} {type_name} marker at offset {} has coordinator epoch {coordinator_epoch} below {} of the marker at offset {}; brokers <= 2.4.0 cannot load this log",
                            ev.base_offset, e.coordinator_epoch, prev.base_offset
                        ),
                    )
                    .evidence(json!({
                        "previous_coordinator_epoch": e.coordinator_epoch,
                        "coordinator_epoch": coordinator_epoch,
                        "previous": self.batch_json(&prev),
                        "marker": self.batch_json(&cur),
                        "gap_ms": gap_ms,
                        "exceeds_producer_id_expiration": expired,
                    }))
                    .broker(text::BROKER_COORD_EPOCH)
                    .remediation(
                        "run brokers >= 2.4.1 / 2.5.0 (KAFKA-9144 fix) before restarting this replica; check for a zombie transaction coordinator",
                    ),
                );
            }
            // Rule 23 and its escalation (b).
            if e.txn.is_none() && !compacted {
                let conflict = match (e.last_event(), e.last_marker()) {
                    (
                        Some(LastEvent::Marker {
                            epoch, commit: c, ..
                        }),
                        Some(m),
                    ) if epoch == ev.producer_epoch && c != commit => Some(m),
                    _ => None,
                };
                // Under TV0/1 a later empty transaction at the same epoch looks the same:
                // only TV2 (or unknown TV) producers are escalated.
                let tv01 = e.tv2 == Some(false);
                if let Some(m) = conflict.filter(|_| !tv01) {
                    let mut f = self
                        .at(
                            Kind::ConflictingMarkers,
                            &cur,
                            format!(
                                "producer {pid} epoch {}: {type_name} at offset {} after {} at offset {} with no data in between{}",
                                ev.producer_epoch,
                                ev.base_offset,
                                m.kind.name().to_uppercase(),
                                m.base_offset,
                                if e.tv2.is_none() { " (transaction version not inferred)" } else { "" }
                            ),
                        )
                        .evidence(json!({
                            "previous_marker": self.batch_json(&m),
                            "marker": self.batch_json(&cur),
                            "transaction_version_2": e.tv2,
                        }))
                        .broker(text::BROKER_CONFLICT)
                        .remediation(
                            "check __transaction_state for this producer id: the transaction's outcome there tells which marker is right; consumers of this partition saw the first one",
                        );
                    if e.tv2.is_none() {
                        f = f.severity(Severity::Warning);
                    }
                    findings.push(f);
                } else {
                    let mut f = self.marker_without_txn(ev, &cur, Some(&e));
                    if let (Some(m), Value::Object(o)) = (conflict, &mut f.evidence) {
                        o.insert(
                            "previous_marker_of_other_type_at_same_epoch".into(),
                            self.batch_json(&m),
                        );
                        o.insert(
                            "note".into(),
                            json!("TV0/1 producer: a later empty transaction at the same epoch, not a conflict"),
                        );
                    }
                    findings.push(f);
                }
            }
        }

        // Recovery view: any accepted marker closes the open transaction.
        let mut bumped = false;
        let closed = e.txn.take();
        self.txnrec.close(
            closed.as_deref().map(|t| {
                t.rec
                    .record(pid, t.epoch, t.first.base_offset, t.first_timestamp)
            }),
            ev,
            commit,
            coordinator_epoch,
        );
        if let Some(t) = closed {
            let first = t.first.base_offset;
            self.open.remove(&(first, pid));
            // Rules 21/27 under TV2: both markers must be above the epoch of the data they
            // close. Below the producer's epoch it is already a `producer_epoch_regression`.
            let data_epoch = t.epoch.max(e.epoch);
            let not_bumped = e.tv2 == Some(true)
                && ev.producer_epoch <= data_epoch
                && ev.producer_epoch >= e.epoch;
            if not_bumped {
                // One such marker keeps the TV2 verdict (a lone anomaly); a second in a row
                // is a downgrade to TV0/1 mid-stream.
                let downgraded = e.tv2_not_bumped;
                findings.push(
                    self.at(
                        Kind::MarkerEpochNotBumped,
                        &cur,
                        format!(
                            "producer {pid} {type_name} marker at offset {} has epoch {}, not above epoch {data_epoch} of the transaction it closes (opened at offset {}); the producer was inferred to use transaction version 2{}",
                            ev.base_offset,
                            ev.producer_epoch,
                            t.first.base_offset,
                            if downgraded {
                                "; second such marker in a row: now inferred TV0/1 (transaction version downgraded mid-stream?)"
                            } else {
                                ""
                            }
                        ),
                    )
                    .evidence(json!({
                        "marker": self.batch_json(&cur),
                        "transaction_first_batch": self.batch_json(&t.first),
                        "transaction_epoch": t.epoch,
                        "data_epoch": data_epoch,
                        "marker_epoch": ev.producer_epoch,
                        "previous_marker": e.last_marker().map(|m| self.batch_json(&m)),
                        "transaction_version_2_before": true,
                        "transaction_version_2_after": !downgraded,
                    }))
                    .broker(text::BROKER_MARKER_NOT_BUMPED)
                    .remediation(
                        "check __transaction_state for this producer's transactional id (ClientTransactionVersion, epoch of the Complete record) and whether the transaction.version feature was downgraded; a delayed or replayed marker may have closed this transaction",
                    ),
                );
                if downgraded {
                    e.tv2 = Some(false);
                }
            }
            e.tv2_not_bumped = not_bumped;
            // Rule 27 under TV0/1: a COMMIT is written at the transaction's epoch; one above
            // it from a producer seen committing at its data's epoch is a switch to TV2
            // (4.0+ feature upgrade) or a COMMIT a TV0/1 coordinator would not write.
            if commit && e.tv2 == Some(false) && ev.producer_epoch > data_epoch {
                // The TV2 pattern is exactly one epoch up: then the producer is TV2 from here.
                let switched = ev.producer_epoch == t.epoch.saturating_add(1);
                findings.push(
                    self.at(
                        Kind::CommitEpochAboveData,
                        &cur,
                        format!(
                            "producer {pid} COMMIT marker at offset {} has epoch {}, above epoch {data_epoch} of the transaction it closes (opened at offset {}); the producer was inferred to use transaction version 0/1 (an earlier marker at its data's epoch): {}",
                            ev.base_offset,
                            ev.producer_epoch,
                            t.first.base_offset,
                            if switched {
                                "a switch to transaction version 2 mid-stream (Kafka 4.0+, normal from here on) or a COMMIT a TV0/1 coordinator does not write"
                            } else {
                                "not the TV2 pattern either (one epoch up): a COMMIT a TV0/1 coordinator does not write"
                            }
                        ),
                    )
                    .evidence(json!({
                        "marker": self.batch_json(&cur),
                        "transaction_first_batch": self.batch_json(&t.first),
                        "data_epoch": data_epoch,
                        "marker_epoch": ev.producer_epoch,
                        "previous_marker": e.last_marker().map(|m| self.batch_json(&m)),
                        "transaction_version_2_before": false,
                        "transaction_version_2_after": switched,
                    }))
                    .broker(text::BROKER_COMMIT_ABOVE_DATA)
                    .remediation(
                        "check the cluster's transaction.version feature history and __transaction_state for this producer's transactional id (ClientTransactionVersion): an upgrade explains it; otherwise find which EndTxn produced this COMMIT",
                    ),
                );
            }
            // TV inference (rule 27).
            if commit && ev.producer_epoch == t.epoch.saturating_add(1) {
                e.tv2 = Some(true);
            } else if ev.producer_epoch == t.epoch && !not_bumped {
                e.tv2 = Some(false);
            }
            bumped = ev.producer_epoch > t.epoch;
            let size = ev.base_offset.saturating_sub(first).saturating_add(1);
            self.stats.sizes.push(size.max(0) as u64);
            self.stats
                .durations_ms
                .push(ts.saturating_sub(t.first_timestamp));
            if commit {
                self.stats.committed += 1;
            } else {
                self.stats.aborted += 1;
                let lso = self
                    .open
                    .first()
                    .map_or(ev.base_offset.saturating_add(1), |&(f, _)| f);
                self.aborted.push(AbortedTxn {
                    producer_id: pid,
                    first_offset: first,
                    last_offset: ev.base_offset,
                    last_stable_offset: lso,
                    segment: ev.segment,
                });
            }
        } else if commit {
            self.stats.empty_commits += 1;
        } else {
            self.stats.empty_aborts += 1;
        }
        if ev.producer_epoch != e.epoch {
            e.clear_cache();
            e.epoch = ev.producer_epoch;
            e.seq_known = true;
        }
        e.coordinator_epoch = coordinator_epoch;
        e.record_marker(cur);
        e.marker_bumped = bumped;
        self.producers.insert(e);
    }

    fn marker_without_txn(&self, ev: &BatchEvent, cur: &BatchRef, e: Option<&Entry>) -> Finding {
        let type_name = if cur.kind == RefKind::Commit {
            "COMMIT"
        } else {
            "ABORT"
        };
        let previous = e.map(|e| self.batch_json(&e.last_ref()));
        self.at(
            Kind::MarkerWithoutTransaction,
            cur,
            format!(
                "producer {} {type_name} marker at offset {} (epoch {}) closes no open transaction",
                ev.producer_id, ev.base_offset, ev.producer_epoch
            ),
        )
        .evidence(json!({
            "marker": self.batch_json(cur),
            "previous": previous,
            "first_sight_of_producer": e.is_none(),
        }))
        .broker(text::BROKER_MARKER_NO_TXN)
    }

    fn open_txn_finding(
        &self,
        pid: i64,
        e: &Entry,
        t: &OpenTxnState,
        ref_time_ms: i64,
        lso: Option<i64>,
    ) -> Finding {
        let idle = ref_time_ms.saturating_sub(e.last_timestamp());
        let hanging = idle > self.opts.hanging_after_ms;
        let first = t.first.base_offset;
        let late = e.last_timestamp() > 0
            && idle > TRANSACTION_MAX_TIMEOUT_MS + LATE_TRANSACTION_BUFFER_MS;
        let cause = if t.zombie {
            Some(
                "opened by a zombie write after a higher-epoch marker (KAFKA-9144 pattern): the coordinator will never close it",
            )
        } else if t.late_after_marker {
            Some(
                "opened by data at the epoch of the previous marker continuing the old sequence: possibly a late produce request after EndTxn (KAFKA-12671 pattern), or a TV0/1 producer that stopped mid-transaction",
            )
        } else {
            None
        };
        let kind = if hanging {
            Kind::HangingTransaction
        } else {
            Kind::OpenTransaction
        };
        let mut f = self
            .at(
                kind,
                &t.first,
                format!(
                    "producer {pid} epoch {} has a transaction open since offset {first}, idle {} min at the reference time{}",
                    e.epoch,
                    idle / 60_000,
                    if hanging { "; the last stable offset is stuck there" } else { "" }
                ),
            )
            .producer(pid, e.epoch)
            .evidence(json!({
                "first_batch": self.batch_json(&t.first),
                "last_batch": self.batch_json(&e.last_ref()),
                "last_marker": e.last_marker().map(|m| self.batch_json(&m)),
                "producer_epoch": e.epoch,
                "transaction_epoch": t.epoch,
                "coordinator_epoch": e.coordinator_epoch,
                "last_timestamp": e.last_timestamp(),
                "reference_time_ms": ref_time_ms,
                "idle_ms": idle,
                "hanging_after_ms": self.opts.hanging_after_ms,
                "late_by_broker_metric": late,
                "last_stable_offset": lso,
                "root_cause": cause,
            }))
            .broker(if hanging {
                text::BROKER_HANGING
            } else {
                text::BROKER_OPEN
            });
        if hanging {
            f = f.remediation(format!(
                "confirm with `kafka-transactions.sh --bootstrap-server <broker> find-hanging --topic {} --partition {}` (or __transaction_state), then abort it: {}",
                self.ctx.topic,
                self.ctx.partition,
                text::abort_command(&self.ctx.topic, self.ctx.partition, first)
            ));
        }
        f
    }
}

/// The batch went through the log cleaner (or shows its traces).
fn is_cleaner_output(ev: &BatchEvent) -> bool {
    ev.delete_horizon
        || (ev.magic >= 2
            && !ev.is_control
            && ev.records_count >= 0
            && (ev.records_count as i64) < ev.last_offset.saturating_sub(ev.base_offset) + 1)
}

fn producer_state(pid: i64, e: &Entry) -> ProducerState {
    let last = e.last_cached();
    ProducerState {
        producer_id: pid,
        producer_epoch: e.epoch,
        coordinator_epoch: e.coordinator_epoch,
        last_sequence: last.map_or(-1, |b| b.last_sequence),
        last_offset: last.map_or(-1, |b| b.last_offset),
        offset_delta: last.map_or(0, |b| {
            i32::try_from(b.last_offset.saturating_sub(b.base_offset)).unwrap_or(i32::MAX)
        }),
        last_timestamp: e.last_timestamp(),
        current_txn_first_offset: e.txn.as_ref().map(|t| t.first.base_offset),
        last_event: e.last_event(),
        transaction_version_2: e.tv2 == Some(true),
    }
}

/// Recovery-view update for a data batch (`appendDataBatch`, REPLICATION origin) of
/// `e`'s producer. Returns whether the batch opens a transaction (the caller records it
/// in `Replay::open`).
fn record_data(
    e: &mut Entry,
    ev: &BatchEvent,
    cur: BatchRef,
    zombie: bool,
    late_after_marker: bool,
) -> bool {
    if ev.producer_epoch != e.epoch {
        e.clear_cache();
        e.epoch = ev.producer_epoch;
    }
    e.seq_known = true;
    e.record_data(cur);
    let opens = ev.is_transactional && e.txn.is_none();
    if let Some(t) = e.txn.as_deref_mut().filter(|_| ev.is_transactional) {
        t.rec.add(ev);
    }
    if opens {
        let first_ts = if ev.timestamp_type == crate::format::TimestampType::LogAppendTime {
            ev.max_timestamp
        } else {
            ev.base_timestamp
        };
        e.txn = Some(Box::new(OpenTxnState {
            first: cur,
            epoch: ev.producer_epoch,
            first_timestamp: first_ts,
            zombie,
            late_after_marker,
            rec: txnrec::OpenRecord::opened_by(ev),
        }));
    }
    e.marker_bumped = false;
    opens
}
