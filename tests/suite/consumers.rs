//! The consumer view and its findings on clusters written by the testkit: committed
//! offsets held against their data partitions (lag by hand), a group stalled by a hanging
//! transaction, a transactional offset commit left pending, truncation below commits,
//! retention past a slow group, unknown committed leader epochs; healthy groups of
//! read_committed traffic stay silent; the real broker data gives no consumer finding.

use klogscan::cluster::consumers::{self, ConsumerView, ConsumersOptions};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::group_scenarios::GroupLog;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use serde_json::{Value, json};
use std::path::Path;

use klogscan::report::consumers::CONSUMER_KINDS;

mod metadata_lineage;
pub(crate) mod topic_ids;
mod validation;

/// Where `group` lives with 50 `__consumer_offsets` partitions.
pub(crate) fn offsets_partition(group: &str) -> i32 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    (if h == i32::MIN { 0 } else { h.abs() }) % 50
}

/// An offset commit record (value version 3 with a leader epoch, 1 without).
fn commit(
    group: &str,
    topic: &str,
    partition: i32,
    offset: i64,
    epoch: Option<i32>,
) -> (i16, Value, Option<(i16, Value)>) {
    let key = json!({"group": group, "topic": topic, "partition": partition});
    let value = match epoch {
        Some(e) => (
            3,
            json!({"offset": offset, "leaderEpoch": e, "metadata": "m", "commitTimestamp": DEFAULT_START_MS}),
        ),
        None => (
            1,
            json!({"offset": offset, "metadata": "", "commitTimestamp": DEFAULT_START_MS, "expireTimestamp": -1}),
        ),
    };
    (1, key, Some(value))
}

/// A one-broker cluster: `data` partitions, `log` as the group's `__consumer_offsets`
/// partition, the given high watermarks and leader-epoch checkpoints.
pub(crate) struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    pub(crate) fn new(
        data: Vec<PartitionBuilder>,
        log: &GroupLog,
        offsets_partition: i32,
        hw: &[(&str, i32, i64)],
    ) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let mut b = LogDirBuilder::new(1).cluster_id("c1").clean_shutdown(true);
        for p in data {
            b = b.partition(p);
        }
        for &(t, p, h) in hw {
            b = b.high_watermark(t, p, h);
        }
        b.write(dir.path()).unwrap();
        log.write(dir.path(), offsets_partition).unwrap();
        Cluster { dir }
    }

    fn epochs(self, topic: &str, partition: i32, entries: &[(i32, i64)]) -> Self {
        let mut s = format!("0\n{}\n", entries.len());
        for (e, o) in entries {
            s.push_str(&format!("{e} {o}\n"));
        }
        std::fs::write(
            self.dir
                .path()
                .join(format!("{topic}-{partition}"))
                .join("leader-epoch-checkpoint"),
            s,
        )
        .unwrap();
        self
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Scan (reference time `now`, when given) and build the view.
    pub(crate) fn run(&self, now: Option<i64>) -> (Vec<Finding>, ConsumerView) {
        let opts = klogscan::results::ScanOptions::default().with_now_ms(now);
        let paths = [self.path().to_path_buf()];
        let inv = klogscan::discover::layout::discover(&paths);
        let report = klogscan::pipeline::analyse(&inv, &opts);
        let view = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
        (report.findings, view)
    }
}

fn of(f: &[Finding], k: Kind) -> Vec<&Finding> {
    f.iter().filter(|x| x.kind == k).collect()
}

pub(crate) fn consumer_findings(f: &[Finding]) -> Vec<&Finding> {
    f.iter()
        .filter(|x| CONSUMER_KINDS.contains(&x.kind))
        .collect()
}

pub(crate) fn row<'a>(
    v: &'a ConsumerView,
    group: &str,
    topic: &str,
    p: i32,
) -> &'a consumers::ConsumerRow {
    v.rows
        .iter()
        .find(|r| r.group_id == group && r.topic == topic && r.partition == p)
        .unwrap_or_else(|| panic!("no row {group} {topic}-{p} in {:#?}", v.rows))
}

/// orders-0: 4 plain records, a committed transaction of 3 records (+ marker), an aborted
/// one of 2 (+ marker), 1 plain record: log end 12. orders-1: 5 plain records.
pub(crate) fn healthy_orders() -> Vec<PartitionBuilder> {
    let plain = Producer::idempotent(100, 0);
    let txn = Producer::transactional(200, 0);
    let mut p0 = PartitionBuilder::new("orders", 0);
    p0.append(Batch::new(plain).records(4));
    p0.append(Batch::new(txn).records(3));
    p0.commit(txn, 1);
    p0.append(Batch::new(txn).records(2));
    p0.abort(txn, 1);
    p0.append(Batch::new(plain).records(1));
    let mut p1 = PartitionBuilder::new("orders", 1);
    p1.append(Batch::new(Producer::idempotent(101, 0)).records(5));
    vec![p0, p1]
}

#[test]
fn lag_matches_hand_computed_values() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("app", "orders", 0, 5, Some(0)),
        commit("app", "orders", 1, 2, None),
        commit("app", "gone", 3, 9, Some(0)),
    ]);
    let c = Cluster::new(
        healthy_orders(),
        &log,
        offsets_partition("app"),
        &[("orders", 0, 9), ("orders", 1, 5)],
    );
    let (f, v) = c.run(None);
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    let r = row(&v, "app", "orders", 0);
    // orders-0: log end 12, no open transaction → LSO 12; checkpointed HW 9.
    assert_eq!(r.committed_offset, 5);
    assert_eq!(r.committed_leader_epoch, Some(0));
    assert_eq!(
        (r.lag_high_watermark, r.lag_last_stable, r.lag_log_end),
        (Some(4), Some(7), Some(7))
    );
    let d = r.data.as_ref().unwrap();
    assert_eq!(
        (
            d.log_start_offset,
            d.log_end_offset,
            d.last_stable_offset,
            d.high_watermark
        ),
        (Some(0), Some(12), Some(12), Some(9))
    );
    let r = row(&v, "app", "orders", 1);
    assert_eq!(r.committed_leader_epoch, None);
    assert_eq!(
        (r.lag_high_watermark, r.lag_last_stable, r.lag_log_end),
        (Some(3), Some(3), Some(3))
    );
    // The commit on a partition absent from the inputs is counted, not judged.
    let r = row(&v, "app", "gone", 3);
    assert!(r.data.is_none() && r.lag_high_watermark.is_none());
    assert_eq!(v.unmatched.absent, 1);
    let g = v.groups.iter().find(|g| g.group_id == "app").unwrap();
    assert_eq!((g.commits, g.commits_matched), (3, 2));
    assert_eq!(g.coordinator.partition, offsets_partition("app"));
    assert_eq!(g.coordinator.read_from, offsets_partition("app"));
    assert_eq!(g.coordinator.partition_count, 50);
}

#[test]
fn results_without_the_walks_group_offsets_are_replayed() {
    let mut log = GroupLog::new();
    log.batch(vec![commit("app", "orders", 0, 5, Some(0))]);
    log.txn_batch(9, vec![commit("app", "orders", 1, 3, Some(0))]);
    let c = Cluster::new(healthy_orders(), &log, offsets_partition("app"), &[]);
    let opts = klogscan::results::ScanOptions::default();
    let paths = [c.path().to_path_buf()];
    let inv = klogscan::discover::layout::discover(&paths);
    let report = klogscan::pipeline::analyse(&inv, &opts);
    let walked = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
    // Results exchanged without the walk's group offsets (as another process may send them).
    let mut results = report.partition_results();
    for r in &mut results {
        r.cluster_inputs.group_offsets = None;
    }
    let mut report = klogscan::results::ScanReport::from_partition_results(results).unwrap();
    klogscan::pipeline::run_cluster_checks(&mut report, &inv, &opts);
    assert!(
        report
            .partitions
            .iter()
            .all(|p| p.cluster_inputs().group_offsets.is_none())
    );
    let replayed = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
    assert_eq!(
        serde_json::to_value(&walked).unwrap(),
        serde_json::to_value(&replayed).unwrap()
    );
    assert_eq!((walked.rows.len(), walked.pending.len()), (1, 1));
}

/// orders-0: a committed transaction (0..2, marker 3), then producer 7's transaction from
/// offset 4 never closed (4..6); orders-1 healthy.
fn stuck_orders() -> Vec<PartitionBuilder> {
    let txn = Producer::transactional(200, 0);
    let hanging = Producer::transactional(7, 0);
    let mut p0 = PartitionBuilder::new("orders", 0);
    p0.append(Batch::new(txn).records(3));
    p0.commit(txn, 1);
    p0.append(Batch::new(hanging).records(3));
    let mut p1 = PartitionBuilder::new("orders", 1);
    p1.append(Batch::new(Producer::idempotent(101, 0)).records(5));
    vec![p0, p1]
}

const HOURS_LATER: i64 = DEFAULT_START_MS + 3 * 3_600_000;

#[test]
fn group_stuck_behind_a_hanging_transaction_in_one_partition_healthy_in_the_other() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("stuck", "orders", 0, 4, Some(0)),
        commit("stuck", "orders", 1, 5, Some(0)),
        commit("behind", "orders", 0, 2, Some(0)),
        commit("uncommitted-reader", "orders", 0, 7, Some(0)),
    ]);
    // All three groups hash somewhere; write each group's partition.
    let c = Cluster::new(stuck_orders(), &log, offsets_partition("stuck"), &[]);
    let (f, v) = c.run(Some(HOURS_LATER));
    let hanging = of(&f, Kind::HangingTransaction);
    let hanging = hanging
        .iter()
        .find(|h| h.topic == "orders")
        .expect("hanging on orders-0");
    let blocked = of(&f, Kind::GroupBlockedByHangingTransaction);
    let stuck: Vec<_> = blocked
        .iter()
        .filter(|b| b.group.as_deref() == Some("stuck"))
        .collect();
    assert_eq!(stuck.len(), 1, "{blocked:#?}");
    let b = stuck[0];
    assert_eq!(
        (b.topic.as_str(), b.partition, b.offset),
        ("orders", 0, Some(4))
    );
    assert_eq!(b.severity, Severity::Error);
    assert_eq!(b.caused_by, vec![hanging.id.clone()]);
    assert_eq!(b.evidence["transaction"]["producer_id"], 7);
    assert_eq!(b.evidence["lag_behind"]["log_end"], 3);
    assert!(
        b.evidence["fix_command"]
            .as_str()
            .unwrap()
            .contains("--start-offset 4")
    );
    assert!(b.client_error.as_deref().unwrap().contains("stall"));
    // Below the stuck offset: info (it will stall there); above it: nothing.
    let behind: Vec<_> = blocked
        .iter()
        .filter(|b| b.group.as_deref() == Some("behind"))
        .collect();
    assert_eq!(behind.len(), 1);
    assert_eq!(behind[0].severity, Severity::Info);
    assert!(
        blocked
            .iter()
            .all(|b| b.group.as_deref() != Some("uncommitted-reader"))
    );
    // The healthy partition of the stuck group: no finding.
    assert!(
        consumer_findings(&f).iter().all(|x| x.partition == 0),
        "{f:#?}"
    );
    assert_eq!(row(&v, "stuck", "orders", 0).lag_last_stable, Some(0));
    assert_eq!(
        row(&v, "stuck", "orders", 0)
            .data
            .as_ref()
            .unwrap()
            .hanging
            .len(),
        1
    );
}

#[test]
fn an_open_transaction_within_its_timeout_blocks_nothing() {
    let mut log = GroupLog::new();
    log.batch(vec![commit("stuck", "orders", 0, 4, Some(0))]);
    let c = Cluster::new(stuck_orders(), &log, offsets_partition("stuck"), &[]);
    let (f, _) = c.run(None);
    assert!(of(&f, Kind::HangingTransaction).is_empty(), "{f:#?}");
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
}

fn pending_log(marker: Option<bool>) -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![commit("eos", "orders", 1, 1, Some(0))]);
    log.txn_batch(
        9,
        vec![
            commit("eos", "orders", 1, 3, Some(0)),
            commit("eos", "orders", 0, 2, Some(0)),
        ],
    );
    if let Some(c) = marker {
        log.marker(9, c);
    }
    log
}

#[test]
fn a_transactional_offset_commit_left_pending_in_a_hanging_transaction() {
    let n = offsets_partition("eos");
    let c = Cluster::new(healthy_orders(), &pending_log(None), n, &[]);
    let (f, v) = c.run(Some(HOURS_LATER));
    let hanging = of(&f, Kind::HangingTransaction);
    let h = hanging
        .iter()
        .find(|h| h.topic == "__consumer_offsets")
        .expect("hanging commit txn");
    let p = of(&f, Kind::GroupOffsetsPendingInHangingTransaction);
    assert_eq!(p.len(), 1, "{f:#?}");
    let p = p[0];
    assert_eq!(
        (p.topic.as_str(), p.partition, p.offset, p.producer_id),
        ("__consumer_offsets", n, Some(1), Some(9))
    );
    assert_eq!(p.group.as_deref(), Some("eos"));
    assert_eq!(p.caused_by, vec![h.id.clone()]);
    assert_eq!(p.evidence["pending_offsets"].as_array().unwrap().len(), 2);
    assert!(
        p.client_error
            .as_deref()
            .unwrap()
            .contains("UNSTABLE_OFFSET_COMMIT")
    );
    // The view keeps the last stable commit, and the pending ones apart.
    assert_eq!(row(&v, "eos", "orders", 1).committed_offset, 1);
    assert_eq!(v.pending.len(), 1);
}

#[test]
fn a_pending_offset_commit_of_a_live_or_closed_transaction_is_silent() {
    let n = offsets_partition("eos");
    // Open within its timeout.
    let c = Cluster::new(healthy_orders(), &pending_log(None), n, &[]);
    let (f, v) = c.run(None);
    assert!(
        of(&f, Kind::GroupOffsetsPendingInHangingTransaction).is_empty(),
        "{f:#?}"
    );
    assert_eq!(v.pending.len(), 1);
    // Committed, then aborted: nothing pending.
    for commit_it in [true, false] {
        let c = Cluster::new(healthy_orders(), &pending_log(Some(commit_it)), n, &[]);
        let (f, v) = c.run(Some(HOURS_LATER));
        assert!(consumer_findings(&f).is_empty(), "{f:#?}");
        assert!(v.pending.is_empty());
        let expected = if commit_it { 3 } else { 1 };
        assert_eq!(row(&v, "eos", "orders", 1).committed_offset, expected);
    }
}

#[test]
fn truncation_below_committed_offsets_says_which_client_path() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("epoch-latest", "orders", 1, 9, Some(0)),
        commit("epoch-above", "orders", 1, 8, Some(4)),
        commit("no-epoch", "orders", 1, 7, None),
        commit("caught-up", "orders", 1, 5, Some(0)),
    ]);
    let c = Cluster::new(
        healthy_orders(),
        &log,
        offsets_partition("epoch-latest"),
        // This copy checkpointed a high watermark at 9: it held what the groups read.
        &[("orders", 1, 9)],
    )
    .epochs("orders", 1, &[(0, 0)]);
    let (f, _) = c.run(None);
    let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
    let by = |g: &str| {
        *beyond
            .iter()
            .find(|x| x.group.as_deref() == Some(g))
            .unwrap_or_else(|| panic!("{g}: {beyond:#?}"))
    };
    let b = by("epoch-latest");
    assert_eq!(
        (b.topic.as_str(), b.partition, b.offset),
        ("orders", 1, Some(9))
    );
    assert_eq!(b.evidence["beyond_by"], 4);
    assert_eq!(b.evidence["validation"]["path"], "leader_epoch");
    assert_eq!(b.evidence["validation"]["epoch_end"]["end_offset"], 5);
    let b = by("epoch-above");
    assert_eq!(
        b.evidence["validation"]["epoch_end"]["case"],
        "above_latest"
    );
    assert!(
        b.evidence["validation"]["with_reset_policy"]
            .as_str()
            .unwrap()
            .contains("auto.offset.reset")
    );
    let b = by("no-epoch");
    assert_eq!(b.evidence["validation"]["path"], "out_of_range");
    assert!(
        b.client_error
            .as_deref()
            .unwrap()
            .contains("OffsetOutOfRangeException")
    );
    assert_eq!(beyond.len(), 3, "{beyond:#?}");
    // One cause, one finding: the unknown epoch of a commit beyond the end is in the
    // truncation finding's evidence, not a finding of its own.
    assert!(of(&f, Kind::CommittedLeaderEpochUnknown).is_empty());
}

/// Group ids are data: the reset and describe commands quote them for a POSIX shell (a
/// pasted `grp; touch FILE #` stays one argument) and join one that starts with `-` to its
/// option, so the tool does not read it as an option; the reset says to stop the group
/// first and checks with --dry-run before --execute.
#[test]
fn consumer_group_commands_quote_the_group_id() {
    for (group, want) in [
        ("grp; touch FILE #", "--group 'grp; touch FILE #'"),
        ("-rf", "--group=-rf"),
        ("plain", "--group plain"),
    ] {
        let mut log = GroupLog::new();
        log.batch(vec![commit(group, "orders", 1, 9, Some(0))]);
        // Its high-watermark checkpoint at the commit: this copy held what the group read.
        let (f, _) = Cluster::new(
            healthy_orders(),
            &log,
            offsets_partition(group),
            &[("orders", 1, 9)],
        )
        .epochs("orders", 1, &[(0, 0)])
        .run(None);
        let beyond = of(&f, Kind::CommittedOffsetBeyondLogEnd);
        assert_eq!(beyond.len(), 1, "{group:?}: {f:#?}");
        let r = beyond[0].remediation.as_deref().unwrap();
        assert!(
            r.contains(&format!(
                "<broker> {want} --topic orders:1 --reset-offsets --to-offset 5 --dry-run"
            )),
            "{group:?}: {r}"
        );
        assert!(r.contains("stop the group's consumers"), "{r}");
        assert!(
            !r.contains(&format!("--group {group} ")) || group == "plain",
            "{r}"
        );
        // Below the log start: the describe command.
        let mut p = PartitionBuilder::new("events", 0).start_offset(100);
        p.append(Batch::new(Producer::idempotent(5, 0)).records(10));
        let mut log = GroupLog::new();
        log.batch(vec![commit(group, "events", 0, 40, Some(0))]);
        let (f, _) = Cluster::new(vec![p], &log, offsets_partition(group), &[]).run(None);
        let below = of(&f, Kind::CommittedOffsetBelowLogStart);
        assert_eq!(below.len(), 1, "{group:?}: {f:#?}");
        let r = below[0].remediation.as_deref().unwrap();
        assert!(r.contains(&format!("--describe {want})")), "{group:?}: {r}");
    }
}

#[test]
fn retention_past_a_slow_group() {
    let mut p = PartitionBuilder::new("events", 0).start_offset(100);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(10));
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("slow", "events", 0, 40, Some(0)),
        commit("fast", "events", 0, 105, Some(0)),
        commit("at-start", "events", 0, 100, Some(0)),
    ]);
    let c = Cluster::new(vec![p], &log, offsets_partition("slow"), &[]);
    let (f, _) = c.run(None);
    let below = of(&f, Kind::CommittedOffsetBelowLogStart);
    assert_eq!(below.len(), 1, "{f:#?}");
    let b = below[0];
    assert_eq!((b.group.as_deref(), b.offset), (Some("slow"), Some(40)));
    assert_eq!(b.evidence["lost"], 60);
    assert!(consumer_findings(&f).len() == 1, "{f:#?}");
}

#[test]
fn committed_leader_epochs_outside_the_lineage() {
    // orders-0: epoch 0 for offsets 0..4, epoch 3 from offset 5.
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(5));
    p.set_leader_epoch(3);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(5));
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("gap-truncation", "orders", 0, 7, Some(2)),
        commit("gap-harmless", "orders", 0, 4, Some(1)),
        commit("known", "orders", 0, 8, Some(3)),
        commit("above", "orders", 0, 8, Some(5)),
    ]);
    let c = Cluster::new(vec![p], &log, offsets_partition("gap-truncation"), &[]).epochs(
        "orders",
        0,
        &[(0, 0), (3, 5)],
    );
    let (f, _) = c.run(None);
    let u = of(&f, Kind::CommittedLeaderEpochUnknown);
    let by = |g: &str| u.iter().find(|x| x.group.as_deref() == Some(g)).copied();
    let t = by("gap-truncation").expect("gap above the mapped end");
    assert_eq!(t.severity, Severity::Warning);
    assert_eq!(t.evidence["case"], "in_gap");
    assert_eq!(t.evidence["epoch_end"]["epoch"], 0);
    assert_eq!(t.evidence["epoch_end"]["end_offset"], 5);
    assert_eq!(by("gap-harmless").expect("gap").severity, Severity::Info);
    assert!(by("known").is_none());
    // Above this copy's lineage, no metadata log: behind the leader, or a replaced history.
    let a = by("above").expect("above the lineage");
    assert_eq!(
        (a.severity, &a.evidence["case"]),
        (Severity::Info, &json!("above_latest"))
    );
    assert_eq!(u.len(), 3);
}

#[test]
fn an_epoch_the_batches_carry_but_the_checkpoint_misses_is_not_judged() {
    // Batches at epochs 0 and 3; the checkpoint lost epoch 3's entry: which answer a
    // leader gives is open, so no finding.
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(5));
    p.set_leader_epoch(3);
    p.append(Batch::new(Producer::idempotent(5, 0)).records(5));
    let mut log = GroupLog::new();
    log.batch(vec![commit("g", "orders", 0, 8, Some(3))]);
    let c = Cluster::new(vec![p], &log, offsets_partition("g"), &[]).epochs("orders", 0, &[(0, 0)]);
    let (f, v) = c.run(None);
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    assert_eq!(
        row(&v, "g", "orders", 0)
            .data
            .as_ref()
            .unwrap()
            .lineage
            .as_ref()
            .unwrap()
            .entries
            .len(),
        1
    );
}

#[test]
fn healthy_groups_of_read_committed_traffic_are_silent() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("a", "orders", 0, 12, Some(0)),
        commit("a", "orders", 1, 5, Some(0)),
        commit("b", "orders", 0, 4, Some(0)),
        commit("b", "orders", 1, 0, None),
    ]);
    log.txn_batch(11, vec![commit("c", "orders", 0, 7, Some(0))]);
    log.marker(11, true);
    log.txn_batch(12, vec![commit("c", "orders", 1, 3, Some(0))]);
    log.marker(12, false);
    let c = Cluster::new(healthy_orders(), &log, offsets_partition("a"), &[])
        .epochs("orders", 0, &[(0, 0)])
        .epochs("orders", 1, &[(0, 0)]);
    let (f, v) = c.run(Some(HOURS_LATER));
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    assert_eq!(row(&v, "c", "orders", 0).committed_offset, 7);
    assert!(
        v.rows
            .iter()
            .all(|r| !(r.group_id == "c" && r.partition == 1))
    );
}

#[test]
fn real_consumer_offsets_give_no_false_finding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-data/broker");
    if !root.is_dir() {
        return;
    }
    let opts = klogscan::results::ScanOptions::default();
    let inv = klogscan::discover::layout::discover(&[root]);
    let report = klogscan::pipeline::analyse(&inv, &opts);
    let f = consumer_findings(&report.findings);
    assert!(f.is_empty(), "{f:#?}");
    let v = consumers::build(&report, &inv, &opts, &ConsumersOptions::default());
    assert!(!v.groups.is_empty());
    // Some commits meet their partitions (same log dir), most name partitions the inputs
    // do not hold: counted, not flagged.
    assert!(v.rows.iter().any(|r| r.data.is_some()));
    assert!(v.unmatched.absent > 0);
    for r in v.rows.iter().filter(|r| r.data.is_some()) {
        let d = r.data.as_ref().unwrap();
        assert_eq!(
            r.lag_log_end,
            d.log_end_offset.map(|e| e - r.committed_offset)
        );
    }
}

#[test]
fn consumers_command_rows_filters_and_findings() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("stuck", "orders", 0, 4, Some(0)),
        commit("stuck", "orders", 1, 2, Some(0)),
        commit("other", "orders", 1, 5, None),
    ]);
    let c = Cluster::new(
        stuck_orders(),
        &log,
        offsets_partition("stuck"),
        &[("orders", 1, 4)],
    );
    let dir = c.path().to_str().unwrap();
    let now = HOURS_LATER.to_string();
    let json = |extra: &[&str]| -> Value {
        let mut args = vec!["consumers", dir, "--format", "json", "--now", &now];
        args.extend_from_slice(extra);
        let r = crate::common::run::klogscan(&args, None, 120);
        assert_eq!(r.code(), 0, "{}", r.err);
        serde_json::from_str(&r.out).unwrap()
    };
    let all = json(&[]);
    let rows = all["consumers"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // orders-1: HW 4 (checkpoint), log end 5, no transaction: LSO 5.
    let r = rows
        .iter()
        .find(|r| r["group_id"] == "stuck" && r["partition"] == 1)
        .unwrap();
    assert_eq!(
        (
            r["lag_high_watermark"].as_i64(),
            r["lag_last_stable"].as_i64(),
            r["lag_log_end"].as_i64()
        ),
        (Some(2), Some(3), Some(3))
    );
    let f = all["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0]["kind"].as_str(), f[0]["group"].as_str()),
        (Some("group_blocked_by_hanging_transaction"), Some("stuck"))
    );
    let one = json(&["--group", "other"]);
    assert_eq!(one["consumers"]["rows"].as_array().unwrap().len(), 1);
    assert!(one["findings"].as_array().unwrap().is_empty());
    let p1 = json(&["--topic", "orders", "--partition", "1"]);
    assert_eq!(p1["consumers"]["rows"].as_array().unwrap().len(), 2);
    assert!(p1["findings"].as_array().unwrap().is_empty());
    let r = crate::common::run::klogscan(&["consumers", dir, "--now", &now], None, 120);
    assert_eq!(r.code(), 0, "{}", r.err);
    assert!(
        r.out.contains("LAG(LSO)") && r.out.contains("3 row(s)"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("group_blocked_by_hanging_transaction [stuck] orders-0@4"),
        "{}",
        r.out
    );
}

#[test]
fn html_timelines_mark_each_groups_committed_offset() {
    let mut log = GroupLog::new();
    log.batch(vec![
        commit("stuck", "orders", 0, 4, Some(0)),
        commit("<b>&'\"", "orders", 0, 1, Some(0)),
        commit("stuck", "orders", 1, 5, Some(0)),
    ]);
    let c = Cluster::new(stuck_orders(), &log, offsets_partition("stuck"), &[]);
    let opts = klogscan::results::ScanOptions::default().with_now_ms(HOURS_LATER);
    let answer = klogscan::request::run(
        &klogscan::request::Request::new([c.path()])
            .with_options(opts)
            .with_timelines(true),
    )
    .unwrap();
    let report = &answer.report;
    let positions = consumers::committed_positions(report);
    let orders0 = report
        .partitions
        .iter()
        .position(|p| p.topic == "orders" && p.partition == 0)
        .unwrap();
    assert_eq!(
        positions[orders0],
        vec![("<b>&'\"".to_string(), 1), ("stuck".to_string(), 4)]
    );
    let mut out = Vec::new();
    klogscan::report::html::write_scan(report, &answer.timelines, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(
        html.contains("data-group=\"stuck\" data-offset=\"4\""),
        "no mark"
    );
    assert!(html.contains("data-group=\"&lt;b&gt;&amp;&#39;&quot;\" data-offset=\"1\""));
    // orders-1 has no finding, so no timeline: no mark of its commit.
    assert!(!html.contains("data-offset=\"5\"><title>group stuck"));
}

#[test]
fn consumers_of_an_archive_name_its_members_by_the_archive() {
    let mut log = GroupLog::new();
    log.batch(vec![commit("stuck", "orders", 0, 4, Some(0))]);
    let c = Cluster::new(stuck_orders(), &log, offsets_partition("stuck"), &[]);
    // The cluster's log dir as a tar archive.
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("broker1.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&archive).unwrap());
    b.append_dir_all("data", c.path()).unwrap();
    b.finish().unwrap();
    drop(b);
    let now = HOURS_LATER.to_string();
    let args = [
        "consumers",
        archive.to_str().unwrap(),
        "--format",
        "json",
        "--now",
        &now,
    ];
    let r = crate::common::run::klogscan(&args, None, 120);
    assert_eq!(r.code(), 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).unwrap();
    let f = v["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    let path = f[0]["source"]["path"].as_str().unwrap();
    assert!(path.contains("broker1.tar!/data/orders-0"), "{path}");
    let row = &v["consumers"]["rows"][0];
    assert!(
        row["data"]["path"]
            .as_str()
            .unwrap()
            .contains("broker1.tar!/")
    );
}
