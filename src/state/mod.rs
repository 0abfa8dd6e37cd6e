//! Events → state → findings: a broker-like producer-state replay per partition
//! (`kafka-semantics.md` §1, §2, §8, §9).
//!
//! OWNER: state helper. The public API below is the contract with `scan`; the bodies are
//! placeholders.

use crate::event::BatchEvent;
use crate::finding::Finding;
use serde::Serialize;

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
    /// Sorted by producer id.
    pub producers: Vec<ProducerState>,
    pub log_start_offset: Option<i64>,
    /// Last batch's last offset + 1.
    pub log_end_offset: Option<i64>,
    /// First offset of the earliest open transaction (clamped to the log start), else the
    /// log end offset.
    pub last_stable_offset: Option<i64>,
    pub aborted: Vec<AbortedTxn>,
    pub open: Vec<OpenTxn>,
    pub txn_stats: TxnStats,
}

/// The producer-state replay of one partition.
pub struct Replay {
    ctx: PartitionContext,
    opts: ReplayOptions,
}

impl Replay {
    pub fn new(ctx: PartitionContext, opts: ReplayOptions) -> Self {
        Replay { ctx, opts }
    }

    pub fn context(&self) -> &PartitionContext {
        &self.ctx
    }

    /// Apply one batch, in offset order (markers included), pushing findings.
    pub fn apply(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        let _ = (ev, findings, self.opts);
    }

    /// The producers' state as of now (for comparing with `.snapshot` files mid-replay).
    pub fn producers(&self) -> Vec<ProducerState> {
        Vec::new()
    }

    /// End of log: classify open transactions against `ref_time_ms` and conclude.
    pub fn finish(self, ref_time_ms: i64, findings: &mut Vec<Finding>) -> ReplayOutcome {
        let _ = (ref_time_ms, findings);
        ReplayOutcome::default()
    }
}
