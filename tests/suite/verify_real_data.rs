//! `verify` over the real broker-written data: every index, time index, snapshot, epoch
//! checkpoint and offset checkpoint there was found consistent by an independent parser
//! (`../shared/real-data/broker/PROVENANCE.md`), so verify must report no mismatch of any
//! kind. What it may report is what the copies really are: missing offset indexes (too big
//! to copy, or zero-byte files that were not copied) as info, leftovers, no clean-shutdown
//! marker.

use klogscan::finding::{Kind, Severity};
use klogscan::verify::{VerifyOptions, verify};

#[test]
fn real_broker_data_has_no_mismatch_of_any_kind() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let r = verify(&[root.join("broker")], &VerifyOptions::default());
    assert!(
        r.partitions.len() >= 50,
        "{} partitions",
        r.partitions.len()
    );
    for f in r.findings() {
        match f.kind {
            Kind::IndexMismatch
            | Kind::TimeindexMismatch
            | Kind::TxnindexMismatch
            | Kind::SnapshotCorrupt
            | Kind::SnapshotMismatch
            | Kind::LeaderEpochCheckpointMismatch
            | Kind::CheckpointInconsistent
            | Kind::LsoBelowLogStart => panic!("mismatch on real data: {f:#?}"),
            Kind::IndexCorrupt => {
                // only "this .log has no .index": a real recovery trigger, reported as info
                assert_eq!(f.severity, Severity::Info, "{f:#?}");
                assert!(f.evidence["missing"].as_str().unwrap().ends_with(".index"));
            }
            _ => {}
        }
    }
    // the two `.checkpoint.deleted` KRaft leftovers of userchic, left to the Raft layer
    let leftovers: Vec<_> = r
        .findings()
        .filter(|f| f.kind == Kind::LeftoverFile)
        .collect();
    let kraft: Vec<_> = leftovers
        .iter()
        .filter(|f| {
            f.segment
                .as_deref()
                .is_some_and(|s| s.ends_with(".checkpoint.deleted"))
        })
        .collect();
    assert_eq!(kraft.len(), 2, "{leftovers:#?}");
    assert!(
        kraft
            .iter()
            .all(|f| f.broker_behaviour.contains("Raft layer"))
    );
    // every index/time index present was really compared: the checks are not vacuous
    let with_index = r
        .partitions
        .iter()
        .filter(|p| !p.findings.iter().any(|f| f.kind == Kind::IndexCorrupt))
        .count();
    assert!(with_index >= 10, "{with_index}");
    // nothing is truncated or fails to load
    for p in &r.partitions {
        assert!(
            p.prediction.truncation.is_none(),
            "{}: {:?}",
            p.path(),
            p.prediction.truncation
        );
        assert!(p.prediction.load_failure.is_none(), "{}", p.path());
        assert!(p.prediction.deleted_segments.is_empty(), "{}", p.path());
    }
}

#[test]
fn real_snapshot_is_loaded_and_replayed_from() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let dir = root.join("broker/ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0");
    let v = klogscan::verify::verify_partition(&dir, &VerifyOptions::default()).unwrap();
    // the log dir has checkpoints but no .kafka_cleanshutdown in the copy
    assert_eq!(v.prediction.clean_shutdown, Some(false));
    assert_eq!(v.prediction.recovery_point, Some(2));
    assert_eq!(v.prediction.high_watermark, Some(2));
    assert_eq!(
        v.prediction.producer_state.snapshot.as_deref(),
        Some("00000000000000000002.snapshot")
    );
    assert_eq!(v.prediction.producer_state.producers, Some(1));
    assert!(
        v.findings
            .iter()
            .all(|f| f.kind != Kind::SnapshotMismatch && f.kind != Kind::IndexMismatch)
    );
}
