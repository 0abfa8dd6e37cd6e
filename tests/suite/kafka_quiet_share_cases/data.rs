//! The data partitions a share group consumes: no committed offsets (share groups commit
//! none), the share-partition start offset (SPSO) and its in-flight records in
//! `__share_group_state`, retention passing an SPSO; a classic group committing on the same
//! partitions.

use super::{
    ACKNOWLEDGED, ARCHIVED, AVAILABLE, Coord, MIN, OFFSETS, Quiet, STATE, Sp, StateBatch, T0,
    check, coord_raw, coordinator_batch,
};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use serde_json::json;

const ORDERS: &str = "orders";
const SG0: Sp = Sp("sg", ORDERS, 0);
const SG1: Sp = Sp("sg", ORDERS, 1);
const SG2: Sp = Sp("sg2", ORDERS, 0);

/// `orders-0` (log start 400 after retention, log end 600) and `orders-1` (0..300), written
/// by idempotent producers in batches of 20.
fn orders(partition: i32) -> PartitionBuilder {
    let (start, end) = if partition == 0 { (400, 600) } else { (0, 300) };
    let mut p = PartitionBuilder::new(ORDERS, partition)
        .start_offset(start)
        .start_time(T0);
    for _ in 0..(end - start) / 20 {
        p.append(Batch::new(Producer::idempotent(7000 + partition as i64, 0)).records(20));
    }
    p
}

/// The facts a twin changes.
struct Shape {
    /// `sg`'s SPSO on orders-0.
    spso0: i64,
    /// `sg`'s state batches on orders-1 (SPSO 250).
    batches1: &'static [StateBatch],
    /// The classic group's committed offset on orders-0.
    classic0: i64,
}

const HEALTHY: Shape = Shape {
    spso0: 520,
    batches1: &[(250, 259, AVAILABLE, 1), (260, 289, ACKNOWLEDGED, 1)],
    classic0: 590,
};

/// `__share_group_state-0` of the share groups on orders: `sg`'s state on orders-0
/// (released records past the SPSO, acknowledged and archived ones after them: in flight up
/// to 579 of a log ending at 600), on orders-1, and `sg2`'s on orders-0 with an SPSO of 380,
/// below the log start 400.
fn state(s: &Shape) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(STATE, 0).start_time(T0);
    let sg0: &[StateBatch] = &[
        (s.spso0, s.spso0 + 9, AVAILABLE, 1),
        (s.spso0 + 10, s.spso0 + 39, ACKNOWLEDGED, 1),
        (s.spso0 + 40, s.spso0 + 59, ARCHIVED, 5),
    ];
    p.append(coordinator_batch(
        vec![
            SG0.snapshot((0, 0, 0), s.spso0, sg0, T0),
            SG1.snapshot((0, 0, 0), 250, s.batches1, T0),
            SG2.snapshot((0, 0, 0), 380, &[(380, 389, ACKNOWLEDGED, 1)], T0),
        ],
        T0,
    ));
    p
}

/// `__consumer_offsets-0`: share group `sg` (one member on both partitions), share group
/// `sg2`, and the classic group `orders-classic` with its commits on orders-0 and orders-1.
fn offsets(s: &Shape) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(OFFSETS, 0).start_time(T0);
    let parts = json!([{"topicId": super::tid(ORDERS), "partitions": [0, 1]}]);
    let share = |id: &str| -> Vec<Coord> {
        let g = json!({"groupId": id});
        let gm = json!({"groupId": id, "memberId": "s1"});
        vec![
            (
                10,
                gm.clone(),
                Some((
                    0,
                    json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": [ORDERS]}),
                )),
            ),
            (
                11,
                g.clone(),
                Some((0, json!({"epoch": 1, "metadataHash": 5}))),
            ),
            (13, gm.clone(), Some((0, json!({"topicPartitions": parts})))),
            (12, g.clone(), Some((0, json!({"assignmentEpoch": 1})))),
            (
                14,
                gm,
                Some((
                    0,
                    json!({"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0, "assignedPartitions": parts}),
                )),
            ),
            (
                15,
                g,
                Some((
                    0,
                    json!({"initializingTopics": [], "deletingTopics": [],
                "initializedTopics": [{"topicId": super::tid(ORDERS), "topicName": ORDERS, "partitions": [0, 1]}]}),
                )),
            ),
        ]
    };
    p.append(coordinator_batch(coord_raw(share("sg")), T0));
    p.append(coordinator_batch(coord_raw(share("sg2")), T0 + MIN));
    let classic = (
        2,
        json!({"group": "orders-classic"}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 1, "protocol": "range",
            "leader": "m1", "currentStateTimestamp": T0,
            "members": [{"memberId": "m1", "clientId": "c", "clientHost": "/h",
                "rebalanceTimeout": 300000, "sessionTimeout": 45000}]}),
        )),
    );
    p.append(coordinator_batch(coord_raw(vec![classic]), T0 + 2 * MIN));
    let commit = |part: i32, offset: i64| -> Coord {
        (
            1,
            json!({"group": "orders-classic", "topic": ORDERS, "partition": part}),
            Some((
                3,
                json!({"offset": offset, "leaderEpoch": 0, "commitTimestamp": T0 + 3 * MIN}),
            )),
        )
    };
    p.append(coordinator_batch(
        coord_raw(vec![commit(0, s.classic0), commit(1, 300)]),
        T0 + 3 * MIN,
    ));
    p
}

fn cluster(s: &Shape) -> Quiet {
    check(
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .partition(orders(0))
            .partition(orders(1))
            .partition(state(s))
            .partition(offsets(s)),
    )
}

/// `SharePartitionTest.testMaybeInitialize` and `testMaybeInitializeStateBatchesWithoutGaps`
/// (the persisted SPSO and state batches at or after it, up to an end below the log end),
/// `testLsoMovementOnInitializationSharePartition` and `ShareFetchUtilsTest.
/// testProcessFetchResponseWithLsoMovementForTopicPartition` (`sg2`'s SPSO 380 below the
/// log start 400: the share partition moves to the log start, `SharePartition.
/// updateCacheAndOffsets`, as retention intends — records retained away are not delivered);
/// `ShareGroupTest.testValidateOffsetCommit` and `testOffsetExpirationCondition` (no commit,
/// nothing to expire). The data partitions, the share state and the groups, with a classic
/// group committing within the logs: quiet, and no committed-offset rule names a share group.
#[test]
fn partitions_consumed_by_share_groups_are_quiet() {
    let q = cluster(&HEALTHY);
    q.assert_quiet();
    let offset_rules = (q.scan.findings.iter())
        .filter(|f| f.kind.to_string().starts_with("committed_") || f.message.contains("\"sg"))
        .count();
    assert_eq!(offset_rules, 0, "{:#?}", q.scan.findings);
}

/// Twin: the classic group's commit on orders-0 is 700, past the log end 600 (the
/// committed-offset rules are live on this layout; the share groups are not their
/// subject): `committed_offset_beyond_log_end`. With one copy whose checkpointed high
/// watermark is its log end, klogscan cannot tell a lagging follower from a cut log and
/// says so at info (`cluster::consumers::rules::beyond_log_end`).
#[test]
fn twin_a_classic_commit_past_the_log_end_is_reported() {
    let q = cluster(&Shape {
        classic0: 700,
        ..HEALTHY
    });
    let f = q.reported(Kind::CommittedOffsetBeyondLogEnd, Severity::Info, ORDERS);
    assert_eq!((f.partition, f.offset), (0, Some(700)));
    assert!(f.message.contains("orders-classic"), "{}", f.message);
}

/// Twin: `sg`'s SPSO on orders-0 is 700, past the log end 600 (a share partition's start
/// only moves over records it acquired, so it never passes the log end unless the log lost
/// records). `SharePartition.maybeInitialize` takes the persisted start offset as is
/// (`startOffsetDuringInitialization`); the fetch from it gets OFFSET_OUT_OF_RANGE, and
/// `ShareFetchUtils.processFetchResponse` → `SharePartition.updateCacheAndOffsets` refuses a
/// log start that is not above the SPSO ("The log start offset … is not greater than the
/// start offset"): the share group receives nothing from orders-0 until the log passes 700,
/// and then never the records 600..700. The committed-offset analogue is
/// `committed_offset_beyond_log_end`; as there, with one copy whose checkpointed high
/// watermark is its log end klogscan cannot tell a lagging follower from a cut log and says
/// so at info (`cluster::consumers::share`).
#[test]
fn twin_an_spso_past_the_log_end_is_reported() {
    let q = cluster(&Shape {
        spso0: 700,
        ..HEALTHY
    });
    let f = q.reported(Kind::ShareStartBeyondLogEnd, Severity::Info, ORDERS);
    assert_eq!((f.partition, f.offset), (0, Some(700)));
    assert_eq!(f.group.as_deref(), Some("sg"));
    assert_eq!(f.evidence["log_end_offset"], 600, "{}", f.evidence);
}

/// Twin: `sg`'s persisted state on orders-1 holds a batch 240..245 below its SPSO 250, which
/// the share coordinator never persists (`PersisterStateBatchCombiner` drops batches below
/// the start offset). `SharePartition.maybeInitialize` fails the share partition on it ("Invalid
/// state batch found … less than the start offset": `SharePartitionTest.
/// testMaybeInitializeWithInvalidStartOffsetStateBatches`): `sg` cannot consume orders-1.
#[test]
fn twin_a_state_batch_below_the_spso_is_reported() {
    let q = cluster(&Shape {
        batches1: &[(240, 245, AVAILABLE, 1), (250, 259, AVAILABLE, 1)],
        ..HEALTHY
    });
    let loud = q.loud_on(STATE);
    assert!(
        !loud.is_empty(),
        "sg's batch 240..245 is below its SPSO 250"
    );
    let f = q.reported(Kind::ShareStateBatchBelowStart, Severity::Error, STATE);
    assert_eq!(
        f.evidence["batch"],
        serde_json::json!([240, 245]),
        "{}",
        f.evidence
    );
    assert_eq!(f.evidence["start_offset"], 250, "{}", f.evidence);
}
