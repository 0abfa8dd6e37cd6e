//! How a follower reconciles its log with the leader's, against Kafka's fetcher tests: KIP-101 /
//! KIP-279 truncation by leader epoch (`AbstractFetcherThread.getOffsetTruncationState` over
//! `LeaderEpochFileCache.endOffsetFor` on both sides, asked again until the epochs agree), the
//! KRaft-era diverging epoch of a fetch response (`truncateOnFetchResponse`, the same state
//! machine), and the high-watermark fallback of a follower without epochs
//! (`truncateToHighWatermark`). Each case writes the replicas as several brokers' log dirs just
//! before the follower reconciles, scans all of them at once and holds klogscan's
//! `replica_divergence`, `unclean_leader_election` and `truncation_below_high_watermark`
//! verdicts to what Kafka's truncation does to them.
//!
//! Kafka sources: `core/src/test/scala/unit/kafka/server/AbstractFetcherThreadTest.scala`
//! (trunk), `EpochDrivenReplicationProtocolAcceptanceTest.scala` (3.9 branch),
//! `kafka.cluster.Partition.makeLeader` (a new leader assigns its epoch's start offset in its
//! cache when elected, before any batch of that epoch), `kafka.log.UnifiedLog.truncateTo`.

use std::path::{Path, PathBuf};

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, PartitionChange, RegisterBroker};
use klogscan::results::ScanReport;
use klogscan::testkit::brokers::{orders_change, orders_partition};
use klogscan::testkit::files::{LogDirBuilder, topic_id_for};
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::testkit::scenario::{Batch, Legacy, PartitionBuilder, Producer};

const T0: i64 = 1_700_000_000_000;

/// `n` single-record batches of leader epoch `epoch` from offset `from`, valued
/// `<tag><offset>`: two copies given the same runs hold the same bytes (the values and the
/// timestamps follow from the offsets; `partitionLeaderEpoch` is outside the CRC).
pub(crate) fn run(epoch: i32, tag: &str, from: i64, n: i64) -> Vec<(i32, String)> {
    (from..from + n)
        .map(|o| (epoch, format!("{tag}{o}")))
        .collect()
}

/// `orders-0` from offset `start`, one single-record batch per `(epoch, value)`, the batch at
/// offset `o` stamped `T0 + o` seconds.
pub(crate) fn log(start: i64, batches: &[(i32, String)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_offset(start)
        .start_time(T0);
    for (i, (e, v)) in batches.iter().enumerate() {
        let off = start + i as i64;
        p.set_leader_epoch(*e);
        p.append(
            Batch::new(Producer::PLAIN)
                .values([v.as_bytes()])
                .at(T0 + off * 1000),
        );
    }
    p
}

pub(crate) fn cat(parts: &[Vec<(i32, String)>]) -> Vec<(i32, String)> {
    parts.iter().flatten().cloned().collect()
}

/// Broker `id`'s log dir `root/broker-<id>` (cluster `c1`) holding `p`, its checkpointed high
/// watermark `hw`.
fn broker_dir(root: &Path, id: i32, p: PartitionBuilder, hw: i64) -> PathBuf {
    let ld = root.join(format!("broker-{id}"));
    LogDirBuilder::new(id)
        .cluster_id("c1")
        .partition(p)
        .high_watermark("orders", 0, hw)
        .write(&ld)
        .unwrap();
    ld
}

fn scan(dirs: &[PathBuf]) -> ScanReport {
    klogscan::pipeline::scan(dirs, &ScanOptions::default())
}

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// The one `replica_divergence` of `r`.
fn one_divergence(r: &ScanReport) -> &Finding {
    let d = of_kind(r, Kind::ReplicaDivergence);
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    d[0]
}

/// The replica `evidence.truncation` names (`broker-1`, `broker-2`) and where it truncates.
fn truncation(f: &Finding) -> (String, i64) {
    let t = &f.evidence["truncation"];
    let replica = t["replica"].as_str().unwrap_or_else(|| {
        panic!(
            "no truncation in the evidence: {:#}\n{}",
            f.evidence, f.message
        )
    });
    let who = ["broker-1", "broker-2"]
        .into_iter()
        .find(|b| replica.contains(b))
        .unwrap_or(replica);
    (who.to_string(), t["to_offset"].as_i64().unwrap())
}

fn no_loss_findings(r: &ScanReport) {
    for k in [
        Kind::ReplicaDivergence,
        Kind::TruncationBelowHighWatermark,
        Kind::UncleanLeaderElection,
    ] {
        assert!(of_kind(r, k).is_empty(), "{k:?}: {:#?}", r.findings);
    }
}

// ---------------------------------------------------------------------------------------------
// AbstractFetcherThreadTest
// ---------------------------------------------------------------------------------------------

/// `AbstractFetcherThreadTest.testTruncation`, as Kafka writes it: the follower holds a, b, c
/// at epochs 0, 2, 4, the leader the same records at epochs 1, 3, 5. The follower asks three
/// times (epoch 4 → the leader's floor 3 ends at 2; its own epoch 2 ends at 2, truncate and ask
/// again; epoch 2 → the leader's 1 ends at 1; its 0 ends at 1; epoch 0 → below the leader's
/// oldest entry: (0, 0)) and ends truncated to 0, then fetches the same records back. The
/// records are equal (same CRC, the epoch is outside it): nothing differs, nothing is lost.
#[test]
fn truncation_through_every_epoch_over_equal_records_is_no_finding() {
    let d = tempfile::tempdir().unwrap();
    let values = |epochs: [i32; 3]| -> Vec<(i32, String)> {
        epochs
            .iter()
            .zip(["a", "b", "c"])
            .map(|(e, v)| (*e, v.to_string()))
            .collect()
    };
    let f = broker_dir(d.path(), 1, log(0, &values([0, 2, 4])), 0);
    let l = broker_dir(d.path(), 2, log(0, &values([1, 3, 5])), 2);
    no_loss_findings(&scan(&[f, l]));
}

/// `testTruncation` with the leader's records other than the follower's (a history
/// `testTruncation` stands for: each epoch's leader wrote its own record at the same offset).
/// The rounds of `getOffsetTruncationState` truncate the follower to 0: the divergence at 0
/// is what that truncation removes; the follower's checkpointed high watermark (0) says
/// nothing of it was acknowledged — a warning naming the follower and offset 0.
#[test]
fn truncation_through_every_epoch_removes_the_followers_whole_log() {
    let d = tempfile::tempdir().unwrap();
    let f = broker_dir(
        d.path(),
        1,
        log(0, &[(0, "a".into()), (2, "b".into()), (4, "c".into())]),
        0,
    );
    let l = broker_dir(
        d.path(),
        2,
        log(0, &[(1, "x".into()), (3, "y".into()), (5, "z".into())]),
        2,
    );
    let r = scan(&[f, l]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(0));
    assert_eq!(truncation(div), ("broker-1".into(), 0), "{}", div.message);
    assert_eq!(div.severity, Severity::Warning, "{}", div.message);
    assert!(
        of_kind(&r, Kind::TruncationBelowHighWatermark).is_empty(),
        "{:#?}",
        r.findings
    );
}

/// `AbstractFetcherThreadTest.testDivergingEpochs`: the follower holds a@0, b@2, c@4, the leader
/// a@0, b@2, d@5. The diverging epoch the leader returns (epoch 2 ends at 2) truncates the
/// follower to 2; the follower's high watermark is 0: a warning that the truncation removes
/// the tail from offset 2.
#[test]
fn diverging_epochs_truncate_the_follower_to_the_shared_epochs_end() {
    let d = tempfile::tempdir().unwrap();
    let f = broker_dir(
        d.path(),
        1,
        log(0, &[(0, "a".into()), (2, "b".into()), (4, "c".into())]),
        0,
    );
    let l = broker_dir(
        d.path(),
        2,
        log(0, &[(0, "a".into()), (2, "b".into()), (5, "d".into())]),
        2,
    );
    let r = scan(&[f, l]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(2));
    assert_eq!(truncation(div), ("broker-1".into(), 2), "{}", div.message);
    assert_eq!(div.severity, Severity::Warning, "{}", div.message);
    assert_eq!(
        div.evidence["truncation"]["acknowledged"],
        serde_json::Value::Null
    );
}

/// `AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData`: the follower
/// a, b@0, c@2, d, e, f@4 (high watermark 1), the leader a, b@0, c@2, g, h@5 (high watermark
/// 4). The first fetch's diverging epoch truncates the follower to 3 (epoch 2 ends at 3 on
/// both) and leaves its high watermark at 1: the follower's three records from 3 were never
/// acknowledged, a warning; the leader's g and h are what it fetches.
#[test]
fn truncate_on_fetch_removes_the_followers_unreplicated_tail() {
    let d = tempfile::tempdir().unwrap();
    let head = || {
        vec![
            (0, "a".to_string()),
            (0, "b".to_string()),
            (2, "c".to_string()),
        ]
    };
    let f = broker_dir(
        d.path(),
        1,
        log(
            0,
            &cat(&[
                head(),
                vec![(4, "d".into()), (4, "e".into()), (4, "f".into())],
            ]),
        ),
        1,
    );
    let l = broker_dir(
        d.path(),
        2,
        log(0, &cat(&[head(), vec![(5, "g".into()), (5, "h".into())]])),
        4,
    );
    let r = scan(&[f, l]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(3));
    assert_eq!(truncation(div), ("broker-1".into(), 3), "{}", div.message);
    assert_eq!(div.severity, Severity::Warning, "{}", div.message);
}

/// `AbstractFetcherThreadTest.testFollowerFetchOutOfRangeLow`: the follower holds a@0 at offset
/// 0, the leader's log starts at 2 (c@4). Fetching below the leader's log start is out of
/// range: the follower truncates fully and starts at 2 (`truncateFullyAndStartAt`). The two
/// logs share no offset: nothing differs, and offset 0 is below the partition's log start (no
/// reader can fetch it): nothing acknowledged is lost.
#[test]
fn a_follower_below_the_leaders_log_start_is_no_divergence() {
    let d = tempfile::tempdir().unwrap();
    let f = broker_dir(d.path(), 1, log(0, &[(0, "a".into())]), 0);
    let l = broker_dir(d.path(), 2, log(2, &[(4, "c".into())]), 2);
    no_loss_findings(&scan(&[f, l]));
}

/// `AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh`: the follower holds a@0, b@2, c@4
/// (high watermark 0); the leader's log was emptied (log end 0). The follower's fetch at 3 is
/// out of range above the leader's end: it truncates to the leader's end, 0. No shared offset:
/// no divergence; the follower's three records were never acknowledged (its high watermark 0).
#[test]
fn a_follower_above_an_empty_leader_is_no_divergence() {
    let d = tempfile::tempdir().unwrap();
    let f = broker_dir(
        d.path(),
        1,
        log(0, &[(0, "a".into()), (2, "b".into()), (4, "c".into())]),
        0,
    );
    let l = broker_dir(d.path(), 2, log(0, &[]), 0);
    no_loss_findings(&scan(&[f, l]));
}

// ---------------------------------------------------------------------------------------------
// EpochDrivenReplicationProtocolAcceptanceTest (KIP-101 acceptance, 3.9 branch)
// ---------------------------------------------------------------------------------------------

/// `EpochDrivenReplicationProtocolAcceptanceTest.shouldNotAllowDivergentLogs`: ten records at
/// epoch 0 on both brokers (acknowledged: high watermark 10); broker 100 crashes, loses its last
/// five, restarts as leader at epoch 1 and writes nine more from offset 5. Broker 101 — captured
/// before it restarts — asks for epoch 0, which ends at 5 on the leader: it truncates to 5 and
/// its acknowledged records 5..9 are replaced by the leader's — acknowledged data lost (error),
/// broker 101 (here `broker-1`) named as the replica that truncates to 5.
#[test]
fn a_leader_that_lost_acknowledged_records_replaces_them_on_the_follower() {
    let d = tempfile::tempdir().unwrap();
    let follower = broker_dir(d.path(), 1, log(0, &run(0, "m", 0, 10)), 10);
    let leader = broker_dir(
        d.path(),
        2,
        log(0, &cat(&[run(0, "m", 0, 5), run(1, "n", 5, 9)])),
        14,
    );
    let r = scan(&[follower, leader]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(5));
    assert_eq!(truncation(div), ("broker-1".into(), 5), "{}", div.message);
    assert_eq!(div.evidence["truncation"]["acknowledged"], true);
    assert_eq!(div.severity, Severity::Error, "{}", div.message);
}

/// `EpochDrivenReplicationProtocolAcceptanceTest.logsShouldNotDivergeOnUncleanLeaderElections`,
/// captured before broker 101's last start: m@0 on both; broker 101 (`broker-1`) wrote m1 at
/// epoch 1 and m2 at epoch 3 (led alone: its high watermark 3); broker 100 (`broker-2`) wrote
/// three records at epoch 2 from 1 and two at epoch 4 from 4. Broker 101 follows broker 100:
/// epoch 3 → the leader's 2 ends at 4, its own floor 1 ends at 2 (truncate to 2, ask again);
/// epoch 1 → the leader's 0 ends at 1, its own 0 ends at 1: truncation to 1. Its acknowledged
/// records 1 and 2 are replaced — an error, broker 101 truncating to 1 (two rounds, KIP-279).
#[test]
fn alternating_unclean_elections_truncate_the_follower_through_two_rounds() {
    let d = tempfile::tempdir().unwrap();
    let b101 = broker_dir(
        d.path(),
        1,
        log(
            0,
            &cat(&[run(0, "m", 0, 1), run(1, "p", 1, 1), run(3, "q", 2, 1)]),
        ),
        3,
    );
    let b100 = broker_dir(
        d.path(),
        2,
        log(
            0,
            &cat(&[run(0, "m", 0, 1), run(2, "big", 1, 3), run(4, "big", 4, 2)]),
        ),
        6,
    );
    let r = scan(&[b101, b100]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(1));
    assert_eq!(truncation(div), ("broker-1".into(), 1), "{}", div.message);
    assert_eq!(div.severity, Severity::Error, "{}", div.message);
}

/// `EpochDrivenReplicationProtocolAcceptanceTest.shouldFollowLeaderEpochBasicWorkflow`, after the
/// leader's bounce: both replicas hold a record at epoch 0 and one at epoch 1; the leader's cache
/// holds epoch 2 from offset 2 with no batch of it yet (`Partition.makeLeader` assigned it), the
/// follower's does not. Nothing differs: no finding.
#[test]
fn a_leaders_epoch_without_batches_over_equal_logs_is_no_finding() {
    let d = tempfile::tempdir().unwrap();
    let batches = [(0, "r0".to_string()), (1, "r1".to_string())];
    let f = broker_dir(d.path(), 1, log(0, &batches), 2);
    let l = broker_dir(d.path(), 2, log(0, &batches), 2);
    std::fs::write(
        l.join("orders-0/leader-epoch-checkpoint"),
        "0\n3\n0 0\n1 1\n2 2\n",
    )
    .unwrap();
    no_loss_findings(&scan(&[f, l]));
}

// ---------------------------------------------------------------------------------------------
// A new leader's epoch known only to its cache (Partition.makeLeader), and the old leader's loss
// ---------------------------------------------------------------------------------------------

/// Broker 2 led at epoch 4 and wrote 0..94 (offsets 90..94 never replicated); broker 1, in the
/// ISR at 90, was elected cleanly at epoch 5 from 90 and wrote 90..119 alone (high watermark
/// 110); broker 2 was then elected uncleanly at epoch 6 at its log end 95, and is captured
/// before any write of epoch 6: its `leader-epoch-checkpoint` holds `6 95` (`Partition.makeLeader`
/// → `maybeAssignEpochStartOffset`), its batches end at epoch 4, its high watermark is 95 (the
/// ISR is itself).
fn new_leader_without_batches(root: &Path) -> (PathBuf, PathBuf) {
    let b1 = broker_dir(
        root,
        1,
        log(0, &cat(&[run(4, "v", 0, 90), run(5, "a", 90, 30)])),
        110,
    );
    let b2 = broker_dir(
        root,
        2,
        log(0, &cat(&[run(4, "v", 0, 90), run(4, "b", 90, 5)])),
        95,
    );
    std::fs::write(
        b2.join("orders-0/leader-epoch-checkpoint"),
        "0\n2\n4 0\n6 95\n",
    )
    .unwrap();
    (b1, b2)
}

fn register(id: i32) -> MetaRecord {
    MetaRecord::RegisterBroker(RegisterBroker {
        broker_id: id,
        incarnation_id: [id as u8; 16],
        broker_epoch: 10 + id as i64,
        ..Default::default()
    })
}

/// The KRaft history of [`new_leader_without_batches`] (on broker 2): broker 2 leads at epoch
/// 4 with ISR [1, 2]; broker 1 is elected at epoch 5 with ISR [1] (clean); broker 1 is fenced
/// and broker 2 elected at epoch 6 outside the ISR (RECOVERING); with `then_bump`, a further
/// change gives broker 2 epoch 7 (same leader: no election).
fn history(ld: &Path, then_bump: bool) {
    history_then(
        ld,
        then_bump.then_some(|c: &mut PartitionChange| c.leader = 2),
    );
}

/// [`history`], the last change (when given) written by `then`.
fn history_then(ld: &Path, then: Option<impl FnOnce(&mut PartitionChange)>) {
    let mut m = MetadataLogBuilder::new(T0);
    m.batch(&[
        register(1),
        register(2),
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: topic_id_for("orders"),
        },
        orders_partition(&[1, 2], &[1, 2], 2, 4),
    ]);
    m.advance(1000);
    m.batch(&[orders_change(|c| {
        c.leader = 1;
        c.isr = Some(vec![1]);
    })]);
    m.advance(3_600_000);
    m.batch(&[
        MetaRecord::FenceBroker { id: 1, epoch: 11 },
        orders_change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
    ]);
    if let Some(then) = then {
        m.advance(1000);
        m.batch(&[orders_change(then)]);
    }
    m.write(ld).unwrap();
}

/// The negative twins of the checkpoint's epochs: an entry past the log end (no broker
/// assigns one: `maybeAssignEpochStartOffset` takes the log end) is not taken, so broker 2
/// stays the replica behind; and an elected epoch with no batch, followed by an epoch of
/// another leader, gets no start from where that epoch starts (the other leader's log may
/// have moved in between): `start_offset` stays unknown.
#[test]
fn checkpoint_epochs_past_the_log_end_or_before_another_leader_are_not_taken() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = new_leader_without_batches(d.path());
    std::fs::write(
        b2.join("orders-0/leader-epoch-checkpoint"),
        "0\n2\n4 0\n6 200\n",
    )
    .unwrap();
    let r = scan(&[b1, b2]);
    assert_eq!(truncation(one_divergence(&r)).0, "broker-2");
    let d = tempfile::tempdir().unwrap();
    let b1 = broker_dir(
        d.path(),
        1,
        log(0, &cat(&[run(4, "v", 0, 90), run(5, "a", 90, 30)])),
        110,
    );
    let b2 = broker_dir(
        d.path(),
        2,
        log(
            0,
            &cat(&[run(4, "v", 0, 90), run(4, "b", 90, 5), run(7, "c", 95, 10)]),
        ),
        105,
    );
    // Epoch 7 given to broker 1 instead (back in the ISR, elected cleanly): another
    // leader, so epoch 6's start is not where 7 starts.
    history_then(
        &b2,
        Some(|c: &mut PartitionChange| {
            c.isr = Some(vec![2, 1]);
            c.leader = 1;
        }),
    );
    let r = scan(&[b1, b2]);
    let f = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let e = &f[0].evidence;
    assert_eq!(e["new_leader_epoch"], 6, "{e:#}");
    assert!(e["start_offset"].is_null(), "{e:#}");
    assert!(
        e["start_offset_unknown"]
            .as_str()
            .is_some_and(|w| w.contains("leader epoch 6")),
        "{e:#}"
    );
}

/// `Partition.makeLeader` assigns the new leader's epoch in its cache at election
/// (`shouldFollowLeaderEpochBasicWorkflow`: "Epochs 2 should be added to the leader, but not on
/// the follower"), so the leader answers broker 1's epoch 5 with its floor epoch 4 ending at 95
/// (`LeaderEpochFileCache.endOffsetFor`); broker 1's own epoch 4 ends at 90: broker 1 — the old
/// leader — truncates to 90 and its records 90..109, below its high watermark 110, are
/// replaced: an error naming broker 1.
///
/// (Was a divergence: klogscan took each replica's lineage from its batches only and named
/// broker 2 as the replica behind; a copy's lineage now includes its checkpoint's entries past
/// its batches, `epoch_file::answering_lineage`.)
#[test]
fn the_old_leader_truncates_when_the_new_leaders_epoch_has_no_batch_yet() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = new_leader_without_batches(d.path());
    let r = scan(&[b1, b2]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(90));
    assert_eq!(truncation(div), ("broker-1".into(), 90), "{}", div.message);
    assert_eq!(div.evidence["truncation"]["high_watermark"], 110);
    assert_eq!(div.severity, Severity::Error, "{}", div.message);
}

/// [`new_leader_without_batches`] with the KRaft history: the unclean election at epoch 6.
/// Kafka: broker 1 (the old leader, at epoch 5) truncates to 90 when it follows (see above),
/// below epoch 6's start (95, broker 2's checkpoint): 30 offsets lost (90..119), 20 of them
/// below its high watermark 110 — an error.
///
/// (Was a divergence: epoch 6's start was looked for in batches only, so no loss was
/// measured; the new leader's checkpoint entry now gives it.)
#[test]
fn an_unclean_election_before_the_new_leader_writes_still_costs_the_old_leaders_tail() {
    let d = tempfile::tempdir().unwrap();
    let (b1, b2) = new_leader_without_batches(d.path());
    history(&b2, false);
    let r = scan(&[b1, b2]);
    let f = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let e = &f[0].evidence;
    assert_eq!(e["new_leader_epoch"], 6, "{e:#}");
    let old = &e["old_leader_copy"];
    assert_eq!(old["log_end_offset"], 120, "{e:#}");
    assert_eq!(old["lost_offsets"], 30, "{e:#}");
    assert_eq!(old["lost_below_high_watermark"], 20, "{e:#}");
    assert_eq!(f[0].severity, Severity::Error, "{}", f[0].message);
}

/// The same unclean election at epoch 6, then broker 2 given epoch 7 before writing (a change
/// that bumps the epoch, same leader); it writes ten records at epoch 7 from 95. Its cache is
/// [4@0, 7@95] (assigning 7 at 95 drops 6 at 95: `maybeTruncateNonMonotonicEntries`), so broker
/// 1 truncates to 90 as before: 30 offsets lost, 20 acknowledged. The batches show it too (both
/// lineages are in the inputs, `truncation_point` gives 90); the `replica_divergence` names
/// broker 1 truncating to 90 (this part agrees).
///
/// (Was a divergence: no batch of epoch 6, no start, no loss; the start is now where the same
/// leader's next epoch starts, `loss::start_in_lineage`.)
#[test]
fn an_epoch_replaced_before_any_write_still_measures_the_old_leaders_loss() {
    let d = tempfile::tempdir().unwrap();
    let b1 = broker_dir(
        d.path(),
        1,
        log(0, &cat(&[run(4, "v", 0, 90), run(5, "a", 90, 30)])),
        110,
    );
    let b2 = broker_dir(
        d.path(),
        2,
        log(
            0,
            &cat(&[run(4, "v", 0, 90), run(4, "b", 90, 5), run(7, "c", 95, 10)]),
        ),
        105,
    );
    history(&b2, true);
    let r = scan(&[b1, b2]);
    let div = one_divergence(&r);
    assert_eq!(truncation(div), ("broker-1".into(), 90), "{}", div.message);
    let f = of_kind(&r, Kind::UncleanLeaderElection);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let e = &f[0].evidence;
    assert_eq!(e["new_leader_epoch"], 6, "{e:#}");
    let old = &e["old_leader_copy"];
    assert_eq!(old["lost_offsets"], 30, "{e:#}");
    assert_eq!(old["lost_below_high_watermark"], 20, "{e:#}");
    assert_eq!(f[0].severity, Severity::Error, "{}", f[0].message);
}

// ---------------------------------------------------------------------------------------------
// The high-watermark fallback (no leader epochs: message format v0/v1)
// ---------------------------------------------------------------------------------------------

/// `orders-0` in magic-1 messages, one per offset, valued `<tag><offset>` per `(tag, n)` run.
pub(crate) fn legacy_log(runs: &[(&str, i64)]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0);
    let mut off = 0i64;
    for &(tag, n) in runs {
        for _ in 0..n {
            p.legacy(
                Legacy::v1()
                    .values([format!("{tag}{off}")])
                    .at(T0 + off * 1000),
            );
            off += 1;
        }
    }
    p
}

/// `AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable`: a
/// follower without leader epochs (a v0/v1 log: appending one clears the cache,
/// `UnifiedLog.append`) truncates to its high watermark (`truncateToHighWatermark`) and fetches
/// from there. Two v1 copies agree on 0..3 and differ from 4 (the old leader's unreplicated tail
/// against the new leader's writes); both high watermarks are 4. Whichever follows truncates to
/// 4 and fetches the other's records: the divergence is removed, as a tail whose
/// acknowledgement the checkpoint cannot tell.
///
/// The follower's true high watermark is no lower than its checkpoint, and after an unclean
/// election it can lie past the difference: the finding says both (`high_watermark_truncation`
/// `removed_unless_past`) and no longer that the divergence survives until that replica leads.
/// (Was a divergence: no high-watermark truncation was modelled.)
#[test]
fn without_epochs_a_follower_truncates_to_its_high_watermark() {
    let d = tempfile::tempdir().unwrap();
    let a = broker_dir(d.path(), 1, legacy_log(&[("m", 4), ("a", 2)]), 4);
    let b = broker_dir(d.path(), 2, legacy_log(&[("m", 4), ("b", 3)]), 4);
    let r = scan(&[a, b]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(4));
    let t = &div.evidence["high_watermark_truncation"];
    assert_eq!(t["case"], "removed_unless_past", "{:#}", div.evidence);
    assert_eq!(t["high_watermarks"], serde_json::json!([4, 4]));
    assert!(
        div.broker_behaviour.contains("truncateToHighWatermark")
            && !div.broker_behaviour.contains("survives until"),
        "{}",
        div.broker_behaviour
    );
    assert_eq!(div.severity, Severity::Warning, "{}", div.message);
}

/// The twin below the high watermarks (the KIP-101 failure the high-watermark truncation
/// cannot fix): the copies differ from 2, both high watermarks are 4. Truncating to 4 keeps the
/// divergence; it survives (`replica_divergence` without a truncation).
#[test]
fn without_epochs_a_divergence_below_the_high_watermarks_survives() {
    let d = tempfile::tempdir().unwrap();
    let a = broker_dir(d.path(), 1, legacy_log(&[("m", 2), ("a", 4)]), 4);
    let b = broker_dir(d.path(), 2, legacy_log(&[("m", 2), ("b", 4)]), 4);
    let r = scan(&[a, b]);
    let div = one_divergence(&r);
    assert_eq!(div.offset, Some(2));
    assert!(
        div.evidence.get("truncation").is_none(),
        "{:#}",
        div.evidence
    );
    assert_eq!(
        div.evidence["high_watermark_truncation"]["case"], "survives",
        "{:#}",
        div.evidence
    );
}
