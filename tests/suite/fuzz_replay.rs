//! The fuzz entry points (`klogscan::fuzzing`) on stable: random and mutated bytes must never
//! panic. Mutations start from real broker-written segments, so they reach deep code.

use klogscan::fuzzing;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn log_segment_random(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzzing::log_segment(&data);
    }

    #[test]
    fn codec_random(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::codec(&data);
    }

    #[test]
    fn index_random(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::index(&data);
    }

    #[test]
    fn snapshot_random(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::snapshot(&data);
    }

    #[test]
    fn checkpoint_random(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzzing::checkpoint(&data);
    }

    #[test]
    fn control_random(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        fuzzing::control(&data);
    }

    #[test]
    fn txnlog_random(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzzing::txnlog(&data);
    }

    #[test]
    fn offsets_random(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        fuzzing::offsets(&data);
    }
}

/// Small real segments of every codec and magic, to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let Some(real) = crate::common::real_data() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in crate::common::files_with_suffix(&real.join("broker"), ".log")
        .into_iter()
        .chain(crate::common::files_with_suffix(
            &real.join("rebuilt"),
            ".log",
        ))
    {
        let data = std::fs::read(&f).unwrap();
        if !data.is_empty() && data.len() <= 64 * 1024 {
            out.push(data);
        }
    }
    assert!(
        out.len() >= 5,
        "expected several small real segments, found {}",
        out.len()
    );
    out
}

/// Mutations of real index, snapshot and checkpoint files.
#[test]
fn mutated_real_files_never_panic() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let broker = real.join("broker");
    let mut rng = 0x2545f4914f6cdd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut n = 0;
    for (suffix, sel, f) in [
        (".index", 0u8, fuzzing::index as fn(&[u8])),
        (".timeindex", 1, fuzzing::index),
        (".snapshot", 0, |d: &[u8]| fuzzing::snapshot(&d[1..])),
        ("leader-epoch-checkpoint", 1, fuzzing::checkpoint),
        ("replication-offset-checkpoint", 0, fuzzing::checkpoint),
        ("meta.properties", 3, fuzzing::checkpoint),
    ] {
        for path in crate::common::files_with_suffix(&broker, suffix)
            .into_iter()
            .take(6)
        {
            let mut seed = vec![sel];
            seed.extend(std::fs::read(&path).unwrap());
            if seed.len() > 256 * 1024 {
                continue;
            }
            n += 1;
            f(&seed);
            for _ in 0..32 {
                let mut d = seed.clone();
                for _ in 0..(1 + next() % 6) {
                    let i = 1 + (next() as usize) % (d.len() - 1).max(1);
                    if i < d.len() {
                        d[i] = next() as u8;
                    }
                }
                let cut = 1 + (next() as usize) % d.len();
                f(&d);
                f(&d[..cut]);
            }
        }
    }
    assert!(
        n >= 10,
        "expected real index/snapshot/checkpoint seeds, found {n}"
    );
}

#[test]
fn mutated_real_segments_never_panic() {
    let seeds = seeds();
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for seed in &seeds {
        fuzzing::log_segment(seed);
        for _ in 0..64 {
            let mut d = seed.clone();
            for _ in 0..(1 + next() % 8) {
                let i = (next() as usize) % d.len();
                d[i] = next() as u8;
            }
            let cut = (next() as usize) % (d.len() + 1);
            fuzzing::log_segment(&d);
            fuzzing::log_segment(&d[..cut]);
        }
    }
}
