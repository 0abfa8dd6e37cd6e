//! `ConsumerGroupServiceTest` (the trunk successor of `ConsumerGroupCommandTest`): the
//! admin calls behind `--describe`.

use super::*;
use crate::kafka_groupaudit_cases::commit;

/// `ConsumerGroupServiceTest.testAdminRequestsForDescribeNegativeOffsets`: the coordinator
/// stores a commit's offset as sent (`OffsetMetadataManager` checks none), and answers
/// OffsetFetch with it; the admin reads a negative committed offset as no committed offset
/// (`ListConsumerGroupOffsetsHandler.handleResponse`), so the describe prints no
/// CURRENT-OFFSET and no LAG (`getLag` needs an offset) — the LOG-END-OFFSET still. A
/// commit of -1 (which clients other than Java's can send) is listed with its offset as
/// written and no lag, and no finding rests on it. Near miss: a commit of 0 lags by the
/// whole high watermark.
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
    }
}
