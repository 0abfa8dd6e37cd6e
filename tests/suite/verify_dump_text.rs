//! `klogscan dump` of the broker's text files (offset checkpoints, leader-epoch checkpoint,
//! partition.metadata, meta.properties, .kafka_cleanshutdown): exact text on the committed
//! sample data, JSON Lines, and every real file of those kinds parsed without problems.

use klogscan::dump::{DumpFormat, DumpOptions, dump_paths};
use std::path::PathBuf;

fn dump(paths: &[PathBuf], format: DumpFormat) -> (String, String, klogscan::dump::DumpStatus) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let opts = DumpOptions {
        format,
        ..Default::default()
    };
    let s = dump_paths(paths, &opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        s,
    )
}

fn sample(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/broker-1")
        .join(p)
}

#[test]
fn text_files_of_the_sample_log_dir() {
    let files = [
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
        "meta.properties",
        ".kafka_cleanshutdown",
        "payments-3/leader-epoch-checkpoint",
        "payments-3/partition.metadata",
    ];
    let paths: Vec<PathBuf> = files.iter().map(|f| sample(f)).collect();
    let (out, err, s) = dump(&paths, DumpFormat::Text);
    assert_eq!(err, "");
    assert_eq!(s.files, 6);
    assert!(!s.has_problems());
    let d = |i: usize| format!("Dumping {}", paths[i].display());
    let expected = [
        d(0),
        "topic: codec-gzip partition: 0 offset: 10".into(),
        "topic: codec-lz4 partition: 0 offset: 10".into(),
        "topic: codec-none partition: 0 offset: 10".into(),
        "topic: codec-snappy partition: 0 offset: 10".into(),
        "topic: codec-zstd partition: 0 offset: 10".into(),
        "topic: legacy partition: 0 offset: 19".into(),
        "topic: payments partition: 3 offset: 32".into(),
        d(1),
        d(2),
        "version: 0 node.id: 1 cluster.id: nH0W_sH44h7I141bVad8PQ directory.id: -".into(),
        "version: 0".into(),
        "broker.id: 1".into(),
        "cluster.id: nH0W_sH44h7I141bVad8PQ".into(),
        d(3),
        "empty (clean shutdown marker of a broker before 3.7)".into(),
        d(4),
        "epoch: 5 startOffset: 0".into(),
        d(5),
        format!(
            "version: 0 topic_id: {}",
            std::fs::read_to_string(&paths[5])
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap()
        ),
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn json_lines_and_parse_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("recovery-point-offset-checkpoint");
    std::fs::write(&bad, "0\n2\nt 0 5\n").unwrap();
    let good = sample("payments-3/leader-epoch-checkpoint");
    let (out, _, s) = dump(&[good.clone(), bad.clone()], DumpFormat::Json);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["type"], "file");
    assert_eq!(lines[0]["kind"], "leader-epoch-checkpoint");
    assert_eq!(
        lines[1],
        serde_json::json!({"type": "entry", "epoch": 5, "startOffset": 0})
    );
    assert_eq!(lines[2]["kind"], "recovery-point-offset-checkpoint");
    assert_eq!(lines[3]["type"], "error");
    assert!(
        lines[3]["error"]
            .as_str()
            .unwrap()
            .contains("expected 2 entries but found 1")
    );
    assert_eq!(s.files_with_problems, 1);
    // text mode: the error goes to stderr
    let (_, err, _) = dump(&[bad], DumpFormat::Text);
    assert!(err.starts_with("Cannot parse "), "{err}");
}

#[test]
fn every_real_text_file_dumps_cleanly() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let mut paths = Vec::new();
    for name in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
        "leader-epoch-checkpoint",
        "partition.metadata",
        "meta.properties",
    ] {
        paths.extend(
            crate::common::files_with_suffix(&root.join("broker"), name)
                .into_iter()
                .filter(|p| p.file_name().unwrap() == name),
        );
    }
    assert!(paths.len() >= 60, "{}", paths.len());
    let (out, err, s) = dump(&paths, DumpFormat::Text);
    assert_eq!(err, "", "{err}");
    assert_eq!(s.files, paths.len());
    assert!(!s.has_problems());
    assert!(out.lines().filter(|l| l.starts_with("epoch: ")).count() >= 30);
}
