//! `klogscan::fuzzing::metadata` on stable: the KRaft metadata records of real brokers'
//! `__cluster_metadata` logs, and the tiered-storage records and files the testkit writes
//! (`__remote_log_metadata` values, a `remote_log_snapshot`, Aiven manifests and custom
//! metadata), mutated and cut, must never panic. Random bytes reach only the first checks;
//! mutations of well-formed values reach every field's decoder.

use crate::common::xorshift as rng;
use klogscan::fuzzing;
use klogscan::read::format::{Decompressor, Entries, batch_records};
use proptest::prelude::*;
use std::path::Path;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn metadata_random(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::metadata(&data);
    }
}

/// `seed` (selector byte first), then `rounds` mutations of it, each also cut short.
fn mutate(seed: &[u8], rounds: usize, next: &mut impl FnMut() -> u64) -> usize {
    fuzzing::metadata(seed);
    for _ in 0..rounds {
        let mut d = seed.to_vec();
        for _ in 0..(1 + next() % 4) {
            let i = 1 + (next() as usize) % (d.len() - 1).max(1);
            if i < d.len() {
                // Small and extreme values: lengths and counts at their edges.
                d[i] = match next() % 4 {
                    0 => 0,
                    1 => 0xff,
                    2 => 0x7f,
                    _ => next() as u8,
                };
            }
        }
        let cut = 1 + (next() as usize) % d.len();
        fuzzing::metadata(&d);
        fuzzing::metadata(&d[..cut]);
    }
    rounds
}

/// The record values of the v2 batches of the `.log` files under `dir`.
fn record_values(files: &[std::path::PathBuf], cap: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut dec = Decompressor::new(1 << 24);
    for f in files {
        let data = std::fs::read(f).unwrap();
        for e in Entries::new(&data, 0) {
            let Ok(b) = e.as_v2() else { continue };
            let Ok(records) = batch_records(&b, &mut dec) else {
                continue;
            };
            for r in records.flatten() {
                if let Some(v) = r.value {
                    out.push(v.to_vec());
                }
            }
            if out.len() >= cap {
                return out;
            }
        }
    }
    out
}

#[test]
fn mutated_real_metadata_records_never_panic() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let logs: Vec<_> = crate::common::files_with_suffix(&real.join("broker"), ".log")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("__cluster_metadata-"))
        .collect();
    let values = record_values(&logs, 3000);
    // Every record type a real controller wrote is a seed once (the first of each type),
    // mutated many times; the rest once each.
    let mut seen = std::collections::HashSet::new();
    let mut next = rng(0x51a7e0b5c0ffee01);
    let mut heavy = 0;
    for v in &values {
        let mut seed = vec![0u8];
        seed.extend_from_slice(v);
        let t = klogscan::read::format::metadata::decode_record(v)
            .map(|r| r.type_name())
            .unwrap_or("undecodable");
        let rounds = if seen.insert(t) { 256 } else { 2 };
        heavy += usize::from(rounds == 256);
        mutate(&seed, rounds, &mut next);
    }
    assert!(
        values.len() >= 100 && heavy >= 8,
        "expected real metadata records of several types: {} values, {heavy} types",
        values.len()
    );
}

#[test]
fn mutated_tiered_storage_records_and_files_never_panic() {
    use klogscan::testkit::aiven::{AivenLayout, encode_custom_metadata, write_aiven};
    let d = tempfile::tempdir().unwrap();
    let mut t = klogscan::testkit::remote_log::TieredLog::new(crate::tiered_history::history(true));
    t.copy(0);
    t.copy_started(1);
    t.copy(2);
    t.local_from(3);
    t.remote_log_snapshot(true);
    let m = t.write(d.path()).unwrap();
    let mut next = rng(0x7e1e_d5ee_d000_0002);
    // The `__remote_log_metadata` values, each selector 1.
    let logs = crate::common::files_with_suffix(&m.metadata_dir, ".log");
    let values = record_values(&logs, 1000);
    assert!(
        values.len() >= 4,
        "{} remote log metadata values",
        values.len()
    );
    for v in &values {
        let mut seed = vec![1u8];
        seed.extend_from_slice(v);
        mutate(&seed, 256, &mut next);
    }
    // The `remote_log_snapshot` file, selector 2.
    let snaps = files_named(&m.log_dir, "remote_log_snapshot");
    assert!(
        !snaps.is_empty(),
        "no remote_log_snapshot under {:?}",
        m.log_dir
    );
    for s in &snaps {
        let mut seed = vec![2u8];
        seed.extend(std::fs::read(s).unwrap());
        mutate(&seed, 512, &mut next);
    }
    // Aiven manifests (selector 3), compressed and plain, encrypted or not.
    let mut manifests = 0;
    for (compression, encryption) in [(true, false), (false, false), (false, true)] {
        let layout = AivenLayout {
            compression,
            encryption,
            ..AivenLayout::default()
        };
        let bucket = d.path().join(format!("bucket-{compression}-{encryption}"));
        write_aiven(&m, &bucket, &layout).unwrap();
        for f in crate::common::files_with_suffix(&bucket, ".rsm-manifest") {
            manifests += 1;
            let mut seed = vec![3u8];
            seed.extend(std::fs::read(&f).unwrap());
            mutate(&seed, 256, &mut next);
        }
    }
    assert!(manifests >= 3, "{manifests} manifests");
    // Custom metadata (selector 4).
    let mut seed = vec![4u8];
    seed.extend(encode_custom_metadata(
        Some(12_345),
        Some("prefix/"),
        Some("topic-id/0/00000000000000000000-segment"),
    ));
    mutate(&seed, 512, &mut next);
}

/// The files under `dir` named `name`.
fn files_named(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    crate::common::files_with_suffix(dir, name)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == name))
        .collect()
}
