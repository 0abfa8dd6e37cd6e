//! `TopicBasedRemoteLogMetadataManagerTest`'s remote log size methods, run by Kafka over
//! records a broker's manager published and its consumer read back: on disk, those records.

use super::{check, copied, metadata, replayed, storage};
use crate::kafka_quiet_tiered_cases::history;
use crate::kafka_remote_manager_cases::partition;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::remote_log::TieredLog;

/// `TopicBasedRemoteLogMetadataManagerTest.testRemoteLogSizeCalculationWithSegmentsOfTheSameEpoch`,
/// `…WithSegmentsOfDifferentEpochs` and `…WithSegmentsHavingNonExistentEpochs`: three
/// segments' COPY_SEGMENT_STARTED records and nothing more (Kafka's segments share their
/// boundary offsets 100 and 200; here they are [0,99], [100,199], [200,299]), in epoch 0, or
/// in epochs 0, 1 and 2. `remoteLogSize(epoch)` sums the epoch's listing, which holds copies
/// in flight (the sizes themselves are no verdict of klogscan's: it reads no
/// `retention.bytes`). A copy in flight serves nothing: no segment is copied, the local log
/// still starts at 0 (local retention deletes only what was copied), and the two copies a
/// later copy followed without finishing are unfinished (warnings: no finished copy holds
/// their offsets); the last is in flight, not reported. Near miss: the three finish and local
/// retention removes them: all served, nothing reported.
#[test]
fn copies_started_and_never_finished_are_listed_but_serve_nothing() {
    for epochs in [[0, 0, 0], [0, 1, 2]] {
        let build = |finish: bool| {
            let e = |i: usize| epochs[i];
            let layout: [&[(i32, usize)]; 4] = [
                &[(e(0), 100)],
                &[(e(1), 100)],
                &[(e(2), 100)],
                &[(e(2), 10)],
            ];
            let mut t = TieredLog::new(partition(&layout));
            for i in 0..3 {
                let r = t.copy_started(i);
                if finish {
                    t.copy_finished(r);
                }
            }
            t.local_from(if finish { 3 } else { 0 });
            t.log_start(0);
            check(vec![t], |_| {})
        };
        let c = build(false);
        assert_eq!(
            metadata(&c),
            vec![
                (Kind::RemoteCopyUnfinished, 0, Severity::Warning),
                (Kind::RemoteCopyUnfinished, 100, Severity::Warning)
            ],
            "{epochs:?}"
        );
        assert_eq!(copied(&c), vec![]);
        assert_eq!(replayed(&c), (0, None, None));
        let c = build(true);
        assert_eq!(metadata(&c), vec![], "{epochs:?}");
        assert_eq!(copied(&c), vec![(0, 99), (100, 199), (200, 299)]);
        assert_eq!(replayed(&c), (3, Some(0), Some(299)));
    }
}

/// `TopicBasedRemoteLogMetadataManagerTest.testRemoteLogSizeCalculationForUnknownTopicIdPartitionThrows`:
/// the manager knows no partition of that topic id. On disk: `orders-0`'s copies recorded
/// under another topic id (an earlier `orders`, deleted and created again; its objects under
/// that id's directory): none of them is the replica's, whose `partition.metadata` names its
/// own id — the replica is not known to be tiered, and its log start below its local log
/// start gives no gap (the records of its own id may be in a metadata partition the inputs
/// lack: `RemoteLogMetadataTopicPartitioner` hashes the topic id). Near miss: the same
/// records under the replica's own id: its segments, copied and served.
#[test]
fn records_under_another_topic_id_are_not_the_replicas() {
    let other = [0x0d; 16];
    let build = |other_id: bool| {
        let mut t = history();
        for i in 0..2 {
            let mut s = t.remote_segment(i);
            if other_id {
                s.topic_id = other;
            }
            let r = t.copy_started_as(s, i);
            t.copy_finished(r);
        }
        t.local_from(2);
        t.log_start(0);
        check(vec![t], |d| {
            let dir = |id: &[u8; 16]| {
                d.join("remote/kafka-tiered-storage")
                    .join(format!("orders-0-{}", uuid_text(id)))
            };
            if other_id {
                std::fs::rename(dir(&topic_id_for("orders")), dir(&other)).unwrap();
            }
        })
    };
    let c = build(false);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19), (20, 39)]);
    assert_eq!(replayed(&c), (2, Some(0), Some(39)));
    let c = build(true);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    assert!(c.part(0, false).tiered.is_none());
}
