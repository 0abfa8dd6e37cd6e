//! The fuzz entry points (`klogscan::fuzzing`) on stable: random and mutated bytes must never
//! panic. Mutations start from real broker-written segments, so they reach deep code.

mod common;

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
    fn control_random(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        fuzzing::control(&data);
    }
}

/// Small real segments of every codec and magic, to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let Some(real) = common::real_data() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in common::files_with_suffix(&real.join("broker"), ".log")
        .into_iter()
        .chain(common::files_with_suffix(&real.join("rebuilt"), ".log"))
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
