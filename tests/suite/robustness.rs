//! Bad input never panics and never aborts the whole run.
//!
//! A log dir holds `victim-0` (a small first segment, then a healthy second segment) next
//! to a healthy partition `healthy-0`. The first segment of `victim-0` is damaged in every
//! way: every byte flipped with several masks, and cut at every length. After each
//! damage `scan::scan` (with `--deep`) and `dump_log` (deep, printing data) must return
//! normally; the healthy partition must be fully reported (batches, records, no
//! finding) and the victim's second segment fully read. Specific damages are checked for
//! their exact finding: a CRC flip at its batch's offset and position, a truncated tail at
//! its position, an absurd recordsCount or record-length varint as an invalid batch.
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpOptions, dump_log};
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, Codec, Manifest, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    victim: Manifest,
    healthy: Manifest,
    seg0: PathBuf,
    seg0_bytes: Vec<u8>,
    seg1_len: u64,
}

fn records(m: &Manifest) -> u64 {
    m.batches.iter().map(|b| b.record_count as u64).sum()
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let idem = Producer::idempotent(42, 0);
    let txn = Producer::transactional(43, 1);
    let mut v = PartitionBuilder::new("victim", 0).leader_epoch(2);
    v.append(Batch::new(idem).record(Rec::kv("k", "v").header("h", Some(b"x"))));
    v.append(
        Batch::new(Producer::PLAIN)
            .values(["p", "q"])
            .codec(Codec::Gzip),
    );
    v.append(Batch::new(txn).values(["t"]));
    v.commit(txn, 3);
    v.roll();
    v.append(Batch::new(idem).records(2));
    v.append(Batch::new(Producer::PLAIN).values(["after"]));
    let victim = v.write(&root).unwrap();
    let mut h = PartitionBuilder::new("healthy", 0);
    h.append(Batch::new(Producer::PLAIN).values(["a", "b", "c"]));
    h.append(Batch::new(idem).records(2).codec(Codec::Lz4));
    let healthy = h.write(&root).unwrap();
    let seg0 = victim.segments[0].1.clone();
    let seg0_bytes = std::fs::read(&seg0).unwrap();
    let seg1_len = std::fs::metadata(&victim.segments[1].1).unwrap().len();
    assert!(
        (200..500).contains(&seg0_bytes.len()),
        "a small segment: {}",
        seg0_bytes.len()
    );
    Fixture {
        _dir: dir,
        root,
        victim,
        healthy,
        seg0,
        seg0_bytes,
        seg1_len,
    }
}

fn deep() -> ScanOptions {
    ScanOptions::default().with_deep(true)
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The invariants after any damage to the victim's first segment (`seg0_len` bytes now).
fn check_invariants(fx: &Fixture, r: &ScanReport, seg0_len: u64, what: &str) {
    assert!(r.errors.is_empty(), "{what}: {:?}", r.errors);
    assert_eq!(r.partitions.len(), 2, "{what}");
    let h = r.partitions.iter().find(|p| p.topic == "healthy").unwrap();
    assert_eq!(h.batches, fx.healthy.batches.len() as u64, "{what}");
    assert_eq!(h.records, records(&fx.healthy), "{what}");
    assert_eq!(h.log_end_offset, Some(fx.healthy.log_end_offset), "{what}");
    assert!(
        r.findings.iter().all(|f| f.topic != "healthy"),
        "{what}: {:#?}",
        r.findings
    );
    let v = r.partitions.iter().find(|p| p.topic == "victim").unwrap();
    assert_eq!(v.segments, 2, "{what}");
    // both segments were read to their end
    assert_eq!(v.bytes, seg0_len + fx.seg1_len, "{what}");
    let seg1: Vec<_> = fx
        .victim
        .batches
        .iter()
        .filter(|b| b.segment_base == fx.victim.segments[1].0)
        .collect();
    assert!(v.batches >= seg1.len() as u64, "{what}");
    let seg1_name = file_name(&fx.victim.segments[1].1);
    let seg0_name = file_name(&fx.seg0);
    for f in &r.findings {
        // integrity findings are all about the damaged file, and inside it
        if is_integrity(f) {
            assert_eq!(
                f.segment.as_deref(),
                Some(seg0_name.as_str()),
                "{what}: {f:#?}"
            );
            assert!(f.position.unwrap() <= seg0_len, "{what}: {f:#?}");
        } else if f.segment.as_deref() == Some(seg1_name.as_str()) {
            assert!(f.position.unwrap() < fx.seg1_len, "{what}: {f:#?}");
        }
    }
}

fn is_integrity(f: &Finding) -> bool {
    matches!(
        f.kind,
        Kind::CrcMismatch
            | Kind::TruncatedBatch
            | Kind::TrailingBytes
            | Kind::PreallocatedTail
            | Kind::InvalidBatch
            | Kind::SegmentOffsetOutOfRange
    )
}

fn dump_does_not_panic(path: &Path, data: &[u8]) {
    let opts = DumpOptions {
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    dump_log(path, data, &opts, &mut out, &mut err).unwrap();
}

#[test]
fn every_flipped_byte_and_every_cut_is_survived() {
    let fx = fixture();
    let orig = fx.seg0_bytes.clone();
    let opts = deep();
    let mut scans = 0;
    for pos in 0..orig.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut d = orig.clone();
            d[pos] ^= mask;
            std::fs::write(&fx.seg0, &d).unwrap();
            let r = pipeline::scan(std::slice::from_ref(&fx.root), &opts);
            let what = format!("flip {pos} ^ {mask:#x}");
            check_invariants(&fx, &r, d.len() as u64, &what);
            // a flip in the CRC-covered part (or the CRC itself) of a v2 batch is a
            // crc_mismatch at that batch's offset and position
            if let Some(b) = fx.victim.batches.iter().find(|b| {
                b.file == fx.seg0 && (b.position + 17..b.position + b.size).contains(&(pos as u64))
            }) {
                assert!(
                    r.findings.iter().any(|f| f.kind == Kind::CrcMismatch
                        && f.offset == Some(b.base_offset)
                        && f.position == Some(b.position)),
                    "{what}: {:#?}",
                    r.findings
                );
            }
            dump_does_not_panic(&fx.seg0, &d);
            scans += 1;
        }
    }
    for len in 0..orig.len() {
        let d = &orig[..len];
        std::fs::write(&fx.seg0, d).unwrap();
        let r = pipeline::scan(std::slice::from_ref(&fx.root), &opts);
        check_invariants(&fx, &r, len as u64, &format!("cut at {len}"));
        // a cut inside a batch is reported at that batch's position
        if let Some(b) = fx.victim.batches.iter().find(|b| {
            b.file == fx.seg0 && b.position < len as u64 && (len as u64) < b.position + b.size
        }) {
            let tails: Vec<_> = r
                .findings
                .iter()
                .filter(|f| {
                    matches!(
                        f.kind,
                        // a cut inside the leading zero bytes of a base offset leaves
                        // only zeros: a preallocated-looking tail
                        Kind::TruncatedBatch | Kind::TrailingBytes | Kind::PreallocatedTail
                    )
                })
                .collect();
            assert_eq!(tails.len(), 1, "cut at {len}: {:#?}", r.findings);
            assert_eq!(tails[0].position, Some(b.position), "cut at {len}");
        } else {
            // a cut at a batch boundary leaves a clean, shorter log
            assert!(
                r.findings.iter().all(|f| !is_integrity(f)),
                "cut at {len}: {:#?}",
                r.findings
            );
        }
        dump_does_not_panic(&fx.seg0, d);
        scans += 1;
    }
    assert_eq!(scans, orig.len() * 4);
}

/// Write `data` as the victim's first segment and scan.
fn scan_with(fx: &Fixture, data: &[u8], opts: &ScanOptions) -> ScanReport {
    std::fs::write(&fx.seg0, data).unwrap();
    let r = pipeline::scan(std::slice::from_ref(&fx.root), opts);
    check_invariants(fx, &r, data.len() as u64, "specific damage");
    r
}

fn only(r: &ScanReport, k: Kind) -> &Finding {
    let v: Vec<_> = r.findings.iter().filter(|f| f.kind == k).collect();
    assert_eq!(v.len(), 1, "{k}: {:#?}", r.findings);
    v[0]
}

/// Recompute a v2 batch's CRC after editing its bytes.
fn fix_crc(data: &mut [u8], pos: usize, size: usize) {
    let crc = crc32c::crc32c(&data[pos + 21..pos + size]);
    data[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn crc_flip_is_reported_at_its_batch_and_the_walk_continues() {
    let fx = fixture();
    let b = fx.victim.batches[1].clone(); // the gzip batch
    let mut d = fx.seg0_bytes.clone();
    d[(b.position + b.size - 3) as usize] ^= 0x04;
    let r = scan_with(&fx, &d, &deep());
    let f = only(&r, Kind::CrcMismatch);
    assert_eq!(f.offset, Some(b.base_offset));
    assert_eq!(f.position, Some(b.position));
    assert_eq!(f.segment.as_deref(), Some(file_name(&fx.seg0).as_str()));
    // nothing else is wrong: the batches after it and the next segment are read
    assert_eq!(
        r.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![Kind::CrcMismatch]
    );
    let v = r.partitions.iter().find(|p| p.topic == "victim").unwrap();
    assert_eq!(v.batches, fx.victim.batches.len() as u64);
    assert_eq!(v.log_end_offset, Some(fx.victim.log_end_offset));
}

#[test]
fn truncated_tail_is_reported_at_its_position() {
    let fx = fixture();
    let last = fx
        .victim
        .batches
        .iter()
        .rfind(|b| b.file == fx.seg0)
        .unwrap()
        .clone();
    let d = &fx.seg0_bytes[..(last.position + 30) as usize];
    let r = scan_with(&fx, d, &deep());
    let f = only(&r, Kind::TruncatedBatch);
    assert_eq!(f.position, Some(last.position));
    assert_eq!(f.evidence["declared_size"], last.size);
    assert_eq!(f.evidence["available"], 30);
    let v = r.partitions.iter().find(|p| p.topic == "victim").unwrap();
    assert_eq!(v.batches, fx.victim.batches.len() as u64 - 1);
    assert_eq!(v.truncation.as_ref().unwrap().position, last.position);
}

#[test]
fn absurd_records_count_is_an_invalid_batch() {
    let fx = fixture();
    let b = fx.victim.batches[0].clone();
    let mut d = fx.seg0_bytes.clone();
    let p = b.position as usize;
    d[p + 57..p + 61].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_crc(&mut d, p, b.size as usize);
    // found by the header checks without --deep
    let r = scan_with(&fx, &d, &ScanOptions::default());
    let f = only(&r, Kind::InvalidBatch);
    assert_eq!(
        (f.offset, f.position),
        (Some(b.base_offset), Some(b.position))
    );
    assert!(f.message.contains("recordsCount"), "{}", f.message);
    // --deep adds the record decoder's complaint, at the same batch
    let r = scan_with(&fx, &d, &deep());
    let inv: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::InvalidBatch)
        .collect();
    assert!(!inv.is_empty());
    for f in inv {
        assert_eq!(
            (f.offset, f.position),
            (Some(b.base_offset), Some(b.position))
        );
    }
}

#[test]
fn absurd_record_length_varint_is_an_invalid_batch() {
    let fx = fixture();
    let b = fx.victim.batches[0].clone(); // uncompressed, one record
    let mut d = fx.seg0_bytes.clone();
    let p = b.position as usize;
    // the record's length varint (one byte here) → a 5-byte varint of 2^31-1 (zigzag)
    assert!(d[p + 61] < 0x80);
    let mut bad = d[..p + 61].to_vec();
    bad.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]);
    bad.extend_from_slice(&d[p + 62..]);
    let grown = (b.size + 4) as usize;
    let len = (grown - 12) as i32;
    bad[p + 8..p + 12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut bad, p, grown);
    d = bad;
    // the header is fine: only --deep decodes the records
    let r = scan_with(&fx, &d, &ScanOptions::default());
    assert!(
        r.findings.iter().all(|f| !is_integrity(f)),
        "{:#?}",
        r.findings
    );
    let r = scan_with(&fx, &d, &deep());
    let f = only(&r, Kind::InvalidBatch);
    assert_eq!(
        (f.offset, f.position),
        (Some(b.base_offset), Some(b.position))
    );
    let v = r.partitions.iter().find(|p| p.topic == "victim").unwrap();
    assert_eq!(v.batches, fx.victim.batches.len() as u64);
    // a varint longer than 5 bytes
    let mut d2 = fx.seg0_bytes.clone();
    let mut bad = d2[..p + 61].to_vec();
    bad.extend_from_slice(&[0xff; 6]);
    bad.extend_from_slice(&d2[p + 62..]);
    let grown = (b.size + 5) as usize;
    bad[p + 8..p + 12].copy_from_slice(&((grown - 12) as i32).to_be_bytes());
    fix_crc(&mut bad, p, grown);
    d2 = bad;
    let r = scan_with(&fx, &d2, &deep());
    let f = only(&r, Kind::InvalidBatch);
    assert_eq!(
        (f.offset, f.position),
        (Some(b.base_offset), Some(b.position))
    );
}

#[test]
fn absurd_batch_length_mid_file_is_an_invalid_batch() {
    let fx = fixture();
    let b = fx.victim.batches[1].clone(); // not the last batch of the segment
    for absurd in [i32::MAX - 15, 5] {
        let mut d = fx.seg0_bytes.clone();
        let p = b.position as usize;
        d[p + 8..p + 12].copy_from_slice(&absurd.to_be_bytes());
        let r = scan_with(&fx, &d, &deep());
        let f = only(&r, Kind::InvalidBatch);
        assert_eq!(f.position, Some(b.position));
        assert_eq!(f.evidence["size"], absurd);
        // The walk stops there, as a broker's recovery would truncate there; the next
        // segment is still read.
        let v = r.partitions.iter().find(|p| p.topic == "victim").unwrap();
        assert_eq!(v.truncation.as_ref().unwrap().position, b.position);
    }
}
