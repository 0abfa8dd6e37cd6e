//! Hostile KRaft metadata records that frame and checksum correctly: the leadership
//! replay, `scan`, `verify` and the history read them as a node would, and must end in a
//! finding or silence, never a panic. The values are an unclean election's (two brokers,
//! `orders-0` led by 1, its ISR shrunk to 1, broker 1 fenced, 2 elected with recovery
//! state 1) and the first value of each record type real controllers wrote
//! (`../shared/real-data`), each round with a few of them mutated — bytes set to 0, 0xff,
//! 0x7f or at random, or cut short — and written through the testkit's batch writer, so
//! every batch's CRC holds and the replay, not the frame check, meets them.
#![cfg(feature = "testkit")]

use crate::common::kraft::{T0, broker, topic};
use crate::common::xorshift as rng;
use klogscan::partition::scan::ScanOptions;
use klogscan::read::format::metadata::{MetaRecord, decode_record};
use klogscan::read::format::{Decompressor, Entries, batch_records};
use klogscan::testkit::brokers::{orders_change, orders_partition};
use klogscan::testkit::files::LogDirBuilder;
use klogscan::testkit::metadata::{MetadataLogBuilder, encode};
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
use std::path::{Path, PathBuf};

/// The unclean election's metadata values, in log order.
fn election() -> Vec<Vec<u8>> {
    [
        broker(1),
        broker(2),
        topic(),
        orders_partition(&[1, 2], &[1, 2], 1, 5),
        orders_change(|c| c.isr = Some(vec![1])),
        MetaRecord::FenceBroker { id: 1, epoch: 11 },
        orders_change(|c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        }),
    ]
    .iter()
    .map(encode)
    .collect()
}

/// The first decodable value of each record type in the real metadata logs.
fn real_values() -> Vec<Vec<u8>> {
    let Some(real) = crate::common::real_data() else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut dec = Decompressor::new(1 << 24);
    let logs = crate::common::files_with_suffix(&real.join("broker"), ".log");
    for f in logs
        .iter()
        .filter(|p| p.to_string_lossy().contains("__cluster_metadata-"))
    {
        let data = std::fs::read(f).unwrap();
        for e in Entries::new(&data, 0) {
            let Ok(b) = e.as_v2() else { continue };
            if b.is_control() {
                continue;
            }
            let Ok(records) = batch_records(&b, &mut dec) else {
                continue;
            };
            for v in records.flatten().filter_map(|r| r.value) {
                if let Ok(r) = decode_record(v)
                    && seen.insert(r.type_name())
                {
                    out.push(v.to_vec());
                }
            }
        }
    }
    out
}

/// `orders-0` at leader epoch 5 (100 offsets), then `extra` offsets at epoch 6.
fn orders(extra: usize) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(5);
    for i in 0..10 {
        p.append(Batch::new(Producer::PLAIN).values((0..10).map(|j| format!("v{i}-{j}"))));
    }
    if extra > 0 {
        p.set_leader_epoch(6);
        p.append(Batch::new(Producer::PLAIN).values((0..extra).map(|j| format!("b{j}"))));
    }
    p
}

/// Two brokers' log dirs under `root`, the metadata log (of `values`, three a batch) on
/// broker 2.
fn write(root: &Path, values: &[Vec<u8>]) -> Vec<PathBuf> {
    let (ld1, ld2) = (root.join("broker-1"), root.join("broker-2"));
    LogDirBuilder::new(1)
        .cluster_id("c1")
        .partition(orders(20))
        .high_watermark("orders", 0, 115)
        .write(&ld1)
        .unwrap();
    LogDirBuilder::new(2)
        .cluster_id("c1")
        .partition(orders(10))
        .write(&ld2)
        .unwrap();
    let mut m = MetadataLogBuilder::new(T0);
    for chunk in values.chunks(3) {
        m.raw_batch(chunk.to_vec());
        m.advance(1000);
    }
    m.write(&ld2).unwrap();
    vec![ld1, ld2]
}

/// Mutate `v` in place: a few bytes past the frame (the frame's three bytes stay, so the
/// value still names its type and version), or a cut.
fn mutate(v: &mut Vec<u8>, next: &mut impl FnMut() -> u64) {
    if v.len() <= 3 {
        return;
    }
    if next().is_multiple_of(5) {
        let cut = 3 + (next() as usize) % (v.len() - 3);
        v.truncate(cut);
        return;
    }
    for _ in 0..(1 + next() % 3) {
        let i = 3 + (next() as usize) % (v.len() - 3);
        v[i] = match next() % 4 {
            0 => 0,
            1 => 0xff,
            2 => 0x7f,
            _ => next() as u8,
        };
    }
}

/// Every command that reads a metadata log, over `dirs`.
fn run_all(dirs: &[PathBuf]) {
    let report = klogscan::pipeline::scan(dirs, &ScanOptions::default());
    assert!(!report.partitions.is_empty());
    let verified = klogscan::request::verify(&klogscan::request::Request::new(dirs), None);
    assert!(verified.is_ok(), "{:?}", verified.err());
    let inv = klogscan::discover::layout::discover(dirs);
    let histories = klogscan::cluster::leadership::load_all(&inv, None, 64 << 20);
    assert_eq!(histories.len(), 1, "one cluster");
}

#[test]
fn hostile_metadata_values_that_frame_correctly_never_panic() {
    let mut base = election();
    let real = real_values();
    base.extend(real.iter().cloned());
    // The unmutated log first: the election is read (a near miss for the rounds below).
    let d = tempfile::tempdir().unwrap();
    let dirs = write(d.path(), &base);
    run_all(&dirs);
    let h = crate::common::kraft::history(&dirs[1]);
    assert_eq!(crate::common::kraft::orders_in(&h), Some((2, 6)), "{h:#?}");
    let mut next = rng(0x6d65_7461_6461_7461);
    let mut decodable = 0;
    for round in 0..120 {
        let mut values = base.clone();
        for _ in 0..(1 + next() % 3) {
            let i = (next() as usize) % values.len();
            mutate(&mut values[i], &mut next);
            decodable += usize::from(decode_record(&values[i]).is_ok());
        }
        let d = tempfile::tempdir().unwrap();
        let dirs = write(d.path(), &values);
        let r = std::panic::catch_unwind(|| run_all(&dirs));
        assert!(r.is_ok(), "round {round} panicked over {:?}", d.keep());
    }
    // Mutations that still decode are what reaches the replay's own checks.
    assert!(decodable >= 40, "only {decodable} mutated values decode");
}

/// An `i32` at an edge a replay may meet: negative, zero, the brokers, huge.
fn edge_i32(next: &mut impl FnMut() -> u64) -> i32 {
    [-2, -1, 0, 1, 2, 3, 1000, i32::MAX, i32::MIN][(next() % 9) as usize]
}

/// A replica list at the edges: empty, duplicated, unknown brokers, negative ids.
fn edge_list(next: &mut impl FnMut() -> u64) -> Vec<i32> {
    (0..next() % 5).map(|_| edge_i32(next)).collect()
}

/// A well-formed record of the election's kinds with fields at their edges: `orders-0` or
/// an unknown partition or topic, leaders and lists outside the replicas, epochs at their
/// limits, log dirs of unknown ids.
fn edge_record(next: &mut impl FnMut() -> u64) -> MetaRecord {
    use klogscan::read::format::metadata::{BrokerRegistrationChange, PartitionRecord};
    let topic_id = if next().is_multiple_of(4) {
        [next() as u8; 16]
    } else {
        klogscan::testkit::files::topic_id_for("orders")
    };
    let dirs =
        |next: &mut dyn FnMut() -> u64| (0..next() % 3).map(|_| [next() as u8; 16]).collect();
    match next() % 7 {
        0 => MetaRecord::Partition(PartitionRecord {
            partition_id: edge_i32(next),
            topic_id,
            replicas: edge_list(next),
            isr: edge_list(next),
            removing_replicas: edge_list(next),
            adding_replicas: edge_list(next),
            leader: edge_i32(next),
            leader_recovery_state: (next() % 3) as i8 - 1,
            leader_epoch: edge_i32(next),
            partition_epoch: edge_i32(next),
            directories: dirs(next),
            eligible_leader_replicas: next().is_multiple_of(2).then(|| edge_list(next)),
            last_known_elr: next().is_multiple_of(2).then(|| edge_list(next)),
        }),
        1 => orders_change(|c| {
            c.partition_id = edge_i32(next);
            c.topic_id = topic_id;
            c.leader = edge_i32(next);
            c.isr = next().is_multiple_of(2).then(|| edge_list(next));
            c.replicas = next().is_multiple_of(3).then(|| edge_list(next));
            c.removing_replicas = next().is_multiple_of(3).then(|| edge_list(next));
            c.adding_replicas = next().is_multiple_of(3).then(|| edge_list(next));
            c.leader_recovery_state = (next() % 3) as i8 - 1;
            c.directories = next().is_multiple_of(3).then(|| dirs(next));
            c.eligible_leader_replicas = next().is_multiple_of(3).then(|| edge_list(next));
            c.last_known_elr = next().is_multiple_of(3).then(|| edge_list(next));
        }),
        2 => MetaRecord::FenceBroker {
            id: edge_i32(next),
            epoch: i64::from(edge_i32(next)),
        },
        3 => MetaRecord::UnfenceBroker {
            id: edge_i32(next),
            epoch: i64::from(edge_i32(next)),
        },
        4 => MetaRecord::BrokerRegistrationChange(BrokerRegistrationChange {
            broker_id: edge_i32(next),
            broker_epoch: i64::from(edge_i32(next)),
            fenced: (next() % 3) as i8 - 1,
            in_controlled_shutdown: (next() % 3) as i8 - 1,
            log_dirs: dirs(next),
        }),
        5 => MetaRecord::RemoveTopic { topic_id },
        _ => MetaRecord::UnregisterBroker {
            broker_id: edge_i32(next),
            broker_epoch: i64::from(edge_i32(next)),
        },
    }
}

/// Well-formed records whose fields no controller writes (leaders outside the replicas,
/// negative and extreme epochs and ids, partitions of unknown topics, a topic removed
/// under its partitions): the replay meets them through its own checks, not the decoder's.
#[test]
fn metadata_records_with_fields_at_their_edges_never_panic() {
    let base = election();
    let mut next = rng(0x6564_6765_7265_6373);
    for round in 0..150 {
        let mut values = base.clone();
        for _ in 0..(1 + next() % 4) {
            let at = (next() as usize) % (values.len() + 1);
            values.insert(at, encode(&edge_record(&mut next)));
        }
        let d = tempfile::tempdir().unwrap();
        let dirs = write(d.path(), &values);
        let r = std::panic::catch_unwind(|| run_all(&dirs));
        assert!(r.is_ok(), "round {round} panicked over {:?}", d.keep());
    }
}
