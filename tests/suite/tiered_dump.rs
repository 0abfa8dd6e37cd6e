//! `klogscan dump --remote-log-metadata-decoder` on `__remote_log_metadata` segments written
//! by the testkit, against the lines Kafka's own tests expect (`DumpLogSegmentsTest`'s
//! remote-log-metadata cases, `RemoteLogMetadataFormatterTest`), and the testkit's encoder
//! against the format layer's decoder.
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::read::format::remote_log::{self, RemoteLogMetadata, SegmentState};
use klogscan::testkit::files::uuid_text;
use klogscan::testkit::remote_log::{
    COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED, DELETE_PARTITION_MARKED, RemoteSegment,
    encode_partition_delete, encode_segment_metadata, encode_segment_snapshot,
    encode_segment_update, segment_uuid,
};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::path::PathBuf;

const TOPIC_ID: [u8; 16] = [7; 16];

fn value(v: Vec<u8>) -> Rec {
    Rec {
        value: Some(v),
        ..Rec::default()
    }
}

/// One `__remote_log_metadata-0` segment holding `batches` (each a list of values).
fn segment(dir: &std::path::Path, batches: Vec<Vec<Vec<u8>>>) -> PathBuf {
    let mut p = PartitionBuilder::new("__remote_log_metadata", 0);
    for b in batches {
        let mut batch = Batch::new(Producer::PLAIN);
        for v in b {
            batch = batch.record(value(v));
        }
        p.append(batch);
    }
    p.write(dir).unwrap().segments[0].1.clone()
}

fn dump(path: PathBuf) -> String {
    let opts = DumpOptions {
        remote_log_metadata_decoder: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    dump_paths(&[path], &opts, &mut out, &mut err).unwrap();
    String::from_utf8(out).unwrap()
}

fn delete_marked() -> Vec<u8> {
    encode_partition_delete("foo", &TOPIC_ID, 0, 0, 0, DELETE_PARTITION_MARKED)
}

fn seg(custom: Option<Vec<u8>>) -> RemoteSegment {
    RemoteSegment {
        topic: "foo".into(),
        topic_id: TOPIC_ID,
        partition: 0,
        id: segment_uuid(9),
        start_offset: 0,
        end_offset: 100,
        max_timestamp_ms: -1,
        leader_epochs: vec![(0, 0), (1, 20), (2, 80)],
        size: 1024,
        custom_metadata: custom,
        txn_index_empty: None,
    }
}

// DumpLogSegmentsTest.testDumpRemoteLogMetadataOneRecordOneBatch
#[test]
fn one_record_one_batch() {
    let d = tempfile::tempdir().unwrap();
    let out = dump(segment(d.path(), vec![vec![delete_marked()]]));
    let tid = uuid_text(&TOPIC_ID);
    assert!(out.contains("Log starting offset: 0"));
    assert_eq!(out.matches("baseOffset:").count(), 1);
    assert_eq!(out.matches("payload:").count(), 1);
    assert!(out.contains(&format!(
        "payload: RemotePartitionDeleteMetadata{{topicPartition={tid}:foo-0, state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}}"
    )));
    // No key: the parser returns none for these records.
    assert!(!out.contains("key:"));
}

// DumpLogSegmentsTest.testDumpRemoteLogMetadataMultipleRecordsOneBatch / …MultipleBatches
#[test]
fn multiple_records_and_batches() {
    let d = tempfile::tempdir().unwrap();
    let s = seg(None);
    let update = encode_segment_update(&s, 0, 0, Some(&[0, 1, 2, 3]), COPY_SEGMENT_FINISHED);
    let batch = vec![update, delete_marked()];
    let out = dump(segment(d.path(), vec![batch.clone(), batch]));
    let tid = uuid_text(&TOPIC_ID);
    let sid = uuid_text(&s.id);
    assert_eq!(out.matches("baseOffset:").count(), 2);
    assert_eq!(out.matches("payload:").count(), 4);
    let update_text = format!(
        "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={tid}:foo-0, id={sid}}}, customMetadata=Optional[CustomMetadata{{4 bytes}}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=0, brokerId=0}}"
    );
    assert_eq!(out.matches(&update_text).count(), 2);
}

// DumpLogSegmentsTest.testDumpRemoteLogMetadataWithCorruption
#[test]
fn corrupted_value() {
    let d = tempfile::tempdir().unwrap();
    let out = dump(segment(d.path(), vec![vec![b"corrupted".to_vec()]]));
    assert_eq!(out.matches("payload:").count(), 1);
    assert!(out.contains(
        "payload: Error at offset 0, skipping. Could not deserialize metadata record due to unknown frame version 99(only frame version 1 is supported)"
    ));
}

// RemoteLogMetadataFormatterTest.testFormat (Kafka 4.x's toString, with txnIdxEmpty)
#[test]
fn segment_metadata_text() {
    let d = tempfile::tempdir().unwrap();
    let s = seg(Some(vec![0; 10]));
    let out = dump(segment(
        d.path(),
        vec![vec![encode_segment_metadata(
            &s,
            1,
            123,
            COPY_SEGMENT_STARTED,
        )]],
    ));
    let expected = format!(
        "RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={}:foo-0, id={}}}, startOffset=0, endOffset=100, brokerId=1, maxTimestampMs=-1, eventTimestampMs=123, segmentLeaderEpochs={{0=0, 1=20, 2=80}}, segmentSizeInBytes=1024, customMetadata=Optional[CustomMetadata{{10 bytes}}], state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}}",
        uuid_text(&TOPIC_ID),
        uuid_text(&s.id)
    );
    assert!(out.contains(&expected), "{out}");
}

/// What `RemoteLogSegmentMetadata`'s constructor rejects is an error line, not a payload.
#[test]
fn rejected_values_print_kafka_messages() {
    let d = tempfile::tempdir().unwrap();
    let mut bad = seg(None);
    bad.end_offset = -5;
    let mut no_epochs = seg(None);
    no_epochs.leader_epochs.clear();
    let out = dump(segment(
        d.path(),
        vec![vec![
            encode_segment_metadata(&bad, 0, 0, COPY_SEGMENT_STARTED),
            encode_segment_metadata(&no_epochs, 0, 0, COPY_SEGMENT_STARTED),
            encode_segment_metadata(&seg(None), 0, 0, 9),
        ]],
    ));
    assert!(out.contains("Error at offset 0, skipping. Unexpected end offset = -5. EndOffset for a remote segment cannot be less than startOffset = 0"));
    assert!(
        out.contains("Error at offset 1, skipping. segmentLeaderEpochs can not be null or empty")
    );
    assert!(out.contains("Error at offset 2, skipping. state can not be null"));
}

/// The testkit's encoder and the format layer's decoder agree on every field.
#[test]
fn encoder_and_decoder_agree() {
    let mut s = seg(Some(vec![1, 2]));
    s.txn_index_empty = Some(true);
    let v = encode_segment_metadata(&s, 3, 44, COPY_SEGMENT_STARTED);
    let RemoteLogMetadata::Segment(m) = remote_log::decode(&v).unwrap() else {
        panic!("not a segment record");
    };
    assert_eq!(m.segment.partition.topic, b"foo");
    assert_eq!(m.segment.partition.topic_id, TOPIC_ID);
    assert_eq!(m.segment.id, s.id);
    assert_eq!((m.start_offset, m.end_offset, m.broker_id), (0, 100, 3));
    assert_eq!((m.max_timestamp_ms, m.event_timestamp_ms), (-1, 44));
    assert_eq!(m.leader_epochs.iter().collect::<Vec<_>>(), s.leader_epochs);
    assert_eq!(m.segment_size_in_bytes, 1024);
    assert_eq!(m.custom_metadata, Some(&[1u8, 2][..]));
    assert_eq!(
        SegmentState::from_id(m.state),
        Some(SegmentState::CopyStarted)
    );
    assert!(m.txn_index_empty);
    let v = encode_segment_snapshot(&s, 3, 44, COPY_SEGMENT_FINISHED);
    let RemoteLogMetadata::Snapshot(m) = remote_log::decode(&v).unwrap() else {
        panic!("not a snapshot record");
    };
    assert_eq!((m.segment.id, m.end_offset), (s.id, 100));
    // Every prefix of a valid value is an error, never a panic.
    for cut in 0..v.len() {
        assert!(remote_log::decode(&v[..cut]).is_err());
    }
}

/// A 3.6–3.7 `remote_log_snapshot` file: its header, then each entry as
/// `RemoteLogSegmentMetadataSnapshot.toString()`; a wrong entry count is a problem.
#[test]
fn remote_log_snapshot_file() {
    use klogscan::testkit::remote_log::encode_remote_log_snapshot;
    let d = tempfile::tempdir().unwrap();
    let s = seg(None);
    let entry = encode_segment_snapshot(&s, 1, 5, COPY_SEGMENT_FINISHED);
    let path = d.path().join("remote_log_snapshot");
    std::fs::write(
        &path,
        encode_remote_log_snapshot(7, 42, std::slice::from_ref(&entry)),
    )
    .unwrap();
    let opts = DumpOptions::default();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let st = dump_paths(std::slice::from_ref(&path), &opts, &mut out, &mut err).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(!st.has_problems(), "{}", String::from_utf8_lossy(&err));
    assert!(out.contains("version: 0 metadataPartition: 7 metadataPartitionOffset: 42 entries: 1"));
    assert!(out.contains(&format!(
        "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset=0, endOffset=100, maxTimestampMs=-1, segmentLeaderEpochs={{0=0, 1=20, 2=80}}, segmentSizeInBytes=1024, customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED}}",
        uuid_text(&s.id)
    )));
    // The header announces two entries, the file holds one.
    let mut bytes = encode_remote_log_snapshot(7, 42, &[entry]);
    bytes[17] = 2;
    std::fs::write(&path, bytes).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let st = dump_paths(&[path], &opts, &mut out, &mut err).unwrap();
    assert!(st.has_problems());
    assert!(
        String::from_utf8(err)
            .unwrap()
            .contains("Unexpected entries in the snapshot file. Expected size: 2, but found: 1")
    );
}
