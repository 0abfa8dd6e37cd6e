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

// ---------------------------------------------------------------------------------------
// name parsers

#[test]
fn partition_dir_names() {
    let (tp, k) = parse_partition_dir_name("orders-0").unwrap();
    assert_eq!(
        (tp.topic.as_str(), tp.partition, k),
        ("orders", 0, DirKind::Normal)
    );
    let (tp, _) = parse_partition_dir_name("a-b-c-12").unwrap();
    assert_eq!((tp.topic.as_str(), tp.partition), ("a-b-c", 12));
    let id = "0123456789abcdef0123456789abcdef";
    let (tp, k) = parse_partition_dir_name(&format!("my.top-ic-3.{id}-delete")).unwrap();
    assert_eq!((tp.topic.as_str(), tp.partition), ("my.top-ic", 3));
    assert_eq!(
        k,
        DirKind::Delete {
            unique_id: id.into()
        }
    );
    let (tp, k) = parse_partition_dir_name(&format!("x.y-7.{id}-future")).unwrap();
    assert_eq!((tp.topic.as_str(), tp.partition), ("x.y", 7));
    assert_eq!(
        k,
        DirKind::Future {
            unique_id: id.into()
        }
    );
    let (_, k) = parse_partition_dir_name(&format!("t-1.{id}-stray")).unwrap();
    assert_eq!(
        k,
        DirKind::Stray {
            unique_id: id.into()
        }
    );
    // a topic ending in "-delete" is a normal name
    let (tp, k) = parse_partition_dir_name("x-delete-2").unwrap();
    assert_eq!((tp.topic.as_str(), k), ("x-delete", DirKind::Normal));
    // the last `-` splits: "orders--1" is topic "orders-", partition 1 (as in Kafka)
    let (tp, _) = parse_partition_dir_name("orders--1").unwrap();
    assert_eq!((tp.topic.as_str(), tp.partition), ("orders-", 1));
    let (tp, _) = parse_partition_dir_name("__cluster_metadata-0").unwrap();
    assert!(is_kraft_metadata(&tp.topic));
    for bad in [
        "orders",
        "-0",
        "orders-",
        "orders-x",
        "orders-1x",
        "orders- 1",
        "orders-+1",
        "t-99999999999",
        "remote-log-index-cache",
        "t-0.-delete",
        "broker-1.5",
    ] {
        assert_eq!(parse_partition_dir_name(bad), None, "{bad}");
    }
    assert!(is_internal_topic("__consumer_offsets") && is_internal_topic("__transaction_state"));
    assert!(is_internal_topic("__share_group_state") && is_internal_topic("__remote_log_metadata"));
    assert!(!is_internal_topic("__cluster_metadata") && !is_internal_topic("orders"));
}

#[test]
fn segment_and_leftover_names() {
    assert_eq!(
        parse_segment_file_name("00000000000000001234.log"),
        Some((1234, FileKind::Log))
    );
    assert_eq!(
        parse_segment_file_name("00000000000000001234.index"),
        Some((1234, FileKind::Index))
    );
    assert_eq!(
        parse_segment_file_name(&seg(5, "timeindex")),
        Some((5, FileKind::TimeIndex))
    );
    assert_eq!(
        parse_segment_file_name(&seg(5, "txnindex")),
        Some((5, FileKind::TxnIndex))
    );
    assert_eq!(
        parse_segment_file_name(&seg(9, "snapshot")),
        Some((9, FileKind::ProducerSnapshot))
    );
    assert_eq!(
        parse_segment_file_name("00000000000000007364-0000000001.checkpoint"),
        Some((7364, FileKind::KraftSnapshot { epoch: 1 }))
    );
    assert_eq!(
        parse_segment_file_name("9223372036854775807.log"),
        Some((i64::MAX, FileKind::Log))
    );
    for bad in [
        "9223372036854775808.log",
        "x.log",
        ".log",
        "-1.log",
        "00.log.deleted",
        "bootstrap.checkpoint",
        "00000000000000000000.json",
        "leader-epoch-checkpoint",
    ] {
        assert_eq!(parse_segment_file_name(bad), None, "{bad}");
    }
    assert_eq!(
        parse_leftover_name("00.log.deleted"),
        Some((LeftoverKind::Deleted, "00.log"))
    );
    assert_eq!(
        parse_leftover_name("00.log.cleaned"),
        Some((LeftoverKind::Cleaned, "00.log"))
    );
    assert_eq!(
        parse_leftover_name("00.index.swap"),
        Some((LeftoverKind::Swap, "00.index"))
    );
    assert_eq!(
        parse_leftover_name("partition.metadata.tmp"),
        Some((LeftoverKind::Tmp, "partition.metadata"))
    );
    assert_eq!(
        parse_leftover_name("1-2.checkpoint.part"),
        Some((LeftoverKind::Tmp, "1-2.checkpoint"))
    );
    assert_eq!(parse_leftover_name("foo.part"), None);
    assert_eq!(parse_leftover_name("00.log"), None);
}

// ---------------------------------------------------------------------------------------
// tempdir trees

#[test]
fn renamed_dirs_leftovers_orphans_and_unknowns() {
    let t = tempfile::tempdir().unwrap();
    let ld = t.path().join("kafka-logs");
    write(&ld.join("meta.properties"), b"version=0\nbroker.id=1\n");
    write(&ld.join(".lock"), b"");
    write(&ld.join("recovery-point-offset-checkpoint.tmp"), b"0\n");
    write(&ld.join("stray-notes.txt"), b"x");
    let id = "0123456789abcdef0123456789abcdef";
    let del = ld.join(format!("my.top-ic-3.{id}-delete"));
    write(&del.join(seg(0, "log")), b"");
    let fut = ld.join(format!("my.top-ic-3.{id}-future"));
    write(&fut.join("leader-epoch-checkpoint"), b"0\n0\n");
    let stray = ld.join(format!("other-0.{id}-stray"));
    write(&stray.join(seg(0, "index")), b"");

    let p = ld.join("t-0");
    for f in [
        seg(0, "log"),
        seg(0, "index"),
        seg(0, "timeindex"),
        seg(100, "log"),
        seg(100, "txnindex"),
        seg(250, "index"),
        seg(250, "timeindex"),
        seg(100, "snapshot"),
        seg(7, "snapshot"),
        "leader-epoch-checkpoint".into(),
        "partition.metadata".into(),
    ] {
        write(&p.join(f), b"");
    }
    let leftovers = [
        (format!("{}.deleted", seg(0, "log")), LeftoverKind::Deleted),
        (format!("{}.swap", seg(100, "log")), LeftoverKind::Swap),
        (
            format!("{}.cleaned", seg(100, "index")),
            LeftoverKind::Cleaned,
        ),
        ("leader-epoch-checkpoint.tmp".to_string(), LeftoverKind::Tmp),
    ];
    for (f, _) in &leftovers {
        write(&p.join(f), b"");
    }
    write(&p.join("notes.txt"), b"");
    write(&p.join("0001.log"), b""); // same base offset as another .log? no: 1
    write(&p.join("sub/x"), b"");
    let m = ld.join("__cluster_metadata-0");
    for f in [
        seg(0, "log"),
        "quorum-state".into(),
        "00000000000000000200-0000000003.checkpoint".into(),
        "00000000000000000100-0000000002.checkpoint".into(),
        "00000000000000000300-0000000003.checkpoint.deleted".into(),
        "00000000000000000400-0000000004.checkpoint.part".into(),
    ] {
        write(&m.join(f), b"");
    }
    write(
        &ld.join("remote-log-index-cache").join(seg(0, "index")),
        b"",
    );

    let inv = discover(std::slice::from_ref(&ld));
    assert!(inv.errors.is_empty(), "{:?}", inv.errors);
    assert_eq!(inv.log_dirs.len(), 1);
    let l = &inv.log_dirs[0];
    assert!(l.has_markers());
    assert_eq!(l.lock.as_deref(), Some(ld.join(".lock").as_path()));
    assert_eq!(
        l.leftovers,
        vec![(
            LeftoverKind::Tmp,
            ld.join("recovery-point-offset-checkpoint.tmp")
        )]
    );
    assert_eq!(l.unknown, vec![ld.join("stray-notes.txt")]);
    assert_eq!(
        inv.partitions.len(),
        5,
        "{:?}",
        inv.partitions.iter().map(|p| &p.path).collect::<Vec<_>>()
    );
    assert!(
        inv.partitions
            .iter()
            .all(|p| p.log_dir.as_deref() == Some(ld.as_path()))
    );

    let mt = find(&inv, "my.top-ic", 3);
    assert_eq!(mt.len(), 2);
    let kinds: Vec<_> = mt.iter().map(|p| p.kind.clone().unwrap()).collect();
    assert!(kinds.contains(&DirKind::Delete {
        unique_id: id.into()
    }));
    assert!(kinds.contains(&DirKind::Future {
        unique_id: id.into()
    }));
    assert_eq!(
        find(&inv, "other", 0)[0].kind,
        Some(DirKind::Stray {
            unique_id: id.into()
        })
    );

    let t0 = find(&inv, "t", 0)[0];
    let offs: Vec<i64> = t0.segments.iter().map(|s| s.base_offset).collect();
    assert_eq!(offs, vec![0, 1, 100, 250]);
    let s250 = &t0.segments[3];
    assert!(s250.log.is_none() && s250.index.is_some() && s250.timeindex.is_some());
    assert_eq!(t0.orphan_indexes().count(), 1);
    assert_eq!(
        t0.active_segment().unwrap().base_offset,
        100,
        "the orphan index is not active"
    );
    assert!(t0.segments[2].txnindex.is_some());
    assert_eq!(
        t0.snapshots.iter().map(|s| s.offset).collect::<Vec<_>>(),
        vec![7, 100]
    );
    assert!(t0.leader_epoch_checkpoint.is_some() && t0.partition_metadata.is_some());
    for (f, k) in &leftovers {
        assert!(t0.leftovers.contains(&(*k, p.join(f))), "{f}");
    }
    assert_eq!(t0.unknown, vec![p.join("notes.txt"), p.join("sub")]);

    let md = find(&inv, "__cluster_metadata", 0)[0];
    assert!(md.is_kraft_metadata());
    assert!(md.quorum_state.is_some());
    assert_eq!(
        md.kraft_snapshots
            .iter()
            .map(|p| name(p))
            .collect::<Vec<_>>(),
        vec![
            "00000000000000000100-0000000002.checkpoint",
            "00000000000000000200-0000000003.checkpoint"
        ]
    );
    assert_eq!(
        md.leftovers.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![LeftoverKind::Deleted, LeftoverKind::Tmp]
    );
    // remote-log-index-cache is neither a partition nor searched
    assert!(
        !inv.partitions
            .iter()
            .any(|p| p.path.ends_with("remote-log-index-cache"))
    );
}

#[test]
fn parent_of_several_brokers_and_name_alike_dirs() {
    let t = tempfile::tempdir().unwrap();
    let copies = t.path().join("copies");
    for b in 1..=3 {
        let data = copies.join(format!("broker-{b}/data"));
        write(
            &data.join("meta.properties"),
            format!("version=0\nbroker.id={b}\n").as_bytes(),
        );
        write(&data.join(format!("orders-{b}")).join(seg(0, "log")), b"");
        write(&data.join("orders-0").join(seg(0, "log")), b"");
        // an empty partition dir inside a log dir is a partition (the broker loads it)
        fs::create_dir_all(data.join("empty-0")).unwrap();
    }
    // a name-alike with unrelated content, outside any log dir
    write(&copies.join("foo-1/readme.txt"), b"not kafka");
    // a name-alike holding a directory inside a log dir: searched, not taken
    write(
        &copies.join("broker-1/data/backup-2/nested/readme.txt"),
        b"x",
    );

    let inv = discover(&[t.path().to_path_buf()]);
    assert!(inv.errors.is_empty(), "{:?}", inv.errors);
    assert_eq!(inv.log_dirs.len(), 3);
    assert!(
        inv.log_dirs
            .iter()
            .all(|l| l.has_markers() && l.path.ends_with("data"))
    );
    assert_eq!(inv.partitions.len(), 9);
    assert!(
        find(&inv, "broker", 1).is_empty(),
        "broker-1 is a container, not a partition"
    );
    assert!(find(&inv, "foo", 1).is_empty());
    assert!(find(&inv, "backup", 2).is_empty());
    let o0 = find(&inv, "orders", 0);
    assert_eq!(o0.len(), 3, "one orders-0 per broker");
    for pd in &o0 {
        assert_eq!(pd.log_dir.as_deref(), pd.path.parent());
    }
    assert!(o0.windows(2).all(|w| w[0].path < w[1].path));
    let e = find(&inv, "empty", 0);
    assert_eq!(e.len(), 3);
    assert!(
        e.iter()
            .all(|p| p.segments.is_empty() && p.active_segment().is_none())
    );
}

#[test]
fn single_files_merge_and_yield_to_the_whole_dir() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("t-4");
    for f in [seg(0, "log"), seg(0, "index"), seg(50, "log")] {
        write(&p.join(f), b"");
    }
    write(&t.path().join("loose").join(seg(3, "log")), b"");
    write(&t.path().join("loose/blob.bin"), b"");
    let inv = discover(&[
        p.join(seg(0, "log")),
        p.join(seg(0, "index")),
        p.join(seg(0, "log")),
    ]);
    assert_eq!(inv.partitions.len(), 1);
    let pd = &inv.partitions[0];
    assert!(pd.partial);
    assert_eq!(pd.tp.as_ref().unwrap().to_string(), "t-4");
    assert_eq!(pd.segments.len(), 1);
    assert!(pd.segments[0].log.is_some() && pd.segments[0].index.is_some());
    assert!(pd.unknown.is_empty(), "a file given twice is listed once");

    // with the whole directory too, the partial entry disappears
    let inv = discover(&[p.join(seg(50, "log")), p.clone()]);
    assert_eq!(inv.partitions.len(), 1);
    assert!(!inv.partitions[0].partial);
    assert_eq!(inv.partitions[0].segments.len(), 2);

    // a file whose parent name does not parse: tp None; a file given by a name that is not
    // Kafka's is an input error, not part of the partition
    let inv = discover(&[
        t.path().join("loose").join(seg(3, "log")),
        t.path().join("loose/blob.bin"),
    ]);
    assert_eq!(inv.partitions.len(), 1);
    let pd = &inv.partitions[0];
    assert!(pd.partial && pd.tp.is_none());
    assert_eq!(pd.segments[0].base_offset, 3);
    assert!(pd.unknown.is_empty());
    assert_eq!(inv.input_errors.len(), 1);
    assert_eq!(inv.input_errors[0].0, t.path().join("loose/blob.bin"));
    assert!(inv.input_errors[0].1.starts_with("not Kafka data"));
}

#[cfg(unix)]
#[test]
fn unreadable_paths_and_symlink_loops() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let t = tempfile::tempdir().unwrap();
    let ld = t.path().join("logs");
    write(&ld.join("meta.properties"), b"version=0\n");
    write(&ld.join("good-0").join(seg(0, "log")), b"");
    // a loop back to the top and a dangling link named like a partition
    symlink(&ld, ld.join("loop")).unwrap();
    symlink(t.path().join("nowhere"), ld.join("gone-0")).unwrap();
    // a directory we may not read (root can read it anyway)
    let locked = ld.join("locked");
    write(&locked.join("x-0").join(seg(0, "log")), b"");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = fs::read_dir(&locked).is_ok();

    let missing = t.path().join("does-not-exist");
    let paths = [ld.clone(), missing.clone(), t.path().to_path_buf()];
    let inv = discover(&paths);
    // Followed (`--follow`): the dangling link is an error, the loop is walked once.
    let followed = klogscan::discover::layout::discover_with(
        &paths,
        klogscan::discover::layout::DiscoverOptions {
            follow_symlinks: true,
        },
    );
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();

    assert!(inv.errors.iter().any(|(p, _)| p == &missing));
    // Not followed by default: a directory symlink is skipped quietly.
    assert!(!inv.errors.iter().any(|(p, _)| p == &ld.join("gone-0")));
    assert!(followed.errors.iter().any(|(p, _)| p == &ld.join("gone-0")));
    assert_eq!(
        find(&followed, "good", 0).len(),
        1,
        "the loop does not duplicate partitions"
    );
    assert_eq!(
        find(&inv, "good", 0).len(),
        1,
        "the loop does not duplicate partitions"
    );
    assert!(find(&inv, "gone", 0).is_empty());
    if readable_anyway {
        assert_eq!(find(&inv, "x", 0).len(), 1);
    } else {
        assert!(inv.errors.iter().any(|(p, _)| p == &locked));
        assert!(find(&inv, "x", 0).is_empty());
    }
    assert_eq!(inv.log_dirs.len(), 1);
}

/// Discovery finds each file's segment by its base offset whatever order the names list
/// in (unpadded names sort `10` before `9`), merges padded and unpadded names of one
/// offset, keeps a second name for the same file kind as unknown, and stays fast on
/// thousands of segments (it was a linear search per file: quadratic in segments).
#[test]
fn many_segments_out_of_name_order_are_grouped_by_offset() {
    let dir = tempfile::tempdir().unwrap();
    let pd = dir.path().join("t-0");
    fs::create_dir(&pd).unwrap();
    let n = 3000i64;
    for i in 0..n {
        // Unpadded .log names, padded index names: both kinds of one segment meet.
        fs::write(pd.join(format!("{}.log", i * 7)), b"").unwrap();
        fs::write(pd.join(seg(i * 7, "index")), b"").unwrap();
    }
    fs::write(pd.join(seg(0, "log")), b"").unwrap(); // a second name for offset 0's log
    let inv = discover(std::slice::from_ref(&pd));
    let parts = find(&inv, "t", 0);
    assert_eq!(parts.len(), 1);
    let p = parts[0];
    assert_eq!(p.segments.len(), n as usize);
    for (i, s) in p.segments.iter().enumerate() {
        let off = i as i64 * 7;
        assert_eq!(s.base_offset, off);
        assert_eq!(
            s.log.as_deref(),
            Some(pd.join(format!("{off}.log")).as_path())
        );
        assert_eq!(
            s.index.as_deref(),
            Some(pd.join(seg(off, "index")).as_path())
        );
    }
    assert_eq!(p.unknown, vec![pd.join(seg(0, "log"))]);

    // The same files named one by one (a partial partition dir), one of them twice.
    let mut given: Vec<PathBuf> = (0..n).rev().map(|i| pd.join(seg(i * 7, "index"))).collect();
    given.push(pd.join(seg(7, "index")));
    let inv = discover(&given);
    let parts = find(&inv, "t", 0);
    assert_eq!(parts.len(), 1);
    assert!(parts[0].partial);
    let offs: Vec<i64> = parts[0].segments.iter().map(|s| s.base_offset).collect();
    assert_eq!(offs, (0..n).map(|i| i * 7).collect::<Vec<_>>());
    assert!(
        parts[0]
            .segments
            .iter()
            .all(|s| s.index.is_some() && s.log.is_none())
    );
    assert!(parts[0].unknown.is_empty());
}
