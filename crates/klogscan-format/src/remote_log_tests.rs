use super::*;

/// A `RemotePartitionDeleteMetadataRecord` value assembled by hand: frame 1, key 2,
/// version 0; topic "foo" (compact length 4), topic id 1..=16, partition 0, no tags;
/// broker 0; event time 0; state 0 (DELETE_PARTITION_MARKED); no tags.
fn partition_delete_bytes() -> Vec<u8> {
    let mut v = vec![1, 2, 0, 4, b'f', b'o', b'o'];
    v.extend(1u8..=16);
    v.extend([0, 0, 0, 0, 0]);
    v.extend([0, 0, 0, 0]);
    v.extend([0; 8]);
    v.extend([0, 0]);
    v
}

#[test]
fn partition_delete_reads() {
    let b = partition_delete_bytes();
    let RemoteLogMetadata::PartitionDelete(d) = decode(&b).unwrap() else {
        panic!("not a partition delete");
    };
    assert_eq!(d.partition.topic, b"foo");
    assert_eq!(d.partition.topic_id[0], 1);
    assert_eq!(d.partition.partition, 0);
    assert_eq!(
        PartitionDeleteState::from_id(d.state),
        Some(PartitionDeleteState::Marked)
    );
}

// DumpLogSegmentsTest.testDumpRemoteLogMetadataWithCorruption: the value "corrupted".
#[test]
fn corrupted_value_is_an_unknown_frame_version() {
    let e = decode(b"corrupted").unwrap_err();
    assert_eq!(e, RemoteMetadataError::UnknownFrameVersion(99));
    assert!(
        e.to_string()
            .starts_with("Could not deserialize metadata record")
    );
}

#[test]
fn frame_and_key_errors_read_as_kafka_words() {
    assert_eq!(
        decode(&[0]).unwrap_err().to_string(),
        "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."
    );
    assert_eq!(
        decode(&[1, 4, 0]).unwrap_err().to_string(),
        "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 4"
    );
    assert_eq!(
        decode(&[1, 2, 1]).unwrap_err().to_string(),
        "Failed to deserialize record with type 2"
    );
    let mut b = partition_delete_bytes();
    b.push(7);
    assert_eq!(
        decode(&b).unwrap_err().to_string(),
        "Found 1 byte(s) of garbage after 2"
    );
    let mut b = partition_delete_bytes();
    let n = b.len();
    b[n - 2] = 9; // unknown partition delete state
    assert_eq!(decode(&b).unwrap_err().to_string(), "null");
    // Truncated anywhere: an error, never a panic.
    let b = partition_delete_bytes();
    for cut in 0..b.len() {
        assert!(decode(&b[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn state_transitions_follow_remote_log_segment_state() {
    use SegmentState::*;
    assert!(SegmentState::is_valid_transition(None, CopyStarted));
    assert!(!SegmentState::is_valid_transition(None, CopyFinished));
    assert!(SegmentState::is_valid_transition(
        Some(CopyStarted),
        DeleteStarted
    ));
    assert!(SegmentState::is_valid_transition(
        Some(CopyFinished),
        CopyFinished
    ));
    assert!(!SegmentState::is_valid_transition(
        Some(CopyFinished),
        DeleteFinished
    ));
    assert!(!SegmentState::is_valid_transition(
        Some(DeleteFinished),
        CopyStarted
    ));
}

#[test]
fn remote_log_snapshot_file_frames() {
    assert!(parse_remote_log_snapshot(&[]).unwrap().is_none());
    assert_eq!(
        parse_remote_log_snapshot(&[0; 5]).unwrap_err(),
        SnapshotFileError::ShortHeader(5)
    );
    let mut h = vec![0, 1];
    h.extend([0; 16]);
    assert_eq!(
        parse_remote_log_snapshot(&h).unwrap_err(),
        SnapshotFileError::Version(1)
    );
    // Header announcing one entry, then an entry that is not a snapshot record.
    let mut f = vec![0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 1];
    let e = partition_delete_bytes();
    f.extend((e.len() as i32).to_be_bytes());
    f.extend(&e);
    let (header, entries) = parse_remote_log_snapshot(&f).unwrap().unwrap();
    assert_eq!(header.metadata_partition, 3);
    assert_eq!(header.metadata_partition_offset, 42);
    let items: Vec<_> = entries.collect();
    assert_eq!(
        items,
        vec![Err(SnapshotFileError::Entry {
            position: 18,
            error: None
        })]
    );
    // No entries where one is announced.
    let (_, entries) = parse_remote_log_snapshot(&f[..18]).unwrap().unwrap();
    assert_eq!(
        entries.collect::<Vec<_>>(),
        vec![Err(SnapshotFileError::Count {
            expected: 1,
            found: 0
        })]
    );
    // A length running past the end.
    let mut g = f[..18].to_vec();
    g.extend(100i32.to_be_bytes());
    let (_, mut entries) = parse_remote_log_snapshot(&g).unwrap().unwrap();
    assert!(matches!(
        entries.next(),
        Some(Err(SnapshotFileError::ShortEntry { length: 100, .. }))
    ));
}

#[test]
fn index_cache_names() {
    let id = "AAECAwQFBgcICQoLDA0ODw";
    let n = parse_remote_index_cache_name(&format!("120_{id}.timeindex")).unwrap();
    assert_eq!(n.start_offset, 120);
    assert_eq!(n.segment_id[1], 1);
    assert_eq!(n.kind, RemoteIndexKind::Time);
    assert!(!n.leftover);
    assert!(
        parse_remote_index_cache_name(&format!("0_{id}.index.deleted"))
            .unwrap()
            .leftover
    );
    assert!(parse_remote_index_cache_name(&format!("0_{id}.log")).is_none());
    assert!(parse_remote_index_cache_name("0_short.index").is_none());
    assert!(parse_remote_index_cache_name("x_AAECAwQFBgcICQoLDA0ODw.index").is_none());
}

#[test]
fn local_tiered_storage_names() {
    // RemoteTopicPartitionDirectory: the uuid is the last 22 characters; topics may hold '-'.
    let (t, p, id) = parse_local_tiered_partition_dir("my-topic-3-AAECAwQFBgcICQoLDA0ODw").unwrap();
    assert_eq!((t, p, id[15]), ("my-topic", 3, 15));
    assert!(parse_local_tiered_partition_dir("topic-x-AAECAwQFBgcICQoLDA0ODw").is_none());
    assert!(parse_local_tiered_partition_dir("topic-0").is_none());
    let name = local_tiered_file_name(11, "bCqX9U--S-6U8XUM9II25Q", LocalTieredFileType::Segment);
    assert_eq!(name, "00000000000000000011-bCqX9U--S-6U8XUM9II25Q.log");
    let (start, _, t) = parse_local_tiered_file(&name).unwrap();
    assert_eq!((start, t), (11, LocalTieredFileType::Segment));
    let (_, _, t) = parse_local_tiered_file(
        "00000000000000000011-bCqX9U--S-6U8XUM9II25Q.leader_epoch_checkpoint",
    )
    .unwrap();
    assert_eq!(t, LocalTieredFileType::LeaderEpochCheckpoint);
    assert!(
        parse_local_tiered_file("00000000000000000011-bCqX9U--S-6U8XUM9II25Q.cleaned").is_none()
    );
}
