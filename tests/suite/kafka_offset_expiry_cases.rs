//! How Kafka's group coordinator expires committed offsets and removes groups, and what
//! `klogscan groups`, the consumer view (`klogscan consumers`) and the scan's
//! `__consumer_offsets` rules make of the records that leaves on disk.
//!
//! The coordinator's expiry runs in memory every `offsets.retention.check.interval.ms`
//! (`GroupCoordinatorShard.cleanupGroupMetadata` → `OffsetMetadataManager.cleanupExpiredOffsets`
//! → `GroupMetadataManager.maybeDeleteGroup`; the Scala `GroupMetadataManager.cleanupGroupMetadata`
//! → `GroupMetadata.removeExpiredOffsets` before 4.0). What reaches the log is offset commit
//! tombstones, then the group's tombstone(s) once the group is empty and holds no offset. Each
//! case below writes the log a Kafka test's cleanup cycles leave, stage by stage, and asserts
//! what a coordinator loading those bytes holds and that normal expiry raises no finding.
//! The last cases are about what klogscan does not model: the expiry a running coordinator
//! would apply at the reference time (`--now`), and the explicit expire timestamp of value v1.
//!
//! Kafka sources read: apache/kafka trunk of 2024-10 (`group-coordinator/.../OffsetMetadataManager.java`,
//! `GroupMetadataManager.java`, `GroupCoordinatorShard.java`, `OffsetExpirationConditionImpl.java`,
//! `classic/ClassicGroup.java`, `modern/consumer/ConsumerGroup.java`, core's Scala
//! `GroupMetadataManager.scala`) and the 2025-10 import. Only facts are written here.
#![cfg(feature = "testkit")]

use klogscan::cluster::consumers::{self, ConsumerView, ConsumersOptions};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::groups::{
    Group, GroupState, GroupType, GroupsOptions, list_groups, replay_partition_dir,
};
use klogscan::results::ScanOptions;
use klogscan::testkit::group_scenarios::{self, GroupLog, Spec};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use serde_json::{Value, json};
use std::ffi::OsStr;

const T0: i64 = DEFAULT_START_MS;
const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;
/// `offsets.retention.minutes`' default (7 days, `GroupCoordinatorConfig`).
const RETENTION: i64 = 7 * DAY;
/// The reference time of every scan here (`--now`).
const NOW: i64 = T0 + 30 * DAY;
const GROUP: &str = "group-id";

// ---------------------------------------------------------------------------------------
// Records.

/// An offset commit (value version 3) of `group` committed at `ts`.
fn commit(group: &str, topic: &str, partition: i32, offset: i64, ts: i64) -> Spec {
    (
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        Some((
            3,
            json!({"offset": offset, "leaderEpoch": -1, "metadata": "", "commitTimestamp": ts}),
        )),
    )
}

/// An offset commit of value version 1, with the explicit expire timestamp an old client's
/// retention (OffsetCommit v2–v4 `retention_time_ms`) or an old broker wrote.
fn commit_v1(group: &str, topic: &str, partition: i32, offset: i64, ts: i64, expire: i64) -> Spec {
    (
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        Some((
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": ts, "expireTimestamp": expire}),
        )),
    )
}

/// The tombstone an expiry (`appendOffsetCommitTombstone`) writes for one partition.
fn expired(group: &str, topic: &str, partition: i32) -> Spec {
    (
        1,
        json!({"group": group, "topic": topic, "partition": partition}),
        None,
    )
}

/// `newGroupMetadataTombstoneRecord`: what `maybeDeleteGroup` writes for a classic group.
fn group_tombstone(group: &str) -> Spec {
    (2, json!({"group": group}), None)
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

/// A classic group record (value version 3) of `protocol_type`, with one member
/// subscribed to `topics` when `topics` is `Some`, empty otherwise; `state_ts` is the
/// `currentStateTimestamp` (when the group entered its state).
fn classic(
    group: &str,
    protocol_type: &str,
    generation: i32,
    topics: Option<&[&str]>,
    state_ts: i64,
) -> Spec {
    let (protocol, leader, members) = match topics {
        Some(t) => (
            json!("range"),
            json!("m1"),
            json!([{"memberId": "m1", "groupInstanceId": null, "clientId": "client",
                    "clientHost": "/10.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                    "subscription": subscription(t), "assignment": ""}]),
        ),
        None => (Value::Null, Value::Null, json!([])),
    };
    (
        2,
        json!({"group": group}),
        Some((
            3,
            json!({"protocolType": protocol_type, "generation": generation, "protocol": protocol,
                   "leader": leader, "currentStateTimestamp": state_ts, "members": members}),
        )),
    )
}

// ---------------------------------------------------------------------------------------
// Reading back.

/// Where `group` lives with 50 `__consumer_offsets` partitions (`partitionFor`).
fn offsets_partition(group: &str) -> i32 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// What klogscan makes of one broker's log dir: the groups (deleted ones too), the
/// findings, the consumer view, and the offset commits the load holds pending.
struct Seen {
    dir: tempfile::TempDir,
    groups: Vec<Group>,
    findings: Vec<Finding>,
    view: ConsumerView,
    pending: Vec<(i64, String, String, i32, i64)>,
}

impl Seen {
    fn group(&self, id: &str) -> &Group {
        self.groups
            .iter()
            .find(|g| g.group_id == id)
            .unwrap_or_else(|| panic!("no group {id} in {:#?}", self.groups))
    }

    /// `(topic, partition, offset)` of the group's committed offsets.
    fn offsets(&self, id: &str) -> Vec<(String, i32, i64)> {
        let mut v: Vec<_> = self
            .group(id)
            .offsets
            .iter()
            .map(|c| (c.topic.clone(), c.partition, c.offset))
            .collect();
        v.sort();
        v
    }

    /// The consumer view's rows of `id` as `(topic, partition, committed offset)`.
    fn rows(&self, id: &str) -> Vec<(String, i32, i64)> {
        let mut v: Vec<_> = self
            .view
            .rows
            .iter()
            .filter(|r| r.group_id == id)
            .map(|r| (r.topic.clone(), r.partition, r.committed_offset))
            .collect();
        v.sort();
        v
    }

    /// Findings above info (what would make the data, or a client, suspect).
    fn serious(&self) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .collect()
    }

    fn of(&self, k: Kind) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.kind == k).collect()
    }

    /// No group finding of the `__consumer_offsets` rules.
    fn assert_no_group_finding(&self) {
        let f: Vec<_> = self
            .findings
            .iter()
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
        assert!(f.is_empty(), "{f:#?}");
    }

    /// `klogscan ARGS… DIR` on this log dir: its standard output.
    fn cli(&self, args: &[&str]) -> String {
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.push(self.dir.path().as_os_str());
        let r = crate::common::run::klogscan(&all, None, 120);
        assert_eq!(r.code(), 0, "{}", r.err);
        r.out
    }

    fn assert_clean(&self) {
        assert!(self.serious().is_empty(), "{:#?}", self.serious());
    }
}

fn opts() -> ScanOptions {
    ScanOptions::default().with_now_ms(NOW)
}

/// Write `log` as `group`'s `__consumer_offsets` partition of broker 1 (cluster `c1`), with
/// `data` partitions beside it, and read everything back.
fn see(log: &GroupLog, group: &str, data: Vec<PartitionBuilder>) -> Seen {
    let dir = tempfile::tempdir().unwrap();
    let mut b = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(true);
    for p in data {
        b = b.partition(p);
    }
    b.write(dir.path()).unwrap();
    log.write(dir.path(), offsets_partition(group)).unwrap();
    read(dir)
}

fn read(dir: tempfile::TempDir) -> Seen {
    let paths = [dir.path().to_path_buf()];
    let inv = klogscan::discover::layout::discover(&paths);
    let report = klogscan::pipeline::analyse(&inv, &opts());
    let view = consumers::build(&report, &inv, &opts(), &ConsumersOptions::default());
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
            pending.extend(
                r.pending_commits().map(|(pid, g, c)| {
                    (pid, g.to_string(), c.topic.clone(), c.partition, c.offset)
                }),
            );
        }
    }
    pending.sort();
    Seen {
        dir,
        groups,
        findings: report.findings,
        view,
        pending,
    }
}

fn tp(topic: &str, partition: i32, offset: i64) -> (String, i32, i64) {
    (topic.to_string(), partition, offset)
}

mod cleanup;
mod not_modelled;
