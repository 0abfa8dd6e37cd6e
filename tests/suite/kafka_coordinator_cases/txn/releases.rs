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
    in_cluster(&d, p, level);
    d
}

/// Write `p` into broker 1's log dir `data` (cluster `c1`) under `d`; with `level`, its
/// KRaft metadata log finalizing that `metadata.version`.
fn in_cluster(d: &tempfile::TempDir, p: PartitionBuilder, level: Option<i16>) {
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

/// Broker 1's log dir `data` (cluster `c1`) holding `__transaction_state-7`: `a` Ongoing,
/// `b` CompleteCommit, a value of `b` of version `i16::MAX` (what
/// `TransactionLogTest.testReadReturnsUnknownValueVersionForInvalidValue` reads), then `a`
/// PrepareCommit and `c` Empty; with `level`, its KRaft metadata log finalizing that
/// `metadata.version`.
fn with_an_unknown_value_version(level: Option<i16>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let tp: &[(&str, &[i32])] = &[("orders", &[0])];
    let mut future = at(2, 1, COMPLETE_COMMIT).encode();
    future[..2].copy_from_slice(&i16::MAX.to_be_bytes());
    let mut p = PartitionBuilder::new("__transaction_state", PARTITION).start_time(T);
    let mut b = Batch::new(Producer::PLAIN);
    for (k, v) in [
        val("a", &at(1, 0, ONGOING).partitions(tp)),
        val("b", &at(2, 0, COMPLETE_COMMIT)),
        (key("b"), Some(future)),
        val("a", &at(1, 0, PREPARE_COMMIT).partitions(tp)),
        val("c", &at(3, 0, EMPTY)),
    ] {
        b = b.record(Rec::kv(k, v.unwrap()));
    }
    p.append(b);
    in_cluster(&d, p, level);
    d
}

/// apache/kafka PR #21405 (Kafka 4.3): `TransactionLog.read` gives `UnknownValueVersion`
/// for a value of a version it does not know, and `TransactionStateManager
/// .loadTransactionMetadata` logs a warning, skips the record and loads on (`a` in
/// PrepareCommit, `c` known, `b` at its earlier value): an `unknown_value_version` (info)
/// where the loading release is known to be 4.3 or later — `verify --broker-version`
/// 4.3.0, or a metadata log finalizing 4.3-IV0 (level 30). Near misses: 4.2.0, level 29
/// and no release known keep the earlier releases' stop (`undecodable_record`, error,
/// whose broker text names both readings): `a` stays Ongoing, `c` is unknown.
#[test]
fn an_unknown_value_version_is_skipped_since_kafka_4_3() {
    let stops = vec![("undecodable_record".to_string(), 2)];
    let skipped = vec![("unknown_value_version".to_string(), 2)];
    let d = with_an_unknown_value_version(None);
    let r = scan(d.path());
    assert_eq!(anomalies(&r), stops);
    let f = (r.findings.iter())
        .find(|f| f.kind == Kind::TransactionStateAnomaly)
        .unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.evidence["current"]["value_version"], i16::MAX);
    assert!(
        f.broker_behaviour.contains("Kafka 4.3 and later"),
        "{}",
        f.broker_behaviour
    );
    let view = |v: Option<BrokerVersion>| {
        let mut o = opts();
        o.broker_version = v;
        let inv = request::discover(&[d.path().to_path_buf()], &o).unwrap();
        let view = CoordinatorView::load(&inv, &o);
        (
            view.ids["a"].state,
            view.ids.contains_key("c"),
            view.errors.len(),
        )
    };
    assert_eq!(view(None), (TxnState::Ongoing, false, 1));
    assert_eq!(
        view(Some(BrokerVersion(4, 3, 0))),
        (TxnState::PrepareCommit, true, 0)
    );
    let verify = |v: BrokerVersion| {
        let req = Request::new([d.path()]).with_options(opts());
        let a = request::verify(&req, Some(v)).unwrap();
        let skipped: Vec<Finding> = (a.report.findings())
            .filter(|f| f.evidence["anomaly"] == "unknown_value_version")
            .cloned()
            .collect();
        if let Some(f) = skipped.first() {
            assert_eq!(f.severity, Severity::Info);
        }
        anomalies_of(a.report.findings())
    };
    assert_eq!(verify(BrokerVersion(4, 3, 0)), skipped);
    assert_eq!(verify(BrokerVersion(4, 2, 0)), stops);
    for (level, want) in [(30, &skipped), (29, &stops)] {
        let d = with_an_unknown_value_version(Some(level));
        assert_eq!(&anomalies(&scan(d.path())), want, "level {level}");
    }
}
