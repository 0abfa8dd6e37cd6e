//! Transactional offset commits in `__consumer_offsets` and how the group coordinator's load
//! resolves them: the cases of Kafka's tests not already reproduced by
//! `kafka_coordinator_cases/offsets.rs`, `groups_replay.rs`, `consumers.rs` and
//! `kafka_group_replay_cases.rs` (see docs/testing.md).
//!
//! Sources: apache/kafka trunk of 2024-10 ("2024-10") and the 2025-10 import ("2025-10"):
//! `group-coordinator/.../OffsetMetadataManager.java` (`replay`, `replayEndTransactionMarker`,
//! `fetchOffsets`, `hasPendingTransactionalOffsets`), `CoordinatorLoaderImpl` (core's Scala
//! class in 2024-10, `coordinator-common/.../CoordinatorLoaderImpl.java` in 2025-10: how a
//! control batch becomes `replayEndTransactionMarker`), and core's 3.x
//! `GroupMetadataManager.doLoadGroupsAndOffsets` where it reads otherwise. Each case is
//! written as a `__consumer_offsets-0` partition with the testkit and read through the
//! library entry points the CLI uses: `list_groups` (`klogscan groups`), the replay's
//! pending commits, the scan's findings and the consumer view (`klogscan consumers`).
#![cfg(feature = "testkit")]

use klogscan::cluster::consumers::{self, ConsumerView, ConsumersOptions};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::groups::{
    Group, GroupState, GroupsOptions, list_groups, replay_partition_dir,
};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::groups::record;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use serde_json::json;
use std::collections::BTreeMap;

/// The reference time: a day after the testkit's clock start, so a transaction the log
/// leaves open is past its timeout (a hanging transaction of `__consumer_offsets`).
const NOW: i64 = klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000;

/// An offset commit of `group` for `topic`-`partition` (value version 3).
fn commit(group: &str, topic: &str, partition: i32, offset: i64) -> Rec {
    let (k, v) = record(
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": 1, "metadata": "metadata", "commitTimestamp": 1}),
        )),
    );
    Rec::kv(k, v.unwrap())
}

/// The tombstone of `group`'s offset of `topic`-`partition`.
fn tombstone(group: &str, topic: &str, partition: i32) -> Rec {
    let (k, _) = record(
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        None,
    );
    Rec::tombstone(k)
}

/// A `__consumer_offsets-0` partition being written.
struct Log(PartitionBuilder);

/// What klogscan says of one written log.
struct Loaded {
    groups: Vec<Group>,
    /// `(producer id, group, topic, partition, offset)` the replay holds pending.
    pending: Vec<(i64, String, String, i32, i64)>,
    report: ScanReport,
    view: ConsumerView,
}

impl Log {
    fn new() -> Log {
        Log(PartitionBuilder::new("__consumer_offsets", 0))
    }

    /// One batch of `recs` written by `producer` (`Producer::PLAIN`: regular commits).
    fn batch(&mut self, producer: Producer, recs: Vec<Rec>) -> &mut Self {
        let b = recs.into_iter().fold(Batch::new(producer), Batch::record);
        self.0.append(b);
        self
    }

    /// A COMMIT/ABORT marker of `producer` at its epoch.
    fn marker(&mut self, producer: Producer, commit: bool) -> &mut Self {
        self.0.end_txn(producer, commit, 0);
        self
    }

    fn load(&self) -> Loaded {
        let d = tempfile::tempdir().unwrap();
        self.0.write(d.path()).unwrap();
        let opts = ScanOptions::default().with_now_ms(NOW);
        let inv = klogscan::discover::layout::discover(&[d.path().to_path_buf()]);
        let all = GroupsOptions {
            include_deleted: true,
            ..Default::default()
        };
        let groups = list_groups(&inv, &all);
        let replay = replay_partition_dir(&inv.partitions[0], None, 0);
        let mut pending: Vec<_> = replay
            .pending_commits()
            .map(|(pid, g, c)| (pid, g.to_string(), c.topic.clone(), c.partition, c.offset))
            .collect();
        pending.sort();
        let report = klogscan::pipeline::analyse(&inv, &opts);
        let view = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
        Loaded {
            groups,
            pending,
            report,
            view,
        }
    }
}

impl Loaded {
    /// The live group `id`.
    fn group(&self, id: &str) -> &Group {
        self.groups
            .iter()
            .find(|g| g.group_id == id && g.state == GroupState::Live)
            .unwrap_or_else(|| panic!("no live group {id}: {:#?}", self.groups))
    }

    /// `group`'s committed offsets: `(topic, partition)` → `(offset, record offset)`.
    fn offsets(&self, group: &str) -> BTreeMap<(String, i32), (i64, i64)> {
        self.group(group)
            .offsets
            .iter()
            .map(|c| ((c.topic.clone(), c.partition), (c.offset, c.record_offset)))
            .collect()
    }

    /// The findings of `kind`, as `(group, producer id)`.
    fn of(&self, kind: Kind) -> Vec<(Option<String>, Option<i64>)> {
        let mut v: Vec<_> = (self.report.findings.iter())
            .filter(|f| f.kind == kind)
            .map(|f| (f.group.clone(), f.producer_id))
            .collect();
        v.sort();
        v
    }

    /// The findings above info.
    fn serious(&self) -> Vec<&Finding> {
        (self.report.findings.iter())
            .filter(|f| f.severity > Severity::Info)
            .collect()
    }

    /// How many pending commits the consumer view counts for `group`.
    fn view_pending(&self, group: &str) -> usize {
        (self.view.groups.iter())
            .find(|g| g.group_id == group)
            .map_or(0, |g| g.pending)
    }
}

/// `(topic, partition)` → `(offset, record offset)`.
fn at(list: &[(&str, i32, i64, i64)]) -> BTreeMap<(String, i32), (i64, i64)> {
    list.iter()
        .map(|(t, p, o, r)| ((t.to_string(), *p), (*o, *r)))
        .collect()
}

fn held(pid: i64, g: &str, t: &str, p: i32, o: i64) -> (i64, String, String, i32, i64) {
    (pid, g.to_string(), t.to_string(), p, o)
}

/// `OffsetMetadataManagerTest.testFetchOffsetsWithPendingTransactionalOffsets` and
/// `testFetchAllOffsetsWithPendingTransactionalOffsets` (2024-10 and 2025-10): regular
/// commits of foo-0 (100), foo-1 (110), bar-0 (200), then producer 10's open transaction
/// commits foo-1 (111), bar-0 (201) and bar-1 (211). A fetch without `require_stable`
/// answers the regular offsets (bar-1: none); a stable fetch answers foo-0 and
/// UNSTABLE_OFFSET_COMMIT for the three partitions producer 10 holds
/// (`hasPendingTransactionalOffsets`). The COMMIT marker, here in the next segment (the
/// load reads the segments in order), materializes the three.
#[test]
fn fetch_offsets_with_pending_transactional_offsets() {
    let p10 = Producer::transactional(10, 0);
    let mut log = Log::new();
    log.batch(
        Producer::PLAIN,
        vec![
            commit("group", "foo", 0, 100),
            commit("group", "foo", 1, 110),
            commit("group", "bar", 0, 200),
        ],
    );
    log.batch(
        p10,
        vec![
            commit("group", "foo", 1, 111),
            commit("group", "bar", 0, 201),
            commit("group", "bar", 1, 211),
        ],
    );
    let l = log.load();
    let stable = [("foo", 0, 100, 0), ("foo", 1, 110, 1), ("bar", 0, 200, 2)];
    assert_eq!(l.offsets("group"), at(&stable));
    assert_eq!(
        l.pending,
        [
            held(10, "group", "bar", 0, 201),
            held(10, "group", "bar", 1, 211),
            held(10, "group", "foo", 1, 111),
        ]
    );
    // The consumer view: three commits applied, three pending, for one transaction.
    let g = (l.view.groups.iter())
        .find(|g| g.group_id == "group")
        .unwrap();
    assert_eq!((g.commits, g.pending), (3, 3));
    assert_eq!(l.view.pending.len(), 1, "{:#?}", l.view.pending);
    let p = &l.view.pending[0];
    assert_eq!((p.producer_id, p.first_offset, p.offsets.len()), (10, 3, 3));
    // Left open a day: the stable fetch is blocked by a hanging transaction.
    assert_eq!(
        l.of(Kind::GroupOffsetsPendingInHangingTransaction),
        [(Some("group".to_string()), Some(10))]
    );

    log.0.roll();
    log.marker(p10, true);
    let l = log.load();
    assert_eq!(
        l.offsets("group"),
        at(&[
            ("foo", 0, 100, 0),
            ("foo", 1, 111, 3),
            ("bar", 0, 201, 4),
            ("bar", 1, 211, 5),
        ])
    );
    assert_eq!(l.pending, []);
    assert!(l.view.pending.is_empty());
    assert_eq!(l.view_pending("group"), 0);
    assert!(l.serious().is_empty(), "{:#?}", l.serious());
}

/// One transaction commits offsets of two groups (`OffsetMetadataManagerTest.testTransactionalReplay`
/// holds producer 5's commits of groups foo and bar), beside a third group's regular commit
/// of the same partition. `hasPendingTransactionalOffsets` is asked per group
/// (`openTransactionsByGroup`, 2024-10; `openTransactions` by group and partition,
/// 2025-10): foo's and bar's stable fetches of orders-0 are unstable, baz's is not. The
/// COMMIT materializes both groups' offsets; an ABORT neither, and both stay simple
/// groups (4.x `replay` creates the group before holding the offset).
#[test]
fn one_transaction_holds_offsets_of_two_groups_and_not_of_a_third() {
    let p = Producer::transactional(7, 0);
    let log = |marker: Option<bool>| {
        let mut log = Log::new();
        log.batch(Producer::PLAIN, vec![commit("baz", "orders", 0, 5)]);
        log.batch(
            p,
            vec![
                commit("foo", "orders", 0, 10),
                commit("bar", "orders", 0, 20),
            ],
        );
        if let Some(c) = marker {
            log.marker(p, c);
        }
        log.load()
    };
    let l = log(None);
    assert_eq!(
        l.pending,
        [
            held(7, "bar", "orders", 0, 20),
            held(7, "foo", "orders", 0, 10)
        ]
    );
    assert_eq!(l.offsets("baz"), at(&[("orders", 0, 5, 0)]));
    assert!(l.offsets("foo").is_empty() && l.offsets("bar").is_empty());
    let counts: Vec<usize> = ["foo", "bar", "baz"]
        .iter()
        .map(|g| l.view_pending(g))
        .collect();
    assert_eq!(counts, [1, 1, 0]);
    assert_eq!(
        l.of(Kind::GroupOffsetsPendingInHangingTransaction),
        [
            (Some("bar".to_string()), Some(7)),
            (Some("foo".to_string()), Some(7))
        ]
    );

    let l = log(Some(true));
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 10, 1)]));
    assert_eq!(l.offsets("bar"), at(&[("orders", 0, 20, 2)]));
    assert_eq!(l.offsets("baz"), at(&[("orders", 0, 5, 0)]));
    assert_eq!(l.pending, []);
    assert!(l.serious().is_empty(), "{:#?}", l.serious());

    let l = log(Some(false));
    assert!(l.group("foo").simple && l.group("bar").simple);
    assert!(l.offsets("foo").is_empty() && l.offsets("bar").is_empty());
    assert_eq!(l.offsets("baz"), at(&[("orders", 0, 5, 0)]));
    assert_eq!(l.pending, []);
    assert!(l.serious().is_empty(), "{:#?}", l.serious());
}

/// `CoordinatorLoaderImpl` hands `replayEndTransactionMarker` the control batch's producer
/// id and epoch, and `GroupCoordinatorShard.replayEndTransactionMarker` passes only the
/// producer id on (`OffsetMetadataManager.replayEndTransactionMarker(producerId, result)`,
/// 2024-10 and 2025-10; core's 3.x load keys `pendingOffsets` by producer id alone): the
/// marker a transaction-version-2 coordinator writes one epoch above the data, or a
/// fencing abort at a bumped epoch, resolves the commits all the same. A marker of another
/// producer id resolves nothing.
#[test]
fn a_marker_at_a_bumped_epoch_resolves_the_pending_commits() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    log.marker(Producer::transactional(8, 1), true);
    let l = log.load();
    assert_eq!(l.pending, [held(7, "foo", "orders", 0, 10)]);

    log.marker(p.bumped(), true);
    let p1 = p.bumped();
    log.batch(p1, vec![commit("foo", "orders", 0, 11)]);
    log.marker(p1.bumped(), false);
    let l = log.load();
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 10, 0)]));
    assert_eq!(l.pending, []);
    assert!(l.of(Kind::GroupLoadFailure).is_empty());
}

/// One transaction commits the same partition twice: `OffsetMetadataManager.replay` puts
/// both into the producer's `pendingTransactionalOffsets` (an `Offsets` map: the second
/// replaces the first; core's 3.x `pendingOffsets(producerId).put` alike), so the COMMIT
/// materializes the later one at its own record offset.
#[test]
fn a_key_committed_twice_in_one_transaction_materializes_the_later_commit() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 1)]);
    log.batch(p, vec![commit("foo", "orders", 0, 2)]);
    log.marker(p, true);
    let l = log.load();
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 2, 1)]));
    assert_eq!(l.pending, []);
}

/// Before its marker, the transaction of
/// [`a_key_committed_twice_in_one_transaction_materializes_the_later_commit`] holds one
/// pending offset of orders-0 (`pendingTransactionalOffsets` is a map by group, topic and
/// partition; `OffsetMetadataManager.pendingTransactionalOffset` answers the later commit,
/// 2024-10 and 2025-10): one pending commit for the group, the later one, and one listed
/// in the hanging transaction's finding.
#[test]
fn a_key_committed_twice_in_one_transaction_is_one_pending_commit() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 1)]);
    log.batch(p, vec![commit("foo", "orders", 0, 2)]);
    let l = log.load();
    assert_eq!(l.pending, [held(7, "foo", "orders", 0, 2)]);
    assert_eq!(l.view_pending("foo"), 1);
    let f = (l.report.findings.iter())
        .find(|f| f.kind == Kind::GroupOffsetsPendingInHangingTransaction)
        .expect("pending in a hanging transaction");
    assert_eq!(f.evidence["pending_offsets"].as_array().unwrap().len(), 1);
}

/// A tombstone in a transactional batch. 4.x `OffsetMetadataManager.replay` reads a null
/// value before it looks at the producer id: the committed offset is removed at once, and
/// every open transaction's pending offset of the key too (2024-10 and 2025-10), so the
/// transaction's ABORT brings nothing back and another producer's later COMMIT
/// materializes nothing of that key. (Core's 3.x `doLoadGroupsAndOffsets` instead drops
/// only the tombstone's own producer's pending offset and keeps the committed 5: klogscan
/// models 4.x.)
#[test]
fn a_transactional_tombstone_removes_the_offset_at_once() {
    let (p7, p8) = (Producer::transactional(7, 0), Producer::transactional(8, 0));
    let mut log = Log::new();
    log.batch(
        Producer::PLAIN,
        vec![commit("foo", "orders", 0, 5), commit("foo", "orders", 1, 6)],
    );
    log.batch(p8, vec![commit("foo", "orders", 0, 9)]);
    log.batch(p7, vec![tombstone("foo", "orders", 0)]);
    let l = log.load();
    assert_eq!(l.offsets("foo"), at(&[("orders", 1, 6, 1)]));
    assert_eq!(l.pending, []);

    log.marker(p7, false);
    log.marker(p8, true);
    let l = log.load();
    assert_eq!(l.offsets("foo"), at(&[("orders", 1, 6, 1)]));
    assert_eq!(l.pending, []);
    assert!(l.of(Kind::GroupLoadFailure).is_empty());
}

/// A control batch of another type in `__consumer_offsets` (a leader change, a type
/// unknown to the reader): `CoordinatorLoaderImpl` replays only COMMIT and ABORT
/// (`ControlRecordType.parse` of the key; anything else is passed over), so the pending
/// commits stay pending (2024-10 and 2025-10).
#[test]
fn a_control_record_of_another_type_resolves_nothing() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    log.0.control_raw(p, 2, Some(vec![0; 8]));
    log.0.control_raw(p, 9, Some(vec![0; 8]));
    let l = log.load();
    assert_eq!(l.pending, [held(7, "foo", "orders", 0, 10)]);
    assert!(l.offsets("foo").is_empty());
}

/// A COMMIT marker whose key carries a version above 0: `ControlRecordType.parseTypeId`
/// reads a higher key version as version 0 (it only logs it), so the loader still sees
/// COMMIT and materializes the pending commit (2024-10 `ControlRecordType.parse`, 2025-10
/// `parseTypeId`).
#[test]
fn a_commit_marker_of_a_higher_key_version_commits() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    let marker = Rec::kv([0, 1, 0, 1], [0, 0, 0, 0, 0, 0]);
    log.0.append(Batch::new(p).record(marker).tweak(|s| {
        s.control = true;
        s.base_sequence = -1;
    }));
    let l = log.load();
    assert_eq!(l.pending, []);
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 10, 0)]));
}

/// The group coordinator's load reads a control record's key only
/// (`CoordinatorLoaderImpl`: `ControlRecordType.parse(record.key)`, then
/// `replayEndTransactionMarker`; 2024-10 core Scala and 2025-10 `coordinator-common`; core's
/// 3.x `doLoadGroupsAndOffsets` alike): a COMMIT whose value (the `EndTxnMarker`: version
/// and coordinator epoch, 6 bytes) is cut to 2 bytes still commits the pending offsets.
/// Only the producer-state layer (`EndTransactionMarker.deserialize`) reads the value.
#[test]
fn a_commit_marker_whose_value_does_not_parse_still_commits() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    log.0.control_raw(p, 1, Some(vec![0, 0]));
    let l = log.load();
    assert_eq!(l.pending, []);
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 10, 0)]));
}

/// The near miss of [`a_commit_marker_whose_value_does_not_parse_still_commits`]: the same
/// COMMIT with its 6-byte value commits in klogscan too.
#[test]
fn a_commit_marker_with_its_value_commits() {
    let p = Producer::transactional(7, 0);
    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    log.0.control_raw(p, 1, Some(vec![0, 0, 0, 0, 0, 0]));
    let l = log.load();
    assert_eq!(l.pending, []);
    assert_eq!(l.offsets("foo"), at(&[("orders", 0, 10, 0)]));
}

/// The load deserializes every record of a data batch as it reads it, whatever its
/// transaction becomes (`CoordinatorLoaderImpl`: `deserializer.deserialize` then `replay`,
/// the marker only later; core's 3.x `readOffsetMessageValue` alike): an offset commit
/// value that does not read fails the load even in a transaction the log aborts
/// (`group_load_failure` at its offset). The same transaction with a readable value loads
/// clean (the twin).
#[test]
fn an_unreadable_commit_in_an_aborted_transaction_still_fails_the_load() {
    let p = Producer::transactional(7, 0);
    let (k, _) = record(
        1,
        json!({"group": "foo", "topic": "orders", "partition": 0}),
        None,
    );
    let mut log = Log::new();
    log.batch(p, vec![Rec::kv(k, [0, 3, 0, 0])]);
    log.marker(p, false);
    let l = log.load();
    let f: Vec<&Finding> = (l.report.findings.iter())
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", l.report.findings);
    assert_eq!(f[0].offset, Some(0));
    assert!(
        f[0].message
            .contains("Could not read record with version 3"),
        "{}",
        f[0].message
    );

    let mut log = Log::new();
    log.batch(p, vec![commit("foo", "orders", 0, 10)]);
    log.marker(p, false);
    let l = log.load();
    assert!(l.of(Kind::GroupLoadFailure).is_empty());
    assert!(l.serious().is_empty(), "{:#?}", l.serious());
}

/// [`fetch_offsets_with_pending_transactional_offsets`] through the command line:
/// `klogscan groups --format json` gives the offsets a non-stable fetch answers (the
/// pending ones are not committed offsets), `klogscan consumers --format json` lists the
/// transaction's pending commits apart.
#[test]
fn the_command_line_keeps_pending_commits_apart() {
    let p10 = Producer::transactional(10, 0);
    let mut log = Log::new();
    log.batch(
        Producer::PLAIN,
        vec![
            commit("group", "foo", 0, 100),
            commit("group", "foo", 1, 110),
        ],
    );
    log.batch(p10, vec![commit("group", "foo", 1, 111)]);
    let d = tempfile::tempdir().unwrap();
    log.0.write(d.path()).unwrap();
    let dir = d.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let r = crate::common::run::klogscan(args, None, 120);
        serde_json::from_str::<serde_json::Value>(&r.out)
            .unwrap_or_else(|e| panic!("{e}: {} {}", r.out, r.err))
    };
    let groups = run(&["groups", dir, "--format", "json"]);
    let g = &groups["groups"][0];
    let offsets: Vec<(i64, i64)> = (g["offsets"].as_array().unwrap().iter())
        .map(|c| {
            (
                c["partition"].as_i64().unwrap(),
                c["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(offsets, [(0, 100), (1, 110)], "{g:#}");
    let now = NOW.to_string();
    let c = run(&["consumers", dir, "--format", "json", "--now", &now]);
    let pending = c["consumers"]["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{c:#}");
    assert_eq!(pending[0]["producer_id"], 10);
    assert_eq!(pending[0]["offsets"], json!([["foo", 1, 111]]));
}
