//! Regressions found in review: an untrusted (CRC-invalid) batch must not move the reference
//! time; a legacy message the broker's recovery accepts is not a truncation point; `--deep`
//! errors inside compressed records are not reported at impossible file positions.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::testkit::{Batch, Codec, PartitionBuilder, Producer};

const T0: i64 = 1_572_948_000_000;

#[test]
fn a_crc_invalid_batch_does_not_move_the_reference_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0).start_time(T0);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.append(Batch::new(Producer::transactional(7, 0)).records(1));
    p.advance_time(60_000);
    // A corrupt maxTimestamp (far future) under a CRC that no longer matches.
    p.append(Batch::new(Producer::PLAIN).records(1).tweak(|s| {
        s.overrides.max_timestamp = Some(T0 + 10 * 365 * 86_400_000);
        s.overrides.crc = Some(0xdead_beef);
    }));
    p.write(dir.path()).unwrap();
    let r = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let kinds: Vec<Kind> = r.findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&Kind::CrcMismatch), "{kinds:?}");
    // Young (one minute) open transaction: open, not hanging.
    assert!(kinds.contains(&Kind::OpenTransaction), "{kinds:?}");
    assert!(!kinds.contains(&Kind::HangingTransaction), "{kinds:?}");
    assert!(r.partitions[0].ref_time < T0 + 3_600_000);
    // The corrupt batch still counts and its offsets still advance the log.
    assert_eq!(r.partitions[0].batches, 3);
    assert_eq!(r.partitions[0].log_end_offset, Some(3));
}

/// A v0 message `offset size crc magic attrs keyLen key valueLen value` with a declared key
/// length that does not fit, under a valid CRC-32.
fn v0(offset: i64, key_len: i32, value: &[u8]) -> Vec<u8> {
    let mut body = vec![0u8, 0u8];
    body.extend_from_slice(&key_len.to_be_bytes());
    body.extend_from_slice(&(value.len() as i32).to_be_bytes());
    body.extend_from_slice(value);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn a_legacy_message_recovery_accepts_is_not_a_truncation_point() {
    let dir = tempfile::tempdir().unwrap();
    let pdir = dir.path().join("old-0");
    std::fs::create_dir_all(&pdir).unwrap();
    let mut log = v0(0, -1, b"a");
    let bad_at = log.len() as u64;
    log.extend(v0(1, 1000, b"b")); // key length 1000 in an 18-byte message, CRC valid
    log.extend(v0(2, -1, b"c"));
    std::fs::write(pdir.join("00000000000000000000.log"), &log).unwrap();
    let r = scan(&[pdir], &ScanOptions::default());
    let f: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidBatch)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].position, Some(bad_at));
    assert_eq!(f[0].offset, Some(1));
    assert_eq!(
        r.partitions[0].truncation, None,
        "recovery checks only size and CRC"
    );
    // A CRC failure is a truncation point.
    let mut broken = log.clone();
    broken[bad_at as usize + 12] ^= 1;
    std::fs::write(dir.path().join("old-0/00000000000000000000.log"), &broken).unwrap();
    let r = scan(&[dir.path().join("old-0")], &ScanOptions::default());
    assert_eq!(
        r.partitions[0].truncation.as_ref().map(|t| t.position),
        Some(bad_at)
    );
}

#[test]
fn deep_errors_in_compressed_records_stay_inside_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("z", 0).start_time(T0);
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.append(
        Batch::new(Producer::PLAIN)
            .records(50)
            .codec(Codec::Gzip)
            .tweak(|s| s.overrides.records_count = Some(51)),
    );
    let m = p.write(dir.path()).unwrap();
    let gz = &m.batches[1];
    let opts = ScanOptions::default().with_deep(true);
    let r = scan(std::slice::from_ref(&m.dir), &opts);
    let f: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidBatch && f.evidence.get("error_position").is_some())
        .collect();
    assert!(!f.is_empty(), "{:#?}", r.findings);
    for f in f {
        assert_eq!(f.position, Some(gz.position));
        assert_eq!(
            f.evidence["error_position_in"], "decompressed records",
            "{f:#?}"
        );
    }
    // Uncompressed: the error position is a file position inside the batch.
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("u", 0).start_time(T0);
    p.append(Batch::new(Producer::PLAIN).records(2));
    p.append(
        Batch::new(Producer::PLAIN)
            .records(5)
            .tweak(|s| s.overrides.records_count = Some(6)),
    );
    let m = p.write(dir.path()).unwrap();
    let b = &m.batches[1];
    let r = scan(std::slice::from_ref(&m.dir), &opts);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::InvalidBatch && f.evidence.get("error_position").is_some())
        .expect("a record-level invalid_batch");
    let at = f.evidence["error_position"].as_u64().unwrap();
    assert!(
        (b.position..=b.position + b.size).contains(&at),
        "{at} not in batch at {}",
        b.position
    );
    assert!(f.evidence.get("error_position_in").is_none());
}

/// `LogSegment.recover` counts a batch as valid before its producer-state update, whose
/// `EndTransactionMarker.deserialize` throws InvalidRecordException (caught): a malformed
/// COMMIT is kept and the truncation is right after it (it used to be taken as the
/// truncation point itself); last in its segment, nothing is truncated.
#[test]
fn a_malformed_control_record_is_kept_and_recovery_truncates_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let txn = Producer::transactional(9, 0);
    let mut p = PartitionBuilder::new("m", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    // A COMMIT whose value is 2 bytes (EndTxnMarker needs 6): CRC-valid, malformed.
    let bad = p.control_raw(txn, 1, Some(vec![0, 0]));
    p.append(Batch::new(Producer::PLAIN).records(1));
    let m = p.write(dir.path()).unwrap();
    let b = &m.batches[bad];
    let r = scan(std::slice::from_ref(&m.dir), &ScanOptions::default());
    let f: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidBatch)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].position, Some(b.position));
    let t = r.partitions[0]
        .truncation
        .as_ref()
        .expect("a truncation point");
    assert_eq!(
        (t.position, t.offset),
        (b.position + b.size, Some(b.base_offset + 1))
    );
    // Last in its segment: kept, nothing to truncate.
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("m", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    p.control_raw(txn, 1, Some(vec![0, 0]));
    let m = p.write(dir.path()).unwrap();
    let r = scan(std::slice::from_ref(&m.dir), &ScanOptions::default());
    assert_eq!(r.partitions[0].truncation, None);
    // A well-formed COMMIT is not.
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("m", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 1);
    let m = p.write(dir.path()).unwrap();
    let r = scan(std::slice::from_ref(&m.dir), &ScanOptions::default());
    assert_eq!(r.partitions[0].truncation, None);
}
