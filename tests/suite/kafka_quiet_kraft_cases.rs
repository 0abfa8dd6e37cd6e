//! False alarms on healthy KRaft controller quorums and their metadata logs: the copies of
//! `__cluster_metadata-0` that three dedicated controllers (voters 3000–3002) and two
//! brokers (observers 1 and 2) keep over a cluster's life, each with its `quorum-state`,
//! must draw nothing at warning or above from `scan`, `verify` and the `merge` of the
//! nodes' bundles (`Brokers::check` of `kafka_quiet_cluster_cases`). Each healthy shape has
//! a twin that differs by the one fact that makes it wrong, which must be reported.
//!
//! * [`quorum`]: copies at different ends after several elections (`LeaderChangeMessage`
//!   control records, epochs rising: `KafkaRaftClientTest`, `LeaderState`), `quorum-state`
//!   v0 and v1 (`FileQuorumStateStoreTest`, `QuorumStateTest`), a follower's tail truncated
//!   after an election (`KafkaRaftClientTest.testFollowerLogReconciliation`) or still
//!   waiting to be.
//! * [`snapshots`]: `<end>-<epoch>.checkpoint` snapshots, the log cleaned below the latest
//!   (`KafkaMetadataLogTest.testAdvanceLogStartOffsetAfterCleaning`, `deleteBeforeSnapshot`),
//!   a broker that loaded a snapshot alone (`testCreateReplicatedLogTruncatesFully`), KIP-853
//!   snapshots with `KRaftVersionRecord`/`VotersRecord` (`RecordsSnapshotWriterTest`).
//! * [`records`]: metadata transactions (KIP-868: `MetadataBatchLoaderTest`,
//!   `QuorumControllerTest.testActivationRecordsPartialTransaction`), KIP-853 voter changes
//!   in the log (`KRaftControlRecordStateMachineTest`), reassignment, topic deletion and
//!   recreation, fencing, controlled shutdown, ELR and feature upgrades
//!   (`ReplicationControlManagerTest`, `QuorumControllerTest`, `MetadataLoaderTest`).
//!
//! Kafka sources: the apache/kafka mirror's trunk of 2024-10. ZooKeeper-migration records
//! are `kafka_quiet_upgrade_cases::migration`'s and are not repeated.
#![cfg(feature = "testkit")]

use crate::kafka_quiet_cluster_cases::{Brokers, T0, Verdict, lines, loud};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::metadata::{encode, snapshot_footer_value, snapshot_header_value};
use klogscan::testkit::{
    Batch, BatchSpec, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
    RecordSpec,
};
use std::path::Path;

pub(crate) mod quorum;
mod records;
mod snapshots;

/// The controller quorum: three dedicated controllers.
pub(crate) const VOTERS: [i32; 3] = [3000, 3001, 3002];
/// The brokers (observers of the quorum).
pub(crate) const BROKERS: [i32; 2] = [1, 2];

const LEADER_CHANGE: i16 = 2;
const SNAPSHOT_HEADER: i16 = 3;
const SNAPSHOT_FOOTER: i16 = 4;
pub(crate) const KRAFT_VERSION: i16 = 5;
pub(crate) const KRAFT_VOTERS: i16 = 6;

/// One write to the metadata log.
#[derive(Clone)]
pub(crate) enum Step {
    /// A new epoch won by `leader` with the votes of `granting` out of `voters`: the
    /// `LeaderChangeMessage` control batch `LeaderState.appendLeaderChangeMessage` writes
    /// first in every epoch.
    Elect {
        leader: i32,
        voters: Vec<i32>,
        granting: Vec<i32>,
    },
    /// One controller write (`BatchBuilder`: every record at the batch's append time).
    Data(Vec<MetaRecord>),
    /// A KRaft control record (`KRaftVersionRecord`, `VotersRecord`) of the leader.
    Control(i16, Vec<u8>),
}

/// `Step::Elect` by `leader`, every voter of `voters` granting.
pub(crate) fn elect(leader: i32, voters: &[i32]) -> Step {
    Step::Elect {
        leader,
        voters: voters.to_vec(),
        granting: voters.to_vec(),
    }
}

pub(crate) fn data(records: Vec<MetaRecord>) -> Step {
    Step::Data(records)
}

/// The offsets a step takes.
fn width(s: &Step) -> i64 {
    match s {
        Step::Data(r) => r.len() as i64,
        _ => 1,
    }
}

/// The offset after `steps`.
pub(crate) fn end_of(steps: &[Step]) -> i64 {
    steps.iter().map(width).sum()
}

/// `LeaderChangeMessage` v0: leader, voters, granting voters (each `{voterId}`).
pub(crate) fn leader_change(leader: i32, voters: &[i32], granting: &[i32]) -> Vec<u8> {
    let mut v = vec![0, 0];
    v.extend_from_slice(&leader.to_be_bytes());
    for set in [voters, granting] {
        v.push(set.len() as u8 + 1);
        for id in set {
            v.extend_from_slice(&id.to_be_bytes());
            v.push(0);
        }
    }
    v.push(0);
    v
}

/// `KRaftVersionRecord` v0 at `kraft.version` `level`.
pub(crate) fn kraft_version(level: i16) -> Vec<u8> {
    let mut v = vec![0, 0];
    v.extend_from_slice(&level.to_be_bytes());
    v.push(0);
    v
}

/// `VotersRecord` v0 of `voters`: each with a directory id of its own, one `CONTROLLER`
/// endpoint and `kraft.version` 0–1 supported.
pub(crate) fn voters_record(voters: &[i32]) -> Vec<u8> {
    let mut v = vec![0, 0, voters.len() as u8 + 1];
    for id in voters {
        v.extend_from_slice(&id.to_be_bytes());
        v.extend_from_slice(&directory_of(*id));
        let host = format!("c{id}");
        v.extend_from_slice(&[2, 11]);
        v.extend_from_slice(b"CONTROLLER");
        v.push(host.len() as u8 + 1);
        v.extend_from_slice(host.as_bytes());
        v.extend_from_slice(&9093u16.to_be_bytes());
        v.push(0);
        v.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
    }
    v.push(0);
    v
}

/// Controller `id`'s metadata log dir's `directory.id` (`ReplicaKey`'s directory).
fn directory_of(id: i32) -> [u8; 16] {
    klogscan::testkit::files::topic_id_for(&format!("controller dir {id}"))
}

/// One copy of `__cluster_metadata-0`, written from `steps` from offset `start` (the steps
/// below it were cleaned away: only their epochs count), one batch per step, 1 s apart.
pub(crate) fn copy(steps: &[Step], start: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0)
        .start_offset(start)
        .start_time(T0)
        .broker_files(PartitionFileOptions::default());
    let (mut epoch, mut at, mut time) = (0, 0i64, T0);
    for s in steps {
        if let Step::Elect { .. } = s {
            epoch += 1;
        }
        let next = at + width(s);
        if at >= start {
            p.set_leader_epoch(epoch);
            let now = p.now();
            p.advance_time((time - now).max(0));
            match s {
                Step::Elect {
                    leader,
                    voters,
                    granting,
                } => {
                    let lc = leader_change(*leader, voters, granting);
                    p.control_raw(Producer::PLAIN, LEADER_CHANGE, Some(lc));
                }
                Step::Data(records) => {
                    let mut b = Batch::new(Producer::PLAIN).leader_epoch(epoch).at(time);
                    for r in records {
                        b = b.record(Rec::value(encode(r)).at(time));
                    }
                    p.append(b);
                }
                Step::Control(t, v) => {
                    p.control_raw(Producer::PLAIN, *t, Some(v.clone()));
                }
            }
        }
        at = next;
        time += 1000;
    }
    p
}

/// The KRaft epoch after `steps`.
pub(crate) fn epoch_of(steps: &[Step]) -> i32 {
    steps
        .iter()
        .filter(|s| matches!(s, Step::Elect { .. }))
        .count() as i32
}

/// `quorum-state` as `FileQuorumStateStore.writeElectionState` writes it: version 0
/// (`kraft.version` 0: the voters listed, `appliedOffset`) or 1 (`votedDirectoryId`, no
/// voters). `voted`: the candidate this node voted for (-1: none, an observer).
pub(crate) fn quorum_state(v1: bool, leader: i32, epoch: i32, voted: i32) -> String {
    if v1 {
        format!(
            "{{\"leaderId\":{leader},\"leaderEpoch\":{epoch},\"votedId\":{voted},\
             \"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":1}}"
        )
    } else {
        let voters: Vec<String> = (VOTERS.iter())
            .map(|v| format!("{{\"voterId\":{v}}}"))
            .collect();
        format!(
            "{{\"clusterId\":\"\",\"leaderId\":{leader},\"leaderEpoch\":{epoch},\"votedId\":{voted},\
             \"appliedOffset\":0,\"currentVoters\":[{}],\"data_version\":0}}",
            voters.join(",")
        )
    }
}

/// A snapshot's contents: its id, the image, and the quorum's voters when `kraft.version`
/// is 1 (`RecordsSnapshotWriter.Builder`: `KRaftVersionRecord` and `VotersRecord` after the
/// header, in its control batch).
pub(crate) struct Snap {
    pub end: i64,
    pub epoch: i32,
    pub image: Vec<MetaRecord>,
    pub voters: Option<Vec<i32>>,
}

fn ctrl(type_id: i16, value: Vec<u8>, delta: i32) -> RecordSpec {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&type_id.to_be_bytes());
    RecordSpec {
        offset_delta: delta,
        key: Some(key),
        value: Some(value),
        ..RecordSpec::default()
    }
}

fn snap_batch(base: i64, epoch: i32, control: bool, records: Vec<RecordSpec>) -> BatchSpec {
    BatchSpec {
        base_offset: base,
        partition_leader_epoch: epoch,
        control,
        base_timestamp: T0,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records,
        ..BatchSpec::default()
    }
}

/// Write `s` as `<end>-<epoch>.checkpoint` in `part`, framed as `RecordsSnapshotWriter`
/// frames it (its batches from offset 0).
pub(crate) fn write_snapshot(part: &Path, s: &Snap) {
    let mut head = vec![ctrl(SNAPSHOT_HEADER, snapshot_header_value(T0), 0)];
    if let Some(v) = &s.voters {
        head.push(ctrl(KRAFT_VERSION, kraft_version(1), 1));
        head.push(ctrl(KRAFT_VOTERS, voters_record(v), 2));
    }
    let n = head.len() as i64;
    let image: Vec<RecordSpec> = (s.image.iter().enumerate())
        .map(|(i, r)| RecordSpec {
            offset_delta: i as i32,
            value: Some(encode(r)),
            ..RecordSpec::default()
        })
        .collect();
    let m = image.len() as i64;
    let batches = [
        snap_batch(0, s.epoch, true, head),
        snap_batch(n, s.epoch, false, image),
        snap_batch(
            n + m,
            s.epoch,
            true,
            vec![ctrl(SNAPSHOT_FOOTER, snapshot_footer_value(), 0)],
        ),
    ];
    let bytes: Vec<u8> = batches.iter().flat_map(|b| b.encode()).collect();
    let name = format!("{:020}-{:010}.checkpoint", s.end, s.epoch);
    std::fs::write(part.join(name), bytes).unwrap();
}

/// One node's copy: the log, its `quorum-state`, its snapshots.
pub(crate) struct Node {
    pub id: i32,
    pub log: PartitionBuilder,
    pub quorum_state: String,
    pub snapshots: Vec<Snap>,
}

impl Node {
    pub(crate) fn new(id: i32, log: PartitionBuilder, quorum_state: String) -> Node {
        Node {
            id,
            log,
            quorum_state,
            snapshots: Vec::new(),
        }
    }
}

/// The nodes' log dirs: a controller's metadata log dir (`meta.properties` alone), a
/// broker's data log dir (`broker_epoch`: its registration's offset, in
/// `.kafka_cleanshutdown`) holding the metadata log beside `data`'s partitions.
pub(crate) fn cluster(
    nodes: Vec<Node>,
    broker_epochs: &[i64],
    data: &dyn Fn(i32) -> Vec<PartitionBuilder>,
) -> Brokers {
    let mut b = Brokers::new();
    for n in nodes {
        let dir = if VOTERS.contains(&n.id) {
            b.controller(n.id)
        } else {
            let i = BROKERS.iter().position(|x| *x == n.id).unwrap();
            let mut ld = LogDirBuilder::new(n.id);
            for p in data(n.id) {
                ld = ld.partition(p);
            }
            b.write(n.id, "data", ld, Some(broker_epochs[i]))
        };
        n.log.write(&dir).unwrap();
        let part = dir.join("__cluster_metadata-0");
        std::fs::write(part.join("quorum-state"), &n.quorum_state).unwrap();
        for s in &n.snapshots {
            write_snapshot(&part, s);
        }
    }
    b
}

/// Every finding of `scan`, `verify` and the merge of kind `kind` at warning or above.
pub(crate) fn reported(v: &Verdict, kind: Kind) -> Vec<Finding> {
    (v.scan.findings.iter())
        .chain(v.verify.findings())
        .chain(v.merge.findings.iter())
        .filter(|f| f.kind == kind && f.severity >= Severity::Warning)
        .cloned()
        .collect()
}

/// Every finding at warning or above, as lines (for messages).
pub(crate) fn all_loud(v: &Verdict) -> Vec<String> {
    let mut out = loud(&v.scan.findings);
    out.extend(loud(v.verify.findings()));
    out.extend(loud(&v.merge.findings));
    out
}

/// Every scan finding as lines (for messages).
pub(crate) fn scan_lines(v: &Verdict) -> Vec<String> {
    lines(&v.scan.findings)
}
