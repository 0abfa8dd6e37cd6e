use super::super::{
    CoordRecord, CoordValue, CoordinatorLog, INPUT_VERSION, Origin, PartitionTxns, TxnInputs,
    TxnOptions, analyse,
};
use crate::finding::Kind;
use crate::finding::evidence::BatchEvidence;
use crate::partition::state::txnrec::{FirstTxnBatch, TxnEnd, TxnRecord};
use crate::read::format::txnlog::TxnState;

fn origin(cluster: &str, path: &str) -> Origin {
    Origin {
        cluster_id: Some(cluster.into()),
        path: path.into(),
        live: true,
        ..Origin::default()
    }
}

/// `orders-0` of cluster `c`: producer 23's first batch at offset 0, epoch 1, sequence 3,
/// transactional; its transaction open, or closed by a marker at `marker_epoch`.
fn orders(marker_epoch: Option<i16>) -> PartitionTxns {
    let (end, marker_offset) = match marker_epoch {
        Some(_) => (TxnEnd::Commit, 2),
        None => (TxnEnd::Open, -1),
    };
    PartitionTxns {
        version: INPUT_VERSION,
        topic: "orders".into(),
        partition: 0,
        origin: origin("c", "/d/orders-0"),
        ref_time_ms: 0,
        log_end_offset: Some(3),
        compacted: None,
        txns: vec![TxnRecord {
            producer_id: 23,
            producer_epoch: 1,
            marker_epoch: marker_epoch.unwrap_or(-1),
            coordinator_epoch: -1,
            end,
            first_offset: 0,
            last_data_offset: 1,
            marker_offset,
            first_timestamp: 0,
            last_timestamp: 0,
            records: 2,
            batches: 1,
            bytes: 100,
        }],
        first_txn_batches: vec![FirstTxnBatch {
            producer_id: 23,
            producer_epoch: 1,
            base_sequence: 3,
            batch: BatchEvidence {
                offset: 0,
                last_offset: 1,
                segment: "00000000000000000000.log".into(),
                ..BatchEvidence::default()
            },
            expired: false,
        }],
    }
}

/// A `__transaction_state-0` copy of `cluster` holding `values` of transactional id `app`.
fn coordinator(cluster: &str, values: Vec<CoordValue>) -> CoordinatorLog {
    let records = (values.into_iter().enumerate())
        .map(|(i, v)| CoordRecord::new(i as i64, "app".into(), Some(v)))
        .collect();
    CoordinatorLog::of_records(0, origin(cluster, "/d/__transaction_state-0"), records)
}

fn value(epoch: i16, state: TxnState, ctv: i16, topic: &str) -> CoordValue {
    CoordValue {
        version: 1,
        producer_id: 23,
        previous_producer_id: -1,
        next_producer_id: -1,
        producer_epoch: epoch,
        next_producer_epoch: -1,
        timeout_ms: 60_000,
        state,
        partitions: vec![(topic.into(), 0)],
        last_update_ms: 0,
        start_ms: 0,
        client_transaction_version: ctv,
    }
}

fn first_seq(part: PartitionTxns, logs: Vec<CoordinatorLog>) -> Vec<(i64, String)> {
    let inputs = TxnInputs {
        version: INPUT_VERSION,
        partitions: vec![part],
        coordinator: logs,
    };
    analyse(&inputs, &TxnOptions::default())
        .findings
        .into_iter()
        .filter(|p| p.finding.kind == Kind::InvalidFirstSequence)
        .map(|p| (p.finding.offset.unwrap_or(-1), p.finding.message))
        .collect()
}

#[test]
fn a_tv2_transaction_refuses_a_first_batch_above_zero() {
    let f = first_seq(
        orders(None),
        vec![coordinator(
            "c",
            vec![value(1, TxnState::Ongoing, 2, "orders")],
        )],
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, 0);
    assert!(f[0].1.contains("transactional id app"), "{}", f[0].1);
    // Known from its Prepare record alone (TV2: the data one epoch below), closed by the
    // bumped marker on the partition.
    let f = first_seq(
        orders(Some(2)),
        vec![coordinator(
            "c",
            vec![value(2, TxnState::PrepareCommit, 2, "orders")],
        )],
    );
    assert_eq!(f.len(), 1, "{f:?}");
}

#[test]
fn anything_short_of_a_tv2_record_of_that_transaction_is_silent() {
    let silent = |part: PartitionTxns, log: CoordinatorLog| {
        let f = first_seq(part, vec![log]);
        assert!(f.is_empty(), "{f:?}");
    };
    // TV0/1 (ClientTransactionVersion 0 or 1).
    for ctv in [0, 1] {
        silent(
            orders(None),
            coordinator("c", vec![value(1, TxnState::Ongoing, ctv, "orders")]),
        );
    }
    // Another epoch: an earlier or later transaction of the producer id.
    silent(
        orders(None),
        coordinator("c", vec![value(4, TxnState::Ongoing, 2, "orders")]),
    );
    // A transaction that does not list the partition.
    silent(
        orders(None),
        coordinator("c", vec![value(1, TxnState::Ongoing, 2, "payments")]),
    );
    // Another cluster's coordinator.
    silent(
        orders(None),
        coordinator("other", vec![value(1, TxnState::Ongoing, 2, "orders")]),
    );
    // The partition closed the transaction with a marker at the data's epoch: TV0/1.
    silent(
        orders(Some(1)),
        coordinator("c", vec![value(1, TxnState::Ongoing, 2, "orders")]),
    );
    // A TV0/1 transaction of the same producer id and epoch also lists the partition.
    silent(
        orders(None),
        coordinator(
            "c",
            vec![
                value(1, TxnState::Ongoing, 0, "orders"),
                value(1, TxnState::CompleteCommit, 0, "orders"),
                value(1, TxnState::Ongoing, 2, "orders"),
            ],
        ),
    );
    // A compacted partition.
    let mut p = orders(None);
    p.compacted = Some(true);
    silent(
        p,
        coordinator("c", vec![value(1, TxnState::Ongoing, 2, "orders")]),
    );
    // A copy that is not live.
    let mut p = orders(None);
    p.origin.live = false;
    silent(
        p,
        coordinator("c", vec![value(1, TxnState::Ongoing, 2, "orders")]),
    );
}
