//! Compaction knowledge (issue 10): a partition is compacted when its log dir's
//! `cleaner-offset-checkpoint` lists it, when the same cluster's KRaft metadata log sets
//! `cleanup.policy` with `compact` for its topic, or when `--compacted` names it; a topic
//! whose policy is `delete` alone is not compacted, and a sequence gap there is an error.
#![cfg(feature = "testkit")]

use assert_cmd::Command;
use klogscan::finding::{Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};
use klogscan::results::ScanReport;
use klogscan::testkit::metadata::encode;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

/// `events-0`: producer 7 writes sequences 0..1, then 5..6 at the next offsets. No batch
/// shows a cleaner trace (the cleaner drops whole batches and copies the rest as is).
fn gap() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("events", 0);
    p.append(Batch::new(Producer::idempotent(7, 0)).records(2));
    p.append(
        Batch::new(Producer::idempotent(7, 0))
            .sequence(5)
            .records(2),
    );
    p
}

fn policy(topic: &str, value: Option<&str>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    let r = MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: topic.into(),
        name: "cleanup.policy".into(),
        value: value.map(str::to_string),
    };
    p.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&r))));
    p
}

fn log_dir(dir: &Path, cluster: &str, extra: Option<PartitionBuilder>) -> PathBuf {
    let ld = dir.join(format!("{cluster}-b1"));
    let mut b = LogDirBuilder::new(1).cluster_id(cluster).partition(gap());
    if let Some(p) = extra {
        b = b.partition(p);
    }
    b.write(&ld).unwrap();
    ld
}

fn gaps(r: &ScanReport) -> Vec<Severity> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::SequenceGap && f.topic == "events")
        .map(|f| f.severity)
        .collect()
}

fn scan_with(paths: &[PathBuf], compacted: &[&str]) -> ScanReport {
    let opts = ScanOptions::default().with_compacted_topics(compacted.iter().copied());
    klogscan::pipeline::scan(paths, &opts)
}

#[test]
fn unknown_policy_gives_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let ld = log_dir(dir.path(), "c1", None);
    assert_eq!(gaps(&scan_with(&[ld], &[])), vec![Severity::Warning]);
}

#[test]
fn cleaner_offset_checkpoint_makes_it_compacted() {
    for (listed, expect) in [
        ("events 0 2\n", vec![]),
        ("events 1 2\nother 0 5\n", vec![Severity::Warning]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ld = log_dir(dir.path(), "c1", None);
        let n = listed.lines().count();
        std::fs::write(
            ld.join("cleaner-offset-checkpoint"),
            format!("0\n{n}\n{listed}"),
        )
        .unwrap();
        let r = scan_with(&[ld], &[]);
        assert_eq!(gaps(&r), expect, "{listed}");
        let p = r.partitions.iter().find(|p| p.topic == "events").unwrap();
        if expect.is_empty() {
            assert_eq!(p.compacted, Some(true));
            assert_eq!(
                p.compacted_from.as_deref(),
                Some("cleaner-offset-checkpoint")
            );
        } else {
            assert_eq!((p.compacted, p.compacted_from.as_deref()), (None, None));
        }
    }
}

#[test]
fn compacted_flag() {
    let dir = tempfile::tempdir().unwrap();
    let ld = log_dir(dir.path(), "c1", None);
    assert_eq!(
        gaps(&scan_with(std::slice::from_ref(&ld), &["events"])),
        vec![]
    );
    assert_eq!(
        gaps(&scan_with(std::slice::from_ref(&ld), &["other"])),
        vec![Severity::Warning]
    );
    // On the command line: with --fail-on warning the gap fails the run, unless the topic
    // is declared compacted.
    let run = |extra: &[&str]| {
        Command::cargo_bin("klogscan")
            .unwrap()
            .arg("scan")
            .arg(&ld)
            .args(["--fail-on", "warning"])
            .args(extra)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(run(&[]), Some(1));
    assert_eq!(run(&["--compacted", "other,events"]), Some(0));
}

#[test]
fn kraft_cleanup_policy_of_the_same_cluster() {
    let cases: [(Option<&str>, Vec<Severity>); 4] = [
        (Some("compact"), vec![]),
        (Some("compact,delete"), vec![]),
        (Some("delete"), vec![Severity::Error]),
        (None, vec![Severity::Warning]), // removed: back to the (unknown) broker default
    ];
    for (value, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let ld = log_dir(dir.path(), "c1", Some(policy("events", value)));
        let r = scan_with(&[ld], &[]);
        assert_eq!(gaps(&r), expect, "{value:?}");
        let p = r.partitions.iter().find(|p| p.topic == "events").unwrap();
        let meta = r
            .partitions
            .iter()
            .find(|p| p.topic == "__cluster_metadata")
            .unwrap();
        assert_eq!(
            meta.compacted_from.as_deref(),
            None,
            "not an internal topic"
        );
        match value {
            Some("delete") => assert_eq!(p.compacted, Some(false)),
            Some(_) => assert_eq!(p.compacted, Some(true)),
            None => assert_eq!(p.compacted, None),
        }
        if value == Some("delete") {
            let f = r
                .findings
                .iter()
                .find(|f| f.kind == Kind::SequenceGap)
                .unwrap();
            assert_eq!(f.evidence["compacted"], false);
        }
    }
    // Another cluster's metadata log says nothing about this one.
    let dir = tempfile::tempdir().unwrap();
    let ld = log_dir(dir.path(), "c1", None);
    let other = dir.path().join("c2-b1");
    LogDirBuilder::new(1)
        .cluster_id("c2")
        .partition(policy("events", Some("compact")))
        .write(&other)
        .unwrap();
    assert_eq!(gaps(&scan_with(&[ld, other], &[])), vec![Severity::Warning]);
}

/// The metadata loader applies the newest snapshot, then the log from the snapshot's end
/// offset on: a batch below that offset is what the snapshot already holds and is not
/// applied again. Here the log's only batch (offset 0) sets `delete` and the snapshot
/// ending at 1 holds `compact` (a state the loader takes as it is): the policy read is the
/// snapshot's. Without the snapshot, the log's.
#[test]
fn kraft_policy_batches_below_the_snapshot_end_are_not_applied_again() {
    for with_snapshot in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let ld = log_dir(dir.path(), "c1", Some(policy("events", Some("delete"))));
        if with_snapshot {
            let snap = tempfile::tempdir().unwrap();
            let m = policy("events", Some("compact"))
                .write(snap.path())
                .unwrap();
            let log = m.dir.join("00000000000000000000.log");
            let to = ld
                .join("__cluster_metadata-0")
                .join("00000000000000000001-0000000000.checkpoint");
            std::fs::copy(log, to).unwrap();
        }
        let r = scan_with(&[ld], &[]);
        let p = r.partitions.iter().find(|p| p.topic == "events").unwrap();
        let want = if with_snapshot {
            Some(true)
        } else {
            Some(false)
        };
        assert_eq!(p.compacted, want, "snapshot {with_snapshot}");
    }
}

/// The node opens its metadata log as after an unclean shutdown and recovers every
/// segment (`KafkaMetadataLog.apply`, `LogLoader.recoverLog`): a batch failing its CRC
/// truncates the log there, so a `cleanup.policy` set after it is never applied by that
/// node. Here `delete` is set in the first segment, then the last segment holds a damaged
/// batch and a batch setting `compact`: the policy read is `delete` (a gap is an error).
/// Twin: the same log undamaged reads `compact`.
#[test]
fn kraft_policy_after_a_corrupt_metadata_batch_is_not_applied() {
    for damaged in [true, false] {
        let mut meta = policy("events", Some("delete"));
        meta.roll();
        let other = MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name: "other".into(),
            name: "retention.ms".into(),
            value: Some("1000".into()),
        };
        meta.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&other))));
        let compact = MetaRecord::Config {
            resource_type: RESOURCE_TOPIC,
            resource_name: "events".into(),
            name: "cleanup.policy".into(),
            value: Some("compact".into()),
        };
        meta.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&compact))));
        if damaged {
            meta.fault(
                klogscan::testkit::scenario::Target::LastLog,
                klogscan::testkit::scenario::FaultKind::FlipByte {
                    position: 70,
                    mask: 0x20,
                },
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let ld = log_dir(dir.path(), "c1", Some(meta));
        let r = scan_with(&[ld], &[]);
        let crc = r.findings.iter().any(|f| f.kind == Kind::CrcMismatch);
        assert_eq!(crc, damaged, "{:#?}", r.findings);
        let p = r.partitions.iter().find(|p| p.topic == "events").unwrap();
        assert_eq!(p.compacted, Some(!damaged), "damaged {damaged}");
        let want = if damaged {
            vec![Severity::Error]
        } else {
            vec![]
        };
        assert_eq!(gaps(&r), want, "damaged {damaged}");
    }
}
