//! `StreamsGroupTest` (`group-coordinator/.../streams/`, 2026-08 trunk): the state a streams
//! group is in after its records are replayed, its topology epoch, its KIP-1331 description
//! epochs and its deletion's tombstones.

use super::{G, coord, kafka_state, loaded};
use crate::kafka_groupaudit_cases::{g, gm, tombstone};
use crate::kafka_streams_cases::{
    STABLE, current, leave, member, meta, target, target_epoch, topology,
};
use klogscan::finding::Kind;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

/// `MemberState` (streams): UNREVOKED_TASKS 2.
const UNREVOKED: i8 = 2;

/// `testGroupState`: member1 at epoch 2 and the group at 2, no topology (NotReady); the
/// topology (Assigning); member2 and the group at 3 (Assigning); the target assignment at 3
/// (Reconciling); member1 at 3 (Reconciling); member2 at 3 revoking (Reconciling), then
/// stable (Stable); both gone (Empty). After each step the group klogscan loads holds what
/// gives Kafka's state (readiness past the topology needs the metadata image: not in any
/// record, so a group with a topology reads as ready). The states flip along the way.
#[test]
fn group_state_after_each_record() {
    let mut recs = vec![
        member(G, "member1", "p1"),
        current(G, "member1", (2, 0, STABLE), &[], &[]),
        meta(G, 2),
    ];
    let mut seen = Vec::new();
    let mut step = |recs: &[Spec]| {
        let l = coord(recs).load();
        l.assert_no_group_finding();
        let g = l.group(G);
        let epochs: Vec<i32> = g.members.values().map(|m| m.member_epoch).collect();
        let topo = g.topology.as_ref().map(|t| t.epoch);
        seen.push((
            kafka_state(g, STABLE),
            g.epoch,
            g.assignment_epoch,
            topo,
            epochs,
        ));
    };
    step(&recs);
    recs.push(topology(G, 1, &["in"], &[]));
    step(&recs);
    recs.extend([
        member(G, "member2", "p2"),
        current(G, "member2", (2, 0, STABLE), &[], &[]),
        meta(G, 3),
    ]);
    step(&recs);
    recs.push(target_epoch(G, 3));
    step(&recs);
    recs.push(current(G, "member1", (3, 2, STABLE), &[], &[]));
    step(&recs);
    recs.push(current(G, "member2", (3, 2, UNREVOKED), &[], &[]));
    step(&recs);
    recs.push(current(G, "member2", (3, 2, STABLE), &[], &[]));
    step(&recs);
    recs.extend(leave(G, "member1"));
    recs.extend(leave(G, "member2"));
    step(&recs);
    let t = Some(1);
    assert_eq!(
        seen,
        [
            ("NotReady", 2, 0, None, vec![2]),
            ("Assigning", 2, 0, t, vec![2]),
            ("Assigning", 3, 0, t, vec![2, 2]),
            ("Reconciling", 3, 3, t, vec![2, 2]),
            ("Reconciling", 3, 3, t, vec![3, 2]),
            ("Reconciling", 3, 3, t, vec![3, 3]),
            ("Stable", 3, 3, t, vec![3, 3]),
            ("Empty", 3, 3, t, vec![]),
        ]
    );
}

/// A streams group of one member with a topology and a target assignment.
fn one_member() -> Vec<Spec> {
    vec![
        topology(G, 1, &["in"], &[]),
        member(G, "member1", "p1"),
        meta(G, 1),
        target(G, "member1", &[0]),
        target_epoch(G, 1),
        current(G, "member1", (1, 0, STABLE), &[0], &[]),
    ]
}

/// `StreamsGroup.createGroupTombstoneRecords`' six tombstones in its order: current
/// assignment, target assignment, target metadata, member, group epoch, topology.
fn group_tombstones() -> Vec<Spec> {
    vec![
        tombstone(22, gm(G, "member1")),
        tombstone(21, gm(G, "member1")),
        tombstone(20, g(G)),
        tombstone(19, gm(G, "member1")),
        tombstone(17, g(G)),
        tombstone(23, g(G)),
    ]
}

/// `testCreateGroupTombstoneRecords`: the load removes the group, no group finding (the
/// topology's tombstone after the group's finds no group, and removes the record's key).
/// Near miss: the topology tombstone missing — the topology record stays live after the
/// deletion (`group_tombstones_incomplete`, the load does not fail).
#[test]
fn group_tombstone_records_delete_the_group() {
    let mut recs = one_member();
    recs.extend(group_tombstones());
    let l = coord(&recs).load();
    l.assert_no_group_finding();
    assert!(l.live(G).is_none() && l.deleted(G).is_some());

    let mut recs = one_member();
    let mut t = group_tombstones();
    t.pop();
    recs.extend(t);
    let l = coord(&recs).load();
    l.assert_reported(Kind::GroupTombstonesIncomplete, G);
    for (name, fs) in l.reports() {
        let f: Vec<_> = (fs.iter())
            .filter(|f| f.kind == Kind::GroupTombstonesIncomplete)
            .collect();
        assert_eq!(f.len(), 1, "{name}");
        assert_eq!(f[0].evidence["load_fails"], false, "{name}");
        assert_eq!(f[0].evidence["records"][0]["type"], 23, "{name}");
    }
}

/// `testCurrentTopologyEpochReflectsLatestTopology`: no topology record, no topology (-1 in
/// Kafka); topology epochs 3 then 4: the group holds 4.
#[test]
fn the_latest_topology_record_gives_the_epoch() {
    let base = vec![member(G, "member1", "p1"), meta(G, 1)];
    let l = coord(&base).load();
    assert!(l.group(G).topology.is_none());
    let mut recs = base.clone();
    recs.extend([topology(G, 3, &["in"], &[]), topology(G, 4, &["in"], &[])]);
    let l = coord(&recs).load();
    l.assert_no_group_finding();
    assert_eq!(l.group(G).topology.as_ref().map(|t| t.epoch), Some(4));
}

/// The group's metadata (epoch 1) with KIP-1331's description epochs.
fn meta_with(stored: i32, failed: i32) -> Spec {
    let v = json!({"epoch": 1, "metadataHash": 7, "validatedTopologyEpoch": 1,
        "storedDescriptionTopologyEpoch": stored, "failedDescriptionTopologyEpoch": failed});
    (17, g(G), Some((0, v)))
}

/// `testTopologyDescriptionPluginEpochs` (stored and failed default to -1, set to 7 and 5,
/// back to -1) and `testShouldExpire*` of an empty group: stored 4
/// (`testShouldExpireFalseWhenPluginConfiguredAndEpochStored`: the expiration waits for the
/// cleanup cycle) and -1 (`testShouldExpireTrueWhenStoredEpochIsDefault`) are a live group,
/// no finding; the uncertain -2 (`testShouldExpireFalseWhenStoredEpochUncertain`) with no
/// later value is a deletion left at its barrier (`group_deletion_unfinished`).
#[test]
fn description_epochs_and_an_empty_groups_expiry() {
    let epochs = |recs: &[Spec]| {
        let l = coord(recs).load();
        l.assert_no_group_finding();
        let d = l.group(G).description;
        (d.stored, d.failed)
    };
    let topo = topology(G, 1, &["in"], &[]);
    assert_eq!(epochs(&[topo.clone(), meta(G, 1)]), (-1, -1));
    assert_eq!(epochs(&[topo.clone(), meta_with(7, 5)]), (7, 5));
    assert_eq!(
        epochs(&[topo.clone(), meta_with(7, 5), meta_with(-1, -1)]),
        (-1, -1)
    );
    assert_eq!(epochs(&[topo.clone(), meta_with(4, -1)]), (4, -1));
    let l = coord(&[topo, meta_with(-2, -1)]).load();
    l.assert_reported(Kind::GroupDeletionUnfinished, G);
}

/// Streams member metadata (type 19) of `m` with a static instance id.
fn static_member(m: &str, instance: &str) -> Spec {
    let v = json!({"instanceId": instance, "clientId": "c", "clientHost": "/10.0.0.1",
        "rebalanceTimeoutMs": 300000, "topologyEpoch": 1, "processId": "p9",
        "userEndpoint": null, "clientTags": []});
    (19, gm(G, m), Some((0, v)))
}

/// `testUpdateMember`, `testNoStaticMember`, `testGetStaticMemberByInstanceId`,
/// `testRemoveMember`, `testRemoveStaticMember` (streams): a dynamic and a static member are
/// listed with their instance ids and process ids; the static member's departure removes it.
#[test]
fn dynamic_and_static_members() {
    let mut recs = vec![
        topology(G, 1, &["in"], &[]),
        member(G, "member", "p1"),
        static_member("static", "instance"),
        meta(G, 1),
    ];
    let members = |recs: &[Spec]| -> Vec<(String, Option<String>, Option<String>)> {
        (loaded(recs).members.values())
            .map(|m| {
                (
                    m.member_id.clone(),
                    m.instance_id.clone(),
                    m.process_id.clone(),
                )
            })
            .collect()
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        members(&recs),
        [
            ("member".into(), None, some("p1")),
            ("static".into(), some("instance"), some("p9")),
        ]
    );
    recs.extend(leave(G, "static"));
    assert_eq!(members(&recs), [("member".into(), None, some("p1"))]);
}
