//! An uncompressed tar's segments, indexes and snapshots are read in place, at their offsets
//! inside the archive (mapped or read, whole or in pieces): the answer is the directory's,
//! byte for byte once the paths are written back, and nothing of them reaches the disk.
//! What a hostile tar does (a member past the end, a sparse member, a long name) stays a
//! named input error or warning.
#![cfg(feature = "testkit")]

use klogscan::testkit::{
    Batch, Codec, Damage, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A log dir with a mapped multi-piece segment (about 12 MiB: transactional and
/// compressed batches, indexes, snapshots, a `.txnindex`), a second small partition with a
/// damaged index, checkpoints and `meta.properties`.
fn log_dir(root: &Path) {
    let opts = PartitionFileOptions::default();
    let mut big = PartitionBuilder::new("orders", 0)
        .segment_bytes(12 << 20)
        .broker_files(opts.clone());
    let payload = vec![b'x'; 900];
    for i in 0..12_000 {
        let p = match i % 3 {
            0 => Producer::transactional(11, 0),
            1 => Producer::idempotent(12, 0),
            _ => Producer::PLAIN,
        };
        let codec = if i % 5 == 0 { Codec::Lz4 } else { Codec::None };
        big.append(Batch::new(p).values([payload.as_slice()]).codec(codec));
        if i % 3 == 0 && i % 6 == 0 {
            big.commit(Producer::transactional(11, 0), 0);
        } else if i % 3 == 0 {
            big.abort(Producer::transactional(11, 0), 0);
        }
    }
    let mut small = PartitionBuilder::new("payments", 3)
        .segment_bytes(4096)
        .broker_files(opts.damage(Damage::IndexPositionDelta {
            segment: 0,
            entry: 0,
            delta: 7,
        }));
    for _ in 0..200 {
        small.append(Batch::new(Producer::idempotent(5, 0)).values(["payment"]));
    }
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(big)
        .partition(small)
        .write(root)
        .unwrap();
}

/// The tar of `dir` (entries named `broker-1/...`), a small non-Kafka file first so the
/// members' data do not start on page boundaries.
fn tar_of(dir: &Path) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, "README", &b"abc"[..]).unwrap();
    b.append_dir_all("broker-1", dir).unwrap();
    b.into_inner().unwrap()
}

fn run(args: &[&str], input: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_klogscan"))
        .args(args)
        .arg(input)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_tar_read_in_place_answers_like_the_directory() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("broker-1");
    log_dir(&dir);
    let tar = t.path().join("b.tar");
    std::fs::write(&tar, tar_of(&dir)).unwrap();
    let shown = format!("{}!/broker-1", tar.display());
    let mut compared = 0;
    for cmd in ["scan", "verify"] {
        for extra in [
            &["--threads", "1"][..],
            &["--threads", "2"],
            &["--threads", "2", "--mmap", "never"],
        ] {
            let mut args = vec![cmd, "--format", "json"];
            args.extend(extra);
            let (dcode, d, derr) = run(&args, &dir);
            let (acode, a, aerr) = run(&args, &tar);
            assert_eq!(acode, dcode, "{args:?}: {aerr} / {derr}");
            // The archive's report with its paths written as the directory's.
            let a = a.replace(&shown, &dir.display().to_string());
            let mut a: Value = serde_json::from_str(&a).unwrap();
            let mut d: Value = serde_json::from_str(&d).unwrap();
            assert_eq!(a["inputs"][0], format!("{}!", tar.display()));
            for v in [&mut a, &mut d] {
                v["inputs"] = Value::Null;
                v["generated_at"] = Value::Null;
                v["elapsed_ms"] = Value::Null;
            }
            assert_eq!(a, d, "{args:?}");
            compared += 1;
        }
    }
    assert_eq!(compared, 6);
    // The data is what the directory's answer says it is: the damage found, the big
    // partition walked whole.
    let (_, v, _) = run(&["verify", "--format", "json"], &tar);
    assert!(v.contains("payments"), "{v}");
    let (_, s, _) = run(&["scan", "--format", "json"], &tar);
    let s: Value = serde_json::from_str(&s).unwrap();
    let orders = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "orders")
        .unwrap();
    assert!(orders["batches"].as_u64().unwrap() >= 12_000, "{orders}");
}

#[test]
fn a_member_past_the_end_of_a_tar_is_an_input_error_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("broker-1");
    log_dir(&dir);
    let whole = tar_of(&dir);
    // Cut in the middle of the archive: the member being read is named, the ones before
    // it are analysed.
    let tar = t.path().join("cut.tar");
    std::fs::write(&tar, &whole[..whole.len() / 2]).unwrap();
    let (code, out, err) = run(&["scan", "--format", "json"], &tar);
    assert_eq!(code, 2, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let text = v.to_string();
    assert!(text.contains("is cut short: the archive ends"), "{text}");
}
