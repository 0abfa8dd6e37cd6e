//! Damage inside a remote segment's object (`remote_segment_corrupt`): the walk of a remote
//! object runs the local walk's integrity checks, and what it finds is reported once, as
//! damage of the remote copy — not dropped, not repeated as a difference from the metadata,
//! not reported as a local `crc_mismatch`. One cause, one finding.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::aiven::{AivenLayout, write_aiven};
use klogscan::testkit::remote_log::TieredManifest;
use std::path::Path;

// The healthy tiered partition of `tiering` (remote segments [20,39] [40,59] [60,79], two
// batches of 10 records each; the local log from 60) and its remote `.log` files.
use crate::tiering::{healthy, remote_log};

fn scan(m: &TieredManifest) -> Vec<Finding> {
    scan_with(m, ScanOptions::default())
}

fn scan_with(m: &TieredManifest, opts: ScanOptions) -> Vec<Finding> {
    let opts = opts.with_remote_storage(Some(m.remote_root.clone()));
    let root = m.log_dir.parent().unwrap().to_path_buf();
    klogscan::pipeline::scan(&[root], &opts).findings
}

/// The remote segments of `m` as the Aiven plugin's objects under `<d>/bucket` instead of
/// `LocalTieredStorage`'s files: their keys.
fn to_aiven(m: &mut TieredManifest, d: &Path, layout: &AivenLayout) -> Vec<String> {
    let bucket = d.join("bucket");
    let keys = write_aiven(m, &bucket, layout).unwrap();
    std::fs::remove_dir_all(&m.remote_root).unwrap();
    m.remote_root = bucket;
    keys
}

/// Flip the bits of byte `at` of `file`.
fn flip(file: &Path, at: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(file, bytes).unwrap();
}

/// The size of the first batch of `file`.
fn first_batch_len(file: &Path) -> usize {
    let bytes = std::fs::read(file).unwrap();
    12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize
}

/// Every finding that names remote data or batch damage, as `(kind, offset, position)`.
fn damage(f: &[Finding]) -> Vec<(Kind, Option<i64>, Option<u64>)> {
    f.iter()
        .filter(|f| {
            f.kind.id().starts_with("remote_")
                || matches!(
                    f.kind,
                    Kind::CrcMismatch
                        | Kind::InvalidBatch
                        | Kind::TruncatedBatch
                        | Kind::TrailingBytes
                        | Kind::PreallocatedTail
                )
        })
        .map(|f| (f.kind, f.offset, f.position))
        .collect()
}

#[test]
fn clean_remote_segments_are_not_corrupt() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let f = scan(&m);
    assert_eq!(damage(&f), vec![], "{f:#?}");
}

/// A bit flipped in the records of the second batch of remote segment [40,59]: its CRC
/// fails; size and offsets still agree with the metadata. One finding, on the remote copy.
#[test]
fn bit_flip_in_a_remote_batch_is_one_finding() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let log = remote_log(&m, 40);
    let second = first_batch_len(&log);
    let len = std::fs::metadata(&log).unwrap().len() as usize;
    flip(&log, len - 3);
    let f = scan(&m);
    assert_eq!(
        damage(&f),
        vec![(Kind::RemoteSegmentCorrupt, Some(50), Some(second as u64))],
        "{f:#?}"
    );
    let c = f
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentCorrupt)
        .unwrap();
    assert_eq!((c.topic.as_str(), c.partition), ("orders", 0));
    assert_eq!(
        c.segment.as_deref(),
        Some(log.display().to_string().as_str())
    );
    assert_eq!(c.evidence["damaged_count"], 1);
    assert_eq!(c.evidence["damaged"][0]["walk_kind"], "crc_mismatch");
    assert_eq!(c.evidence["metadata_differences"], serde_json::json!([]));
    assert_eq!(c.evidence["segment"]["start_offset"], 40);
    assert!(
        c.client_error
            .as_deref()
            .unwrap()
            .contains("maybeEnsureValid")
    );
    assert!(c.broker_behaviour.contains("RemoteLogManager.read"));
}

/// A bit flipped in the last batch's `lastOffsetDelta` (inside the CRC): the CRC fails and
/// the object's end offset is no longer the metadata's — one cause, still one finding, the
/// difference folded into it.
#[test]
fn damage_that_moves_an_offset_is_not_also_a_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let log = remote_log(&m, 60);
    let second = first_batch_len(&log);
    // lastOffsetDelta: bytes 23..27 of the batch header; its low byte.
    flip(&log, second + 26);
    let f = scan(&m);
    assert_eq!(
        damage(&f),
        vec![(Kind::RemoteSegmentCorrupt, Some(70), Some(second as u64))],
        "{f:#?}"
    );
    let c = f
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentCorrupt)
        .unwrap();
    assert_eq!(
        c.evidence["metadata_differences"],
        serde_json::json!(["end_offset"])
    );
}

/// An object cut inside its second batch is not the copied segment (its size differs):
/// one `remote_segment_mismatch`, the partial batch the walk found folded into it.
#[test]
fn object_cut_inside_a_batch_is_one_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let log = remote_log(&m, 60);
    let bytes = std::fs::read(&log).unwrap();
    let cut = first_batch_len(&log) + 30;
    std::fs::write(&log, &bytes[..cut]).unwrap();
    let f = scan(&m);
    assert_eq!(
        damage(&f),
        vec![(Kind::RemoteSegmentMismatch, Some(60), None)],
        "{f:#?}"
    );
    let x = f
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentMismatch)
        .unwrap();
    assert_eq!(
        x.evidence["differences"],
        serde_json::json!(["size", "end_offset", "invalid_bytes"])
    );
    assert_eq!(x.evidence["damaged"][0]["walk_kind"], "truncated_batch");
}

/// The same in the Aiven plugin's layout (plain chunks): the damage is in the object the
/// manifest rebuilds, named by the `.log` object.
#[test]
fn bit_flip_in_an_aiven_object_is_one_finding() {
    for damaged in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let mut m = healthy().write(d.path()).unwrap();
        let layout = AivenLayout {
            compression: false,
            ..AivenLayout::default()
        };
        let keys = to_aiven(&mut m, d.path(), &layout);
        let key = keys
            .iter()
            .find(|k| k.contains("/00000000000000000040-"))
            .unwrap();
        let log = m.remote_root.join(format!("{key}.log"));
        if damaged {
            let len = std::fs::metadata(&log).unwrap().len() as usize;
            flip(&log, len - 3);
        }
        let f = scan(&m);
        if !damaged {
            assert_eq!(damage(&f), vec![], "{f:#?}");
            continue;
        }
        let second = first_batch_len(&log) as u64;
        assert_eq!(
            damage(&f),
            vec![(Kind::RemoteSegmentCorrupt, Some(50), Some(second))],
            "{f:#?}"
        );
        let c = &f[0];
        assert_eq!(
            c.segment.as_deref(),
            Some(log.display().to_string().as_str())
        );
    }
}

/// `--max-bytes` below the `__remote_log_metadata` segment: the events read may lack later
/// ones (finishing copies, deleting segments), so no tiering finding is made of them —
/// before, the segments whose COPY_SEGMENT_FINISHED was past the cut made a false gap.
#[test]
fn metadata_read_in_part_makes_no_finding() {
    for aiven in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let mut m = healthy().write(d.path()).unwrap();
        let cut = first_batch_len(&remote_log(&m, 40)) as u64 + 10;
        if aiven {
            to_aiven(&mut m, d.path(), &AivenLayout::default());
        }
        let f = scan_with(&m, ScanOptions::default().with_max_bytes(Some(cut)));
        assert_eq!(damage(&f), vec![], "{aiven}: {f:#?}");
    }
}

/// An object read one byte past `--max-bytes` (what an Aiven rebuild stops at) is cut, not
/// damaged: its partial batch at the cut is no finding; read whole, it is.
#[test]
fn object_walk_cut_by_max_bytes_is_not_damage() {
    let d = tempfile::tempdir().unwrap();
    let m = healthy().write(d.path()).unwrap();
    let log = remote_log(&m, 40);
    let cut = first_batch_len(&log) + 40;
    let part = d.path().join("part.log");
    std::fs::write(&part, &std::fs::read(&log).unwrap()[..cut + 1]).unwrap();
    let walk = |max: Option<u64>| {
        let opts = ScanOptions::default().with_max_bytes(max);
        klogscan::partition::scan::walk_object("orders", 0, "part.log", 40, &part, &opts).unwrap()
    };
    let cut_walk = walk(Some(cut as u64));
    assert!(cut_walk.findings.is_empty(), "{:#?}", cut_walk.findings);
    assert_eq!(cut_walk.walked.invalid_bytes, 0);
    assert_eq!(cut_walk.walked.last_offset, Some(49));
    let whole = walk(None);
    let kinds: Vec<Kind> = whole.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![Kind::TruncatedBatch]);
    assert_eq!(whole.walked.invalid_bytes, 41);
}
