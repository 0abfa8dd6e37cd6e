//! A conversion's records after the log cleaner: what a coordinator loads from a compacted
//! `__consumer_offsets` partition (only the last record of each key, tombstones until their
//! delete horizon) is the group the uncompacted log gives.

use super::upgrade::conversion;
use super::{GROUP, classic, cm, consumer_tombstones};
use crate::kafka_groupaudit_cases::{Coord, commit, tp};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;

/// A round trip, as `testConsumerGroupHeartbeatWithStableClassicGroup` and
/// `testLastConsumerProtocolMemberLeavingConsumerGroup` chain it: a classic group of
/// generation 3 (member-1 on foo-0, member-2 on bar-0) with two offsets, upgraded by a
/// consumer-protocol member (epoch 3; member-3 joins at epoch 4), member-3 leaves and the
/// group is downgraded at epoch 4 (the consumer group's tombstones, then the classic group
/// of generation 4). `all_tombstones` false: the downgrade leaves out member-3's tombstones.
fn round_trip(all_tombstones: bool) -> Coord {
    let members = [
        cm("member-1", &["foo", "bar"], ("foo", &[0])),
        cm("member-2", &["foo", "bar"], ("bar", &[0])),
    ];
    let mut c = Coord::new();
    c.batch(GROUP, vec![classic(GROUP, 3, &members)]);
    c.batch(
        GROUP,
        vec![commit(GROUP, "foo", 0, 30), commit(GROUP, "bar", 0, 40)],
    );
    let mut up = conversion(GROUP, 3, &members);
    up.extend([
        super::member_meta(GROUP, "member-3", None, &["foo"], false),
        crate::kafka_groupaudit_cases::group_epoch(GROUP, 4),
        crate::kafka_groupaudit_cases::target(GROUP, "member-3", &[]),
        crate::kafka_groupaudit_cases::target_epoch(GROUP, 4),
        super::current_with(GROUP, "member-3", (4, 3, 0), &[], &[]),
    ]);
    c.batch(GROUP, up);
    c.batch(GROUP, vec![commit(GROUP, "foo", 0, 31)]);
    let left: &[&str] = if all_tombstones {
        &["member-1", "member-2", "member-3"]
    } else {
        &["member-1", "member-2"]
    };
    let mut down = consumer_tombstones(GROUP, left);
    down.push(classic(GROUP, 4, &members));
    c.batch(GROUP, down);
    c
}

/// `c`'s partitions after the cleaner (`drop_tombstones`: past their delete horizon too).
fn compacted(c: &Coord, drop_tombstones: bool) -> Coord {
    let mut out = c.clone();
    for log in out.logs.values_mut() {
        *log = log.compacted(drop_tombstones);
    }
    out
}

/// The round trip loads, uncompacted and compacted alike (the tombstones kept or gone), as
/// the classic group of generation 4 with both members and the offsets of both eras (the
/// last commit of foo-0 from the consumer era); no finding. In the compacted log the first
/// record of the group may be an offset commit (a simple classic group, which the first
/// consumer tombstone replaces by an empty consumer group:
/// `getOrMaybeCreatePersistedConsumerGroup` replaces a simple group whether or not it
/// creates) and then tombstones only: the consumer group's removal still meets the order
/// its checks require.
/// Near miss: the downgrade without member-3's tombstones. Uncompacted, the target
/// assignment metadata tombstone meets member-3's target assignment: the load fails. Once
/// the cleaner dropped the tombstones, member-3's leftover values rebuild a consumer group
/// that the classic record then replaces (`replay(GroupMetadataKey, GroupMetadataValue)`
/// puts the classic group in place of any): the load gives the same classic group, nothing
/// to report.
#[test]
fn a_round_trip_loads_the_same_before_and_after_the_cleaner() {
    let full = round_trip(true);
    for c in [
        full.clone(),
        compacted(&full, false),
        compacted(&full, true),
    ] {
        let l = c.load();
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let g = l.group(GROUP);
        assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 4));
        assert_eq!(g.members.len(), 2);
        assert_eq!(l.offsets(GROUP), vec![tp("bar", 0, 40), tp("foo", 0, 31)]);
    }

    let partial = round_trip(false);
    let l = partial.load();
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
    let l = compacted(&partial, true).load();
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 4));
}
