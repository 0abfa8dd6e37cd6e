//! `FeatureControlManagerTest`: `FeatureLevelRecord`s, as the controller
//! (`FeatureControlManager.replay`) and a broker (`FeaturesDelta.replay`) apply them:
//! `metadata.version` sets the metadata version (never removed), any other feature is
//! finalized at its level, and removed by a level of 0; `kraft.version` records are skipped
//! (KAFKA-18979). klogscan keeps only `metadata.version` (`History::metadata_versions`): it
//! decides what an election record can say (leader recovery from 3.2-IV0, level 3).
//! `transaction.version`, `group.version`, `share.version` are decoded and not used.

use super::*;
use crate::common::kraft::history;
use klogscan::cluster::leadership::{Choice, ClusterHistory};
use klogscan::read::format::metadata::{PartitionChange, PartitionRecord};

fn orders() -> TopicId {
    topic_id_for("orders")
}

/// `orders-0` on [1, 2], ISR [1], led by 1 at epoch 0.
fn orders_partition() -> MetaRecord {
    MetaRecord::Partition(PartitionRecord {
        partition_id: 0,
        topic_id: orders(),
        replicas: vec![1, 2],
        isr: vec![1],
        leader: 1,
        ..Default::default()
    })
}

/// Leader 2, ISR [2], no recovery state written: clean (the ISR the change targeted) only
/// under a metadata version with leader recovery, where an unclean election would have
/// written RECOVERING (`PartitionChangeBuilder.tryElection`).
fn elect_2_alone() -> MetaRecord {
    MetaRecord::PartitionChange(PartitionChange {
        partition_id: 0,
        topic_id: orders(),
        leader: 2,
        isr: Some(vec![2]),
        ..Default::default()
    })
}

fn replay_dir(m: &MetadataLogBuilder) -> (tempfile::TempDir, ClusterHistory) {
    let d = tempfile::tempdir().unwrap();
    log_dir(d.path(), "b1", 1, None, m);
    let h = history(d.path());
    (d, h)
}

fn choices(h: &ClusterHistory) -> Vec<Choice> {
    h.elections.iter().map(|e| e.choice).collect()
}

/// `FeatureControlManagerTest.testReplay` / `testReplayRecords`: records of
/// `transaction.version`, `group.version`, `share.version` (and `kraft.version`) beside
/// `metadata.version`, one feature removed with level 0. Every record decodes (none kept
/// raw, none undecodable); the metadata version stays the one its own record set, so the
/// election after them is judged under 3.1-IV0 (level 2, no leader recovery): unclean.
/// Twin: a later `metadata.version` record at level 3 (`testCanUpgradeToHigherVersion`)
/// makes the same election clean.
#[test]
fn other_features_do_not_move_the_metadata_version() {
    let others = vec![
        feature("transaction.version", 2),
        feature("group.version", 1),
        feature("share.version", 1),
        feature("kraft.version", 1),
        feature("transaction.version", 0),
    ];
    for upgrade in [false, true] {
        let mut batches = vec![
            vec![feature("metadata.version", 2)],
            others.clone(),
            vec![topic("orders", orders()), orders_partition()],
        ];
        if upgrade {
            batches.push(vec![feature("metadata.version", 3)]);
        }
        batches.push(vec![elect_2_alone()]);
        let (_d, h) = replay_dir(&meta_log(&batches));
        assert!(h.log.unknown.is_empty(), "{:?}", h.log.unknown);
        assert!(h.log.undecodable.is_empty(), "{:?}", h.log.undecodable);
        let want: Vec<(i64, i16)> = if upgrade {
            vec![(0, 2), (8, 3)]
        } else {
            vec![(0, 2)]
        };
        assert_eq!(h.history.metadata_versions, want);
        let end = h.log.end_offset;
        assert_eq!(
            h.history.metadata_version_at(end),
            Some(want[want.len() - 1].1)
        );
        let expect = if upgrade {
            Choice::Isr
        } else {
            Choice::Unclean
        };
        assert_eq!(choices(&h), vec![expect], "upgrade {upgrade}");
    }
}

/// A log that never sets `metadata.version` leaves it unknown (`None`): the election is read
/// as unclean (no RECOVERING proves nothing without leader recovery), whatever other
/// features the log finalizes.
#[test]
fn no_metadata_version_record_leaves_it_unknown() {
    let (_d, h) = replay_dir(&meta_log(&[
        vec![
            feature("transaction.version", 2),
            feature("group.version", 1),
        ],
        vec![topic("orders", orders()), orders_partition()],
        vec![elect_2_alone()],
    ]));
    assert!(h.history.metadata_versions.is_empty());
    assert_eq!(h.history.metadata_version_at(h.log.end_offset), None);
    assert_eq!(choices(&h), vec![Choice::Unclean]);
}

/// `MetadataLoaderTest` (a snapshot, then log deltas): the metadata version a snapshot
/// holds is in force for the deltas after it (`FeaturesImage` from the snapshot). Snapshot
/// at 3.2-IV0 (level 3): the delta's election is clean; at 3.1-IV0 (level 2): unclean.
#[test]
fn the_snapshots_metadata_version_holds_for_the_deltas() {
    for (level, expect) in [(3, Choice::Isr), (2, Choice::Unclean)] {
        let mut m = MetadataLogBuilder::new(T0).start_offset(5).snapshot(
            5,
            1,
            vec![
                feature("metadata.version", level),
                feature("transaction.version", 2),
                topic("orders", orders()),
                orders_partition(),
            ],
        );
        m.batch(&[elect_2_alone()]);
        let (_d, h) = replay_dir(&m);
        assert_eq!(h.history.metadata_versions, vec![(4, level)]);
        assert_eq!(choices(&h), vec![expect], "level {level}");
    }
}
