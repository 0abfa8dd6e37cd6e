//! The KRaft metadata log as the controller and every broker keep it (`__cluster_metadata-0`
//! beside the data, out of the log dir's offset checkpoints, with `quorum-state`, the
//! indexes, producer snapshots, `leader-epoch-checkpoint` and a metadata snapshot), over a
//! cluster's ordinary life: registrations, topic creation, ISR shrink and expand, a broker's
//! controlled shutdown, fencing, restart and unfencing, a preferred-leader election, a
//! controller restart, and a topic deletion whose replicas the brokers renamed `-delete`.

use super::{Brokers, T0, replica};
use klogscan::finding::Kind;
use klogscan::read::format::metadata::{
    BrokerRegistrationChange, MetaRecord, PartitionChange, PartitionRecord, RegisterBroker,
};
use klogscan::testkit::files::{encode_offset_checkpoint, topic_id_for};
use klogscan::testkit::metadata::{encode, snapshot_footer_value, snapshot_header_value};
use klogscan::testkit::{
    Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
};
use std::path::Path;

/// The controller quorum's one voter (a dedicated controller node).
pub(crate) const CONTROLLER: i32 = 3000;

/// `LeaderChangeMessage` v0: the leader, the voters and the voters that granted it.
fn leader_change(leader: i32, voters: &[i32]) -> Vec<u8> {
    let mut v = vec![0, 0];
    v.extend_from_slice(&leader.to_be_bytes());
    for _ in 0..2 {
        v.push(voters.len() as u8 + 1);
        for id in voters {
            v.extend_from_slice(&id.to_be_bytes());
            v.push(0);
        }
    }
    v.push(0);
    v
}

/// A `__cluster_metadata-0` replica as `KafkaRaftClient` writes it: each epoch opens with a
/// `LeaderChange` control batch (`LeaderState.appendLeaderChangeMessage`), each controller
/// write is one batch whose records share the batch's append time
/// (`BatchBuilder.writeRecord`), and the replicas of brokers and controllers are
/// byte-identical (`KafkaRaftClient.appendAsFollower`).
pub(crate) struct MetaLog {
    pub p: PartitionBuilder,
    /// `(end offset, epoch, image)` of the snapshot to write.
    snapshot: Option<(i64, i32, Vec<MetaRecord>)>,
    epoch: i32,
}

impl MetaLog {
    /// A log whose first epoch (1) starts at `t` ms.
    pub(crate) fn new(t: i64) -> MetaLog {
        Self::starting_at(t, 0)
    }

    /// [`MetaLog::new`] whose segments start at `start`: the records below it are in a
    /// snapshot the log continues from ([`MetaLog::snapshot_at`]).
    pub(crate) fn starting_at(t: i64, start: i64) -> MetaLog {
        let p = PartitionBuilder::new("__cluster_metadata", 0)
            .start_offset(start)
            .start_time(t)
            .broker_files(PartitionFileOptions::default());
        let mut m = MetaLog {
            p,
            snapshot: None,
            epoch: 0,
        };
        m.elect();
        m
    }

    /// A snapshot ending at `end` (its records' state below `end`) holding `image`.
    pub(crate) fn snapshot_at(&mut self, end: i64, image: Vec<MetaRecord>) {
        self.snapshot = Some((end, self.epoch, image));
    }

    /// The next epoch of the quorum (the controller restarted and won the election).
    pub(crate) fn elect(&mut self) {
        self.epoch += 1;
        self.p.set_leader_epoch(self.epoch);
        let lc = leader_change(CONTROLLER, &[CONTROLLER]);
        self.p.control_raw(Producer::PLAIN, 2, Some(lc));
    }

    /// Move the clock to `t` ms (never back).
    pub(crate) fn at(&mut self, t: i64) -> &mut Self {
        let now = self.p.now();
        self.p.advance_time((t - now).max(0));
        self
    }

    /// One controller write; returns the offset of its first record.
    pub(crate) fn batch(&mut self, records: &[MetaRecord]) -> i64 {
        let base = self.p.next_offset();
        let t = self.p.now();
        let mut b = Batch::new(Producer::PLAIN).leader_epoch(self.epoch).at(t);
        for r in records {
            b = b.record(Rec::value(encode(r)).at(t));
        }
        self.p.append(b);
        base
    }

    /// One controller write of record values as they are (`values`: framed metadata
    /// records, e.g. of a version the testkit's encoder does not write).
    pub(crate) fn raw(&mut self, values: Vec<Vec<u8>>) -> i64 {
        let base = self.p.next_offset();
        let t = self.p.now();
        let mut b = Batch::new(Producer::PLAIN).leader_epoch(self.epoch).at(t);
        for v in values {
            b = b.record(Rec::value(v).at(t));
        }
        self.p.append(b);
        base
    }

    /// A snapshot at the log's current end holding `image` (what `MetadataImage.write`
    /// writes of the state there), as the controller's `SnapshotGenerator` takes it.
    pub(crate) fn snapshot_here(&mut self, image: Vec<MetaRecord>) {
        self.snapshot = Some((self.p.next_offset(), self.epoch, image));
    }

    /// Write the replica into log dir `dir` (beside the data, out of its offset
    /// checkpoints: `KafkaMetadataLog` opens its `UnifiedLog` outside `LogManager`), with the
    /// `quorum-state` every node keeps (`FileQuorumStateStore`).
    pub(crate) fn write(&self, dir: &Path) {
        self.p.write(dir).unwrap();
        let part = dir.join("__cluster_metadata-0");
        std::fs::write(
            part.join("quorum-state"),
            format!(
                "{{\"clusterId\":\"\",\"leaderId\":{CONTROLLER},\"leaderEpoch\":{},\"votedId\":-1,\
                 \"appliedOffset\":0,\"currentVoters\":[{{\"voterId\":{CONTROLLER}}}],\"data_version\":0}}",
                self.epoch
            ),
        )
        .unwrap();
        if let Some((end, epoch, image)) = &self.snapshot {
            write_snapshot(&part, *end, *epoch, image);
        }
    }
}

/// `<end>-<epoch>.checkpoint` framed as `RecordsSnapshotWriter` frames it: the header
/// control batch, the image, the footer.
fn write_snapshot(part: &Path, end: i64, epoch: i32, image: &[MetaRecord]) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = PartitionBuilder::new("__cluster_metadata", 0)
        .leader_epoch(epoch)
        .start_time(T0);
    s.control_raw(Producer::PLAIN, 3, Some(snapshot_header_value(T0)));
    let mut b = Batch::new(Producer::PLAIN).leader_epoch(epoch).at(T0);
    for r in image {
        b = b.record(Rec::value(encode(r)).at(T0));
    }
    s.append(b);
    s.control_raw(Producer::PLAIN, 4, Some(snapshot_footer_value()));
    s.write(tmp.path()).unwrap();
    let from = tmp
        .path()
        .join("__cluster_metadata-0/00000000000000000000.log");
    std::fs::copy(from, part.join(format!("{end:020}-{epoch:010}.checkpoint"))).unwrap();
}

// ----- records ----------------------------------------------------------------------------

pub(crate) fn metadata_version(level: i16) -> MetaRecord {
    MetaRecord::FeatureLevel {
        name: "metadata.version".into(),
        feature_level: level,
    }
}

/// Broker `id`'s registration at broker epoch `epoch` (`ClusterControlManager.registerBroker`:
/// fenced until its first heartbeat after catching up), `incarnation` its process.
pub(crate) fn register(id: i32, epoch: i64, incarnation: u8, fenced: bool) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [incarnation; 16],
        broker_epoch: epoch,
        fenced,
        ..Default::default()
    })
}

/// A `BrokerRegistrationChangeRecord`: `fenced` 1 fences, -1 unfences
/// (`BrokerRegistrationFencingChange`); `shutdown` 1: in controlled shutdown.
pub(crate) fn broker_change(id: i32, epoch: i64, fenced: i8, shutdown: i8) -> MetaRecord {
    MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
        broker_id: id,
        broker_epoch: epoch,
        fenced,
        in_controlled_shutdown: shutdown,
        ..Default::default()
    })
}

pub(crate) fn topic(name: &str) -> MetaRecord {
    MetaRecord::Topic {
        name: name.into(),
        topic_id: topic_id_for(name),
    }
}

/// `topic`-`n` on `replicas`, ISR `isr`, led by `leader` at `epoch` (partition epoch
/// `part_epoch`).
pub(crate) fn partition(
    topic: &str,
    n: i32,
    replicas: &[i32],
    isr: &[i32],
    (leader, epoch, part_epoch): (i32, i32, i32),
) -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: n,
        topic_id: topic_id_for(topic),
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch: epoch,
        partition_epoch: part_epoch,
        ..Default::default()
    })
}

/// A `PartitionChangeRecord` of `topic`-`n`, as `f` sets it.
pub(crate) fn change(topic: &str, n: i32, f: impl FnOnce(&mut PartitionChange)) -> MetaRecord {
    let mut c = PartitionChange {
        partition_id: n,
        topic_id: topic_id_for(topic),
        ..Default::default()
    };
    f(&mut c);
    MetaRecord::PartitionChange(c)
}

pub(crate) fn isr(topic: &str, n: i32, isr: &[i32]) -> MetaRecord {
    change(topic, n, |c| c.isr = Some(isr.to_vec()))
}

/// Rename `<dir>/<topic>-<n>` as `LogManager.asyncDelete` does (`<topic>-<n>.<uuid>-delete`)
/// and take it out of the log dir's checkpoints (`LogManager.checkpointLogRecoveryOffsetsInDir`,
/// `checkpointLogStartOffsetsInDir`, and the high-watermark checkpoint no longer listing the
/// stopped partition: `ReplicaManager.checkpointHighWatermarks`).
pub(crate) fn delete_replica(dir: &Path, topic: &str, n: i32, ends: &[(&str, i32, i64)]) {
    let uuid = "5b3c1d2e9f8a4b7c8d6e5f4a3b2c1d0e";
    std::fs::rename(
        dir.join(format!("{topic}-{n}")),
        dir.join(format!("{topic}-{n}.{uuid}-delete")),
    )
    .unwrap();
    let kept: Vec<(String, i32, i64)> = (ends.iter())
        .map(|(t, p, o)| (t.to_string(), *p, *o))
        .collect();
    for f in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        std::fs::write(dir.join(f), encode_offset_checkpoint(&kept)).unwrap();
    }
}

// ----- the cluster's life -----------------------------------------------------------------

pub(crate) const SEC: i64 = 1000;

/// `orders-1`'s batches per leader epoch: led by 2 (epoch 0), by 3 while 2 restarts (1), by
/// 2 again after the preferred-leader election (2).
const ORDERS_1: [(i32, usize); 3] = [(0, 6), (1, 4), (2, 4)];

/// The metadata log of a three-broker cluster at MV 3.6-IV2 (ISR shrinks bump no leader
/// epoch: `MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink`), over the data's times
/// (`T0` + 1 s per batch).
fn life() -> MetaLog {
    let mut m = bootstrap();
    m.batch(&[MetaRecord::ProducerIds {
        broker_id: 1,
        broker_epoch: broker_epoch_at_start(1),
        next_producer_id: 1000,
    }]);
    m.at(T0 - 30 * SEC);
    m.batch(&[
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
        partition("orders", 1, &[2, 3, 1], &[2, 3, 1], (2, 0, 0)),
    ]);
    m.batch(&[
        topic("events"),
        partition("events", 0, &[3, 1, 2], &[3, 1, 2], (3, 0, 0)),
    ]);
    // The image there, as a snapshot (`MetadataImage.write`: features, cluster, topics,
    // producer ids).
    let mut image = vec![metadata_version(14)];
    image.extend((1..=3).map(|id| register(id, broker_epoch_at_start(id), id as u8, false)));
    image.extend([
        topic("events"),
        partition("events", 0, &[3, 1, 2], &[3, 1, 2], (3, 0, 0)),
        topic("orders"),
        partition("orders", 0, &[1, 2, 3], &[1, 2, 3], (1, 0, 0)),
        partition("orders", 1, &[2, 3, 1], &[2, 3, 1], (2, 0, 0)),
        MetaRecord::ProducerIds {
            broker_id: 1,
            broker_epoch: broker_epoch_at_start(1),
            next_producer_id: 1000,
        },
    ]);
    m.snapshot_here(image);
    // Broker 3 lags for a while: shrink and expand (AlterPartition from the leader,
    // `ReplicationControlManager.alterPartition`).
    m.at(T0 + 2 * SEC);
    m.batch(&[isr("orders", 0, &[1, 2])]);
    m.at(T0 + 3 * SEC);
    m.batch(&[isr("orders", 0, &[1, 2, 3])]);
    // Broker 2's controlled shutdown (`ReplicationControlManager.handleBrokerInControlledShutdown`:
    // leadership moves away, it leaves every ISR), then its session ends (fenced).
    m.at(T0 + 5 * SEC + 500);
    let shutdown = vec![
        broker_change(2, broker_epoch_at_start(2), 0, 1),
        change("orders", 1, |c| {
            c.leader = 3;
            c.isr = Some(vec![3, 1]);
        }),
        isr("orders", 0, &[1, 3]),
        isr("events", 0, &[3, 1]),
    ];
    m.batch(&shutdown);
    m.at(T0 + 6 * SEC);
    m.batch(&[broker_change(2, broker_epoch_at_start(2), 1, 0)]);
    // It restarts: a new incarnation registers at a new broker epoch, is unfenced once
    // caught up, and the leaders add it back to their ISR.
    m.at(T0 + 7 * SEC);
    let again = m.p.next_offset();
    assert_eq!(again, BROKER_2_AGAIN);
    m.batch(&[register(2, again, 22, true)]);
    m.at(T0 + 8 * SEC);
    m.batch(&[broker_change(2, again, -1, 0)]);
    m.at(T0 + 8 * SEC + 500);
    m.batch(&[isr("orders", 0, &[1, 3, 2])]);
    m.batch(&[isr("orders", 1, &[3, 1, 2])]);
    m.batch(&[isr("events", 0, &[3, 1, 2])]);
    // `auto.leader.rebalance.enable`: the preferred replica (2) leads orders-1 again
    // (`QuorumController.maybeBalancePartitionLeaders` → `PartitionChangeBuilder` with
    // `Election.PREFERRED`).
    m.at(T0 + 9 * SEC + 500);
    m.batch(&[change("orders", 1, |c| c.leader = 2)]);
    // The controller restarts: a new quorum epoch.
    m.at(T0 + 15 * SEC);
    m.elect();
    // `events` deleted (`ReplicationControlManager.deleteTopic`).
    m.at(T0 + 20 * SEC);
    m.batch(&[MetaRecord::RemoveTopic {
        topic_id: topic_id_for("events"),
    }]);
    m
}

/// A three-broker cluster's metadata log from its start (`T0` - 60 s): the first quorum
/// epoch's `LeaderChange`, MV 3.6-IV2 (`QuorumController`'s bootstrap records), brokers 1–3
/// registering fenced and unfenced once caught up (`BrokerRegistrationChangeRecord` with
/// `fenced` -1: `ClusterControlManager`/`BrokerHeartbeatManager`); the clock at `T0` - 40 s.
pub(crate) fn bootstrap() -> MetaLog {
    bootstrap_at(14, &|_| Vec::new())
}

/// [`bootstrap`] at metadata version `level`, each broker registering the `directory.id`s
/// of its log dirs `dirs(id)` (JBOD in KRaft, MV 3.7-IV2 and later: KIP-858).
pub(crate) fn bootstrap_at(level: i16, dirs: &dyn Fn(i32) -> Vec<[u8; 16]>) -> MetaLog {
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&[metadata_version(level)]);
    for id in 1..=3 {
        m.at(T0 - (50 - i64::from(id)) * SEC);
        let epoch = m.p.next_offset();
        assert_eq!(epoch, broker_epoch_at_start(id));
        let mut r = register(id, epoch, id as u8, true);
        if let MetaRecord::RegisterBroker(b) = &mut r {
            b.log_dirs = dirs(id);
        }
        m.batch(&[r]);
    }
    m.at(T0 - 40 * SEC);
    let unfence: Vec<MetaRecord> = (1..=3)
        .map(|id| broker_change(id, broker_epoch_at_start(id), -1, 0))
        .collect();
    m.batch(&unfence);
    m
}

/// Broker 2's broker epoch after its restart.
const BROKER_2_AGAIN: i64 = 21;

/// The broker epoch of broker `id`'s first registration: the offset of its record (offset
/// 0 the `LeaderChange`, 1 the metadata version, then one registration per broker).
pub(crate) fn broker_epoch_at_start(id: i32) -> i64 {
    1 + i64::from(id)
}

/// The whole cluster: brokers 1–3 with their replicas of `orders-0`, `orders-1` and of
/// `events-0`, which broker `renamed` or every broker (`None`) renamed `-delete` when the
/// topic was deleted, each with its copy of the metadata log; the controller's log dir with
/// its own.
fn cluster(renamed: Option<i32>) -> Brokers {
    let mut b = Brokers::new();
    for id in 1..=3 {
        let orders_0 = replica("orders", 0, &[(0, 12)]);
        let orders_1 = replica("orders", 1, &ORDERS_1);
        let events = replica("events", 0, &[(0, 5)]);
        let ends = [
            ("orders", 0, orders_0.log_end_offset()),
            ("orders", 1, orders_1.log_end_offset()),
        ];
        let ld = LogDirBuilder::new(id)
            .partition(orders_0)
            .partition(orders_1)
            .partition(events);
        let epoch = if id == 2 {
            BROKER_2_AGAIN
        } else {
            broker_epoch_at_start(id)
        };
        let dir = b.write(id, "data", ld, Some(epoch));
        if renamed.is_none_or(|r| r == id) {
            delete_replica(&dir, "events", 0, &ends);
        }
        life().write(&dir);
    }
    let controller = b.controller(CONTROLLER);
    life().write(&controller);
    b
}

/// Registrations, topic creation, ISR shrink and expand
/// (`ReplicationControlManager.alterPartition`; at MV 3.6-IV2 a shrink bumps no leader
/// epoch, `PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded`), broker 2's
/// controlled shutdown (`handleBrokerInControlledShutdown`: leadership of `orders-1` to 3 at
/// epoch 1, broker 2 out of every ISR), its fencing, new registration at a new broker epoch
/// and unfencing (`ClusterControlManager.registerBroker`, `BrokerHeartbeatManager`), the
/// preferred-leader election that gives `orders-1` back to 2 at epoch 2, a controller
/// restart (a new quorum epoch, `LeaderChange`), and `events` deleted: every broker renamed
/// its replica `-delete` (`ReplicaManager.applyDelta` → `stopPartitions` →
/// `LogManager.asyncDelete`) and shut down before `file.delete.delay.ms` removed it. Every
/// replica of a partition is byte-identical (`ReplicaFetcherThread.processPartitionData`).
/// The snapshot holds the image after the topics' creation (`MetadataImage.write`).
#[test]
fn metadata_log_over_a_clusters_life_with_a_deleted_topic() {
    let b = cluster(None);
    let v = b.check();
    v.assert_quiet();
    let live: Vec<_> = (v.scan.partitions.iter())
        .filter(|p| p.topic == "__cluster_metadata")
        .collect();
    assert_eq!(live.len(), 4, "three brokers and the controller");
}

/// Near miss of the above: broker 1 shut down before it applied the deletion, and its
/// replica of `events-0` is still live: the image at the log's end has no such topic, so its
/// next start finds a stray log (`LogManager.isStrayKraftReplica`): `stray_replica`. The
/// metadata log was replayed against the data.
#[test]
fn a_deleted_topics_replica_left_live_is_stray() {
    let b = cluster(Some(2));
    let v = b.check();
    let stray: Vec<_> = (v.scan.findings.iter())
        .filter(|f| f.kind == Kind::StrayReplica)
        .map(|f| (f.source.broker_id, f.topic.as_str()))
        .collect();
    assert_eq!(stray, [(Some(1), "events"), (Some(3), "events")]);
}
