//! `MemoryRecordsBuilderTest`: timestamps, offsets, compression and magic of the batches
//! the builder writes, as a segment holds them.

use super::{clean, write};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, BatchSpec, Codec, Legacy, PartitionBuilder, Producer, RecordSpec};

/// 2023-11-14T22:13:20Z.
const T: i64 = 1_700_000_000_000;

/// A record of `k`/`v` at timestamp delta `ts` and offset delta `off`.
fn rec(ts: i64, off: i32) -> RecordSpec {
    RecordSpec {
        timestamp_delta: ts,
        offset_delta: off,
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        ..RecordSpec::default()
    }
}

/// `orders-0` holding `spec` alone.
fn one(spec: BatchSpec) -> super::Written {
    let mut p = PartitionBuilder::new(super::TOPIC, 0);
    p.append_spec(spec);
    write(clean(), p)
}

/// `scan --deep`'s `invalid_batch` messages.
fn deep_invalid(w: &super::Written) -> Vec<String> {
    let r = w.scan(true);
    (r.findings.iter())
        .filter(|f| f.kind == Kind::InvalidBatch)
        .map(|f| f.message.clone())
        .collect()
}

/// `MemoryRecordsBuilderTest.buildUsingLogAppendTime`: under LogAppendTime the builder keeps
/// the first record's timestamp (0) as the base and the records' deltas (0), and writes the
/// append time as maxTimestamp; every record reads the append time. On disk: that v2 batch
/// — nothing raised with `--deep`, and `dump` gives each record `LogAppendTime: <append
/// time>`; a v0 message before it has no timestamp type (`NoTimestampType: -1`). Near
/// miss: the same header under CreateTime — maxTimestamp is then checked against the
/// records' 0 (`--deep`: `invalid_batch`).
#[test]
fn log_append_time_keeps_the_records_deltas_and_stamps_the_max() {
    let lat = |log_append_time: bool| BatchSpec {
        base_offset: 1,
        partition_leader_epoch: 0,
        log_append_time,
        base_timestamp: 0,
        records: vec![rec(0, 0), rec(0, 1), rec(0, 2)],
        overrides: klogscan::testkit::HeaderOverrides {
            max_timestamp: Some(T),
            ..Default::default()
        },
        ..BatchSpec::default()
    };
    let mut p = PartitionBuilder::new(super::TOPIC, 0);
    p.legacy(Legacy::v0().values(["a"]));
    p.append_spec(lat(true));
    let w = write(clean(), p);
    w.assert_quiet();
    let lines = w.dump_records();
    assert!(lines[0].contains(" NoTimestampType: -1 "), "{lines:#?}");
    for l in &lines[1..] {
        assert!(l.contains(&format!(" LogAppendTime: {T} ")), "{lines:#?}");
    }
    let near = one(BatchSpec {
        base_offset: 0,
        ..lat(false)
    });
    let m = deep_invalid(&near);
    assert!(
        m.len() == 1
            && m[0].contains(&format!(
                "maxTimestamp {T} differs from the newest record timestamp 0"
            )),
        "{m:#?}"
    );
}

/// `MemoryRecordsBuilderTest.buildUsingCreateTime` and `MemoryRecordsBuilderTest.writePastLimit`
/// (its timestamps; the write limit is the builder's, in memory): records at T, T+2, T+1
/// give maxTimestamp T+2, the largest, not the last. On disk: nothing raised with `--deep`.
/// Near miss: maxTimestamp T+1 (the last record's) — `invalid_batch` with `--deep`.
#[test]
fn create_time_max_is_the_largest_record_timestamp() {
    let ct = |max: Option<i64>| BatchSpec {
        partition_leader_epoch: 0,
        base_timestamp: T,
        records: vec![rec(0, 0), rec(2, 1), rec(1, 2)],
        overrides: klogscan::testkit::HeaderOverrides {
            max_timestamp: max,
            ..Default::default()
        },
        ..BatchSpec::default()
    };
    let w = one(ct(None));
    w.assert_quiet();
    let near = one(ct(Some(T + 1)));
    let m = deep_invalid(&near);
    assert!(
        m.len() == 1
            && m[0].contains(&format!(
                "maxTimestamp {} differs from the newest record timestamp {}",
                T + 1,
                T + 2
            )),
        "{m:#?}"
    );
}

/// `MemoryRecordsBuilderTest.testAppendAtInvalidOffset`: the builder refuses an offset not
/// above the previous one. On disk: a v2 batch whose two records both have offset delta 0
/// — `scan --deep` reports it (`invalid_batch`; the header alone says nothing, so plain
/// `scan` does not). Near miss: deltas 0 and 1, nothing raised.
#[test]
fn record_offsets_must_increase() {
    let batch = |second: i32| BatchSpec {
        partition_leader_epoch: 0,
        base_timestamp: T,
        records: vec![rec(0, 0), rec(1, second)],
        overrides: klogscan::testkit::HeaderOverrides {
            last_offset_delta: Some(1),
            ..Default::default()
        },
        ..BatchSpec::default()
    };
    let w = one(batch(0));
    assert!(w.messages(Kind::InvalidBatch).is_empty());
    let m = deep_invalid(&w);
    assert!(
        m.len() == 1 && m[0].contains("record offsetDelta 0 not above the previous 0"),
        "{m:#?}"
    );
    one(batch(1)).assert_quiet();
}

/// `MemoryRecordsBuilderTest.testRecordTimestampsWithDeleteHorizon`: with a delete horizon
/// (100 in the test) the base timestamp is the horizon and the records (50, 100, 150) keep
/// their own timestamps through negative deltas. On disk: the cleaner's batch with
/// attribute bit 6, base T+100, deltas -50, 0, 50 — `dump` prints `deleteHorizonMs:
/// OptionalLong[T+100]` and the records at T+50, T+100, T+150, and nothing is raised with
/// `--deep`. Near miss: the bit cleared — the same base is no horizon
/// (`OptionalLong.empty`).
#[test]
fn a_delete_horizon_is_the_base_timestamp_and_records_keep_theirs() {
    let batch = |delete_horizon: bool| BatchSpec {
        partition_leader_epoch: 0,
        delete_horizon,
        base_timestamp: T + 100,
        records: vec![rec(-50, 0), rec(0, 1), rec(50, 2)],
        ..BatchSpec::default()
    };
    let header = |w: &super::Written| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let paths: Vec<_> = w.m.segments.iter().map(|(_, p)| p.clone()).collect();
        klogscan::dump::dump_paths(&paths, &Default::default(), &mut out, &mut err).unwrap();
        String::from_utf8(out).unwrap()
    };
    let w = one(batch(true));
    w.assert_quiet();
    assert!(
        header(&w).contains(&format!("deleteHorizonMs: OptionalLong[{}]", T + 100)),
        "{}",
        header(&w)
    );
    let lines = w.dump_records();
    for (l, ts) in lines.iter().zip([T + 50, T + 100, T + 150]) {
        assert!(l.contains(&format!(" CreateTime: {ts} ")), "{lines:#?}");
    }
    let near = one(batch(false));
    assert!(header(&near).contains("deleteHorizonMs: OptionalLong.empty"));
}

/// `MemoryRecordsBuilderTest.convertV2ToV1UsingMixedCreateAndLogAppendTime`, the log it
/// converts (the down-conversion itself happens in a fetch, and the test's buffer puts the
/// ABORT and the next batch at the same offset, which no log holds: here they follow each
/// other): a LogAppendTime batch, an ABORT of producer 15 and later a COMMIT of producer 1,
/// neither with data in the partition, and a CreateTime batch of two records between them.
/// Markers of transactions that wrote nothing here end nothing (`appendEndTxnMarker` gives
/// no completed transaction): nothing raised above info, no aborted transaction, the last
/// stable offset at the log end (5). Near miss: producer 15 wrote a record before its
/// ABORT — the replay's aborted transaction.
#[test]
fn markers_of_producers_without_data_here_end_nothing() {
    let build = |data: bool| {
        let (p15, p1) = (
            Producer::transactional(15, 0),
            Producer::transactional(1, 0),
        );
        let mut p = PartitionBuilder::new(super::TOPIC, 0);
        p.append(Batch::new(Producer::PLAIN).records(1).log_append_time());
        if data {
            p.append(Batch::new(p15).records(1));
        }
        p.abort(p15, 0);
        p.append(Batch::new(Producer::PLAIN).records(2));
        p.commit(p1, 0);
        write(clean(), p)
    };
    let w = build(false);
    w.assert_quiet();
    let r = w.state();
    let (lso, aborted) = (
        crate::common::cases::lso(&r),
        crate::common::cases::aborted(&r),
    );
    assert_eq!((lso, aborted.len()), (Some(5), 0));
    let lines = w.dump_records();
    assert!(lines[0].contains(" LogAppendTime: ") && lines[2].contains(" CreateTime: "));
    let near = build(true);
    let a = crate::common::cases::aborted(&near.state());
    assert_eq!(
        a.iter().map(|a| (a.0, a.1, a.2)).collect::<Vec<_>>(),
        [(15, 1, 2)]
    );
}

/// `MemoryRecordsBuilderTest.convertToV1WithMixedV0AndV2Data`, the log it converts (the
/// conversion is a fetch's), and `MemoryRecordsBuilderTest.testAppendedChecksumConsistency`
/// and `MemoryRecordsBuilderTest.testSmallWriteLimit` (one record, read back): a v0 entry
/// then a v2 batch of two records, uncompressed and under each codec the builder allows
/// below magic 2 — read whole (`dump`: magic 0 at offset 0, then offsets 1 and 2), nothing
/// raised. Near miss: `MemoryRecordsBuilderTest.testUnsupportedCompress` — zstd for the v0
/// entry, which the builder refuses ("ZStandard compression is not supported for magic 0"):
/// `invalid_batch` on the entry's attributes.
#[test]
fn a_v0_entry_then_a_v2_batch_read_whole() {
    let build = |codec: Codec| {
        let mut p = PartitionBuilder::new(super::TOPIC, 0);
        p.legacy(Legacy::v0().values(["1"]).codec(codec));
        p.append(Batch::new(Producer::PLAIN).records(2).codec(codec));
        write(clean(), p)
    };
    for codec in [Codec::None, Codec::Gzip, Codec::SnappyXerial, Codec::Lz4] {
        let w = build(codec);
        w.assert_quiet();
        let lines = w.dump_records();
        assert_eq!(lines.len(), 3, "{codec:?}: {lines:#?}");
        assert!(
            lines[0].starts_with("| offset: 0 NoTimestampType: -1 "),
            "{lines:#?}"
        );
        assert!(
            lines[2].starts_with("| offset: 2 CreateTime: "),
            "{lines:#?}"
        );
    }
    let near = build(Codec::Zstd);
    let m = near.messages(Kind::InvalidBatch);
    assert!(
        m.len() == 1 && m[0].contains("zstd compression is not allowed for magic < 2"),
        "{m:#?}"
    );
}
