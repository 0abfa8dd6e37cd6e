//! `layout::discover` over tempdir trees built for each naming rule: partition and
//! segment names, leftovers, renamed and name-alike directories, single files,
//! unreadable paths.

use super::*;

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
    // `Integer.parseInt` takes a leading `+`: "orders-+1" is partition 1 of "orders".
    let (tp, _) = parse_partition_dir_name("orders-+1").unwrap();
    assert_eq!((tp.topic.as_str(), tp.partition), ("orders", 1));
    let (tp, _) = parse_partition_dir_name("__cluster_metadata-0").unwrap();
    assert!(is_kraft_metadata(&tp.topic));
    for bad in [
        "orders",
        "-0",
        "orders-",
        "orders-x",
        "orders-1x",
        "orders- 1",
        "orders-+",
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
    // Offset 1 in another width than the broker's 20 digits: the broker never reads it
    // under that name (it opens 00000000000000000001.log), so it is no segment.
    write(&p.join("0001.log"), b"");
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
    assert_eq!(offs, vec![0, 100, 250]);
    let s250 = &t0.segments[2];
    assert!(s250.log.is_none() && s250.index.is_some() && s250.timeindex.is_some());
    assert_eq!(t0.orphan_indexes().count(), 1);
    assert_eq!(
        t0.active_segment().unwrap().base_offset,
        100,
        "the orphan index is not active"
    );
    assert!(t0.segments[1].txnindex.is_some());
    assert_eq!(
        t0.snapshots.iter().map(|s| s.offset).collect::<Vec<_>>(),
        vec![7, 100]
    );
    assert!(t0.leader_epoch_checkpoint.is_some() && t0.partition_metadata.is_some());
    for (f, k) in &leftovers {
        assert!(t0.leftovers.contains(&(*k, p.join(f))), "{f}");
    }
    assert_eq!(
        t0.unknown,
        vec![p.join("0001.log"), p.join("notes.txt"), p.join("sub")]
    );

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
/// in (unpadded names sort `10` before `9`), keeps a second name for the same file kind as
/// unknown, and stays fast on thousands of segments (it was a linear search per file:
/// quadratic in segments). In a directory walk only the broker's names are segments: an
/// unpadded `.log` is never read by the broker (`noncanonical_segment_name`), so it is
/// unknown there; named on the command line it is read as given, merged with the padded
/// names of its offset.
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
    fs::write(pd.join(seg(0, "log")), b"").unwrap(); // the broker's name of offset 0's log
    let inv = discover(std::slice::from_ref(&pd));
    let parts = find(&inv, "t", 0);
    assert_eq!(parts.len(), 1);
    let p = parts[0];
    assert_eq!(p.segments.len(), n as usize);
    assert_eq!(
        p.segments[0].log.as_deref(),
        Some(pd.join(seg(0, "log")).as_path())
    );
    assert!(p.segments[1..].iter().all(|s| s.log.is_none()));
    assert_eq!(p.unknown.len(), n as usize);
    assert!(p.unknown.contains(&pd.join("20993.log")));

    // The unpadded logs named one by one, out of order: read as given, each merged with
    // its offset's padded index (found by offset, not by a search), one given twice.
    let mut given: Vec<PathBuf> = (0..n)
        .rev()
        .map(|i| pd.join(format!("{}.log", i * 7)))
        .collect();
    given.extend((0..n).map(|i| pd.join(seg(i * 7, "index"))));
    given.push(pd.join("7.log"));
    let inv = discover(&given);
    let parts = find(&inv, "t", 0);
    assert_eq!(parts.len(), 1);
    for (i, s) in parts[0].segments.iter().enumerate() {
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
    assert!(parts[0].unknown.is_empty());

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
