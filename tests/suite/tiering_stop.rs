//! `remote_metadata_consumer_stopped` scoped per broker (`cluster::tiering::hosting`).
//!
//! `ConsumerTask.processConsumerRecord` hands a `__remote_log_metadata` record to the
//! cache only on a broker hosting its user partition (`shouldProcess`), so the
//! IllegalArgumentException of an invalid transition closes the consumer task only there.
//! The shapes: in metadata partition 0, `a-0`'s segment SA COPY_SEGMENT_STARTED, then an
//! update of SA to COPY_SEGMENT_STARTED again (the cache throws), and `orders-0`'s
//! segments: all three [0,19] [20,39] [40,59] after the throw (`after`), or [0,19] before
//! it and the other two after (`straddling`); `orders-0`'s local log from 60, its log start
//! 0. A broker not hosting `a-0` serves 0..=59 from the remote segments; one hosting it
//! stops at the throw.
#![cfg(feature = "testkit")]

use crate::common::json;
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::{PartitionReport, ScanReport};
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::remote_log::{
    COPY_SEGMENT_STARTED, RemoteSegment, TieredLog, TieredManifest, encode_segment_metadata,
    encode_segment_update, segment_uuid,
};
use klogscan::testkit::{Batch, PartitionBuilder, PartitionFileOptions, Producer, Rec};
use std::path::{Path, PathBuf};

/// `a-0`'s remote segment SA, offsets 0..=9.
pub(crate) fn sa() -> RemoteSegment {
    RemoteSegment {
        topic: "a".into(),
        topic_id: topic_id_for("a"),
        partition: 0,
        id: segment_uuid(900),
        start_offset: 0,
        end_offset: 9,
        max_timestamp_ms: 1_000,
        leader_epochs: vec![(0, 0)],
        size: 100,
        custom_metadata: None,
        txn_index_empty: None,
    }
}

/// The two records of `a-0`: SA COPY_SEGMENT_STARTED, then SA updated to
/// COPY_SEGMENT_STARTED (`RemoteLogMetadataCache.updateRemoteLogSegmentMetadata` throws).
pub(crate) fn invalid_transition() -> [Vec<u8>; 2] {
    let s = sa();
    [
        encode_segment_metadata(&s, 1, 2_000, COPY_SEGMENT_STARTED),
        encode_segment_update(&s, 1, 3_000, None, COPY_SEGMENT_STARTED),
    ]
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    /// Every segment of `orders-0` copied after the throw.
    After,
    /// [0,19] copied before the throw, [20,39] and [40,59] after.
    Straddling,
}

/// `orders-0` tiered by `shape` in `metadata_partition`, written as broker `broker`'s
/// log dir under `dir`; `a_records`: the records of `a-0` go into the same metadata
/// partition (else the caller writes them elsewhere).
pub(crate) fn tiered(
    shape: Shape,
    broker: i32,
    metadata_partition: i32,
    a_records: bool,
    dir: &Path,
) -> TieredManifest {
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history())
        .metadata_partition(metadata_partition);
    let throw = |t: &mut TieredLog| {
        if a_records {
            for r in invalid_transition() {
                t.raw_event(r);
            }
        }
    };
    match shape {
        Shape::After => {
            throw(&mut t);
            t.copy(0);
        }
        Shape::Straddling => {
            t.copy(0);
            throw(&mut t);
        }
    }
    t.copy(1);
    t.copy(2);
    t.local_from(3);
    t.log_start(0);
    t.broker(broker);
    t.write(dir).unwrap()
}

/// A live replica of `a-0` in `log_dir` (the topic id the records name).
pub(crate) fn host_a(log_dir: &Path) {
    let mut a = PartitionBuilder::new("a", 0).broker_files(PartitionFileOptions::default());
    a.append(Batch::new(Producer::PLAIN).records(10));
    a.write(log_dir).unwrap();
}

pub(crate) fn scan(dirs: &[PathBuf], m: &TieredManifest) -> ScanReport {
    let opts = ScanOptions::default().with_remote_storage(Some(m.remote_root.clone()));
    klogscan::pipeline::scan(dirs, &opts)
}

/// The `orders-0` replica of broker `broker`.
pub(crate) fn orders(r: &ScanReport, broker: i32) -> &PartitionReport {
    r.partitions
        .iter()
        .find(|p| p.topic == "orders" && p.source.broker_id == Some(broker))
        .unwrap_or_else(|| panic!("no orders-0 of broker {broker}"))
}

/// The findings of `kind` on broker `broker`'s `orders-0`, as their offsets.
pub(crate) fn on_orders(r: &ScanReport, kind: Kind, broker: i32) -> Vec<i64> {
    r.findings
        .iter()
        .filter(|f| f.kind == kind && f.topic == "orders" && f.source.broker_id == Some(broker))
        .map(|f| f.offset.unwrap())
        .collect()
}

pub(crate) fn stops(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::RemoteMetadataConsumerStopped)
        .collect()
}

/// What a broker not hosting `a-0` holds of `orders-0`: the three segments, 0..=59
/// replayed from remote storage (log start 0), no gap.
pub(crate) fn assert_served(r: &ScanReport, broker: i32, shape: Shape) {
    let p = orders(r, broker);
    let t = p
        .tiered
        .as_ref()
        .unwrap_or_else(|| panic!("{shape:?}: no tiered"));
    assert_eq!(t.remote, vec![(0, 19), (20, 39), (40, 59)], "{shape:?}");
    let replayed = t.replayed.as_ref().unwrap();
    assert_eq!(
        (
            replayed.segments,
            replayed.first_offset,
            replayed.last_offset
        ),
        (3, Some(0), Some(59)),
        "{shape:?}"
    );
    assert_eq!(p.log_start_offset, Some(0), "{shape:?}");
    assert_eq!(
        on_orders(r, Kind::RemoteSegmentGap, broker),
        Vec::<i64>::new(),
        "{shape:?}"
    );
    assert_eq!(
        on_orders(r, Kind::OffsetGap, broker),
        Vec::<i64>::new(),
        "{shape:?}"
    );
}

/// What a broker hosting `a-0` holds of `orders-0`: no segment (`after`), or [0,19] alone
/// (`straddling`). The offsets the other brokers' caches serve and its own does not are a
/// `remote_segment_gap` there (0..=59 below its local log start 60, or 20..=59), caused by
/// the stop.
pub(crate) fn assert_stopped(r: &ScanReport, broker: i32, shape: Shape) {
    let p = orders(r, broker);
    let t = p.tiered.as_ref().unwrap();
    let (remote, gap) = match shape {
        Shape::After => (vec![], 0),
        Shape::Straddling => (vec![(0, 19)], 20),
    };
    assert_eq!(t.remote, remote, "{shape:?}");
    assert_eq!(on_orders(r, Kind::RemoteSegmentGap, broker), vec![gap]);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentGap && f.source.broker_id == Some(broker))
        .unwrap();
    let s = stops(r);
    assert_eq!(f.caused_by, vec![s[0].id.clone()], "{shape:?}: {f:#?}");
    assert_eq!(f.evidence["last_missing_offset"], 59);
    if let Shape::Straddling = shape {
        assert_eq!(on_orders(r, Kind::OffsetGap, broker), vec![60]);
    }
}

/// Broker 2 hosts `orders-0` and no replica of `a-0`: it skips `a-0`'s records and applies
/// `orders-0`'s, before and after the throw. The stop is reported once, saying that the
/// brokers hosting `a-0` are not among the inputs.
#[test]
fn a_broker_not_hosting_the_partition_applies_the_records_after_the_throw() {
    for shape in [Shape::After, Shape::Straddling] {
        let d = tempfile::tempdir().unwrap();
        let m = tiered(shape, 2, 0, true, d.path());
        let r = scan(std::slice::from_ref(&m.log_dir), &m);
        assert_served(&r, 2, shape);
        let s = stops(&r);
        assert_eq!(s.len(), 1, "{shape:?}: {:#?}", r.findings);
        assert_eq!(
            s[0].offset,
            Some(if matches!(shape, Shape::After) { 1 } else { 3 })
        );
        assert!(
            s[0].message
                .contains("brokers hosting a-0 (no input holds a live replica"),
            "{}",
            s[0].message
        );
        assert_eq!(s[0].evidence["partition"], "a-0");
        assert_eq!(s[0].evidence["stops_broker_ids"], serde_json::json!([]));
    }
}

/// The twin: broker 2 also hosts `a-0`, so its consumer stops at the throw: `orders-0`'s
/// records after it are not applied there. The stop names broker 2.
#[test]
fn a_broker_hosting_the_partition_stops_at_the_throw() {
    for shape in [Shape::After, Shape::Straddling] {
        let d = tempfile::tempdir().unwrap();
        let m = tiered(shape, 2, 0, true, d.path());
        host_a(&m.log_dir);
        let r = scan(std::slice::from_ref(&m.log_dir), &m);
        assert_stopped(&r, 2, shape);
        let s = stops(&r);
        assert_eq!(s.len(), 1, "{shape:?}: {:#?}", r.findings);
        assert!(
            s[0].message
                .contains("brokers hosting a-0 (of the inputs: broker 2)"),
            "{}",
            s[0].message
        );
        assert_eq!(s[0].evidence["stops_broker_ids"], serde_json::json!([2]));
    }
}

/// Brokers 1 and 2 both hold `orders-0` and the metadata partition; broker 1 also hosts
/// `a-0`. Each replica is judged by its own broker's consumer: broker 1's stops at the
/// throw, broker 2's goes on. One finding for the one cause, naming broker 1.
#[test]
fn each_broker_is_judged_by_its_own_consumer() {
    for shape in [Shape::After, Shape::Straddling] {
        let d = tempfile::tempdir().unwrap();
        let m1 = tiered(shape, 1, 0, true, d.path());
        let m2 = tiered(shape, 2, 0, true, d.path());
        host_a(&m1.log_dir);
        let r = scan(&[m1.log_dir.clone(), m2.log_dir.clone()], &m2);
        assert_stopped(&r, 1, shape);
        assert_served(&r, 2, shape);
        let s = stops(&r);
        assert_eq!(s.len(), 1, "{shape:?}: {:#?}", r.findings);
        assert!(
            s[0].message
                .contains("brokers hosting a-0 (of the inputs: broker 1)"),
            "{}",
            s[0].message
        );
        assert_eq!(s[0].evidence["stops_broker_ids"], serde_json::json!([1]));
    }
}

/// Whose log dir holds `orders-0` is not known (no `meta.properties`) and another log dir
/// of the inputs hosts `a-0`: the two may be one broker, so whether the records after the
/// throw are applied is not known. The replica shows the remote segments the storage holds
/// and no `remote_segment_gap` is made of the records that broker may not have applied
/// (the twin, the identity known, is `each_broker_is_judged_by_its_own_consumer`).
#[test]
fn an_unknown_broker_is_not_judged_on_records_it_may_not_have_applied() {
    let d = tempfile::tempdir().unwrap();
    let m1 = tiered(Shape::Straddling, 1, 0, true, d.path());
    let m2 = tiered(Shape::Straddling, 2, 0, true, d.path());
    host_a(&m1.log_dir);
    std::fs::remove_file(m2.log_dir.join("meta.properties")).unwrap();
    let r = scan(&[m1.log_dir.clone(), m2.log_dir.clone()], &m2);
    let p = r
        .partitions
        .iter()
        .find(|p| p.topic == "orders" && p.source.broker_id.is_none())
        .unwrap();
    let t = p.tiered.as_ref().unwrap();
    assert_eq!(t.remote, vec![(0, 19), (20, 39), (40, 59)]);
    let unknown: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.topic == "orders" && f.source.broker_id.is_none())
        .filter(|f| matches!(f.kind, Kind::RemoteSegmentGap | Kind::OffsetGap))
        .collect();
    assert!(unknown.is_empty(), "{unknown:#?}");
    // Broker 1, known to host `a-0`, is still judged at its stop.
    assert_stopped(&r, 1, Shape::Straddling);
    let s = stops(&r);
    assert_eq!(s.len(), 1, "{:#?}", r.findings);
    let said = format!(
        "brokers hosting a-0 (of the inputs: broker 1; perhaps also the broker of log dir {},",
        m2.log_dir.display()
    );
    assert!(s[0].message.contains(&said), "{}", s[0].message);
}

/// Broker 2 hosts `a-0`, whose throw is in metadata partition 0, and `orders-0`, whose
/// records are in metadata partition 1: the task closes on the throw, and how far it had
/// read partition 1 is not known, so no gap is made of `orders-0`'s records (its ranges
/// are the full replay's).
#[test]
fn a_throw_in_another_metadata_partition_leaves_the_replica_unjudged() {
    let d = tempfile::tempdir().unwrap();
    let m = tiered(Shape::Straddling, 2, 1, false, d.path());
    host_a(&m.log_dir);
    let mut meta = PartitionBuilder::new("__remote_log_metadata", 0)
        .broker_files(PartitionFileOptions::default());
    for v in invalid_transition() {
        meta.append(Batch::new(Producer::PLAIN).record(Rec {
            value: Some(v),
            ..Rec::default()
        }));
    }
    meta.write(&m.log_dir).unwrap();
    let r = scan(std::slice::from_ref(&m.log_dir), &m);
    let s = stops(&r);
    assert_eq!(s.len(), 1, "{:#?}", r.findings);
    assert_eq!((s[0].partition, s[0].offset), (0, Some(1)));
    assert!(
        s[0].message
            .contains("brokers hosting a-0 (of the inputs: broker 2)"),
        "{}",
        s[0].message
    );
    let p = orders(&r, 2);
    assert_eq!(
        p.tiered.as_ref().unwrap().remote,
        vec![(0, 19), (20, 39), (40, 59)]
    );
    assert_eq!(on_orders(&r, Kind::RemoteSegmentGap, 2), Vec::<i64>::new());
}

/// `collect` of each broker of `each_broker_is_judged_by_its_own_consumer` then `merge`
/// prints the scan's JSON byte for byte: each bundle's replica replays the remote history
/// its own broker's consumer holds. Also with broker 2's node id not known
/// (`an_unknown_broker_is_not_judged_on_records_it_may_not_have_applied`).
#[test]
fn merge_of_the_two_brokers_equals_the_scan() {
    for (shape, known) in [
        (Shape::After, true),
        (Shape::Straddling, true),
        (Shape::Straddling, false),
    ] {
        let d = tempfile::tempdir().unwrap();
        let m1 = tiered(shape, 1, 0, true, d.path());
        let m2 = tiered(shape, 2, 0, true, d.path());
        host_a(&m1.log_dir);
        if !known {
            std::fs::remove_file(m2.log_dir.join("meta.properties")).unwrap();
        }
        let opts = ScanOptions::default().with_remote_storage(Some(m2.remote_root.clone()));
        let scanned = klogscan::pipeline::scan(&[m1.log_dir.clone(), m2.log_dir.clone()], &opts);
        assert_eq!(stops(&scanned).len(), 1, "{shape:?}");
        let bundles = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = [&m1.log_dir, &m2.log_dir]
            .iter()
            .enumerate()
            .map(|(i, dir)| {
                let f = bundles.path().join(format!("{i}.klb"));
                let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
                klogscan::bundle::collect(std::slice::from_ref(*dir), &opts, w).unwrap();
                f
            })
            .collect();
        let merged = klogscan::bundle::merge(&files, &opts).unwrap();
        assert_eq!(merged.warnings, Vec::<String>::new(), "{shape:?} {known}");
        assert_eq!(json(scanned), json(merged.report), "{shape:?} {known}");
    }
}
