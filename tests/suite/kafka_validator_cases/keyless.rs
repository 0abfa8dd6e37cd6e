//! The cleaner's side of `LogValidatorTest.checkNoKeyCompactedTopic` (`--deep`): keyless
//! records on a partition whose topic is known to be compacted now are one
//! `keyless_record_on_compacted_topic`; a past cleaning alone, or a copy that is not live,
//! says nothing of them.

use super::*;

/// `LogCleaner.shouldRetainRecord` drops every keyless record of the range it cleans: one
/// cause, so one finding per partition (at the first batch holding such records), counting
/// the records and batches of every segment; a keyed record between them is not counted.
/// Twins: the same log without `--deep` (records are not read) and on an internal topic
/// (`__remote_log_metadata` is written without keys) say nothing of keys.
#[test]
fn keyless_records_of_a_compacted_partition_are_one_finding() {
    let mut p = partition();
    p.append(Batch::new(Producer::PLAIN).records(2)); // keyed: offsets 0, 1
    p.append(hello_there_beautiful()); // 2..=4
    p.roll();
    p.append(hello_there_beautiful().codec(Codec::Lz4)); // 5..=7
    p.append(Batch::new(Producer::PLAIN).records(1)); // 8, keyed
    let r = scan_compacted(&p, true);
    let f = one(&r, Kind::KeylessRecordOnCompactedTopic);
    assert_eq!(f.offset, Some(2));
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        f.evidence,
        json!({"keyless_records": 6, "batches": 2, "first_offset": 2, "last_offset": 7})
    );
    assert!(
        f.message
            .starts_with("6 records without a key in 2 batches"),
        "{}",
        f.message
    );
    assert!(
        f.broker_behaviour.contains("LogCleaner"),
        "{}",
        f.broker_behaviour
    );
    assert!(
        of_kind(
            &scan_compacted(&p, false),
            Kind::KeylessRecordOnCompactedTopic
        )
        .is_empty()
    );
    let mut q = PartitionBuilder::new("__remote_log_metadata", 0);
    q.append(hello_there_beautiful());
    let r = scan_with(&q, ScanOptions::default().with_deep(true)).1;
    assert!(
        of_kind(&r, Kind::KeylessRecordOnCompactedTopic).is_empty(),
        "{:#?}",
        r.findings
    );
}

/// Compaction known only from the log dir's `cleaner-offset-checkpoint` (the log was
/// cleaned once) is not a current `compact` policy: `LogCleanerManager.updateCheckpoints`
/// keeps the entry of a topic turned to `delete`, which no cleaner touches again, so the
/// keyless records are not said to be dropped (two readings: silent). The same log with
/// `--compacted` is reported.
#[test]
fn keyless_records_are_not_judged_on_a_past_cleaning_alone() {
    let mut p = partition();
    p.append(hello_there_beautiful());
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    std::fs::write(
        dir.path().join("cleaner-offset-checkpoint"),
        format!("0\n1\n{TOPIC} 0 3\n"),
    )
    .unwrap();
    let run = |opts: ScanOptions| {
        request::run(&Request::new([dir.path()]).with_options(opts))
            .unwrap()
            .report
    };
    let r = run(ScanOptions::default().with_deep(true));
    assert_eq!(
        r.partitions[0].compacted_from.as_deref(),
        Some("cleaner-offset-checkpoint")
    );
    assert!(
        of_kind(&r, Kind::KeylessRecordOnCompactedTopic).is_empty(),
        "{:#?}",
        r.findings
    );
    let r = run(ScanOptions::default()
        .with_deep(true)
        .with_compacted_topics([TOPIC]));
    assert_eq!(of_kind(&r, Kind::KeylessRecordOnCompactedTopic).len(), 1);
    // A -delete copy of the same log is no live log: nothing is said of its records.
    let deleted = dir
        .path()
        .join(format!("{TOPIC}-0.0123456789abcdef0123456789abcdef-delete"));
    std::fs::rename(&m.dir, &deleted).unwrap();
    let r = run(ScanOptions::default()
        .with_deep(true)
        .with_compacted_topics([TOPIC]));
    assert_eq!(r.partitions.len(), 1);
    assert!(
        of_kind(&r, Kind::KeylessRecordOnCompactedTopic).is_empty(),
        "{:#?}",
        r.findings
    );
}
