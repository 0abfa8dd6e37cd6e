//! A fast, seeded hasher for the replay's producer-id map.
//!
//! The producer map is looked up once per batch; with the standard SipHash-1-3 the hash
//! alone was ≈ 3 % of a scan's cycles (docs/performance.md). Keys are `i64` producer ids
//! read from untrusted files, so the hash stays keyed by a per-process random seed and
//! mixes every key bit into every output bit (folded 64×64→128 multiply, as in
//! foldhash/wyhash): a crafted segment cannot predict colliding ids. Map iteration order
//! was already unspecified with SipHash; the replay never depends on it (outputs sort).

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

const K1: u64 = 0x243f_6a88_85a3_08d3;
const K2: u64 = 0x1319_8a2e_0370_7344;

#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

fn process_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        // std's RandomState is randomly keyed per process; borrow its entropy.
        std::collections::hash_map::RandomState::new().hash_one(0x6b6c_6f67u64)
    })
}

/// [`BuildHasher`] for the producer map (seeded once per process).
#[derive(Clone, Copy, Debug)]
pub struct PidBuildHasher(u64);

impl Default for PidBuildHasher {
    fn default() -> Self {
        PidBuildHasher(process_seed())
    }
}

impl BuildHasher for PidBuildHasher {
    type Hasher = PidHasher;
    #[inline]
    fn build_hasher(&self) -> PidHasher {
        PidHasher(self.0)
    }
}

/// The hasher built by [`PidBuildHasher`]: integers take the fast path, other input
/// (not used by the replay) is folded in 8 bytes at a time.
#[derive(Clone, Copy, Debug)]
pub struct PidHasher(u64);

impl Hasher for PidHasher {
    #[inline]
    fn finish(&self) -> u64 {
        fold_mul(self.0, K2)
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = fold_mul(self.0 ^ v, K1);
    }
    #[inline]
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        self.write_u64(bytes.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_small_and_high_bit_keys_spread_over_buckets() {
        let b = PidBuildHasher::default();
        // Ids differing only in low bits, and only in high bits, must land in different
        // low-7-bit / high-7-bit groups (hashbrown uses both ends of the hash).
        for keys in [
            (0..1024i64).collect::<Vec<_>>(),
            (0..1024i64).map(|i| i << 52).collect(),
        ] {
            let mut low = std::collections::HashSet::new();
            let mut high = std::collections::HashSet::new();
            for k in &keys {
                let h = b.hash_one(k);
                low.insert(h & 0x3ff);
                high.insert(h >> 54);
            }
            assert!(low.len() > 500, "low bits: {}", low.len());
            assert!(high.len() > 500, "high bits: {}", high.len());
        }
    }

    #[test]
    fn map_behaves_like_a_map() {
        let mut m: std::collections::HashMap<i64, u32, PidBuildHasher> = Default::default();
        for i in -500i64..500 {
            m.insert(i * 7919, i as u32);
        }
        assert_eq!(m.len(), 1000);
        for i in -500i64..500 {
            assert_eq!(m.get(&(i * 7919)), Some(&(i as u32)));
        }
        assert_eq!(m.get(&1), None);
    }
}
