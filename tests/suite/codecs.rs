//! Decompression of every codec (`kafka-format.md` §6): streams built with the crates'
//! encoders and hand-built framings, the size cap, robustness against random bytes, and
//! every compressed batch of the real broker data.

use std::io::Write;

use klogscan::partition::event::{Classified, classify};
use klogscan::read::format::codec::{XERIAL_MAGIC, xxhash32};
use klogscan::read::format::{Compression, Decompressor, Entries, Problem, batch_records};
use proptest::prelude::*;

/// Text that compresses well but is not trivial.
fn sample(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    let mut x: u32 = 12345;
    while v.len() < n {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let word = ["kafka ", "log ", "segment ", "offset ", "batch "][(x >> 16) as usize % 5];
        v.extend_from_slice(word.as_bytes());
    }
    v.truncate(n);
    v
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn snappy_raw(data: &[u8]) -> Vec<u8> {
    snap::raw::Encoder::new().compress_vec(data).unwrap()
}

/// xerial snappy-java stream: header, then `[i32 BE len][raw block]` per `chunk` bytes.
fn xerial(data: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = XERIAL_MAGIC.to_vec();
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for c in data.chunks(chunk) {
        let b = snappy_raw(c);
        out.extend_from_slice(&(b.len() as i32).to_be_bytes());
        out.extend_from_slice(&b);
    }
    out
}

#[derive(Clone, Copy)]
enum Blk {
    Compressed,
    Stored,
}

struct Lz4Opts {
    flg: u8,
    bd: u8,
    broken_hc: bool,
    content_size: Option<u64>,
}

impl Default for Lz4Opts {
    fn default() -> Self {
        Lz4Opts {
            flg: 0x60,
            bd: 0x40,
            broken_hc: false,
            content_size: None,
        }
    }
}

/// A hand-built LZ4 frame, blocks as given; block checksums when FLG bit 4 is set,
/// a content checksum when FLG bit 2 is set.
fn lz4_frame(blocks: &[(&[u8], Blk)], o: &Lz4Opts) -> Vec<u8> {
    let mut out = vec![0x04, 0x22, 0x4D, 0x18];
    let mut flg = o.flg;
    if o.content_size.is_some() {
        flg |= 0x08;
    }
    out.push(flg);
    out.push(o.bd);
    if let Some(n) = o.content_size {
        out.extend_from_slice(&n.to_le_bytes());
    }
    let hc = if o.broken_hc {
        (xxhash32(&out[..], 0) >> 8) as u8 // KAFKA-3160: magic included
    } else {
        (xxhash32(&out[4..], 0) >> 8) as u8
    };
    out.push(hc);
    let mut whole = Vec::new();
    for (data, kind) in blocks {
        whole.extend_from_slice(data);
        let (payload, bit) = match kind {
            Blk::Compressed => (lz4_flex::block::compress(data), 0u32),
            Blk::Stored => (data.to_vec(), 0x8000_0000),
        };
        out.extend_from_slice(&(payload.len() as u32 | bit).to_le_bytes());
        out.extend_from_slice(&payload);
        if flg & 0x10 != 0 {
            out.extend_from_slice(&xxhash32(&payload, 0).to_le_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    if flg & 0x04 != 0 {
        out.extend_from_slice(&xxhash32(&whole, 0).to_le_bytes());
    }
    out
}

fn zstd_frame(data: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(data, 3).unwrap()
}

fn skippable(payload: &[u8]) -> Vec<u8> {
    let mut out = 0x184D_2A53u32.to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn dec(codec: Compression, input: &[u8]) -> Result<Vec<u8>, klogscan::read::format::FormatError> {
    Decompressor::default()
        .decompress(codec, input, false)
        .map(|o| o.to_vec())
}

// ------------------------------------------------------------------ gzip

#[test]
fn gzip_single_and_concatenated_members() {
    let a = sample(100_000);
    let b = sample(3_333);
    assert_eq!(dec(Compression::Gzip, &gzip(&a)).unwrap(), a);
    let mut two = gzip(&a);
    two.extend_from_slice(&gzip(&b));
    let mut ab = a.clone();
    ab.extend_from_slice(&b);
    assert_eq!(dec(Compression::Gzip, &two).unwrap(), ab);
}

#[test]
fn gzip_ignores_junk_after_a_member_like_gzipinputstream() {
    let a = sample(5000);
    let mut s = gzip(&a);
    s.extend_from_slice(b"not a gzip header at all");
    assert_eq!(dec(Compression::Gzip, &s).unwrap(), a);
}

#[test]
fn gzip_header_with_name_comment_extra_and_hcrc() {
    let a = sample(777);
    let mut e = flate2::GzBuilder::new()
        .filename("f.txt")
        .comment("c")
        .extra(vec![1, 2, 3])
        .write(Vec::new(), flate2::Compression::fast());
    e.write_all(&a).unwrap();
    let s = e.finish().unwrap();
    assert_eq!(dec(Compression::Gzip, &s).unwrap(), a);
}

#[test]
fn gzip_errors_name_the_field_and_position() {
    let a = sample(5000);
    let s = gzip(&a);
    // Bad CRC in the trailer.
    let mut bad = s.clone();
    let n = bad.len();
    bad[n - 8] ^= 0xFF;
    let e = dec(Compression::Gzip, &bad).unwrap_err();
    assert_eq!((e.structure, e.field), ("gzip stream", "crc32"));
    assert_eq!(e.position, (n - 8) as u64);
    assert!(matches!(e.problem, Problem::Checksum { .. }));
    // Truncated in the deflate data.
    let e = dec(Compression::Gzip, &s[..s.len() / 2]).unwrap_err();
    assert_eq!(e.structure, "gzip stream");
    assert_eq!(e.field, "deflate data");
    // Bad magic.
    let e = dec(Compression::Gzip, b"\x1f\x8c\x08\0\0\0\0\0\0\0").unwrap_err();
    assert_eq!((e.field, e.position), ("magic", 0));
}

// ------------------------------------------------------------------ snappy

#[test]
fn snappy_raw_and_xerial() {
    let a = sample(100_000);
    assert_eq!(dec(Compression::Snappy, &snappy_raw(&a)).unwrap(), a);
    assert_eq!(dec(Compression::Snappy, &xerial(&a, 32 << 10)).unwrap(), a);
    // Empty xerial stream (header only).
    assert_eq!(dec(Compression::Snappy, &xerial(&[], 10)).unwrap(), b"");
}

#[test]
fn snappy_xerial_concatenated_streams_are_joined() {
    let a = sample(40_000);
    let b = sample(1_000);
    let mut s = xerial(&a, 32 << 10);
    s.extend_from_slice(&xerial(&b, 32 << 10));
    let mut ab = a.clone();
    ab.extend_from_slice(&b);
    assert_eq!(dec(Compression::Snappy, &s).unwrap(), ab);
}

#[test]
fn snappy_errors() {
    let a = sample(1000);
    let mut s = xerial(&a, 300);
    // Negative chunk length in the first chunk.
    s[16] = 0xFF;
    let e = dec(Compression::Snappy, &s).unwrap_err();
    assert_eq!(
        (e.structure, e.field, e.position),
        ("xerial snappy chunk", "compressedLength", 16)
    );
    // Chunk longer than the input.
    let s = xerial(&a, 300);
    let e = dec(Compression::Snappy, &s[..s.len() - 3]).unwrap_err();
    assert_eq!(e.structure, "xerial snappy chunk");
    assert!(matches!(e.problem, Problem::Truncated { .. }));
    // Version 0 in the first header is read (snappy-java's `readHeader` checks the magic
    // alone); in a joined stream's header it is rejected (`isValidHeader`).
    let mut s = xerial(&a, 300);
    s[11] = 0;
    assert_eq!(dec(Compression::Snappy, &s).unwrap(), a);
    let first = xerial(&a, 300);
    let mut s = first.clone();
    s.extend_from_slice(&xerial(&a, 300));
    s[first.len() + 11] = 0;
    let e = dec(Compression::Snappy, &s).unwrap_err();
    assert_eq!((e.field, e.position), ("version", first.len() as u64 + 8));
    // Empty payload.
    assert!(dec(Compression::Snappy, b"").is_err());
}

// ------------------------------------------------------------------ lz4

#[test]
fn lz4_frame_with_correct_hc() {
    let a = sample(150_000);
    let blocks: Vec<(&[u8], Blk)> = a.chunks(64 << 10).map(|c| (c, Blk::Compressed)).collect();
    let f = lz4_frame(&blocks, &Lz4Opts::default());
    assert_eq!(dec(Compression::Lz4, &f).unwrap(), a);
}

#[test]
fn lz4_broken_hc_only_accepted_for_legacy() {
    let a = sample(10_000);
    let f = lz4_frame(
        &[(&a, Blk::Compressed)],
        &Lz4Opts {
            broken_hc: true,
            ..Default::default()
        },
    );
    let e = dec(Compression::Lz4, &f).unwrap_err();
    assert_eq!((e.structure, e.field, e.position), ("lz4 frame", "HC", 6));
    let mut d = Decompressor::default();
    assert_eq!(d.decompress(Compression::Lz4, &f, true).unwrap(), &a[..]);
}

#[test]
fn lz4_uncompressed_block_block_checksums_content_size_and_checksum() {
    let a = sample(20_000);
    let b = sample(5_000);
    let opts = Lz4Opts {
        flg: 0x60 | 0x10 | 0x04,
        bd: 0x50,
        content_size: Some(25_000),
        ..Default::default()
    };
    let f = lz4_frame(&[(&a, Blk::Stored), (&b, Blk::Compressed)], &opts);
    let mut ab = a.clone();
    ab.extend_from_slice(&b);
    assert_eq!(dec(Compression::Lz4, &f).unwrap(), ab);
    // A flipped byte in the first (stored) block fails its block checksum.
    let mut bad = f.clone();
    bad[4 + 2 + 8 + 1 + 4 + 10] ^= 1;
    let e = dec(Compression::Lz4, &bad).unwrap_err();
    assert_eq!(e.field, "blockChecksum");
    assert_eq!(e.position, (4 + 2 + 8 + 1 + 4 + 20_000) as u64);
    // The content checksum is read, not verified (as Kafka).
    let mut cc = f.clone();
    let n = cc.len();
    cc[n - 1] ^= 0xFF;
    assert_eq!(dec(Compression::Lz4, &cc).unwrap(), ab);
    // ...but must be present.
    assert_eq!(
        dec(Compression::Lz4, &f[..n - 2]).unwrap_err().field,
        "contentChecksum"
    );
}

#[test]
fn lz4_rejects_what_kafka_rejects() {
    let a = sample(1000);
    let cases: [(u8, u8, &str); 5] = [
        (0x61, 0x40, "FLG"), // dictionary id bit
        (0x62, 0x40, "FLG"), // reserved bit
        (0x40, 0x40, "FLG"), // dependent blocks
        (0xA0, 0x40, "FLG"), // version 2
        (0x60, 0x30, "BD"),  // block size id 3
    ];
    for (flg, bd, field) in cases {
        let f = lz4_frame(
            &[(&a, Blk::Compressed)],
            &Lz4Opts {
                flg,
                bd,
                ..Default::default()
            },
        );
        let e = dec(Compression::Lz4, &f).unwrap_err();
        assert_eq!(
            (e.structure, e.field),
            ("lz4 frame", field),
            "{flg:#x} {bd:#x}"
        );
    }
    // Missing end mark.
    let f = lz4_frame(&[(&a, Blk::Compressed)], &Lz4Opts::default());
    let e = dec(Compression::Lz4, &f[..f.len() - 4]).unwrap_err();
    assert_eq!(e.field, "blockSize");
    // Block larger than the BD maximum (64 KiB).
    let big = sample(70_000);
    let f = lz4_frame(&[(&big, Blk::Stored)], &Lz4Opts::default());
    let e = dec(Compression::Lz4, &f).unwrap_err();
    assert_eq!((e.field, e.position), ("blockSize", 7));
}

#[test]
fn lz4_reads_frames_written_by_liblz4() {
    // An independent encoder (liblz4 through kafka-protocol, content checksum on).
    use bytes::BufMut;
    use kafka_protocol::compression::{Compressor, Lz4};
    let a = sample(200_000);
    let mut out = bytes::BytesMut::new();
    <Lz4 as Compressor<bytes::BytesMut>>::compress(&mut out, |tmp| {
        tmp.put_slice(&a);
        Ok(())
    })
    .unwrap();
    assert_eq!(dec(Compression::Lz4, &out).unwrap(), a);
}

// ------------------------------------------------------------------ zstd

#[test]
fn zstd_several_frames_and_a_skippable_frame() {
    let a = sample(100_000);
    let b = sample(2_000);
    let mut s = zstd_frame(&a);
    s.extend_from_slice(&skippable(b"ignored payload"));
    s.extend_from_slice(&zstd_frame(&b));
    let mut ab = a.clone();
    ab.extend_from_slice(&b);
    assert_eq!(dec(Compression::Zstd, &s).unwrap(), ab);
    // Truncated.
    let f = zstd_frame(&a);
    let e = dec(Compression::Zstd, &f[..f.len() - 5]).unwrap_err();
    assert_eq!(e.structure, "zstd frame");
}

/// Input ending inside a frame after a whole one: Kafka's reader (zstd-jni's
/// `ZstdInputStreamNoFinalizer.readInternal`) ends the stream quietly when a frame finished
/// since its last read of up to 131 075 source bytes, and fails ("Truncated source")
/// otherwise; what a cut frame gave before its end is kept.
#[test]
fn zstd_input_ending_inside_a_frame_after_a_whole_one() {
    let a = sample(10_000);
    let b = sample(50_000);
    let (fa, fb) = (zstd_frame(&a), zstd_frame(&b));
    // A partial magic, the whole magic, a frame cut in its header or its data.
    for cut in [2, 4, 6, fb.len() / 2] {
        let mut s = fa.clone();
        s.extend_from_slice(&fb[..cut]);
        let out = dec(Compression::Zstd, &s).unwrap();
        assert!(
            out.starts_with(&a) && b.starts_with(&out[a.len()..]),
            "cut {cut}"
        );
    }
    // The first frame cut: an error wherever.
    for cut in [2, 4, fa.len() / 2] {
        let e = dec(Compression::Zstd, &fa[..cut]).unwrap_err();
        assert_eq!(e.structure, "zstd frame", "cut {cut}");
    }
    // Larger than one read: the first frame ends before the last read's start (131 075),
    // so the read of the cut frame clears what it left: an error.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..200_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let (small, big) = (zstd_frame(&noise[..100_000]), zstd_frame(&noise[..150_000]));
    assert!(small.len() < 131_075 && big.len() > 131_075);
    let mut s = small.clone();
    s.extend_from_slice(&small[..small.len() / 2]);
    assert!(s.len() > 131_075);
    assert!(dec(Compression::Zstd, &s).is_err());
    // A first frame ending inside the last read: the cut frame after it ends the stream.
    let mut s = big.clone();
    s.extend_from_slice(&small[..4]);
    assert_eq!(dec(Compression::Zstd, &s).unwrap(), noise[..150_000]);
}

// ------------------------------------------------------------------ cap and reuse

fn bombs() -> Vec<(Compression, Vec<u8>)> {
    let zeros = vec![0u8; 1 << 20];
    let blocks: Vec<(&[u8], Blk)> = zeros
        .chunks(64 << 10)
        .map(|c| (c, Blk::Compressed))
        .collect();
    let mut two_gz = gzip(&zeros[..600_000]);
    two_gz.extend_from_slice(&gzip(&zeros[..600_000]));
    vec![
        (Compression::Gzip, gzip(&zeros)),
        (Compression::Gzip, two_gz),
        (Compression::Snappy, snappy_raw(&zeros)),
        (Compression::Snappy, xerial(&zeros, 32 << 10)),
        (Compression::Lz4, lz4_frame(&blocks, &Lz4Opts::default())),
        (Compression::Zstd, zstd_frame(&zeros)),
    ]
}

#[test]
fn output_past_the_cap_is_too_large_for_every_codec() {
    for (codec, input) in bombs() {
        assert!(input.len() < 70_000, "{codec:?} input is small");
        let mut d = Decompressor::new(100_000);
        let e = d.decompress(codec, &input, false).unwrap_err();
        assert_eq!(e.problem, Problem::TooLarge { limit: 100_000 }, "{codec:?}");
        // Exactly at the cap is fine; one byte less is not.
        let n = Decompressor::default()
            .decompress(codec, &input, false)
            .unwrap()
            .len();
        assert!(n == 1 << 20 || n == 1_200_000, "{codec:?}");
        let mut exact = Decompressor::new(n);
        assert_eq!(exact.decompress(codec, &input, false).unwrap().len(), n);
        let mut under = Decompressor::new(n - 1);
        assert_eq!(
            under.decompress(codec, &input, false).unwrap_err().problem,
            Problem::TooLarge {
                limit: (n - 1) as u64
            },
            "{codec:?}"
        );
    }
}

#[test]
fn decompressor_is_reusable_across_codecs() {
    let a = sample(50_000);
    let b = sample(10);
    let mut d = Decompressor::default();
    assert_eq!(
        d.decompress(Compression::Gzip, &gzip(&a), false).unwrap(),
        &a[..]
    );
    assert_eq!(
        d.decompress(Compression::Zstd, &zstd_frame(&b), false)
            .unwrap(),
        &b[..]
    );
    assert_eq!(
        d.decompress(Compression::Snappy, &snappy_raw(&a), false)
            .unwrap(),
        &a[..]
    );
    let f = lz4_frame(&[(&b, Blk::Compressed)], &Lz4Opts::default());
    assert_eq!(d.decompress(Compression::Lz4, &f, false).unwrap(), &b[..]);
    assert_eq!(
        d.decompress(Compression::Zstd, &zstd_frame(&a), false)
            .unwrap(),
        &a[..]
    );
    assert!(d.decompress(Compression::None, &a, false).is_err());
}

// ------------------------------------------------------------------ robustness

const CODECS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn valid_streams() -> Vec<(Compression, Vec<u8>)> {
    let a = sample(3000);
    vec![
        (Compression::Gzip, gzip(&a)),
        (Compression::Snappy, snappy_raw(&a)),
        (Compression::Snappy, xerial(&a, 1000)),
        (
            Compression::Lz4,
            lz4_frame(
                &[(&a[..1500], Blk::Compressed), (&a[1500..], Blk::Stored)],
                &Lz4Opts {
                    flg: 0x74,
                    content_size: Some(3000),
                    ..Default::default()
                },
            ),
        ),
        (Compression::Zstd, zstd_frame(&a)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..600),
                                legacy in any::<bool>()) {
        let mut d = Decompressor::new(1 << 16);
        for codec in CODECS {
            if let Ok(out) = d.decompress(codec, &input, legacy) {
                prop_assert!(out.len() <= 1 << 16);
            }
        }
    }

    #[test]
    fn random_bytes_after_a_valid_prefix_never_panic(
        which in 0usize..5,
        cut in any::<prop::sample::Index>(),
        tail in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let (codec, s) = &valid_streams()[which];
        let mut input = s[..cut.index(s.len())].to_vec();
        input.extend_from_slice(&tail);
        let mut d = Decompressor::new(1 << 16);
        let _ = d.decompress(*codec, &input, false);
    }

    #[test]
    fn mutated_streams_never_panic(
        which in 0usize..5,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let (codec, s) = &valid_streams()[which];
        let mut input = s.clone();
        for (i, x) in flips {
            let i = i.index(input.len());
            input[i] ^= x;
        }
        let mut d = Decompressor::new(1 << 16);
        if let Ok(out) = d.decompress(*codec, &input, true) {
            prop_assert!(out.len() <= 1 << 16);
        }
    }
}

// ------------------------------------------------------------------ real data

/// Every compressed v2 batch in the real broker data decompresses and holds exactly
/// `recordsCount` well-formed records.
#[test]
fn real_data_every_compressed_v2_batch_decodes() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let broker = root.join("broker");
    let mut files = crate::common::files_with_suffix(&broker, ".log");
    files.extend(crate::common::files_with_suffix(
        &broker.join("segmentio__kafka-go"),
        ".recordset.bin",
    ));
    files.extend(crate::common::files_with_suffix(
        &broker.join("tansu-io__tansu"),
        ".bin",
    ));
    let mut per_codec = std::collections::BTreeMap::<&str, (u32, u64)>::new();
    let mut dec = Decompressor::default();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        for entry in Entries::new(&data, 0) {
            let Classified::V2(b) = classify(entry) else {
                continue;
            };
            if b.compression() == Compression::None {
                continue;
            }
            let count = b.records_count();
            let codec = b.compression().name();
            let mut n = 0i32;
            for r in batch_records(&b, &mut dec)
                .unwrap_or_else(|e| panic!("{}@{}: {e}", f.display(), b.position()))
            {
                r.unwrap_or_else(|e| panic!("{}@{}: {e}", f.display(), b.position()));
                n += 1;
            }
            assert_eq!(n, count, "{}@{}", f.display(), b.position());
            let c = per_codec.entry(codec).or_default();
            c.0 += 1;
            c.1 += count as u64;
        }
    }
    eprintln!("compressed v2 batches per codec (batches, records): {per_codec:?}");
    for codec in ["gzip", "snappy", "lz4", "zstd"] {
        assert!(per_codec.contains_key(codec), "no {codec} batch found");
    }
}

/// A tiny raw snappy block that declares a huge length is rejected before anything is
/// allocated for it (snappy cannot expand more than 64/3 times).
#[test]
fn snappy_declared_length_beyond_what_the_block_can_hold() {
    let mut block = Vec::new();
    let mut n: u32 = 200 << 20; // 200 MiB, under the 256 MiB cap
    while n >= 0x80 {
        block.push((n as u8) | 0x80);
        n >>= 7;
    }
    block.push(n as u8);
    block.extend_from_slice(&[0u8; 8]);
    let mut d = Decompressor::default();
    let e = d
        .decompress(Compression::Snappy, &block, false)
        .unwrap_err();
    assert_eq!(e.field, "uncompressedLength", "{e}");
    assert!(matches!(e.problem, Problem::Invalid(_)), "{e}");
    // Highly compressible data still decodes (its ratio is within the bound).
    let data = vec![b'a'; 1 << 20];
    let c = snap::raw::Encoder::new().compress_vec(&data).unwrap();
    assert!(data.len() > 15 * c.len(), "test data should compress well");
    let out = d.decompress(Compression::Snappy, &c, false).unwrap();
    assert_eq!(out.len(), data.len());
}
