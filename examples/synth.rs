//! Benchmark data: a realistic, deterministic broker log dir.
//!
//! ```text
//! cargo run --release --features testkit --example synth -- --out DIR --size 2GiB \
//!     [--seed 42] [--segment-bytes 256MiB]
//! ```
//!
//! Writes, from the seed alone (same seed and size → byte-identical files):
//!
//! * `firehose-0` (40 % of `--size`): one big partition rolled at `--segment-bytes`
//!   (1 GiB segments are allowed), four idempotent producers (none / lz4 / zstd / snappy)
//!   plus plain producers, a leader change, a producer restart (epoch bump);
//! * `orders.<codec>-{0,1}` (8 % per codec: none, lz4, snappy, zstd, gzip): idempotent
//!   producers, one codec per topic (for per-codec decode benchmarks);
//! * `payments-{0..3}` (20 %): interleaved transactional producers, ~10 % of the
//!   transactions aborted; `payments-0` keeps one transaction open from its first batch
//!   (a hanging transaction once the log dir spans more than 15 minutes).
//!
//! Records are JSON-like (compress 3–5×), 1–64 per batch (≤ 16 KiB of records, like
//! `batch.size`). Segments are streamed to disk: memory stays small whatever the size.
//! The log-dir files (`meta.properties`, checkpoints) come from the testkit.
//!
//! `--shape NAME [--count N]` writes instead one of the shapes of issue #11, each a
//! stress on one dimension of the scan (`--size` is then ignored):
//!
//! | shape | what (default `--count`) |
//! |---|---|
//! | `small-batches` | one live segment of N ≈ 113-byte batches (8 000 000: ≈ 0.9 GB) |
//! | `many-producers` | one partition, N producer ids, one idempotent batch each (1 000 000) |
//! | `producers-twice` | one partition, N producer ids writing two batches each, all first batches then all second ones (1 000 000 ids, 2 000 000 batches) |
//! | `many-partitions` | N partitions × 1 000 producer ids, one batch each (1 000) |
//! | `open-txns` | N transactions opened, then their N COMMIT markers (300 000) |
//! | `serial-txns` | the same batches one transaction at a time (300 000): `open-txns`' yardstick |
//! | `many-segments` | one partition of N 16 KiB segments (10 000) |
//! | `coordinator-txns` | `__transaction_state-0` alone, N transactions of 1 000 transactional ids, each Ongoing → PrepareCommit → CompleteCommit (1 000 000) |

use klogscan::testkit::encode::{RecordSpec, end_txn_marker};
use klogscan::testkit::files::encode_offset_checkpoint;
use klogscan::testkit::{BatchSpec, Codec, LogDirBuilder};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// xorshift64* — deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "checkout", "cart", "search", "login", "logout", "view", "click", "purchase", "refund",
    "shipping", "express", "standard", "berlin", "paris", "tokyo", "lagos", "lima", "oslo",
    "android", "ios", "web", "desktop", "premium", "basic", "trial", "EUR", "USD", "JPY",
];

fn json_value(rng: &mut Rng, n: u64, target: usize) -> Vec<u8> {
    let mut s = format!(
        "{{\"id\":{n},\"user\":\"user-{:05}\",\"event\":\"{}\",\"amount\":{}.{:02},\"currency\":\"{}\",\"device\":\"{}\",\"city\":\"{}\",\"tags\":[",
        rng.range(0, 99_999),
        rng.pick(WORDS),
        rng.range(0, 9_999),
        rng.range(0, 99),
        rng.pick(&WORDS[25..]),
        rng.pick(&WORDS[18..22]),
        rng.pick(&WORDS[12..18]),
    );
    let mut first = true;
    while s.len() + 2 < target {
        if !first {
            s.push(',');
        }
        first = false;
        s.push('"');
        s.push_str(rng.pick(WORDS));
        s.push('-');
        s.push_str(&rng.range(0, 999).to_string());
        s.push('"');
    }
    s.push_str("]}");
    s.into_bytes()
}

/// What kind of traffic a partition carries.
#[derive(Clone, Copy, Debug)]
enum Traffic {
    /// Idempotent producers with these codecs, plus plain producers (`Codec::None`).
    Firehose,
    /// Idempotent producers, one codec.
    Orders(Codec),
    /// Transactional producers; `hang` keeps one transaction open from the first batch.
    Payments { hang: bool },
}

struct PartitionPlan {
    topic: String,
    partition: i32,
    bytes: u64,
    traffic: Traffic,
}

/// Streams batches into `<dir>/<topic>-<partition>/<base>.log`, rolling like a broker.
struct SegmentWriter {
    dir: PathBuf,
    segment_bytes: u64,
    out: Option<BufWriter<File>>,
    in_segment: u64,
    written: u64,
    next_offset: i64,
}

impl SegmentWriter {
    fn new(dir: PathBuf, segment_bytes: u64) -> std::io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        Ok(SegmentWriter {
            dir,
            segment_bytes,
            out: None,
            in_segment: 0,
            written: 0,
            next_offset: 0,
        })
    }
    fn push(&mut self, mut spec: BatchSpec) -> std::io::Result<()> {
        spec.base_offset = self.next_offset;
        let bytes = spec.encode();
        let len = bytes.len() as u64;
        if self.out.is_none() || self.in_segment + len > self.segment_bytes {
            if let Some(mut w) = self.out.take() {
                w.flush()?;
            }
            let path = self.dir.join(format!("{:020}.log", self.next_offset));
            self.out = Some(BufWriter::with_capacity(1 << 20, File::create(path)?));
            self.in_segment = 0;
        }
        if let Some(w) = self.out.as_mut() {
            w.write_all(&bytes)?;
        }
        self.in_segment += len;
        self.written += len;
        self.next_offset = spec.last_offset() + 1;
        Ok(())
    }
    fn finish(mut self) -> std::io::Result<i64> {
        if let Some(mut w) = self.out.take() {
            w.flush()?;
        }
        Ok(self.next_offset)
    }
}

/// One idempotent or transactional producer's state.
struct Prod {
    id: i64,
    epoch: i16,
    seq: i32,
    codec: Codec,
    open: bool,
}

fn records(rng: &mut Rng, counter: &mut u64, keyed: bool) -> Vec<RecordSpec> {
    // Skewed: mostly small batches, some full ones (≤ ~16 KiB of records).
    let n = match rng.range(0, 9) {
        0..=3 => rng.range(1, 4),
        4..=7 => rng.range(5, 24),
        _ => rng.range(25, 64),
    };
    let value_size = rng.range(80, (16_000 / n).clamp(80, 600)) as usize;
    (0..n)
        .map(|i| {
            *counter += 1;
            let headers = if rng.chance(20) {
                vec![(
                    b"trace-id".to_vec(),
                    Some(format!("{:016x}", rng.next()).into_bytes()),
                )]
            } else {
                Vec::new()
            };
            RecordSpec {
                attributes: 0,
                timestamp_delta: (i * rng.range(0, 3)) as i64,
                offset_delta: i as i32,
                key: keyed.then(|| format!("key-{}", rng.range(0, 9_999)).into_bytes()),
                value: Some(json_value(rng, *counter, value_size)),
                headers,
            }
        })
        .collect()
}

const START_MS: i64 = 1_572_948_000_000;
const STEP_MS: i64 = 50;

fn write_partition(
    out: &Path,
    plan: &PartitionPlan,
    seed: u64,
    segment_bytes: u64,
) -> std::io::Result<i64> {
    let mut rng = Rng::new(
        seed ^ plan.topic.bytes().fold(plan.partition as u64 + 1, |h, b| {
            h.wrapping_mul(131).wrapping_add(b as u64)
        }),
    );
    let dir = out.join(format!("{}-{}", plan.topic, plan.partition));
    let mut w = SegmentWriter::new(dir, segment_bytes)?;
    let mut clock = START_MS;
    let mut counter = 0u64;
    let base_pid = 1000 * (plan.partition as i64 + 1) + plan.topic.len() as i64 * 100_000;
    let mut leader_epoch = 0;
    match plan.traffic {
        Traffic::Firehose => {
            let codecs = [Codec::None, Codec::Lz4, Codec::Zstd, Codec::SnappyXerial];
            let mut prods: Vec<Prod> = codecs
                .iter()
                .enumerate()
                .map(|(i, &codec)| Prod {
                    id: base_pid + i as i64,
                    epoch: 0,
                    seq: 0,
                    codec,
                    open: false,
                })
                .collect();
            let mut leader_changed = false;
            let mut restarted = false;
            while w.written < plan.bytes {
                if !leader_changed && w.written > plan.bytes / 3 {
                    leader_epoch += 1;
                    leader_changed = true;
                }
                if !restarted && w.written > plan.bytes / 2 {
                    prods[1].epoch += 1; // producer restart: new epoch, sequence from 0
                    prods[1].seq = 0;
                    restarted = true;
                }
                let recs = records(&mut rng, &mut counter, true);
                let spec = if rng.chance(15) {
                    BatchSpec {
                        partition_leader_epoch: leader_epoch,
                        codec: Codec::None,
                        base_timestamp: clock,
                        records: recs,
                        ..BatchSpec::default()
                    }
                } else {
                    let i = rng.range(0, prods.len() as u64 - 1) as usize;
                    let p = &mut prods[i];
                    let n = recs.len() as i32;
                    let spec = BatchSpec {
                        partition_leader_epoch: leader_epoch,
                        codec: p.codec,
                        base_timestamp: clock,
                        producer_id: p.id,
                        producer_epoch: p.epoch,
                        base_sequence: p.seq,
                        records: recs,
                        ..BatchSpec::default()
                    };
                    p.seq = p.seq.wrapping_add(n);
                    spec
                };
                w.push(spec)?;
                clock += STEP_MS;
            }
        }
        Traffic::Orders(codec) => {
            let mut prods: Vec<Prod> = (0..3)
                .map(|i| Prod {
                    id: base_pid + i,
                    epoch: 0,
                    seq: 0,
                    codec,
                    open: false,
                })
                .collect();
            while w.written < plan.bytes {
                let keyed = rng.chance(50);
                let recs = records(&mut rng, &mut counter, keyed);
                let i = rng.range(0, 2) as usize;
                let p = &mut prods[i];
                let n = recs.len() as i32;
                w.push(BatchSpec {
                    partition_leader_epoch: leader_epoch,
                    codec: p.codec,
                    base_timestamp: clock,
                    producer_id: p.id,
                    producer_epoch: p.epoch,
                    base_sequence: p.seq,
                    records: recs,
                    ..BatchSpec::default()
                })?;
                p.seq = p.seq.wrapping_add(n);
                clock += STEP_MS;
            }
        }
        Traffic::Payments { hang } => {
            let codecs = [Codec::Lz4, Codec::Zstd, Codec::None];
            let mut prods: Vec<Prod> = (0..6)
                .map(|i| Prod {
                    id: base_pid + i,
                    epoch: 3,
                    seq: 0,
                    codec: codecs[i as usize % codecs.len()],
                    open: false,
                })
                .collect();
            let coordinator_epoch = 7;
            let mut first = true;
            let step = |w: &mut SegmentWriter,
                        p: &mut Prod,
                        rng: &mut Rng,
                        counter: &mut u64,
                        clock: i64| {
                let recs = records(rng, counter, true);
                let n = recs.len() as i32;
                p.open = true;
                let r = w.push(BatchSpec {
                    partition_leader_epoch: leader_epoch,
                    codec: p.codec,
                    transactional: true,
                    base_timestamp: clock,
                    producer_id: p.id,
                    producer_epoch: p.epoch,
                    base_sequence: p.seq,
                    records: recs,
                    ..BatchSpec::default()
                });
                p.seq = p.seq.wrapping_add(n);
                r
            };
            if hang {
                // Producer 0 opens a transaction and is never heard of again.
                step(&mut w, &mut prods[0], &mut rng, &mut counter, clock)?;
                clock += STEP_MS;
            }
            while w.written < plan.bytes {
                let i = rng.range(if hang { 1 } else { 0 }, prods.len() as u64 - 1) as usize;
                let p = &mut prods[i];
                if p.open && !first && rng.chance(30) {
                    let commit = !rng.chance(10);
                    w.push(end_txn_marker(
                        0,
                        p.id,
                        p.epoch,
                        commit,
                        coordinator_epoch,
                        clock,
                        leader_epoch,
                    ))?;
                    p.open = false;
                } else {
                    step(&mut w, p, &mut rng, &mut counter, clock)?;
                }
                first = false;
                clock += STEP_MS;
            }
            for p in prods.iter_mut().skip(if hang { 1 } else { 0 }) {
                if p.open {
                    w.push(end_txn_marker(
                        0,
                        p.id,
                        p.epoch,
                        true,
                        coordinator_epoch,
                        clock,
                        leader_epoch,
                    ))?;
                    p.open = false;
                    clock += STEP_MS;
                }
            }
        }
    }
    w.finish()
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("bad size {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        other => return Err(format!("unknown unit {other:?}")),
    };
    Ok((n * mult as f64) as u64)
}

fn usage() -> ! {
    eprintln!(
        "usage: synth --out DIR --size SIZE [--seed N] [--segment-bytes SIZE]   (sizes: 2GiB, 512MiB, 100MB, bytes)
       synth --out DIR --shape small-batches|many-producers|producers-twice|many-partitions|open-txns|serial-txns|many-segments|coordinator-txns [--count N]"
    );
    std::process::exit(2)
}

fn main() -> std::io::Result<()> {
    let mut out: Option<PathBuf> = None;
    let mut size = 2u64 << 30;
    let mut seed = 42u64;
    let mut segment_bytes = 256u64 << 20;
    let mut shape: Option<String> = None;
    let mut count: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(val())),
            "--size" => {
                size = parse_size(&val()).unwrap_or_else(|e| {
                    eprintln!("{e}");
                    usage()
                })
            }
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--shape" => shape = Some(val()),
            "--count" => count = Some(val().parse().unwrap_or_else(|_| usage())),
            "--segment-bytes" => {
                segment_bytes = parse_size(&val()).unwrap_or_else(|e| {
                    eprintln!("{e}");
                    usage()
                });
                if !((1 << 14)..=(1 << 30)).contains(&segment_bytes) {
                    eprintln!("--segment-bytes must lie in 16KiB..=1GiB");
                    usage();
                }
            }
            _ => usage(),
        }
    }
    let Some(out) = out else { usage() };
    if let Some(shape) = shape {
        return write_shape(&out, &shape, count);
    }
    let mut plans = vec![PartitionPlan {
        topic: "firehose".into(),
        partition: 0,
        bytes: size * 40 / 100,
        traffic: Traffic::Firehose,
    }];
    for (name, codec) in [
        ("none", Codec::None),
        ("lz4", Codec::Lz4),
        ("snappy", Codec::SnappyXerial),
        ("zstd", Codec::Zstd),
        ("gzip", Codec::Gzip),
    ] {
        for partition in 0..2 {
            plans.push(PartitionPlan {
                topic: format!("orders.{name}"),
                partition,
                bytes: size * 4 / 100,
                traffic: Traffic::Orders(codec),
            });
        }
    }
    for partition in 0..4 {
        plans.push(PartitionPlan {
            topic: "payments".into(),
            partition,
            bytes: size * 5 / 100,
            traffic: Traffic::Payments {
                hang: partition == 0,
            },
        });
    }
    // Log-dir files first (meta.properties, empty checkpoints), then the partitions.
    LogDirBuilder::new(1)
        .cluster_id("c2ludGgtYmVuY2gtZGF0YQ")
        .write(&out)?;
    let ends: Vec<std::io::Result<i64>> = plans
        .par_iter()
        .map(|p| write_partition(&out, p, seed, segment_bytes))
        .collect();
    let mut leo = BTreeMap::new();
    for (p, end) in plans.iter().zip(ends) {
        leo.insert((p.topic.clone(), p.partition), end?);
    }
    let leo: Vec<(String, i32, i64)> = leo.into_iter().map(|((t, p), o)| (t, p, o)).collect();
    for name in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        std::fs::write(out.join(name), encode_offset_checkpoint(&leo))?;
    }
    let total: u64 = walk_size(&out)?;
    println!(
        "wrote {} partitions, {total} bytes of segments, to {}",
        plans.len(),
        out.display()
    );
    Ok(())
}

fn walk_size(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            total += walk_size(&e.path())?;
        } else if e.path().extension().is_some_and(|x| x == "log") {
            total += e.metadata()?.len();
        }
    }
    Ok(total)
}

// ----- the shapes of issue #11 --------------------------------------------------------

/// One small record (≈ 113-byte batches with the 61-byte batch header).
fn small_record(n: u64) -> Vec<RecordSpec> {
    vec![RecordSpec {
        attributes: 0,
        timestamp_delta: 0,
        offset_delta: 0,
        key: None,
        value: Some(format!("{{\"id\":{n:012},\"event\":\"view\",\"ok\":1}}").into_bytes()),
        headers: Vec::new(),
    }]
}

/// An idempotent (or transactional) one-record batch of producer `pid` at `seq`.
fn small_batch(pid: i64, seq: i32, ts: i64, n: u64, transactional: bool) -> BatchSpec {
    BatchSpec {
        partition_leader_epoch: 0,
        base_timestamp: ts,
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: seq,
        transactional,
        records: small_record(n),
        ..BatchSpec::default()
    }
}

/// `__transaction_state-0` holding `n` committed transactions of 1 000 transactional ids
/// (two partitions each), one record per batch as the coordinator appends them: Ongoing,
/// PrepareCommit, CompleteCommit. Returns the partition's checkpoint entry.
fn coordinator_txns(out: &Path, n: u64, clock: &mut i64) -> std::io::Result<(String, i32, i64)> {
    use klogscan::testkit::txnlog::{TxnValue, key, state};
    const TOPIC: &str = "__transaction_state";
    let mut w = SegmentWriter::new(out.join(format!("{TOPIC}-0")), 1 << 30)?;
    let ids: Vec<String> = (0..1_000).map(|i| format!("app-{i:04}")).collect();
    for i in 0..n {
        let at = (i % ids.len() as u64) as usize;
        let pid = 10_000 + at as i64;
        // A producer restart (epoch bump) every 100 transactions of an id.
        let epoch = (i / ids.len() as u64 / 100 % 30_000) as i16;
        let start = *clock;
        let parts: [(&str, &[i32]); 2] = [("orders", &[(i % 8) as i32]), ("payments", &[0])];
        for (status, t) in [
            (state::ONGOING, start),
            (state::PREPARE_COMMIT, start + 5),
            (state::COMPLETE_COMMIT, start + 9),
        ] {
            let mut v = TxnValue::new(pid, epoch, status).times(t, start);
            if status != state::COMPLETE_COMMIT {
                v = v.partitions(&parts);
            }
            w.push(BatchSpec {
                partition_leader_epoch: 3,
                base_timestamp: t,
                records: vec![RecordSpec {
                    attributes: 0,
                    timestamp_delta: 0,
                    offset_delta: 0,
                    key: Some(key(&ids[at])),
                    value: Some(v.encode()),
                    headers: Vec::new(),
                }],
                ..BatchSpec::default()
            })?;
        }
        *clock += 10;
    }
    Ok((TOPIC.into(), 0, w.finish()?))
}

/// Write `shape` under `out` (log-dir files included), then print what was written.
fn write_shape(out: &Path, shape: &str, count: Option<u64>) -> std::io::Result<()> {
    LogDirBuilder::new(1)
        .cluster_id("c2ludGgtYmVuY2gtZGF0YQ")
        .write(out)?;
    let one = |name: &str| out.join(format!("{name}-0"));
    let mut ends: Vec<(String, i32, i64)> = Vec::new();
    let mut clock = START_MS;
    match shape {
        "small-batches" => {
            let n = count.unwrap_or(8_000_000);
            let mut w = SegmentWriter::new(one("small"), 1 << 30)?;
            let mut seq = [0i32; 4];
            for i in 0..n {
                let p = (i % 4) as usize;
                w.push(small_batch(7_000 + p as i64, seq[p], clock, i, false))?;
                seq[p] = seq[p].wrapping_add(1);
                clock += 1;
            }
            ends.push(("small".into(), 0, w.finish()?));
        }
        "many-producers" => {
            let n = count.unwrap_or(1_000_000);
            let mut w = SegmentWriter::new(one("producers"), 1 << 30)?;
            for i in 0..n {
                w.push(small_batch(1_000 + i as i64, 0, clock, i, false))?;
                clock += 1;
            }
            ends.push(("producers".into(), 0, w.finish()?));
        }
        "producers-twice" => {
            // Every producer id alive at once with two batches of state each.
            let n = count.unwrap_or(1_000_000);
            let mut w = SegmentWriter::new(one("producers"), 1 << 30)?;
            for seq in 0..2 {
                for i in 0..n {
                    w.push(small_batch(1_000 + i as i64, seq, clock, i, false))?;
                    clock += 1;
                }
            }
            ends.push(("producers".into(), 0, w.finish()?));
        }
        "many-partitions" => {
            let n = count.unwrap_or(1_000);
            let parts: Vec<i64> = (0..n as i64).collect();
            let written: Vec<std::io::Result<i64>> = parts
                .par_iter()
                .map(|&p| {
                    let mut w = SegmentWriter::new(out.join(format!("parts-{p}")), 1 << 30)?;
                    for i in 0..1_000i64 {
                        w.push(small_batch(p * 1_000 + i, 0, START_MS + i, i as u64, false))?;
                    }
                    w.finish()
                })
                .collect();
            for (p, end) in parts.iter().zip(written) {
                ends.push(("parts".into(), *p as i32, end?));
            }
        }
        "open-txns" | "serial-txns" => {
            let n = count.unwrap_or(300_000);
            let name = shape.trim_end_matches("-txns");
            let mut w = SegmentWriter::new(one(name), 1 << 30)?;
            let marker = |pid: i64, ts: i64| end_txn_marker(0, pid, 0, true, 3, ts, 0);
            for i in 0..n {
                let pid = 1_000 + i as i64;
                w.push(small_batch(pid, 0, clock, i, true))?;
                clock += 1;
                if shape == "serial-txns" {
                    w.push(marker(pid, clock))?;
                    clock += 1;
                }
            }
            if shape == "open-txns" {
                for i in 0..n {
                    w.push(marker(1_000 + i as i64, clock))?;
                    clock += 1;
                }
            }
            ends.push((name.into(), 0, w.finish()?));
        }
        "coordinator-txns" => {
            let n = count.unwrap_or(1_000_000);
            ends.push(coordinator_txns(out, n, &mut clock)?);
        }
        "many-segments" => {
            let n = count.unwrap_or(10_000);
            let mut w = SegmentWriter::new(one("segments"), 16 << 10)?;
            let mut seq = [0i32; 4];
            let mut i = 0u64;
            // ≈ 145 batches of ≈ 113 bytes per 16 KiB segment.
            while w.written < n * (16 << 10) - 200 {
                let p = (i % 4) as usize;
                w.push(small_batch(9_000 + p as i64, seq[p], clock, i, false))?;
                seq[p] = seq[p].wrapping_add(1);
                clock += 1;
                i += 1;
            }
            ends.push(("segments".into(), 0, w.finish()?));
        }
        _ => usage(),
    }
    ends.sort();
    for name in [
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        std::fs::write(out.join(name), encode_offset_checkpoint(&ends))?;
    }
    println!(
        "wrote shape {shape}: {} partitions, {} bytes of segments, to {}",
        ends.len(),
        walk_size(out)?,
        out.display()
    );
    Ok(())
}
