//! `invalid_first_sequence` for a transactions-v2 producer's first batch in a partition
//! (KAFKA-18202, `ProducerAppendInfo.checkSequence`): a leader whose verification entry
//! supports the epoch bump (`VerificationStateEntry.supportsEpochBump`: the producer runs
//! TV2) refuses a transactional batch whose first sequence is not 0 when it holds no state
//! for the producer (`currentEntry.isEmpty()`), with `OutOfOrderSequenceException`
//! (`ProducerStateManagerTest.testRejectNonZeroSequenceForTransactionsV2WithEmptyState`,
//! `UnifiedLogTest.testNonZeroSequenceOnFirstAppendNonZeroEpoch`). Under TV0/1 the same
//! batch is accepted (`testAllowNonZeroSequenceForTransactionsV1WithEmptyState`).
//!
//! The partition's replay keeps the candidates (`partition::state::txnrec::FirstTxnBatch`:
//! the producer's first batch, transactional, above sequence 0, the whole history held);
//! the transaction version is the coordinator's: the transaction of the same producer id
//! and data epoch, listing the partition, recorded with `ClientTransactionVersion` ≥ 2.

use super::input::PartitionTxns;
use super::{Joined, Placed, Target};
use crate::cluster::coordinator::model::CoordTxn;
use crate::finding::{Finding, Kind};
use crate::partition::state::text::CLIENT_OUT_OF_ORDER;
use crate::partition::state::txnrec::FirstTxnBatch;
use serde_json::json;

const BROKER_TV2_FIRST_SEQ: &str = "a leader with KAFKA-18202 (merged June 2025) rejects on append (CLIENT origin) a transactions-v2 batch whose first sequence is not 0 from a producer it holds no state for (ProducerAppendInfo.checkSequence); older leaders, TV0/1 producers, replication and recovery accept it";

/// The findings of the domain's live partitions `partitions` (indices into
/// `inputs.partitions`, one copy per partition) against `coord`, the domain's coordinator
/// transactions.
pub fn check(inputs: &Joined<'_>, partitions: &[usize], coord: &[CoordTxn]) -> Vec<Placed> {
    let mut out = Vec::new();
    for &i in partitions {
        let p = &inputs.partitions[i];
        if p.first_txn_batches.is_empty() || p.compacted == Some(true) {
            continue;
        }
        for b in &p.first_txn_batches {
            if let Some(c) = tv2_transaction(p, b, coord) {
                out.push(Placed {
                    target: Target::Partition(i),
                    finding: finding(inputs, p, b, c),
                    causes_hanging: Vec::new(),
                });
            }
        }
    }
    out
}

/// The coordinator's TV2 transaction `b` opened: those of its producer id and data epoch
/// listing the partition, all recorded with `ClientTransactionVersion` ≥ 2 (one at
/// TV0/1 may be the one `b` belongs to: a client may switch versions at one epoch), the
/// first of them. None when the partition closed `b`'s transaction with a marker at the
/// data's epoch, which a TV2 coordinator does not write (it bumps the epoch).
fn tv2_transaction<'c>(
    p: &PartitionTxns,
    b: &FirstTxnBatch,
    coord: &'c [CoordTxn],
) -> Option<&'c CoordTxn> {
    let unbumped = p.txns.iter().any(|r| {
        r.producer_id == b.producer_id
            && r.first_offset == b.batch.offset
            && !r.is_open()
            && r.marker_epoch == r.producer_epoch
    });
    if unbumped {
        return None;
    }
    let tp = (p.topic.clone(), p.partition);
    let mut matching = coord.iter().filter(|c| {
        c.producer_id == b.producer_id
            && c.data_epoch == b.producer_epoch
            && c.partitions.as_ref().is_some_and(|s| s.contains(&tp))
    });
    let first = matching.next()?;
    (first.tv2() && matching.all(CoordTxn::tv2)).then_some(first)
}

fn finding(inputs: &Joined<'_>, p: &PartitionTxns, b: &FirstTxnBatch, c: &CoordTxn) -> Finding {
    let log = inputs.coordinator.get(c.log);
    let log_path = log.map(|l| l.origin.path.as_str());
    Finding::new(
        Kind::InvalidFirstSequence,
        &p.topic,
        p.partition,
        format!(
            "producer {} epoch {}: its {} (offset {}, transactional) starts at sequence {} instead of 0; the coordinator's record of transactional id {} (__transaction_state-{} offset {}) marks its transaction TV2 (ClientTransactionVersion {}), and a TV2 leader holding no state for the producer refuses it (brokers with KAFKA-18202, 2025)",
            b.producer_id,
            b.producer_epoch,
            if b.expired {
                "first batch after idling past producer.id.expiration.ms"
            } else {
                "first batch in this partition"
            },
            b.batch.offset,
            b.base_sequence,
            c.transactional_id,
            c.log_partition,
            c.first_record_offset,
            c.client_transaction_version,
        ),
    )
    .offset(b.batch.offset)
    .position(b.batch.position)
    .segment(b.batch.segment.clone())
    .producer(b.producer_id, b.producer_epoch)
    .evidence(json!({
        "expected": 0,
        "found": b.base_sequence,
        "epoch": b.producer_epoch,
        "batch": b.batch,
        "producer_state": if b.expired {
            "expired (the producer idle past producer.id.expiration.ms before it: a leader that expired it held none; one that kept it refuses the sequence too)"
        } else {
            "none (first batch of the producer, log held from offset 0)"
        },
        "coordinator_record": {
            "transactional_id": &*c.transactional_id,
            "client_transaction_version": c.client_transaction_version,
            "producer_id": c.producer_id,
            "producer_epoch": c.data_epoch,
            "state": c.state.name(),
            "log_partition": c.log_partition,
            "offset": c.first_record_offset,
            "path": log_path,
        },
        "kafka": "ProducerAppendInfo.checkSequence (KAFKA-18202)",
    }))
    .broker(BROKER_TV2_FIRST_SEQ)
    .client_error(CLIENT_OUT_OF_ORDER)
}

#[cfg(test)]
mod tests;
