//! Identity of the evidence (issue 10): every partition report and finding names its
//! cluster, broker, log dir, path and copy kind; `-future`/`-delete`/`-stray` copies are
//! analysed but give no live-partition verdicts; tables show the broker when the inputs
//! span several.
#![cfg(feature = "testkit")]

use klogscan::finding::{CopyKind, Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target};
use std::path::{Path, PathBuf};

/// A partition with a transaction of producer 900 left open, then 20 minutes of plain
/// data: hanging by the time rule.
fn hanging(topic: &str, partition: i32) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(Producer::transactional(900, 1)).records(2));
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p
}

fn scan_dir(paths: &[PathBuf]) -> ScanReport {
    klogscan::pipeline::scan(paths, &ScanOptions::default())
}

fn txn_findings<'a>(r: &'a ScanReport, path_end: &str) -> Vec<&'a Finding> {
    r.findings
        .iter()
        .filter(|f| {
            matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
                && f.source
                    .path
                    .as_deref()
                    .is_some_and(|p| p.ends_with(path_end))
        })
        .collect()
}

#[test]
fn identity_from_meta_properties_on_partitions_and_findings() {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("broker-3");
    LogDirBuilder::new(3)
        .cluster_id("clusterA")
        .partition(hanging("orders", 0))
        .write(&ld)
        .unwrap();
    let r = scan_dir(std::slice::from_ref(&ld));
    assert_eq!(r.partitions.len(), 1);
    let s = &r.partitions[0].source;
    assert_eq!(s.cluster_id.as_deref(), Some("clusterA"));
    assert_eq!(s.broker_id, Some(3));
    assert_eq!(s.log_dir.as_deref(), Some(ld.to_str().unwrap()));
    assert_eq!(
        s.path.as_deref(),
        Some(ld.join("orders-0").to_str().unwrap())
    );
    assert_eq!(s.copy, CopyKind::Live);
    assert!(!r.findings.is_empty());
    for f in &r.findings {
        assert_eq!(&f.source, s, "{f:?}");
    }
    // The JSON report carries it on partitions and findings.
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&r, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["klogscan_report"], 1);
    assert_eq!(v["partitions"][0]["source"]["broker_id"], 3);
    assert_eq!(v["partitions"][0]["source"]["cluster_id"], "clusterA");
    assert_eq!(v["partitions"][0]["source"]["copy"], "live");
    assert_eq!(v["findings"][0]["source"]["cluster_id"], "clusterA");
    assert_eq!(v["summary"]["non_live"]["partitions"], 0);
}

#[test]
fn identity_is_null_without_meta_properties() {
    let dir = tempfile::tempdir().unwrap();
    hanging("orders", 0).write(dir.path()).unwrap();
    let r = scan_dir(&[dir.path().join("orders-0")]);
    let s = &r.partitions[0].source;
    assert_eq!((s.cluster_id.as_deref(), s.broker_id), (None, None));
    assert_eq!(s.log_dir, None);
    assert_eq!(s.copy, CopyKind::Live);
    assert!(r.findings.iter().all(|f| f.source == *s));
}

/// Write `p` and rename its directory to `name` (how a broker names a copy).
fn write_as(p: PartitionBuilder, ld: &Path, name: &str) {
    // Written aside first: the live `topic-N` may already be in `ld`.
    let stage = ld.join(format!("stage-{name}"));
    let m = p.write(&stage).unwrap();
    std::fs::rename(m.dir, ld.join(name)).unwrap();
    std::fs::remove_dir(stage).unwrap();
}

const UUID: &str = "7c3c1b0e5f2a4d2b9a1e0f6d5c4b3a29";

/// A broker with two log dirs: topic-0, topic-1.<uuid>-delete and topic-2.<uuid>-stray in
/// the first, topic-0.<uuid>-future (an inter-log-dir move's destination) in the second,
/// each holding the same hanging transaction; the -future copy also has a CRC-damaged
/// batch. Returns the directory holding both log dirs.
fn broker_with_copies(dir: &Path) -> PathBuf {
    let ld = dir.join("kafka-logs");
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(hanging("topic", 0))
        .write(&ld)
        .unwrap();
    let ld2 = dir.join("kafka-logs-2");
    LogDirBuilder::new(1).cluster_id("c1").write(&ld2).unwrap();
    let mut future = hanging("topic", 0);
    // A byte of the first batch's records (past its 61-byte header).
    future.fault(
        Target::LastLog,
        FaultKind::FlipByte {
            position: 64,
            mask: 0x01,
        },
    );
    write_as(future, &ld2, &format!("topic-0.{UUID}-future"));
    write_as(hanging("topic", 1), &ld, &format!("topic-1.{UUID}-delete"));
    write_as(hanging("topic", 2), &ld, &format!("topic-2.{UUID}-stray"));
    dir.to_path_buf()
}

#[test]
fn copies_are_analysed_but_get_no_live_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let ld = broker_with_copies(dir.path());
    let r = scan_dir(std::slice::from_ref(&ld));
    assert_eq!(r.partitions.len(), 4);

    // The live copy: hanging, LSO stuck, an abort remediation.
    let live = txn_findings(&r, "/topic-0");
    assert_eq!(live.len(), 1);
    assert_eq!(
        (live[0].kind, live[0].severity),
        (Kind::HangingTransaction, Severity::Error)
    );
    assert!(live[0].message.contains("last stable offset is stuck"));
    assert!(
        live[0]
            .remediation
            .as_deref()
            .unwrap()
            .contains("kafka-transactions.sh")
    );
    assert_eq!(live[0].source.copy, CopyKind::Live);

    // Each copy: an open transaction (info) that says it is not served, no abort.
    for (suffix, copy) in [
        ("-future", CopyKind::Future),
        ("-delete", CopyKind::Delete),
        ("-stray", CopyKind::Stray),
    ] {
        let fs = txn_findings(&r, suffix);
        assert_eq!(fs.len(), 1, "{suffix}");
        let f = fs[0];
        assert_eq!(
            (f.kind, f.severity),
            (Kind::OpenTransaction, Severity::Info)
        );
        assert_eq!(f.source.copy, copy);
        assert!(
            f.message.contains(&format!("in a {suffix} copy")),
            "{}",
            f.message
        );
        assert!(f.message.contains("not served to consumers"));
        assert!(!f.message.contains("last stable offset is stuck"));
        assert_eq!(f.evidence["hanging_if_live"], true);
        assert!(
            !f.remediation
                .as_deref()
                .unwrap_or("")
                .contains("kafka-transactions.sh"),
            "{:?}",
            f.remediation
        );
    }
    // Damage in a copy is still reported as damage, with the copy's identity.
    let crc: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::CrcMismatch)
        .collect();
    assert_eq!(crc.len(), 1);
    assert_eq!(crc[0].severity, Severity::Error);
    assert_eq!(crc[0].source.copy, CopyKind::Future);
    assert!(crc[0].id.contains("future"), "{}", crc[0].id);

    // Counted apart.
    let nl = &r.summary.non_live;
    assert_eq!(nl.partitions, 3);
    assert_eq!(nl.error, 1); // the CRC damage
    let copy_findings = r
        .findings
        .iter()
        .filter(|f| !f.source.copy.is_live())
        .count() as u64;
    assert_eq!(nl.error + nl.warning + nl.info, copy_findings);
    assert!(copy_findings >= 4);

    // One broker, two log dirs.
    let future = r
        .partitions
        .iter()
        .find(|p| p.source.copy == CopyKind::Future)
        .unwrap();
    assert!(
        future
            .source
            .log_dir
            .as_deref()
            .unwrap()
            .ends_with("kafka-logs-2")
    );
    assert!(r.partitions.iter().all(|p| p.source.broker_id == Some(1)));

    // The table marks the copies, and has no broker column (one broker).
    let mut out = Vec::new();
    klogscan::report::table::write_scan(&r, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("[future copy]"), "{text}");
    assert!(text.contains("[stray copy]"), "{text}");
    assert!(!text.lines().nth(1).unwrap().contains("broker"), "{text}");
    assert!(text.contains("of which 3 non-live copies"), "{text}");
}

#[test]
fn verify_stamps_cross_check_findings_with_the_identity() {
    let dir = tempfile::tempdir().unwrap();
    let ld = broker_with_copies(dir.path());
    let v = klogscan::verify::verify(
        std::slice::from_ref(&ld),
        &klogscan::verify::VerifyOptions::default(),
    );
    assert_eq!(v.partitions.len(), 4);
    for p in &v.partitions {
        assert_eq!(p.source.broker_id, Some(1));
        for f in &p.findings {
            assert_eq!(f.source, p.source, "{f:?}");
        }
        if !p.source.copy.is_live() {
            assert!(
                p.findings
                    .iter()
                    .all(|f| f.kind != Kind::HangingTransaction),
                "{:?}",
                p.findings
            );
        }
    }
}

#[test]
fn tables_show_the_broker_only_when_several() {
    let dir = tempfile::tempdir().unwrap();
    for b in [1, 2] {
        LogDirBuilder::new(b)
            .cluster_id("c1")
            .partition(hanging("orders", b))
            .write(&dir.path().join(format!("broker{b}")))
            .unwrap();
    }
    let render = |paths: &[PathBuf]| {
        let r = scan_dir(paths);
        let mut out = Vec::new();
        klogscan::report::table::write_scan(&r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    // The partition table's header (the triage summary comes before the tables).
    let header = |text: &str| {
        text.lines()
            .find(|l| l.contains("segments"))
            .unwrap()
            .to_string()
    };
    let two = render(&[dir.path().to_path_buf()]);
    assert!(header(&two).contains("broker"), "{two}");
    let one = render(&[dir.path().join("broker1")]);
    assert!(!header(&one).contains("broker"), "{one}");
}

/// Two plain partitions whose batch 2 differs.
fn plain(topic: &str, partition: i32, odd: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(topic, partition);
    for i in 0..4 {
        let v = if odd && i == 2 { "odd" } else { "even" };
        p.append(Batch::new(Producer::PLAIN).values([v, v]));
    }
    p
}

fn divergences(r: &ScanReport) -> usize {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .count()
}

/// Replica comparison uses the same "same cluster" rule: without cluster ids, the live
/// directory and its `-future` copy in one log dir are compared; two unrelated marker-less
/// log dirs are not.
#[test]
fn replicas_join_by_the_same_cluster_rule() {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("logs");
    plain("t", 0, false).write(&ld).unwrap();
    write_as(plain("t", 0, true), &ld, &format!("t-0.{UUID}-future"));
    let r = scan_dir(std::slice::from_ref(&ld));
    assert_eq!(r.partitions.len(), 2);
    assert!(r.partitions.iter().all(|p| p.source.log_dir.is_some()));
    assert_eq!(divergences(&r), 1, "{:#?}", r.findings);

    let dir = tempfile::tempdir().unwrap();
    let (x, y) = (dir.path().join("x"), dir.path().join("other"));
    plain("t", 0, false).write(&x).unwrap();
    plain("pad", 0, false).write(&x).unwrap();
    plain("t", 0, true).write(&y).unwrap();
    plain("pad", 1, false).write(&y).unwrap();
    let r = scan_dir(&[x, y]);
    assert_eq!(divergences(&r), 0, "{:#?}", r.findings);
}

/// `Properties.load` takes comment lines of any length: a `meta.properties` padded with a
/// 200 KB comment still names the log dir's cluster and broker (before: over 64 KiB it was
/// dropped in silence, the identity null). One larger than any properties file klogscan
/// reads (64 MiB, a sparse file here) is named, exit 2, never taken for absent in silence.
#[test]
fn a_large_meta_properties_is_read_and_one_too_large_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let ld = dir.path().join("broker-3");
    LogDirBuilder::new(3)
        .cluster_id("clusterA")
        .partition(hanging("orders", 0))
        .write(&ld)
        .unwrap();
    let meta = ld.join("meta.properties");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, format!("#{}\n{text}", "x".repeat(200_000))).unwrap();
    let r = scan_dir(std::slice::from_ref(&ld));
    let s = &r.partitions[0].source;
    assert_eq!(
        (s.cluster_id.as_deref(), s.broker_id),
        (Some("clusterA"), Some(3))
    );
    // Beyond the bound: named on stderr, exit 2.
    std::fs::File::options()
        .write(true)
        .open(&meta)
        .unwrap()
        .set_len(70 << 20)
        .unwrap();
    let out =
        crate::common::run::klogscan(&[std::ffi::OsStr::new("scan"), ld.as_os_str()], None, 60);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.err.contains("meta.properties") && out.err.contains("not read"),
        "{}",
        out.err
    );
    // So is an offset checkpoint the partition stage starts from (before: scan took it for
    // absent in silence, exit 1).
    std::fs::write(&meta, text).unwrap();
    let ckpt = ld.join("recovery-point-offset-checkpoint");
    let f = std::fs::File::options().write(true).open(&ckpt).unwrap();
    f.set_len(70 << 20).unwrap();
    let out =
        crate::common::run::klogscan(&[std::ffi::OsStr::new("scan"), ld.as_os_str()], None, 60);
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.err.contains("recovery-point-offset-checkpoint") && out.err.contains("not read"),
        "{}",
        out.err
    );
}
