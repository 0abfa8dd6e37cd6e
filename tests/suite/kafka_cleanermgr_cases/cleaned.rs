//! What a pass leaves below the first uncleanable offset (`LogCleanerTest`, and the
//! `cleanableOffsets` bounds of `LogCleanerManagerTest` as they show on disk).

use super::*;
use klogscan::finding::Severity;
use klogscan::partition::scan::ScanOptions;

/// The topic `LogCleanerTest` cleans (`test-0`).
const TOPIC: &str = "test";

/// `min.compaction.lag.ms` of `testCleanableOffsetsForTime` (an hour).
const LAG_MS: i64 = 3_600_000;

/// Ninety-one batches of one record, value the offset, keyed by the offset modulo 10 (ten
/// keys, as `testCleaningWithUncleanableSection`) but for offset 0's key, written once;
/// segments of fifteen offsets, the active one holding offset 90 alone. With `cleaned_to`,
/// a pass cleaned `[0, cleaned_to)`: the cleaner keeps there each key's latest record in
/// that range — offset 0 and the ten below `cleaned_to` — grouped into one segment at 0.
/// `lag`: the records from `cleaned_to` on are more than `LAG_MS` younger.
fn ten_keys(cleaned_to: Option<i64>, lag: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    let c = cleaned_to.unwrap_or(0);
    for o in 0..91 {
        // Below `c`: offset 0 and the last ten kept, the rest cleaned away.
        if o > 0 && o < c - 10 {
            continue;
        }
        // A new segment every fifteen offsets above the cleaned head.
        if o > 0 && o >= c && o % 15 == 0 {
            p.roll();
        }
        if lag && o == c {
            p.advance_time(LAG_MS + 1);
        }
        let key = if o == 0 {
            "first".to_string()
        } else {
            (o % 10).to_string()
        };
        if p.next_offset() < o {
            p.skip_offsets(o - p.next_offset());
        }
        p.append(Batch::new(Producer::PLAIN).record(Rec::kv(key, o.to_string())));
    }
    p
}

/// `LogCleanerTest.testCleaningWithUncleanableSection`: `Cleaner.clean` given a first
/// uncleanable offset inside the third segment cleans the segments below it and leaves the
/// rest as written. That range is what `LogCleanerManager.cleanableOffsets` bounds
/// (`LogCleanerManagerTest.testCleanableOffsetsActiveSegment`: the active segment's base,
/// here 90; `testCleanableOffsetsForNone`: the last stable offset, here the high watermark
/// 40, inside the segment at 30; `testCleanableOffsetsForTime`: the first segment whose
/// newest record is within `min.compaction.lag.ms`, here the one at 30;
/// `testCleanableOffsetsForShortTime`: the lag passed, the active segment again), and the
/// pass checkpoints the base of the segment holding it (`LogToClean.firstUncleanableOffset`,
/// `doneCleaning`). The cleaned head (offset 0, then each key's latest record below the
/// checkpoint: a gap of 19 or 79 offsets) and the duplicates above are what a broker
/// holds: known compacted from the checkpoint, nothing reported, no offset gap.
#[test]
fn a_log_cleaned_below_its_first_uncleanable_offset_is_quiet() {
    for (cleaned_to, high_watermark, lag) in [
        (30, None, false),
        (90, None, false),
        (30, Some(40), false),
        (30, None, true),
    ] {
        let mut ld = LogDirBuilder::new(1).partition(ten_keys(Some(cleaned_to), lag));
        if let Some(hw) = high_watermark {
            ld = ld.high_watermark(TOPIC, 0, hw);
        }
        let (b, _dir) = one_broker(ld, Some(&[(TOPIC, 0, cleaned_to)]));
        let v = b.check();
        assert_no_alarm(&v);
        assert_compacted_by_checkpoint(&v, TOPIC, 0);
        assert!(
            verified(&v, Kind::OffsetGap).is_empty(),
            "cleaned to {cleaned_to}: {:#?}",
            lines(v.verify.findings())
        );
        assert_eq!(v.verify.partitions[0].scan.first_offset, Some(0));
    }
}

/// The near miss of [`a_log_cleaned_below_its_first_uncleanable_offset_is_quiet`]: the same
/// cleaned log with no cleaner checkpoint (as `LogCleanerTest` leaves it: `Cleaner.clean`
/// called directly) and no policy stated. Nothing says the 19 offsets missing after 0
/// were cleaned away: an `offset_gap`, at info (compaction unknown).
#[test]
fn a_cleaned_log_without_its_checkpoint_shows_the_gap() {
    let (b, _dir) = one_broker(
        LogDirBuilder::new(1).partition(ten_keys(Some(30), false)),
        None,
    );
    let v = b.check();
    assert_eq!(compaction(&v.scan, TOPIC, 0), vec![(None, None)]);
    let gaps: Vec<(Option<i64>, Severity)> = (verified(&v, Kind::OffsetGap).into_iter())
        .map(|f| (f.offset, f.severity))
        .collect();
    assert_eq!(gaps, vec![(Some(20), Severity::Info)]);
}

/// `test-0` as `testCleaningWithUnkeyedMessages` writes it while the topic is `delete`:
/// five keyless records (0–4), a roll, five keyed ones (5–9), a roll, one keyed (10). With
/// `cleaned`, the pass to the active segment's base after the topic turned `compact`: the
/// keyless records are gone and 5–9 sit in the cleaned segment at 0.
fn unkeyed(cleaned: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(TOPIC, 0);
    if cleaned {
        p.skip_offsets(5);
    } else {
        for o in 0..5 {
            p.append(Batch::new(Producer::PLAIN).record(Rec::value(o.to_string())));
        }
        p.roll();
    }
    for o in 5..10 {
        p.append(Batch::new(Producer::PLAIN).record(keyed_record(o)));
    }
    p.roll();
    p.append(Batch::new(Producer::PLAIN).record(keyed_record(10)));
    p
}

/// `--deep`, `--compacted test`: the policy stated as the topic has it now.
fn deep_compacted() -> ScanOptions {
    ScanOptions::default()
        .with_deep(true)
        .with_compacted_topics([TOPIC])
}

/// `LogCleanerTest.testCleaningWithUnkeyedMessages`: the cleaner drops every record without
/// a key in the range it cleans (`Cleaner.shouldRetainRecord`, counted as invalid
/// messages), so after the pass to 10 the log holds keyed records only, and the checkpoint
/// says 10. klogscan, told the topic is compacted, finds no keyless record to report.
#[test]
fn keyless_records_do_not_survive_a_cleaning() {
    let (b, _dir) = one_broker(
        LogDirBuilder::new(1).partition(unkeyed(true)),
        Some(&[(TOPIC, 0, 10)]),
    );
    let v = b.check_with(deep_compacted());
    assert_no_alarm(&v);
    assert!(verified(&v, Kind::KeylessRecordOnCompactedTopic).is_empty());
}

/// The near miss of [`keyless_records_do_not_survive_a_cleaning`]: the log before the pass
/// (no checkpoint yet), the topic compacted now: the five keyless records are reported
/// once (`keyless_record_on_compacted_topic`, a warning), since the next pass drops them.
#[test]
fn keyless_records_before_the_first_cleaning_are_reported() {
    let (b, _dir) = one_broker(LogDirBuilder::new(1).partition(unkeyed(false)), None);
    let v = b.check_with(deep_compacted());
    let found: Vec<(Option<i64>, Severity)> = (verified(&v, Kind::KeylessRecordOnCompactedTopic)
        .into_iter())
    .map(|f| (f.offset, f.severity))
    .collect();
    assert_eq!(found, vec![(Some(0), Severity::Warning)]);
}

/// `test-0` of twenty batches (segments at 0, 1, 6, 11, 16) with the last batch of the
/// segment at 6 torn (its last 20 bytes missing, a clean shutdown after: no recovery reads
/// it); with `compacted` the cleaner checkpointed it at 11, else the KRaft metadata log in
/// the log dir sets the topic's `cleanup.policy` to `delete`.
fn torn(compacted: bool) -> Verdict {
    let mut ld = LogDirBuilder::new(1).partition(filthy(TOPIC, 0, 20, None));
    if !compacted {
        ld = ld.partition(policy(TOPIC, "delete"));
    }
    let entries: &[(&str, i32, i64)] = &[(TOPIC, 0, 11)];
    let (b, dir) = one_broker(ld, compacted.then_some(entries));
    let seg = dir
        .join(format!("{TOPIC}-0"))
        .join(format!("{:020}.log", 6));
    let len = std::fs::metadata(&seg).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
    f.set_len(len - 20).unwrap();
    b.check()
}

/// The KRaft metadata log's partition holding one TOPIC `ConfigRecord`: `topic`'s
/// `cleanup.policy` set to `value`.
fn policy(topic: &str, value: &str) -> PartitionBuilder {
    use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};
    let r = MetaRecord::Config {
        resource_type: RESOURCE_TOPIC,
        resource_name: topic.into(),
        name: "cleanup.policy".into(),
        value: Some(value.into()),
    };
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    let value = klogscan::testkit::metadata::encode(&r);
    p.append(Batch::new(Producer::PLAIN).record(Rec::value(value)));
    p
}

/// The `truncated_batch` finding of `test-0`.
fn torn_batch(v: &Verdict) -> &Finding {
    let found: Vec<&Finding> = (verified(v, Kind::TruncatedBatch).into_iter())
        .filter(|f| f.topic == TOPIC)
        .collect();
    assert_eq!(found.len(), 1, "{:#?}", lines(v.verify.findings()));
    found[0]
}

/// `LogCleanerTest.testCorruptMessageSizeLargerThanBytesAvailable`: a segment whose last
/// batch declares more bytes than the segment has left makes the cleaner's read of it throw
/// (`Cleaner.cleanInto` reads no whole batch there and calls `growBuffersOrFail`: a
/// `CorruptRecordException`, "Log segment may be corrupt", when the declared size is past
/// the read buffer as in the Kafka test, an `IllegalStateException` when it fits).
/// In a broker every pass over a compacted log reads each of its segments below the first
/// uncleanable offset (`Cleaner.doClean` rewrites them all), so the next pass over `test-0`
/// throws; `CleanerThread.tryCleanFilthiestLog` marks the partition uncleanable, and from
/// then on `grabFilthiestCompactedLog` skips it (`LogCleanerManagerTest.
/// testGrabFilthiestCompactedLogIgnoresUncleanablePartitions`) and so does `deletableLogs`
/// (`testLogsWithSegmentsToDeleteShouldNotConsiderUncleanablePartitions`): the partition is
/// neither compacted nor, under `compact,delete`, trimmed by retention again, until the
/// segment is repaired (the mark is only in memory, and the next start's pass meets the same
/// bytes). klogscan reports the torn batch (an error) with the load's side of it only —
/// recovery does not run on it after a clean shutdown, readers stop there; its broker text
/// should also say that the cleaner marks the compacted partition uncleanable.
#[test]
fn a_torn_segment_makes_a_compacted_partition_uncleanable() {
    let v = torn(true);
    assert_compacted_by_checkpoint(&v, TOPIC, 0);
    let f = torn_batch(&v);
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.broker_behaviour.contains("uncleanable"),
        "{}",
        f.broker_behaviour
    );
}

/// The near miss of [`a_torn_segment_makes_a_compacted_partition_uncleanable`]: the same
/// torn segment on a topic whose policy is `delete` (the KRaft metadata log says so, and no
/// cleaner checkpoint lists it): the cleaner never reads a log that is not compacted
/// (`grabFilthiestCompactedLog` and `deletableLogs` take compacted logs only), so nothing
/// is marked; the torn batch is reported as before, with no word of the cleaner.
#[test]
fn a_torn_segment_of_a_delete_topic_leaves_the_cleaner_alone() {
    let v = torn(false);
    assert_eq!(
        compaction(&v.scan, TOPIC, 0)[0].0,
        Some(false),
        "{:?}",
        compaction(&v.scan, TOPIC, 0)
    );
    let f = torn_batch(&v);
    assert_eq!(f.severity, Severity::Error);
    assert!(!f.broker_behaviour.contains("uncleanable"));
}
