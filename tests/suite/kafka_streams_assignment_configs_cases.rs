//! A streams group metadata value (`__consumer_offsets` type 17) whose
//! `LastAssignmentConfigs` repeat a key, as the group coordinator replays it: since 4.2
//! `GroupMetadataManager.replay(StreamsGroupMetadataKey, …Value)` collects the list into a
//! map by key (`Collectors.toMap`, no merge function), which throws `IllegalStateException`
//! on the second entry of a key and fails the load of the partition; 4.1 does not read the
//! tagged field and loads the record (`GroupMetadataManagerTest.testReplayStreamsGroupMetadata*`
//! write the list from a map: one entry a key). `verify --broker-version` decides it.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use klogscan::verify::BrokerVersion;
use serde_json::{Value, json};

/// A live streams group `app` (offsets 0–12), then its metadata value at epoch 2 with
/// `configs` as its `LastAssignmentConfigs` (offset 13).
fn log(configs: Option<Value>) -> GroupLog {
    let mut log = GroupLog::new();
    sc::streams_group(&mut log, "app");
    let mut v = json!({"epoch": 2, "metadataHash": 5, "validatedTopologyEpoch": 1,
                       "storedDescriptionTopologyEpoch": 1});
    if let Some(c) = configs {
        v["lastAssignmentConfigs"] = c;
    }
    log.batch(vec![(17, json!({"groupId": "app"}), Some((0, v)))]);
    log
}

fn config(key: &str, value: &str) -> Value {
    json!({"key": key, "value": value})
}

fn twice() -> Value {
    json!([
        config("num.standby.replicas", "0"),
        config("acceptable.recovery.lag", "100"),
        config("num.standby.replicas", "1")
    ])
}

/// The `group_load_failure` findings of `scan` (no release) or `verify` with `release`.
fn load_failures(log: &GroupLog, release: Option<BrokerVersion>) -> Vec<Finding> {
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    let dirs = vec![d.path().to_path_buf()];
    let all: Vec<Finding> = match release {
        None => klogscan::pipeline::scan(&dirs, &ScanOptions::default()).findings,
        Some(v) => {
            let r = klogscan::request::verify(&klogscan::request::Request::new(dirs), Some(v));
            (r.unwrap().report.partitions.into_iter())
                .flat_map(|p| p.findings)
                .collect()
        }
    };
    all.into_iter()
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect()
}

#[test]
fn a_config_key_twice_fails_the_load_of_4_2_and_later() {
    let f = load_failures(&log(Some(twice())), None);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].severity, f[0].offset), (Severity::Error, Some(13)));
    assert_eq!(f[0].evidence["key"], "num.standby.replicas");
    assert_eq!(f[0].evidence["load_fails_in"], "kafka_4_since_4_2");
    assert_eq!(
        f[0].evidence["kafka_message"],
        "Duplicate key num.standby.replicas (attempted merging values 0 and 1)"
    );
    let broker = &f[0].broker_behaviour;
    assert!(broker.starts_with("Kafka 4.2 and later"), "{broker}");
    // A stated release decides it: 4.2.0 and 4.4.0 throw (and say so), 4.1.0 and 4.0.0
    // load it, 3.5.0's own coordinator skips streams records.
    for (release, throws) in [
        ((4, 2, 0), true),
        ((4, 4, 0), true),
        ((4, 1, 0), false),
        ((4, 0, 0), false),
        ((3, 5, 0), false),
    ] {
        let v = BrokerVersion(release.0, release.1, release.2);
        let f = load_failures(&log(Some(twice())), Some(v));
        let ours: Vec<_> = f.iter().filter(|f| f.offset == Some(13)).collect();
        assert_eq!(ours.len(), usize::from(throws), "{release:?}: {f:#?}");
        if throws {
            assert_eq!(ours[0].evidence["broker_version"], v.to_string());
            assert!(
                ours[0].message.contains("reads the field"),
                "{}",
                ours[0].message
            );
        }
    }
}

#[test]
fn near_misses_load() {
    for configs in [
        None,
        Some(json!([])),
        Some(json!([
            config("num.standby.replicas", "0"),
            config("acceptable.recovery.lag", "100")
        ])),
    ] {
        let f = load_failures(&log(configs.clone()), None);
        assert!(f.is_empty(), "{configs:?}: {f:#?}");
        let f = load_failures(&log(configs.clone()), Some(BrokerVersion(4, 4, 0)));
        assert!(f.is_empty(), "{configs:?} 4.4.0: {f:#?}");
    }
}
