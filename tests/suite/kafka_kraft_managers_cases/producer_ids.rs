//! `ProducerIdControlManagerTest`: `ProducerIdsRecord`s. The controller hands a broker the
//! block that starts at its current next id and writes a record whose `nextProducerId` is
//! that block's end (`generateNextProducerId`: blocks of 1000); its replay takes the record's
//! `nextProducerId` as the next block's start, and throws when it does not go up
//! (`ProducerIdControlManager.replay`: "Producer ID range must only increase"), which stops a
//! controller replaying the log (its fault handler for replay errors is fatal).
//!
//! klogscan decodes the records and keeps none of them. What a data partition's producer
//! ids say against them: nothing Kafka proves. The broker's append path never checks a
//! producer id against the allocations (`ProducerStateManager` takes any id), and a
//! broker's copy of the metadata log may lag the controller's commit of the block the broker
//! was answered with; so a producer id at or above the latest record's `nextProducerId` is
//! no proof that the log lost an allocation, and klogscan rightly says nothing of it.

use super::*;
use crate::common::kraft::history;

fn ids(broker: i32, next: i64) -> MetaRecord {
    MetaRecord::ProducerIds {
        broker_id: broker,
        broker_epoch: 100,
        next_producer_id: next,
    }
}

/// Findings of any kind on `__cluster_metadata`.
fn metadata_findings(r: &ScanReport) -> Vec<String> {
    (r.findings.iter())
        .filter(|f| f.topic == "__cluster_metadata")
        .map(|f| format!("{:?}: {}", f.kind, f.message))
        .collect()
}

/// `events-0`: idempotent producer `pid`'s two clean batches.
fn events_of(pid: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(EVENTS, 0);
    p.append(Batch::new(Producer::idempotent(pid, 0)).records(2));
    p.append(
        Batch::new(Producer::idempotent(pid, 0))
            .sequence(2)
            .records(2),
    );
    p
}

/// `ProducerIdControlManagerTest.testGenerateProducerIds` / `testInitialResult`: blocks
/// allocated to brokers in turn, each record's `nextProducerId` 1000 above the last. The
/// records decode (none kept raw, none undecodable) and change nothing the history keeps.
/// A data partition whose producer id lies inside an allocated block (500), or at or above
/// the last block's end (3000, 5000), gets no finding from them either way.
#[test]
fn producer_id_blocks_decode_and_judge_no_data() {
    for pid in [500, 3000, 5000] {
        let d = tempfile::tempdir().unwrap();
        let meta = meta_log(&[
            vec![ids(1, 1000)],
            vec![ids(2, 2000)],
            vec![ids(1, 3000)],
            vec![topic(EVENTS, events_id())],
        ]);
        let ld = log_dir(d.path(), "b1", 1, Some(events_of(pid)), &meta);
        let h = history(&ld);
        assert!(h.log.unknown.is_empty(), "{:?}", h.log.unknown);
        assert!(h.log.undecodable.is_empty(), "{:?}", h.log.undecodable);
        assert!(h.history.brokers.is_empty() && h.history.configs.is_empty());
        let r = scan(&[ld]);
        assert!(
            metadata_findings(&r).is_empty(),
            "{:?}",
            metadata_findings(&r)
        );
        let on_events: Vec<_> = r.findings.iter().filter(|f| f.topic == EVENTS).collect();
        assert!(on_events.is_empty(), "pid {pid}: {on_events:#?}");
    }
}

/// `ProducerIdControlManagerTest.testMonotonic`: after a record setting the next id to 42,
/// a record setting 40 (or 42 again) cannot be replayed — the controller's replay throws,
/// and a controller loading this log stops on it (`QuorumController`'s replay of a committed
/// record under its fatal fault handler). Gaps (42 → 50) are fine. Such a log is one no
/// controller loads; klogscan, which keeps no `ProducerIdsRecord`, says nothing of it.
/// Kafka's answer: a finding on the metadata log naming the record that goes back
/// (offset 1), and none for the log that only goes up.
#[test]
fn a_producer_id_range_going_back_is_what_no_controller_replays() {
    for (second, bad) in [(40, true), (42, true), (50, false)] {
        let d = tempfile::tempdir().unwrap();
        let meta = meta_log(&[vec![ids(1, 42)], vec![ids(1, second)]]);
        let ld = log_dir(d.path(), "b1", 1, None, &meta);
        let r = scan(&[ld]);
        let at_1 =
            (r.findings.iter()).any(|f| f.topic == "__cluster_metadata" && f.offset == Some(1));
        assert_eq!(at_1, bad, "next id 42 then {second}: {:#?}", r.findings);
    }
}
