//! The group coordinator's load of `__consumer_offsets`, audited against the Kafka tests
//! no test here cited before: `OffsetMetadataManagerTest` (what regular and transactional
//! offset commits, their COMMIT/ABORT markers and offset tombstones leave the coordinator
//! holding), `GroupMetadataManagerTest` (the replay of each KIP-848 consumer group record
//! type on its own, value and tombstone; what a group's deletion writes) and
//! `GroupCoordinatorShardTest` (how `GroupCoordinatorShard.replay` routes every record type,
//! both offset-commit key versions, and the markers).
//!
//! Each case writes the records those tests replay (or the records the tested method
//! writes, followed by the load of them) as the `__consumer_offsets` partitions a broker
//! keeps, each group in the partition `partitionFor` names (50 partitions), with the
//! testkit; then reads them back as `klogscan groups` does (`list_groups`, deleted groups
//! included), the commits the load holds pending, and the findings of `scan`, `verify` and
//! the merge of the broker's `collect` bundle. Every case has a near miss. Where klogscan's
//! answer differs from Kafka's, the test asserts Kafka's and is `#[ignore = "divergence: …"]`.
//!
//! Kafka sources read: apache/kafka trunk of 2024-10 (`group-coordinator/src/test/java/org/
//! apache/kafka/coordinator/group/{OffsetMetadataManagerTest,GroupMetadataManagerTest,
//! GroupCoordinatorShardTest}.java` and the main classes they drive:
//! `OffsetMetadataManager.replay` / `replayEndTransactionMarker`, the
//! `GroupMetadataManager.replay(...)` overloads, `GroupCoordinatorShard.replay`). Only facts
//! are written here.
#![cfg(feature = "testkit")]

mod deletion;
mod offsets;
mod replay;
mod shard;
pub(crate) mod share_tombstones;
mod txn;

use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, lines};
use klogscan::finding::{Finding, Kind};
use klogscan::partition::groups::{
    Group, GroupState, GroupType, GroupsOptions, list_groups, replay_partition_dir,
};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::group_scenarios::{GroupLog, Spec};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{LogDirBuilder, PartitionBuilder};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// When the commits are written (the testkit's clock).
pub(crate) const T: i64 = DEFAULT_START_MS;
/// The reference time of every scan: a day later, so a transaction left open is past any
/// timeout (a hanging transaction).
const NOW: i64 = T + 86_400_000;
/// Topic ids (Kafka's URL-safe base64) of the topics the consumer groups are assigned.
pub(crate) const FOO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAQ";
pub(crate) const BAR_ID: &str = "AAAAAAAAAAAAAAAAAAAAAg";

// ---------------------------------------------------------------------------------------
// Records.

pub(crate) fn g(id: &str) -> Value {
    json!({ "groupId": id })
}

pub(crate) fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}

pub(crate) fn offset_key(group: &str, topic: &str, partition: i32) -> Value {
    json!({"group": group, "topic": topic, "partition": partition})
}

/// An offset commit (key version 1, value version 3) committed at `T`.
pub(crate) fn commit(group: &str, topic: &str, partition: i32, offset: i64) -> Spec {
    (
        1,
        offset_key(group, topic, partition),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "metadata": "small", "commitTimestamp": T}),
        )),
    )
}

/// An offset commit with the oldest key version (0) and value version 0.
fn commit_key0(group: &str, topic: &str, partition: i32, offset: i64) -> Spec {
    (
        0,
        offset_key(group, topic, partition),
        Some((
            0,
            json!({"offset": offset, "metadata": "", "commitTimestamp": T}),
        )),
    )
}

/// An offset commit of value version 1: the one that carries an expire timestamp (what
/// the coordinator writes for a request with a retention time).
fn commit_v1(group: &str, topic: &str, partition: i32, offset: i64, expire: i64) -> Spec {
    (
        1,
        offset_key(group, topic, partition),
        Some((
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": T, "expireTimestamp": expire}),
        )),
    )
}

/// The tombstone of an offset (key version 1).
pub(crate) fn offset_tombstone(group: &str, topic: &str, partition: i32) -> Spec {
    (1, offset_key(group, topic, partition), None)
}

/// The tombstone of an offset written with key version 0.
fn offset_tombstone_key0(group: &str, topic: &str, partition: i32) -> Spec {
    (0, offset_key(group, topic, partition), None)
}

/// The consumer protocol's subscription (version 0: topics, null user data), base64.
fn subscription(topics: &[&str]) -> String {
    use base64::Engine;
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend((topics.len() as i32).to_be_bytes());
    for t in topics {
        b.extend((t.len() as i16).to_be_bytes());
        b.extend(t.as_bytes());
    }
    b.extend((-1i32).to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A classic group record (value version 3) of protocol type `consumer`, protocol `range`,
/// with `members` as `(member id, static instance id)`, each subscribed to `foo`; empty
/// members: an Empty group without protocol.
fn classic(group: &str, generation: i32, members: &[(&str, Option<&str>)]) -> Spec {
    let ms: Vec<Value> = members
        .iter()
        .enumerate()
        .map(|(i, (m, instance))| {
            json!({"memberId": m, "groupInstanceId": instance, "clientId": format!("client-{i}"),
                   "clientHost": format!("host-{i}"), "rebalanceTimeout": 9000, "sessionTimeout": 4000,
                   "subscription": subscription(&["foo"]), "assignment": "Ag=="})
        })
        .collect();
    let (protocol, leader) = match members.first() {
        Some((m, _)) => (json!("range"), json!(m)),
        None => (Value::Null, Value::Null),
    };
    (
        2,
        json!({"group": group}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": generation, "protocol": protocol,
                   "leader": leader, "currentStateTimestamp": T, "members": ms}),
        )),
    )
}

/// `newGroupMetadataTombstoneRecord`: the tombstone of a classic group.
pub(crate) fn classic_tombstone(group: &str) -> Spec {
    (2, json!({"group": group}), None)
}

/// A tombstone of record type `t` with key `key`.
pub(crate) fn tombstone(t: i16, key: Value) -> Spec {
    (t, key, None)
}

/// `[(topic id, partitions)]` as a record's topic-partition list.
pub(crate) fn parts(list: &[(&str, &[i32])]) -> Value {
    Value::Array(
        list.iter()
            .map(|(t, p)| json!({"topicId": t, "partitions": p}))
            .collect(),
    )
}

/// Consumer group metadata (type 3): the group epoch.
pub(crate) fn group_epoch(group: &str, epoch: i32) -> Spec {
    (3, g(group), Some((0, json!({"epoch": epoch}))))
}

/// Consumer group partition metadata (type 4): topic `bar` with 10 partitions.
pub(crate) fn partition_metadata(group: &str) -> Spec {
    (
        4,
        g(group),
        Some((
            0,
            json!({"topics": [{"topicId": BAR_ID, "topicName": "bar", "numPartitions": 10, "partitionMetadata": []}]}),
        )),
    )
}

/// Consumer group member metadata (type 5).
pub(crate) fn member(group: &str, m: &str) -> Spec {
    (
        5,
        gm(group, m),
        Some((
            0,
            json!({"rackId": "rackid", "clientId": "clientid", "clientHost": "clienthost",
                   "subscribedTopicNames": ["foo"], "serverAssignor": "range", "rebalanceTimeoutMs": 5000}),
        )),
    )
}

/// Consumer group target assignment metadata (type 6): the assignment epoch.
pub(crate) fn target_epoch(group: &str, epoch: i32) -> Spec {
    (6, g(group), Some((0, json!({"assignmentEpoch": epoch}))))
}

/// Consumer group target assignment of one member (type 7).
pub(crate) fn target(group: &str, m: &str, p: &[(&str, &[i32])]) -> Spec {
    (
        7,
        gm(group, m),
        Some((0, json!({"topicPartitions": parts(p)}))),
    )
}

/// Consumer group current member assignment (type 8).
pub(crate) fn current(
    group: &str,
    m: &str,
    epoch: i32,
    prev: i32,
    state: i8,
    p: &[(&str, &[i32])],
) -> Spec {
    (
        8,
        gm(group, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": state,
                   "assignedPartitions": parts(p), "partitionsPendingRevocation": []}),
        )),
    )
}

// ---------------------------------------------------------------------------------------
// Writing.

/// The `__consumer_offsets` partition `group` lives in with 50 partitions
/// (`Utils.abs(groupId.hashCode) % 50`).
pub(crate) fn offsets_partition(group: &str) -> i32 {
    // The group coordinator places an id as the transaction coordinator does (the same
    // `Utils.abs(hashCode) % count`): the project's one implementation of it.
    klogscan::discover::identity::transaction_partition_for(group, 50)
}

/// The coordinator's partitions being written: each group's records go to its partition.
#[derive(Default, Clone)]
pub(crate) struct Coord {
    pub(crate) logs: BTreeMap<i32, GroupLog>,
}

impl Coord {
    pub(crate) fn new() -> Coord {
        Coord::default()
    }

    fn log(&mut self, group: &str) -> &mut GroupLog {
        self.logs.entry(offsets_partition(group)).or_default()
    }

    /// One batch of `group`'s records, written without a producer id.
    pub(crate) fn batch(&mut self, group: &str, recs: Vec<Spec>) -> &mut Self {
        self.log(group).batch(recs);
        self
    }

    /// One transactional batch of producer `pid` holding `group`'s records.
    pub(crate) fn txn(&mut self, pid: i64, group: &str, recs: Vec<Spec>) -> &mut Self {
        self.log(group).txn_batch(pid, recs);
        self
    }

    /// The COMMIT (or ABORT) marker of `pid` in `group`'s partition.
    pub(crate) fn marker(&mut self, pid: i64, group: &str, commit: bool) -> &mut Self {
        self.log(group).marker(pid, commit);
        self
    }

    /// Write broker 1's log dir and read it back.
    pub(crate) fn load(&self) -> Loaded {
        self.load_with(None)
    }

    /// [`Coord::load`], the log dir holding `metadata` too (a `__cluster_metadata-0` copy).
    fn load_with(&self, metadata: Option<PartitionBuilder>) -> Loaded {
        let mut ld = LogDirBuilder::new(1);
        for (n, log) in &self.logs {
            ld = ld.partition(partition(log, *n));
        }
        if let Some(m) = metadata {
            ld = ld.partition(m);
        }
        let mut brokers = Brokers::new();
        brokers.write(1, "data", ld, None);
        let opts = ScanOptions::default().with_now_ms(NOW);
        let verdict = brokers.check_with(opts.clone());
        let inv = klogscan::request::discover(&brokers.all(), &opts).unwrap();
        let all = GroupsOptions {
            include_deleted: true,
            ..Default::default()
        };
        let groups = list_groups(&inv, &all);
        let mut pending = Vec::new();
        for p in &inv.partitions {
            if p.tp
                .as_ref()
                .is_some_and(|tp| tp.topic == "__consumer_offsets")
            {
                let r = replay_partition_dir(p, None, 0);
                pending.extend(r.pending_commits().map(|(pid, g, c)| {
                    (pid, g.to_string(), c.topic.clone(), c.partition, c.offset)
                }));
            }
        }
        pending.sort();
        Loaded {
            _brokers: brokers,
            verdict,
            groups,
            pending,
        }
    }
}

/// `log` as `__consumer_offsets-<n>` (what `GroupLog::write` writes, as a builder).
fn partition(log: &GroupLog, n: i32) -> PartitionBuilder {
    log.builder(n)
}

// ---------------------------------------------------------------------------------------
// Reading back.

/// A pending commit: `(producer id, group, topic, partition, offset)`.
type Pending = (i64, String, String, i32, i64);

/// What klogscan makes of one written broker.
pub(crate) struct Loaded {
    _brokers: Brokers,
    pub(crate) verdict: Verdict,
    /// Every group, deleted ones included.
    pub(crate) groups: Vec<Group>,
    pending: Vec<Pending>,
}

impl Loaded {
    /// The live group `id`, if any.
    pub(crate) fn live(&self, id: &str) -> Option<&Group> {
        self.groups
            .iter()
            .find(|g| g.group_id == id && g.state == GroupState::Live)
    }

    /// The live group `id`, which must exist.
    pub(crate) fn group(&self, id: &str) -> &Group {
        self.live(id)
            .unwrap_or_else(|| panic!("no live group {id}: {:#?}", self.groups))
    }

    /// The deleted group `id`, if any.
    pub(crate) fn deleted(&self, id: &str) -> Option<&Group> {
        self.groups
            .iter()
            .find(|g| g.group_id == id && g.state == GroupState::Deleted)
    }

    /// Whether any group (live or not) has id `id`.
    fn knows(&self, id: &str) -> bool {
        self.groups.iter().any(|g| g.group_id == id)
    }

    /// `(topic, partition, offset)` the live group `id` holds.
    pub(crate) fn offsets(&self, id: &str) -> Vec<(String, i32, i64)> {
        offsets_of(self.group(id))
    }

    /// The findings of `scan`, `verify` and `merge`, by name.
    pub(crate) fn reports(&self) -> [(&'static str, Vec<&Finding>); 3] {
        [
            ("scan", self.verdict.scan.findings.iter().collect()),
            ("verify", self.verdict.verify.findings().collect()),
            ("merge", self.verdict.merge.findings.iter().collect()),
        ]
    }

    /// Nothing at warning or above from `scan`, `verify` or `merge`.
    pub(crate) fn assert_no_alarm(&self) {
        self.verdict.assert_no_alarm();
    }

    /// The `__consumer_offsets` rules' findings of `kind` (in `scan` and in `merge`,
    /// which read the partitions alike) name `group`.
    pub(crate) fn assert_reported(&self, kind: Kind, group: &str) {
        for (name, fs) in self.reports() {
            if name == "verify" {
                continue;
            }
            let hit = (fs.iter()).any(|f| {
                f.kind == kind
                    && (f.message.contains(group)
                        || f.evidence.to_string().contains(&format!("{group:?}")))
            });
            assert!(
                hit,
                "{name}: no {kind} naming {group:?}: {:#?}",
                lines(fs.iter().copied())
            );
        }
    }

    /// None of the group rules' findings in any report.
    pub(crate) fn assert_no_group_finding(&self) {
        for (name, fs) in self.reports() {
            let f: Vec<&Finding> = fs
                .into_iter()
                .filter(|f| {
                    matches!(
                        f.kind,
                        Kind::GroupLoadFailure
                            | Kind::GroupDeletionUnfinished
                            | Kind::GroupTombstonesIncomplete
                            | Kind::GroupEpochRegression
                            | Kind::GroupOffsetCommitInIdempotentBatch
                    )
                })
                .collect();
            assert!(f.is_empty(), "{name}: {:#?}", lines(f));
        }
    }
}

fn offsets_of(g: &Group) -> Vec<(String, i32, i64)> {
    let mut v: Vec<_> = g
        .offsets
        .iter()
        .map(|c| (c.topic.clone(), c.partition, c.offset))
        .collect();
    v.sort();
    v
}

pub(crate) fn tp(topic: &str, partition: i32, offset: i64) -> (String, i32, i64) {
    (topic.to_string(), partition, offset)
}

fn pending(pid: i64, group: &str, topic: &str, partition: i32, offset: i64) -> Pending {
    (pid, group.to_string(), topic.to_string(), partition, offset)
}
