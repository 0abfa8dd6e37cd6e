//! The replica fingerprint of a partition copy: every batch's [`BatchKey`] (base and last
//! offset, stored CRC, size, control flag and COMMIT/ABORT marker, producer id and epoch,
//! segment and byte position), encoded column by column as deltas so that a bundle
//! carries about the CRC's four bytes plus two or three bytes per batch.
//!
//! Why these fields: they are exactly what the replica comparison
//! (`cluster::replicas`) compares and prints. Followers append the leader's batches as
//! they are (`Partition.appendRecordsToFollowerOrFutureReplica` →
//! `UnifiedLog.appendAsFollower`, no re-encoding), so two replicas' batches at one base
//! offset agree on CRC (it covers attributes to the end of the batch), last offset and
//! size; a range hash could only say *that* a range differs, not which batch and which
//! markers, which the `replica_divergence` finding names. The partition leader epoch is
//! not kept: it sits outside the CRC and no check compares it yet.

use crate::partition::walked::BatchKey;

/// Why a fingerprint does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("batch fingerprint: {0}")]
pub struct FingerprintError(&'static str);

const CONTROL: u8 = 1;
const MARKER: u8 = 2;
const COMMIT: u8 = 4;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Encode `keys` (any order; decoded in the same order).
pub fn encode(keys: &[BatchKey]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 8 + 8);
    put_varint(&mut out, keys.len() as u64);
    let mut prev = Prev::default();
    for k in keys {
        put_varint(
            &mut out,
            zigzag(k.base_offset.wrapping_sub(prev.next_offset)),
        );
        put_varint(&mut out, zigzag(k.last_offset.wrapping_sub(k.base_offset)));
        put_varint(&mut out, u64::from(k.size));
        out.extend_from_slice(&k.crc.to_le_bytes());
        let flags = if k.is_control { CONTROL } else { 0 }
            | match k.marker {
                Some(true) => MARKER | COMMIT,
                Some(false) => MARKER,
                None => 0,
            };
        out.push(flags);
        put_varint(
            &mut out,
            zigzag(k.producer_id.wrapping_sub(prev.producer_id)),
        );
        put_varint(
            &mut out,
            zigzag(i64::from(k.producer_epoch) - i64::from(prev.epoch)),
        );
        put_varint(
            &mut out,
            zigzag(i64::from(k.segment) - i64::from(prev.segment)),
        );
        let expected = prev.expected_position(k.segment);
        put_varint(
            &mut out,
            zigzag((k.position as i64).wrapping_sub(expected as i64)),
        );
        prev = Prev::after(k);
    }
    out
}

/// What the next key is encoded against.
#[derive(Default)]
struct Prev {
    next_offset: i64,
    producer_id: i64,
    epoch: i16,
    segment: u32,
    end: u64,
}

impl Prev {
    fn after(k: &BatchKey) -> Prev {
        Prev {
            next_offset: k.last_offset.wrapping_add(1),
            producer_id: k.producer_id,
            epoch: k.producer_epoch,
            segment: k.segment,
            end: k.position.wrapping_add(u64::from(k.size)),
        }
    }
    /// Batches follow each other in a segment; the first of a segment is at byte 0.
    fn expected_position(&self, segment: u32) -> u64 {
        if segment == self.segment { self.end } else { 0 }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, FingerprintError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .bytes
                .get(self.at)
                .ok_or(FingerprintError("truncated"))?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(FingerprintError("varint too long"))
    }
    fn signed(&mut self) -> Result<i64, FingerprintError> {
        self.varint().map(unzigzag)
    }
    fn u8(&mut self) -> Result<u8, FingerprintError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or(FingerprintError("truncated"))?;
        self.at += 1;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, FingerprintError> {
        let b = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or(FingerprintError("truncated"))?;
        self.at += 4;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Decode what [`encode`] wrote. Never allocates more than the input can hold (each key
/// takes at least 12 bytes).
pub fn decode(bytes: &[u8]) -> Result<Vec<BatchKey>, FingerprintError> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.varint()?;
    if n > (bytes.len() / 12) as u64 {
        return Err(FingerprintError("more batches than bytes"));
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut prev = Prev::default();
    for _ in 0..n {
        let base_offset = prev.next_offset.wrapping_add(r.signed()?);
        let last_offset = base_offset.wrapping_add(r.signed()?);
        let size = u32::try_from(r.varint()?).map_err(|_| FingerprintError("size"))?;
        let crc = r.u32()?;
        let flags = r.u8()?;
        let producer_id = prev.producer_id.wrapping_add(r.signed()?);
        let producer_epoch = i16::try_from(i64::from(prev.epoch) + r.signed()?)
            .map_err(|_| FingerprintError("producer epoch"))?;
        let segment = u32::try_from(i64::from(prev.segment) + r.signed()?)
            .map_err(|_| FingerprintError("segment"))?;
        let position = (prev.expected_position(segment) as i64).wrapping_add(r.signed()?) as u64;
        let k = BatchKey {
            base_offset,
            last_offset,
            crc,
            size,
            is_control: flags & CONTROL != 0,
            marker: (flags & MARKER != 0).then_some(flags & COMMIT != 0),
            producer_id,
            producer_epoch,
            segment,
            position,
        };
        prev = Prev::after(&k);
        out.push(k);
    }
    if r.at != bytes.len() {
        return Err(FingerprintError("trailing bytes"));
    }
    Ok(out)
}

/// A fingerprint frame's payload: the partition directory's path (length-prefixed, u32
/// little endian), then [`encode`]'s bytes.
pub fn frame(path: &str, keys: &[BatchKey]) -> Vec<u8> {
    let mut out = (path.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(&encode(keys));
    out
}

/// Read what [`frame`] wrote; the keys are decoded only when `keep` accepts the path.
pub fn read_frame(
    bytes: &[u8],
    keep: &dyn Fn(&str) -> bool,
) -> Result<(String, Option<Vec<BatchKey>>), FingerprintError> {
    let len = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or(FingerprintError("truncated"))?;
    let path = bytes
        .get(4..4 + len)
        .ok_or(FingerprintError("truncated path"))?;
    let path = String::from_utf8(path.to_vec()).map_err(|_| FingerprintError("path"))?;
    let keys = if keep(&path) {
        Some(decode(&bytes[4 + len..])?)
    } else {
        None
    };
    Ok((path, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(base: i64, last: i64, seg: u32, pos: u64, size: u32) -> BatchKey {
        BatchKey {
            base_offset: base,
            last_offset: last,
            crc: (base as u32).wrapping_mul(2_654_435_761),
            size,
            is_control: false,
            marker: None,
            producer_id: -1,
            producer_epoch: -1,
            segment: seg,
            position: pos,
        }
    }

    #[test]
    fn keys_round_trip_including_extremes_and_gaps() {
        let mut keys = vec![
            key(0, 4, 0, 0, 100),
            key(5, 5, 0, 100, 80),
            // A gap, a new segment, garbage before the batch.
            key(90, 99, 1, 17, 4000),
            key(i64::MAX - 1, i64::MAX, 1, u64::MAX - 10, u32::MAX),
            key(i64::MIN, -3, 7, 0, 0),
        ];
        keys[1].is_control = true;
        keys[1].marker = Some(true);
        keys[1].producer_id = 42;
        keys[1].producer_epoch = 3;
        keys[2].marker = Some(false);
        keys[2].producer_epoch = i16::MIN;
        let bytes = encode(&keys);
        assert_eq!(decode(&bytes).unwrap(), keys);
        let f = frame("/d/t-0", &keys);
        assert_eq!(read_frame(&f, &|_| false).unwrap(), ("/d/t-0".into(), None));
        assert_eq!(
            read_frame(&f, &|_| true).unwrap(),
            ("/d/t-0".into(), Some(keys))
        );
        assert_eq!(decode(&encode(&[])).unwrap(), vec![]);
    }

    #[test]
    fn a_run_of_ordinary_batches_costs_the_crc_and_a_few_bytes() {
        let keys: Vec<BatchKey> = (0..1000)
            .map(|i| key(i * 10, i * 10 + 9, 0, i as u64 * 1500, 1500))
            .collect();
        let n = encode(&keys).len();
        // 13 bytes each before zstd: 4 of CRC, 2 of size, one per other field.
        assert!(n <= 1000 * 13 + 4, "{n} bytes");
    }

    #[test]
    fn damaged_fingerprints_are_errors_never_panics() {
        let keys: Vec<BatchKey> = (0..50).map(|i| key(i, i, 0, i as u64 * 70, 70)).collect();
        let bytes = encode(&keys);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // More batches announced than bytes: refused before allocating.
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX);
        assert!(decode(&huge).is_err());
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            let _ = decode(&b);
        }
        assert!(read_frame(&[255, 255, 255, 255, b'x'], &|_| true).is_err());
    }
}
