//! The sample data committed in `testdata/`, generated deterministically.
//!
//! `tests/sample_data.rs` regenerates it into a temporary directory and fails if any
//! committed byte differs; `KLOGSCAN_BLESS=1 cargo test --features testkit --test
//! sample_data` rewrites `testdata/`. `testdata/README.md` documents every partition.

use std::path::Path;

use super::encode::Codec;
use super::files::{LogDirBuilder, LogDirManifest};
use super::scenario::{Batch, Legacy, PartitionBuilder, Producer, Rec};

/// 2019-11-05T10:00:00Z, in KAFKA-9144's era.
pub const T0: i64 = 1_572_948_000_000;
/// The one partitionLeaderEpoch used by the v2 sample partitions.
pub const LEADER_EPOCH: i32 = 5;
/// Broker id of the sample log dir.
pub const BROKER_ID: i32 = 1;
/// Cluster id written into `meta.properties` (a 22-character base64url UUID).
pub fn cluster_id() -> String {
    super::files::uuid_text(&super::files::topic_id_for("klogscan-sample-cluster"))
}

/// The transactional producer whose zombie batch hangs `payments-3`.
pub const ZOMBIE_PID: i64 = 4001;
/// Offset of the zombie batch (what `scan` pins the LSO to).
pub const ZOMBIE_OFFSET: i64 = 21;

/// `payments-3`: the KAFKA-9144 case (see `testdata/README.md`).
pub fn payments_3() -> PartitionBuilder {
    let zombie = Producer::transactional(ZOMBIE_PID, 17);
    let idem = Producer::idempotent(5001, 0);
    let healthy = Producer::transactional(6001, 3);
    let plain = Producer::PLAIN;
    let pay = |i: usize| {
        Rec::kv(format!("order-{i}"), format!("{{\"amount\":{}}}", 100 + i))
            .header("source", Some(b"checkout"))
    };
    let mut p = PartitionBuilder::new("payments", 3)
        .start_time(T0)
        .leader_epoch(LEADER_EPOCH);
    // 0-4: 4001 epoch 17, seq 0..4; 5: its COMMIT (coordinatorEpoch 7)
    p.append((0..5).fold(Batch::new(zombie), |b, i| b.record(pay(i))));
    p.commit(zombie, 7);
    // 6-8 idempotent, 9-10 plain, 11-12 healthy txn, 13-14 idempotent, 15 healthy COMMIT
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(plain).values(["ping", "pong"]));
    p.append((5..7).fold(Batch::new(healthy), |b, i| b.record(pay(i))));
    p.append(Batch::new(idem).records(2));
    p.commit(healthy, 7);
    // 16: the coordinator's timeout abort for 4001 at epoch 19: closes nothing here
    p.abort(zombie.with_epoch(19), 7);
    p.roll();
    // 17-19 idempotent, 20 plain
    p.append(Batch::new(idem).records(3));
    p.append(Batch::new(plain).record(Rec::value("heartbeat")));
    // 21-23: the ZOMBIE: 4001 epoch 18, seq 0, LZ4, 3 records, never closed
    p.append((7..10).fold(
        Batch::new(zombie.with_epoch(18)).codec(Codec::Lz4),
        |b, i| b.record(pay(i)),
    ));
    // then traffic more than 15 minutes later
    p.advance_time(16 * 60_000);
    p.append(Batch::new(idem).records(2));
    p.append(Batch::new(plain).values(["late"]));
    p.append((10..12).fold(Batch::new(healthy), |b, i| b.record(pay(i))));
    p.commit(healthy, 7);
    p.advance_time(4 * 60_000);
    p.append(Batch::new(idem).records(2));
    p
}

/// `codec-<name>-0`: a few batches in one codec, with headers and null keys/values.
pub fn codec_partition(name: &str, codecs: &[Codec]) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(&format!("codec-{name}"), 0)
        .start_time(T0 + 3_600_000)
        .leader_epoch(LEADER_EPOCH);
    let idem = Producer::idempotent(7001, 1);
    for (i, &c) in codecs.iter().cycle().take(4).enumerate() {
        let b = match i {
            0 => Batch::new(Producer::PLAIN)
                .record(Rec::kv("k0", "first value").header("content-type", Some(b"text/plain")))
                .record(Rec::value("null key"))
                .record(Rec::tombstone("k0")),
            1 => Batch::new(idem)
                .record(Rec::kv("k1", "v1").header("h", None))
                .record(Rec::default()),
            2 => Batch::new(idem).values(["a", "b", "c", "d"]),
            _ => Batch::new(Producer::PLAIN).record(
                Rec::kv("big", "x".repeat(300))
                    .header("a", Some(b"1"))
                    .header("b", Some(b"2")),
            ),
        };
        p.append(b.codec(c));
    }
    p
}

/// `legacy-0`: magic 0 then (after a roll, as after an upgrade to 0.10) magic 1 messages,
/// uncompressed and in gzip/snappy/lz4 wrappers.
pub fn legacy_0() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("legacy", 0).start_time(T0 - 365 * 86_400_000);
    p.legacy(
        Legacy::v0()
            .message(Some(b"k0"), Some(b"v0"))
            .values(["v1"]),
    );
    p.legacy(Legacy::v0().codec(Codec::Gzip).values(["g0", "g1", "g2"]));
    p.legacy(Legacy::v0().codec(Codec::SnappyXerial).values(["s0", "s1"]));
    p.legacy(Legacy::v0().codec(Codec::Lz4).values(["l0", "l1", "l2"]));
    p.roll();
    p.legacy(Legacy::v1().message(Some(b"k1"), None).values(["w1"]));
    p.legacy(Legacy::v1().codec(Codec::Gzip).values(["G0", "G1"]));
    p.legacy(
        Legacy::v1()
            .codec(Codec::SnappyXerial)
            .values(["S0", "S1", "S2"]),
    );
    p.legacy(Legacy::v1().codec(Codec::Lz4).values(["L0", "L1"]));
    p
}

/// The sample log dir `broker-1`.
pub fn broker_1() -> LogDirBuilder {
    LogDirBuilder::new(BROKER_ID)
        .cluster_id(&cluster_id())
        .partition(payments_3())
        .partition(codec_partition("none", &[Codec::None]))
        .partition(codec_partition("gzip", &[Codec::Gzip]))
        .partition(codec_partition(
            "snappy",
            &[Codec::SnappyXerial, Codec::SnappyRaw],
        ))
        .partition(codec_partition("lz4", &[Codec::Lz4]))
        .partition(codec_partition("zstd", &[Codec::Zstd]))
        .partition(legacy_0())
}

/// Write every sample under `dir` (`dir/broker-1/...`).
pub fn write_all(dir: &Path) -> std::io::Result<Vec<LogDirManifest>> {
    Ok(vec![broker_1().write(&dir.join("broker-1"))?])
}
