//! Coordinator partitions (`__consumer_offsets`) of classic, consumer, share and streams
//! groups, written with the [`super::groups`] encoder: lifecycles, a full KIP-1331
//! streams-group deletion, a failed plugin delete (held back at the barrier), a crash
//! after the barrier, the damaged logs behind each group finding, and compaction.
//!
//! ```
//! use klogscan::testkit::group_scenarios::{GroupLog, streams_deleted};
//! let dir = tempfile::tempdir().unwrap();
//! let log: GroupLog = streams_deleted("app");
//! log.write(dir.path(), 3).unwrap();
//! assert!(dir.path().join("__consumer_offsets-3").is_dir());
//! ```

use super::groups::record;
use super::scenario::{Batch, Manifest, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// One record: key bytes, value bytes (`None`: tombstone), its offset.
pub type Entry = (Vec<u8>, Option<Vec<u8>>, i64);

/// One record to encode: type, key JSON, value (`(version, JSON)`, `None`: tombstone).
pub type Spec = (i16, Value, Option<(i16, Value)>);

/// A coordinator log: batches of records with their offsets.
#[derive(Debug, Clone, Default)]
pub struct GroupLog {
    pub batches: Vec<Vec<Entry>>,
    /// Per batch: the producer id of a transactional batch, and for a COMMIT/ABORT
    /// marker batch (no entries) whether it commits.
    pub txn: Vec<Option<(i64, Option<bool>)>>,
    next: i64,
}

impl GroupLog {
    pub fn new() -> GroupLog {
        GroupLog::default()
    }

    /// An empty log whose first record gets `offset` (the log start after retention).
    pub fn starting_at(offset: i64) -> GroupLog {
        GroupLog {
            next: offset,
            ..GroupLog::default()
        }
    }

    /// Append a batch of `(type, key, value)` records (`value`: `(version, data)` or
    /// `None` for a tombstone).
    pub fn batch(&mut self, recs: Vec<Spec>) -> &mut Self {
        let mut b = Vec::new();
        for (t, k, v) in recs {
            let (k, v) = record(t, k, v);
            b.push((k, v, self.next));
            self.next += 1;
        }
        self.batches.push(b);
        self.txn.push(None);
        self
    }

    /// Append a transactional batch of producer `pid` (offset commits stay pending
    /// until its marker).
    pub fn txn_batch(&mut self, pid: i64, recs: Vec<Spec>) -> &mut Self {
        self.batch(recs);
        *self.txn.last_mut().unwrap() = Some((pid, None));
        self
    }

    /// Append the COMMIT (or ABORT) marker of producer `pid`.
    pub fn marker(&mut self, pid: i64, commit: bool) -> &mut Self {
        self.batches.push(vec![(Vec::new(), None, self.next)]);
        self.txn.push(Some((pid, Some(commit))));
        self.next += 1;
        self
    }

    /// Append a batch of raw key/value bytes.
    pub fn raw(&mut self, recs: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> &mut Self {
        let mut b = Vec::new();
        for (k, v) in recs {
            b.push((k, v, self.next));
            self.next += 1;
        }
        self.batches.push(b);
        self.txn.push(None);
        self
    }

    /// The log after the cleaner: only the last record of each key, at its offset;
    /// tombstones dropped too when `drop_tombstones` (their delete horizon passed).
    pub fn compacted(&self, drop_tombstones: bool) -> GroupLog {
        let mut last: HashMap<&[u8], i64> = HashMap::new();
        for (b, t) in self.batches.iter().zip(&self.txn) {
            if !matches!(t, Some((_, Some(_)))) {
                for (k, _, o) in b {
                    last.insert(k, *o);
                }
            }
        }
        let mut out = GroupLog {
            next: self.next,
            ..Default::default()
        };
        for (b, t) in self.batches.iter().zip(&self.txn) {
            let kept: Vec<Entry> = if matches!(t, Some((_, Some(_)))) {
                b.clone() // markers stay (until their own horizon)
            } else {
                b.iter()
                    .filter(|(k, v, o)| {
                        last.get(k.as_slice()) == Some(o) && (v.is_some() || !drop_tombstones)
                    })
                    .cloned()
                    .collect()
            };
            if !kept.is_empty() {
                out.batches.push(kept);
                out.txn.push(*t);
            }
        }
        out
    }

    /// Write it as `__consumer_offsets-<partition>` under `dir`.
    pub fn write(&self, dir: &Path, partition: i32) -> std::io::Result<Manifest> {
        let mut p = self.builder(partition);
        if self.next > p.next_offset() {
            p.skip_offsets(self.next - p.next_offset());
        }
        p.write(dir)
    }

    /// Its batches as `__consumer_offsets-<partition>`, a builder ending at its last batch
    /// (what [`Self::write`] writes, without the offsets skipped after it).
    pub fn builder(&self, partition: i32) -> PartitionBuilder {
        let mut p = PartitionBuilder::new("__consumer_offsets", partition);
        for (b, t) in self.batches.iter().zip(&self.txn) {
            let base = b[0].2;
            if base > p.next_offset() {
                p.skip_offsets(base - p.next_offset());
            }
            let producer = match t {
                Some((pid, Some(commit))) => {
                    p.end_txn(Producer::transactional(*pid, 0), *commit, 0);
                    continue;
                }
                Some((pid, None)) => Producer::transactional(*pid, 0),
                None => Producer::PLAIN,
            };
            let mut batch = Batch::new(producer);
            for (k, v, o) in b {
                let r = match v {
                    Some(v) => Rec::kv(k, v),
                    None => Rec::tombstone(k),
                };
                batch = batch.record(r.offset_delta((o - base) as i32));
            }
            p.append(batch);
        }
        p
    }
}

fn g(id: &str) -> Value {
    json!({ "groupId": id })
}
fn gm(id: &str, m: &str) -> Value {
    json!({ "groupId": id, "memberId": m })
}
const TOPIC: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// A classic group with one member and two committed offsets.
pub fn classic_group(log: &mut GroupLog, id: &str) {
    log.batch(vec![(
        2,
        json!({"group": id}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
            "leader": "m1", "currentStateTimestamp": 5,
            "members": [{"memberId": "m1", "clientId": "c", "clientHost": "/10.0.0.1",
                         "rebalanceTimeout": 300000, "sessionTimeout": 45000}]}),
        )),
    )]);
    log.batch(vec![
        (
            1,
            json!({"group": id, "topic": "orders", "partition": 0}),
            Some((
                3,
                json!({"offset": 42, "leaderEpoch": 1, "commitTimestamp": 7}),
            )),
        ),
        (
            1,
            json!({"group": id, "topic": "orders", "partition": 1}),
            Some((
                4,
                json!({"offset": 17, "leaderEpoch": 1, "commitTimestamp": 7}),
            )),
        ),
    ]);
}

/// A consumer group (KIP-848): members join at epochs 1 and 2, one leaves.
pub fn consumer_group(log: &mut GroupLog, id: &str) {
    let member = |m: &str, epoch: i32, parts: Value| {
        vec![
            (
                5,
                gm(id, m),
                Some((
                    0,
                    json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["orders"], "rebalanceTimeoutMs": 30000}),
                )),
            ),
            (
                3,
                g(id),
                Some((0, json!({"epoch": epoch, "metadataHash": 99}))),
            ),
            (
                7,
                gm(id, m),
                Some((
                    0,
                    json!({"topicPartitions": [{"topicId": TOPIC, "partitions": parts}]}),
                )),
            ),
            (6, g(id), Some((0, json!({"assignmentEpoch": epoch})))),
            (
                8,
                gm(id, m),
                Some((
                    0,
                    json!({"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": 0,
                "assignedPartitions": [{"topicId": TOPIC, "partitions": parts}], "partitionsPendingRevocation": []}),
                )),
            ),
        ]
    };
    log.batch(member("m1", 1, json!([0, 1])));
    // m2 joins: the target moves partition 1 to it, and m1 gives 1 up (its current
    // assignment at epoch 2 without it) before m2's names it — the coordinator hands a
    // partition over only once its holder released it (`ConsumerGroup.addPartitionEpochs`
    // fails the load on a partition still held).
    let mut join = member("m2", 2, json!([1]));
    let m1_target = json!({"topicPartitions": [{"topicId": TOPIC, "partitions": [0]}]});
    join.insert(2, (7, gm(id, "m1"), Some((0, m1_target))));
    let m1_current = json!({"memberEpoch": 2, "previousMemberEpoch": 1, "state": 0,
        "assignedPartitions": [{"topicId": TOPIC, "partitions": [0]}], "partitionsPendingRevocation": []});
    join.insert(5, (8, gm(id, "m1"), Some((0, m1_current))));
    log.batch(join);
    log.batch(vec![(
        1,
        json!({"group": id, "topic": "orders", "partition": 0}),
        Some((
            4,
            json!({"offset": 5, "leaderEpoch": 0, "commitTimestamp": 8}),
        )),
    )]);
    // m2 leaves: current assignment, target member, member, in the coordinator's order.
    log.batch(vec![
        (8, gm(id, "m2"), None),
        (7, gm(id, "m2"), None),
        (5, gm(id, "m2"), None),
        (3, g(id), Some((0, json!({"epoch": 3, "metadataHash": 99})))),
        (6, g(id), Some((0, json!({"assignmentEpoch": 3})))),
    ]);
}

/// A share group (KIP-932) with one member.
pub fn share_group(log: &mut GroupLog, id: &str) {
    log.batch(vec![
        (10, gm(id, "s1"), Some((0, json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["orders"]})))),
        (11, g(id), Some((0, json!({"epoch": 1, "metadataHash": 7})))),
        (13, gm(id, "s1"), Some((0, json!({"topicPartitions": [{"topicId": TOPIC, "partitions": [0, 1]}]})))),
        (12, g(id), Some((0, json!({"assignmentEpoch": 1})))),
        (14, gm(id, "s1"), Some((0, json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
            "assignedPartitions": [{"topicId": TOPIC, "partitions": [0, 1]}]})))),
        (15, g(id), Some((0, json!({"initializedTopics": [{"topicId": TOPIC, "topicName": "orders", "partitions": [0, 1]}]})))),
    ]);
}

/// The metadata value of streams group `id` at `epoch` with the KIP-1331 epochs.
fn streams_meta(
    id: &str,
    epoch: i32,
    stored: i32,
    failed: i32,
) -> (i16, Value, Option<(i16, Value)>) {
    let mut v = json!({"epoch": epoch, "metadataHash": 5, "validatedTopologyEpoch": 1});
    if stored != -1 {
        v["storedDescriptionTopologyEpoch"] = json!(stored);
    }
    if failed != -1 {
        v["failedDescriptionTopologyEpoch"] = json!(failed);
    }
    (17, g(id), Some((0, v)))
}

/// A live streams group (KIP-1071): topology, one member, an assignment, an offset; its
/// topology description stored by the plugin (stored epoch 1).
pub fn streams_group(log: &mut GroupLog, id: &str) {
    let tasks = json!([{"subtopologyId": "0", "partitions": [0, 1]}]);
    log.batch(vec![
        (23, g(id), Some((0, json!({"epoch": 1, "subtopologies": [{"subtopologyId": "0", "sourceTopics": ["input"],
            "sourceTopicRegex": [], "stateChangelogTopics": [], "repartitionSinkTopics": [], "repartitionSourceTopics": [], "copartitionGroups": []}]})))),
        (19, gm(id, "w1"), Some((0, json!({"clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": 30000, "topologyEpoch": 1, "processId": "p1", "clientTags": []})))),
        streams_meta(id, 1, -1, -1),
        (21, gm(id, "w1"), Some((0, json!({"activeTasks": tasks, "standbyTasks": [], "warmupTasks": []})))),
        (20, g(id), Some((0, json!({"assignmentEpoch": 1})))),
        (22, gm(id, "w1"), Some((0, json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0, "activeTasks": tasks,
            "standbyTasks": [], "warmupTasks": [], "activeTasksPendingRevocation": [], "standbyTasksPendingRevocation": [],
            "warmupTasksPendingRevocation": []})))),
    ]);
    log.batch(vec![streams_meta(id, 1, 1, -1)]);
    log.batch(vec![(
        1,
        json!({"group": id, "topic": "input", "partition": 0}),
        Some((
            4,
            json!({"offset": 9, "leaderEpoch": 0, "commitTimestamp": 9}),
        )),
    )]);
    // The member leaves (session timeout): the group is empty.
    log.batch(vec![
        (22, gm(id, "w1"), None),
        (21, gm(id, "w1"), None),
        (19, gm(id, "w1"), None),
        streams_meta(id, 2, 1, -1),
        (20, g(id), Some((0, json!({"assignmentEpoch": 2})))),
    ]);
}

/// KIP-1331 cleanup of the empty group: its offsets expire, the -2 barrier.
fn streams_barrier(log: &mut GroupLog, id: &str) {
    log.batch(vec![(
        1,
        json!({"group": id, "topic": "input", "partition": 0}),
        None,
    )]);
    log.batch(vec![streams_meta(id, 2, -2, -1)]);
}

/// A streams group deleted the KIP-1331 way: the -2 barrier, a successful plugin
/// delete (finalized to -1), then the tombstones in the coordinator's order.
pub fn streams_deleted(id: &str) -> GroupLog {
    let mut log = GroupLog::new();
    streams_group(&mut log, id);
    streams_barrier(&mut log, id);
    log.batch(vec![streams_meta(id, 2, -1, -1)]);
    log.batch(vec![
        (20, g(id), None),
        (17, g(id), None),
        (23, g(id), None),
    ]);
    log
}

/// The plugin's delete fails: the group stays at -2, the next cycle writes the barrier
/// again and fails again (held back from tombstoning).
pub fn streams_held_back(id: &str) -> GroupLog {
    let mut log = GroupLog::new();
    streams_group(&mut log, id);
    streams_barrier(&mut log, id);
    log.batch(vec![streams_meta(id, 2, -2, -1)]);
    log
}

/// The coordinator stops right after the barrier.
pub fn streams_crash_after_barrier(id: &str) -> GroupLog {
    let mut log = GroupLog::new();
    streams_group(&mut log, id);
    streams_barrier(&mut log, id);
    log
}

/// Every group type, all live and consistent (no finding).
pub fn all_types() -> GroupLog {
    let mut log = GroupLog::new();
    classic_group(&mut log, "classic-app");
    consumer_group(&mut log, "consumer-app");
    share_group(&mut log, "share-app");
    streams_group(&mut log, "streams-app");
    log
}

/// A consumer group deleted by DeleteGroups: its offsets, then the tombstones of
/// `ConsumerGroup.createGroupTombstoneRecords` (current assignments, target assignment
/// members and metadata, members, regular expressions, subscription metadata, epoch).
pub fn consumer_deleted(id: &str) -> GroupLog {
    let mut log = GroupLog::new();
    consumer_group(&mut log, id);
    log.batch(vec![(
        16,
        json!({"groupId": id, "regularExpression": "ord.*"}),
        Some((
            0,
            json!({"topics": ["orders"], "version": 1, "timestamp": 5}),
        )),
    )]);
    log.batch(vec![(
        1,
        json!({"group": id, "topic": "orders", "partition": 0}),
        None,
    )]);
    log.batch(vec![
        (8, gm(id, "m1"), None),
        (7, gm(id, "m1"), None),
        (6, g(id), None),
        (5, gm(id, "m1"), None),
        (
            16,
            json!({"groupId": id, "regularExpression": "ord.*"}),
            None,
        ),
        (4, g(id), None),
        (3, g(id), None),
    ]);
    log
}

/// A share group deleted: `ShareGroup.createGroupTombstoneRecords` (current assignments,
/// target assignment members and metadata, members, state partition metadata, epoch).
pub fn share_deleted(id: &str) -> GroupLog {
    let mut log = GroupLog::new();
    share_group(&mut log, id);
    log.batch(vec![
        (14, gm(id, "s1"), None),
        (13, gm(id, "s1"), None),
        (12, g(id), None),
        (10, gm(id, "s1"), None),
        (15, g(id), None),
        (11, g(id), None),
    ]);
    log
}
