use super::*;
use crate::partition::state::txnrec::TxnRecord;

fn part(topic: &str, txns: Vec<TxnRecord>) -> PartitionTxns {
    PartitionTxns {
        version: INPUT_VERSION,
        topic: topic.into(),
        partition: 0,
        origin: Origin {
            cluster_id: Some("c".into()),
            path: format!("/d/{topic}-0"),
            live: true,
            ..Origin::default()
        },
        ref_time_ms: 0,
        log_end_offset: Some(txns.len() as i64 * 2),
        compacted: None,
        txns,
        first_txn_batches: Vec::new(),
    }
}

fn rec(i: i64, commit: bool, t0: i64) -> TxnRecord {
    TxnRecord {
        producer_id: 7,
        producer_epoch: 0,
        marker_epoch: 0,
        coordinator_epoch: 0,
        end: if commit {
            TxnEnd::Commit
        } else {
            TxnEnd::Abort
        },
        first_offset: 2 * i,
        last_data_offset: 2 * i,
        marker_offset: 2 * i + 1,
        first_timestamp: t0,
        last_timestamp: t0 + 5,
        records: 1,
        batches: 1,
        bytes: 80,
    }
}

/// 20 000 TV0/1 transactions of one producer over two partitions, 10 ms apart, without
/// the coordinator: each pair groups by marker order, in bounded time; the inputs
/// survive a serde round trip and give the same result.
#[test]
fn many_transactions_group_by_marker_order() {
    let n = 20_000i64;
    let a = (0..n).map(|i| rec(i, i % 3 != 0, i * 10)).collect();
    let b = (0..n).map(|i| rec(i, i % 3 != 0, i * 10 + 1)).collect();
    let inputs = TxnInputs {
        version: INPUT_VERSION,
        partitions: vec![part("a", a), part("b", b)],
        coordinator: Vec::new(),
    };
    let started = std::time::Instant::now();
    let r = analyse(&inputs, &TxnOptions::default());
    assert!(started.elapsed().as_secs() < 20);
    assert_eq!(r.transactions.len(), n as usize);
    assert!(r.transactions.iter().all(|t| t.partitions.len() == 2));
    assert!(r.findings.is_empty());
    assert_eq!(r.stats.aborted, (n as u64).div_ceil(3));
    let json = serde_json::to_string(&inputs).unwrap();
    let back: TxnInputs = serde_json::from_str(&json).unwrap();
    assert_eq!(back, inputs);
    assert_eq!(
        analyse(&back, &TxnOptions::default()).transactions,
        r.transactions
    );
    // an input of another version is not joined
    let mut old = back;
    old.partitions[1].version = INPUT_VERSION + 1;
    let r = analyse(&old, &TxnOptions::default());
    assert!(r.transactions.iter().all(|t| t.partitions.len() == 1));
}

/// Hostile inputs (extreme timestamps, epochs, offsets, states; random coordinator
/// values) never panic.
#[test]
fn noise_never_panics() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pick = |v: u64| -> i64 {
        [i64::MIN, i64::MAX, -1, 0, 1, 1_000, (v >> 3) as i64][(v % 7) as usize]
    };
    for round in 0..20 {
        let mut parts = Vec::new();
        for p in 0..3 {
            let txns = (0..200)
                .map(|_| {
                    let v = next();
                    TxnRecord {
                        producer_id: (v % 3) as i64,
                        producer_epoch: [i16::MIN, -1, 0, 1, 32766, i16::MAX][(v % 6) as usize],
                        marker_epoch: [i16::MIN, -1, 0, 2, i16::MAX][(v % 5) as usize],
                        coordinator_epoch: (v % 4) as i32 - 1,
                        end: [TxnEnd::Open, TxnEnd::Commit, TxnEnd::Abort][(v % 3) as usize],
                        first_offset: pick(next()),
                        last_data_offset: pick(next()),
                        marker_offset: pick(next()),
                        first_timestamp: pick(next()),
                        last_timestamp: pick(next()),
                        records: (v % 3) as u32,
                        batches: (v % 2) as u32 * u32::MAX,
                        bytes: v,
                    }
                })
                .collect();
            parts.push(part(&format!("t{p}"), txns));
        }
        let states = [
            TxnState::Empty,
            TxnState::Ongoing,
            TxnState::PrepareCommit,
            TxnState::PrepareAbort,
            TxnState::CompleteCommit,
            TxnState::CompleteAbort,
            TxnState::Dead,
            TxnState::PrepareEpochFence,
        ];
        let records = (0..300)
            .map(|i| {
                let v = next();
                CoordRecord::new(
                    i,
                    format!("id{}", v % 4),
                    (v % 11 != 0).then(|| CoordValue {
                        version: (v % 2) as i16,
                        producer_id: (v % 3) as i64,
                        previous_producer_id: (v % 5) as i64 - 1,
                        next_producer_id: (v % 4) as i64 - 1,
                        producer_epoch: [0, 1, 32766, i16::MAX, -1][(v % 5) as usize],
                        next_producer_epoch: -1,
                        timeout_ms: [i32::MIN, 0, 60_000, i32::MAX][(v % 4) as usize],
                        state: states[(v % 8) as usize],
                        partitions: vec![(format!("t{}", v % 3), 0)],
                        last_update_ms: pick(next()),
                        start_ms: pick(next()),
                        client_transaction_version: (v % 3) as i16,
                    }),
                )
            })
            .collect();
        let coordinator = vec![CoordinatorLog {
            version: INPUT_VERSION,
            partition: round,
            origin: parts[0].origin.clone(),
            ref_time_ms: pick(next()),
            records,
            segments: Vec::new(),
            // unread batches anywhere, of hostile or unknown offsets
            records_not_read: (0..(round % 3))
                .map(|_| UnreadBatch {
                    segment: "00000000000000000000.log".into(),
                    reason: "not read".into(),
                    offsets: (round % 2 == 0).then(|| (pick(next()), pick(next()))),
                })
                .collect(),
        }];
        let inputs = TxnInputs {
            version: INPUT_VERSION,
            partitions: parts,
            coordinator,
        };
        let _ = analyse(&inputs, &TxnOptions::default());
    }
}
