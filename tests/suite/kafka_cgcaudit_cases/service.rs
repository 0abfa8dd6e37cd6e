//! `ConsumerGroupServiceTest` (the trunk successor of `ConsumerGroupCommandTest`): the
//! admin calls behind `--describe`.

use super::*;
use crate::kafka_groupaudit_cases::commit;

/// The groups' committed offsets the HTML timeline marks on one partition.
type Marks = Vec<(String, i64)>;

/// `ConsumerGroupServiceTest.testAdminRequestsForDescribeNegativeOffsets`: the coordinator
/// stores a commit's offset as sent (`OffsetMetadataManager` checks none), and answers
/// OffsetFetch with it; the admin reads a negative committed offset as no committed offset
/// (`ListConsumerGroupOffsetsHandler.handleResponse`), so the describe prints no
/// CURRENT-OFFSET and no LAG (`getLag` needs an offset) — the LOG-END-OFFSET still. A
/// commit of -1 (Java's `OffsetAndMetadata` refuses one; the protocol carries it) is listed
/// with its offset as written and no lag, and no finding rests on it. Near miss: a commit
/// of 0 lags by the whole high watermark.
#[test]
fn a_negative_committed_offset_has_no_lag() {
    for offset in [-1, 0] {
        let mut c = Coord::new();
        c.batch(
            "g",
            vec![commit("g", "foo", 0, offset), commit("g", "foo", 1, 100)],
        );
        let b = Broker::write(
            vec![data("foo", 0, 100), data("foo", 1, 100)],
            &[("foo", 0, 100), ("foo", 1, 100)],
            &c,
        );
        let v = b.consumers(&[]);
        let foo_0 = match offset {
            -1 => row("foo", 0, None, Some(100), None),
            _ => row("foo", 0, Some(0), Some(100), Some(100)),
        };
        assert_eq!(
            describe(&v, "g"),
            [foo_0, row("foo", 1, Some(100), Some(100), Some(0))]
        );
        let r = &rows(&v)[0];
        assert_eq!(r["committed_offset"], offset);
        assert_eq!(r["lag_last_stable"].as_i64(), (offset >= 0).then_some(100));
        assert_eq!(r["lag_log_end"].as_i64(), (offset >= 0).then_some(100));
        assert!(kinds(&v).is_empty(), "{v:#}");
        // The HTML timelines mark positions only: no diamond at -1.
        let opts = klogscan::results::ScanOptions::default();
        let inv = klogscan::discover::layout::discover(&[b.dir.path().to_path_buf()]);
        let report = klogscan::pipeline::analyse(&inv, &opts);
        let marks: Vec<(String, i32, Marks)> = (report.partitions.iter())
            .zip(klogscan::cluster::consumers::committed_positions(&report))
            .filter(|(p, m)| p.topic == "foo" && !m.is_empty())
            .map(|(p, m)| (p.topic.clone(), p.partition, m))
            .collect();
        let mut want = vec![("foo".to_string(), 1, vec![("g".to_string(), 100)])];
        if offset == 0 {
            want.insert(0, ("foo".to_string(), 0, vec![("g".to_string(), 0)]));
        }
        assert_eq!(marks, want);
    }
}

/// `ConsumerGroupServiceTest.testAdminRequestsForDescribeOffsets`: the describe asks
/// `ListOffsets` for the latest offset with default `ListOffsetsOptions`, whose isolation
/// level is `READ_UNCOMMITTED`, so the broker answers the high watermark
/// (`Partition.fetchOffsetForTimestamp`: the last stable offset only for `READ_COMMITTED`).
/// foo-0 holds 10 plain records and an open transaction of 5 (a minute old: not hanging)
/// under the high watermark 15: a group at 8 lags 7 in the describe (`lag_high_watermark`)
/// though a `read_committed` consumer has only 2 to read (`lag_last_stable`). Near miss: the
/// transaction committed (its marker at 15): both lags are 8.
#[test]
fn the_describes_end_is_the_high_watermark_not_the_last_stable_offset() {
    for committed in [false, true] {
        let txn = Producer::transactional(7, 0);
        let mut p = PartitionBuilder::new("foo", 0).start_time(NOW - 60_000);
        p.append(Batch::new(Producer::PLAIN).records(10));
        p.append(Batch::new(txn).records(5));
        if committed {
            p.commit(txn, 0);
        }
        let end = p.log_end_offset();
        let mut c = Coord::new();
        c.batch("g", vec![commit("g", "foo", 0, 8)]);
        let b = Broker::write(vec![p], &[("foo", 0, end)], &c);
        let v = b.consumers(&[]);
        assert_eq!(
            describe(&v, "g"),
            [row("foo", 0, Some(8), Some(end), Some(end - 8))]
        );
        let r = &rows(&v)[0];
        let lso = if committed { 16 } else { 10 };
        assert_eq!(r["data"]["last_stable_offset"], lso);
        assert_eq!(r["lag_last_stable"], lso - 8);
        assert!(kinds(&v).is_empty(), "{v:#}");
    }
}
