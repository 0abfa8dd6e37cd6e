//! The producer-state snapshot (`.snapshot`: `ProducerStateManager.readSnapshot`, schema
//! `ProducerSnapshot`).
//!
//! Layout: version i16 (= 1), crc u32 (CRC-32C over bytes 6..end), count i32, then `count`
//! 46-byte entries. [`ProducerSnapshot::parse`] checks in Kafka's order — the schema read
//! (lengths), then the version, then the CRC — and fails with a [`FormatError`] whose text
//! [`kafka_message`] renders as the `CorruptSnapshotException` message the broker (and
//! kafka-dump-log) would print.

use super::bytes::{be_i16, be_i32, be_i64, be_u32, decrement_sequence};
use super::error::{FormatError, Problem};

/// The only snapshot version Kafka reads.
pub const SNAPSHOT_VERSION: i16 = 1;
/// Bytes before the first entry: version, crc, count.
pub const SNAPSHOT_HEADER_SIZE: usize = 10;
/// Size of one producer entry.
pub const SNAPSHOT_ENTRY_SIZE: usize = 46;
/// The CRC covers bytes from here to the end of the file.
pub const SNAPSHOT_CRC_START: usize = 6;

const STRUCTURE: &str = "producer snapshot";
const ENTRY_STRUCTURE: &str = "producer snapshot entry";

/// Kafka's field names of one entry, with their offset and width inside the entry.
const ENTRY_FIELDS: [(&str, usize, usize); 8] = [
    ("producer_id", 0, 8),
    ("epoch", 8, 2),
    ("last_sequence", 10, 4),
    ("last_offset", 14, 8),
    ("offset_delta", 22, 4),
    ("timestamp", 26, 8),
    ("coordinator_epoch", 34, 4),
    ("current_txn_first_offset", 38, 8),
];

/// One producer's state as stored in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// Last sequence of the last data batch, -1 if none.
    pub last_sequence: i32,
    /// Last offset of the last data batch, -1 if none (then no batch metadata).
    pub last_offset: i64,
    /// `lastOffset − firstOffset` of that batch.
    pub offset_delta: i32,
    /// Max timestamp of the last batch, or the last marker's timestamp (`lastTimestamp`).
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    /// First offset of the open transaction, -1 if none.
    pub current_txn_first_offset: i64,
}

impl SnapshotEntry {
    /// Kafka keeps batch metadata only when `lastOffset ≥ 0`.
    pub fn has_batch(&self) -> bool {
        self.last_offset >= 0
    }
    /// `decrementSequence(lastSequence, offsetDelta)`.
    pub fn first_sequence(&self) -> i32 {
        decrement_sequence(self.last_sequence, self.offset_delta)
    }
    /// `lastOffset − offsetDelta` (wrapping).
    pub fn first_offset(&self) -> i64 {
        self.last_offset.wrapping_sub(self.offset_delta as i64)
    }
    /// The open transaction's first offset (Kafka: present when ≥ 0).
    pub fn open_txn_first_offset(&self) -> Option<i64> {
        (self.current_txn_first_offset >= 0).then_some(self.current_txn_first_offset)
    }
}

/// A parsed, CRC-checked view of a producer snapshot.
#[derive(Debug, Clone, Copy)]
pub struct ProducerSnapshot<'a> {
    bytes: &'a [u8],
    count: usize,
}

impl<'a> ProducerSnapshot<'a> {
    /// Parse and check a whole `.snapshot` file as `ProducerStateManager.readSnapshot` does.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FormatError> {
        // 1. Schema read: version, crc, array count, entries.
        for (field, at, width) in [
            ("version", 0usize, 2usize),
            ("crc", 2, 4),
            ("producer_entries", 6, 4),
        ] {
            if bytes.len() < at + width {
                return Err(FormatError::truncated(
                    STRUCTURE,
                    field,
                    at as u64,
                    width as u64,
                    bytes.len().saturating_sub(at) as u64,
                ));
            }
        }
        let count = be_i32(bytes, 6);
        let remaining = bytes.len() - SNAPSHOT_HEADER_SIZE;
        if count < 0 {
            return Err(FormatError::new(
                STRUCTURE,
                "producer_entries",
                6,
                Problem::OutOfRange {
                    value: count as i64,
                },
            ));
        }
        let count = count as usize;
        if count > remaining {
            // Position 10: the entries region is shorter than the count claims (Kafka's
            // array check compares the count with the remaining *bytes*).
            return Err(FormatError::truncated(
                STRUCTURE,
                "producer_entries",
                SNAPSHOT_HEADER_SIZE as u64,
                count as u64,
                remaining as u64,
            ));
        }
        // count ≤ remaining < usize::MAX / 46 is not guaranteed on 32-bit; use checked math.
        let needed = count.checked_mul(SNAPSHOT_ENTRY_SIZE);
        if needed.is_none_or(|n| n > remaining) {
            // Kafka reads entry by entry until a field underflows.
            let whole = remaining / SNAPSHOT_ENTRY_SIZE;
            let left = remaining % SNAPSHOT_ENTRY_SIZE;
            let (field, off, width) = ENTRY_FIELDS
                .iter()
                .copied()
                .find(|&(_, off, width)| off + width > left)
                .unwrap_or(ENTRY_FIELDS[0]);
            let entry_at = SNAPSHOT_HEADER_SIZE + whole * SNAPSHOT_ENTRY_SIZE;
            return Err(FormatError::truncated(
                ENTRY_STRUCTURE,
                field,
                (entry_at + off) as u64,
                width as u64,
                left.saturating_sub(off) as u64,
            ));
        }
        // 2. Version.
        let version = be_i16(bytes, 0);
        if version != SNAPSHOT_VERSION {
            return Err(FormatError::new(
                STRUCTURE,
                "version",
                0,
                Problem::Mismatch {
                    expected: SNAPSHOT_VERSION as i64,
                    found: version as i64,
                },
            ));
        }
        // 3. CRC over everything from byte 6 (extra bytes after the entries included).
        let stored = be_u32(bytes, 2);
        let computed = crate::crc::crc32c(&bytes[SNAPSHOT_CRC_START..]);
        if stored != computed {
            return Err(FormatError::new(
                STRUCTURE,
                "crc",
                2,
                Problem::Checksum { stored, computed },
            ));
        }
        Ok(ProducerSnapshot { bytes, count })
    }

    /// Number of producer entries.
    pub fn len(&self) -> usize {
        self.count
    }
    /// No producer entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        be_u32(self.bytes, 2)
    }
    /// Bytes after the last entry. Always 0 for a parsed snapshot whose CRC matched over
    /// them too (possible only if the stale bytes happen to keep the CRC valid).
    pub fn extra_bytes(&self) -> usize {
        self.bytes.len() - SNAPSHOT_HEADER_SIZE - self.count * SNAPSHOT_ENTRY_SIZE
    }
    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<SnapshotEntry> {
        if i >= self.count {
            return None;
        }
        let at = SNAPSHOT_HEADER_SIZE + i * SNAPSHOT_ENTRY_SIZE;
        let b = self.bytes.get(at..at + SNAPSHOT_ENTRY_SIZE)?;
        Some(SnapshotEntry {
            producer_id: be_i64(b, 0),
            producer_epoch: be_i16(b, 8),
            last_sequence: be_i32(b, 10),
            last_offset: be_i64(b, 14),
            offset_delta: be_i32(b, 22),
            timestamp: be_i64(b, 26),
            coordinator_epoch: be_i32(b, 34),
            current_txn_first_offset: be_i64(b, 38),
        })
    }
    /// The entries in file order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = SnapshotEntry> + '_ {
        (0..self.count).map(move |i| self.get(i).expect("bounds checked at parse"))
    }
}

/// The message of the `CorruptSnapshotException` Kafka throws for `err` (an error from
/// [`ProducerSnapshot::parse`]): "Snapshot contained an unknown file version …",
/// "Snapshot is corrupt (CRC is no longer valid). Stored crc: … Computed crc: …", or
/// "Snapshot failed schema validation: …" for lengths that do not fit.
pub fn kafka_message(err: &FormatError) -> String {
    match (err.field, err.problem) {
        ("version", Problem::Mismatch { found, .. }) => {
            format!("Snapshot contained an unknown file version {found}")
        }
        (_, Problem::Checksum { stored, computed }) => format!(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
        ),
        ("producer_entries", Problem::OutOfRange { value }) => format!(
            "Snapshot failed schema validation: Error reading field 'producer_entries': Array size {value} cannot be negative"
        ),
        ("producer_entries", Problem::Truncated { needed, available })
            if err.structure == STRUCTURE && err.position == SNAPSHOT_HEADER_SIZE as u64 =>
        {
            format!(
                "Snapshot failed schema validation: Error reading field 'producer_entries': \
                 Error reading array of size {needed}, only {available} bytes available"
            )
        }
        (field, Problem::Truncated { .. }) if err.structure == ENTRY_STRUCTURE => format!(
            "Snapshot failed schema validation: Error reading field 'producer_entries': \
             Error reading field '{field}': java.nio.BufferUnderflowException"
        ),
        (field, Problem::Truncated { .. }) => format!(
            "Snapshot failed schema validation: Error reading field '{field}': java.nio.BufferUnderflowException"
        ),
        _ => format!("Snapshot failed schema validation: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Build a snapshot image with a correct CRC.
    fn build(version: i16, entries: &[SnapshotEntry], extra: &[u8]) -> Vec<u8> {
        let mut b = version.to_be_bytes().to_vec();
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&(entries.len() as i32).to_be_bytes());
        for e in entries {
            b.extend_from_slice(&e.producer_id.to_be_bytes());
            b.extend_from_slice(&e.producer_epoch.to_be_bytes());
            b.extend_from_slice(&e.last_sequence.to_be_bytes());
            b.extend_from_slice(&e.last_offset.to_be_bytes());
            b.extend_from_slice(&e.offset_delta.to_be_bytes());
            b.extend_from_slice(&e.timestamp.to_be_bytes());
            b.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
            b.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
        }
        let crc = crate::crc::crc32c(&b[6..]);
        b[2..6].copy_from_slice(&crc.to_be_bytes());
        b.extend_from_slice(extra);
        b
    }

    fn sample() -> [SnapshotEntry; 2] {
        [
            SnapshotEntry {
                producer_id: 1004,
                producer_epoch: 0,
                last_sequence: 371,
                last_offset: 371,
                offset_delta: 1,
                timestamp: 1706471404037,
                coordinator_epoch: -1,
                current_txn_first_offset: -1,
            },
            SnapshotEntry {
                producer_id: 199398,
                producer_epoch: 0,
                last_sequence: 0,
                last_offset: -1,
                offset_delta: 0,
                timestamp: 1655761267833,
                coordinator_epoch: 57,
                current_txn_first_offset: 933607621,
            },
        ]
    }

    #[test]
    fn round_trip() {
        let b = build(1, &sample(), &[]);
        let s = ProducerSnapshot::parse(&b).unwrap();
        assert_eq!(s.len(), 2);
        let e: Vec<_> = s.entries().collect();
        assert_eq!(e, sample().to_vec());
        assert_eq!(e[0].first_sequence(), 370);
        assert_eq!(e[0].first_offset(), 370);
        assert!(e[0].has_batch() && !e[1].has_batch());
        assert_eq!(e[1].open_txn_first_offset(), Some(933607621));
        assert_eq!(e[0].open_txn_first_offset(), None);
        // firstSequence wraps like Kafka's decrementSequence
        let w = SnapshotEntry {
            last_sequence: 1,
            offset_delta: 3,
            ..sample()[0]
        };
        assert_eq!(w.first_sequence(), i32::MAX - 1);
        // empty snapshot: 10 bytes
        let b = build(1, &[], &[]);
        assert_eq!(b.len(), 10);
        assert!(ProducerSnapshot::parse(&b).unwrap().is_empty());
    }

    #[test]
    fn bad_version() {
        let b = build(2, &sample(), &[]);
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert_eq!(e.field, "version");
        assert_eq!(
            kafka_message(&e),
            "Snapshot contained an unknown file version 2"
        );
    }

    #[test]
    fn crc_flip_and_extra_bytes() {
        let mut b = build(1, &sample(), &[]);
        let stored = u32::from_be_bytes(b[2..6].try_into().unwrap());
        b[20] ^= 0x01;
        let computed = crate::crc::crc32c(&b[6..]);
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert_eq!(e.problem, Problem::Checksum { stored, computed });
        assert_eq!(
            kafka_message(&e),
            format!(
                "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
            )
        );
        let b = build(1, &sample(), &[0, 0, 0]);
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert!(matches!(e.problem, Problem::Checksum { .. }));
    }

    #[test]
    fn counts_that_do_not_fit() {
        // count larger than the remaining bytes: the array-size check
        let mut b = build(1, &sample(), &[]);
        b[6..10].copy_from_slice(&1000i32.to_be_bytes());
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert_eq!(
            kafka_message(&e),
            "Snapshot failed schema validation: Error reading field 'producer_entries': \
             Error reading array of size 1000, only 92 bytes available"
        );
        // count ≤ remaining bytes but entries run out: a field underflows
        b[6..10].copy_from_slice(&3i32.to_be_bytes());
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert_eq!((e.field, e.position), ("producer_id", 102));
        assert_eq!(
            kafka_message(&e),
            "Snapshot failed schema validation: Error reading field 'producer_entries': \
             Error reading field 'producer_id': java.nio.BufferUnderflowException"
        );
        // negative count
        b[6..10].copy_from_slice(&(-1i32).to_be_bytes());
        let e = ProducerSnapshot::parse(&b).unwrap_err();
        assert!(kafka_message(&e).ends_with("Array size -1 cannot be negative"));
        // entry cut inside a field
        let b = build(1, &sample(), &[]);
        let cut = &b[..10 + 46 + 12];
        let e = ProducerSnapshot::parse(cut).unwrap_err();
        assert_eq!(e.field, "last_sequence");
        // header too short
        let e = ProducerSnapshot::parse(&[0, 1, 0]).unwrap_err();
        assert_eq!(e.field, "crc");
        assert_eq!(
            kafka_message(&e),
            "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException"
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            match ProducerSnapshot::parse(&bytes) {
                Ok(s) => {
                    proptest::prop_assert_eq!(bytes.len(), 10 + 46 * s.len() + s.extra_bytes());
                    for e in s.entries() { let _ = (e.first_sequence(), e.first_offset()); }
                }
                Err(e) => { let _ = kafka_message(&e); }
            }
        }

        #[test]
        fn valid_header_random_entries(n in 0usize..5, fill in proptest::num::u8::ANY, extra in 0usize..50) {
            let mut b = vec![0u8, 1, 0, 0, 0, 0];
            b.extend_from_slice(&(n as i32).to_be_bytes());
            b.extend(std::iter::repeat_n(fill, n * 46 + extra));
            let crc = crate::crc::crc32c(&b[6..]);
            b[2..6].copy_from_slice(&crc.to_be_bytes());
            let s = ProducerSnapshot::parse(&b).unwrap();
            proptest::prop_assert_eq!(s.len(), n);
            proptest::prop_assert_eq!(s.extra_bytes(), extra);
            for e in s.entries() { let _ = (e.first_sequence(), e.first_offset()); }
        }
    }
}
