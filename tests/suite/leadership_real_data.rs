//! The leadership history over the real brokers' metadata logs: every one replays without a
//! false finding, and the epochs it gives agree with the data partitions'
//! `leader-epoch-checkpoint` files of the same broker.
#![cfg(feature = "testkit")]

use crate::common::real_data;
use klogscan::cluster::leadership;
use klogscan::discover::layout;
use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::checkpoint::parse_leader_epoch_checkpoint;
use klogscan::read::format::metadata::MetaRecord;
use std::path::{Path, PathBuf};

/// The directories holding a `__cluster_metadata-0`.
fn metadata_homes(root: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "__cluster_metadata-0") {
                    out.push(d.to_path_buf());
                } else {
                    walk(&p, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("broker"), &mut out);
    out.sort();
    out
}

#[test]
fn every_real_metadata_log_replays_without_a_false_finding() {
    let Some(root) = real_data() else { return };
    let homes = metadata_homes(&root);
    assert!(homes.len() >= 8, "{homes:?}");
    for home in homes {
        let inv = layout::discover(std::slice::from_ref(&home));
        let hs = leadership::load_all(&inv, None, 64 << 20);
        assert_eq!(hs.len(), 1, "{}", home.display());
        let h = &hs[0];
        assert!(
            h.log.undecodable.is_empty(),
            "{}: {:?}",
            home.display(),
            h.log.undecodable
        );
        assert!(
            h.history.orphans.is_empty(),
            "{}: {:?}",
            home.display(),
            &h.history.orphans[..h.history.orphans.len().min(3)]
        );
        assert!(!h.history.partitions.is_empty(), "{}", home.display());
        // Every one of these brokers has a bootstrap.checkpoint with its metadata.version.
        assert!(
            h.log.bootstrap.iter().any(|e| matches!(
                &e.record,
                MetaRecord::FeatureLevel { name, feature_level } if name == "metadata.version" && *feature_level > 0
            )),
            "{}: {:?}",
            home.display(),
            h.log.bootstrap
        );
        // The KRaft control records decode; the newest LEADER_CHANGE names the leader
        // `quorum-state` holds.
        let changes: Vec<_> = h
            .log
            .quorum
            .iter()
            .filter(|q| q.control_type == "LEADER_CHANGE")
            .collect();
        assert!(
            changes.iter().all(|q| q.leader_id.is_some()),
            "{}",
            home.display()
        );
        if let (Some(last), Some(q)) = (changes.last(), &h.log.quorum_state) {
            assert_eq!(last.leader_id, q.leader_id, "{}", home.display());
        }
        let r = klogscan::pipeline::scan(std::slice::from_ref(&home), &ScanOptions::default());
        for k in [
            Kind::UncleanLeaderElection,
            Kind::MetadataRecordUndecodable,
            Kind::MetadataTransactionIncomplete,
            Kind::LeaderEpochCheckpointMismatch,
        ] {
            let f: Vec<_> = r.findings.iter().filter(|f| f.kind == k).collect();
            assert!(f.is_empty(), "{}: {:#?}", home.display(), f);
        }
    }
}

#[test]
fn snapshot_epochs_agree_with_the_leader_epoch_checkpoints() {
    let Some(root) = real_data() else { return };
    let mut compared = 0;
    for home in metadata_homes(&root) {
        let inv = layout::discover(std::slice::from_ref(&home));
        let hs = leadership::load_all(&inv, None, 64 << 20);
        let h = &hs[0];
        for p in &inv.partitions {
            let (Some(tp), Some(cp)) = (&p.tp, &p.leader_epoch_checkpoint) else {
                continue;
            };
            if tp.topic == "__cluster_metadata" {
                continue;
            }
            let Some(t) = h.timeline(&tp.topic, tp.partition) else {
                continue;
            };
            let Ok(entries) = parse_leader_epoch_checkpoint(&std::fs::read(cp).unwrap()) else {
                continue;
            };
            let given: Vec<i32> = h
                .leader_epochs(&tp.topic, tp.partition)
                .iter()
                .map(|e| e.0)
                .collect();
            let first = t.steps[0].state.leader_epoch;
            let current = t.current().unwrap().leader_epoch;
            for e in &entries {
                // Every epoch the broker wrote is one the history gave with a leader, or lies
                // before the history's first state of the partition.
                assert!(
                    e.epoch < first || given.contains(&e.epoch),
                    "{}: epoch {} not in {given:?}",
                    p.path.display(),
                    e.epoch
                );
                assert!(
                    e.epoch <= current,
                    "{}: {} > {current}",
                    p.path.display(),
                    e.epoch
                );
                if e.epoch >= first {
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 0, "no checkpoint epoch inside a history's span");
}
