//! The producer-state replay and its anomaly rules, driven by hand-built `BatchEvent`s
//! (what the walk hands the replay): sequence and epoch rules as `ProducerAppendInfo`
//! checks them, transactions and markers as `ProducerStateManager` and the
//! `TransactionCoordinator` write them.

mod producers;
mod shapes;
mod transactions;

use crate::finding::{Finding, Kind, Severity};
use crate::partition::event::{BatchEvent, ControlInfo};
use crate::partition::state::{
    AbortedTxn, LastEvent, PartitionContext, Replay, ReplayOptions, ReplayOutcome,
};
use crate::read::format::{Compression, TimestampType};

const T0: i64 = 1_700_000_000_000;
const MIN: i64 = 60_000;

/// Builds a partition's batches in offset order, like the scan would hand them over.
struct Log {
    next_offset: i64,
    position: u64,
    segment: u32,
    ts: i64,
    leader_epoch: i32,
    events: Vec<BatchEvent>,
}

fn last_seq(base: i32, delta: i32) -> i32 {
    if base < 0 {
        -1
    } else if base > i32::MAX - delta {
        delta - (i32::MAX - base) - 1
    } else {
        base + delta
    }
}

impl Log {
    fn new() -> Log {
        Log {
            next_offset: 0,
            position: 0,
            segment: 0,
            ts: T0,
            leader_epoch: 0,
            events: Vec::new(),
        }
    }

    fn template(&self, pid: i64, epoch: i16, n: i32) -> BatchEvent {
        BatchEvent {
            segment: self.segment,
            position: self.position,
            size: 70 + 20 * n as u32,
            magic: 2,
            base_offset: self.next_offset,
            last_offset: self.next_offset + n as i64 - 1,
            records_count: n,
            partition_leader_epoch: self.leader_epoch,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: -1,
            last_sequence: -1,
            is_transactional: false,
            is_control: false,
            control: None,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            base_timestamp: self.ts,
            max_timestamp: self.ts,
            delete_horizon: false,
            crc_valid: true,
            marker_timestamp: self.ts,
        }
    }

    fn push(&mut self, ev: BatchEvent) -> i64 {
        self.next_offset = ev.last_offset + 1;
        self.position += ev.size as u64;
        self.ts += 1000;
        self.events.push(ev);
        ev.base_offset
    }

    /// A data batch of `n` records; `seq` -1 for a non-idempotent producer.
    fn data(&mut self, pid: i64, epoch: i16, seq: i32, n: i32, txn: bool) -> i64 {
        let mut ev = self.template(pid, epoch, n);
        ev.base_sequence = seq;
        ev.last_sequence = last_seq(seq, n - 1);
        ev.is_transactional = txn;
        self.push(ev)
    }

    fn txn(&mut self, pid: i64, epoch: i16, seq: i32, n: i32) -> i64 {
        self.data(pid, epoch, seq, n, true)
    }

    fn idem(&mut self, pid: i64, epoch: i16, seq: i32, n: i32) -> i64 {
        self.data(pid, epoch, seq, n, false)
    }

    /// Plain data from a non-idempotent producer.
    fn plain(&mut self, n: i32) -> i64 {
        self.data(-1, -1, -1, n, false)
    }

    fn marker(&mut self, pid: i64, epoch: i16, commit: bool, coordinator_epoch: i32) -> i64 {
        let mut ev = self.template(pid, epoch, 1);
        ev.size = 78;
        ev.is_transactional = true;
        ev.is_control = true;
        ev.control = Some(ControlInfo::Marker {
            commit,
            coordinator_epoch,
        });
        self.push(ev)
    }

    fn commit(&mut self, pid: i64, epoch: i16, ce: i32) -> i64 {
        self.marker(pid, epoch, true, ce)
    }

    fn abort(&mut self, pid: i64, epoch: i16, ce: i32) -> i64 {
        self.marker(pid, epoch, false, ce)
    }

    fn skip_offsets(&mut self, n: i64) {
        self.next_offset += n;
    }

    fn advance(&mut self, ms: i64) {
        self.ts += ms;
    }

    fn roll(&mut self) {
        self.segment += 1;
        self.position = 0;
    }

    fn last_mut(&mut self) -> &mut BatchEvent {
        self.events.last_mut().unwrap()
    }
}

fn ctx(topic: &str) -> PartitionContext {
    PartitionContext {
        topic: topic.to_string(),
        partition: 3,
        segment_names: vec![
            "00000000000000000000.log".to_string(),
            "00000000000000000100.log".to_string(),
        ],
        compacted: Some(false),
        compact_policy: false,
        internal: false,
        kraft_metadata: false,
        log_start_offset: Some(0),
    }
}

fn run_ctx(c: PartitionContext, log: &Log, ref_time: i64) -> (Vec<Finding>, ReplayOutcome) {
    let mut r = Replay::new(c, ReplayOptions::default());
    let mut f = Vec::new();
    for ev in &log.events {
        r.apply(ev, &mut f);
    }
    let out = r.finish(ref_time, &mut f);
    (f, out)
}

/// Replays `log` on a delete-policy topic with the reference time just after its last batch.
fn run(log: &Log) -> (Vec<Finding>, ReplayOutcome) {
    run_ctx(ctx("orders"), log, log.ts)
}

fn of(f: &[Finding], k: Kind) -> Vec<&Finding> {
    f.iter().filter(|x| x.kind == k).collect()
}

fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|x| x.kind).collect()
}

fn errors(f: &[Finding]) -> Vec<Kind> {
    f.iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| x.kind)
        .collect()
}

const EPOCH_KINDS: &[Kind] = &[
    Kind::ProducerEpochRegression,
    Kind::ZombieWrite,
    Kind::InvalidFirstSequence,
    Kind::TransactionEpochChange,
    Kind::ConflictingMarkers,
];
