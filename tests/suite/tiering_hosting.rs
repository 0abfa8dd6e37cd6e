//! Which copies of a partition make their broker one a record the metadata cache throws
//! on stops (`cluster::tiering::hosting`), and how the stop's finding names the brokers.
//!
//! The shape (`holed`): in metadata partition 0, `orders-0`'s segments [0,19] and [40,59]
//! are copied ([20,39] never is: a gap on every broker), with `a-0`'s throw after the first
//! `before` copies; `orders-0`'s local log from 60, its log start 0. A broker stopped by the
//! throw before [40,59] holds a gap 20..=59 (the stop's doing past 39), one going on holds
//! 20..=39 (no one's stop's).
#![cfg(feature = "testkit")]

use crate::tiering_stop::{Shape, host_a, invalid_transition, on_orders, scan, stops, tiered};
use klogscan::finding::{Finding, Kind};
use klogscan::results::ScanReport;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::remote_log::{
    COPY_SEGMENT_STARTED, RemoteSegment, TieredLog, TieredManifest, encode_segment_metadata,
    encode_segment_update, segment_uuid,
};
use klogscan::testkit::{Batch, PartitionBuilder, PartitionFileOptions, Producer};
use std::path::Path;

/// `orders-0` with [20,39] never copied, `a-0`'s throw after `before` of the two copies,
/// as broker `broker`'s log dir under `dir`.
fn holed(broker: i32, before: usize, dir: &Path) -> TieredManifest {
    let mut t = TieredLog::new(klogscan::testkit::brokers::tiered_history()).metadata_partition(0);
    let throw = |t: &mut TieredLog| {
        for r in invalid_transition() {
            t.raw_event(r);
        }
    };
    for (n, i) in [0, 2].into_iter().enumerate() {
        if n == before {
            throw(&mut t);
        }
        t.copy(i);
    }
    if before == 2 {
        throw(&mut t);
    }
    t.local_from(3);
    t.log_start(0);
    t.broker(broker);
    t.write(dir).unwrap()
}

/// Renames `a-0` in `log_dir` to a copy of kind `suffix` (`delete`, `future`, `stray`).
fn as_copy(log_dir: &Path, suffix: &str) {
    let to = log_dir.join(format!("a-0.0123456789abcdef0123456789abcdef-{suffix}"));
    std::fs::rename(log_dir.join("a-0"), to).unwrap();
}

/// The `remote_segment_gap`s of broker `broker`'s `orders-0`.
fn gaps(r: &ScanReport, broker: i32) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::RemoteSegmentGap && f.source.broker_id == Some(broker))
        .collect()
}

/// The gap's offsets and whether it names the stop as its cause.
fn gap_shape(r: &ScanReport, broker: i32) -> Vec<(i64, i64, bool)> {
    let stop = stops(r)[0].id.clone();
    gaps(r, broker)
        .iter()
        .map(|f| {
            let last = f.evidence["last_missing_offset"].as_i64().unwrap();
            (f.offset.unwrap(), last, f.caused_by.contains(&stop))
        })
        .collect()
}

/// A live `a-0` stops broker 2 before [40,59]: its gap runs to 59 and follows from the
/// stop. With the throw after both copies, its cache holds what every broker's does: the
/// gap 20..=39 is no one's stop's, not linked.
#[test]
fn a_stopped_brokers_gap_is_linked_to_the_stop_only_where_the_stop_made_it() {
    for (before, want) in [(1, (20, 59, true)), (2, (20, 39, false))] {
        let d = tempfile::tempdir().unwrap();
        let m = holed(2, before, d.path());
        host_a(&m.log_dir);
        let r = scan(std::slice::from_ref(&m.log_dir), &m);
        assert_eq!(gap_shape(&r, 2), vec![want], "{before}: {:#?}", r.findings);
    }
}

/// `a-0` only as a `-delete` copy: broker 2 hosted it until recently, perhaps when the
/// throw was applied, so how far its consumer went is not known: no gap verdict, the stop
/// names it among those it may stop. The twin, a `-stray` copy (a restart since), is a
/// broker not hosting `a-0`: judged on every record, the gap 20..=39 reported.
#[test]
fn a_delete_copy_leaves_its_broker_unjudged_and_a_stray_one_does_not() {
    let d = tempfile::tempdir().unwrap();
    let m = holed(2, 1, d.path());
    host_a(&m.log_dir);
    as_copy(&m.log_dir, "delete");
    let r = scan(std::slice::from_ref(&m.log_dir), &m);
    assert_eq!(gap_shape(&r, 2), vec![], "{:#?}", r.findings);
    let s = stops(&r);
    assert!(
        s[0].message.contains("perhaps also broker 2"),
        "{}",
        s[0].message
    );
    assert_eq!(s[0].evidence["stops_broker_ids"], serde_json::json!([]));
    assert_eq!(
        s[0].evidence["may_stop_brokers"],
        serde_json::json!(["broker 2"])
    );

    let d = tempfile::tempdir().unwrap();
    let m = holed(2, 1, d.path());
    host_a(&m.log_dir);
    as_copy(&m.log_dir, "stray");
    let r = scan(std::slice::from_ref(&m.log_dir), &m);
    assert_eq!(gap_shape(&r, 2), vec![(20, 39, false)], "{:#?}", r.findings);
    assert_eq!(
        stops(&r)[0].evidence["may_stop_brokers"],
        serde_json::json!([])
    );
}

/// `a-0` only as a `-future` copy (a move between log dirs, the source log dir not
/// collected): broker 2 hosts it, stops at the throw, and its gap follows from the stop.
#[test]
fn a_future_copy_hosts_the_partition() {
    let d = tempfile::tempdir().unwrap();
    let m = holed(2, 1, d.path());
    host_a(&m.log_dir);
    as_copy(&m.log_dir, "future");
    let r = scan(std::slice::from_ref(&m.log_dir), &m);
    assert_eq!(gap_shape(&r, 2), vec![(20, 59, true)], "{:#?}", r.findings);
    assert_eq!(
        stops(&r)[0].evidence["stops_broker_ids"],
        serde_json::json!([2])
    );
}

/// `b-0`'s records: its segment SB COPY_SEGMENT_STARTED twice (the cache throws).
fn b_throw() -> [Vec<u8>; 2] {
    let s = RemoteSegment {
        topic: "b".into(),
        topic_id: topic_id_for("b"),
        partition: 0,
        id: segment_uuid(901),
        start_offset: 0,
        end_offset: 9,
        max_timestamp_ms: 1_000,
        leader_epochs: vec![(0, 0)],
        size: 100,
        custom_metadata: None,
        txn_index_empty: None,
    };
    [
        encode_segment_metadata(&s, 1, 2_000, COPY_SEGMENT_STARTED),
        encode_segment_update(&s, 1, 3_000, None, COPY_SEGMENT_STARTED),
    ]
}

/// Two throws in metadata partition 0, `a-0`'s then `b-0`'s. Broker 1 hosts both, so it
/// stops at `a-0`'s and never reaches `b-0`'s; broker 2 hosts `b-0` only. The finding of
/// `b-0`'s stop names broker 2 as stopping there and broker 1 as stopped earlier.
#[test]
fn a_later_stop_does_not_name_a_broker_stopped_before_it() {
    let d = tempfile::tempdir().unwrap();
    let write = |broker: i32| {
        let mut t =
            TieredLog::new(klogscan::testkit::brokers::tiered_history()).metadata_partition(0);
        for r in invalid_transition().into_iter().chain(b_throw()) {
            t.raw_event(r);
        }
        t.copy(0);
        t.local_from(1);
        t.broker(broker);
        let m = t.write(d.path()).unwrap();
        let mut b = PartitionBuilder::new("b", 0).broker_files(PartitionFileOptions::default());
        b.append(Batch::new(Producer::PLAIN).records(10));
        b.write(&m.log_dir).unwrap();
        m
    };
    let m1 = write(1);
    let m2 = write(2);
    host_a(&m1.log_dir);
    let r = scan(&[m1.log_dir.clone(), m2.log_dir.clone()], &m2);
    let s = stops(&r);
    assert_eq!(s.len(), 2, "{:#?}", r.findings);
    assert_eq!(s[0].evidence["stops_broker_ids"], serde_json::json!([1]));
    let later = s[1];
    assert_eq!(later.evidence["partition"], "b-0");
    assert_eq!(later.evidence["stops_broker_ids"], serde_json::json!([2]));
    assert_eq!(
        later.evidence["stops_brokers"],
        serde_json::json!(["broker 2"])
    );
    assert_eq!(
        later.evidence["stopped_earlier_brokers"],
        serde_json::json!(["broker 1 (at offset 1)"])
    );
    assert!(
        later.message.contains(
            "(of the inputs: broker 2, broker 1 (at offset 1) hosting it too having stopped at an earlier record"
        ),
        "{}",
        later.message
    );
}

/// Many partition directories given without their log dir, each an owner of unknown
/// identity: the stop's message names five of those it may stop and counts the rest; the
/// evidence counts them all.
#[test]
fn the_brokers_a_stop_may_stop_are_listed_bounded() {
    let d = tempfile::tempdir().unwrap();
    let m = tiered(Shape::Straddling, 1, 0, true, d.path());
    host_a(&m.log_dir);
    let loose = d.path().join("loose");
    let mut dirs = vec![m.log_dir.clone()];
    for i in 0..12 {
        let mut p = PartitionBuilder::new(&format!("t{i}"), 0);
        p.append(Batch::new(Producer::PLAIN).records(1));
        p.write(&loose).unwrap();
        dirs.push(loose.join(format!("t{i}-0")));
    }
    let r = scan(&dirs, &m);
    let s = stops(&r);
    assert_eq!(s.len(), 1, "{:#?}", r.findings);
    assert!(s[0].message.contains(" and 7 more, "), "{}", s[0].message);
    assert_eq!(s[0].message.matches("the broker of log dir").count(), 5);
    assert_eq!(s[0].evidence["may_stop_broker_count"], 12);
    assert_eq!(
        s[0].evidence["may_stop_brokers"].as_array().unwrap().len(),
        12
    );
    assert_eq!(on_orders(&r, Kind::RemoteSegmentGap, 1), vec![20]);
}

/// `collect` then `merge` of each copy kind's shape prints the scan's JSON byte for byte:
/// a bundle carries the `-delete`, `-future` and `-stray` copies the reading is made of.
#[test]
fn merge_of_each_copy_kind_equals_the_scan() {
    for suffix in ["delete", "future", "stray"] {
        let d = tempfile::tempdir().unwrap();
        let m = holed(2, 1, d.path());
        host_a(&m.log_dir);
        as_copy(&m.log_dir, suffix);
        let opts = klogscan::partition::scan::ScanOptions::default()
            .with_remote_storage(Some(m.remote_root.clone()));
        let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &opts);
        let f = d.path().join("b.klb");
        let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
        klogscan::bundle::collect(std::slice::from_ref(&m.log_dir), &opts, w).unwrap();
        let merged = klogscan::bundle::merge(&[f], &opts).unwrap();
        assert_eq!(merged.warnings, Vec::<String>::new(), "{suffix}");
        assert_eq!(
            crate::common::json(scanned),
            crate::common::json(merged.report),
            "{suffix}"
        );
    }
}
