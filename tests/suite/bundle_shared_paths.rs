//! Brokers whose log dirs have one path (cp-ansible's `/var/lib/kafka/data` on every host):
//! their bundles merge, each directory named `node-<id>:<path>`, and the merged report is
//! the one-machine scan of the brokers' directories at distinct paths with each path read
//! as its broker's label. Bundles of one broker (or of no known broker) sharing a path stay
//! refused.

use crate::common::json;
use klogscan::bundle;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::brokers::{self, SCENARIOS};
use std::path::{Path, PathBuf};

/// The shared path of a broker's `j`-th log dir.
fn shared(root: &Path, j: usize) -> PathBuf {
    root.join(if j == 0 {
        "data".to_string()
    } else {
        format!("data-{}", j + 1)
    })
}

/// Collect each broker with its log dirs moved to the shared paths (and back).
fn collect_at_shared_paths(brokers: &[Vec<PathBuf>], root: &Path, out: &Path) -> Vec<PathBuf> {
    brokers
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let at: Vec<PathBuf> = (0..dirs.len()).map(|j| shared(root, j)).collect();
            for (d, s) in dirs.iter().zip(&at) {
                std::fs::rename(d, s).unwrap();
            }
            let f = out.join(format!("{i}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            bundle::collect(&at, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            for (d, s) in dirs.iter().zip(&at) {
                std::fs::rename(s, d).unwrap();
            }
            f
        })
        .collect()
}

/// The scan's JSON with each broker's log dir read as the merge names it (`names`: the
/// merged report's inputs, one per log dir in broker order), and the merged JSON.
fn scan_and_merge(
    write: fn(&Path) -> std::io::Result<Vec<Vec<PathBuf>>>,
) -> (String, String, Vec<String>) {
    let data = tempfile::tempdir().unwrap();
    let place = tempfile::tempdir().unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let brokers = write(data.path()).unwrap();
    let all: Vec<PathBuf> = brokers.iter().flatten().cloned().collect();
    let scanned = json(klogscan::pipeline::scan(&all, &ScanOptions::default()));
    let files = collect_at_shared_paths(&brokers, place.path(), bundles.path());
    let merged = bundle::merge(&files, &ScanOptions::default())
        .unwrap()
        .report;
    let names = merged.inputs.clone();
    assert_eq!(names.len(), all.len());
    let mut pairs: Vec<(String, String)> = all
        .iter()
        .map(|d| d.display().to_string())
        .zip(names.iter().cloned())
        .collect();
    // Longest first: `data-2` before `data`.
    pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
    let expected = pairs
        .iter()
        .fold(scanned, |s, (from, to)| s.replace(from.as_str(), to));
    // The commands run on a broker name its own path, without the merge's label.
    let on_broker = |l: &str| {
        l.contains("cp -a ") || l.contains("mv ") || l.contains("kafka-dump-log.sh --files ")
    };
    let expected: String = expected
        .split_inclusive('\n')
        .map(|l| match on_broker(l) {
            true => pairs.iter().fold(l.to_string(), |l, (_, to)| {
                let bare = to
                    .split_once(":/")
                    .map_or(to.clone(), |(_, rest)| format!("/{rest}"));
                l.replace(to.as_str(), &bare)
            }),
            false => l.to_string(),
        })
        .collect();
    (expected, json(merged), names)
}

#[test]
fn shared_paths_merge_as_the_scan_with_each_directory_named_by_its_broker() {
    for (name, write) in SCENARIOS {
        let (expected, merged, names) = scan_and_merge(*write);
        // One broker alone shares its paths with nobody: its names stay as recorded.
        let shared = names.len() > 1;
        assert!(
            names
                .iter()
                .all(|n| (n.contains("node-") && n.contains(':')) == shared),
            "{name}: {names:?}"
        );
        if expected != merged {
            let line = expected
                .lines()
                .zip(merged.lines())
                .position(|(x, y)| x != y);
            panic!(
                "{name}: merge differs at line {line:?}\nexpected:\n{expected}\nmerge:\n{merged}"
            );
        }
    }
}

#[test]
fn labels_are_node_ids_and_the_cluster_id_only_when_node_ids_repeat() {
    let (_, merged, names) = scan_and_merge(brokers::replica_divergence);
    let ends = |n: &str, tail: &str| n.ends_with(tail);
    assert!(
        names[0].starts_with("node-1:") && ends(&names[0], "/data"),
        "{names:?}"
    );
    assert!(names[2].starts_with("node-3:"), "{names:?}");
    // The divergent copy is named by its broker in the finding.
    assert!(merged.contains("node-3:"), "{merged}");
    let (_, _, names) = scan_and_merge(brokers::two_clusters);
    assert!(names[0].starts_with("clusterA/node-1:"), "{names:?}");
    assert!(names[3].starts_with("clusterB/node-2:"), "{names:?}");
}

#[test]
fn one_broker_collected_twice_at_one_path_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let place = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let brokers = brokers::replica_divergence(data.path()).unwrap();
    let twice = vec![brokers[0].clone(), brokers[0].clone()];
    let files = collect_at_shared_paths(&twice, place.path(), out.path());
    let e = bundle::merge(&files, &ScanOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("same broker"), "{msg}");
    assert_eq!(e.path(), files[1]);
    // Distinct paths of one broker stay mergeable as before (no renaming).
    let mut two = vec![];
    for (i, d) in [&brokers[0], &brokers[1]].iter().enumerate() {
        let f = out.path().join(format!("d{i}.klb"));
        let w = std::fs::File::create(&f).unwrap();
        bundle::collect(d, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
        two.push(f);
    }
    let r = bundle::merge(&two, &ScanOptions::default()).unwrap().report;
    assert!(
        r.inputs.iter().all(|i| !i.contains("node-")),
        "{:?}",
        r.inputs
    );
}
