//! Snapshot names `Snapshots.parse` reads but that are not the names Kafka gives a
//! snapshot's files, on disk: what `KafkaMetadataLog.recoverSnapshots` does with them at
//! start (`KafkaMetadataLogTest.testReadMissingSnapshot`: an id without its file reads as
//! none; `testStartupWithInvalidSnapshotState`, `testCleanupPartialSnapshots` with such
//! names; `SnapshotsTest`'s parse). `Snapshots.parse` reads the end offset at characters
//! 0–19 and the epoch at 21–30 of any name ending `.checkpoint`, `.checkpoint.part` or
//! `.checkpoint.deleted`, and checks nothing else; `readSnapshot` opens an id under
//! `Snapshots.snapshotPath` only.
#![cfg(feature = "testkit")]

use crate::common::kraft::*;
use klogscan::discover::layout::canonical_snapshot_name;
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::brokers::orders_partition;
use klogscan::testkit::metadata::{MetadataLogBuilder, encode};
use klogscan::testkit::{BatchSpec, RecordSpec};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A log from offset 0 at KRaft epoch 1: `orders-0` led by 1 (offsets 0–3), brokers 3–8
/// (4–9), log end 10, with the snapshot (5, 1) written under Kafka's name.
fn log_from_0(root: &Path) -> PathBuf {
    let mut b = MetadataLogBuilder::new(T0).snapshot(5, 1, state(1, 0));
    b.batch(&[topic(), broker(1), broker(2)]);
    b.batch(&[orders_partition(&[1, 2], &[1, 2], 1, 0)]);
    for id in 3..9 {
        b.batch(&[broker(id)]);
    }
    assert_eq!(b.next_offset(), 10);
    b.write(root).unwrap()
}

/// A log from offset 100 (one batch, end 101) at KRaft epoch 1 whose snapshot (100, 1)
/// holds `orders-0` led by 2 at epoch 7.
fn log_from_100(root: &Path) -> PathBuf {
    let mut b = MetadataLogBuilder::new(T0)
        .start_offset(100)
        .snapshot(100, 1, state(2, 7));
    b.batch(&[broker(3)]);
    b.write(root).unwrap()
}

/// Copy `dir`'s snapshot `from` under `to`.
fn copy_as(dir: &Path, from: &str, to: &str) {
    std::fs::copy(dir.join(from), dir.join(to)).unwrap();
}

/// The `fate` and severity of the `metadata_snapshot_misnamed` finding a case wants (none:
/// no finding).
type Want = Option<(&'static str, Severity)>;

/// The one `metadata_snapshot_misnamed` finding of `root` (scan and verify agree).
fn misnamed(root: &Path) -> Vec<Finding> {
    let (s, v) = findings(root, Kind::MetadataSnapshotMisnamed);
    assert_eq!(s.len(), v.len(), "{s:#?} {v:#?}");
    s
}

/// `KafkaMetadataLogTest.testReadMissingSnapshot` on disk, in a log from 0 (log end 10,
/// epoch 1, snapshot (5, 1)): `recoverSnapshots` keeps the id of every name that parses —
/// `00000000000000000008x0000000001.checkpoint` (8, 1), the latest id, and
/// `00000000000000000003-0000000001.old.checkpoint` (3, 1) — but `readSnapshot` finds no
/// file under Kafka's name for either: they are never read (warning, `retained_unopened`).
/// `00000000000000000005-0000000001 copy.checkpoint` names the id (5, 1) whose file stands
/// beside it: never opened (info, `same_id_as_snapshot`). `…00000020-0000000005.old.checkpoint`
/// (20, 5) is the latest id and past the log (epoch 5 above its 1): `truncateToLatestSnapshot`
/// deletes every segment and the snapshot is then not found (error, `truncates_log`). Kafka's
/// own names (a `.checkpoint.deleted`, a `.checkpoint.part`) and other partial names (a
/// leftover, which `verify`'s `leftover_file` names) are not reported. The history
/// reads the files as they are (led by 1 at epoch 0).
#[test]
fn names_kafka_parses_as_snapshot_ids_but_never_opens() {
    let cases: Vec<(&str, Want)> = vec![
        (
            "00000000000000000008x0000000001.checkpoint",
            Some(("retained_unopened", Severity::Warning)),
        ),
        (
            "00000000000000000003-0000000001.old.checkpoint",
            Some(("retained_unopened", Severity::Warning)),
        ),
        (
            "00000000000000000005-0000000001 copy.checkpoint",
            Some(("same_id_as_snapshot", Severity::Info)),
        ),
        (
            "00000000000000000020-0000000005.old.checkpoint",
            Some(("truncates_log", Severity::Error)),
        ),
        ("00000000000000000005-0000000001.checkpoint.deleted", None),
        ("00000000000000000005-0000000001-4417.checkpoint.part", None),
        // Not Kafka's partial name, but a leftover all the same (`leftover_file`).
        ("00000000000000000005-0000000001-x.checkpoint.part", None),
    ];
    let snap = canonical_snapshot_name(5, 1);
    for (name, want) in cases {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_0(d.path());
        copy_as(&part, &snap, name);
        let f = misnamed(d.path());
        match want {
            None => assert!(f.is_empty(), "{name}: {f:#?}"),
            Some((fate, severity)) => {
                assert_eq!(f.len(), 1, "{name}: {f:#?}");
                assert_eq!(f[0].evidence["fate"], fate, "{name}: {}", f[0].message);
                assert_eq!(f[0].severity, severity, "{name}");
                assert_eq!(f[0].segment.as_deref(), Some(name));
            }
        }
        for kind in [
            Kind::MetadataSnapshotInconsistent,
            Kind::UnparseableFileName,
        ] {
            let (s, v) = findings(d.path(), kind);
            assert!(s.is_empty() && v.is_empty(), "{name}: {kind:?}");
        }
        assert_eq!(orders_now(d.path()), Some((1, 0)), "{name}");
    }
}

/// `KafkaMetadataLogTest.testStartupWithInvalidSnapshotState` with the only snapshot renamed:
/// a log from 100 whose snapshot (100, 1) is named `…00000100-0000000001.old.checkpoint`.
/// `recoverSnapshots` counts the id and does not throw — no `metadata_snapshot_inconsistent`
/// — but no file holds the state below 100 under Kafka's name: since 3.8 the start reads
/// the log from 0, below its start, and fails (`only_snapshot_at_log_start`, error). Twins:
/// under Kafka's name nothing is said; renamed `100-1.checkpoint` the parse throws
/// (`unparseable_file_name`) and the id counts for nothing (`metadata_snapshot_inconsistent`).
/// With Kafka's snapshot (100, 1) kept and a renamed copy as (101, 1) — the latest id, not
/// past the log end 101 — the node asks for its latest snapshot once, gets none, and reads
/// from 0 below the start 100 (`latest_without_file`, error); a renamed copy as (50, 1),
/// below the log start, is deleted at start (`deleted_at_start`, info).
#[test]
fn a_renamed_snapshot_at_the_log_start_passes_recover_snapshots_and_fails_later() {
    let snap = canonical_snapshot_name(100, 1);
    let cases: Vec<(&str, bool, Want, bool)> = vec![
        (
            "00000000000000000100-0000000001.old.checkpoint",
            false,
            Some(("only_snapshot_at_log_start", Severity::Error)),
            false,
        ),
        ("100-1.checkpoint", false, None, true),
        (
            "00000000000000000101-0000000001.old.checkpoint",
            true,
            Some(("latest_without_file", Severity::Error)),
            false,
        ),
        (
            "00000000000000000050-0000000001.old.checkpoint",
            true,
            Some(("deleted_at_start", Severity::Info)),
            false,
        ),
        (snap.as_str(), true, None, false),
    ];
    for (name, keep, want, inconsistent) in cases {
        let d = tempfile::tempdir().unwrap();
        let part = log_from_100(d.path());
        if name != snap {
            copy_as(&part, &snap, name);
            if !keep {
                std::fs::remove_file(part.join(&snap)).unwrap();
            }
        }
        let f = misnamed(d.path());
        match want {
            None => assert!(f.is_empty(), "{name}: {f:#?}"),
            Some((fate, severity)) => {
                assert_eq!(f.len(), 1, "{name}: {f:#?}");
                assert_eq!(f[0].evidence["fate"], fate, "{name}: {}", f[0].message);
                assert_eq!(f[0].severity, severity, "{name}");
            }
        }
        let (s, v) = findings(d.path(), Kind::MetadataSnapshotInconsistent);
        assert_eq!(
            (s.len(), v.len()),
            (usize::from(inconsistent), usize::from(inconsistent)),
            "{name}"
        );
    }
}

/// A renamed latest id changes what every start reads (Kafka 3.8+): the node asks for its
/// latest snapshot once (`KRaftControlRecordStateMachine.maybeLoadSnapshot`), gets none, and
/// reads the log from offset 0. A record cut short at offset 4 — below the snapshot (5, 1),
/// which alone no start reads past — is then read and the start fails
/// (`metadata_log_unreadable`, `read_from` 0); without the renamed file nothing is said.
#[test]
fn a_renamed_latest_id_makes_the_start_read_the_log_from_0() {
    for renamed in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let mut b = MetadataLogBuilder::new(T0).snapshot(5, 1, state(1, 0));
        b.batch(&[topic(), broker(1), broker(2)]);
        b.batch(&[orders_partition(&[1, 2], &[1, 2], 1, 0)]);
        let part = b.write(d.path()).unwrap();
        let full = encode(&broker(3));
        let bad = BatchSpec {
            base_offset: 4,
            partition_leader_epoch: 1,
            base_timestamp: T0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: vec![RecordSpec {
                value: Some(full[..full.len() - 2].to_vec()),
                ..RecordSpec::default()
            }],
            ..BatchSpec::default()
        };
        let mut good = bad.clone();
        good.base_offset = 5;
        good.records[0].value = Some(encode(&broker(4)));
        let mut seg = std::fs::OpenOptions::new()
            .append(true)
            .open(part.join("00000000000000000000.log"))
            .unwrap();
        seg.write_all(&bad.encode()).unwrap();
        seg.write_all(&good.encode()).unwrap();
        if renamed {
            copy_as(
                &part,
                &canonical_snapshot_name(5, 1),
                "00000000000000000006x0000000001.checkpoint",
            );
        }
        let (s, v) = findings(d.path(), Kind::MetadataLogUnreadable);
        let want = usize::from(renamed);
        assert_eq!(
            (s.len(), v.len()),
            (want, want),
            "renamed {renamed}: {s:#?}"
        );
        if renamed {
            assert_eq!(s[0].offset, Some(4));
            assert_eq!(s[0].evidence["read_from"], 0);
            assert_eq!(s[0].evidence["reason"], "metadata_record");
        }
    }
}
