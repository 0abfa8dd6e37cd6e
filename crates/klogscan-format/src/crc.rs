//! CRC-32C (Castagnoli), the checksum of v2 batches and producer snapshots, tuned for the
//! lengths a log holds: one call per batch, typically 0.3–16 KiB. The per-batch CRC is
//! the largest single cost of a scan, so the implementation is chosen per CPU, by
//! measurement (`docs/performance.md`, "CRC per batch"; `examples/baseline crc-batches`
//! reports both this function and the `crc32c` crate):
//!
//! * **CPUs with AVX-512 VL and VPCLMULQDQ**: the `crc-fast` crate (carry-less-multiply
//!   folding over 512-bit registers). Over the 850 392 batches of the 2 GiB synth dir,
//!   one call per batch, maps warm, on an AVX-512 Xeon: 10.3 GB/s, against 7.2 GB/s for
//!   the `crc32c` crate and 6.7 GB/s for the kernel below.
//! * **Other x86-64 CPUs with SSE 4.2 and PCLMULQDQ**: the kernel below. On such a CPU
//!   (no AVX-512) `crc-fast` ran at 3.6–4.9 GB/s per batch, the `crc32c` crate at
//!   6.3–7.9 GB/s, this kernel faster still (docs/performance.md, rounds 3 and 4).
//! * **Other targets**: the `crc32c` crate.
//!
//! The kernel: the `crc32c` crate runs buffers through SSE 4.2 in three interleaved
//! streams, but only in blocks of 3 × 256 (or 3 × 8 KiB) bytes: the last 0–767 bytes of
//! every buffer go through one stream, at a third of the speed (the instruction's latency
//! is 3 cycles, its throughput one per cycle). For a 3 KiB batch that tail is a quarter
//! of the CRC time (`docs/performance.md`, round 3). This kernel splits *any* length ≥ 24
//! bytes into blocks of three equal streams and joins them with a carry-less
//! multiplication (PCLMULQDQ) by a constant that depends on the stream length, taken from
//! a table computed at compile time. In cache it is 1.4× the crate on 3 KiB buffers (18
//! vs 13.5 GB/s) and 1.9× on 300-byte ones; from DRAM the gain is smaller (memory-bound).
//!
//! The math (reflected bit order, as the `crc32` instruction uses): the CRC state after
//! `A ‖ B` is `shift(state(A), |B|) ⊕ state₀(B)`, where `state₀` starts from zero and
//! `shift(c, n) = c · x^(8n) mod P`. With `K = x^(8n − 33) mod P` (reflected),
//! `clmul(c, K)` is a 63-bit product whose 64-bit reading is `c · K · x`, and
//! `crc32_u64(0, v) = v · x^32 mod P`, so `crc32_u64(0, clmul(c, K)) = shift(c, n)`.
//!
//! Checking consecutive short batches with several buffers' CRCs interleaved (one `crc32`
//! stream per buffer, four buffers in flight) was built and measured against one call per
//! batch and lost on the AVX-512 CPU here (18 vs 22 GB/s in cache, no gain from DRAM:
//! `docs/performance.md`, "Issue #29's ratios, round 2"); it was removed rather than kept
//! unused.

/// CRC-32C of `data` (init `!0`, final xor `!0`: the value Kafka stores).
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        match x86::kernel() {
            // CRC-32/ISCSI is CRC-32C; the value fits in 32 bits.
            x86::Kernel::Avx512 => {
                return crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32;
            }
            // SAFETY: `kernel` checked that the CPU has SSE 4.2 and PCLMULQDQ.
            x86::Kernel::Streams if data.len() >= 3 * 16 => return unsafe { x86::crc32c(data) },
            _ => {}
        }
    }
    crc32c::crc32c(data)
}

/// The implementation [`crc32c()`] uses on this CPU, as one token (`examples/baseline`
/// prints it beside the rates, so a figure says which kernel it measured).
pub fn kernel_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        match x86::kernel() {
            x86::Kernel::Avx512 => return "crc-fast-avx512",
            x86::Kernel::Streams => return "sse42-three-streams",
            x86::Kernel::Crate => {}
        }
    }
    "crc32c-crate"
}

/// Words (8 bytes) per stream in the largest block: 3 × 32 × 8 = 768 bytes per block, the
/// crate's short block. Longer streams compute as fast when the bytes are in cache, but
/// from DRAM three streams ≥ 512 bytes apart ran at half speed here (per-batch CRC over
/// the 2 GiB synth dir: 4.5 GB/s at 64 words, 8.7 at 32, vs 7.7 for the crate), so the
/// gain is the tail: every length, not only multiples of 768, runs on three streams.
#[cfg(target_arch = "x86_64")]
const MAX_WORDS: usize = 32;

/// `x^e mod P` for the CRC-32C polynomial, in normal bit order (bit i ↔ x^i).
#[cfg(target_arch = "x86_64")]
const fn mul_mod(a: u32, b: u32) -> u32 {
    // Carry-less product (degree ≤ 62), then reduction by P = x^32 + 0x1EDC6F41.
    let mut prod: u64 = 0;
    let mut i = 0;
    while i < 32 {
        if (b >> i) & 1 == 1 {
            prod ^= (a as u64) << i;
        }
        i += 1;
    }
    let p: u64 = (1 << 32) | 0x1EDC_6F41;
    let mut bit = 62;
    while bit >= 32 {
        if (prod >> bit) & 1 == 1 {
            prod ^= p << (bit - 32);
        }
        bit -= 1;
    }
    prod as u32
}

/// `SHIFT[w]` = reflected `x^(64·w − 33) mod P`: the multiplier that moves a CRC state
/// over `8·w` bytes, for w in 1..=2·MAX_WORDS (entry 0 unused).
#[cfg(target_arch = "x86_64")]
const SHIFT: [u32; 2 * MAX_WORDS + 1] = {
    let mut t = [0u32; 2 * MAX_WORDS + 1];
    // x^64 mod P, the step from w to w + 1.
    let x32 = mul_mod(1 << 16, 1 << 16);
    let x64 = mul_mod(x32, x32);
    let mut k: u32 = 1 << 31; // x^31 = x^(64·1 − 33)
    let mut w = 1;
    while w <= 2 * MAX_WORDS {
        t[w] = k.reverse_bits();
        k = mul_mod(k, x64);
        w += 1;
    }
    t
};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MAX_WORDS, SHIFT};
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_crc32_u8, _mm_crc32_u64, _mm_cvtsi32_si128,
        _mm_cvtsi128_si64,
    };

    /// Which implementation this CPU runs (see the module docs).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Kernel {
        Avx512,
        Streams,
        Crate,
    }

    /// The CPU's kernel (features detected once, then cached loads).
    #[inline]
    pub fn kernel() -> Kernel {
        // The `portable-crc` feature forces the path of other targets, so that CI compiles
        // and tests it on a CPU that has the instructions.
        if cfg!(feature = "portable-crc") {
            Kernel::Crate
        } else if std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("vpclmulqdq")
        {
            Kernel::Avx512
        } else if available() {
            Kernel::Streams
        } else {
            Kernel::Crate
        }
    }

    /// Whether the CPU has what [`crc32c`] needs (detected once, then a cached load).
    #[inline]
    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("sse4.2")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }

    #[inline]
    fn word(b: &[u8], i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(w)
    }

    /// `c` moved over `8·w` zero bytes.
    #[inline]
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    pub(super) fn shift(c: u32, w: usize) -> u32 {
        let a: __m128i = _mm_cvtsi32_si128(c as i32);
        let k: __m128i = _mm_cvtsi32_si128(SHIFT[w] as i32);
        let prod = _mm_cvtsi128_si64(_mm_clmulepi64_si128::<0>(a, k)) as u64;
        _mm_crc32_u64(0, prod) as u32
    }

    /// See the module documentation. `data.len()` may be anything; short inputs simply
    /// take the single-stream path.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    pub fn crc32c(data: &[u8]) -> u32 {
        let mut crc: u32 = !0;
        let mut rest = data;
        while rest.len() >= 3 * 8 {
            let w = (rest.len() / 24).min(MAX_WORDS);
            let (block, tail) = rest.split_at(24 * w);
            let (a, bc) = block.split_at(8 * w);
            let (b, c) = bc.split_at(8 * w);
            let (mut ca, mut cb, mut cc) = (crc as u64, 0u64, 0u64);
            let mut i = 0;
            while i < 8 * w {
                ca = _mm_crc32_u64(ca, word(a, i));
                cb = _mm_crc32_u64(cb, word(b, i));
                cc = _mm_crc32_u64(cc, word(c, i));
                i += 8;
            }
            crc = shift(ca as u32, 2 * w) ^ shift(cb as u32, w) ^ cc as u32;
            rest = tail;
        }
        let mut c = crc as u64;
        let mut i = 0;
        while i + 8 <= rest.len() {
            c = _mm_crc32_u64(c, word(rest, i));
            i += 8;
        }
        let mut crc = c as u32;
        for &byte in &rest[i..] {
            crc = _mm_crc32_u8(crc, byte);
        }
        !crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        // The CRC-32C catalogue's check value.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn equals_the_crate_for_every_length_and_alignment() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..9 {
            for len in (0..2000).chain((2000..20_000 - 9).step_by(97)) {
                let b = &data[start..start + len];
                assert_eq!(crc32c(b), crc32c::crc32c(b), "start {start} len {len}");
                #[cfg(target_arch = "x86_64")]
                if x86::available() && len >= 48 {
                    // The stream kernel too, on a CPU where `crc32c` picks `crc-fast`.
                    // SAFETY: `available` checked the CPU features.
                    let k = unsafe { x86::crc32c(b) };
                    assert_eq!(k, crc32c::crc32c(b), "kernel: start {start} len {len}");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn shift_table_matches_appending_zeros() {
        if !x86::available() {
            return;
        }
        // Moving a state over 8·w zero bytes is what the raw CRC of zeros does.
        for w in [1usize, 2, 3, 17, 31, 32, 33, 63, 2 * MAX_WORDS] {
            let zeros = vec![0u8; 8 * w];
            for c in [1u32, 0x8000_0000, 0xdead_beef, !0] {
                // crc32c_append(!c) starts the raw state at c and returns !state.
                let raw = !crc32c::crc32c_append(!c, &zeros);
                // SAFETY: `available` checked the CPU features.
                let got = unsafe { x86::shift(c, w) };
                assert_eq!(got, raw, "w {w} c {c:08x}");
            }
        }
    }
}
