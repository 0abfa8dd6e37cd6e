//! Where the old leader truncates when it follows the new one (`lost_offsets`,
//! `truncates_to` of an `unclean_leader_election`), against Kafka's
//! `AbstractFetcherThread.getOffsetTruncationState` and the follower's own
//! `LeaderEpochFileCache.endOffsetFor`.

use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, RegisterBroker};
use klogscan::testkit::brokers::{orders_change, orders_partition};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for};
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};

const T0: i64 = 1_700_000_000_000;

fn broker(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + id as i64,
        ..Default::default()
    })
}

/// `orders-0` from `start`: one single-record batch per offset, `n` of them per `(epoch, n)`.
fn copy(start: i64, epochs: &[(i32, usize)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_offset(start)
        .start_time(T0);
    for &(e, n) in epochs {
        p.set_leader_epoch(e);
        for _ in 0..n {
            p.append(Batch::new(Producer::PLAIN).records(1));
        }
    }
    p
}

/// `LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch`
/// on the follower's side of `AbstractFetcherThread.getOffsetTruncationState`.
///
/// Broker 1 (the old leader) kept its log from offset 100 (retention deleted the older
/// segments, and `truncateFromStart(100)` cut its cache to `3 100`, `5 130`), LEO 150.
/// Broker 2 was the leader at epoch 2 and was cut off with a tail 100–119 of its own (epoch
/// 3 went to broker 1 from 100); it never rejoined, and is elected uncleanly at epoch 6,
/// writing from 120.
///
/// Broker 1 follows: it asks for its latest epoch 5; broker 2 answers its floor epoch 2
/// ending at 120 (epoch 6's start). Broker 1's own `endOffsetFor(2)` is below its oldest
/// entry, so Kafka answers `(2, 100)` — the requested epoch and the first entry's start —
/// and, the epochs being equal, broker 1 truncates to min(100, 120, 150) = 100: offsets
/// 100–149 (50) are gone, 100–119 included (broker 2's records there are its own epoch-2
/// tail, not broker 1's epoch-3 ones).
///
/// klogscan's `replicas::end_offset_for` gives `None` below the first entry, so
/// `truncation_point` takes the leader's end (120): no `truncates_to`, 30 lost offsets.
#[test]
fn the_old_leader_truncates_to_its_first_entry_below_its_oldest_epoch() {
    let d = tempfile::tempdir().unwrap();
    let (ld1, ld2) = (d.path().join("broker-1"), d.path().join("broker-2"));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(copy(100, &[(3, 30), (5, 20)]))
        .write(&ld1)
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(copy(0, &[(2, 120), (6, 10)]))
        .write(&ld2)
        .unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        broker(1),
        broker(2),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        orders_partition(&[1, 2], &[1], 1, 5),
    ]);
    m.batch(&[orders_change(|c| {
        c.leader = 2;
        c.isr = Some(vec![2]);
        c.leader_recovery_state = 1;
    })]);
    m.write(&ld2).unwrap();
    let r = klogscan::pipeline::scan(&[ld1, ld2], &ScanOptions::default());
    let f: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::UncleanLeaderElection)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].evidence["start_offset"], 120, "{:#}", f[0].evidence);
    let old = &f[0].evidence["old_leader_copy"];
    assert_eq!(old["log_end_offset"], 150, "{old:#}");
    assert_eq!(old["truncates_to"], 100, "{old:#}");
    assert_eq!(old["lost_offsets"], 50, "{old:#}");
}
