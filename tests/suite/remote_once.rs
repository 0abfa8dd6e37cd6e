//! `--remote-storage` made ready once, the same way, by `scan`, `collect` and `merge`
//! (`cluster::tiering::RemoteStorage`): a directory is read; a path that does not exist or
//! an archive is an input error naming it (exit 2, the same message from each command) and
//! the storage is not read — no remote segment replayed, none said missing. And one
//! replay of the `__remote_log_metadata` records per merge (`cluster::tiering::MetadataReplay`,
//! as one broker's `TopicBasedRemoteLogMetadataManager` keeps one `RemoteLogMetadataCache`),
//! read by the mirror, the unreplayed warning and the tiering check: the merged JSON is the
//! scan's, byte for byte, on every tiered-storage scenario of the suite.
#![cfg(feature = "testkit")]

use crate::common::json;
use crate::common::run::klogscan;
use klogscan::bundle;
use klogscan::cluster::tiering::replays_on_this_thread;
use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use std::path::{Path, PathBuf};

use crate::tiering::{delete_unfinished, healthy, remote_log, rolled};

/// A day after the histories: an open transaction is long past its timeout.
const NOW: i64 = klogscan::testkit::scenario::DEFAULT_START_MS + 86_400_000;

fn opts(m: &TieredManifest) -> ScanOptions {
    ScanOptions::default()
        .with_remote_storage(m.remote_root.clone())
        .with_now_ms(Some(NOW))
}

/// Each tiered-storage scenario of the suite (`tiering`, `tiered_history`), with the kind
/// of finding it must raise (so that the equality below is not that of empty reports).
/// A scenario: its name, its history, the kind it raises, the damage done once written.
type Scenario = (&'static str, TieredLog, Kind, fn(&TieredManifest));

fn scenarios() -> Vec<Scenario> {
    let none: fn(&TieredManifest) = |_| {};
    let gap = {
        let mut t = rolled();
        t.copy(3);
        t.local_from(3);
        t
    };
    let retried = {
        let mut t = rolled();
        t.copy_started(2);
        t.copy(2);
        t.copy(3);
        t.local_from(3);
        t
    };
    let abandoned = {
        let mut t = healthy();
        let mut stray = t.remote_segment(2);
        stray.leader_epochs = vec![(1, 40), (3, 50)];
        let r = t.copy_started_as(stray, 2);
        t.copy_finished(r);
        t
    };
    let reset = {
        let mut t = healthy();
        t.log_start(60);
        t
    };
    let missing = {
        let mut t = rolled();
        let r2 = t.copy(2);
        t.copy(3);
        t.lose_objects(r2);
        t.local_from(3);
        t
    };
    let undecodable = {
        let mut t = healthy();
        t.raw_event(b"corrupted".to_vec());
        t
    };
    let cut_object: fn(&TieredManifest) = |m| {
        let log = remote_log(m, 60);
        let bytes = std::fs::read(&log).unwrap();
        let first = 12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
        std::fs::write(&log, &bytes[..first]).unwrap();
    };
    vec![
        ("gap", gap, Kind::RemoteSegmentGap, none),
        ("copy retried", retried, Kind::RemoteCopyUnfinished, none),
        (
            "delete unfinished",
            delete_unfinished(),
            Kind::RemoteDeleteUnfinished,
            none,
        ),
        (
            "abandoned lineage",
            abandoned,
            Kind::RemoteSegmentAbandonedLineage,
            none,
        ),
        ("log start reset", reset, Kind::RemoteLogStartMismatch, none),
        ("objects lost", missing, Kind::RemoteSegmentMissing, none),
        (
            "undecodable record",
            undecodable,
            Kind::RemoteMetadataUndecodable,
            none,
        ),
        (
            "object cut",
            healthy(),
            Kind::RemoteSegmentMismatch,
            cut_object,
        ),
        (
            "transaction begun remotely",
            crate::tiered_history::tiered(false),
            Kind::HangingTransaction,
            none,
        ),
    ]
}

/// `collect` of `dir` into `out/<name>.klb` with `opts`.
fn collect(dir: &Path, opts: &ScanOptions, out: &Path, name: &str) -> PathBuf {
    let f = out.join(format!("{name}.klb"));
    let w = std::fs::File::create(&f).unwrap();
    bundle::collect(
        std::slice::from_ref(&dir.to_path_buf()),
        opts,
        std::io::BufWriter::new(w),
    )
    .unwrap();
    f
}

/// Every tiered-storage scenario: `merge --remote-storage` of the collected bundle prints
/// the scan's JSON byte for byte, and replays the remote log metadata once (before the
/// shared replay: the unreplayed warning, the tiering check's findings and its ranges
/// each replayed it); the scan replays it twice (before the walk, from the segments, for
/// the remote history; after it, from the records the walk kept, for the check).
#[test]
fn merge_replays_the_metadata_once_and_equals_scan_on_every_tiered_scenario() {
    for (name, t, kind, damage) in scenarios() {
        let d = tempfile::tempdir().unwrap();
        let m = t.write(d.path()).unwrap();
        damage(&m);
        let opts = opts(&m);
        let before = replays_on_this_thread();
        let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &opts);
        assert_eq!(replays_on_this_thread() - before, 2, "{name}: scan");
        assert!(
            scanned.findings.iter().any(|f| f.kind == kind),
            "{name}: {:#?}",
            scanned.findings
        );
        let bundles = tempfile::tempdir().unwrap();
        let file = collect(&m.log_dir, &opts, bundles.path(), "0");
        let before = replays_on_this_thread();
        let merged = bundle::merge(&[file], &opts).unwrap();
        assert_eq!(replays_on_this_thread() - before, 1, "{name}: merge");
        assert_eq!(merged.warnings, Vec::<String>::new(), "{name}");
        let (a, b) = (json(scanned), json(merged.report));
        if a != b {
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!("{name}: merge differs from scan at line {line:?}\nscan:\n{a}\nmerge:\n{b}");
        }
    }
}

/// Without `--remote-storage` the metadata is replayed once by the scan (no remote
/// history to choose) and once by the merge.
#[test]
fn without_remote_storage_scan_and_merge_replay_once() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let opts = ScanOptions::default();
    let before = replays_on_this_thread();
    let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &opts);
    assert_eq!(replays_on_this_thread() - before, 1);
    let bundles = tempfile::tempdir().unwrap();
    let file = collect(&m.log_dir, &opts, bundles.path(), "0");
    let before = replays_on_this_thread();
    let merged = bundle::merge(&[file], &opts).unwrap();
    assert_eq!(replays_on_this_thread() - before, 1);
    assert_eq!(json(scanned), json(merged.report));
}

/// The remote storage of `m` written as a tar archive beside it.
fn archived(m: &TieredManifest, d: &Path) -> PathBuf {
    let tar = d.join("remote.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&tar).unwrap());
    b.append_dir_all("remote", &m.remote_root).unwrap();
    b.finish().unwrap();
    tar
}

/// `scan`, `collect` then `merge` with `--remote-storage` given as a path that does not
/// exist, as an archive of the storage, and as the storage's directory. The first two:
/// each command exits 2 with the same line naming the path, the storage is not read (no
/// `remote_segment_missing` for objects that are in fact there) and the merge equals the
/// scan; the directory: read by all three, the merge equals the scan, exit 0.
#[test]
fn cli_scan_collect_and_merge_prepare_the_remote_storage_alike() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let s = |p: &Path| p.display().to_string();
    let dir = s(&m.log_dir);
    let cases = [
        (d.path().join("no-such-storage"), Some("no such directory")),
        (archived(&m, d.path()), Some("an archive")),
        (m.remote_root.clone(), None),
    ];
    for (storage, says) in cases {
        let storage = s(&storage);
        let out = tempfile::tempdir().unwrap();
        let file = s(&out.path().join("b.klb"));
        let with = |args: &[&str]| {
            let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            v.extend(["--remote-storage".into(), storage.clone()]);
            klogscan(&v, None, 120)
        };
        let scanned = with(&["scan", &dir, "--format", "json"]);
        let collected = with(&["collect", &dir, "--out", &file]);
        let merged = with(&["merge", &file, "--format", "json"]);
        match says {
            Some(says) => {
                let line = format!("klogscan: {storage}: --remote-storage: {says}");
                for (cmd, r) in [
                    ("scan", &scanned),
                    ("collect", &collected),
                    ("merge", &merged),
                ] {
                    assert_eq!(r.code(), 2, "{cmd} {storage}: {}", r.err);
                    let said: Vec<&str> = r.err.lines().filter(|l| l.contains(&line)).collect();
                    assert_eq!(said.len(), 1, "{cmd} {storage}: {}", r.err);
                }
                assert!(
                    !scanned.out.contains("remote_segment_missing"),
                    "{}",
                    scanned.out
                );
                let report: serde_json::Value = serde_json::from_str(&scanned.out).unwrap();
                let orders = report["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["topic"] == "orders")
                    .unwrap();
                assert!(orders["tiered"].get("replayed").is_none(), "{orders:#}");
            }
            None => {
                for (cmd, r) in [
                    ("scan", &scanned),
                    ("collect", &collected),
                    ("merge", &merged),
                ] {
                    assert_eq!(r.code(), 0, "{cmd}: {}", r.err);
                    assert!(!r.err.contains("--remote-storage:"), "{cmd}: {}", r.err);
                }
                assert!(scanned.out.contains("\"replayed\""), "{}", scanned.out);
            }
        }
        assert_eq!(scanned.out, merged.out, "{storage}");
    }
}

/// Bundles collected with a storage read, merged with one that cannot be read: refused
/// with the line a scan prints for that storage (exit 2); bundles collected with a storage
/// that could not be read, merged with one that can: refused, the remote history was not
/// replayed at collect.
#[test]
fn merge_refuses_a_remote_history_it_cannot_match() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let absent = d.path().join("absent");
    let bundles = tempfile::tempdir().unwrap();
    let good = opts(&m);
    let bad = opts(&m).with_remote_storage(absent.clone());
    // A storage that cannot be read is known so before any replay: the scan replays the
    // metadata once, for its check.
    let before = replays_on_this_thread();
    let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &bad);
    assert_eq!(replays_on_this_thread() - before, 1);
    assert_eq!(scanned.errors.len(), 1, "{:?}", scanned.errors);
    let replayed = collect(&m.log_dir, &good, bundles.path(), "replayed");
    let err = bundle::merge(std::slice::from_ref(&replayed), &bad).expect_err("refused");
    assert!(
        matches!(err, bundle::BundleError::RemoteStorageUnread { .. }),
        "{err}"
    );
    assert_eq!(err.path(), absent);
    assert!(
        err.to_string()
            .contains("--remote-storage: no such directory"),
        "{err}"
    );
    let unread = collect(&m.log_dir, &bad, bundles.path(), "unread");
    let err = bundle::merge(std::slice::from_ref(&unread), &good).expect_err("refused");
    assert!(
        matches!(
            err,
            bundle::BundleError::RemoteStorage {
                collected: false,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("not replayed at collect"), "{err}");
}

/// The `__remote_log_metadata` partition moved to a second broker's log dir (broker 1),
/// the tiered replica left on broker 0: the two log dirs.
fn metadata_on_another_broker(d: &Path) -> (TieredManifest, PathBuf, PathBuf) {
    let m = healthy().write(d).unwrap();
    let other = d.join("broker-1");
    std::fs::create_dir_all(&other).unwrap();
    let props = std::fs::read_to_string(m.log_dir.join("meta.properties")).unwrap();
    std::fs::write(
        other.join("meta.properties"),
        props.replace("broker.id=0", "broker.id=1"),
    )
    .unwrap();
    let moved = other.join(m.metadata_dir.file_name().unwrap());
    std::fs::rename(&m.metadata_dir, &moved).unwrap();
    let own = m.log_dir.clone();
    (m, own, other)
}

/// Broker 0 collected with `--remote-log-metadata` naming broker 1's log dir (read-only,
/// for the remote history alone): its tiered replica replays the remote segments as the
/// scan of both log dirs does, the merge warns of nothing and prints the scan's JSON byte
/// for byte. Without it (the negative), the replica replays none and the merge says so.
#[test]
fn collect_given_another_brokers_metadata_replays_as_the_scan_does() {
    let d = tempfile::tempdir().unwrap();
    let (m, own, other) = metadata_on_another_broker(d.path());
    let opts = opts(&m);
    let scanned = klogscan::pipeline::scan(&[own.clone(), other.clone()], &opts);
    let replayed = |r: &klogscan::results::ScanReport| {
        let p = r.partitions.iter().find(|p| p.topic == "orders").unwrap();
        p.tiered.as_ref().and_then(|t| t.replayed.clone())
    };
    assert!(replayed(&scanned).is_some());
    for given in [true, false] {
        let bundles = tempfile::tempdir().unwrap();
        let f0 = bundles.path().join("0.klb");
        let w = std::fs::File::create(&f0).unwrap();
        let metadata = if given { vec![other.clone()] } else { vec![] };
        let summary = bundle::collect_with(
            std::slice::from_ref(&own),
            &metadata,
            &opts,
            std::io::BufWriter::new(w),
        )
        .unwrap();
        assert!(summary.errors.is_empty(), "{:?}", summary.errors);
        let f1 = collect(&other, &opts, bundles.path(), "1");
        let merged = bundle::merge(&[f0, f1], &opts).unwrap();
        if given {
            assert_eq!(merged.warnings, Vec::<String>::new());
            assert_eq!(json(scanned.clone()), json(merged.report));
        } else {
            assert!(replayed(&merged.report).is_none());
            assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
            assert!(merged.warnings[0].contains("--remote-log-metadata"));
        }
    }
}

/// A `--remote-log-metadata` path holding no metadata partition is an input error of the
/// collect (exit 2, naming it); the flag without `--remote-storage` is refused (exit 2);
/// the flag on the command line gives the merge that equals the scan.
#[test]
fn cli_collect_remote_log_metadata() {
    let d = tempfile::tempdir().unwrap();
    let (m, own, other) = metadata_on_another_broker(d.path());
    let s = |p: &Path| p.display().to_string();
    let (own, other, remote) = (s(&own), s(&other), s(&m.remote_root));
    let out = tempfile::tempdir().unwrap();
    let (b0, b1) = (s(&out.path().join("0.klb")), s(&out.path().join("1.klb")));
    let run = |args: &[&str]| {
        klogscan(
            &args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            None,
            120,
        )
    };
    let collect0 = |flags: &[&str]| {
        let mut args = vec!["collect", own.as_str(), "--out", b0.as_str()];
        args.extend(flags);
        run(&args)
    };
    let r = collect0(&["--remote-log-metadata", &other]);
    assert_eq!(r.code(), 2, "{}", r.err);
    assert!(r.err.contains("--remote-storage"), "{}", r.err);
    let r = collect0(&["--remote-storage", &remote, "--remote-log-metadata", &own]);
    assert_eq!(r.code(), 2, "{}", r.err);
    let said = format!(
        "klogscan: {own}: --remote-log-metadata: no __remote_log_metadata partition under it"
    );
    assert!(r.err.contains(&said), "{}", r.err);
    let r = collect0(&["--remote-storage", &remote, "--remote-log-metadata", &other]);
    assert_eq!(r.code(), 0, "{}", r.err);
    let r = run(&["collect", &other, "--out", &b1, "--remote-storage", &remote]);
    assert_eq!(r.code(), 0, "{}", r.err);
    let scanned = run(&[
        "scan",
        &own,
        &other,
        "--remote-storage",
        &remote,
        "--format",
        "json",
    ]);
    let merged = run(&[
        "merge",
        &b0,
        &b1,
        "--remote-storage",
        &remote,
        "--format",
        "json",
    ]);
    assert_eq!(scanned.code(), merged.code(), "{}", merged.err);
    assert!(
        !merged.err.contains("not replayed at collect"),
        "{}",
        merged.err
    );
    assert!(scanned.out.contains("\"replayed\""), "{}", scanned.out);
    assert_eq!(scanned.out, merged.out);
}
