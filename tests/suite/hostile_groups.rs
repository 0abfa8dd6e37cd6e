//! Hostile `__consumer_offsets` logs that frame and checksum correctly: live groups of
//! every type (classic, consumer, share, streams) among records of every type and version
//! with random values (epochs, offsets, counts and timestamps anywhere in their range,
//! strings and arrays of any content), keyed to those groups so that they meet the groups'
//! own state, tombstones of any key, and transactional batches whose markers may never come.
//! The group replay, the load model, `scan`, `verify` and `groups` must end in findings or
//! silence, never a panic.
#![cfg(feature = "testkit")]

use klogscan::partition::groups::{GroupsOptions, list_groups};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use klogscan::testkit::groups::{self as enc, Rng};
use serde_json::Value;

const GROUPS: [&str; 5] = [
    "classic-app",
    "consumer-app",
    "share-app",
    "streams-app",
    "",
];

/// A random record of `__consumer_offsets` (type, key, value or tombstone), its key's
/// strings set to one of the live groups' ids most of the time.
fn random_record(rng: &mut Rng) -> (Vec<u8>, Option<Vec<u8>>) {
    let s = &enc::CONSUMER_OFFSETS[rng.pick(enc::CONSUMER_OFFSETS.len())];
    let version = rng.pick(s.max_version as usize + 1) as i16;
    let mut key = enc::random_object(&enc::parse(s.key), 0, false, rng, 0);
    if let Value::Object(m) = &mut key {
        for v in m.values_mut() {
            if v.is_string() && rng.pick(4) != 0 {
                *v = Value::from(GROUPS[rng.pick(GROUPS.len())]);
            }
        }
    }
    let value = (rng.pick(6) != 0).then(|| {
        let flex = version >= s.flexible_from;
        let v = enc::random_object(&enc::parse(s.value), version, flex, rng, 0);
        (version, v)
    });
    enc::record(s.id, key, value)
}

/// The live groups of every type, then `n` random records in batches, some transactional.
fn hostile(rng: &mut Rng, n: usize) -> GroupLog {
    let mut log = sc::all_types();
    let mut left = n;
    while left > 0 {
        let k = 1 + rng.pick(left.min(4));
        let recs: Vec<_> = (0..k).map(|_| random_record(rng)).collect();
        left -= k;
        if rng.pick(5) == 0 {
            // A transactional batch of random records, with or without its marker.
            let pid = 1000 + rng.pick(3) as i64;
            log.raw(recs);
            *log.txn.last_mut().unwrap() = Some((pid, None));
            if rng.pick(2) == 0 {
                log.marker(pid, rng.pick(2) == 0);
            }
        } else {
            log.raw(recs);
        }
    }
    log
}

/// Every reader of a coordinator partition, over `dir`.
fn run_all(dir: &std::path::Path) -> usize {
    let dirs = [dir.to_path_buf()];
    let report = klogscan::pipeline::scan(&dirs, &ScanOptions::default());
    let verified = klogscan::request::verify(&klogscan::request::Request::new(dirs.clone()), None);
    assert!(verified.is_ok(), "{:?}", verified.err());
    let inv = klogscan::discover::layout::discover(&dirs);
    let groups = list_groups(
        &inv,
        &GroupsOptions {
            include_deleted: true,
            ..Default::default()
        },
    );
    report.findings.len() + groups.len()
}

#[test]
fn hostile_coordinator_records_among_live_groups_never_panic() {
    // A near miss first: the live groups alone are read, four of them, and no finding.
    let d = tempfile::tempdir().unwrap();
    sc::all_types().write(d.path(), 0).unwrap();
    let report = klogscan::pipeline::scan(&[d.path().to_path_buf()], &ScanOptions::default());
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!(run_all(d.path()), 4);
    let mut rng = Rng(0x6772_6f75_7073_0001);
    for round in 0..60 {
        let n = 1 + rng.pick(12);
        let log = hostile(&mut rng, n);
        let d = tempfile::tempdir().unwrap();
        log.write(d.path(), 0).unwrap();
        let r = std::panic::catch_unwind(|| run_all(d.path()));
        assert!(r.is_ok(), "round {round} panicked over {:?}", d.keep());
    }
}

/// A random record of `__share_group_state` (snapshot or update, any version), keyed to a
/// few share partitions of one group, or a tombstone.
fn random_share_record(rng: &mut Rng) -> (Vec<u8>, Option<Vec<u8>>) {
    let s = &enc::SHARE_GROUP_STATE[rng.pick(enc::SHARE_GROUP_STATE.len())];
    let version = rng.pick(s.max_version as usize + 1) as i16;
    let mut key = enc::random_object(&enc::parse(s.key), 0, false, rng, 0);
    if let Value::Object(m) = &mut key {
        for (name, v) in m.iter_mut() {
            if rng.pick(4) == 0 {
                continue;
            }
            if v.is_string() && name == "groupId" {
                *v = Value::from("sg");
            } else if v.is_string() {
                *v = Value::from("AAAAAAAAAAAAAAAAAAAAAQ");
            } else if v.is_number() {
                *v = Value::from(rng.pick(2));
            }
        }
    }
    let value = (rng.pick(6) != 0).then(|| {
        let flex = version >= s.flexible_from;
        (
            version,
            enc::random_object(&enc::parse(s.value), version, flex, rng, 0),
        )
    });
    enc::share_record(s.id, key, value)
}

/// Random share-state records, well framed, through the share coordinator's replay and
/// every command over it: findings or silence, never a panic.
#[test]
fn hostile_share_state_records_never_panic() {
    use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer, Rec};
    let mut rng = Rng(0x7368_6172_6500_0001);
    for round in 0..60 {
        let mut p = PartitionBuilder::new("__share_group_state", 0);
        for _ in 0..1 + rng.pick(6) {
            let mut b = Batch::new(Producer::PLAIN);
            for _ in 0..1 + rng.pick(3) {
                let (k, v) = random_share_record(&mut rng);
                b = b.record(match v {
                    Some(v) => Rec::kv(k, v),
                    None => Rec::tombstone(k),
                });
            }
            p.append(b);
        }
        let d = tempfile::tempdir().unwrap();
        p.write(d.path()).unwrap();
        let r = std::panic::catch_unwind(|| run_all(d.path()));
        assert!(r.is_ok(), "round {round} panicked over {:?}", d.keep());
    }
}
