//! Review of session 24's changes (d8462f0..818788e): reproducers of defects, each
//! `#![cfg(feature = "testkit")]

use crate::kafka_quiet_cluster_cases::{Brokers, T0, replica};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};

use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, bootstrap, broker_change, broker_epoch_at_start, change, partition, topic,
};

fn created() -> MetaLog {
    let mut m = bootstrap();
    m.at(T0 - 30 * SEC);
    m.batch(&[
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
    ]);
    m
}

/// The quiet audit's `moved_away` (replication.rs): broker 1 led epoch 0 to offset 50, the
/// controller moved leadership to 2 (from the ISR) at epoch 1; 2 and 3 hold other records
/// from 45. `hw1`: broker 1's checkpointed high watermark.
fn moved_away(hw1: i64) -> Brokers {
    let mut b = Brokers::new();
    for id in 1..=3 {
        let ld = if id == 1 {
            let mut p = replica("orders", 0, &[(0, 9)]);
            let values = (0..5).map(|i| format!("acks=all write {i}"));
            p.append(Batch::new(Producer::PLAIN).values(values));
            LogDirBuilder::new(1)
                .partition(p)
                .high_watermark("orders", 0, hw1)
        } else {
            LogDirBuilder::new(id).partition(replica("orders", 0, &[(0, 9), (1, 5)]))
        };
        let dir = b.write(id, "data", ld, Some(broker_epoch_at_start(id)));
        let mut m = created();
        m.at(T0 + 9 * SEC + 500);
        m.batch(&[
            broker_change(1, broker_epoch_at_start(1), 0, 1),
            change("orders", 0, |c| {
                c.leader = 2;
                c.isr = Some(vec![2, 3]);
            }),
        ]);
        m.at(T0 + 11 * SEC);
        m.batch(&[broker_change(1, broker_epoch_at_start(1), 1, 0)]);
        m.write(&dir);
    }
    b
}

/// Broker 1's high-watermark checkpoint says offsets 45..50 were committed (acknowledged
/// to acks=all producers): `replicas::truncation::with_truncation` says so ("acknowledged
/// data lost", error). The metadata log's ISR election into epoch 1 does not make them
/// "never committed" (an ISR member that lost its unflushed tail in an unclean shutdown
/// stays electable before KIP-966's ELR — the failure the ELR was made for), yet
/// `leadership::clean::apply` lowers the error to info and appends "was never committed".
#[test]
fn clean_election_does_not_silence_an_acknowledged_loss() {
    let b = moved_away(50);
    let v = b.check();
    for (name, fs) in [("scan", &v.scan.findings), ("merge", &v.merge.findings)] {
        let div: Vec<_> = fs
            .iter()
            .filter(|f| f.kind == Kind::ReplicaDivergence)
            .collect();
        assert!(!div.is_empty(), "{name}: no divergence");
        for f in div {
            let acked = f.evidence.pointer("/truncation/acknowledged") == Some(&true.into());
            assert!(acked, "{name}: {:#?}", f.evidence);
            assert!(
                f.severity >= Severity::Error,
                "{name}: acknowledged loss lowered to {:?}: {}",
                f.severity,
                f.message
            );
        }
    }
}

/// A transactional producer's transaction at offsets 10..=12, then idempotent writes every
/// 7 s for `steps`; `abort`: the ABORT after 15 min (the coordinator's timeout).
fn with_txn(steps: i64, abort: bool) -> PartitionBuilder {
    let p = Producer::transactional(6000, 0);
    let mut data = PartitionBuilder::new("orders", 0).start_time(T0);
    data.append(Batch::new(Producer::PLAIN).records(2).at(T0));
    data.append(Batch::new(p).records(3).at(T0 + 60_000));
    for i in 1..=steps {
        data.append(
            Batch::new(Producer::idempotent(77, 0))
                .records(1)
                .at(T0 + 60_000 + 7_000 * i),
        );
    }
    if abort {
        data.abort(p.bumped(), 0);
        for i in steps + 1..=steps + 10 {
            data.append(
                Batch::new(Producer::idempotent(77, 0))
                    .records(1)
                    .at(T0 + 60_000 + 7_000 * i),
            );
        }
    }
    data
}

/// Broker 1 (old leader, epoch 0) holds the transaction's ABORT; broker 3, out of the ISR
/// without it, was then elected leader (uncleanly) at epoch 1: its leader-epoch-checkpoint
/// holds `1 <its log end>` (`Partition.makeLeader` → `UnifiedLog.maybeAssignEpochStartOffset`
/// assigns the new epoch at the log end before any write). The ABORT on broker 1 is the old
/// leader's tail past broker 3's epoch-1 start: broker 1 truncates it when it follows
/// (`AbstractFetcherThread.truncateToEpochEndOffsets`), broker 3 never fetches it. Broker 3's
/// transaction is hanging on the leader (the coordinator completed the abort and resends
/// nothing), yet `demote_unreplicated_markers` (prefix check only, no epochs) makes it an
/// info open_transaction "closed on the copy consumers read".
#[test]
fn a_new_leaders_hanging_transaction_is_not_demoted_by_the_old_leaders_marker() {
    let mut b = Brokers::new();
    b.write(
        1,
        "data",
        LogDirBuilder::new(1).partition(with_txn(140, true)),
        None,
    );
    let behind = with_txn(138, false);
    let end = behind.log_end_offset();
    let dir = b.write(
        3,
        "data",
        LogDirBuilder::new(3)
            .partition(behind)
            .high_watermark("orders", 0, end),
        None,
    );
    std::fs::write(
        dir.join("orders-0").join("leader-epoch-checkpoint"),
        format!("0\n2\n0 0\n1 {end}\n"),
    )
    .unwrap();
    let v = b.check();
    for (name, fs) in [("scan", &v.scan.findings), ("merge", &v.merge.findings)] {
        let on3: Vec<_> = fs
            .iter()
            .filter(|f| {
                f.source.broker_id == Some(3)
                    && matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
            })
            .collect();
        assert!(!on3.is_empty(), "{name}: nothing on broker 3");
        for f in on3 {
            assert!(
                f.kind == Kind::HangingTransaction && f.severity >= Severity::Warning,
                "{name}: {:?} {:?}: {}",
                f.kind,
                f.severity,
                f.message
            );
        }
    }
}

/// Control: without broker 3's epoch-1 entry (a follower behind), the same data is the
/// demotion's intended case and must stay demoted.
#[test]
fn control_a_follower_behind_is_demoted() {
    let mut b = Brokers::new();
    b.write(
        1,
        "data",
        LogDirBuilder::new(1).partition(with_txn(140, true)),
        None,
    );
    let behind = with_txn(138, false);
    let end = behind.log_end_offset();
    b.write(
        3,
        "data",
        LogDirBuilder::new(3)
            .partition(behind)
            .high_watermark("orders", 0, end),
        None,
    );
    let v = b.check();
    let on3: Vec<_> = v
        .scan
        .findings
        .iter()
        .filter(|f| f.source.broker_id == Some(3) && f.kind == Kind::OpenTransaction)
        .collect();
    assert!(
        on3.iter()
            .any(|f| f.evidence.get("marker_on_replica").is_some()),
        "{:#?}",
        crate::kafka_quiet_cluster_cases::lines(&v.scan.findings)
    );
}
