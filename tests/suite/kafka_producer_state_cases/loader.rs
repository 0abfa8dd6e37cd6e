//! `LogLoaderTest`'s producer-state rebuild cases: which segments a load after an unclean
//! shutdown recovers and reads, the shortcut `UnifiedLog.rebuildProducerState` takes when
//! it skips `truncateAndReload` (no snapshot after a clean shutdown, or a topic on a
//! message format before v2), and over-compacted logs whose offsets jump past what a
//! segment can hold.

use super::*;
use klogscan::testkit::encode::{LegacyInner, legacy_wrapper};
use klogscan::testkit::{Batch, BatchInfo, Codec, Legacy, PartitionFileOptions, Producer, Rec};

fn partition() -> PartitionBuilder {
    PartitionBuilder::new("ll", 0).broker_files(PartitionFileOptions::default())
}

/// An unclean shutdown with the recovery point at `rp`.
fn unclean(rp: i64) -> LogDirBuilder {
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("ll", 0, rp)
}

/// The segments' base offsets of `p` as written.
fn bases(p: &PartitionBuilder) -> Vec<i64> {
    let dir = tempfile::tempdir().unwrap();
    p.write(dir.path())
        .unwrap()
        .segments
        .iter()
        .map(|s| s.0)
        .collect()
}

// ----- testProducerSnapshotsRecoveryAfterUncleanShutdown -------------------------------------

/// Records "0" to "100", one a batch, in 640-byte segments (Kafka's test appends them as
/// leader: v2 batches without producer ids; with `legacy`, magic 1 messages as a topic on
/// message format 0.10.0 stores them). With `throwing`, producer 5 first opens a
/// transaction at 0 and writes non-transactional data at 1 (a replay of those two batches
/// throws `InvalidTxnStateException`), and the plain records follow.
fn hundred_and_one(legacy: bool, throwing: bool) -> PartitionBuilder {
    let mut p = partition().segment_bytes(640);
    let mut first = 0;
    if throwing {
        p.append(Batch::new(Producer::transactional(5, 0)).values(["t"]));
        p.append(
            Batch::new(Producer::idempotent(5, 0))
                .values(["i"])
                .sequence(1),
        );
        first = 2;
    }
    for i in first..=100 {
        if legacy {
            p.legacy(Legacy::v1().values([i.to_string()]));
        } else {
            p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
        }
    }
    p
}

/// Kafka's two loads: (1) snapshots kept only for the last two segments and the log end
/// (`deleteSnapshotsBefore` the second-to-last base), the recovery point at the base of the
/// fourth segment from the end; (2) snapshots kept from that base on, the recovery point
/// one past it. Returns the log dir of each load and that base.
fn two_loads(p: impl Fn() -> PartitionBuilder) -> Vec<(TempDir, Manifest, i64)> {
    let b = bases(&p());
    let n = b.len();
    assert!(n >= 5, "{b:?}");
    let rp_segment = b[n - 4];
    [(rp_segment, b[n - 2]), (rp_segment + 1, rp_segment)]
        .into_iter()
        .map(|(rp, keep_from)| {
            let (d, m) = write(unclean(rp), p());
            let older: Vec<i64> = snapshot_files(&m)
                .into_iter()
                .filter(|&o| o < keep_from)
                .collect();
            remove_snapshots(&m, older);
            (d, m, rp_segment)
        })
        .collect()
}

/// `LogLoaderTest.testProducerSnapshotsRecoveryAfterUncleanShutdownCurrentMessageFormat`:
/// 101 records in five or more segments, two loads after an unclean shutdown (see
/// [`two_loads`]). Both recover exactly the segments from the recovery point's on (the
/// last four) and truncate nothing; the snapshots on disk are deleted by the first
/// recovery's rebuild and written again by the recoveries, so none is lost for good, and
/// the final rebuild loads the one the last recovery writes at the log end (101): no
/// producer. The snapshot files after the load are Kafka's: the last four segment bases and
/// the log end (`snapshots_after_load`).
///
/// The segments the load reads are Kafka's other assertion: in the first load the rebuild
/// before the first recovery replays every segment below it from the log start (no
/// snapshot is left at or below its base), in the second it loads the snapshot at that
/// base and reads nothing. The prediction shows the replayed range when a batch in it
/// throws: with producer 5's non-transactional write inside its transaction at offset 1,
/// the first load fails there ("rebuilding the producer state up to offset …, from the log
/// start 0") and the second does not.
#[test]
fn producer_snapshots_recovery_after_unclean_shutdown_current_message_format() {
    for (_d, m, rp_segment) in two_loads(|| hundred_and_one(false, false)) {
        let v = verify(&m);
        let pr = &v.prediction;
        recovers_the_last_four_and_keeps_the_log(&m, &v, rp_segment, false);
        assert_eq!(loaded(&v), (Some(101), true));
        assert_eq!(counts(&v), (Some(0), Some(0)));
        assert!(pr.load_failure.is_none());
        let expected: Vec<i64> = (m.segments.iter().map(|s| s.0))
            .filter(|&b| b >= rp_segment)
            .chain([101])
            .collect();
        assert_eq!(
            pr.producer_state.snapshots_after_load.as_deref(),
            Some(&expected[..])
        );
    }
    let loads = two_loads(|| hundred_and_one(false, true));
    let (_d, m, rp_segment) = &loads[0];
    let f = verify(m)
        .prediction
        .load_failure
        .expect("the first load fails");
    assert_eq!(
        (f.kind.as_str(), f.offset, f.exception.as_str()),
        (
            "non_transactional_write_in_transaction",
            Some(1),
            "InvalidTxnStateException"
        )
    );
    let rebuild = format!(
        "rebuilding the producer state up to offset {rp_segment} to recover segment {} (from the log start 0)",
        seg(*rp_segment)
    );
    assert!(f.message.starts_with(&rebuild), "{}", f.message);
    let (_d, m, _) = &loads[1];
    assert!(verify(m).prediction.load_failure.is_none());
}

/// What both unclean-shutdown loads of the 101-offset log predict: the four segments from
/// the recovery point's recovered, nothing truncated, the log end 101, no snapshot deleted
/// for good — but, for `legacy` (magic 1) data, the one at the log end deleted by the
/// first recovery's rebuild and written again only by the final one (see the v1 test).
fn recovers_the_last_four_and_keeps_the_log(
    m: &Manifest,
    v: &PartitionVerification,
    rp_segment: i64,
    legacy: bool,
) {
    let last_four: Vec<String> = m
        .segments
        .iter()
        .filter(|s| s.0 >= rp_segment)
        .map(|s| seg(s.0))
        .collect();
    assert_eq!(last_four.len(), 4);
    assert_eq!(recovered(v), last_four);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(101));
    let replaced: &[(String, &str)] = if legacy {
        &[(
            "00000000000000000101.snapshot".to_string(),
            "snapshot_replaced_at_recovery",
        )]
    } else {
        &[]
    };
    assert_eq!(deleted_snapshots(v), replaced);
}

/// `LogLoaderTest.testProducerSnapshotsRecoveryAfterUncleanShutdownV1`: the same log on
/// message format 0.10.0 (magic 1 messages). Kafka recovers the same segments and, the
/// format being older than v2, never replays them into producer state
/// (`rebuildProducerState` takes its shortcut: empty snapshots at the last two segment
/// bases and the log end). On disk the format is a topic setting (ZooKeeper), so klogscan
/// plans the v2 rebuild (a broker of 3.0 or later takes it whatever the data's magic);
/// what the prediction states agrees: the same four segments recovered, nothing truncated,
/// no producer and no open transaction (magic 1 messages carry no producer id). It differs
/// on one file: on the v2 path the first recovery's rebuild deletes the snapshot at the log
/// end (`truncateAndReload` above its base) and no recovery writes one at its segment's end
/// (`LogSegment.recover` updates the state's map end for magic ≥ 2 only), so only the final
/// rebuild writes it again: `snapshot_replaced_at_recovery` (this used to expect none, from
/// end snapshots the recoveries of legacy segments were wrongly taken to write).
#[test]
fn producer_snapshots_recovery_after_unclean_shutdown_v1() {
    for (_d, m, rp_segment) in two_loads(|| hundred_and_one(true, false)) {
        assert!(m.batches.iter().all(|b| b.magic == 1));
        let v = verify(&m);
        let pr = &v.prediction;
        recovers_the_last_four_and_keeps_the_log(&m, &v, rp_segment, true);
        assert_eq!(counts(&v), (Some(0), Some(0)));
        assert!(pr.load_failure.is_none());
    }
}

// ----- the rebuild's shortcut ------------------------------------------------------------------

/// A partition directory as a new topic's leaves it: one empty segment at 0 (empty
/// `.log`, `.index` and `.timeindex`), no snapshot, the checkpoints at 0.
fn empty_log(clean: bool) -> (TempDir, Manifest) {
    let (d, m) = write(LogDirBuilder::new(1).clean_shutdown(clean), partition());
    remove_snapshots(&m, snapshot_files(&m));
    for ext in ["log", "index", "timeindex"] {
        std::fs::write(m.dir.join(format!("{:020}.{ext}", 0)), b"").unwrap();
    }
    (d, m)
}

/// Producer 1's idempotent data at 0–1, producer 2's transaction opened at 2 (3 also its),
/// two segments (bases 0, 2), no snapshot file.
fn no_snapshot_log(clean: bool) -> (TempDir, Manifest) {
    let files = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let mut p = PartitionBuilder::new("ll", 0).broker_files(files);
    p.append(Batch::new(Producer::idempotent(1, 0)).records(2));
    p.roll();
    p.append(Batch::new(Producer::transactional(2, 0)).records(2));
    write(LogDirBuilder::new(1).clean_shutdown(clean), p)
}

/// `LogLoaderTest.testSkipTruncateAndReloadIfNewMessageFormatAndCleanShutdown`: an empty
/// log dir, a clean shutdown, no snapshot: `rebuildProducerState` skips
/// `truncateAndReload` and only takes (empty) snapshots, at offset 0 here, which writes
/// nothing. On disk: the prediction says the rebuild is skipped, nothing is loaded or
/// replayed, no producer. The same shortcut on a log with data (producer 1 idempotent,
/// producer 2's transaction open, no snapshot): skipped, every producer and the open
/// transaction forgotten, which `verify` reports (`snapshot_mismatch`: no snapshot
/// although a transaction is open). Negative twin: after an unclean shutdown the recovery
/// of the last segment rebuilds both producers and writes the snapshot at the log end,
/// which the final rebuild loads, the transaction open in it.
#[test]
fn skip_truncate_and_reload_if_new_message_format_and_clean_shutdown() {
    let (_d, m) = empty_log(true);
    let v = verify(&m);
    let ps = &v.prediction.producer_state;
    assert!(ps.skipped);
    assert_eq!(
        (ps.snapshot_offset, ps.replay_from, ps.replay_to),
        (None, None, None)
    );
    assert_eq!(counts(&v), (Some(0), Some(0)));
    assert!(recovered(&v).is_empty());
    assert!(
        v.prediction.leftovers.is_empty(),
        "{:?}",
        v.prediction.leftovers
    );

    let (_d, m) = no_snapshot_log(true);
    let v = verify(&m);
    assert!(v.prediction.producer_state.skipped);
    assert_eq!(counts(&v), (Some(0), Some(0)));
    let f = of_kinds(&v.findings, &[Kind::SnapshotMismatch]);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert!(
        f[0].message
            .contains("no producer snapshot although 1 transaction(s) are open"),
        "{}",
        f[0].message
    );

    // Only a stray snapshot (below the last segment base, at no base): removeStraySnapshots
    // deletes it before the skip test, so the rebuild is skipped all the same and the
    // open transaction forgotten — reported too.
    let (_d, m) = no_snapshot_log(true);
    std::fs::write(
        m.dir.join(snap(1)),
        klogscan::testkit::files::encode_snapshot(&[]),
    )
    .unwrap();
    let v = verify(&m);
    assert!(v.prediction.producer_state.skipped, "{:#?}", v.prediction);
    let f = of_kinds(&v.findings, &[Kind::SnapshotMismatch]);
    assert!(
        f.iter().any(|f| f
            .message
            .contains("no producer snapshot left once the stray ones are removed although 1 transaction(s) are open")),
        "{:#?}",
        v.findings
    );

    let (_d, m) = no_snapshot_log(false);
    let v = verify(&m);
    assert!(!v.prediction.producer_state.skipped);
    assert_eq!(recovered(&v), vec![seg(2)]);
    assert_eq!(loaded(&v), (Some(4), true));
    assert_eq!(counts(&v), (Some(2), Some(1)));
}

/// Magic 1 messages "a", "b" (offsets 0–1) and "c" (2) in two segments, no snapshot.
fn legacy_log(ld: LogDirBuilder) -> (TempDir, Manifest) {
    let files = PartitionFileOptions {
        snapshots: false,
        ..PartitionFileOptions::default()
    };
    let mut p = PartitionBuilder::new("ll", 0).broker_files(files);
    p.legacy(Legacy::v1().values(["a", "b"]));
    p.roll();
    p.legacy(Legacy::v1().values(["c"]));
    write(ld, p)
}

/// `LogLoaderTest.testSkipTruncateAndReloadIfOldMessageFormatAndCleanShutdown`: message
/// format 0.10.2, a clean shutdown: the rebuild takes its shortcut. After a clean shutdown
/// with no snapshot the format does not matter (the shortcut's other condition holds), so
/// the log dir says it all: a log of magic 1 messages, no snapshot, a clean shutdown — the
/// prediction says skipped, no producer. (The empty log dir of Kafka's test is the first
/// case of `skip_truncate_and_reload_if_new_message_format_and_clean_shutdown`.)
#[test]
fn skip_truncate_and_reload_if_old_message_format_and_clean_shutdown() {
    let (_d, m) = legacy_log(LogDirBuilder::new(1));
    let v = verify(&m);
    let ps = &v.prediction.producer_state;
    assert!(ps.skipped);
    assert_eq!((ps.snapshot_offset, ps.replay_from), (None, None));
    assert_eq!(counts(&v), (Some(0), Some(0)));
    assert!(recovered(&v).is_empty());
    assert!(snapshot_findings(&v).is_empty(), "{:#?}", v.findings);
}

/// `LogLoaderTest.testSkipTruncateAndReloadIfOldMessageFormatAndNoCleanShutdown`: message
/// format 0.10.2 and an unclean shutdown: the shortcut is taken for the format alone. That
/// setting lives in ZooKeeper, not in the log dir, so which path the broker takes cannot be
/// told from the bytes; what both give can: a log of magic 1 messages recovered after an
/// unclean shutdown (recovery point 0) keeps no producer and no open transaction, and the
/// load does not fail. (On Kafka's empty log dir the log end is the other part:
/// `empty_log_after_an_unclean_shutdown_ends_at_offset_0`.)
#[test]
fn skip_truncate_and_reload_if_old_message_format_and_no_clean_shutdown() {
    let (_d, m) = legacy_log(unclean(0));
    let v = verify(&m);
    assert_eq!(recovered(&v), vec![seg(0), seg(2)]);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(counts(&v), (Some(0), Some(0)));
    assert!(v.prediction.load_failure.is_none());
}

/// The empty log dir of `LogLoaderTest.testSkipTruncateAndReloadIfOldMessageFormatAndNoCleanShutdown`
/// (and of `testSkipLoadingIfEmptyProducerStateBeforeTruncation`): one empty segment at 0,
/// an unclean shutdown, recovery point 0. Whichever path the rebuild takes, the log ends at
/// 0 (the empty segment's base: `LogSegment.readNextOffset`), the map end offset is set to
/// 0, no snapshot is written (0 is not above the last snapshot offset) and there is no
/// producer.
///
/// klogscan's prediction takes a log without a batch to end at its last segment's base
/// (it had left the end unknown, `null`, taking it from the batches read).
#[test]
fn empty_log_after_an_unclean_shutdown_ends_at_offset_0() {
    let (_d, m) = empty_log(false);
    let v = verify(&m);
    assert_eq!(counts(&v), (Some(0), Some(0)));
    assert_eq!(loaded(&v), (None, false));
    let pr = &v.prediction;
    assert_eq!(
        (pr.log_end_offset, pr.log_end_offset_after),
        (Some(0), Some(0))
    );
    assert_eq!(
        (pr.producer_state.replay_from, pr.producer_state.replay_to),
        (Some(0), Some(0))
    );
    // Twin: a segment holding bytes that are no batch is not an empty one; its end before
    // the load is not claimed (recovery then truncates it to its base).
    std::fs::write(m.dir.join(format!("{:020}.log", 0)), b"not a batch at all").unwrap();
    let pr = verify(&m).prediction;
    assert_eq!(
        (pr.log_end_offset, pr.log_end_offset_after),
        (None, Some(0))
    );
}

// ----- over-compacted logs ---------------------------------------------------------------------

const MAX: i64 = i32::MAX as i64;

/// A follower's copy of an over-compacted log: `k1` at offset 0, then offsets jump to
/// `Int.MAX + 2` — with `multi`, three gzip batches of two records (`k3`–`k8`, offsets
/// MAX+2 to MAX+7), else three one-record batches (`k3`–`k5`, MAX+2 to MAX+4). An offset
/// index entry for every batch but each segment's first (`index.interval.bytes` 1). With
/// `roll`, the jump starts a new segment, as `UnifiedLog.maybeRoll` does when an offset
/// cannot be stored relative to the active segment's base.
fn over_compacted(multi: bool, roll: bool) -> PartitionBuilder {
    let files = PartitionFileOptions::default().index_interval(1);
    let mut p = PartitionBuilder::new("ll", 0).broker_files(files);
    p.append(Batch::new(Producer::PLAIN).record(Rec::kv("k1", "v1")));
    p.skip_offsets(MAX + 1);
    if roll {
        p.roll();
    }
    let batches: &[&[u8]] = if multi {
        &[b"34", b"56", b"78"]
    } else {
        &[b"3", b"4", b"5"]
    };
    for keys in batches {
        let mut b = Batch::new(Producer::PLAIN);
        for k in keys.iter().map(|c| *c as char) {
            b = b.record(Rec::kv(format!("k{k}"), format!("v{k}")));
        }
        if multi {
            b = b.codec(Codec::Gzip);
        }
        p.append(b);
    }
    p
}

/// `LogLoaderTest.testOverCompactedLogRecoveryMultiRecord` (and `testOverCompactedLogRecovery`,
/// one record a batch): a follower appends `k1` at 0, then batches from `Int.MAX + 2` on;
/// the first of them rolls a segment based at `Int.MAX + 2` (a snapshot there), the others
/// go into it, and no offset index's last offset is negative (none of its relative offsets
/// overflowed). On disk: that log
/// dir is sound — only the offset gap is said (info); the segments are `0` and
/// `MAX + 2`, the snapshots at `MAX + 2` and the log end; a load after an unclean
/// shutdown (recovery point 0) recovers both and truncates nothing. Negative twin: the same
/// batches left in the segment based at 0 lie beyond what a base of 0 can index, a
/// `segment_offset_out_of_range` (recovery would throw `LogSegmentOffsetOverflowException`
/// and split the segment).
#[test]
fn over_compacted_log_recovery_multi_record() {
    for multi in [true, false] {
        let leo = if multi { MAX + 8 } else { MAX + 5 };
        let (_d, m) = write(unclean(0), over_compacted(multi, true));
        assert_eq!(m.log_end_offset, leo);
        let segs: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
        assert_eq!(segs, vec![0, MAX + 2]);
        assert_eq!(snapshot_files(&m), vec![MAX + 2, leo]);
        let idx = std::fs::read(m.dir.join(format!("{:020}.index", MAX + 2))).unwrap();
        assert_eq!(idx.len(), 16, "two index entries");
        let v = verify(&m);
        let kinds: Vec<(Kind, Option<i64>)> =
            v.findings.iter().map(|f| (f.kind, f.offset)).collect();
        assert_eq!(
            kinds,
            vec![(Kind::OffsetGap, Some(MAX + 2))],
            "multi {multi}"
        );
        assert_eq!(recovered(&v), vec![seg(0), seg(MAX + 2)]);
        assert!(v.prediction.truncation.is_none());
        assert_eq!(v.prediction.log_end_offset_after, Some(leo));
        let (_d, m) = write(LogDirBuilder::new(1), over_compacted(multi, true));
        let v = verify(&m);
        assert_eq!(v.findings.len(), 1, "{:#?}", v.findings);
        assert!(recovered(&v).is_empty());

        let (_d, m) = write(unclean(0), over_compacted(multi, false));
        let v = verify(&m);
        let f = of_kinds(&v.findings, &[Kind::SegmentOffsetOutOfRange]);
        assert!(!f.is_empty(), "{:#?}", v.findings);
        assert_eq!(
            (f[0].offset, f[0].segment.as_deref()),
            (Some(MAX + 2), Some(seg(0).as_str()))
        );
    }
}

/// `k1` as one magic 1 message at 0, then three gzip wrappers of two magic 1 messages
/// (`k3`–`k8`) at `Int.MAX + 2` to `Int.MAX + 7`. With `roll` the first wrapper goes into
/// a segment based at 3, and the second starts one at `Int.MAX + 4`, which the third joins.
fn over_compacted_v1(roll: bool) -> PartitionBuilder {
    let files = PartitionFileOptions::default().index_interval(1);
    let mut p = PartitionBuilder::new("ll", 0).broker_files(files);
    p.legacy(Legacy::v1().message(Some(b"k1"), Some(b"v1")));
    if roll {
        p.roll();
    }
    let ts = p.now();
    let inner = |k: &str| LegacyInner {
        timestamp: ts,
        key: Some(format!("k{k}").into_bytes()),
        value: Some(format!("v{k}").into_bytes()),
    };
    // The testkit names a new segment after the entry's base offset: 3, as Kafka's roll
    // chose it, though the wrapper's messages are at MAX+2 and MAX+3.
    let bytes = legacy_wrapper(1, Codec::Gzip, MAX + 2, &[inner("3"), inner("4")], None).encode();
    p.append_raw(
        bytes.clone(),
        BatchInfo {
            base_offset: if roll { 3 } else { MAX + 2 },
            last_offset: MAX + 3,
            position: 0,
            size: bytes.len() as u64,
            file: Default::default(),
            segment_base: 0,
            magic: 1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            record_count: 2,
            codec: Codec::Gzip,
            transactional: false,
            control: None,
            coordinator_epoch: None,
            partition_leader_epoch: -1,
            first_timestamp: ts,
            max_timestamp: ts,
        },
    );
    p.roll();
    for (a, b) in [(b"k5", b"v5"), (b"k7", b"v7")] {
        let (c, d) = ([a[0], a[1] + 1], [b[0], b[1] + 1]);
        p.legacy(
            Legacy::v1()
                .codec(Codec::Gzip)
                .message(Some(a), Some(b))
                .message(Some(&c), Some(&d)),
        );
    }
    p
}

/// `LogLoaderTest.testOverCompactedLogRecoveryMultiRecordV1`: the same appends as magic 1
/// gzip wrappers. A wrapper's first offset is not known without decompressing it, so the
/// roll takes `last offset − Int.MAX` = 3 as the new base: the segment based at 3 holds the
/// wrapper at `MAX + 2`–`MAX + 3` (relative offsets up to exactly `Int.MAX`), the next
/// wrapper rolls a segment at `MAX + 4`, the last joins it; snapshots at 3, `MAX + 4` and
/// the log end; three offset indexes. On disk: nothing is wrong with it — not even the
/// offset gap, which lies inside the segment based at 3 — after a clean shutdown, and a
/// load after an unclean one recovers all three segments and truncates nothing. Negative
/// twin: without the roll to 3 the wrapper's offsets are beyond what the base 0 allows.
#[test]
fn over_compacted_log_recovery_multi_record_v1() {
    let (_d, m) = write(unclean(0), over_compacted_v1(true));
    let segs: Vec<i64> = m.segments.iter().map(|s| s.0).collect();
    assert_eq!(segs, vec![0, 3, MAX + 4]);
    assert_eq!(m.log_end_offset, MAX + 8);
    assert_eq!(snapshot_files(&m), vec![3, MAX + 4, MAX + 8]);
    let indexes = std::fs::read_dir(&m.dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".index")
        })
        .count();
    assert_eq!(indexes, 3);
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);
    assert_eq!(recovered(&v), vec![seg(0), seg(3), seg(MAX + 4)]);
    assert!(v.prediction.truncation.is_none());
    assert_eq!(v.prediction.log_end_offset_after, Some(MAX + 8));
    let (_d, m) = write(LogDirBuilder::new(1), over_compacted_v1(true));
    let v = verify(&m);
    assert!(v.findings.is_empty(), "{:#?}", v.findings);

    let (_d, m) = write(unclean(0), over_compacted_v1(false));
    let v = verify(&m);
    let f = of_kinds(&v.findings, &[Kind::SegmentOffsetOutOfRange]);
    assert_eq!(f.len(), 1, "{:#?}", v.findings);
    assert_eq!(f[0].segment.as_deref(), Some(seg(0).as_str()));
}

// ----- the snapshot files a load leaves -------------------------------------------------------

/// `UnifiedLogTest.testInitializationOfProducerSnapshotsUpgradePath`: records "0" to "100"
/// in 640-byte segments, every snapshot file deleted, then three loads, each predicted
/// with the snapshot files the directory holds after it (`snapshots_after_load`):
/// * after a clean shutdown (recovery point at the log end), the rebuild is skipped and
///   writes empty snapshots at the last two segment bases and the log end
///   (`rebuildProducerState`'s shortcut);
/// * after an unclean one with the recovery point at the log end, the last segment is
///   recovered: the rebuild to its base replays from the log start and snapshots the
///   second-last base on its way and the base at its end, the recovery the log end — the
///   same three files;
/// * after an unclean one with the recovery point at 0, every segment is recovered, one
///   snapshot at each base but the first and one at the log end.
///
/// Negative twin: a clean load that keeps its snapshot at the log end writes nothing more.
#[test]
fn the_snapshots_a_load_writes_as_the_upgrade_path_test_lists_them() {
    let p = || hundred_and_one(false, false);
    let b = bases(&p());
    let n = b.len();
    assert!(n >= 3, "{b:?}");
    let last_two_and_end = vec![b[n - 2], b[n - 1], 101];
    let all_but_first: Vec<i64> = b[1..].iter().copied().chain([101]).collect();
    for (ld, expected) in [
        (
            LogDirBuilder::new(1).recovery_point("ll", 0, 101),
            &last_two_and_end,
        ),
        (unclean(101), &last_two_and_end),
        (unclean(0), &all_but_first),
    ] {
        let (_d, m) = write(ld, p());
        remove_snapshots(&m, snapshot_files(&m));
        let ps = verify(&m).prediction.producer_state;
        assert_eq!(
            ps.snapshots_after_load.as_deref(),
            Some(&expected[..]),
            "{ps:?}"
        );
    }
    let (_d, m) = write(LogDirBuilder::new(1).recovery_point("ll", 0, 101), p());
    let kept = snapshot_files(&m);
    assert_eq!(kept.last(), Some(&101));
    let ps = verify(&m).prediction.producer_state;
    assert_eq!(ps.snapshots_after_load, Some(kept));
}

/// Segments 0/10/20/30 of ten plain records each (log end 40), every snapshot deleted and
/// the offset index of the segments at `missing` too.
fn four_segments(ld: LogDirBuilder, missing: &[i64]) -> (TempDir, Manifest) {
    let mut p = partition();
    for i in 0..4 {
        if i > 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).records(10));
    }
    let (d, m) = write(ld, p);
    assert_eq!(bases_of(&m), [0, 10, 20, 30]);
    remove_snapshots(&m, snapshot_files(&m));
    for base in missing {
        std::fs::remove_file(m.dir.join(format!("{base:020}.index"))).unwrap();
    }
    (d, m)
}

fn bases_of(m: &Manifest) -> Vec<i64> {
    m.segments.iter().map(|s| s.0).collect()
}

/// A segment recovered at load for its missing offset index (`LogLoader.loadSegmentFiles`
/// → `recoverSegment`) is recovered before it joins the log's segments, so the rebuild up
/// to its base (`UnifiedLog.rebuildProducerState`) snapshots at the last two bases of the
/// segments opened before it — the two just below it — not at the whole log's last two.
/// After a clean shutdown with no snapshot and no offset index for 20 and 30, the
/// recovery of 20 writes 10, 20 and 30, that of 30 loads 30 and writes 40; the final
/// rebuild loads 40: Kafka leaves 10, 20, 30, 40. Only 30 without its index: the same
/// four (its rebuild passes 10 and 20). Twin: the same last segment recovered after an
/// unclean shutdown (recovery point 30, every index there) rebuilds over the whole log,
/// whose second-last base is the only one below it: 20, 30, 40.
#[test]
fn a_recovery_at_load_snapshots_the_two_bases_opened_before_it() {
    let clean = || LogDirBuilder::new(1).recovery_point("ll", 0, 40);
    for missing in [&[20, 30][..], &[30]] {
        let (_d, m) = four_segments(clean(), missing);
        let v = verify(&m);
        let pr = &v.prediction;
        let want: Vec<String> = missing.iter().map(|&b| seg(b)).collect();
        assert_eq!(recovered(&v), want);
        assert!(pr.load_failure.is_none(), "{:?}", pr.load_failure);
        assert_eq!(loaded(&v), (Some(40), true));
        assert_eq!(
            pr.producer_state.snapshots_after_load.as_deref(),
            Some(&[10, 20, 30, 40][..]),
            "{missing:?}"
        );
    }
    let (_d, m) = four_segments(unclean(30), &[]);
    let v = verify(&m);
    assert_eq!(recovered(&v), [seg(30)]);
    assert_eq!(
        v.prediction.producer_state.snapshots_after_load.as_deref(),
        Some(&[20, 30, 40][..])
    );
}
