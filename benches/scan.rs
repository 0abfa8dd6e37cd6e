//! Quick criterion benches on small testkit-built data (a few MiB, page-cached): the scan
//! with and without CRC / deep checks against a bare crc32c pass over the same bytes, and
//! record decoding against kafka-protocol. The 2 GiB comparisons live in `benches/compare.sh`.
//!
//! `cargo bench --features testkit --bench scan`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::read::format::{Decompressor, Entries, batch_records};
use klogscan::testkit::{Batch, Codec, PartitionBuilder, Producer, Rec};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One partition, ~`mib` MiB over several segments, idempotent + transactional producers.
fn build(dir: &Path, codec: Codec, mib: usize) -> (PathBuf, Vec<Vec<u8>>) {
    let mut p = PartitionBuilder::new("bench", 0).segment_bytes(4 << 20);
    let idem = Producer::idempotent(1, 0);
    let txn = Producer::transactional(2, 0);
    let value = br#"{"user":"user-00042","event":"checkout","amount":12.34,"currency":"EUR","tags":["web","berlin","premium"]}"#;
    let mut i = 0usize;
    let mut open = false;
    while p.next_offset() * 120 < (mib << 20) as i64 {
        let n = 1 + i % 40;
        if i % 5 == 4 {
            let mut b = Batch::new(txn).codec(codec);
            for k in 0..n {
                b = b.record(Rec::kv(format!("k{k}"), value));
            }
            p.append(b);
            open = true;
        } else if open && i.is_multiple_of(7) {
            p.commit(txn, 1);
            open = false;
        } else {
            let mut b = Batch::new(idem).codec(codec);
            for k in 0..n {
                b = b.record(Rec::kv(format!("k{k}"), value));
            }
            p.append(b);
        }
        i += 1;
    }
    let m = p.write(dir).unwrap();
    let data = m
        .segments
        .iter()
        .map(|(_, path)| std::fs::read(path).unwrap())
        .collect();
    (m.dir, data)
}

fn benches(c: &mut Criterion) {
    // SAFETY: the bench installs no SIGBUS handler of its own; maps as the CLI does.
    unsafe { klogscan::read::segment::enable_guarded_maps() };
    let tmp = tempfile::tempdir().unwrap();
    let (dir, segs) = build(&tmp.path().join("none"), Codec::None, 16);
    let bytes: u64 = segs.iter().map(|s| s.len() as u64).sum();

    let mut g = c.benchmark_group("scan_16MiB_uncompressed");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Bytes(bytes));
    g.bench_function("bare_crc32c", |b| {
        b.iter(|| {
            segs.iter()
                .fold(0u32, |a, s| a ^ crc32c::crc32c(black_box(s)))
        })
    });
    for (name, check_crc, deep) in [
        ("scan", true, false),
        ("scan_no_crc", false, false),
        ("scan_deep", true, true),
    ] {
        let opts = ScanOptions::default()
            .with_threads(1)
            .with_check_crc(check_crc)
            .with_deep(deep);
        g.bench_function(name, |b| b.iter(|| scan(std::slice::from_ref(&dir), &opts)));
    }
    g.finish();

    for codec in [Codec::None, Codec::Lz4, Codec::Zstd] {
        let (_, segs) = build(&tmp.path().join(codec.name()), codec, 4);
        let bytes: u64 = segs.iter().map(|s| s.len() as u64).sum();
        let mut g = c.benchmark_group(format!("decode_4MiB_{}", codec.name()));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Bytes(bytes));
        let mut dec = Decompressor::default();
        g.bench_function("klogscan", |b| {
            b.iter(|| {
                let mut n = 0u64;
                for s in &segs {
                    for e in Entries::new(s, 0) {
                        let Ok(v) = e.as_v2() else { continue };
                        if !v.is_valid() {
                            continue;
                        }
                        if let Ok(recs) = batch_records(&v, &mut dec) {
                            for r in recs.flatten() {
                                n += r.value_size() as u64;
                            }
                        }
                    }
                }
                n
            })
        });
        let shared: Vec<bytes::Bytes> = segs.iter().cloned().map(bytes::Bytes::from).collect();
        g.bench_function("kafka_protocol", |b| {
            b.iter(|| {
                let mut n = 0u64;
                for s in &shared {
                    let mut buf = s.clone();
                    for set in
                        kafka_protocol::records::RecordBatchDecoder::decode_all(&mut buf).unwrap()
                    {
                        for r in &set.records {
                            n += r.value.as_ref().map_or(0, |v| v.len() as u64);
                        }
                    }
                }
                n
            })
        });
        g.finish();
    }
}

criterion_group!(scan_benches, benches);
criterion_main!(scan_benches);
