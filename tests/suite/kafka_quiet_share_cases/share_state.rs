//! `__share_group_state` over share partitions' lives: initialized, written (ShareUpdate, a
//! ShareSnapshot every few updates), the share coordinator moved, a leader epoch and a state
//! epoch raised, a share partition deleted and initialized again, the log pruned below the
//! latest snapshots.

use super::{ACKNOWLEDGED, ARCHIVED, AVAILABLE, MIN, Raw, STATE, Sp, T0, check, coordinator_batch};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};
use klogscan::testkit::metadata::encode;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

/// Share partitions: group `sg` on orders-0 and orders-1, group `sg2` on orders-0.
const A: Sp = Sp("sg", "orders", 0);
const B: Sp = Sp("sg", "orders", 1);
const C: Sp = Sp("sg2", "orders", 0);

/// What to change in the healthy life (each twin changes one thing).
#[derive(Clone, Copy, PartialEq)]
enum Twist {
    None,
    /// `sg2`'s deletion written as a ShareUpdate tombstone.
    UpdateTombstone,
    /// The moved coordinator's batches carry an older partition leader epoch.
    EpochBack,
}

/// The life of `__share_group_state-0` after months, with
/// `share.coordinator.snapshot.update.records.per.snapshot` = 2:
/// * offsets 96–99: updates of A and B, below the log start (`ShareCoordinatorService`'s
///   pruning task calls `deleteRecords` at `ShareCoordinatorOffsetsManager.lastRedundantOffset`,
///   the least of the live keys' latest snapshot offsets; retention removed older segments);
/// * 100–104 (coordinator leader epoch 3): A's snapshot, B's snapshot, two updates of A
///   (its SPSO moves), C initialized (`generateInitializeStateRecord`: snapshot epoch 0,
///   leader epoch -1, no batches);
/// * 105–110, a new segment (the coordinator moved: leader epoch 4): A's share-partition
///   leader moved (`readStateAndMaybeUpdateLeaderEpoch` writes leader epoch 3), A's
///   snapshot after its updates passed the limit (snapshot epoch 6), C deleted
///   (`deleteState`: a ShareSnapshot tombstone), B's offsets altered (`initializeState`
///   with state epoch 1: a new snapshot), B written, C initialized again (snapshot epoch 0
///   again: the tombstone removed its state).
fn life(t: Twist) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(STATE, 0)
        .start_offset(96)
        .leader_epoch(3)
        .start_time(T0);
    let put = |p: &mut PartitionBuilder, recs: Vec<Raw>, i: i64| {
        p.append(coordinator_batch(recs, T0 + i * MIN));
    };
    put(
        &mut p,
        vec![
            A.update(4, 2, -1, &[(500, 504, ACKNOWLEDGED, 1)]),
            B.update(1, 2, -1, &[(290, 299, ACKNOWLEDGED, 1)]),
        ],
        0,
    );
    put(
        &mut p,
        vec![
            A.update(4, 2, 505, &[(505, 509, ACKNOWLEDGED, 1)]),
            B.update(1, 2, 300, &[]),
        ],
        1,
    );
    let ts = T0 + 2 * MIN;
    put(
        &mut p,
        vec![
            A.snapshot((5, 0, 2), 510, &[(510, 519, AVAILABLE, 1)], ts),
            B.snapshot((2, 0, 2), 300, &[], ts),
        ],
        2,
    );
    put(
        &mut p,
        vec![
            A.update(5, 2, -1, &[(510, 514, ACKNOWLEDGED, 1)]),
            A.update(5, 2, 515, &[(515, 519, ACKNOWLEDGED, 1)]),
        ],
        3,
    );
    put(
        &mut p,
        vec![C.snapshot((0, 0, -1), 0, &[], T0 + 4 * MIN)],
        4,
    );
    p.roll();
    p.set_leader_epoch(if t == Twist::EpochBack { 2 } else { 4 });
    put(&mut p, vec![A.update(5, 3, -1, &[])], 5);
    let ts = T0 + 6 * MIN;
    let a = &[
        (520, 524, AVAILABLE, 2),
        (525, 527, ARCHIVED, 5),
        (528, 529, ACKNOWLEDGED, 1),
    ];
    put(&mut p, vec![A.snapshot((6, 0, 3), 520, a, ts)], 6);
    let gone = if t == Twist::UpdateTombstone {
        C.update_tombstone()
    } else {
        C.deleted()
    };
    put(&mut p, vec![gone], 7);
    put(
        &mut p,
        vec![B.snapshot((3, 1, -1), 250, &[], T0 + 8 * MIN)],
        8,
    );
    put(
        &mut p,
        vec![B.update(3, 3, -1, &[(255, 259, ACKNOWLEDGED, 1)])],
        9,
    );
    put(
        &mut p,
        vec![C.snapshot((0, 0, -1), -1, &[], T0 + 10 * MIN)],
        10,
    );
    p
}

fn log_dir(t: Twist, log_start: i64) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(life(t))
        .log_start_offset(STATE, 0, log_start)
}

/// `ShareCoordinatorShardTest.testWriteStateSuccess`, `testSubsequentWriteStateSnapshotEpochUpdatesSuccessfully`,
/// `testReadStateLeaderEpochUpdateSuccess`, `testDeleteStateSuccess`, `testInitializeStateSuccess`
/// (a snapshot with a higher state epoch), `testLastRedundantOffset`;
/// `ShareCoordinatorOffsetsManagerTest.testUpdateStateRedundantState` and
/// `ShareCoordinatorServiceTest.testRecordPruningTaskSuccess` (the log start moved to the
/// redundant offset, 100 here: every live key's latest snapshot is at or above it);
/// `PersisterStateBatchCombinerTest.testStateBatchCombineDifferentStates` (batches of
/// several states). A healthy share coordinator's log: quiet.
#[test]
fn a_share_state_log_over_months_is_quiet() {
    let q = check(log_dir(Twist::None, 100));
    q.assert_quiet();
    let p = (q.scan.partitions.iter())
        .find(|p| p.topic == STATE)
        .unwrap();
    assert_eq!(p.log_end_offset, Some(111));
}

/// Twin: `sg2`'s share partition deleted with a ShareUpdate key and a null value, which the
/// coordinator never writes (`ShareCoordinatorRecordHelpers.newShareStateTombstoneRecord`
/// uses the ShareSnapshot key): `ShareCoordinatorShard.handleShareUpdate` reads the null
/// value's leader epoch, the replay throws and `CoordinatorLoaderImpl` fails the load.
#[test]
fn twin_a_share_update_tombstone_fails_the_load() {
    let q = check(log_dir(Twist::UpdateTombstone, 100));
    let f = q.reported(Kind::ShareStateRecordUndecodable, Severity::Error, STATE);
    assert_eq!(f.offset, Some(107), "{f:#?}");
}

/// Twin: the moved coordinator's batches carry partition leader epoch 2 after batches of
/// epoch 3 (`LeaderEpochFileCache.assign` ignores an epoch below the latest; a leader
/// always appends at its own, newer epoch: `UnifiedLog.appendAsLeader`).
#[test]
fn twin_a_coordinator_move_to_an_older_leader_epoch_is_reported() {
    let q = check(log_dir(Twist::EpochBack, 100));
    let f = q.reported(Kind::LeaderEpochRegression, Severity::Warning, STATE);
    assert_eq!(f.offset, Some(105), "{f:#?}");
}

/// `ShareCoordinatorOffsetsManager.updateState` counts only ShareSnapshot offsets (and drops
/// a deleted key), so the pruning task (`ShareCoordinatorService.setupRecordPruning`) never
/// moves the log start above a live share partition's latest snapshot
/// (`ShareCoordinatorOffsetsManagerTest.testUpdateStateComplexCases`). Here the log start is
/// 109: B's latest snapshot (108, the one carrying state epoch 1 and its SPSO 250) is below
/// it, so the load (`CoordinatorLoaderImpl` reads from the log start) sees B's update alone
/// and `handleShareUpdate` takes it as B's whole state (`ShareGroupOffset.fromRecord`: state
/// epoch -1, the update's start offset, -1 here, and batches) — the altered offsets are lost
/// and `SharePartition.startOffsetDuringInitialization` falls back to
/// `share.auto.offset.reset`.
#[test]
fn twin_the_log_start_above_a_live_snapshot_loses_its_state() {
    let q = check(log_dir(Twist::None, 109));
    let loud = q.loud_on(STATE);
    assert!(
        !loud.is_empty(),
        "B's snapshot at 108 is below the log start 109"
    );
    // `share_state_lost`, for B alone (A's snapshot is above the log start).
    let f = q.reported(Kind::ShareStateLost, Severity::Warning, STATE);
    assert!(
        f.message
            .contains("no ShareSnapshot at or above the log start"),
        "{}",
        f.message
    );
    assert_eq!(f.evidence["log_start_offset"], 109, "{}", f.evidence);
    // B's update carries no start offset (-1) and state batches: the default
    // share.auto.offset.reset (latest) puts the start above them and the initialization
    // refuses the state — a warning that follows from the loss (`caused_by`).
    let lost = f.id.clone();
    let b = q.reported(Kind::ShareStateBatchBelowStart, Severity::Warning, STATE);
    assert_eq!(b.caused_by, vec![lost], "{b:#?}");
    assert!(
        loud.iter()
            .all(|l| l.contains("share_state_lost") || l.contains("share_state_batch_below_start")),
        "{loud:#?}"
    );
}

/// A log read in part proves nothing of what the load reads: A's snapshot in the first
/// segment, an update in the second. The whole log is quiet; the second segment's file
/// named alone (the directory's other files unlisted) is not judged (no
/// `share_state_lost`, which a replay of that file alone would give).
#[test]
fn a_share_state_log_read_in_part_is_not_judged() {
    let mut p = PartitionBuilder::new(STATE, 0)
        .leader_epoch(3)
        .start_time(T0);
    let ts = T0;
    p.append(coordinator_batch(
        vec![A.snapshot((0, 0, 3), 500, &[(500, 504, AVAILABLE, 1)], ts)],
        ts,
    ));
    p.roll();
    p.append(coordinator_batch(
        vec![A.update(0, 3, 505, &[(505, 509, ACKNOWLEDGED, 1)])],
        T0 + MIN,
    ));
    let q = check(LogDirBuilder::new(1).cluster_id("c1").partition(p));
    q.assert_quiet();
    let part = q.dir.path().join(format!("{STATE}-0"));
    let mut logs: Vec<std::path::PathBuf> = std::fs::read_dir(&part)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let named = klogscan::pipeline::scan(&logs[1..], &klogscan::results::ScanOptions::default());
    assert!(named.partitions.iter().any(|p| p.records > 0));
    let kinds: Vec<Kind> = named.findings.iter().map(|f| f.kind).collect();
    assert!(!kinds.contains(&Kind::ShareStateLost), "{kinds:?}");
}

/// Only the live copy is a share coordinator's to load: a share partition with updates
/// alone is `share_state_lost` in `__share_group_state-0`, and not in the same files under
/// a `-delete` name (`LogManager` loads such a copy only to delete it).
#[test]
fn a_non_live_copy_of_the_share_state_log_is_not_judged() {
    let build = || {
        let mut p = PartitionBuilder::new(STATE, 0)
            .leader_epoch(3)
            .start_time(T0);
        p.append(coordinator_batch(
            vec![A.update(0, 3, 505, &[(505, 509, ACKNOWLEDGED, 1)])],
            T0,
        ));
        LogDirBuilder::new(1).cluster_id("c1").partition(p)
    };
    let live = check(build());
    live.reported(Kind::ShareStateLost, Severity::Warning, STATE);
    let t = tempfile::tempdir().unwrap();
    build().write(t.path()).unwrap();
    let copy = t
        .path()
        .join(format!("{STATE}-0.0123456789abcdef0123456789abcdef-delete"));
    std::fs::rename(t.path().join(format!("{STATE}-0")), &copy).unwrap();
    let r = klogscan::pipeline::scan(
        &[t.path().to_path_buf()],
        &klogscan::results::ScanOptions::default(),
    );
    assert!(
        r.partitions
            .iter()
            .any(|p| p.path.ends_with("-delete") && p.records > 0)
    );
    let kinds: Vec<Kind> = r.findings.iter().map(|f| f.kind).collect();
    assert!(!kinds.contains(&Kind::ShareStateLost), "{kinds:?}");
}

/// A KRaft metadata log of the same cluster: `cleanup.policy` of `__share_group_state`.
fn policy(value: &str) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0).start_time(T0);
    let r = MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: STATE.into(),
        name: "cleanup.policy".into(),
        value: Some(value.into()),
    };
    p.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&r))));
    p
}

/// `ShareCoordinatorService.shareGroupStateTopicConfigs` creates `__share_group_state` with
/// `cleanup.policy=delete` and `retention.ms=-1` (the coordinator prunes it itself with
/// `deleteRecords`; no log cleaner ever runs on it), and the controller keeps the created
/// topic's configs as `ConfigRecord`s: its policy is what the inputs state, as any topic's
/// (before 2026-12-06 klogscan treated every internal topic as compacted). The twin: a
/// batch with a hole (records count below lastOffsetDelta + 1, as only the cleaner leaves)
/// on this delete-policy log is reported as on any other delete-policy topic
/// (`invalid_batch`).
#[test]
fn the_share_state_topic_is_not_compacted() {
    let q = check(log_dir(Twist::None, 100).partition(policy("delete")));
    assert!(q.loud_on(STATE).is_empty(), "{:#?}", q.loud_on(STATE));
    let p = (q.scan.partitions.iter())
        .find(|p| p.topic == STATE)
        .unwrap();
    assert_eq!(
        (p.compacted, p.compacted_from.as_deref()),
        (
            Some(false),
            Some("cleanup.policy=delete (KRaft metadata log)")
        )
    );

    let mut holed = life(Twist::None);
    let (k, v) = A.update(5, 3, -1, &[]);
    let b = Batch::new(Producer::PLAIN)
        .at(T0 + 11 * MIN)
        .record(Rec::kv(&k, v.as_ref().unwrap()))
        .record(Rec::kv(&k, v.unwrap()).offset_delta(2));
    holed.append(b);
    let q = check(
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(holed)
            .partition(policy("delete"))
            .log_start_offset(STATE, 0, 100),
    );
    q.reported(Kind::InvalidBatch, Severity::Error, STATE);
}
