//! The text checkpoint/metadata parsers over every such file of the real broker data,
//! cross-checked against the directories on disk, plus the error cases.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use klogscan::discover::layout::parse_partition_dir_name;
use klogscan::read::format::checkpoint::{
    CheckpointError, TextFileKind, decode_uuid, encode_uuid, parse_clean_shutdown,
    parse_leader_epoch_checkpoint, parse_meta_properties, parse_offset_checkpoint,
    parse_partition_metadata,
};

const OFFSET_CHECKPOINTS: [&str; 4] = [
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
];

/// Partition dirs (`topic-partition`) directly under `dir`.
fn partition_dirs(dir: &Path) -> BTreeSet<(String, i32)> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .filter_map(|p| parse_partition_dir_name(&p.file_name().unwrap().to_string_lossy()))
        .map(|(tp, _)| (tp.topic, tp.partition))
        .collect()
}

/// The count line of a checkpoint file, read independently of the parser.
fn count_line(bytes: &[u8]) -> usize {
    String::from_utf8_lossy(bytes)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn real_offset_checkpoints() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let broker = rd.join("broker");
    let mut files = 0;
    for kind in OFFSET_CHECKPOINTS {
        for f in crate::common::files_with_suffix(&broker, kind) {
            let bytes = fs::read(&f).unwrap();
            let k = TextFileKind::from_file_name(kind).unwrap();
            assert!(k.is_offset_checkpoint());
            let entries = parse_offset_checkpoint(&bytes, k)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            files += 1;
            assert_eq!(entries.len(), count_line(&bytes), "{}", f.display());
            let dir = f.parent().unwrap();
            let parts = partition_dirs(dir);
            let keys: BTreeSet<(String, i32)> = entries
                .iter()
                .map(|e| (e.topic.clone(), e.partition))
                .collect();
            assert_eq!(
                keys.len(),
                entries.len(),
                "no duplicate partitions in {}",
                f.display()
            );
            for e in &entries {
                assert!(e.partition >= 0 && e.offset >= 0, "{e:?}");
                // the metadata log is the Raft layer's: never in the LogManager's checkpoints
                assert_ne!(e.topic, "__cluster_metadata");
            }
            // recovery points and high watermarks cover every (non-metadata) partition dir
            if kind == "recovery-point-offset-checkpoint" || kind == "replication-offset-checkpoint"
            {
                for p in parts.iter().filter(|p| p.0 != "__cluster_metadata") {
                    assert!(keys.contains(p), "{p:?} missing from {}", f.display());
                }
            }
            // the log-start and cleaner checkpoints only name partitions the others name
            if kind == "log-start-offset-checkpoint" || kind == "cleaner-offset-checkpoint" {
                let rp = dir.join("recovery-point-offset-checkpoint");
                if rp.is_file() {
                    let rp = parse_offset_checkpoint(
                        &fs::read(&rp).unwrap(),
                        TextFileKind::RecoveryPointOffsetCheckpoint,
                    )
                    .unwrap();
                    for e in &entries {
                        assert!(
                            rp.iter()
                                .any(|r| r.topic == e.topic && r.partition == e.partition),
                            "{e:?}"
                        );
                    }
                }
            }
        }
    }
    assert!(files >= 40, "{files}");
}

#[test]
fn real_leader_epoch_checkpoints() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let files = crate::common::files_with_suffix(&rd.join("broker"), "leader-epoch-checkpoint");
    assert!(files.len() >= 50);
    let mut non_empty = 0;
    for f in &files {
        let bytes = fs::read(f).unwrap();
        let entries = parse_leader_epoch_checkpoint(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(entries.len(), count_line(&bytes));
        // §1.6.3: ascending in both epoch and start offset
        for w in entries.windows(2) {
            assert!(
                w[0].epoch < w[1].epoch && w[0].start_offset <= w[1].start_offset,
                "{}",
                f.display()
            );
        }
        assert!(entries.iter().all(|e| e.epoch >= 0 && e.start_offset >= 0));
        non_empty += usize::from(!entries.is_empty());
    }
    assert!(non_empty >= 40);
}

#[test]
fn real_partition_metadata() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let files = crate::common::files_with_suffix(&rd.join("broker"), "partition.metadata");
    assert!(files.len() >= 30);
    let mut ids = std::collections::HashMap::new();
    for f in &files {
        let bytes = fs::read(f).unwrap();
        let pm =
            parse_partition_metadata(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(pm.version, 0);
        // the id text round-trips to what the file holds
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.ends_with(&pm.topic_id_string()), "{text:?}");
        let dir = f
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // pinterest's `timeindex_test` fixture dir has no partition name
        let Some((tp, _)) = parse_partition_dir_name(&dir) else {
            assert_eq!(dir, "timeindex_test");
            continue;
        };
        assert_eq!(
            pm.is_metadata_topic(),
            tp.topic == "__cluster_metadata",
            "{}",
            f.display()
        );
        // one topic has one id within one log dir
        let key = (
            f.parent().unwrap().parent().unwrap().to_path_buf(),
            tp.topic,
        );
        let prev = ids.insert(key, pm.topic_id);
        assert!(prev.is_none() || prev == Some(pm.topic_id));
    }
}

#[test]
fn real_meta_properties_and_clean_shutdown() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let broker = rd.join("broker");
    let files = crate::common::files_with_suffix(&broker, "meta.properties");
    assert_eq!(files.len(), 18);
    let mut kraft = 0;
    for f in &files {
        let bytes = fs::read(f).unwrap();
        let mp = parse_meta_properties(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let text = String::from_utf8(bytes).unwrap();
        let dir = f.parent().unwrap();
        // a KRaft (v1) dir of a broker holding the metadata log; the raw pairs match the text
        if mp.version == 1 {
            kraft += 1;
            assert!(mp.node_id.is_some() && mp.cluster_id.is_some());
            assert!(text.contains(&format!("node.id={}", mp.node_id.unwrap())));
        } else if let Some(id) = mp.node_id {
            assert!(text.contains(&format!("broker.id={id}")));
        }
        // cluster ids are normally base64 UUIDs, but not validated (one real broker uses
        // "universe-labs-cluster"); the UUID-shaped ones decode, leniently like Java
        // (Confluent's `MkU3OEVBNTcwNTJENDM2Qk` has non-zero trailing bits)
        if let Some(c) = mp.cluster_id.as_ref().filter(|c| c.len() == 22) {
            let id = decode_uuid(c).unwrap();
            assert_eq!(decode_uuid(&encode_uuid(&id)), Ok(id));
            assert_eq!(encode_uuid(&id)[..21], c[..21]);
        }
        if let Some(d) = mp.directory_id_string() {
            assert!(text.contains(&format!("directory.id={d}")));
        }
        assert!(mp.raw.iter().all(|(k, _)| !k.starts_with('#')));
        if dir.join("__cluster_metadata-0").is_dir() {
            assert_eq!(mp.version, 1, "{}", f.display());
        }
    }
    assert!(kraft >= 7);

    let cs = crate::common::files_with_suffix(&broker, ".kafka_cleanshutdown");
    assert_eq!(cs.len(), 1);
    let c = parse_clean_shutdown(&fs::read(&cs[0]).unwrap()).unwrap();
    assert_eq!((c.version, c.broker_epoch), (Some(0), Some(11)));
}

// ---------------------------------------------------------------------------------------
// synthetic cases

fn err(r: Result<impl std::fmt::Debug, CheckpointError>) -> CheckpointError {
    r.expect_err("expected an error")
}

#[test]
fn generic_checkpoint_rules() {
    let k = TextFileKind::RecoveryPointOffsetCheckpoint;
    assert!(parse_offset_checkpoint(b"", k).unwrap().is_empty());
    assert!(parse_offset_checkpoint(b"0\n", k).unwrap().is_empty());
    assert!(parse_offset_checkpoint(b"0\n0\n", k).unwrap().is_empty());
    let e = parse_offset_checkpoint(b"0\r\n2\r\nfoo  1\t42\r\nbar.baz-x 0 7 \r\n", k).unwrap();
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0].topic.as_str(), e[0].partition, e[0].offset),
        ("foo", 1, 42)
    );
    assert_eq!(
        (e[1].topic.as_str(), e[1].partition, e[1].offset),
        ("bar.baz-x", 0, 7)
    );

    let e = err(parse_offset_checkpoint(b"1\n0\n", k));
    assert_eq!((e.file, e.line), (k, 1));
    assert!(e.problem.contains("version"), "{e}");
    assert!(
        e.to_string()
            .starts_with("recovery-point-offset-checkpoint: line 1:"),
        "{e}"
    );
    let e = err(parse_offset_checkpoint(b"x\n", k));
    assert_eq!(e.line, 1);
    let e = err(parse_offset_checkpoint(b"0\n2\nfoo 0 1\n", k));
    assert!(e.problem.contains("expected 2 entries but found 1"), "{e}");
    let e = err(parse_offset_checkpoint(b"0\n1\nfoo 0 1\nbar 0 2\n", k));
    assert!(e.problem.contains("expected 1 entries but found 2"), "{e}");
    let e = err(parse_offset_checkpoint(b"0\n1\nfoo 0\n", k));
    assert_eq!(e.line, 3);
    assert!(e.problem.contains("malformed"), "{e}");
    let e = err(parse_offset_checkpoint(b"0\n1\nfoo x 1\n", k));
    assert_eq!(e.line, 3);
    let e = err(parse_offset_checkpoint(b"0\n1\n foo 0 1\n", k));
    assert_eq!(
        e.line, 3,
        "leading whitespace makes an empty first field, as in Java"
    );
    let e = err(parse_offset_checkpoint(b"0\n2\nfoo 0 1\n\n", k));
    assert_eq!(e.line, 4, "a blank entry line is malformed");
    let e = err(parse_offset_checkpoint(b"0\n-1\n", k));
    assert_eq!(e.line, 2);
    let e = err(parse_offset_checkpoint(b"0\n1\nfo\xffo 0 1\n", k));
    assert_eq!(e.line, 3);
    assert!(e.problem.contains("UTF-8"));

    let le = parse_leader_epoch_checkpoint(b"0\n2\n0 0\n5 100\n").unwrap();
    assert_eq!((le[1].epoch, le[1].start_offset), (5, 100));
    let e = err(parse_leader_epoch_checkpoint(b"0\n1\n0 0 0\n"));
    assert_eq!((e.file, e.line), (TextFileKind::LeaderEpochCheckpoint, 3));
    let e = err(parse_leader_epoch_checkpoint(b"0\n1\n99999999999 0\n"));
    assert!(e.problem.contains("int32"), "{e}");
}

#[test]
fn partition_metadata_rules() {
    let pm = parse_partition_metadata(b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A").unwrap();
    assert_eq!(pm.topic_id_string(), "B3_HiNPgSQ6oxG9ZZ6ED5A");
    assert!(!pm.is_metadata_topic());
    let pm =
        parse_partition_metadata(b"version: 0\r\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\r\n").unwrap();
    assert!(pm.is_metadata_topic());
    assert_eq!(pm.topic_id[15], 1);

    let e = err(parse_partition_metadata(
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
    ));
    assert_eq!((e.file, e.line), (TextFileKind::PartitionMetadata, 2));
    assert!(e.problem.contains("zero"), "{e}");
    assert_eq!(
        err(parse_partition_metadata(
            b"version:0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A"
        ))
        .line,
        1
    );
    assert_eq!(
        err(parse_partition_metadata(
            b"version: -1\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A"
        ))
        .line,
        1
    );
    assert_eq!(err(parse_partition_metadata(b"version: 0\n")).line, 2);
    assert_eq!(err(parse_partition_metadata(b"")).line, 1);
    assert_eq!(
        err(parse_partition_metadata(
            b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED"
        ))
        .line,
        2
    );
    assert_eq!(
        err(parse_partition_metadata(
            b"version: 0\ntopic_id: B3+HiNPgSQ6oxG9ZZ6ED5A"
        ))
        .line,
        2
    );
    // `PartitionMetadataReadBuffer.read` never checks the keys and reads two lines only
    // (`checkpoint::kafka_cases` in the format crate).
    assert!(parse_partition_metadata(b"version: 0\nid: B3_HiNPgSQ6oxG9ZZ6ED5A").is_ok());
    assert!(
        parse_partition_metadata(b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A\nextra: 1").is_ok()
    );
    assert_eq!(
        err(parse_partition_metadata(
            b"version: 0\ntopic_id B3_HiNPgSQ6oxG9ZZ6ED5A"
        ))
        .line,
        2
    );
}

#[test]
fn meta_properties_rules() {
    let v1 = b"#\n#Fri Jan 30 16:43:51 UTC 2026\nnode.id=1\ndirectory.id=XHhkr4tkSsD900pOQ8pPfg\nversion=1\ncluster.id=q1Xe\\u0041bc\n";
    let mp = parse_meta_properties(v1).unwrap();
    assert_eq!((mp.version, mp.node_id), (1, Some(1)));
    assert_eq!(mp.cluster_id.as_deref(), Some("q1XeAbc"));
    assert_eq!(
        mp.directory_id_string().as_deref(),
        Some("XHhkr4tkSsD900pOQ8pPfg")
    );
    // v0: missing version means 0, broker.id optional; key: value and escapes
    let mp = parse_meta_properties(b"broker.id: 7\r\ncluster.id=a\\:b\\=c\\\\d\r\n").unwrap();
    assert_eq!((mp.version, mp.node_id), (0, Some(7)));
    assert_eq!(mp.cluster_id.as_deref(), Some("a:b=c\\d"));
    let mp = parse_meta_properties(b"version=0\n").unwrap();
    assert_eq!(mp.node_id, None);

    let e = err(parse_meta_properties(b"#\nversion=2\n"));
    assert_eq!((e.file, e.line), (TextFileKind::MetaProperties, 2));
    assert!(
        err(parse_meta_properties(b"version=1\ncluster.id=x\n"))
            .problem
            .contains("node.id")
    );
    assert!(
        err(parse_meta_properties(b"version=1\nnode.id=1\n"))
            .problem
            .contains("cluster.id")
    );
    let e = err(parse_meta_properties(b"version=0\nbroker.id=one\n"));
    assert_eq!(e.line, 2);
    for reserved in [
        "AAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAQ",
        "AAAAAAAAAAAAAAAAAAAAAg",
    ] {
        let text = format!("version=0\ndirectory.id={reserved}\n");
        let e = err(parse_meta_properties(text.as_bytes()));
        assert!(e.problem.contains("reserved"), "{e}");
    }
    assert_eq!(
        err(parse_meta_properties(b"version=0\n\ndirectory.id=nope\n")).line,
        3
    );
    // bad escapes
    let e = err(parse_meta_properties(b"version=0\ncluster.id=\\u00zz\n"));
    assert_eq!(e.line, 2);
    assert!(e.problem.contains("\\u"), "{e}");
    assert!(parse_meta_properties(b"cluster.id=\\u12\n").is_err());
}

#[test]
fn clean_shutdown_rules() {
    assert_eq!(parse_clean_shutdown(b"").unwrap().broker_epoch, None);
    let c = parse_clean_shutdown(b"{\"version\":0,\"brokerEpoch\":42}\n").unwrap();
    assert_eq!(c.broker_epoch, Some(42));
    for bad in [
        &b"{\"version\":1,\"brokerEpoch\":1}"[..],
        b"{\"version\":0}",
        b"[1]",
        b"{not json",
        b"{\"version\":0,\"brokerEpoch\":\"x\"}",
    ] {
        let e = err(parse_clean_shutdown(bad));
        assert_eq!(e.file, TextFileKind::CleanShutdown);
    }
}

/// `LocalLog.parseTopicPartitionName` reads a directory's partition with
/// `Integer.parseInt`, which takes a leading `+`: the broker loads `orders-+5` as partition
/// 5 of `orders`, and its load reads that partition's entries of the log dir's checkpoints
/// (here a high watermark of 2 in `replication-offset-checkpoint`). Twin: `orders-x5` is
/// no partition's name (no topic-partition; the checkpoint entry is not its).
#[test]
fn a_partition_directory_named_with_a_plus_sign_is_that_partition() {
    use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
    for (name, known) in [("orders-+5", true), ("orders-x5", false)] {
        let d = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("orders", 5);
        for _ in 0..3 {
            p.append(Batch::new(Producer::PLAIN).records(1));
        }
        LogDirBuilder::new(1)
            .partition(p)
            .high_watermark("orders", 5, 2)
            .write(d.path())
            .unwrap();
        std::fs::rename(d.path().join("orders-5"), d.path().join(name)).unwrap();
        let a = klogscan::request::run(&klogscan::request::Request::new([d.path()])).unwrap();
        assert_eq!(a.report.partitions.len(), 1, "{name}");
        let r = &a.report.partitions[0];
        assert!(r.path.ends_with(name), "{}", r.path);
        if known {
            assert_eq!((r.topic.as_str(), r.partition), ("orders", 5), "{name}");
            assert_eq!(r.high_watermark, Some(2), "{name}");
        } else {
            assert_eq!(r.partition, -1, "{name}");
            assert_eq!(r.high_watermark, None, "{name}");
        }
    }
}
