//! `layout::discover` over the real broker data (read in place) and over tempdir trees
//! built for each naming rule.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use klogscan::discover::layout::{
    DirKind, FileKind, Inventory, LeftoverKind, PartitionDir, discover, is_internal_topic,
    is_kraft_metadata, parse_leftover_name, parse_partition_dir_name, parse_segment_file_name,
};

// ---------------------------------------------------------------------------------------
// helpers

/// Every path a partition dir lists, in any field.
fn listed(pd: &PartitionDir) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for s in &pd.segments {
        v.extend(
            [&s.log, &s.index, &s.timeindex, &s.txnindex]
                .into_iter()
                .flatten()
                .cloned(),
        );
    }
    v.extend(pd.snapshots.iter().map(|s| s.path.clone()));
    v.extend(pd.leader_epoch_checkpoint.iter().cloned());
    v.extend(pd.partition_metadata.iter().cloned());
    v.extend(pd.kraft_snapshots.iter().cloned());
    v.extend(pd.quorum_state.iter().cloned());
    v.extend(pd.leftovers.iter().map(|(_, p)| p.clone()));
    v.extend(pd.unknown.iter().cloned());
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Independent oracle: a directory directly holding a file whose name starts with a digit
/// run followed by `.` or `-`, or a known partition file, and no broker marker file.
fn oracle_partition_dirs(root: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut kafka = false;
        let mut marker = false;
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let n = name(&p);
            let digits = n.bytes().take_while(u8::is_ascii_digit).count();
            if (digits > 0 && matches!(n.as_bytes().get(digits), Some(b'.') | Some(b'-')))
                || [
                    "leader-epoch-checkpoint",
                    "partition.metadata",
                    "quorum-state",
                ]
                .contains(&n.as_str())
            {
                kafka = true;
            }
            if [
                "meta.properties",
                "recovery-point-offset-checkpoint",
                "bootstrap.checkpoint",
            ]
            .contains(&n.as_str())
            {
                marker = true;
            }
        }
        if kafka && !marker {
            out.insert(d);
        }
    }
    out
}

fn write(p: &Path, bytes: &[u8]) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

fn seg(n: i64, ext: &str) -> String {
    format!("{n:020}.{ext}")
}

fn find<'a>(inv: &'a Inventory, topic: &str, partition: i32) -> Vec<&'a PartitionDir> {
    inv.partitions
        .iter()
        .filter(|p| {
            p.tp.as_ref()
                .is_some_and(|tp| tp.topic == topic && tp.partition == partition)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// real data

#[test]
fn real_broker_repos_every_partition_found_and_every_file_accounted() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let broker = rd.join("broker");
    let mut repos: Vec<PathBuf> = fs::read_dir(&broker)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    assert!(repos.len() >= 19, "expected the 19+ repos of PROVENANCE.md");
    let mut total = 0;
    for repo in &repos {
        let inv = discover(std::slice::from_ref(repo));
        // A repo holding no Kafka data (segmentio's carved record sets) is an input error,
        // and only then.
        assert_eq!(
            inv.input_errors.is_empty(),
            !inv.partitions.is_empty() || !inv.log_dirs.is_empty(),
            "{}: {:?}",
            repo.display(),
            inv.input_errors
        );
        assert_eq!(
            inv.errors,
            inv.input_errors,
            "{}: {:?}",
            repo.display(),
            inv.errors
        );
        let found: BTreeSet<PathBuf> = inv.partitions.iter().map(|p| p.path.clone()).collect();
        assert_eq!(
            found.len(),
            inv.partitions.len(),
            "{}: duplicate partitions",
            repo.display()
        );
        let expected = oracle_partition_dirs(repo);
        assert_eq!(found, expected, "{}", repo.display());
        total += found.len();

        for pd in &inv.partitions {
            assert!(!pd.partial);
            // every file of the directory is listed exactly once
            let mut on_disk: Vec<PathBuf> = fs::read_dir(&pd.path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            on_disk.sort();
            let mut l = listed(pd);
            l.sort();
            assert_eq!(l, on_disk, "{}", pd.path.display());
            // segments sorted, base offsets equal the parsed file names
            assert!(
                pd.segments
                    .windows(2)
                    .all(|w| w[0].base_offset < w[1].base_offset)
            );
            for s in &pd.segments {
                for p in [&s.log, &s.index, &s.timeindex, &s.txnindex]
                    .into_iter()
                    .flatten()
                {
                    let n = name(p);
                    assert_eq!(n[..20].parse::<i64>().unwrap(), s.base_offset, "{n}");
                    assert!(p.is_file());
                }
            }
            assert!(pd.snapshots.windows(2).all(|w| w[0].offset < w[1].offset));
            if let Some(a) = pd.active_segment() {
                assert_eq!(
                    Some(a.base_offset),
                    pd.segments
                        .iter()
                        .filter(|s| s.log.is_some())
                        .map(|s| s.base_offset)
                        .max()
                );
            }
            // log dir: the parent when it holds meta.properties
            let parent = pd.path.parent().unwrap();
            if parent.join("meta.properties").is_file() {
                assert_eq!(pd.log_dir.as_deref(), Some(parent), "{}", pd.path.display());
                assert!(pd.tp.is_some());
            }
            if let Some(ld) = &pd.log_dir {
                assert!(inv.log_dirs.iter().any(|l| &l.path == ld));
            }
        }
        // every meta.properties dir is a recognised log dir, with its files
        for mp in crate::common::files_with_suffix(repo, "meta.properties") {
            let dir = mp.parent().unwrap();
            let ld = inv
                .log_dirs
                .iter()
                .find(|l| l.path == dir)
                .unwrap_or_else(|| panic!("{} not recognised as a log dir", dir.display()));
            assert!(ld.has_markers());
            assert_eq!(ld.meta_properties.as_deref(), Some(mp.as_path()));
            assert_eq!(
                ld.recovery_point_checkpoint.is_some(),
                dir.join("recovery-point-offset-checkpoint").is_file()
            );
            assert_eq!(
                ld.bootstrap_checkpoint.is_some(),
                dir.join("bootstrap.checkpoint").is_file()
            );
            assert_eq!(
                ld.clean_shutdown.is_some(),
                dir.join(".kafka_cleanshutdown").is_file()
            );
            assert!(ld.unknown.is_empty(), "{:?}", ld.unknown);
        }
        // KRaft repos: the metadata log is a partition dir
        for qs in crate::common::files_with_suffix(repo, "quorum-state") {
            let dir = qs.parent().unwrap();
            let pd = inv
                .partitions
                .iter()
                .find(|p| p.path == dir)
                .expect("metadata log found");
            assert!(pd.is_kraft_metadata());
            assert_eq!(pd.quorum_state.as_deref(), Some(qs.as_path()));
        }
    }
    assert!(total >= 60, "only {total} partitions in the real data");
}

#[test]
fn real_kraft_metadata_logs_and_snapshots() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let broker = rd.join("broker");
    let inv = discover(std::slice::from_ref(&broker));
    assert!(inv.errors.is_empty(), "{:?}", inv.errors);
    let meta: Vec<_> = find(&inv, "__cluster_metadata", 0);
    // every __cluster_metadata-0 directory on disk
    let on_disk = oracle_partition_dirs(&broker)
        .into_iter()
        .filter(|p| name(p) == "__cluster_metadata-0")
        .count();
    assert!(on_disk >= 7);
    assert_eq!(meta.len(), on_disk);
    let kraft_files = crate::common::files_with_suffix(&broker, ".checkpoint")
        .into_iter()
        .filter(|p| name(p) != "bootstrap.checkpoint")
        .count();
    assert_eq!(
        meta.iter().map(|p| p.kraft_snapshots.len()).sum::<usize>(),
        kraft_files
    );
    for pd in &meta {
        for s in &pd.kraft_snapshots {
            let (off, kind) = parse_segment_file_name(&name(s)).unwrap();
            assert!(matches!(kind, FileKind::KraftSnapshot { .. }));
            assert!(off > 0);
        }
        let offs: Vec<i64> = pd
            .kraft_snapshots
            .iter()
            .map(|s| parse_segment_file_name(&name(s)).unwrap().0)
            .collect();
        assert!(offs.windows(2).all(|w| w[0] <= w[1]));
    }
    // the two .checkpoint.deleted files of userchic are leftovers, not snapshots
    let deleted = crate::common::files_with_suffix(&broker, ".checkpoint.deleted");
    assert_eq!(deleted.len(), 2);
    for d in deleted {
        let pd = inv
            .partitions
            .iter()
            .find(|p| p.path == d.parent().unwrap())
            .unwrap();
        assert!(pd.leftovers.contains(&(LeftoverKind::Deleted, d.clone())));
    }
    // the clean-shutdown marker of ronem123's log dir
    let cs = crate::common::files_with_suffix(&broker, ".kafka_cleanshutdown");
    assert_eq!(cs.len(), 1);
    assert!(
        inv.log_dirs
            .iter()
            .any(|l| l.clean_shutdown.as_ref() == Some(&cs[0]))
    );
    // internal topics
    assert!(inv.partitions.iter().any(|p| p.is_internal()));
    // non-Kafka fixtures (segmentio .bin/.hex, tansu carved) are not partitions
    assert!(
        !inv.partitions
            .iter()
            .any(|p| p.path.starts_with(broker.join("segmentio__kafka-go")))
    );
    assert!(
        !inv.partitions
            .iter()
            .any(|p| p.path.starts_with(broker.join("tansu-io__tansu")))
    );
    // pinterest's `timeindex_test` holds segments but no partition name: tp None
    let unnamed: Vec<_> = inv.partitions.iter().filter(|p| p.tp.is_none()).collect();
    assert_eq!(unnamed.len(), 1);
    assert_eq!(name(&unnamed[0].path), "timeindex_test");
    assert_eq!(unnamed[0].segments.len(), 4);
    // sorted by (tp, path)
    assert!(
        inv.partitions
            .windows(2)
            .all(|w| (&w[0].tp, &w[0].path) <= (&w[1].tp, &w[1].path))
    );
}

#[test]
fn real_rebuilt_dirs_and_overlapping_inputs() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let rebuilt = rd.join("rebuilt");
    let inv = discover(std::slice::from_ref(&rebuilt));
    assert!(inv.errors.is_empty());
    let expected = oracle_partition_dirs(&rebuilt);
    assert_eq!(inv.partitions.len(), expected.len());
    assert_eq!(expected.len(), 10);
    for pd in &inv.partitions {
        assert_eq!(pd.segments.len(), 1);
        assert_eq!(pd.segments[0].base_offset, 0);
        assert!(pd.active_segment().is_some());
        // each parent holds several partition dirs: listed as (marker-less) log dirs
        let ld = pd.log_dir.as_ref().expect("parent holds other partitions");
        assert_eq!(ld, pd.path.parent().unwrap());
    }
    assert_eq!(inv.log_dirs.len(), 2);
    assert!(inv.log_dirs.iter().all(|l| !l.has_markers()));
    assert_eq!(find(&inv, "readme-block09___transaction_state", 0).len(), 1);

    // the same dirs reached twice (a parent, a child, a single file in it): no duplicates
    let foo = rebuilt.join("tombentley__klog/foo-0");
    let again = discover(&[
        foo.clone(),
        rebuilt.clone(),
        foo.join("00000000000000000000.log"),
        rebuilt.join("tombentley__klog"),
    ]);
    assert!(again.errors.is_empty());
    assert_eq!(again.partitions.len(), 10);
    let f = find(&again, "foo", 0);
    assert_eq!(f.len(), 1);
    assert!(!f[0].partial);
    assert_eq!(f[0].log_dir.as_deref(), foo.parent());
}

#[test]
fn real_single_partition_dir_given_directly_gets_its_log_dir() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let ld = rd.join("broker/Niloufar1171__LDI-POC");
    let inv = discover(&[ld.join("TestTopicPatient-0")]);
    assert!(inv.errors.is_empty());
    assert_eq!(inv.partitions.len(), 1);
    let pd = &inv.partitions[0];
    assert_eq!(pd.tp.as_ref().unwrap().to_string(), "TestTopicPatient-0");
    assert_eq!(pd.kind, Some(DirKind::Normal));
    assert_eq!(pd.log_dir.as_deref(), Some(ld.as_path()));
    assert_eq!(inv.log_dirs.len(), 1);
    assert_eq!(
        inv.log_dirs[0].meta_properties,
        Some(ld.join("meta.properties"))
    );

    // a single .log file: partial partition, tp from the parent's name
    let log = ld.join("__consumer_offsets-6/00000000000000000000.log");
    let inv = discover(std::slice::from_ref(&log));
    assert_eq!(inv.partitions.len(), 1);
    let pd = &inv.partitions[0];
    assert!(pd.partial);
    assert_eq!(pd.tp.as_ref().unwrap().topic, "__consumer_offsets");
    assert_eq!(pd.segments.len(), 1);
    assert_eq!(pd.segments[0].log.as_ref(), Some(&log));
    assert!(
        pd.segments[0].index.is_none(),
        "only the named file is listed"
    );
    assert!(pd.snapshots.is_empty());
    assert_eq!(pd.log_dir.as_deref(), Some(ld.as_path()));
}

/// The naming rules, over trees built for them.
mod names;
