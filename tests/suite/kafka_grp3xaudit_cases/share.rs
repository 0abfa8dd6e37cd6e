//! `ShareGroupTest` (`group-coordinator/.../modern/share/`, 2026-08 trunk): the state a share
//! group is in after its records are replayed.

use super::kafka_state;
use crate::kafka_groupaudit_cases::share_tombstones::{share_epoch, share_member};
use crate::kafka_groupaudit_cases::{Coord, gm, group_epoch, member, tombstone};
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;

const G: &str = "foo";

fn coord(recs: &[Spec]) -> Coord {
    let mut c = Coord::new();
    for r in recs {
        c.batch(G, vec![r.clone()]);
    }
    c
}

/// `testGroupState`, `testType`: a share group with member1 at group epoch 1 and no target
/// assignment yet is Stable (`ShareGroup.maybeUpdateGroupState`: Empty or Stable alone) and
/// listed as `share`; after member1's tombstone, Empty. Near miss: the same records for a
/// consumer group (member metadata and group epoch, no target assignment) are Assigning.
#[test]
fn a_share_group_is_stable_whatever_its_epochs() {
    let recs = vec![share_member(G, "member1"), share_epoch(G, 1)];
    let l = coord(&recs).load();
    l.assert_no_group_finding();
    let g = l.group(G);
    assert_eq!(
        (g.group_type, g.epoch, g.assignment_epoch),
        (GroupType::Share, 1, 0)
    );
    assert_eq!(kafka_state(g, 0), "Stable");
    let mut gone = recs.clone();
    // `removeMember`'s tombstones: current assignment, target assignment, member.
    for t in [14, 13, 10] {
        gone.push(tombstone(t, gm(G, "member1")));
    }
    let l = coord(&gone).load();
    l.assert_no_group_finding();
    assert_eq!(kafka_state(l.group(G), 0), "Empty");

    let l = coord(&[member(G, "member1"), group_epoch(G, 1)]).load();
    let g = l.group(G);
    assert_eq!(
        (g.group_type, g.epoch, g.assignment_epoch),
        (GroupType::Consumer, 1, 0)
    );
    assert_eq!(kafka_state(g, 0), "Assigning");
}
