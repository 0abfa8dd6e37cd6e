//! The streamed pieces give the sequential walk's result for any piece size, thread count,
//! read policy and damage.

use super::*;
use crate::read::format;
use crate::read::segment::{MmapMode, ReadPolicy};
use crate::testkit::{Batch, Codec, LogDirBuilder, PartitionBuilder, Producer};
use std::path::PathBuf;

/// A partition whose first segment is large (600 batches of three producers, one
/// transactional) and, with `sealed`, followed by a small active segment (so the large
/// one is mapped under `--mmap auto`).
fn partition(dir: &Path, sealed: bool) -> PathBuf {
    let mut p = PartitionBuilder::new("big", 0).segment_bytes(1 << 30);
    let (a, b) = (Producer::idempotent(7, 0), Producer::idempotent(8, 1));
    let t = Producer::transactional(9, 2);
    let codecs = [Codec::None, Codec::Lz4, Codec::Zstd];
    for i in 0..600 {
        let who = [a, b, t][i % 3];
        p.append(Batch::new(who).records(1 + i % 9).codec(codecs[i % 3]));
        if i % 40 == 7 {
            // Keyless records: with `--deep` on a compacted topic, one finding counting
            // every piece's.
            p.append(
                Batch::new(Producer::PLAIN)
                    .values(["k", "l"])
                    .codec(codecs[i % 2]),
            );
        }
        if i % 30 == 29 {
            if i % 60 == 59 {
                p.abort(t, 3);
            } else {
                p.commit(t, 3);
            }
        }
    }
    if sealed {
        p.roll();
        p.append(Batch::new(a).records(2));
    }
    LogDirBuilder::new(1).partition(p).write(dir).unwrap();
    dir.join("big-0")
}

/// Everything the scan of the partition at `path` concludes, as text, walked by
/// `threads` with pieces of `piece` bytes.
fn scan(path: &Path, opts: &ScanOptions, threads: usize, piece: usize) -> String {
    let inv = layout::discover(&[path.to_path_buf()]);
    // As if a second copy were selected: every batch's key is kept for the replica
    // comparison (`cluster_inputs`), by the same walk.
    let opts = &ScanOptions {
        copied_partitions: crate::partition::walked::CopiedPartitions::of([
            &inv.partitions[0],
            &inv.partitions[0],
        ]),
        ..opts.clone()
    };
    let pool = EventPool::new(threads);
    let (report, replay, mut findings) =
        crate::partition::scan::with_threads(Some(threads), || {
            scan_partition(
                &inv.partitions[0],
                opts,
                threads,
                piece,
                None,
                (Some(true), true, opts.replay),
                &pool,
                &[],
            )
        });
    assert!(report.batches > 300, "{}", report.batches);
    let keys = report
        .carried
        .cluster_inputs
        .batches
        .as_ref()
        .map_or(0, |b| b.len());
    assert!(keys as u64 >= report.batches, "{keys} batch keys");
    let outcome = replay.finish(0, &mut findings);
    format!("{report:?}\n{findings:?}\n{outcome:?}")
}

/// Entry positions of the first segment.
fn entry_starts(log: &Path) -> Vec<u64> {
    let data = std::fs::read(log).unwrap();
    let mut starts = Vec::new();
    format::Entries::new(&data, 0).for_each(|e| starts.push(e.position));
    starts
}

/// The offset of the unparseable legacy entry of the `legacy` damage.
const LEGACY_OFFSET: i64 = 100_000;

/// Damage the first segment: `crc` flips a bit inside a batch (a CRC mismatch, framing
/// intact), `size` grows an entry's size field (framing broken there: the piece holding
/// it does not chain, the rest of the segment is walked sequentially).
fn damage(dir: &Path, what: &str) {
    let log = dir.join("00000000000000000000.log");
    let starts = entry_starts(&log);
    let mut data = std::fs::read(&log).unwrap();
    let at = starts[starts.len() / 2] as usize;
    match what {
        "crc" => data[at + 70] ^= 0x40,
        "size" => data[at + 9] ^= 0x01,
        // The last entry becomes a v1 message of the same length whose key length runs
        // past its end, CRC valid: not replayed, but recovery counts it (a recovery-only
        // event), so the segment's next offset is its offset + 1.
        "legacy" => {
            let at = *starts.last().unwrap() as usize;
            let end = data.len();
            data[at..at + 8].copy_from_slice(&LEGACY_OFFSET.to_be_bytes());
            data[at + 16] = 1; // magic
            data[at + 17] = 0; // attributes
            data[at + 26..at + 30].copy_from_slice(&((end - at) as i32).to_be_bytes());
            let crc = crc32fast::hash(&data[at + 16..end]);
            data[at + 12..at + 16].copy_from_slice(&crc.to_be_bytes());
        }
        _ => {}
    }
    std::fs::write(&log, data).unwrap();
}

#[test]
fn pieces_replay_as_one_sequential_walk_for_any_piece_size_and_thread_count() {
    for sealed in [false, true] {
        for what in ["none", "crc", "size", "legacy"] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = partition(tmp.path(), sealed);
            damage(&dir, what);
            let len = std::fs::metadata(dir.join("00000000000000000000.log"))
                .unwrap()
                .len();
            for mmap in [segment::MmapMode::Auto, segment::MmapMode::Never] {
                for (deep, max_bytes) in [(false, None), (true, None), (false, Some(len * 3 / 4))] {
                    let opts = ScanOptions {
                        mmap,
                        deep,
                        max_bytes,
                        collect_index_verdicts: true,
                        ..Default::default()
                    };
                    let whole = scan(&dir, &opts, 1, usize::MAX / 4);
                    if what != "none" && what != "legacy" && max_bytes.is_none() {
                        assert!(whole.contains("truncation: Some"), "{what}: no damage seen");
                    }
                    if deep && max_bytes.is_none() {
                        let n = whole.matches("KeylessRecordOnCompactedTopic").count();
                        assert_eq!(n, 1, "{what}: keyless records are one finding");
                    }
                    if what == "legacy" && max_bytes.is_none() {
                        let next = format!("next_offset: {}", LEGACY_OFFSET + 1);
                        assert!(whole.contains(&next), "the legacy entry is not counted");
                    }
                    for piece in [1000, 4096, 20_000] {
                        for threads in [1, 3] {
                            assert!(
                                scan(&dir, &opts, threads, piece) == whole,
                                "sealed {sealed}, {what}, {mmap:?}, deep {deep}, max bytes {max_bytes:?}: pieces of {piece} on {threads} threads differ from the whole walk"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_large_segment_is_split_and_its_pieces_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = partition(tmp.path(), false);
    let log = dir.join("00000000000000000000.log");
    let opts = ScanOptions::default();
    let split = Split::new(0, 0, &log, ReadPolicy::Read, &opts, 1000).unwrap();
    assert!(split.pieces() > 20, "{} pieces", split.pieces());
    let starts = entry_starts(&log);
    let mut cursor = Cursor {
        logs: &[(0, log.as_path())],
        segs: &[],
        mmap: MmapMode::Never,
        sizes: &[std::fs::metadata(&log).unwrap().len()],
        next: 0,
        split: None,
        units: 4,
        bytes: 3000,
        piece: 1000,
    };
    // The segment's pieces come one at a time, in order, each starting at an entry and
    // sized as the split says.
    let mut seen = 0;
    while let Some((u, bytes)) = cursor.next_unit(&opts) {
        let Unit::Piece(s, k) = u else {
            panic!("the segment was not split")
        };
        assert_eq!(k, seen);
        assert_eq!(bytes, s.piece_len(k) as u64);
        assert!(starts.contains(&(s.range(k).0 as u64)));
        seen += 1;
    }
    assert_eq!(seen, split.pieces());
    // A segment under two pieces is not split.
    assert!(Split::new(0, 0, &log, ReadPolicy::Read, &opts, 1 << 30).is_none());
}

#[test]
fn sync_point_needs_a_valid_batch_followed_by_a_header() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = partition(tmp.path(), false);
    let data = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
    let starts: Vec<usize> = entry_starts(&dir.join("00000000000000000000.log"))
        .into_iter()
        .map(|s| s as usize)
        .collect();
    for from in [1usize, 777, 5000, 12_345] {
        let want = starts.iter().copied().find(|&s| s >= from);
        assert_eq!(
            segment::sync_point(&data, from, 1 << 20, PIECE, true),
            want,
            "from {from}"
        );
    }
    assert_eq!(
        segment::sync_point(&data, data.len(), 100, PIECE, true),
        None
    );
    // A window cut exactly after a batch: that batch is a sync point only when the
    // window is the file's end (otherwise its next header is unseen).
    let cut = &data[..starts[3]];
    assert_eq!(
        segment::sync_point(cut, starts[2], 1 << 20, PIECE, true),
        Some(starts[2])
    );
    assert_eq!(
        segment::sync_point(cut, starts[2], 1 << 20, PIECE, false),
        None
    );
    assert_eq!(
        segment::sync_point(cut, starts[1], 1 << 20, PIECE, false),
        Some(starts[1])
    );
    assert_eq!(segment::sync_point(&[0u8; 10], 0, 100, PIECE, true), None);
}
