//! Batches larger than `segment::BIG_ENTRY` (64 MiB) built the cheap way: a v2 header with
//! the CRC of the whole batch, and a sparse body (a hole: zeros that take no disk space).
//! The CRC of the zeros is computed by squaring (`crc32c_combine`), never by a pass over
//! them, so building a 320 MiB batch costs microseconds.
#![allow(dead_code)] // each test file uses some of these

use std::io::Write;
use std::path::Path;

/// The CRC-32C of `crc`'s data followed by `n` zero bytes, by squaring (no pass over the zeros).
pub fn crc_append_zeros(crc: u32, n: u64) -> u32 {
    let (mut zeros, mut len) = (0u32, 0u64); // crc of `len` zeros, built bit by bit
    let (mut pow, mut pow_len) = (crc32c::crc32c(&[0]), 1u64);
    let mut left = n;
    while left > 0 {
        if left & 1 == 1 {
            zeros = crc32c::crc32c_combine(zeros, pow, pow_len as usize);
            len += pow_len;
        }
        pow = crc32c::crc32c_combine(pow, pow, pow_len as usize);
        pow_len *= 2;
        left >>= 1;
    }
    assert_eq!(len, n);
    crc32c::crc32c_combine(crc, zeros, n as usize)
}

/// A v2 batch header of `size` bytes at `offset` (one record declared, body all zeros),
/// with the CRC of the whole batch.
pub fn huge_header(offset: i64, size: u64, timestamp: i64, attributes: i16) -> Vec<u8> {
    let mut h = vec![0u8; 61];
    h[..8].copy_from_slice(&offset.to_be_bytes());
    h[8..12].copy_from_slice(&((size - 12) as i32).to_be_bytes());
    h[16] = 2;
    h[21..23].copy_from_slice(&attributes.to_be_bytes());
    h[27..35].copy_from_slice(&timestamp.to_be_bytes());
    h[35..43].copy_from_slice(&timestamp.to_be_bytes());
    h[43..51].copy_from_slice(&(-1i64).to_be_bytes());
    h[51..53].copy_from_slice(&(-1i16).to_be_bytes());
    h[53..57].copy_from_slice(&(-1i32).to_be_bytes());
    h[57..61].copy_from_slice(&1i32.to_be_bytes());
    let crc = crc_append_zeros(crc32c::crc32c(&h[21..]), size - 61);
    h[17..21].copy_from_slice(&crc.to_be_bytes());
    h
}

/// Append a huge batch (a hole after its header) to `log`.
pub fn append_huge(log: &Path, offset: i64, size: u64, timestamp: i64) {
    let h = huge_header(offset, size, timestamp, 0);
    let mut f = std::fs::OpenOptions::new().append(true).open(log).unwrap();
    let start = f.metadata().unwrap().len();
    f.write_all(&h).unwrap();
    f.set_len(start + size).unwrap();
}
