//! The committed sample data in `testdata/` is exactly what `testkit::samples::write_all`
//! generates. Regenerate with
//! `KLOGSCAN_BLESS=1 cargo test --features testkit --test sample_data`.
#![cfg(feature = "testkit")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use klogscan::read::format::{Entries, LegacyMessage};
use klogscan::testkit::samples;

fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

#[test]
fn committed_samples_match_the_generator() {
    let committed = testdata().join("broker-1");
    if std::env::var_os("KLOGSCAN_BLESS").is_some() {
        if committed.exists() {
            std::fs::remove_dir_all(&committed).unwrap();
        }
        samples::write_all(&testdata()).unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    samples::write_all(tmp.path()).unwrap();
    let fresh = tree(&tmp.path().join("broker-1"));
    let old = tree(&committed);
    let fresh_names: Vec<_> = fresh.keys().collect();
    let old_names: Vec<_> = old.keys().collect();
    assert_eq!(
        old_names, fresh_names,
        "testdata/broker-1 file list differs from the generator (bless with KLOGSCAN_BLESS=1)"
    );
    for (name, bytes) in &fresh {
        let o = &old[name];
        if o != bytes {
            let at = o
                .iter()
                .zip(bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(o.len().min(bytes.len()));
            panic!(
                "testdata/broker-1/{} differs from the generator at byte {at} (committed {} bytes, \
                 generated {}); bless with KLOGSCAN_BLESS=1",
                name.display(),
                o.len(),
                bytes.len()
            );
        }
    }
}

#[test]
fn payments_3_is_the_documented_kafka_9144_case() {
    let tmp = tempfile::tempdir().unwrap();
    let m = samples::payments_3().write(tmp.path()).unwrap();
    let zombie: Vec<_> = m
        .batches
        .iter()
        .filter(|b| b.producer_id == samples::ZOMBIE_PID)
        .map(|b| {
            (
                b.base_offset,
                b.last_offset,
                b.producer_epoch,
                b.base_sequence,
                b.control,
            )
        })
        .collect();
    use klogscan::testkit::ControlKind::{Abort, Commit};
    assert_eq!(
        zombie,
        vec![
            (0, 4, 17, 0, None),
            (5, 5, 17, -1, Some(Commit)),
            (16, 16, 19, -1, Some(Abort)),
            (samples::ZOMBIE_OFFSET, 23, 18, 0, None),
        ]
    );
    let z = m
        .batches
        .iter()
        .find(|b| b.base_offset == samples::ZOMBIE_OFFSET)
        .unwrap();
    assert!(z.transactional);
    assert_eq!(z.codec.name(), "lz4");
    assert_eq!(z.record_count, 3);
    let after: Vec<_> = m
        .batches
        .iter()
        .filter(|b| b.base_offset > z.last_offset)
        .collect();
    assert!(after.iter().all(|b| b.producer_id != samples::ZOMBIE_PID));
    assert!(after.last().unwrap().max_timestamp - z.max_timestamp > 15 * 60_000);
    // every coordinator epoch is 7, one leader epoch everywhere
    assert!(
        m.batches
            .iter()
            .filter_map(|b| b.coordinator_epoch)
            .all(|c| c == 7)
    );
    assert!(
        m.batches
            .iter()
            .all(|b| b.partition_leader_epoch == samples::LEADER_EPOCH)
    );
    assert_eq!(m.segments.len(), 2);
    assert_eq!(m.log_end_offset, 32);
    // the final snapshot holds 4001 with its open transaction at the zombie's offset
    let p = samples::payments_3();
    let st = p.producer_state();
    let e = st
        .iter()
        .find(|e| e.producer_id == samples::ZOMBIE_PID)
        .unwrap();
    assert_eq!(e.current_txn_first_offset, samples::ZOMBIE_OFFSET);
    assert_eq!(e.epoch, 18);
    assert_eq!(e.coordinator_epoch, 7);
    assert!(
        p.aborted_txns().is_empty(),
        "the epoch-19 abort closed nothing"
    );
}

#[test]
fn legacy_sample_has_both_magics_and_all_wrappers() {
    let tmp = tempfile::tempdir().unwrap();
    let d = samples::legacy_0().write(tmp.path()).unwrap().dir;
    let mut seen = Vec::new();
    for f in ["00000000000000000000.log", "00000000000000000010.log"] {
        let data = std::fs::read(d.join(f)).unwrap();
        for e in Entries::new(&data, 0) {
            let m = LegacyMessage::new(e).unwrap();
            assert!(m.is_valid());
            seen.push((m.magic(), m.compression().name(), m.offset()));
        }
    }
    assert_eq!(
        seen,
        vec![
            (0, "none", 0),
            (0, "none", 1),
            (0, "gzip", 4),
            (0, "snappy", 6),
            (0, "lz4", 9),
            (1, "none", 10),
            (1, "none", 11),
            (1, "gzip", 13),
            (1, "snappy", 16),
            (1, "lz4", 18),
        ]
    );
}
