//! Review of session 25b: the TV2 admin-abort threshold (15 minutes), `topic_id_conflict`,
//! 3.7.0's failed start at a log without a topic id, and the open transaction floored by its
//! producer's earlier markers elsewhere in the log dir (`cluster::txns::clock`).
//!
//! Each `#[ignore = "defect: …"]` test fails today and states Kafka's behaviour; the others
//! pin what was checked and found right.

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, RegisterBroker};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::testkit::scenario::DEFAULT_START_MS as T0;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::Path;

const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

/// Set `p`'s clock to `ts` (the next batch or marker is stamped there).
fn clock_to(p: &mut PartitionBuilder, ts: i64) {
    let cur = p.now();
    p.advance_time(ts - cur);
}

/// A plain partition `clock-0` written every minute from T0 to minute `until`: the log
/// dir's reference time.
fn clock(until: i64) -> PartitionBuilder {
    let mut c = PartitionBuilder::new("clock", 0);
    for k in 0..=until {
        c.append(Batch::new(Producer::PLAIN).records(1).at(T0 + k * MINUTE));
    }
    c
}

fn scan(dir: &Path) -> Vec<Finding> {
    klogscan::pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default()).findings
}

/// The one open or hanging transaction of `topic`.
fn open_in(findings: &[Finding], topic: &str) -> Finding {
    let f: Vec<&Finding> = (findings.iter())
        .filter(|f| matches!(f.kind, Kind::OpenTransaction | Kind::HangingTransaction))
        .filter(|f| f.topic == topic)
        .collect();
    assert_eq!(f.len(), 1, "{findings:#?}");
    f[0].clone()
}

// ---------------------------------------------------------------------------------------
// (4) cluster::txns::clock — the floor from the producer's earlier markers
// ---------------------------------------------------------------------------------------

/// A TV0/1 producer (3.7: no TV2 at all) fenced once: its first transaction timed out and
/// the coordinator aborted it at epoch + 1 (`TransactionCoordinator.abortTimedOutTransactions`
/// → `TransactionMetadata.prepareFenceProducerEpoch`; the same on `InitProducerId` over an
/// ongoing transaction, `handleInitProducerId` case Ongoing). The producer re-inits at epoch
/// 2 and commits at its data's epoch (TV0/1) in `out-0`; the transaction opened in
/// `store-changelog-0` (event times two days back) is one whose COMMIT never reached that
/// partition — and the COMMIT at epoch 2 in `out-0` may be that very transaction's.
#[test]
fn a_tv01_fence_abort_is_not_tv2_and_does_not_floor_a_lost_marker() {
    let p0 = Producer::transactional(700, 0);
    let mut out = PartitionBuilder::new("out", 0);
    // epoch 0: timed out, aborted by the coordinator at the fenced epoch 1
    out.append(Batch::new(p0).records(1).at(T0));
    clock_to(&mut out, T0 + MINUTE);
    out.abort(p0.bumped(), 0);
    // re-initialised at epoch 2; TV0/1: COMMIT at the data's epoch
    let p2 = p0.with_epoch(2);
    for k in 1..=3 {
        let now = T0 + k * 4 * MINUTE;
        out.append(Batch::new(p2).records(2).at(now));
        clock_to(&mut out, now + MINUTE);
        out.commit(p2, 0);
    }
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p2).records(3).at(T0 + 12 * MINUTE - 2 * DAY));
    let d = tempfile::tempdir().unwrap();
    // The reference time at minute 20: the COMMITs at epoch 2 (the last at minute 14) would
    // floor it to 6 minutes idle; the fence's ABORT of the epoch-0 transaction (minute 1),
    // complete before epoch 2 was handed out, is a true floor and leaves 19 minutes.
    LogDirBuilder::new(1)
        .partition(out)
        .partition(store)
        .partition(clock(20))
        .write(d.path())
        .unwrap();
    let f = open_in(&scan(d.path()), "store-changelog");
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
    assert!(
        f.evidence.get("broker_clock_floor_from").is_none(),
        "{f:#?}"
    );
}

/// The same log without the fence: the authors' own near miss, kept (TV0/1 not floored).
#[test]
fn without_the_fence_the_tv01_producer_is_not_floored() {
    let p = Producer::transactional(700, 2);
    let mut out = PartitionBuilder::new("out", 0);
    for k in 1..=3 {
        let now = T0 + k * 4 * MINUTE;
        out.append(Batch::new(p).records(2).at(now));
        clock_to(&mut out, now + MINUTE);
        out.commit(p, 0);
    }
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p).records(3).at(T0 + 12 * MINUTE - 2 * DAY));
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(out)
        .partition(store)
        .partition(clock(16))
        .write(d.path())
        .unwrap();
    let f = open_in(&scan(d.path()), "store-changelog");
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
}

/// `out-0`: a TV2 producer's three transactions, each COMMIT one epoch above its data; it
/// ends at epoch 3 (returned).
fn tv2_history(out: &mut PartitionBuilder) -> Producer {
    let mut p = Producer::transactional(700, 0);
    for k in 0..3 {
        let now = T0 + k * 3 * MINUTE;
        out.append(Batch::new(p).records(2).at(now));
        clock_to(out, now + MINUTE);
        out.commit(p.bumped(), 0);
        p = p.bumped();
    }
    p
}

/// TV2: the transaction at epoch 3 wrote `store-changelog-0` and `other-0` at minute 12 and
/// hangs in both; at minute 30 an operator aborted it in `other-0` only
/// (`kafka-transactions.sh abort --topic other --partition 0`: `AbortTransactionHandler`
/// writes the ABORT at the producer's current epoch, 3 — klogscan itself calls it a likely
/// admin abort). That ABORT is this very transaction's marker, written after its records
/// in `store-changelog-0`: it floors nothing there. At minute 40 the transaction has been
/// idle 28 minutes in `store-changelog-0`: hanging.
#[test]
fn an_admin_abort_of_the_same_transaction_elsewhere_does_not_floor_its_hang() {
    let mut out = PartitionBuilder::new("out", 0);
    let p = tv2_history(&mut out);
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p).records(3).at(T0 + 12 * MINUTE));
    let mut other = PartitionBuilder::new("other", 0);
    other.append(Batch::new(p).records(1).at(T0 + 12 * MINUTE));
    clock_to(&mut other, T0 + 30 * MINUTE);
    other.abort(p, 0);
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(out)
        .partition(store)
        .partition(other)
        .partition(clock(40))
        .write(d.path())
        .unwrap();
    let found = scan(d.path());
    // other-0's transaction is closed (by the admin ABORT) …
    assert!(
        !found
            .iter()
            .any(|f| f.topic == "other" && f.kind == Kind::HangingTransaction),
        "{found:#?}"
    );
    // … but that ABORT is no floor for the same transaction's records elsewhere.
    let f = open_in(&found, "store-changelog");
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
}

/// TV2: the open transaction's own COMMIT (epoch + 1) written to another partition after its
/// records here, its marker lost here: excluded from the floor (the previous transaction's
/// marker is too old to floor it): hanging.
#[test]
fn the_transactions_own_next_epoch_marker_elsewhere_does_not_floor_it() {
    let p0 = Producer::transactional(700, 0);
    let mut out = PartitionBuilder::new("out", 0);
    out.append(Batch::new(p0).records(2).at(T0));
    clock_to(&mut out, T0 + MINUTE);
    out.commit(p0.bumped(), 0);
    let p1 = p0.bumped();
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p1).records(3).at(T0 + 2 * MINUTE - 2 * DAY));
    let mut sink = PartitionBuilder::new("sink", 0);
    sink.append(Batch::new(p1).records(1).at(T0 + 2 * MINUTE));
    clock_to(&mut sink, T0 + 35 * MINUTE);
    sink.commit(p1.bumped(), 0);
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(out)
        .partition(store)
        .partition(sink)
        .partition(clock(40))
        .write(d.path())
        .unwrap();
    let f = open_in(&scan(d.path()), "store-changelog");
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
    assert!(
        f.evidence.get("broker_clock_floor_from").is_none(),
        "{f:#?}"
    );
}

/// The floor is a live-copy verdict within one log dir: the same producer's previous
/// COMMIT in another broker's log dir floors nothing.
#[test]
fn a_marker_in_another_log_dir_does_not_floor() {
    let root = tempfile::tempdir().unwrap();
    let mut out = PartitionBuilder::new("out", 0);
    let p = tv2_history(&mut out);
    LogDirBuilder::new(2)
        .partition(out)
        .partition(clock(16))
        .write(&root.path().join("b2"))
        .unwrap();
    let mut store = PartitionBuilder::new("store-changelog", 0);
    store.append(Batch::new(p).records(3).at(T0 + 12 * MINUTE - 2 * DAY));
    LogDirBuilder::new(1)
        .partition(store)
        .partition(clock(16))
        .write(&root.path().join("b1"))
        .unwrap();
    let f = open_in(&scan(root.path()), "store-changelog");
    assert_eq!(f.kind, Kind::HangingTransaction, "{f:#?}");
}

// ---------------------------------------------------------------------------------------
// (1) partition::state::marker — an unbumped TV2 ABORT after 15 minutes idle
// ---------------------------------------------------------------------------------------

/// A TV2 producer (a COMMIT one epoch above its data) whose next transaction is closed by
/// an ABORT at its data's epoch after `idle` minutes.
fn unbumped_abort_after(idle: i64) -> Finding {
    let p0 = Producer::transactional(900, 0);
    let mut t = PartitionBuilder::new("t", 0);
    t.append(Batch::new(p0).records(1).at(T0));
    clock_to(&mut t, T0 + MINUTE);
    t.commit(p0.bumped(), 0);
    let p1 = p0.bumped();
    t.append(Batch::new(p1).records(1).at(T0 + 2 * MINUTE));
    clock_to(&mut t, T0 + 2 * MINUTE + idle * MINUTE);
    t.abort(p1, 0);
    let d = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1).partition(t).write(d.path()).unwrap();
    let f: Vec<Finding> = (scan(d.path()).into_iter())
        .filter(|f| f.kind == Kind::MarkerEpochNotBumped)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    f.into_iter().next().unwrap()
}

/// `kafka-transactions.sh find-hanging` lists a transaction once `now - lastTimestamp >
/// --max-transaction-timeout` (15 minutes by default; `TransactionsCommand
/// .FindHangingTransactionsCommand`), and the coordinator itself would have bumped the
/// epoch of a timed-out transaction (`prepareFenceProducerEpoch`): past 15 minutes, info.
#[test]
fn an_unbumped_tv2_abort_is_an_admin_abort_from_15_minutes_only() {
    let f = unbumped_abort_after(16);
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(f.evidence["likely_admin_abort"], true);
    let f = unbumped_abort_after(14);
    assert_ne!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(f.evidence["likely_admin_abort"], false);
}

// ---------------------------------------------------------------------------------------
// (2) cluster::topic_ids — topic_id_conflict
// ---------------------------------------------------------------------------------------

fn set_id(dir: &Path, partition: &str, seed: &str) {
    let text = format!("version: 0\ntopic_id: {}", uuid_text(&topic_id_for(seed)));
    std::fs::write(dir.join(partition).join("partition.metadata"), text).unwrap();
}

fn events_log_dir(partitions: &[i32]) -> LogDirBuilder {
    let mut b = LogDirBuilder::new(1).cluster_id("c1");
    for &n in partitions {
        let mut p = PartitionBuilder::new("events", n);
        p.append(Batch::new(Producer::PLAIN).records(2));
        b = b.partition(p);
    }
    b
}

fn conflicts(dir: &Path) -> Vec<Finding> {
    (scan(dir).into_iter())
        .filter(|f| f.kind == Kind::TopicIdConflict)
        .collect()
}

fn register(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + id as i64,
        ..Default::default()
    })
}

/// The cluster's whole metadata log (from offset 0, no gap: e.g. the one a ZooKeeper
/// migration starts, replicated to the broker in migration mode) names `events` under id B
/// with partition 0 on brokers 1 and 2; broker 1's log dir holds `events-0` under B and
/// `events-1` under A — a log of an incarnation deleted before that log began (a ZooKeeper
/// broker keeps a stray log forever). Kafka 3.7.1+ renames the A log `-stray` at the first
/// KRaft start (`LogManager.isStrayKraftReplica`: "the topicId … does not exist in the
/// metadata image"), and the two ids in one log dir are proved by the bytes alone. The stray
/// rule says nothing of an id its history never names (`stray::judge`:
/// `history.partitions.get(..)?`), and `topic_ids::judged_by_metadata` skips the conflict as
/// soon as a metadata log of the cluster is present, whether or not its image judged these
/// directories: nobody says anything.
#[test]
fn two_ids_in_one_log_dir_are_reported_by_someone_beside_the_metadata_log() {
    let d = tempfile::tempdir().unwrap();
    events_log_dir(&[0, 1]).write(d.path()).unwrap();
    set_id(d.path(), "events-0", "events-B");
    set_id(d.path(), "events-1", "events-A");
    let mut m = MetadataLogBuilder::new(T0);
    let mut first = vec![register(1), register(2)];
    first.extend(klogscan::testkit::brokers::topic_with_partition(
        "events",
        topic_id_for("events-B"),
        &[1, 2],
    ));
    m.batch(&first);
    m.write(d.path()).unwrap();
    let found = scan(d.path());
    let said = found.iter().any(|f| {
        f.kind == Kind::TopicIdConflict || (f.kind == Kind::StrayReplica && f.partition == 1)
    });
    assert!(said, "{found:#?}");
}

/// ZooKeeper mode (meta.properties v0): two ids in one log dir are also what KAFKA-12835
/// leaves on a 2.8.0 cluster (fixed in 2.8.1/3.0: commit "Topic IDs can mismatch on brokers
/// (after interbroker protocol version update)"): a controller with IBP < 2.8 rewrote the
/// topic znode without its id, the next 2.8 controller (`KafkaController`, topic id
/// assignment) gave the same, never-deleted topic a new id; the broker's old logs keep the
/// first in `partition.metadata` (`Log`/`UnifiedLog.initializeTopicId`), the partitions
/// created there afterwards get the second, and `LogManager.getOrCreateLog` throws
/// `InconsistentTopicIdException` for the old ones. Those old logs are the live topic's
/// data, not "another incarnation": the finding must not assert a delete-and-recreate (nor
/// tell the operator their records are a deleted incarnation's) when the bytes allow both.
#[test]
fn a_zookeeper_mode_conflict_does_not_assert_a_deleted_incarnation() {
    let d = tempfile::tempdir().unwrap();
    events_log_dir(&[0, 1, 2]).write(d.path()).unwrap();
    set_id(d.path(), "events-2", "events-reassigned");
    let meta = std::fs::read_to_string(d.path().join("meta.properties")).unwrap();
    assert!(
        meta.contains("version=0"),
        "a ZooKeeper-mode log dir: {meta}"
    );
    let c = conflicts(d.path());
    assert_eq!(c.len(), 1, "{c:#?}");
    let f = &c[0];
    let text = format!("{} {}", f.message, f.remediation.as_deref().unwrap_or(""));
    assert!(
        text.contains("12835") || text.to_lowercase().contains("reassigned"),
        "names the other reading: {text}"
    );
}

/// A `-delete` directory of the old incarnation (`LogManager.asyncDelete` renames it
/// `<topic>-<partition>.<uuid>-delete` when the deletion is applied) and a `-stray` one
/// (`UnifiedLog.logStrayDirName`, 3.7+) beside the live directories of the new one: only
/// live directories count, no conflict.
#[test]
fn delete_and_stray_directories_of_the_old_id_are_no_conflict() {
    let d = tempfile::tempdir().unwrap();
    events_log_dir(&[0, 1, 2, 3]).write(d.path()).unwrap();
    set_id(d.path(), "events-2", "events-old");
    set_id(d.path(), "events-3", "events-old");
    std::fs::rename(
        d.path().join("events-2"),
        d.path()
            .join("events-2.0123456789abcdef0123456789abcdef-delete"),
    )
    .unwrap();
    std::fs::rename(
        d.path().join("events-3"),
        d.path()
            .join("events-3.fedcba9876543210fedcba9876543210-stray"),
    )
    .unwrap();
    assert!(conflicts(d.path()).is_empty(), "{:#?}", conflicts(d.path()));
    // and the near miss: left live, the same directory is a conflict
    let d = tempfile::tempdir().unwrap();
    events_log_dir(&[0, 1, 2]).write(d.path()).unwrap();
    set_id(d.path(), "events-2", "events-old");
    assert_eq!(conflicts(d.path()).len(), 1);
}

// ---------------------------------------------------------------------------------------
// (3) cluster::leadership::stray at --broker-version 3.7.0
// ---------------------------------------------------------------------------------------

/// Broker 1 (cluster `c1`) holding `orders-0` without `partition.metadata`, the metadata log
/// `m` beside it.
fn bare_orders(root: &Path, m: &MetadataLogBuilder) {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(3);
    p.append(Batch::new(Producer::PLAIN).records(3));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(root)
        .unwrap();
    std::fs::remove_file(root.join("orders-0").join("partition.metadata")).unwrap();
    m.write(root).unwrap();
}

fn startup(root: &Path, version: &str) -> Vec<klogscan::verify::BrokerStartup> {
    let v = Some(version.parse().unwrap());
    let r = klogscan::request::verify(&klogscan::request::Request::new([root]), v);
    r.unwrap().report.broker_startup
}

/// 3.7.0's `LogManager.findStrayReplicas` throws on the first log without a topic id before
/// it looks the log up in the image (`log.topicId.getOrElse(throw new RuntimeException(…))`,
/// checked on the 3.7.0 tag), over every loaded log (`allLogs`): whether the metadata log
/// names the topic is irrelevant to the failed start (`BrokerMetadataPublisher
/// .initializeManagers` → `fatalFaultHandler`, `SharedServer
/// .initialBrokerMetadataLoadFaultHandler`, fatal). The case: a ZooKeeper-era stray log
/// (`orders-0`, written before topic ids and never given one: no LeaderAndIsr reached it)
/// of a topic deleted before the migration; the cluster's whole metadata log (from offset 0)
/// names `events` only. `stray::judge` keeps its `named` condition for 3.7.0 and loses the
/// failed start.
#[test]
fn a_3_7_0_start_stops_at_a_log_without_id_whatever_the_history_names() {
    let mut m = MetadataLogBuilder::new(T0);
    let mut first = vec![register(1), register(2)];
    first.extend(klogscan::testkit::brokers::topic_with_partition(
        "events",
        topic_id_for("events"),
        &[1, 2],
    ));
    m.batch(&first);
    let d = tempfile::tempdir().unwrap();
    bare_orders(d.path(), &m);
    let s = startup(d.path(), "3.7.0");
    assert_eq!(s.len(), 1, "{s:#?}");
    assert_eq!((s[0].broker, s[0].starts), (Some(1), Some(false)));
}

/// What the change does get right: a named topic's log without an id stops 3.7.0 only.
#[test]
fn a_named_topics_log_without_id_stops_3_7_0_only() {
    let id = topic_id_for("orders");
    let mut m = MetadataLogBuilder::new(T0);
    let mut first = vec![register(1), register(2)];
    first.extend(klogscan::testkit::brokers::topic_with_partition(
        "orders",
        id,
        &[1, 2],
    ));
    m.batch(&first);
    let d = tempfile::tempdir().unwrap();
    bare_orders(d.path(), &m);
    assert_eq!(startup(d.path(), "3.7.0").len(), 1);
    for v in ["3.6.2", "3.7.1", "4.0.0"] {
        assert!(startup(d.path(), v).is_empty(), "{v}");
    }
}
