//! `ListConsumerGroupTest`: `--list` (with `--state`, `--type`) of the groups the
//! coordinator holds.

use super::*;
use crate::kafka_groupaudit_cases::{classic_tombstone, commit};

/// `(group id, type, simple, members)` of every group a `groups` document lists.
fn listing(v: &Value) -> Vec<(String, String, bool, usize)> {
    let mut out: Vec<_> = (v["groups"].as_array().unwrap().iter())
        .map(|g| {
            (
                g["group_id"].as_str().unwrap().to_string(),
                g["type"].as_str().unwrap().to_string(),
                g["simple"].as_bool().unwrap(),
                members(g).len(),
            )
        })
        .collect();
    out.sort();
    out
}

fn entry(id: &str, t: &str, simple: bool, members: usize) -> (String, String, bool, usize) {
    (id.to_string(), t.to_string(), simple, members)
}

/// `ListConsumerGroupTest.testListConsumerGroupsWithoutFilters`,
/// `testListConsumerGroupsWithStates`, `testListConsumerGroupsWithTypesClassicProtocol`,
/// `testListConsumerGroupsWithTypesConsumerProtocol`, `testListGroupCommandClassicProtocol`,
/// `testListGroupCommandConsumerProtocol`: a consumer that assigned itself foo-0 and
/// committed leaves a simple classic group (listed as simple, Empty: no member), a
/// subscribed classic consumer a classic group with its member (Stable), a KIP-848 consumer
/// a consumer group with its member; without filters all three are listed, `--type classic`
/// gives the first two, `--type consumer` the third, and no share group is listed. Near
/// miss: a fourth group deleted before the listing is not listed (only with `--deleted`).
#[test]
fn groups_listed_with_type_and_state() {
    for deleted in [false, true] {
        let mut c = Coord::new();
        c.batch("tp-group", vec![commit("tp-group", "foo", 0, 1)]);
        c.batch(
            "classic-group",
            vec![classic_group("classic-group", 1, "range", &[("m1", &[0])])],
        );
        c.batch(
            "consumer-group",
            consumer_group("consumer-group", "m2", 1, &[0]),
        );
        c.batch("old", vec![classic_group("old", 1, "range", &[])]);
        if deleted {
            c.batch("old", vec![classic_tombstone("old")]);
        }
        let b = Broker::write(vec![data("foo", 0, 10)], &[("foo", 0, 10)], &c);
        let mut all = vec![
            entry("classic-group", "classic", false, 1),
            entry("consumer-group", "consumer", false, 1),
            entry("tp-group", "classic", true, 0),
        ];
        let mut classic = vec![
            entry("classic-group", "classic", false, 1),
            entry("tp-group", "classic", true, 0),
        ];
        if !deleted {
            all.insert(2, entry("old", "classic", false, 0));
            classic.insert(1, entry("old", "classic", false, 0));
        }
        assert_eq!(listing(&b.groups(&[])), all);
        assert_eq!(listing(&b.groups(&["--type", "classic"])), classic);
        assert_eq!(
            listing(&b.groups(&["--type", "consumer"])),
            [entry("consumer-group", "consumer", false, 1)]
        );
        assert_eq!(listing(&b.groups(&["--type", "share"])), []);
        let with_deleted = b.groups(&["--deleted"]);
        assert_eq!(
            group(&with_deleted, "old").unwrap()["state"],
            if deleted { "deleted" } else { "live" }
        );
    }
}
