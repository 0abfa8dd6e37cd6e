//! `klogscan dump` on the committed sample segments (`testdata/broker-1`):
//! * golden snapshots (insta) of the text output of every sample partition's segments at
//!   batch level, with `--deep-iteration` and with `--print-data-log`, plus one JSON Lines
//!   snapshot; paths are made relative to the crate root before snapshotting, so the
//!   snapshots do not depend on the checkout location;
//! * every batch line has exactly kafka-dump-log's field sequence, with values equal to
//!   the manifest the testkit returns when it regenerates the samples (legacy entry lines
//!   likewise with kafka-dump-log's legacy field sequence).
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpFormat, DumpOptions, dump_paths};
use klogscan::testkit::{BatchInfo, Codec, samples};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn broker_1() -> PathBuf {
    root().join("testdata/broker-1")
}

/// The `.log` files of one sample partition, in order.
fn segments(partition: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(broker_1().join(partition))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

const PARTITIONS: &[&str] = &[
    "payments-3",
    "codec-none-0",
    "codec-gzip-0",
    "codec-snappy-0",
    "codec-lz4-0",
    "codec-zstd-0",
    "legacy-0",
];

/// Dump `paths`; stdout and stderr with the crate root replaced by `<crate>`.
fn dump(paths: &[PathBuf], opts: &DumpOptions) -> (String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = dump_paths(paths, opts, &mut out, &mut err).unwrap();
    assert!(!status.has_problems(), "{status:?}");
    assert_eq!(status.files, paths.len());
    let rel = |b: Vec<u8>| {
        String::from_utf8(b)
            .unwrap()
            .replace(&root().display().to_string(), "<crate>")
    };
    (rel(out), rel(err))
}

fn snapshot_all(mode: &str, opts: &DumpOptions) {
    for p in PARTITIONS {
        let (out, err) = dump(&segments(p), opts);
        assert!(!out.contains(env!("CARGO_MANIFEST_DIR")));
        let text = if err.is_empty() {
            out
        } else {
            format!("{out}--- stderr ---\n{err}")
        };
        insta::assert_snapshot!(format!("{mode}__{p}"), text);
    }
}

#[test]
fn golden_batch_level() {
    snapshot_all("batches", &DumpOptions::default());
}

#[test]
fn golden_deep_iteration() {
    snapshot_all(
        "deep",
        &DumpOptions {
            deep_iteration: true,
            ..Default::default()
        },
    );
}

#[test]
fn golden_print_data_log() {
    snapshot_all(
        "data",
        &DumpOptions {
            deep_iteration: true,
            print_data_log: true,
            ..Default::default()
        },
    );
}

#[test]
fn golden_json_lines() {
    let (out, err) = dump(
        &segments("payments-3"),
        &DumpOptions {
            deep_iteration: true,
            print_data_log: true,
            format: DumpFormat::Json,
            ..Default::default()
        },
    );
    assert!(err.is_empty(), "{err}");
    // every line is one JSON object
    for l in out.lines() {
        serde_json::from_str::<serde_json::Value>(l).unwrap();
    }
    insta::assert_snapshot!("json__payments-3", out);
}

// ----- field sequence and values against the manifest -------------------------------------

/// The sample manifests (regenerated), keyed by the committed segment path.
fn manifest_batches() -> Vec<BatchInfo> {
    let tmp = tempfile::tempdir().unwrap();
    let written = samples::write_all(tmp.path()).unwrap();
    let troot = tmp.path().join("broker-1");
    written[0]
        .partitions
        .iter()
        .flat_map(|m| m.batches.clone())
        .map(|mut b| {
            b.file = broker_1().join(b.file.strip_prefix(&troot).unwrap());
            b
        })
        .collect()
}

/// `key: value` pairs of a dump line (no value in these lines contains a space).
fn fields(line: &str) -> Vec<(String, String)> {
    let toks: Vec<&str> = line.split(' ').collect();
    assert_eq!(toks.len() % 2, 0, "{line}");
    toks.chunks(2)
        .map(|c| {
            let k = c[0].strip_suffix(':').unwrap_or_else(|| panic!("{line}"));
            (k.to_string(), c[1].to_string())
        })
        .collect()
}

const V2_FIELDS: &[&str] = &[
    "baseOffset",
    "lastOffset",
    "count",
    "baseSequence",
    "lastSequence",
    "producerId",
    "producerEpoch",
    "partitionLeaderEpoch",
    "isTransactional",
    "isControl",
    "deleteHorizonMs",
    "position",
    "CreateTime",
    "size",
    "magic",
    "compresscodec",
    "crc",
    "isvalid",
];

const LEGACY_FIELDS: &[&str] = &[
    "offset",
    "position",
    "TIMESTAMP",
    "size",
    "magic",
    "compresscodec",
    "crc",
    "isvalid",
];

fn codec_name(c: Codec) -> &'static str {
    match c {
        Codec::None => "none",
        Codec::Gzip => "gzip",
        Codec::SnappyXerial | Codec::SnappyRaw => "snappy",
        Codec::Lz4 | Codec::Lz4BrokenHc => "lz4",
        Codec::Zstd => "zstd",
    }
}

fn expected_v2(b: &BatchInfo, bytes: &[u8]) -> Vec<(String, String)> {
    let last_seq = if b.base_sequence < 0 {
        -1
    } else {
        b.base_sequence + b.record_count - 1
    };
    let crc = crc32c::crc32c(&bytes[21..]);
    let vals: Vec<String> = vec![
        b.base_offset.to_string(),
        b.last_offset.to_string(),
        b.record_count.to_string(),
        b.base_sequence.to_string(),
        last_seq.to_string(),
        b.producer_id.to_string(),
        b.producer_epoch.to_string(),
        b.partition_leader_epoch.to_string(),
        b.transactional.to_string(),
        b.control.is_some().to_string(),
        "OptionalLong.empty".into(),
        b.position.to_string(),
        b.max_timestamp.to_string(),
        b.size.to_string(),
        "2".into(),
        codec_name(b.codec).into(),
        crc.to_string(),
        "true".into(),
    ];
    V2_FIELDS.iter().map(|k| k.to_string()).zip(vals).collect()
}

fn expected_legacy(b: &BatchInfo, bytes: &[u8]) -> Vec<(String, String)> {
    let ts_key = if b.magic == 0 {
        "NoTimestampType"
    } else {
        "CreateTime"
    };
    let vals: Vec<String> = vec![
        b.last_offset.to_string(),
        b.position.to_string(),
        b.first_timestamp.to_string(),
        b.size.to_string(),
        b.magic.to_string(),
        codec_name(b.codec).into(),
        crc32fast::hash(&bytes[16..]).to_string(),
        "true".into(),
    ];
    LEGACY_FIELDS
        .iter()
        .map(|k| if *k == "TIMESTAMP" { ts_key } else { k }.to_string())
        .zip(vals)
        .collect()
}

#[test]
fn every_batch_line_has_kafka_dump_logs_fields_with_the_manifests_values() {
    let batches = manifest_batches();
    let mut checked = 0;
    for p in PARTITIONS {
        for seg in segments(p) {
            let data = std::fs::read(&seg).unwrap();
            let (out, _) = dump(std::slice::from_ref(&seg), &DumpOptions::default());
            let mut lines = out.lines();
            assert_eq!(
                lines.next(),
                Some(format!("Dumping {}", rel(&seg)).as_str())
            );
            let base: i64 = seg.file_stem().unwrap().to_str().unwrap().parse().unwrap();
            assert_eq!(
                lines.next(),
                Some(format!("Log starting offset: {base}").as_str())
            );
            let infos: Vec<&BatchInfo> = batches.iter().filter(|b| b.file == seg).collect();
            let body: Vec<&str> = lines.collect();
            assert_eq!(body.len(), infos.len(), "{}", seg.display());
            for (line, info) in body.iter().zip(&infos) {
                let bytes = &data[info.position as usize..(info.position + info.size) as usize];
                let got = fields(line);
                let want = if info.magic == 2 {
                    expected_v2(info, bytes)
                } else {
                    expected_legacy(info, bytes)
                };
                assert_eq!(got, want, "{}: {line}", seg.display());
                checked += 1;
            }
        }
    }
    // 16 + 5 × 4 + 10 entries
    assert_eq!(checked, 46);
}

fn rel(p: &Path) -> String {
    p.display()
        .to_string()
        .replace(&root().display().to_string(), "<crate>")
}
