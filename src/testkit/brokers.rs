//! Multi-broker scenarios: several brokers' log dirs under one root, each broker's own
//! (`<root>/<name>/data`), as `collect` runs on them one broker at a time and `scan` runs
//! on all of them at once. Each scenario returns every broker's log dirs, in broker order.

use super::files::{LogDirBuilder, topic_id_for};
use super::group_scenarios::{self as sc, GroupLog};
use super::metadata::MetadataLogBuilder;
use super::remote_log::TieredLog;
use super::scenario::{Batch, FaultKind, PartitionBuilder, Producer, Target};
use super::txns::{Cluster, Txn};
use crate::read::format::metadata::{MetaRecord, PartitionChange, PartitionRecord, RegisterBroker};
use std::io;
use std::path::{Path, PathBuf};

/// A scenario: its name and its writer.
pub type Scenario = (&'static str, fn(&Path) -> io::Result<Vec<Vec<PathBuf>>>);

/// Every scenario.
pub const SCENARIOS: &[Scenario] = &[
    ("replica_divergence", replica_divergence),
    ("cross_broker_txn", cross_broker_txn),
    ("groups", groups),
    ("non_live_copy", non_live_copy),
    ("two_clusters", two_clusters),
    ("unclean_election", unclean_election),
    ("tiered", tiered),
    ("lost_data", lost_data),
    ("lost_data_damaged_copy", lost_data_damaged_copy),
    ("stray_replicas", stray_replicas),
    ("tv2_first_sequence", tv2_first_sequence),
];

const T0: i64 = 1_700_000_000_000;
const UUID: &str = "7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29";

/// `n` batches of plain records, the one at `odd` (if any) with other values: a replica
/// that diverged there.
fn plain(topic: &str, partition: i32, n: usize, odd: Option<usize>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition)
        .start_time(T0)
        .leader_epoch(3);
    for i in 0..n {
        let v = if Some(i) == odd { "other" } else { "value" };
        p.append(Batch::new(Producer::PLAIN).values([format!("{v}-{i}a"), format!("{v}-{i}b")]));
        if i == n / 2 {
            p.roll();
        }
    }
    p
}

/// A transaction left open for 20 minutes: hanging.
fn hanging(topic: &str, partition: i32) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition).start_time(T0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p
}

fn broker(root: &Path, name: &str) -> PathBuf {
    root.join(name).join("data")
}

/// Write `p` into log dir `ld` as the directory `name` (a copy's name).
fn write_as(p: PartitionBuilder, ld: &Path, name: &str) -> io::Result<()> {
    let stage = ld.join(format!("stage-{name}"));
    let m = p.write(&stage)?;
    std::fs::rename(m.dir, ld.join(name))?;
    std::fs::remove_dir(stage)
}

/// Three brokers of cluster `c1` holding `orders-0` (the third's copy differs at its
/// sixth batch) and two holding `payments-0` (identical).
pub fn replica_divergence(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let mut out = Vec::new();
    for id in 1..=3 {
        let ld = broker(root, &format!("broker-{id}"));
        let mut b = LogDirBuilder::new(id).cluster_id("c1").partition(plain(
            "orders",
            0,
            10,
            (id == 3).then_some(5),
        ));
        if id < 3 {
            b = b.partition(plain("payments", 0, 6, None));
        }
        b.write(&ld)?;
        out.push(vec![ld]);
    }
    Ok(out)
}

/// A transaction over `orders-0` (broker 1), `orders-1` and `payments-0` (broker 2)
/// whose coordinator, `__transaction_state`, is on broker 3; one COMMIT marker is missing
/// on `payments-0` (hanging there), and a later transaction is left open.
pub fn cross_broker_txn(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    const A: (&str, i32) = ("orders", 0);
    const B: (&str, i32) = ("orders", 1);
    const C: (&str, i32) = ("payments", 0);
    let mut c = Cluster::new(Some("c1")).coordinator_partitions(50);
    let p = c.run(&Txn::new("app", Producer::transactional(7, 1), &[A, B]));
    let p = c.run(&Txn::new("app", p, &[A, B, C]).skip_marker_on(C));
    c.advance(20 * 60_000);
    c.run(&Txn::new("app", p, &[A, B]));
    c.run(&Txn::new("billing", Producer::transactional(9, 0), &[B, C]).open());
    c.advance(20 * 60_000);
    c.plain(A, 2);
    let dirs = [
        c.write_only(&broker(root, "broker-1"), 1, |tp| tp == A, false)?,
        c.write_only(&broker(root, "broker-2"), 2, |tp| tp != A, false)?,
        c.write_only(&broker(root, "broker-3"), 3, |_| false, true)?,
    ];
    Ok(dirs.into_iter().map(|d| vec![d]).collect())
}

/// Cluster `c1`: `orders-0` on broker 1 (live, and a `-future` copy of it) whose producer
/// 23 writes its first batch at sequence 3 (epoch 1, transactional), and broker 2 holding
/// `__transaction_state-1`, where transactional id `app` records that transaction TV2
/// (Ongoing, value v1, ClientTransactionVersion 2, listing `orders-0`): a TV2 leader
/// refuses the batch (`invalid_first_sequence` on the live copy alone).
pub fn tv2_first_sequence(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    use super::scenario::Rec;
    use super::txnlog::{TxnValue, key, state};
    let data = || {
        let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
        p.append(
            Batch::new(Producer::transactional(23, 1))
                .records(2)
                .sequence(3),
        );
        p
    };
    let ld1 = broker(root, "broker-1");
    let ld2 = broker(root, "broker-2");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(data())
        .write(&ld1)?;
    write_as(data(), &ld1, &format!("orders-0.{UUID}-future"))?;
    let ongoing = TxnValue::new(23, 1, state::ONGOING)
        .partitions(&[("orders", &[0])])
        .v1(-1, -1, 2)
        .times(T0, T0);
    let mut c = PartitionBuilder::new("__transaction_state", 1);
    c.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(key("app"), ongoing.encode()))
            .at(T0),
    );
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(c)
        .write(&ld2)?;
    Ok(vec![vec![ld1], vec![ld2]])
}

/// `__consumer_offsets` partitions on two brokers: a clean classic and consumer group on
/// broker 1, a streams group left at the deletion barrier on broker 2, and the same
/// partition replicated on both.
pub fn groups(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let mut clean = GroupLog::new();
    sc::classic_group(&mut clean, "billing");
    sc::consumer_group(&mut clean, "orders-app");
    let held = sc::streams_held_back("app");
    let mut out = Vec::new();
    for id in 1..=2 {
        let ld = broker(root, &format!("broker-{id}"));
        LogDirBuilder::new(id).cluster_id("c1").write(&ld)?;
        clean.write(&ld, 0)?;
        if id == 2 {
            held.write(&ld, 7)?;
        }
        out.push(vec![ld]);
    }
    Ok(out)
}

/// Broker 1 with two log dirs: `orders-0` live in the first, its `-future` copy (an
/// inter-log-dir move) in the second, both with a hanging transaction, and a `-delete`
/// copy of `orders-1`; broker 2 with the live replica of `orders-0`.
pub fn non_live_copy(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let ld1 = broker(root, "broker-1");
    let ld2 = root.join("broker-1").join("data-2");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(hanging("orders", 0))
        .write(&ld1)?;
    LogDirBuilder::new(1).cluster_id("c1").write(&ld2)?;
    write_as(
        hanging("orders", 0),
        &ld2,
        &format!("orders-0.{UUID}-future"),
    )?;
    write_as(
        hanging("orders", 1),
        &ld1,
        &format!("orders-1.{UUID}-delete"),
    )?;
    let ld3 = broker(root, "broker-2");
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(hanging("orders", 0))
        .write(&ld3)?;
    Ok(vec![vec![ld1, ld2], vec![ld3]])
}

/// Two clusters with the same broker ids and topic names: `orders-0` on both brokers of
/// each (the copies of cluster B differ from A's, and from each other), a hanging
/// transaction on cluster A's `payments-0`, the coordinator's log only in cluster B.
pub fn two_clusters(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let mut out = Vec::new();
    for (cluster, odd) in [("clusterA", None), ("clusterB", Some(2))] {
        let mut c = Cluster::new(Some(cluster)).coordinator(0);
        c.run(&Txn::new("app", Producer::transactional(900, 1), &[("payments", 0)]).open());
        c.advance(20 * 60_000);
        c.plain(("payments", 0), 1);
        for id in 1..=2 {
            let ld = broker(root, &format!("{cluster}-{id}"));
            let with_coordinator = cluster == "clusterB" && id == 2;
            c.write_only(&ld, id, |_| id == 1, with_coordinator)?;
            let odd = odd.filter(|_| id == 2);
            plain("orders", 0, 8, odd).write(&ld)?;
            out.push(vec![ld]);
        }
    }
    Ok(out)
}

const HOUR: i64 = 3_600_000;

/// `orders-0`'s `PartitionRecord` (topic id [`topic_id_for`]`("orders")`), on `replicas`,
/// led by `leader` at `epoch` with `isr`.
pub fn orders_partition(replicas: &[i32], isr: &[i32], leader: i32, epoch: i32) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch: epoch,
        partition_epoch: epoch,
        ..Default::default()
    })
}

/// A `PartitionChangeRecord` of `orders-0`, as `f` sets it.
pub fn orders_change(f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    let mut c = PartitionChange {
        partition_id: 0,
        topic_id: topic_id_for("orders"),
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::PartitionChange(c)
}

fn registration(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + i64::from(id),
        ..Default::default()
    })
}

/// 100 offsets of `orders-0` at leader epoch 5 (10 batches of 10).
fn epoch_five() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(5);
    for i in 0..10 {
        p.append(Batch::new(Producer::PLAIN).values((0..10).map(|j| format!("v{i}-{j}"))));
    }
    p
}

/// An unclean election (KRaft): `orders-0` on brokers 1 and 2 at epoch 5, the ISR shrinks
/// to broker 1, which writes 100–119 (high watermark 115) and is fenced; broker 2 is
/// elected outside the ISR (recovery state 1) and writes from 100 at epoch 6. The metadata
/// log is on broker 2; broker 1's `replication-offset-checkpoint` measures the loss.
pub fn unclean_election(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let mut b1 = epoch_five();
    b1.append(Batch::new(Producer::PLAIN).values((0..20).map(|j| format!("a{j}"))));
    let mut b2 = epoch_five();
    b2.advance_time(2 * HOUR);
    b2.set_leader_epoch(6);
    b2.append(Batch::new(Producer::PLAIN).values((0..10).map(|j| format!("b{j}"))));
    let (ld1, ld2) = (broker(root, "broker-1"), broker(root, "broker-2"));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(b1)
        .high_watermark("orders", 0, 115)
        .write(&ld1)?;
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(b2)
        .write(&ld2)?;
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        registration(1),
        registration(2),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        orders_partition(&[1, 2], &[1, 2], 1, 5),
    ]);
    m.advance(1000);
    m.batch(&[orders_change(|c| c.isr = Some(vec![1]))]);
    m.advance(HOUR);
    m.batch(&[
        MetaRecord::FenceBroker { id: 1, epoch: 11 },
        orders_change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
    ]);
    m.write(&ld2)?;
    Ok(vec![vec![ld1], vec![ld2]])
}

/// A tiered `orders-0` (KIP-405) of five segments of 20 offsets at leader epochs 0, 0, 1,
/// 1→2, 2: segments 0, 1 and 3 copied to remote storage, 0 then deleted by retention,
/// the local log from segment 3; segment 2 (offsets 40–59) is in neither: a gap between
/// the checkpointed log start (20) and the local log start (60).
pub fn tiered(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let mut t = TieredLog::new(tiered_history());
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    t.copy(3);
    t.local_from(3);
    let m = t.write(root)?;
    Ok(vec![vec![m.log_dir]])
}

/// `orders-0` in five segments of 20 offsets: 0–19 and 20–39 at leader epoch 0; 40–59 at
/// epoch 1; 60–79 at epoch 1 then 2 from 70; 80–99 at epoch 2 (the active segment).
pub fn tiered_history() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    for seg in 0..5 {
        if seg > 0 {
            p.roll();
        }
        for half in 0..2 {
            let epoch = match (seg, half) {
                (0 | 1, _) => 0,
                (2, _) | (3, 0) => 1,
                _ => 2,
            };
            p.append(Batch::new(Producer::PLAIN).records(10).leader_epoch(epoch));
        }
    }
    p
}

/// `topic-0`: 10 batches of 2 records (offsets 0..=19), segments at 0 and 8; with
/// `damage`, a byte inside the records of the second segment's first batch (offset 8)
/// flipped: recovery truncates the log to offset 8.
fn damaged_at_eight(topic: &str, damage: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, 0)
        .start_time(T0)
        .leader_epoch(3);
    for i in 0..10 {
        p.append(Batch::new(Producer::PLAIN).values([format!("v-{i}a"), format!("v-{i}b")]));
        if i == 3 {
            p.roll();
        }
    }
    if damage {
        let flip = FaultKind::FlipByte {
            position: 70,
            mask: 0x20,
        };
        p.fault(Target::LastLog, flip);
    }
    p
}

/// Acknowledged data lost at the next start: broker 1 shut down uncleanly with `orders-0`
/// and `payments-0` damaged at offset 8, below their checkpointed high watermark 20;
/// broker 2 holds an intact copy of `orders-0` (a warning naming it), no broker another
/// copy of `payments-0` (an error).
pub fn lost_data(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let (ld1, ld2) = (broker(root, "broker-1"), broker(root, "broker-2"));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark("orders", 0, 20)
        .high_watermark("payments", 0, 20)
        .partition(damaged_at_eight("orders", true))
        .partition(damaged_at_eight("payments", true))
        .write(&ld1)?;
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(damaged_at_eight("orders", false))
        .write(&ld2)?;
    Ok(vec![vec![ld1], vec![ld2]])
}

/// `lost_data`'s broker 1 (`orders-0` damaged at offset 8, below its high watermark 20),
/// and broker 2's copy with damage of its own in that range (a byte of its second
/// segment's third batch flipped): no copy holds the lost range (`cluster::lost`,
/// `not_holding: damaged_at:…`), which a merge must see as the scan does.
pub fn lost_data_damaged_copy(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let (ld1, ld2) = (broker(root, "broker-1"), broker(root, "broker-2"));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .clean_shutdown(false)
        .high_watermark("orders", 0, 20)
        .partition(damaged_at_eight("orders", true))
        .write(&ld1)?;
    let mut other = damaged_at_eight("orders", false);
    other.fault(
        Target::LastLog,
        FaultKind::FlipByte {
            position: 230,
            mask: 0x20,
        },
    );
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(other)
        .write(&ld2)?;
    Ok(vec![vec![ld1], vec![ld2]])
}

/// The topic id of `again`'s second incarnation in [`stray_replicas`].
pub fn again_recreated_id() -> [u8; 16] {
    topic_id_for("again (recreated)")
}

/// `topic`'s `TopicRecord` under `id` and its partition 0 on `replicas`, led by the first
/// at leader epoch 3 (the epoch the scenarios' plain partitions write).
pub fn topic_with_partition(topic: &str, id: [u8; 16], replicas: &[i32]) -> [MetaRecord; 2] {
    [
        MetaRecord::Topic {
            name: topic.into(),
            topic_id: id,
        },
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: id,
            replicas: replicas.to_vec(),
            isr: replicas.to_vec(),
            leader: replicas[0],
            leader_epoch: 3,
            partition_epoch: 3,
            ..Default::default()
        }),
    ]
}

/// Stray replicas (`stray_replica`) in cluster `c1`, the metadata log on broker 2:
/// `orders-0` reassigned from [1, 2] to [2, 3] (broker 1's copy is stray, broker 2's is
/// not), `gone-0` deleted (broker 1's copy), `again-0` deleted and created again under
/// another id (broker 2 holds the first incarnation), `bare-0` assigned to broker 2, whose
/// copy has no `partition.metadata` (stray from Kafka 3.7.1).
pub fn stray_replicas(root: &Path) -> io::Result<Vec<Vec<PathBuf>>> {
    let (ld1, ld2) = (broker(root, "broker-1"), broker(root, "broker-2"));
    let small = |topic: &str| plain(topic, 0, 2, None);
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(small("orders"))
        .partition(small("gone"))
        .write(&ld1)?;
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(small("orders"))
        .partition(small("again"))
        .partition(small("bare"))
        .write(&ld2)?;
    std::fs::remove_file(ld2.join("bare-0").join("partition.metadata"))?;
    let mut m = MetadataLogBuilder::new(T0);
    let mut first = vec![
        registration(1),
        registration(2),
        registration(3),
        orders_topic(),
        orders_partition(&[1, 2], &[1, 2], 1, 3),
    ];
    for (t, r) in [("gone", [1]), ("again", [2]), ("bare", [2])] {
        first.extend(topic_with_partition(t, topic_id_for(t), &r));
    }
    m.batch(&first);
    m.advance(1000);
    m.batch(&[
        orders_change(|c| {
            c.replicas = Some(vec![2, 3]);
            c.isr = Some(vec![2, 3]);
            c.leader = 2;
        }),
        MetaRecord::RemoveTopic {
            topic_id: topic_id_for("gone"),
        },
        MetaRecord::RemoveTopic {
            topic_id: topic_id_for("again"),
        },
    ]);
    m.advance(1000);
    m.batch(&topic_with_partition(
        "again",
        again_recreated_id(),
        &[2, 3],
    ));
    m.write(&ld2)?;
    Ok(vec![vec![ld1], vec![ld2]])
}

fn orders_topic() -> MetaRecord {
    MetaRecord::Topic {
        name: "orders".into(),
        topic_id: topic_id_for("orders"),
    }
}
