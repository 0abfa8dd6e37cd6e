//! `ProducerIdManagerTest` and `ProducerIdsIntegrationTest`: a broker hands out producer
//! ids from blocks the controller allocates (`RPCProducerIdManager` asks with
//! AllocateProducerIds; the controller's `ProducerIdControlManager.generateNextProducerId`
//! writes a `ProducerIdsRecord` whose `nextProducerId` is the block's end, blocks of 1000),
//! and no id is handed out twice. On disk: the metadata log's records, one per block, and
//! each broker's producers under ids of its own blocks.

use super::*;
use crate::kafka_kraft_managers_cases::{EVENTS, events_id, log_dir, meta_log, topic};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::{Batch, Producer};

fn ids(broker: i32, next: i64) -> MetaRecord {
    MetaRecord::ProducerIds {
        broker_id: broker,
        broker_epoch: 100,
        next_producer_id: next,
    }
}

/// `events-0`: each of `pids` writes two batches of two records (sequences 0 and 2), the
/// producers interleaved batch by batch.
fn events_of(pids: &[i64]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(EVENTS, 0);
    for seq in [0, 2] {
        for &pid in pids {
            p.append(
                Batch::new(Producer::idempotent(pid, 0))
                    .records(2)
                    .sequence(seq),
            );
        }
    }
    p
}

/// `ProducerIdsIntegrationTest.testUniqueProducerIds`, `ProducerIdManagerTest.testConcurrentGeneratePidRequests`
/// (blocks of 1, 2, 10, 100), `ProducerIdManagerTest.testGetProducerIdZk`: three brokers
/// each take two blocks in turn (ids 0–999 to broker 1, 1000–1999 to broker 2, …, the
/// second round from 3000) and hand out ids of their own blocks; one partition holds
/// idempotent producers of each (0, 1000, 2000, 3000, 5999). Every producer's sequences run
/// on: nothing raised. Near miss: two producers handed the same id (what the test rules
/// out) — both start at sequence 0 at epoch 0 on one partition, so the second's batches
/// repeat the first's: `duplicate_sequence`.
#[test]
fn producer_ids_come_from_blocks_and_are_unique() {
    let scan_with = |pids: &[i64]| {
        let d = tempfile::tempdir().unwrap();
        let mut blocks = vec![vec![topic(EVENTS, events_id())]];
        for (i, b) in [1, 2, 3, 1, 2, 3].into_iter().enumerate() {
            blocks.push(vec![ids(b, 1000 * (i as i64 + 1))]);
        }
        let ld = log_dir(d.path(), "b1", 1, Some(events_of(pids)), &meta_log(&blocks));
        let r = klogscan::pipeline::scan(&[ld], &opts());
        (d, r)
    };
    let (_d, r) = scan_with(&[0, 1000, 2000, 3000, 5999]);
    assert!(r.findings.is_empty(), "{:#?}", lines(&r.findings));
    let pids: Vec<i64> = producers(&r, EVENTS, 0).iter().map(|p| p.0).collect();
    assert_eq!(pids, vec![0, 1000, 2000, 3000, 5999]);
    // near miss: the id 1000 handed out twice
    let (_d, r) = scan_with(&[0, 1000, 1000]);
    assert!(
        (r.findings.iter()).any(|f| f.kind == Kind::DuplicateSequence),
        "{:#?}",
        lines(&r.findings)
    );
}
