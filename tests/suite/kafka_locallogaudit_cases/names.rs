//! `LocalLogTest.testParseTopicPartitionNameWithPeriodForDeletedTopic`,
//! `testParseTopicPartitionNameForMissingSeparator`, `…ForMissingTopic`,
//! `…ForMissingPartition`, `…ForInvalidPartition`, `…ForExistingInvalidDir` and
//! `testLogDeleteDirName`: a partition directory's name as `LogManager.loadLogs` reads it.

use crate::kafka_ckaudit_cases::{Dir, log_of, of_kind};
use klogscan::finding::{CopyKind, Kind};
use klogscan::testkit::LogDirBuilder;

/// A log dir holding the log of `foo.bar-testtopic-42` under the directory name `name`.
fn under(name: &str) -> Dir {
    let d = Dir::write(LogDirBuilder::new(1).partition(log_of("foo.bar-testtopic", 42, 1, 2)));
    std::fs::rename(d.root.join("foo.bar-testtopic-42"), d.root.join(name)).unwrap();
    d
}

/// `testParseTopicPartitionNameWithPeriodForDeletedTopic` (KAFKA-5232) and
/// `testLogDeleteDirName`: a deleted topic whose name holds a period and a dash, renamed
/// `<topic>-<partition>.<uuid without dashes>-delete` (`LocalLog.logDeleteDirName`), is
/// parsed by `LocalLog.parseTopicPartitionName` as partition 42 of `foo.bar-testtopic` (the
/// last dash before the last period splits it): `LogManager.loadLog` loads it into
/// `logsToBeDeleted`, and the broker starts. Here: one partition, 42 of `foo.bar-testtopic`,
/// the `-delete` copy, a `delete_dir` leftover, no `foreign_directory`. Near misses: the
/// names the other `testParseTopicPartitionName*` methods refuse — no separator, no topic,
/// no partition, a partition that is no number, a foreign directory with and without the
/// `-delete` suffix — each make `parseTopicPartitionName` throw a `KafkaException` that
/// `loadLogs` rethrows (the broker does not start): `foreign_directory`, an error, and no
/// partition read.
#[test]
fn a_deleted_topic_with_a_period_parses_and_malformed_names_fail_the_start() {
    let d = under("foo.bar-testtopic-42.0123456789abcdef0123456789abcdef-delete");
    let v = d.verify();
    assert!(of_kind(&v, Kind::ForeignDirectory).is_empty());
    let parts: Vec<_> = (v.partitions.iter())
        .filter(|p| p.partition >= 0)
        .map(|p| (p.topic.as_str(), p.partition, p.source.copy))
        .collect();
    assert_eq!(parts, [("foo.bar-testtopic", 42, CopyKind::Delete)]);
    let p = &v.partitions.iter().find(|p| p.partition == 42).unwrap();
    assert!(
        p.prediction
            .leftovers
            .iter()
            .any(|l| l.kind == "delete_dir"),
        "{:#?}",
        p.prediction.leftovers
    );

    for bad in [
        "test_topic1999",
        "-1999",
        "test_topic-",
        "test_topic-1999a",
        "non_kafka_dir",
        "non_kafka_dir-delete",
    ] {
        let d = under(bad);
        let v = d.verify();
        let foreign = of_kind(&v, Kind::ForeignDirectory);
        assert_eq!(foreign.len(), 1, "{bad}: {foreign:#?}");
        assert!(foreign[0].message.contains(bad), "{}", foreign[0].message);
        assert!(
            v.partitions.iter().all(|p| p.partition < 0),
            "{bad}: {:#?}",
            v.partitions
        );
    }
}
