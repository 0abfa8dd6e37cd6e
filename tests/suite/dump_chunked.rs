//! `dump` reads a named `.log` file in bounded chunks (`segment::CHUNK_SIZE`), not as one
//! whole-file image, and formats large files in pieces on several threads. The dump of a
//! file must print exactly what the sequential dump of the same bytes held in memory
//! prints — for clean files, every kind of tail (cut batch, zero fill, garbage, a corrupt
//! entry size), entries larger than a chunk or a piece, damage inside a piece, and
//! `--max-bytes` cuts — in text and JSON, shallow and deep, for 1 to 3 threads.

#![cfg(feature = "testkit")]

use klogscan::dump::{DumpFormat, DumpOptions, dump_log, dump_paths};
use klogscan::partition::scan::with_threads;
use klogscan::read::segment::CHUNK_SIZE;
use klogscan::testkit::{Batch, Codec, PartitionBuilder, Producer};
use std::path::Path;

/// A single segment of > 2 chunks: mixed codecs, transactions with markers, a legacy-free
/// v2 log, and one batch larger than a chunk in the middle.
fn segment_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0).segment_bytes(1 << 30);
    let codecs = [
        Codec::None,
        Codec::Lz4,
        Codec::Zstd,
        Codec::SnappyXerial,
        Codec::Gzip,
    ];
    let tx = Producer::transactional(9, 3);
    let value: Vec<u8> = (0..2000u32).map(|i| (i * 7 % 251) as u8).collect();
    for i in 0..1200usize {
        let producer = if i % 4 == 0 {
            tx
        } else {
            Producer::idempotent(1 + (i % 3) as i64, 0)
        };
        p.append(
            Batch::new(producer)
                .values((0..1 + i % 3).map(|_| value.clone()))
                .codec(codecs[i % codecs.len()]),
        );
        if i % 4 == 0 {
            if i % 8 == 0 {
                p.commit(tx, 1);
            } else {
                p.abort(tx, 1);
            }
        }
        if i == 600 {
            // Larger than a chunk: the reader must grow its buffer for one entry.
            let big: Vec<u8> = (0..CHUNK_SIZE + 5000).map(|i| (i % 253) as u8).collect();
            p.append(Batch::new(Producer::PLAIN).values([big]));
        }
    }
    let m = p.write(dir.path()).unwrap();
    assert_eq!(m.segments.len(), 1);
    let data = std::fs::read(&m.segments[0].1).unwrap();
    assert!(data.len() > 2 * CHUNK_SIZE, "{}", data.len());
    data
}

/// Equal (stdout, stderr) pairs; on a difference, name the first differing line only
/// (the dumps are megabytes long).
#[track_caller]
fn assert_same(a: &(String, String), b: &(String, String), what: &str) {
    for (stream, x, y) in [("stdout", &a.0, &b.0), ("stderr", &a.1, &b.1)] {
        if x != y {
            let at = x.lines().zip(y.lines()).position(|(l, r)| l != r);
            let line = |s: &str, i: Option<usize>| {
                i.and_then(|i| s.lines().nth(i))
                    .unwrap_or("<end>")
                    .to_string()
            };
            panic!(
                "{what}: {stream} differs at line {at:?} ({} vs {} lines):\n  {}\n  {}",
                x.lines().count(),
                y.lines().count(),
                line(x, at),
                line(y, at)
            );
        }
    }
}

fn options() -> Vec<DumpOptions> {
    let mut v = Vec::new();
    for format in [DumpFormat::Text, DumpFormat::Json] {
        for (deep, print) in [(false, false), (true, false), (true, true)] {
            v.push(DumpOptions {
                format,
                deep_iteration: deep,
                print_data_log: print,
                ..Default::default()
            });
        }
    }
    v
}

/// (stdout, stderr) of the file dump and of the in-memory dump of the same bytes.
fn both(path: &Path, bytes: &[u8], opts: &DumpOptions) -> [(String, String); 2] {
    let (mut o1, mut e1) = (Vec::new(), Vec::new());
    let status = dump_paths(&[path.to_path_buf()], opts, &mut o1, &mut e1).unwrap();
    assert_eq!(status.files, 1);
    let image = match opts.max_bytes {
        Some(m) => &bytes[..(m as usize).min(bytes.len())],
        None => bytes,
    };
    let (mut o2, mut e2) = (Vec::new(), Vec::new());
    dump_log(path, image, opts, &mut o2, &mut e2).unwrap();
    let s = |v: Vec<u8>| String::from_utf8(v).unwrap();
    [(s(o1), s(e1)), (s(o2), s(e2))]
}

#[test]
fn chunked_file_dump_equals_the_in_memory_dump() {
    let clean = segment_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.log");
    let mut variants: Vec<(&str, Vec<u8>)> = vec![("clean", clean.clone())];
    // A batch cut short exactly across the first chunk boundary and later.
    for cut in [CHUNK_SIZE + 17, 2 * CHUNK_SIZE - 3, clean.len() - 100] {
        variants.push(("cut", clean[..cut].to_vec()));
    }
    let mut zeros = clean.clone();
    zeros.extend(std::iter::repeat_n(0u8, CHUNK_SIZE + 999));
    variants.push(("zero tail", zeros));
    let mut garbage = clean.clone();
    garbage.extend((0..3 * CHUNK_SIZE / 2).map(|i| (i % 200 + 1) as u8));
    variants.push(("garbage tail", garbage));
    let mut zeros_then_garbage = clean.clone();
    zeros_then_garbage.extend(std::iter::repeat_n(0u8, CHUNK_SIZE));
    zeros_then_garbage.extend([1u8, 2, 3]);
    variants.push(("zeros then garbage", zeros_then_garbage));
    // A corrupt entry size (negative) in the middle of the second chunk.
    let mut corrupt = clean.clone();
    let at = {
        let mut pos = 0usize;
        while pos < CHUNK_SIZE + CHUNK_SIZE / 2 {
            let size = i32::from_be_bytes(corrupt[pos + 8..pos + 12].try_into().unwrap());
            pos += 12 + size as usize;
        }
        pos
    };
    corrupt[at + 8] = 0xff;
    variants.push(("corrupt size", corrupt));
    // The batch across the first chunk boundary with its magic byte flipped to 3 (outside
    // its CRC-32C, so recovery keeps it: both walks must frame it and go on).
    let mut flipped = clean.clone();
    let across = {
        let mut pos = 0usize;
        loop {
            let size = i32::from_be_bytes(flipped[pos + 8..pos + 12].try_into().unwrap());
            if pos + 12 + size as usize > CHUNK_SIZE {
                break pos;
            }
            pos += 12 + size as usize;
        }
    };
    flipped[across + 16] = 3;
    variants.push(("flipped magic across a chunk", flipped));

    for (name, bytes) in &variants {
        std::fs::write(&path, bytes).unwrap();
        for opts in options() {
            let [file, memory] = both(&path, bytes, &opts);
            assert_same(&file, &memory, &format!("{name}, {opts:?}"));
            assert!(file.0.len() > 1000, "{name}: the dump printed little");
        }
    }
    // --max-bytes cuts, inside and across chunks.
    std::fs::write(&path, &clean).unwrap();
    for max in [100u64, CHUNK_SIZE as u64 + 1, clean.len() as u64 - 1] {
        for mut opts in options() {
            opts.max_bytes = Some(max);
            let [file, memory] = both(&path, &clean, &opts);
            assert_same(&file, &memory, &format!("--max-bytes {max}, {opts:?}"));
        }
    }
}

#[test]
fn an_unreadable_log_is_reported_and_the_dump_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("00000000000000000005.log");
    let present = dir.path().join("00000000000000000000.log");
    std::fs::write(&present, &segment_bytes()[..CHUNK_SIZE]).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = dump_paths(
        &[missing.clone(), present.clone()],
        &DumpOptions::default(),
        &mut out,
        &mut err,
    )
    .unwrap();
    assert_eq!(status.unreadable_files, 1);
    assert_eq!(status.files, 1);
    let out = String::from_utf8(out).unwrap();
    let err = String::from_utf8(err).unwrap();
    assert!(
        out.starts_with(&format!("Dumping {}\n", missing.display())),
        "{out}"
    );
    assert!(
        err.starts_with(&format!("Cannot read {}: ", missing.display())),
        "{err}"
    );
    assert!(out.contains(&format!("Dumping {}\n", present.display())));
    assert!(out.contains("baseOffset: 0 lastOffset: "));
}

/// The file dumped in pieces of `piece` bytes on `threads` threads.
fn in_pieces(path: &Path, opts: &DumpOptions, piece: usize, threads: usize) -> (String, String) {
    let opts = DumpOptions {
        piece_bytes: Some(piece),
        ..opts.clone()
    };
    let (mut o, mut e) = (Vec::new(), Vec::new());
    with_threads(Some(threads), || {
        dump_paths(&[path.to_path_buf()], &opts, &mut o, &mut e).unwrap()
    });
    (String::from_utf8(o).unwrap(), String::from_utf8(e).unwrap())
}

#[test]
fn parallel_pieces_print_the_sequential_dump() {
    let clean = segment_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.log");
    // Damage that a piece walk must notice (a piece then does not end where the next
    // begins, or its CRC check fails): a corrupt size in the middle, a flipped byte in a
    // batch, a cut tail; and non-consecutive offsets across a piece boundary.
    let mut variants: Vec<(&str, Vec<u8>)> = vec![("clean", clean.clone())];
    let mut flipped = clean.clone();
    flipped[700_000] ^= 0x55;
    variants.push(("flipped byte", flipped));
    let mut corrupt = clean.clone();
    let mut pos = 0usize;
    while pos < 900_000 {
        pos += 12 + i32::from_be_bytes(corrupt[pos + 8..pos + 12].try_into().unwrap()) as usize;
    }
    corrupt[pos + 8] = 0x7f; // a huge size: the sequential walk stops here
    variants.push(("corrupt size", corrupt));
    variants.push(("cut", clean[..clean.len() - 333].to_vec()));
    let mut gap = clean.clone();
    // Shift the base offset of a batch past the middle (CRC does not cover it).
    let mut pos = 0usize;
    while pos < 1_300_000 {
        pos += 12 + i32::from_be_bytes(gap[pos + 8..pos + 12].try_into().unwrap()) as usize;
    }
    let base = i64::from_be_bytes(gap[pos..pos + 8].try_into().unwrap());
    gap[pos..pos + 8].copy_from_slice(&(base + 1000).to_be_bytes());
    variants.push(("offset gap", gap));
    for (name, bytes) in &variants {
        std::fs::write(&path, bytes).unwrap();
        for opts in options() {
            let [seq, memory] = both(&path, bytes, &opts);
            assert_same(&seq, &memory, &format!("{name}, {opts:?}"));
            for (piece, threads) in [(64 << 10, 3), (300_000, 2), (1 << 20, 2), (64 << 10, 1)] {
                let parallel = in_pieces(&path, &opts, piece, threads);
                assert_same(
                    &parallel,
                    &seq,
                    &format!("{name}, piece {piece}, {threads} threads, {opts:?}"),
                );
            }
        }
    }
}
