//! `RemoteLogMetadataSerdeTest`, `RemoteLogMetadataTransformTest` and the three
//! `serialization/*TransformTest`s: each round-trips one record through Kafka's serde. On
//! disk, that record among a partition's others: what the metadata consumer makes of it once
//! deserialized, and of a near miss it cannot deserialize or apply.

use super::{check, copied, gap, metadata, one, replayed, storage};
use crate::kafka_quiet_tiered_cases::{check_written, history};
use crate::kafka_remote_manager_cases::partition;
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::remote_log::{self, RemoteLogMetadata};
use klogscan::testkit::aiven::{AivenLayout, encode_custom_metadata, main_path, write_aiven};
use klogscan::testkit::remote_log::{
    COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED, DELETE_PARTITION_MARKED, DELETE_PARTITION_STARTED,
    TieredLog, encode_partition_delete, encode_segment_metadata, encode_segment_snapshot,
    encode_segment_update,
};

/// `orders-0`: [0,100] in one segment — epoch 0 from 0, 1 from 20, 2 from 80 (the epochs of
/// the Kafka tests' segment) — then [101,110] in epoch 2.
fn three_epochs() -> TieredLog {
    TieredLog::new(partition(&[&[(0, 20), (1, 60), (2, 21)], &[(2, 10)]]))
}

/// `RemoteLogMetadataSerdeTest.testRemoteLogSegmentMetadataSerde`,
/// `RemoteLogMetadataTransformTest.testRemoteLogSegmentMetadataTransform`: a
/// `RemoteLogSegmentMetadataRecord` of [0,100] with the epochs {0: 0, 1: 20, 2: 80}, broker 1,
/// no max timestamp (-1), custom metadata `00 01 02 03`, COPY_SEGMENT_STARTED; then its
/// COPY_SEGMENT_FINISHED. The cache holds it copied and serves 0..=100, each offset in its own
/// epoch's map: no gap, the replay reads it whole. Near misses: the same record with the
/// epoch-1 entry left out (the segment puts 20..=79 in epoch 0, the replica's lineage in 1:
/// the lookup in epoch 1's map finds nothing — a gap, the segment outside the lineage, and
/// the object's batches' epochs differ from the metadata's); and with no epoch at all, which
/// `RemoteLogSegmentMetadata`'s constructor rejects ("segmentLeaderEpochs can not be null or
/// empty"): the consumer stops there, the copy's FINISHED after it is never applied and the
/// cache holds nothing of `orders-0`.
#[test]
fn a_segment_of_three_epochs_with_custom_metadata_is_served_in_each() {
    let build = |epochs: Option<Vec<(i32, i64)>>| {
        let mut t = three_epochs();
        t.broker(1);
        let mut s = t.remote_segment(0);
        s.max_timestamp_ms = -1;
        s.custom_metadata = Some(vec![0, 1, 2, 3]);
        match epochs {
            Some(e) => {
                s.leader_epochs = e;
                let r = t.copy_started_as(s, 0);
                t.copy_finished(r);
            }
            None => {
                s.leader_epochs.clear();
                let v = encode_segment_metadata(&s, 1, 1, COPY_SEGMENT_STARTED);
                t.raw_event(v);
                t.raw_event(encode_segment_update(&s, 1, 2, None, COPY_SEGMENT_FINISHED));
            }
        }
        t.broker(0);
        t.local_from(1);
        t.log_start(0);
        check(vec![t], |_| {})
    };
    let c = build(Some(vec![(0, 0), (1, 20), (2, 80)]));
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 100)]);
    assert_eq!(replayed(&c), (1, Some(0), Some(100)));

    let c = build(Some(vec![(0, 0), (2, 80)]));
    assert_eq!(copied(&c), vec![(0, 100)]);
    assert_eq!(gap(&c), (20, 79));
    let kinds: Vec<Kind> = metadata(&c).into_iter().map(|f| f.0).collect();
    assert!(
        kinds.contains(&Kind::RemoteSegmentAbandonedLineage),
        "{kinds:?}"
    );
    assert_eq!(
        storage(&c),
        vec![(Kind::RemoteSegmentMismatch, 0, Severity::Error)]
    );

    let c = build(None);
    let u = one(&c, Kind::RemoteMetadataUndecodable);
    assert_eq!(u.offset, Some(0));
    let why = "segmentLeaderEpochs can not be null or empty";
    assert!(u.message.contains(why), "{}", u.message);
    // No record of `orders-0` was applied: its replica is not known to be tiered, and the
    // stopped consumer is the one cause said (no gap beside it).
    assert!(c.part(0, false).tiered.is_none());
    assert_eq!(metadata(&c), vec![(u.kind, 0, Severity::Error)]);
}

/// `RemoteLogMetadataSerdeTest.testRemoteLogSegmentMetadataUpdateSerde`,
/// `RemoteLogMetadataTransformTest.testRemoteLogSegmentMetadataUpdateTransform` and
/// `serialization.RemoteLogSegmentMetadataUpdateTransformTest.testToAndFromMessage`: a
/// `RemoteLogSegmentMetadataUpdateRecord` COPY_SEGMENT_FINISHED from broker 2 whose custom
/// metadata is `00 01 02 03`, empty, or absent (the record keeps the three apart: null is
/// absent, zero bytes are an empty value). After each segment's COPY_SEGMENT_STARTED it
/// finishes the copy: [0,19] and [20,39] copied and served, nothing reported. Near misses:
/// the update's state byte 4, which `RemoteLogSegmentState.forId` does not know ("state can
/// not be null": the consumer stops, nothing is copied); and
/// `serialization.RemoteLogSegmentMetadataTransformTest.testToAndFromMessage`'s record — the
/// whole metadata in one `RemoteLogSegmentMetadataRecord` already COPY_SEGMENT_FINISHED —
/// which deserializes but which `RemoteLogMetadataCache.addCopyInProgressSegment` refuses
/// (a segment's first state must be COPY_SEGMENT_STARTED): the consumer of the brokers
/// hosting `orders-0` stops there.
#[test]
fn an_update_carrying_custom_metadata_finishes_the_copy() {
    for custom in [Some(vec![0u8, 1, 2, 3]), Some(vec![]), None] {
        let mut t = history();
        t.broker(2);
        for i in 0..2 {
            let s = t.remote_segment(i);
            t.copy_started_as(s.clone(), i);
            let v = encode_segment_update(&s, 2, 123, custom.as_deref(), COPY_SEGMENT_FINISHED);
            let Ok(RemoteLogMetadata::Update(u)) = remote_log::decode(&v) else {
                panic!("an update record")
            };
            assert_eq!((u.custom_metadata, u.broker_id), (custom.as_deref(), 2));
            t.raw_event(v);
        }
        t.broker(0);
        t.local_from(2);
        let c = check(vec![t], |_| {});
        assert_eq!(metadata(&c), vec![], "{custom:?}");
        assert_eq!(storage(&c), vec![], "{custom:?}");
        assert_eq!(copied(&c), vec![(0, 19), (20, 39)]);
        assert_eq!(replayed(&c), (2, Some(0), Some(39)));
    }

    let mut t = history();
    let s = t.remote_segment(0);
    t.copy_started_as(s.clone(), 0);
    let mut v = encode_segment_update(&s, 2, 123, None, COPY_SEGMENT_FINISHED);
    let n = v.len();
    v[n - 2] = 4; // the state, before the tagged fields
    t.raw_event(v);
    t.local_from(1);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    let u = one(&c, Kind::RemoteMetadataUndecodable);
    assert_eq!(u.offset, Some(1));
    assert!(u.message.contains("state can not be null"), "{}", u.message);
    assert_eq!(copied(&c), vec![]);

    let mut t = history();
    let s = t.remote_segment(0);
    t.raw_event(encode_segment_metadata(&s, 0, 0, COPY_SEGMENT_FINISHED));
    t.local_from(1);
    t.log_start(0);
    let c = check(vec![t], |_| {});
    let stop = one(&c, Kind::RemoteMetadataConsumerStopped);
    assert_eq!(stop.offset, Some(0));
    assert_eq!(copied(&c), vec![]);
    assert_eq!(gap(&c), (0, 19));
}

/// `RemoteLogMetadataSerdeTest.testRemotePartitionDeleteMetadataSerde` (DELETE_PARTITION_MARKED
/// from broker 0) and `RemoteLogMetadataTransformTest.testRemoteLogPartitionMetadataTransform`
/// (DELETE_PARTITION_STARTED from broker 1): `orders` is being deleted, its two remote
/// segments not yet. The records read; the cache changes no segment on them
/// (`RemotePartitionMetadataStore.handleRemotePartitionDeleteMetadata` keeps the state for
/// the partition): both segments still copied and served, nothing reported. Near miss: the
/// state byte 3, which `RemotePartitionDeleteState.forId` does not know: the constructor's
/// null check throws (its message is "null") and the consumer stops.
#[test]
fn partition_delete_states_read_and_leave_the_segments() {
    let build = |states: &[i8]| {
        let mut t = history();
        t.copy(0);
        t.copy(1);
        for (b, &s) in states.iter().enumerate() {
            t.broker(b as i32);
            t.partition_delete(s);
        }
        t.broker(0);
        t.local_from(2);
        check(vec![t], |_| {})
    };
    let c = build(&[DELETE_PARTITION_MARKED, DELETE_PARTITION_STARTED]);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19), (20, 39)]);
    assert_eq!(replayed(&c), (2, Some(0), Some(39)));

    let c = build(&[DELETE_PARTITION_MARKED, 3]);
    let u = one(&c, Kind::RemoteMetadataUndecodable);
    assert_eq!(
        (u.offset, u.evidence["error"].as_str()),
        (Some(5), Some("null"))
    );
    let v = encode_partition_delete("orders", &[1; 16], 0, 0, 0, DELETE_PARTITION_STARTED);
    assert!(remote_log::decode(&v).is_ok());
}

/// `RemoteLogMetadataSerdeTest.testInvalidRemoteStorageMetadata`: the serializer refuses a
/// class it has no transform for, so no record of it is written. The reader's side of it: a
/// record whose api key no transform takes (4, `MetadataRecordType.fromId` throws "Unknown
/// metadata id"), or whose version the message does not have (1: "Can't read version",
/// wrapped as "Failed to deserialize record with type 1"), between a copy's STARTED and its
/// FINISHED: the consumer stops at it, the FINISHED is never applied, and 0..=19 are not
/// served. Near miss: the same bytes as api key 1, version 0 — an update finishing a
/// second segment's copy, which its STARTED did not precede (ignored, logged) — and the
/// copy finishes: quiet.
#[test]
fn an_unknown_api_key_or_version_stops_the_consumer() {
    let build = |api_key: u8, version: u8| {
        let mut t = history();
        let s = t.remote_segment(0);
        let r = t.copy_started_as(s, 0);
        let other = t.remote_segment(1);
        let mut v = encode_segment_update(&other, 0, 0, None, COPY_SEGMENT_FINISHED);
        (v[1], v[2]) = (api_key, version);
        t.raw_event(v);
        t.copy_finished(r);
        t.local_from(1);
        t.log_start(0);
        check(vec![t], |_| {})
    };
    for (key, version, why) in [
        (4, 0, "Unknown metadata id 4"),
        (1, 1, "Failed to deserialize record with type 1"),
    ] {
        let c = build(key, version);
        let u = one(&c, Kind::RemoteMetadataUndecodable);
        assert_eq!(u.offset, Some(1));
        assert!(u.message.contains(why), "{}", u.message);
        assert_eq!(copied(&c), vec![]);
        assert_eq!(gap(&c), (0, 19));
    }
    let c = build(1, 0);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19)]);
}

/// `serialization.RemoteLogSegmentMetadataSnapshotTransformTest.testToAndFromMessage`: a
/// `RemoteLogSegmentMetadataSnapshotRecord` (api key 3; custom metadata `00 01 02 03`, empty
/// or absent) round-trips — it is what the 3.6–3.7 `remote_log_snapshot` file holds. Written
/// to the topic, between a copy's STARTED and FINISHED, it deserializes, but the record has
/// no user partition: `ConsumerTask.shouldProcess` asks it for one
/// (`RemoteLogSegmentMetadataSnapshot.topicIdPartition` throws
/// `UnsupportedOperationException`) and the consumer task closes on every broker consuming
/// the metadata partition; the FINISHED is never applied. Near miss: the same segment in a
/// `remote_log_snapshot` file, its place, with no topic in the inputs: restored, copied and
/// served. (Was a divergence: the replay skipped the record and applied the FINISHED.)
#[test]
fn a_snapshot_record_on_the_topic_stops_every_consumer() {
    for custom in [Some(vec![0u8, 1, 2, 3]), Some(vec![]), None] {
        let mut t = history();
        let mut s = t.remote_segment(0);
        s.custom_metadata = custom.clone();
        let r = t.copy_started_as(s.clone(), 0);
        let v = encode_segment_snapshot(&s, 0, 0, COPY_SEGMENT_FINISHED);
        let Ok(RemoteLogMetadata::Snapshot(m)) = remote_log::decode(&v) else {
            panic!("a snapshot record")
        };
        assert_eq!(m.custom_metadata, custom.as_deref());
        t.raw_event(v);
        t.copy_finished(r);
        t.local_from(1);
        t.log_start(0);
        let c = check(vec![t], |_| {});
        let u = one(&c, Kind::RemoteMetadataUndecodable);
        assert_eq!(u.offset, Some(1));
        assert!(
            u.message.contains("names no user partition")
                && u.message.contains("UnsupportedOperationException"),
            "{}",
            u.message
        );
        assert_eq!(copied(&c), vec![]);
        assert_eq!(gap(&c), (0, 19));
    }
    let mut t = history();
    t.copy(0);
    t.local_from(1);
    t.log_start(0);
    t.remote_log_snapshot(false);
    let c = check(vec![t], |_| {});
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19)]);
    assert_eq!(replayed(&c), (1, Some(0), Some(19)));
}

/// The messages' tagged fields (`flexibleVersions` 0+ in every schema; what
/// `RemoteLogMetadataTransformTest.testRemoteLogSegmentMetadataTransform`'s round trip
/// carries): the segment record's tag 0 `TxnIndexEmpty` (4.0+) and an unknown tag 7 of two
/// bytes on the update — the generated readers keep unknown tags aside — read past: the copy
/// is finished and served, nothing reported. Near miss: tag 0 declared two bytes long; the
/// reader takes one for the boolean and the other is left after the message ("Found 1
/// byte(s) of garbage"; klogscan names the tag's size): undecodable, the consumer stops.
#[test]
fn tagged_fields_known_and_unknown_are_read_past() {
    let build = |bad_tag: bool| {
        let mut t = history();
        let mut s = t.remote_segment(0);
        s.txn_index_empty = Some(true);
        let mut v = encode_segment_metadata(&s, 0, 0, COPY_SEGMENT_STARTED);
        if bad_tag {
            v.truncate(v.len() - 4);
            v.extend([1, 0, 2, 1, 0]);
        }
        t.copy_started_as(s.clone(), 0);
        t.raw_event(v);
        let mut u = encode_segment_update(&s, 0, 1, None, COPY_SEGMENT_FINISHED);
        u.pop();
        u.extend([1, 7, 2, 0xab, 0xcd]);
        t.raw_event(u);
        t.local_from(1);
        t.log_start(0);
        check(vec![t], |_| {})
    };
    let c = build(false);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(copied(&c), vec![(0, 19)]);
    assert_eq!(replayed(&c), (1, Some(0), Some(19)));
    let c = build(true);
    let u = one(&c, Kind::RemoteMetadataUndecodable);
    assert_eq!(u.offset, Some(1));
}

/// `serialization.RemoteLogSegmentMetadataUpdateTransformTest.testToAndFromMessage` with
/// `Optional.empty()`: an update without custom metadata. The cache applies an update through
/// `RemoteLogSegmentMetadata.createWithUpdates`, which takes the update's custom metadata as
/// it is: a COPY_SEGMENT_FINISHED repeated without it (a retried publish) leaves the segment
/// none. In the Aiven plugin's layout the custom metadata names where the objects are (tag 2
/// `object_key`, here `moved/seg-1`, not the key the segment's identity gives): with none,
/// `ObjectKeyFactory.key` builds the identity's key and the fetch finds nothing —
/// `remote_segment_missing`. Near miss: the repeated FINISHED carrying the custom metadata
/// again: the objects are found, quiet. (Was a divergence: the replay kept the earlier custom
/// metadata when an update carried none.)
#[test]
fn custom_metadata_is_the_latest_updates() {
    let custom = encode_custom_metadata(Some(1234), None, Some("moved/seg-1"));
    let build = |again: Option<&[u8]>| {
        let dir = tempfile::tempdir().unwrap();
        let mut t = history();
        let seg = t.remote_segment(0);
        t.copy_started_as(seg.clone(), 0);
        for (ts, custom) in [(1, Some(custom.as_slice())), (2, again)] {
            t.raw_event(encode_segment_update(
                &seg,
                0,
                ts,
                custom,
                COPY_SEGMENT_FINISHED,
            ));
        }
        t.local_from(1);
        t.log_start(0);
        let m = t.write(dir.path()).unwrap();
        let bucket = dir.path().join("bucket");
        write_aiven(&m, &bucket, &AivenLayout::default()).unwrap();
        for suffix in [".log", ".indexes", ".rsm-manifest"] {
            let from = bucket.join(format!("{}{suffix}", main_path(&seg)));
            let to = bucket.join(format!("moved/seg-1{suffix}"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(from, to).unwrap();
        }
        std::fs::remove_dir_all(&m.remote_root).unwrap();
        std::fs::rename(&bucket, &m.remote_root).unwrap();
        check_written(dir, vec![m])
    };
    let c = build(Some(&custom));
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(storage(&c), vec![]);
    assert_eq!(replayed(&c), (1, Some(0), Some(19)));
    let c = build(None);
    assert_eq!(metadata(&c), vec![]);
    assert_eq!(
        storage(&c),
        vec![(Kind::RemoteSegmentMissing, 0, Severity::Error)]
    );
}
