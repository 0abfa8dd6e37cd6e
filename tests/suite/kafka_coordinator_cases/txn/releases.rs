//! What the coordinator's load does with the same `__transaction_state` log across
//! releases.

use super::*;
use klogscan::finding::Finding;
use klogscan::read::format::metadata::MetaRecord;
use klogscan::testkit::LogDirBuilder;
use klogscan::testkit::metadata::MetadataLogBuilder;
use klogscan::verify::BrokerVersion;

/// `(anomaly, offset)` of the `transaction_state_anomaly` findings among `fs`.
fn anomalies_of<'a>(fs: impl Iterator<Item = &'a Finding>) -> Vec<(String, i64)> {
    fs.filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .map(|f| {
            (
                f.evidence["anomaly"].as_str().unwrap().to_string(),
                f.offset.unwrap(),
            )
        })
        .collect()
}

/// Broker 1's log dir `data` (cluster `c1`) holding `__transaction_state-7`: a transaction
/// record, then two batches of one record of another key version each; with `level`, its
/// KRaft metadata log finalizing that `metadata.version`.
fn ending_in_unknown_keys(level: Option<i16>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let unknown = || {
        let k = key_version(i16::MAX, "");
        Rec::kv(k.clone(), k)
    };
    let mut p = PartitionBuilder::new("__transaction_state", PARTITION).start_time(T);
    let (k, v) = val("one", &at(1, 0, EMPTY).v1(-1, -1, 0));
    p.append(Batch::new(Producer::PLAIN).record(Rec::kv(k, v.unwrap())));
    p.append(Batch::new(Producer::PLAIN).record(unknown()));
    p.append(Batch::new(Producer::PLAIN).record(unknown()));
    let ld = d.path().join("data");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(p)
        .write(&ld)
        .unwrap();
    if let Some(level) = level {
        let mut m = MetadataLogBuilder::new(T);
        m.batch(&[MetaRecord::FeatureLevel {
            name: "metadata.version".into(),
            feature_level: level,
        }]);
        m.write(&ld).unwrap();
    }
    d
}

/// KAFKA-17941 (apache/kafka PR #17688, in Kafka 4.0.0; PR #20529 on the 3.9 branch):
/// `TransactionStateManager.loadTransactionMetadata` moves its read position past every
/// batch, so the batches of other key versions that end the log are skipped with a warning
/// and the load completes. The finding says which releases never complete it
/// (`load_fails_in`), and goes (two `unknown_key_version` records) where no such release
/// loads the copy: `verify --broker-version` 4.0.0 or later, or a cluster whose KRaft
/// metadata log finalizes `metadata.version` 4.0-IV0 (level 22) or later, which no 3.x
/// broker joins. Near misses: 3.9.0, and a cluster at 3.9-IV0 (21), keep it.
#[test]
fn a_log_ending_in_unknown_keys_loads_since_kafka_4_0() {
    let endless = vec![
        ("load_never_completes".to_string(), 1),
        ("unknown_key_version".to_string(), 2),
    ];
    let skipped = vec![
        ("unknown_key_version".to_string(), 1),
        ("unknown_key_version".to_string(), 2),
    ];
    let d = ending_in_unknown_keys(None);
    let r = scan(d.path());
    assert_eq!(anomalies(&r), endless);
    let f = (r.findings.iter())
        .find(|f| f.evidence["anomaly"] == "load_never_completes")
        .unwrap();
    assert_eq!(f.evidence["load_fails_in"], "kafka_before_kafka_17941");
    assert!(f.message.contains("before Kafka 4.0.0"), "{}", f.message);
    let verify = |v: BrokerVersion| {
        let req = Request::new([d.path()]).with_options(opts());
        let a = request::verify(&req, Some(v)).unwrap();
        anomalies_of(a.report.findings())
    };
    assert_eq!(verify(BrokerVersion(4, 0, 0)), skipped);
    assert_eq!(verify(BrokerVersion(3, 9, 0)), endless);
    for (level, want) in [(22, &skipped), (21, &endless)] {
        let d = ending_in_unknown_keys(Some(level));
        assert_eq!(&anomalies(&scan(d.path())), want, "level {level}");
    }
}
