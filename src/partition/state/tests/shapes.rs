//! Shapes of data that once made the replay quadratic or huge (issue #11): many
//! transactions open at once, many producer ids. The replay's results are compared with a
//! naive model written here (a map of open transactions searched linearly, as the replay
//! did before it indexed them): same last stable offset after every batch, same open and
//! aborted transactions, same open/hanging findings.

use crate::finding::{Finding, Kind};
use crate::partition::event::{BatchEvent, ControlInfo};
use crate::partition::state::{AbortedTxn, PartitionContext, Replay, ReplayOptions};
use crate::read::format::{Compression, TimestampType};
use proptest::prelude::*;
use std::collections::BTreeMap;

const T0: i64 = 1_700_000_000_000;

fn event(offset: i64, n: i32, pid: i64, epoch: i16, seq: i32, ts: i64) -> BatchEvent {
    BatchEvent {
        segment: 0,
        position: offset as u64 * 100,
        size: 100,
        magic: 2,
        base_offset: offset,
        last_offset: offset + n as i64 - 1,
        records_count: n,
        partition_leader_epoch: 0,
        producer_id: pid,
        producer_epoch: epoch,
        base_sequence: seq,
        last_sequence: seq + n - 1,
        is_transactional: true,
        is_control: false,
        control: None,
        compression: Compression::None,
        timestamp_type: TimestampType::CreateTime,
        base_timestamp: ts,
        max_timestamp: ts,
        delete_horizon: false,
        crc_valid: true,
        marker_timestamp: ts,
    }
}

fn marker(offset: i64, pid: i64, epoch: i16, commit: bool, ts: i64) -> BatchEvent {
    let mut ev = event(offset, 1, pid, epoch, -1, ts);
    ev.is_control = true;
    ev.control = Some(ControlInfo::Marker {
        commit,
        coordinator_epoch: 5,
    });
    ev
}

/// One step of a generated log: transactional data of producer `p`, or its marker.
#[derive(Debug, Clone, Copy)]
enum Op {
    Data { p: u8, n: u8 },
    Marker { p: u8, commit: bool },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0u8..40, 1u8..4).prop_map(|(p, n)| Op::Data { p, n }),
        2 => (0u8..40, any::<bool>()).prop_map(|(p, commit)| Op::Marker { p, commit }),
    ];
    proptest::collection::vec(op, 0..400)
}

/// Build the events of `ops` (sequences and timestamps kept valid per producer).
fn build(ops: &[Op]) -> Vec<BatchEvent> {
    let mut seq: BTreeMap<u8, i32> = BTreeMap::new();
    let mut offset = 0i64;
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let ts = T0 + i as i64 * 1000;
        let ev = match *op {
            Op::Data { p, n } => {
                let s = seq.entry(p).or_insert(0);
                let ev = event(offset, n as i32, 1000 + p as i64, 3, *s, ts);
                *s += n as i32;
                ev
            }
            Op::Marker { p, commit } => marker(offset, 1000 + p as i64, 3, commit, ts),
        };
        offset = ev.last_offset + 1;
        out.push(ev);
    }
    out
}

/// What the replay must conclude, computed naively.
#[derive(Debug, Default)]
struct Model {
    /// producer id → first offset of its open transaction.
    open: Vec<(i64, i64)>,
    aborted: Vec<AbortedTxn>,
    log_end: Option<i64>,
}

impl Model {
    fn lso(&self) -> Option<i64> {
        self.open
            .iter()
            .map(|&(_, f)| f)
            .min()
            .or(self.log_end)
            .map(|f| f.max(0))
    }
    fn apply(&mut self, ev: &BatchEvent) {
        self.log_end = Some(ev.last_offset + 1);
        let pid = ev.producer_id;
        let at = self.open.iter().position(|&(p, _)| p == pid);
        match (ev.marker(), at) {
            (None, None) => {
                // A follower's lastStableOffset for earlier aborts no other transaction
                // was open at: the first transaction of another producer after them.
                for a in &mut self.aborted {
                    if a.follower_last_stable_offset.is_none()
                        && a.producer_id != pid
                        && a.last_stable_offset == a.last_offset + 1
                    {
                        a.follower_last_stable_offset = Some(ev.base_offset);
                    }
                }
                self.open.push((pid, ev.base_offset))
            }
            (None, Some(_)) | (Some(_), None) => {}
            (Some((commit, _)), Some(i)) => {
                let (_, first) = self.open.remove(i);
                if !commit {
                    let lso = self
                        .open
                        .iter()
                        .map(|&(_, f)| f)
                        .min()
                        .unwrap_or(ev.base_offset + 1);
                    self.aborted.push(AbortedTxn {
                        producer_id: pid,
                        first_offset: first,
                        last_offset: ev.base_offset,
                        last_stable_offset: lso,
                        segment: 0,
                        follower_last_stable_offset: None,
                    });
                }
            }
        }
    }
}

fn ctx() -> PartitionContext {
    PartitionContext {
        topic: "payments".into(),
        partition: 0,
        segment_names: vec!["00000000000000000000.log".into()],
        compacted: Some(false),
        compact_policy: false,
        internal: false,
        kraft_metadata: false,
        log_start_offset: Some(0),
    }
}

/// Replay `events`, checking the LSO against the model after every batch; then compare the
/// outcome.
fn check(events: &[BatchEvent]) -> Result<(), TestCaseError> {
    let mut r = Replay::new(ctx(), ReplayOptions::default());
    let mut m = Model::default();
    let mut findings: Vec<Finding> = Vec::new();
    for ev in events {
        r.apply(ev, &mut findings);
        m.apply(ev);
        prop_assert_eq!(
            r.last_stable_offset(),
            m.lso(),
            "after offset {}",
            ev.base_offset
        );
    }
    let end = events.last().map_or(T0, |e| e.max_timestamp);
    let out = r.finish(end, &mut findings);
    prop_assert_eq!(out.last_stable_offset, m.lso());
    prop_assert_eq!(&out.aborted, &m.aborted);
    let mut open: Vec<(i64, i64)> = m.open.iter().map(|&(p, f)| (f, p)).collect();
    open.sort_unstable();
    let got: Vec<(i64, i64)> = out
        .open
        .iter()
        .map(|t| (t.first_offset, t.producer_id))
        .collect();
    prop_assert_eq!(&got, &open);
    prop_assert_eq!(out.txn_stats.open, open.len() as u64);
    // One open/hanging finding per open transaction, in first-offset order.
    let reported: Vec<(i64, i64)> = findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
        .map(|f| (f.offset.unwrap_or(-1), f.producer_id.unwrap_or(-1)))
        .collect();
    prop_assert_eq!(&reported, &open);
    let closed = out.txn_stats.committed + out.txn_stats.aborted;
    let opened = events.iter().filter(|e| e.marker().is_none()).count() as u64;
    prop_assert!(closed + open.len() as u64 <= opened);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn interleaved_transactions_match_the_naive_model(ops in ops()) {
        check(&build(&ops))?;
    }
}

/// 3 000 transactions open at once, closed in an order unrelated to their first offsets
/// (every 7th aborted): the LSO walks exactly as the naive model says.
#[test]
fn many_open_transactions_closed_out_of_order() {
    const N: i64 = 3_000;
    let mut events = Vec::new();
    let mut offset = 0;
    for i in 0..N {
        events.push(event(offset, 1, i, 0, 0, T0 + i));
        offset += 1;
    }
    for k in 0..N {
        let pid = (k * 1_237) % N; // 1237 is prime to 3000: a permutation
        events.push(marker(offset, pid, 0, pid % 7 != 0, T0 + N + k));
        offset += 1;
    }
    // Leave a handful open at the end.
    for i in 0..5 {
        events.push(event(offset, 2, i, 0, 1, T0 + 3 * N + i));
        offset += 2;
    }
    check(&events).unwrap();
}

/// A sealed replay without its producers concludes exactly as the whole replay does: same
/// findings, same outcome but for the producer list (its length is kept).
#[test]
fn sealed_replay_concludes_like_the_whole_replay() {
    let mut ops = Vec::new();
    for i in 0..120u8 {
        ops.push(Op::Data {
            p: i % 40,
            n: 1 + i % 3,
        });
        if i % 3 == 0 {
            ops.push(Op::Marker {
                p: (i / 3) % 40,
                commit: i % 2 == 0,
            });
        }
    }
    let events = build(&ops);
    let end = events.last().unwrap().max_timestamp + 3_600_000;
    let replay = |keep: Option<bool>| {
        let mut r = Replay::new(ctx(), ReplayOptions::default());
        let mut f = Vec::new();
        for ev in &events {
            r.apply(ev, &mut f);
        }
        let out = match keep {
            None => r.finish(end, &mut f),
            Some(k) => r.seal(k, false).finish(end, &mut f),
        };
        (serde_json::to_value(&f).unwrap(), out)
    };
    let (f_whole, whole) = replay(None);
    let (f_kept, kept) = replay(Some(true));
    let (f_lean, mut lean) = replay(Some(false));
    assert_eq!(whole.producer_count, 40);
    assert_eq!(whole.producers.len(), 40);
    assert!(
        !whole.open.is_empty(),
        "the scenario leaves transactions open"
    );
    assert_eq!((&f_kept, &kept), (&f_whole, &whole));
    assert!(lean.producers.is_empty());
    assert_eq!(lean.producer_count, 40);
    assert_eq!(f_lean, f_whole);
    lean.producers = whole.producers.clone();
    assert_eq!(lean, whole);
}
