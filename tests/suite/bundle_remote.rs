//! `collect` + `merge` with tiered storage: each broker's collect given `--remote-storage`
//! replays its tiered partitions' remote segments before their local ones, as `scan` does;
//! the merge, given the same remote storage, walks the remote objects and links what the
//! replay derived from a damaged remote batch to that copy's finding. The merged JSON is
//! the scan's, byte for byte. Bundles collected without the remote history are refused by
//! a merge that is given one, and the other way round.
#![cfg(feature = "testkit")]

use crate::common::json;
use klogscan::bundle::{self, BundleError};
use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

use crate::tiering::{healthy, remote_log};

fn with_remote(m: &TieredManifest, remote: bool) -> ScanOptions {
    ScanOptions::default().with_remote_storage(remote.then(|| m.remote_root.clone()))
}

/// The broker's log dir collected into `<out>/0.klb` with `opts`.
fn collect(m: &TieredManifest, opts: &ScanOptions, out: &Path) -> PathBuf {
    let f = out.join("0.klb");
    let w = std::fs::File::create(&f).unwrap();
    bundle::collect(
        std::slice::from_ref(&m.log_dir),
        opts,
        std::io::BufWriter::new(w),
    )
    .unwrap();
    f
}

/// `scan --remote-storage R` of the broker's log dir, and `merge --remote-storage R` of
/// its bundle collected with `--remote-storage R`, as JSON.
fn scan_and_merge(m: &TieredManifest) -> (ScanReport, String, String) {
    let opts = with_remote(m, true);
    let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &opts);
    let bundles = tempfile::tempdir().unwrap();
    let file = collect(m, &opts, bundles.path());
    let merged = bundle::merge(&[file], &opts).unwrap();
    assert_eq!(merged.warnings, Vec::<String>::new());
    let a = json(scanned.clone());
    (scanned, a, json(merged.report))
}

fn assert_same(name: &str, a: &str, b: &str) {
    if a != b {
        let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
        panic!("{name}: merge differs from scan at line {line:?}\nscan:\n{a}\nmerge:\n{b}");
    }
}

/// Flip the high byte of the producer id (header bytes 43..51) of the second batch (offset
/// 50) of remote segment [40,59]: its CRC fails.
fn damage_remote_producer_id(m: &TieredManifest) {
    let log = remote_log(m, 40);
    let mut bytes = std::fs::read(&log).unwrap();
    let second = 12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[second + 43] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
}

/// A healthy tiered partition: the remote segments [20,79] replayed before the local log.
#[test]
fn merge_with_remote_storage_equals_scan_on_a_healthy_tiered_partition() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let (scanned, a, b) = scan_and_merge(&m);
    let orders = scanned
        .partitions
        .iter()
        .find(|p| p.topic == "orders")
        .unwrap();
    let replayed = orders.tiered.as_ref().and_then(|t| t.replayed.as_ref());
    assert!(replayed.is_some(), "{orders:#?}");
    assert_same("healthy", &a, &b);
}

/// The producer id of a remote batch (offset 50) damaged: the object walk at the merge
/// makes the `remote_segment_corrupt`, the replay at the collect what follows from the
/// damaged header; the merge links the latter to the former as the scan does.
#[test]
fn merge_links_what_a_damaged_remote_batch_derives_as_scan_does() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    damage_remote_producer_id(&m);
    let (scanned, a, b) = scan_and_merge(&m);
    let corrupt = scanned
        .findings
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentCorrupt)
        .unwrap_or_else(|| panic!("{:#?}", scanned.findings));
    let linked = scanned
        .findings
        .iter()
        .filter(|f| f.caused_by.contains(&corrupt.id))
        .count();
    assert!(linked > 0, "{:#?}", scanned.findings);
    assert_same("damaged remote batch", &a, &b);
}

/// `healthy`'s tiered partition written by idempotent producer 7 (sequences follow the
/// offsets from 0): the remote segments [20,39] [40,59] [60,79], the local log from 60.
fn healthy_idempotent() -> TieredLog {
    let pr = Producer::idempotent(7, 0);
    let mut p = PartitionBuilder::new("orders", 0).leader_epoch(0);
    for seg in 0..5 {
        if seg > 0 {
            p.roll();
        }
        for half in 0..2 {
            let epoch = match (seg, half) {
                (0 | 1, _) => 0,
                (2, _) | (3, 0) => 1,
                _ => 2,
            };
            p.append(Batch::new(pr).records(10).leader_epoch(epoch));
        }
    }
    let mut t = TieredLog::new(p);
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    t
}

/// The low byte of the producer id (header byte 50) of the first batch (offset 40) of
/// remote segment [40,59] flipped: 7 becomes 71, an id no other batch carries. The gap it
/// leaves in producer 7's sequences (at offset 50) follows from the damage of the remote
/// copy; the merge, from the damaged batches its bundle carries, links it as the scan does.
#[test]
fn merge_links_the_gap_a_phantom_remote_producer_leaves_as_scan_does() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy_idempotent().write(d.path()).unwrap();
    let log = remote_log(&m, 40);
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[50] ^= 0x40;
    std::fs::write(&log, bytes).unwrap();
    let (scanned, a, b) = scan_and_merge(&m);
    let corrupt = scanned
        .findings
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentCorrupt)
        .unwrap_or_else(|| panic!("{:#?}", scanned.findings));
    let gap = scanned
        .findings
        .iter()
        .find(|f| f.kind == Kind::SequenceGap && f.offset == Some(50))
        .unwrap_or_else(|| panic!("{:#?}", scanned.findings));
    assert_eq!(gap.producer_id, Some(7));
    assert_eq!(gap.caused_by, vec![corrupt.id.clone()], "{gap:#?}");
    assert_same("phantom remote producer", &a, &b);
}

/// Without `--remote-storage` on either side, the merge is the scan's too (no remote
/// history, no object walked).
#[test]
fn merge_without_remote_storage_equals_scan_without_it() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let opts = with_remote(&m, false);
    let scanned = klogscan::pipeline::scan(std::slice::from_ref(&m.log_dir), &opts);
    let bundles = tempfile::tempdir().unwrap();
    let file = collect(&m, &opts, bundles.path());
    let merged = bundle::merge(&[file], &opts).unwrap();
    assert_same("local only", &json(scanned), &json(merged.report));
}

/// A merge given `--remote-storage` over a bundle collected without it (the remote
/// history was never replayed), and the reverse: each refused, naming the bundle and
/// saying what to do.
#[test]
fn merge_refuses_bundles_collected_with_another_remote_history() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    for collected in [false, true] {
        let bundles = tempfile::tempdir().unwrap();
        let file = collect(&m, &with_remote(&m, collected), bundles.path());
        let err = bundle::merge(std::slice::from_ref(&file), &with_remote(&m, !collected))
            .expect_err("refused");
        assert!(matches!(err, BundleError::RemoteStorage { .. }), "{err}");
        assert_eq!(err.path(), file);
        let msg = err.to_string();
        assert!(msg.contains("--remote-storage"), "{msg}");
        assert!(msg.contains(&file.display().to_string()), "{msg}");
        if collected {
            assert!(msg.contains("give the merge --remote-storage"), "{msg}");
        } else {
            assert!(msg.contains("not replayed"), "{msg}");
        }
    }
}

/// The command line: `collect --remote-storage R` then `merge --remote-storage R` prints
/// what `scan --remote-storage R` prints (JSON and table), exit code included; the merge
/// given `--remote-storage` over a bundle collected without it exits 2 saying so.
#[test]
fn cli_collect_and_merge_with_remote_storage_equal_scan() {
    use crate::common::run::klogscan;
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    damage_remote_producer_id(&m);
    let s = |p: &Path| p.display().to_string();
    let (dir, remote) = (s(&m.log_dir), s(&m.remote_root));
    let out = tempfile::tempdir().unwrap();
    let (with, without) = (out.path().join("r.klb"), out.path().join("l.klb"));
    for (file, remote) in [(&with, Some(&remote)), (&without, None)] {
        let mut args = vec!["collect".to_string(), dir.clone(), "--out".into(), s(file)];
        args.extend(
            remote
                .map(|r| ["--remote-storage".to_string(), r.clone()])
                .into_iter()
                .flatten(),
        );
        let r = klogscan(&args, None, 120);
        assert_eq!(r.code(), 0, "{}", r.err);
    }
    let run = |cmd: &str, input: &str, format: &str| {
        let args = [
            cmd,
            input,
            "--remote-storage",
            &remote,
            "--format",
            format,
            "--color",
            "never",
        ];
        klogscan(&args.map(String::from), None, 120)
    };
    for format in ["json", "table"] {
        let scanned = run("scan", &dir, format);
        let merged = run("merge", &s(&with), format);
        assert_eq!(scanned.code(), merged.code(), "{format}: {}", merged.err);
        assert!(
            scanned.out.contains("remote_segment_corrupt"),
            "{}",
            scanned.out
        );
        assert_eq!(scanned.out, merged.out, "{format}");
    }
    let refused = run("merge", &s(&without), "json");
    assert_eq!(refused.code(), 2, "{}", refused.err);
    assert!(refused.out.is_empty(), "{}", refused.out);
    assert!(
        refused.err.contains("not replayed at collect"),
        "{}",
        refused.err
    );
}

/// The `__remote_log_metadata` partition on another broker than the tiered replica: that
/// replica's collect knows of no remote segment, so it replays none, where the scan of both
/// brokers' directories replays them. Not the scan's report: the merge says so, naming the
/// partition (a warning on stderr), rather than differ silently.
#[test]
fn merge_warns_when_a_replicas_metadata_was_on_another_broker() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let other = d.path().join("broker-1");
    std::fs::create_dir_all(&other).unwrap();
    let props = std::fs::read_to_string(m.log_dir.join("meta.properties")).unwrap();
    assert!(props.contains("broker.id=0"), "{props}");
    std::fs::write(
        other.join("meta.properties"),
        props.replace("broker.id=0", "broker.id=1"),
    )
    .unwrap();
    std::fs::rename(
        &m.metadata_dir,
        other.join(m.metadata_dir.file_name().unwrap()),
    )
    .unwrap();
    let opts = with_remote(&m, true);
    let dirs = [m.log_dir.clone(), other.clone()];
    let scanned = klogscan::pipeline::scan(&dirs, &opts);
    let bundles = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = dirs
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let f = bundles.path().join(format!("{i}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            bundle::collect(std::slice::from_ref(dir), &opts, std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect();
    let merged = bundle::merge(&files, &opts).unwrap();
    let replayed = |r: &ScanReport| {
        let p = r.partitions.iter().find(|p| p.topic == "orders").unwrap();
        p.tiered.as_ref().and_then(|t| t.replayed.clone())
    };
    assert!(replayed(&scanned).is_some());
    assert!(replayed(&merged.report).is_none());
    let orders = m.partition_dir.display().to_string();
    assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
    assert!(
        merged.warnings[0].starts_with(&orders),
        "{:?}",
        merged.warnings
    );
    assert!(merged.warnings[0].contains("not replayed at collect"));
}

/// A committed transaction of producer 7 (its data at 0, its COMMIT at 1, one segment
/// each, both remote) whose COMMIT segment's transaction index object says it aborted:
/// `remote_txn_index_extra` (error), from the replay of the remote history at the collect
/// and the object read at the merge — the merged JSON is the scan's.
#[test]
fn merge_judges_a_remote_index_entry_at_a_commit_marker_as_scan_does() {
    use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
    let p7 = Producer::transactional(7, 0);
    let mut p = PartitionBuilder::new("orders", 0)
        .leader_epoch(0)
        .time_step(1000);
    p.append(Batch::new(p7).records(2));
    p.roll();
    p.commit(p7, 0);
    p.roll();
    p.append(Batch::new(Producer::PLAIN).values(["z"]));
    let mut t = TieredLog::new(p);
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(0);
    let d = tempfile::tempdir().unwrap();
    let m = t.write(d.path()).unwrap();
    let entry = AbortedTxn {
        producer_id: 7,
        first_offset: 0,
        last_offset: 2,
        last_stable_offset: 3,
    };
    let object = crate::kafka_ricaudit_cases::object(d.path(), 2, 2, "txnindex");
    std::fs::write(object, encode_txn_index(&[entry])).unwrap();
    let (scanned, a, b) = scan_and_merge(&m);
    let extra: Vec<_> = (scanned.findings.iter())
        .filter(|f| f.kind == Kind::RemoteTxnIndexExtra)
        .collect();
    assert_eq!(extra.len(), 1, "{:#?}", scanned.findings);
    assert_eq!(extra[0].offset, Some(2));
    assert_eq!(extra[0].evidence["committed_transactions_hidden"], 1);
    assert_same("extra remote index entry", &a, &b);
}
