//! Reference loops for `benches/compare.sh`: what the hardware and other crates do on the
//! same files, so the script can print ratios measured in one run.
//!
//! ```text
//! baseline crc FILE...                 bare crc32c over each mapped file, one thread
//! baseline decompress FILE...          per codec: raw crate decompression of every payload
//!                                      vs klogscan's Decompressor + record decoding
//! baseline decode FILE...              klogscan record decoding vs kafka-protocol's
//!                                      RecordBatchDecoder on the same bytes (CRC on both)
//! ```
//!
//! Every mode prints `name key=value ...` lines; throughput is over segment (file) bytes,
//! best of `--runs N` (default 3).

use klogscan::format::{self, BatchView, Compression, Decompressor, Entries};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn map(path: &PathBuf) -> memmap2::Mmap {
    let f = std::fs::File::open(path).expect("open");
    // SAFETY: read-only map of a benchmark file nobody writes while we run.
    unsafe { memmap2::Mmap::map(&f).expect("mmap") }
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let r = f();
        let d = t.elapsed();
        if d < best {
            best = d;
        }
        out = Some(r);
    }
    (best, out.expect("at least one run"))
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn crc(files: &[PathBuf], runs: usize) {
    let maps: Vec<memmap2::Mmap> = files.iter().map(map).collect();
    let bytes: u64 = maps.iter().map(|m| m.len() as u64).sum();
    let (d, x) = best(runs, || {
        maps.iter().fold(0u32, |acc, m| acc ^ crc32c::crc32c(m))
    });
    println!(
        "crc bytes={bytes} secs={:.4} gbps={:.2} check={x:08x}",
        d.as_secs_f64(),
        gbps(bytes, d)
    );
}

/// The v2 batches of the files, as (codec, whole batch bytes) over the maps.
fn batches<'a>(maps: &'a [memmap2::Mmap]) -> Vec<BatchView<'a>> {
    let mut out = Vec::new();
    for m in maps {
        for e in Entries::new(m, 0) {
            if e.magic() == 2
                && let Ok(b) = e.as_v2()
            {
                out.push(b);
            }
        }
    }
    out
}

/// Decompress a payload with the codec's crate directly, as a plain client would.
fn raw_decompress(codec: Compression, input: &[u8], out: &mut Vec<u8>) -> usize {
    out.clear();
    match codec {
        Compression::Gzip => {
            flate2::read::MultiGzDecoder::new(input)
                .read_to_end(out)
                .expect("gzip");
        }
        Compression::Lz4 => {
            // Kafka's frame (FLG 0x60: independent blocks, no checksums): 7-byte header,
            // `[u32 LE size | high bit = stored][block]`, zero end mark.
            let mut pos = 7;
            while pos + 4 <= input.len() {
                let word = u32::from_le_bytes(input[pos..pos + 4].try_into().unwrap());
                pos += 4;
                if word == 0 {
                    break;
                }
                let len = (word & 0x7fff_ffff) as usize;
                let block = &input[pos..pos + len];
                if word & 0x8000_0000 != 0 {
                    out.extend_from_slice(block);
                } else {
                    let at = out.len();
                    out.resize(at + (64 << 10), 0);
                    let n = lz4_flex::block::decompress_into(block, &mut out[at..]).expect("lz4");
                    out.truncate(at + n);
                }
                pos += len;
            }
        }
        Compression::Zstd => {
            zstd::stream::read::Decoder::with_buffer(input)
                .expect("zstd")
                .read_to_end(out)
                .expect("zstd");
        }
        Compression::Snappy => {
            let mut dec = snap::raw::Decoder::new();
            if input.starts_with(&format::codec::XERIAL_MAGIC) {
                let mut pos = 16;
                while pos + 4 <= input.len() {
                    let len = u32::from_be_bytes(input[pos..pos + 4].try_into().unwrap()) as usize;
                    let block = &input[pos + 4..pos + 4 + len];
                    let n = snap::raw::decompress_len(block).expect("snappy");
                    let at = out.len();
                    out.resize(at + n, 0);
                    dec.decompress(block, &mut out[at..]).expect("snappy");
                    pos += 4 + len;
                }
            } else {
                let n = snap::raw::decompress_len(input).expect("snappy");
                out.resize(n, 0);
                dec.decompress(input, out).expect("snappy");
            }
        }
        Compression::None | Compression::Unknown(_) => out.extend_from_slice(input),
    }
    out.len()
}

/// klogscan's deep path for one batch: decompress into the reused buffer, walk every record.
fn klogscan_decode(b: &BatchView<'_>, dec: &mut Decompressor) -> (u64, u64) {
    let mut n = 0u64;
    let mut sum = 0u64;
    if let Ok(records) = format::batch_records(b, dec) {
        for r in records.flatten() {
            n += 1;
            sum = sum.wrapping_add(r.key_size() as u64 + r.value_size() as u64);
        }
    }
    (n, sum)
}

fn decompress(files: &[PathBuf], runs: usize) {
    let maps: Vec<memmap2::Mmap> = files.iter().map(map).collect();
    let all = batches(&maps);
    let mut by_codec: BTreeMap<&'static str, (Compression, Vec<BatchView<'_>>)> = BTreeMap::new();
    for b in all {
        let c = b.compression();
        if c != Compression::None && !b.is_control() {
            by_codec
                .entry(c.name())
                .or_insert((c, Vec::new()))
                .1
                .push(b);
        }
    }
    for (name, (codec, bs)) in by_codec {
        let bytes: u64 = bs.iter().map(|b| b.size() as u64).sum();
        let mut buf = Vec::new();
        let (raw, out) = best(runs, || {
            bs.iter()
                .map(|b| raw_decompress(codec, b.records_bytes(), &mut buf) as u64)
                .sum::<u64>()
        });
        let mut dec = Decompressor::default();
        let (plain, _) = best(runs, || {
            bs.iter()
                .map(|b| {
                    dec.decompress(codec, b.records_bytes(), false)
                        .map_or(0, |o| o.len() as u64)
                })
                .sum::<u64>()
        });
        let (deep, (n, _)) = best(runs, || {
            bs.iter().fold((0u64, 0u64), |acc, b| {
                let (n, s) = klogscan_decode(b, &mut dec);
                (acc.0 + n, acc.1.wrapping_add(s))
            })
        });
        println!(
            "decompress codec={name} batches={} bytes={bytes} out={out} records={n} raw_gbps={:.3} klogscan_decompress_gbps={:.3} klogscan_decode_gbps={:.3} ratio_decompress={:.3} ratio_decode={:.3}",
            bs.len(),
            gbps(bytes, raw),
            gbps(bytes, plain),
            gbps(bytes, deep),
            raw.as_secs_f64() / plain.as_secs_f64(),
            raw.as_secs_f64() / deep.as_secs_f64(),
        );
    }
}

fn decode(files: &[PathBuf], runs: usize) {
    let datas: Vec<Vec<u8>> = files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let bytes: u64 = datas.iter().map(|d| d.len() as u64).sum();
    let mut dec = Decompressor::default();
    let (ours, (n1, _)) = best(runs, || {
        let mut acc = (0u64, 0u64);
        for d in &datas {
            for e in Entries::new(d, 0) {
                if let Ok(b) = e.as_v2()
                    && b.is_valid()
                {
                    let (n, s) = klogscan_decode(&b, &mut dec);
                    acc = (acc.0 + n, acc.1.wrapping_add(s));
                }
            }
        }
        acc
    });
    let shared: Vec<bytes::Bytes> = datas.into_iter().map(bytes::Bytes::from).collect();
    let (theirs, n2) = best(runs, || {
        let mut n = 0u64;
        for d in &shared {
            let mut buf = d.clone();
            let sets = kafka_protocol::records::RecordBatchDecoder::decode_all(&mut buf)
                .expect("kafka-protocol decode");
            for s in sets {
                for r in &s.records {
                    n += 1;
                    std::hint::black_box(r.value.as_ref().map(|v| v.len()));
                }
            }
        }
        n
    });
    println!(
        "decode bytes={bytes} records={n1} kp_records={n2} klogscan_gbps={:.3} kafka_protocol_gbps={:.3} speedup={:.2}",
        gbps(bytes, ours),
        gbps(bytes, theirs),
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(3);
        args.drain(i..(i + 2).min(args.len()));
    }
    let Some(mode) = args.first().cloned() else {
        eprintln!("usage: baseline crc|decompress|decode [--runs N] FILE...");
        std::process::exit(2);
    };
    let files: Vec<PathBuf> = args[1..].iter().map(PathBuf::from).collect();
    match mode.as_str() {
        "crc" => crc(&files, runs),
        "decompress" => decompress(&files, runs),
        "decode" => decode(&files, runs),
        _ => {
            eprintln!("unknown mode {mode}");
            std::process::exit(2);
        }
    }
}
