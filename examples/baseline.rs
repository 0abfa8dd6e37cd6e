//! Reference loops for `benches/compare.sh`: what the hardware and other crates do on the
//! same files, so the script can print ratios measured in one run.
//!
//! ```text
//! baseline crc FILE...                 bare crc32c over each mapped file, one thread
//!                                      (each CRC mode times the crc32c crate and
//!                                      klogscan's kernel and reports the faster)
//! baseline crc-cold FILE...            the same, but mapping each file inside the timed
//!                                      loop (page-table setup and teardown included, as
//!                                      a scan pays it)
//! baseline crc-once FILE...           one pass, as a new process does it: each file mapped
//!                                      once and CRC'd in one call (klogscan's kernel); the
//!                                      script times the whole process, as it times a scan
//! baseline evict FILE...               drop the files' pages from the page cache
//!                                      (`posix_fadvise` DONTNEED) and count what stays
//!                                      resident (`mincore`): the cold-cache procedure
//! baseline crc-batches FILE...        crc32c of every v2 batch (`bytes[21..]`, one call per
//!                                      batch, as a CRC check must), maps reused: the floor
//!                                      of per-batch checksumming
//! baseline crc-batches-prefetch FILE... the same, each batch's bytes prefetched ahead
//! baseline decompress FILE...          per codec: raw crate decompression of every payload
//!                                      vs klogscan's Decompressor + record decoding
//! baseline decode FILE...              klogscan record decoding vs kafka-protocol's
//!                                      RecordBatchDecoder on the same bytes (CRC on both)
//! baseline replay FILE...              the producer-state replay alone over one partition's
//!                                      segments (read into memory first, events applied as
//!                                      they are made): its peak memory per producer id
//! ```
//!
//! Every mode prints `name key=value ...` lines; throughput is over segment (file) bytes,
//! best of `--runs N` (default 3).

use klogscan::read::format::{self, BatchView, Compression, Decompressor, Entries};
use std::collections::BTreeMap;
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

/// The least CPU time (user + system, this process) of `runs` runs of `f`: on a shared
/// machine the time a loop was not scheduled does not count, as GNU time's user + system
/// figure of a CLI process does not.
fn best_cpu<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    fn now() -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec the call writes.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
    let mut best = Duration::MAX;
    for _ in 0..runs.max(1) {
        let t = now();
        std::hint::black_box(f());
        best = best.min(now().saturating_sub(t));
    }
    best
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

/// The two CRC-32C implementations every floor is measured with: the `crc32c` crate and
/// klogscan's own kernel (`format::crc`). A floor is the faster of the two.
type CrcFn = fn(&[u8]) -> u32;

const CRCS: [(&str, CrcFn); 2] = [
    ("crate", crc32c::crc32c),
    ("klogscan", klogscan::read::format::crc::crc32c),
];

/// Time `run` with each implementation and print `name bytes= secs= gbps=` for the faster
/// one, plus each implementation's own rate.
fn crc_floor(name: &str, bytes: u64, extra: &str, runs: usize, run: impl Fn(CrcFn) -> u32) {
    let mut fields = String::new();
    let mut fastest = Duration::MAX;
    let mut check = None;
    for (label, f) in CRCS {
        let (d, x) = best(runs, || run(f));
        assert!(
            check.is_none_or(|c| c == x),
            "the CRC implementations disagree"
        );
        check = Some(x);
        fastest = fastest.min(d);
        fields.push_str(&format!(" {label}_gbps={:.2}", gbps(bytes, d)));
    }
    println!(
        "{name} bytes={bytes}{extra} secs={:.4} gbps={:.2}{fields} klogscan_kernel={} check={:08x}",
        fastest.as_secs_f64(),
        gbps(bytes, fastest),
        klogscan::read::format::crc::kernel_name(),
        check.unwrap_or(0)
    );
}

fn crc(files: &[PathBuf], runs: usize) {
    let maps: Vec<memmap2::Mmap> = files.iter().map(map).collect();
    let bytes: u64 = maps.iter().map(|m| m.len() as u64).sum();
    crc_floor("crc", bytes, "", runs, |f| {
        maps.iter().fold(0u32, |acc, m| acc ^ f(m))
    });
}

/// crc32c with the cost of getting the bytes into the address space: a fresh map per
/// file and run (page faults and unmap included), as a scan pays it. `crc` keeps its maps
/// across runs, so its best run finds every page table already populated.
fn crc_cold(files: &[PathBuf], runs: usize) {
    let bytes = total_len(files);
    crc_floor("crc_cold", bytes, "", runs, |f| {
        files.iter().fold(0u32, |acc, p| acc ^ f(&map(p)))
    });
}

/// One pass as a new process makes it: each file mapped once and CRC'd in one call, no
/// repeated runs (the script runs the process `RUNS` times and keeps the best wall time,
/// as for `scan`): the whole-file rate a scan of the same files is compared with.
fn crc_once(files: &[PathBuf]) {
    let bytes = total_len(files);
    let t = Instant::now();
    let check = files.iter().fold(0u32, |acc, p| {
        acc ^ klogscan::read::format::crc::crc32c(&map(p))
    });
    let d = t.elapsed();
    println!(
        "crc_once bytes={bytes} secs={:.4} gbps={:.2} klogscan_kernel={} check={check:08x}",
        d.as_secs_f64(),
        gbps(bytes, d),
        klogscan::read::format::crc::kernel_name()
    );
}

/// Evict the files from the page cache without `drop_caches` (which needs privileges this
/// machine does not give, and would empty every other user's cache too): `fsync` (a dirty
/// page cannot be dropped), `posix_fadvise(DONTNEED)` over each whole file, then `mincore`
/// over a fresh map to count the pages still resident (a page another process has mapped
/// stays). Prints `evict bytes= resident_bytes=`.
fn evict(files: &[PathBuf]) {
    use std::os::fd::AsRawFd;
    let mut bytes = 0u64;
    let mut resident = 0u64;
    for p in files {
        let f = std::fs::File::open(p).expect("open");
        let len = f.metadata().expect("stat").len();
        bytes += len;
        let _ = f.sync_all();
        // SAFETY: advice on a descriptor we own; no memory is passed.
        let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(r, 0, "posix_fadvise {}", p.display());
        if len == 0 {
            continue;
        }
        let m = map(p);
        let pages = (m.len()).div_ceil(4096);
        let mut vec = vec![0u8; pages];
        // SAFETY: `vec` has one byte per page of the map, which lives until the call returns.
        let r =
            unsafe { libc::mincore(m.as_ptr() as *mut libc::c_void, m.len(), vec.as_mut_ptr()) };
        assert_eq!(r, 0, "mincore {}", p.display());
        resident += vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * 4096;
    }
    println!("evict bytes={bytes} resident_bytes={}", resident.min(bytes));
}

/// crc32c per v2 batch over warm maps: what checking every batch's CRC costs at least
/// (the crate runs the last < 768 bytes of each buffer on one stream; klogscan's kernel
/// splits any length into three).
fn crc_batches(files: &[PathBuf], runs: usize) {
    let maps: Vec<memmap2::Mmap> = files.iter().map(map).collect();
    let bytes: u64 = maps.iter().map(|m| m.len() as u64).sum();
    let bs = batches(&maps);
    let extra = format!(" batches={}", bs.len());
    crc_floor("crc_batches", bytes, &extra, runs, |f| {
        bs.iter().fold(0u32, |acc, b| acc ^ f(&b.bytes()[21..]))
    });
}

/// `crc-batches` with the batches' bytes requested early (prefetch) before each one-call
/// CRC: `ahead` batches ahead, or a window `dist` bytes past each batch; `crc_batches`
/// beside it is the plain one-call-per-batch floor of the same run.
fn crc_batches_prefetch(files: &[PathBuf], runs: usize) {
    let maps: Vec<memmap2::Mmap> = files.iter().map(map).collect();
    let bytes: u64 = maps.iter().map(|m| m.len() as u64).sum();
    let bs = batches(&maps);
    let slices: Vec<&[u8]> = bs.iter().map(|b| &b.bytes()[21..]).collect();
    let single = |f: CrcFn| slices.iter().fold(0u32, |acc, b| acc ^ f(b));
    let (d1, check) = best(runs, || single(format::crc::crc32c));
    let mut fields = format!(" one_call_gbps={:.2}", gbps(bytes, d1));
    let mut fastest = Duration::MAX;
    // One call per batch, with the cache lines of the batch `ahead` places on requested
    // (prefetch) before the current one is computed.
    for ahead in [1usize, 2, 4] {
        let (d, x) = best(runs, || {
            let mut acc = 0u32;
            for (i, b) in slices.iter().enumerate() {
                if let Some(n) = slices.get(i + ahead) {
                    prefetch(n);
                }
                acc ^= format::crc::crc32c(b);
            }
            acc
        });
        assert_eq!(x, check);
        fastest = fastest.min(d);
        fields.push_str(&format!(" prefetch{ahead}_gbps={:.2}", gbps(bytes, d)));
    }
    // One call per batch, with the bytes `dist` past the batch's own requested before it
    // is computed (a window sliding ahead of the stream, each line asked once).
    for dist in [4096usize, 8192, 16384] {
        let (d, x) = best(runs, || {
            let mut acc = 0u32;
            for b in &slices {
                prefetch_ahead(b, dist);
                acc ^= format::crc::crc32c(b);
            }
            acc
        });
        assert_eq!(x, check);
        fastest = fastest.min(d);
        fields.push_str(&format!(
            " window{}k_gbps={:.2}",
            dist >> 10,
            gbps(bytes, d)
        ));
    }
    println!(
        "crc_batches_prefetch bytes={bytes} batches={} secs={:.4} gbps={:.2}{fields} klogscan_kernel={} check={check:08x}",
        slices.len(),
        fastest.as_secs_f64(),
        gbps(bytes, fastest),
        format::crc::kernel_name(),
    );
}

/// Ask the CPU to bring every cache line of `b` towards the core (a hint: never faults).
fn prefetch(b: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for off in (0..b.len()).step_by(64) {
        // SAFETY: a prefetch reads nothing and never faults; the address lies in `b`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                b.as_ptr().add(off).cast(),
            )
        };
    }
}

/// Ask the CPU for the cache lines `dist` bytes past each line of `b` (past the slice:
/// a prefetch never faults and reads nothing, so the address may lie anywhere).
fn prefetch_ahead(b: &[u8], dist: usize) {
    #[cfg(target_arch = "x86_64")]
    for off in (0..b.len()).step_by(64) {
        // SAFETY: a prefetch reads nothing and never faults, whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                b.as_ptr().wrapping_add(off + dist).cast(),
            )
        };
    }
}

/// The cost of getting the bytes into the address space, without any CRC: a fresh map per
/// file and run, one byte read per 4 KiB page, then the unmap. Every process that maps
/// the files pays this (page faults, page-table setup and teardown); `crc` does not,
/// because its maps and page tables survive from run to run.
fn touch(files: &[PathBuf], runs: usize) {
    let bytes = total_len(files);
    let (d, sum) = best(runs, || {
        files.iter().fold(0u64, |acc, p| {
            let m = map(p);
            acc + m.iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>()
        })
    });
    print_pass("touch", bytes, d, sum);
}

/// The cost of getting the bytes by `read()` instead of a map: each file read through one
/// reused 256 KiB buffer (the kernel copies every byte), one byte per 4 KiB page summed.
/// The other way for a new process to see the bytes; `touch` is the map's cost.
fn read_pass(files: &[PathBuf], runs: usize) {
    use std::io::Read;
    let bytes = total_len(files);
    let mut buf = vec![0u8; 256 << 10];
    let (d, sum) = best(runs, || {
        let mut acc = 0u64;
        for p in files {
            let mut f = std::fs::File::open(p).expect("open");
            loop {
                let n = f.read(&mut buf).expect("read");
                if n == 0 {
                    break;
                }
                acc += buf[..n]
                    .iter()
                    .step_by(4096)
                    .map(|&b| u64::from(b))
                    .sum::<u64>();
            }
        }
        acc
    });
    print_pass("read", bytes, d, sum);
}

/// The files' total length.
fn total_len(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .map(|f| std::fs::metadata(f).expect("stat").len())
        .sum()
}

/// `name bytes= secs= gbps= check=` of a pass without CRC.
fn print_pass(name: &str, bytes: u64, d: Duration, check: u64) {
    println!(
        "{name} bytes={bytes} secs={:.4} gbps={:.2} check={check}",
        d.as_secs_f64(),
        gbps(bytes, d)
    );
}

/// crc32c per v2 batch over fresh maps: the floor of a scan that checks every batch's CRC
/// in a new process (the entry walk, the per-batch CRC and the maps' faults and unmaps;
/// no header checks, no events, no replay).
fn crc_batches_cold(files: &[PathBuf], runs: usize) {
    let bytes = total_len(files);
    crc_floor("crc_batches_cold", bytes, "", runs, |f| {
        files.iter().fold(0u32, |acc, p| {
            let m = map(p);
            Entries::new(&m, 0)
                .filter(|e| e.magic() == 2)
                .filter_map(|e| e.as_v2().ok())
                .fold(acc, |a, b| a ^ f(&b.bytes()[21..]))
        })
    });
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

/// Reused state of the raw decompressors (contexts and output buffer), as a careful
/// client would keep it: the floor should not pay per-batch setup klogscan avoids.
struct Raw {
    out: Vec<u8>,
    zstd: zstd::bulk::Decompressor<'static>,
    inflate: flate2::Decompress,
    snappy: snap::raw::Decoder,
}

impl Raw {
    fn new() -> Self {
        Raw {
            out: vec![0; 1 << 20],
            zstd: zstd::bulk::Decompressor::new().expect("zstd context"),
            inflate: flate2::Decompress::new(false),
            snappy: snap::raw::Decoder::new(),
        }
    }

    fn room(&mut self, n: usize) {
        if self.out.len() < n {
            self.out.resize(n, 0);
        }
    }

    /// Decompress a payload with the codec's crate directly; returns the output length.
    fn decompress(&mut self, codec: Compression, input: &[u8]) -> usize {
        match codec {
            Compression::Gzip => {
                // flate2's writer emits a bare 10-byte header; deflate, then CRC-32 + ISIZE.
                let mut filled = 0;
                self.inflate.reset(false);
                let mut pos = 10;
                loop {
                    self.room(filled + (64 << 10));
                    let (i0, o0) = (self.inflate.total_in(), self.inflate.total_out());
                    let st = self
                        .inflate
                        .decompress(
                            &input[pos..input.len() - 8],
                            &mut self.out[filled..],
                            flate2::FlushDecompress::Finish,
                        )
                        .expect("gzip");
                    pos += (self.inflate.total_in() - i0) as usize;
                    filled += (self.inflate.total_out() - o0) as usize;
                    if st == flate2::Status::StreamEnd {
                        break;
                    }
                }
                std::hint::black_box(crc32fast::hash(&self.out[..filled]));
                filled
            }
            Compression::Lz4 => {
                // Kafka's frame (FLG 0x60: independent blocks, no checksums): 7-byte header,
                // `[u32 LE size | high bit = stored][block]`, zero end mark.
                let mut pos = 7;
                let mut filled = 0;
                while pos + 4 <= input.len() {
                    let word = u32::from_le_bytes(input[pos..pos + 4].try_into().unwrap());
                    pos += 4;
                    if word == 0 {
                        break;
                    }
                    let len = (word & 0x7fff_ffff) as usize;
                    let block = &input[pos..pos + len];
                    self.room(filled + (64 << 10));
                    if word & 0x8000_0000 != 0 {
                        self.out[filled..filled + len].copy_from_slice(block);
                        filled += len;
                    } else {
                        filled += lz4_flex::block::decompress_into(block, &mut self.out[filled..])
                            .expect("lz4");
                    }
                    pos += len;
                }
                filled
            }
            Compression::Zstd => self
                .zstd
                .decompress_to_buffer(input, &mut self.out[..])
                .expect("zstd (output ≤ 1 MiB)"),
            Compression::Snappy => {
                let mut filled = 0;
                let mut one = |raw: &mut Raw, block: &[u8]| {
                    let n = snap::raw::decompress_len(block).expect("snappy");
                    raw.room(filled + n);
                    raw.snappy
                        .decompress(block, &mut raw.out[filled..filled + n])
                        .expect("snappy");
                    filled += n;
                };
                if input.starts_with(&format::codec::XERIAL_MAGIC) {
                    let mut pos = 16;
                    while pos + 4 <= input.len() {
                        let len =
                            u32::from_be_bytes(input[pos..pos + 4].try_into().unwrap()) as usize;
                        one(self, &input[pos + 4..pos + 4 + len]);
                        pos += 4 + len;
                    }
                } else {
                    one(self, input);
                }
                filled
            }
            Compression::None | Compression::Unknown(_) => input.len(),
        }
    }
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
        let mut r = Raw::new();
        let (raw, out) = best(runs, || {
            bs.iter()
                .map(|b| r.decompress(codec, b.records_bytes()) as u64)
                .sum::<u64>()
        });
        let raw_cpu = best_cpu(runs, || {
            bs.iter()
                .map(|b| r.decompress(codec, b.records_bytes()) as u64)
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
            "decompress codec={name} batches={} bytes={bytes} out={out} records={n} raw_gbps={:.3} raw_cpu_gbps={:.3} klogscan_decompress_gbps={:.3} klogscan_decode_gbps={:.3} ratio_decompress={:.3} ratio_decode={:.3}",
            bs.len(),
            gbps(bytes, raw),
            gbps(bytes, raw_cpu),
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

/// A field of `/proc/self/status` in KiB (0 where unavailable).
fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The replay's own peak memory: the segments are read into memory first (their size is
/// the baseline), then every v2 batch is turned into an event and applied at once (no
/// event buffer), and the replay is sealed as a scan seals it. Peak RSS above the
/// baseline, divided by the producer ids seen, is the replay's cost per id at peak.
fn replay(files: &[PathBuf]) {
    use klogscan::partition::event::{BatchEvent, Classified, classify};
    use klogscan::partition::state::{PartitionContext, Replay, ReplayOptions};
    let data: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("read"))
        .collect();
    let before = status_kib("VmRSS:");
    let start = Instant::now();
    let mut r = Replay::new(PartitionContext::default(), ReplayOptions::default());
    let mut findings = Vec::new();
    let mut batches = 0u64;
    for (i, d) in data.iter().enumerate() {
        for raw in Entries::new(d, 0) {
            if let Classified::V2(b) = classify(raw) {
                r.apply(&BatchEvent::from_v2(&b, i as u32, false), &mut findings);
                batches += 1;
            }
        }
    }
    let applied = start.elapsed();
    let sealed = r.seal(false, false);
    let out = sealed.finish(0, &mut findings);
    let peak = status_kib("VmHWM:");
    let ids = out.producer_count.max(1) as u64;
    println!(
        "replay batches={batches} producers={} findings={} secs={:.3} baseline_kib={before} peak_kib={peak} bytes_per_id_at_peak={}",
        out.producer_count,
        findings.len(),
        applied.as_secs_f64(),
        (peak.saturating_sub(before) * 1024) / ids
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
        eprintln!(
            "usage: baseline crc|crc-cold|crc-once|evict|crc-batches|crc-batches-prefetch|crc-batches-cold|touch|read|decompress|decode [--runs N] FILE..."
        );
        std::process::exit(2);
    };
    let files: Vec<PathBuf> = args[1..].iter().map(PathBuf::from).collect();
    match mode.as_str() {
        "crc" => crc(&files, runs),
        "crc-cold" => crc_cold(&files, runs),
        "crc-once" => crc_once(&files),
        "evict" => evict(&files),
        "crc-batches" => crc_batches(&files, runs),
        "crc-batches-prefetch" => crc_batches_prefetch(&files, runs),
        "crc-batches-cold" => crc_batches_cold(&files, runs),
        "touch" => touch(&files, runs),
        "read" => read_pass(&files, runs),
        "decompress" => decompress(&files, runs),
        "decode" => decode(&files, runs),
        "replay" => replay(&files),
        _ => {
            eprintln!("unknown mode {mode}");
            std::process::exit(2);
        }
    }
}
