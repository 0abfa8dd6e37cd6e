//! The transaction index (`.txnindex`, Kafka's `TransactionIndex`): a zero-copy view of its
//! `AbortedTxn` entries, its format check and the broker's load-time sanity check.

use super::*;
use crate::bytes::be_i64;
use crate::error::{FormatError, Problem};

/// One `AbortedTxn` entry of a `.txnindex` (absolute offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct AbortedTxn {
    /// Slot number (entry `i` starts at byte `34 * i`).
    pub slot: usize,
    /// The version as Kafka reads it: the high byte of the int16, signed.
    pub version: i8,
    /// The full int16 as written.
    pub version_i16: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// Kafka's `AbortedTxn.toString()`.
    pub fn kafka_string(&self) -> String {
        format!(
            "AbortedTxn(version={}, producerId={}, firstOffset={}, lastOffset={}, lastStableOffset={})",
            self.version,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset
        )
    }
}

/// Why the broker's load-time `TransactionIndex.sanityCheck` would throw: the first entry,
/// in file order, that its iteration refuses (an unknown version) or that the check
/// itself refuses (a lastOffset below the segment's base offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TxnSanityError {
    pub txn: AbortedTxn,
    pub base_offset: i64,
    pub problem: TxnSanityProblem,
}

/// Which of the two load-time refusals a [`TxnSanityError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TxnSanityProblem {
    /// lastOffset below the base offset: `CorruptIndexException`, from which
    /// `LogLoader.loadSegmentFiles` recovers (it rebuilds the segment's indexes).
    LastOffsetBelowBase,
    /// A version above 0 (`AbortedTxn.CURRENT_VERSION`): the entries' iterator throws a
    /// plain `KafkaException`, which `LogLoader.loadSegmentFiles` does not catch: the log
    /// does not load.
    UnknownVersion,
    /// Kafka 4.4 and later (KAFKA-19562, the generated `AbortedTxn`): the iterator reads
    /// the version as the whole int16 and refuses any outside `LOWEST_SUPPORTED_VERSION`
    /// to `HIGHEST_SUPPORTED_VERSION` (0 to 0), below 0 as above: the same
    /// `KafkaException`, the same failed load ([`TxnIndex::sanity_check_since_4_4`]).
    UnsupportedVersion,
}

impl TxnSanityError {
    /// The exception's message, with `abs_path` for the index file.
    pub fn kafka_message(&self, abs_path: &str) -> String {
        match self.problem {
            TxnSanityProblem::LastOffsetBelowBase => format!(
                "Last offset of aborted transaction {} in index {abs_path} is less than start offset {}",
                self.txn.kafka_string(),
                self.base_offset
            ),
            TxnSanityProblem::UnknownVersion => format!(
                "Unexpected aborted transaction version {} in transaction index {abs_path}, current version is 0",
                self.txn.version
            ),
            TxnSanityProblem::UnsupportedVersion => format!(
                "Unexpected aborted transaction version {} in transaction index {abs_path}, supported version range is 0 to 0",
                self.txn.version_i16
            ),
        }
    }

    /// The exception's simple class name.
    pub fn exception(&self) -> &'static str {
        match self.problem {
            TxnSanityProblem::LastOffsetBelowBase => "CorruptIndexException",
            TxnSanityProblem::UnknownVersion | TxnSanityProblem::UnsupportedVersion => {
                "KafkaException"
            }
        }
    }
}

/// A zero-copy view of a transaction index (`.txnindex`): 34-byte `AbortedTxn` entries.
#[derive(Debug, Clone, Copy)]
pub struct TxnIndex<'a> {
    bytes: &'a [u8],
    base_offset: i64,
}

impl<'a> TxnIndex<'a> {
    /// A view over the whole file; `base_offset` comes from the file name.
    pub fn new(bytes: &'a [u8], base_offset: i64) -> Self {
        TxnIndex { bytes, base_offset }
    }
    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// Number of whole 34-byte entries.
    pub fn len(&self) -> usize {
        self.bytes.len() / TXN_ENTRY_SIZE
    }
    /// No whole entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of a trailing fragment shorter than an entry (Kafka ignores them).
    pub fn trailing_bytes(&self) -> usize {
        self.bytes.len() % TXN_ENTRY_SIZE
    }
    /// Entry `i`, `None` past the last whole entry.
    pub fn get(&self, i: usize) -> Option<AbortedTxn> {
        let at = i.checked_mul(TXN_ENTRY_SIZE)?;
        let end = at.checked_add(TXN_ENTRY_SIZE)?;
        let b = self.bytes.get(at..end)?;
        Some(AbortedTxn {
            slot: i,
            version: b[0] as i8,
            version_i16: i16::from_be_bytes([b[0], b[1]]),
            producer_id: be_i64(b, 2),
            first_offset: be_i64(b, 10),
            last_offset: be_i64(b, 18),
            last_stable_offset: be_i64(b, 26),
        })
    }
    /// Every whole entry, in file order (the trailing fragment is not yielded).
    pub fn entries(&self) -> impl Iterator<Item = AbortedTxn> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// Kafka's load-time `TransactionIndex.sanityCheck`: it iterates the whole entries in
    /// file order; each is refused for a version above 0 (by the iterator) or a lastOffset
    /// below the base offset (by the check), the first refusal thrown.
    pub fn sanity_check(&self) -> Result<(), TxnSanityError> {
        self.sanity_check_reading(|t| t.version > 0, TxnSanityProblem::UnknownVersion)
    }

    /// [`TxnIndex::sanity_check`] as Kafka 4.4 and later run it
    /// (`TransactionIndex.iterable` since KAFKA-19562): the version is the entry's whole
    /// int16 and only 0 is read; before, the hand-written `AbortedTxn.version()` read its
    /// first byte alone, so `00 01` read as 0 and `ff 00` as −1, both accepted then and
    /// both refused now.
    pub fn sanity_check_since_4_4(&self) -> Result<(), TxnSanityError> {
        self.sanity_check_reading(|t| t.version_i16 != 0, TxnSanityProblem::UnsupportedVersion)
    }

    /// The load's check with `refused` deciding which versions the iterator throws on.
    fn sanity_check_reading(
        &self,
        refused: impl Fn(&AbortedTxn) -> bool,
        unknown: TxnSanityProblem,
    ) -> Result<(), TxnSanityError> {
        let problem = |t: &AbortedTxn| {
            if refused(t) {
                Some(unknown)
            } else if t.last_offset < self.base_offset {
                Some(TxnSanityProblem::LastOffsetBelowBase)
            } else {
                None
            }
        };
        match self
            .entries()
            .find_map(|txn| problem(&txn).map(|p| (txn, p)))
        {
            Some((txn, problem)) => Err(TxnSanityError {
                txn,
                base_offset: self.base_offset,
                problem,
            }),
            None => Ok(()),
        }
    }

    /// Structural checks: no trailing fragment, version byte not above 0 (Kafka throws
    /// "Unexpected aborted transaction version"), lastOffset strictly increasing,
    /// firstOffset ≤ lastOffset.
    pub fn check(&self) -> Result<(), FormatError> {
        let mut prev: Option<AbortedTxn> = None;
        for t in self.entries() {
            let at = (t.slot * TXN_ENTRY_SIZE) as u64;
            if t.version > 0 {
                return Err(FormatError::new(
                    "transaction index",
                    "version",
                    at,
                    Problem::OutOfRange {
                        value: t.version as i64,
                    },
                ));
            }
            if t.first_offset > t.last_offset {
                return Err(FormatError::new(
                    "transaction index",
                    "firstOffset",
                    at + 10,
                    Problem::Invalid("firstOffset is after lastOffset"),
                ));
            }
            if let Some(p) = prev
                && t.last_offset <= p.last_offset
            {
                return Err(FormatError::new(
                    "transaction index",
                    "lastOffset",
                    at + 18,
                    Problem::Invalid("lastOffset not greater than the previous entry's"),
                ));
            }
            prev = Some(t);
        }
        if self.trailing_bytes() != 0 {
            return Err(FormatError::new(
                "transaction index",
                "length",
                (self.len() * TXN_ENTRY_SIZE) as u64,
                Problem::Truncated {
                    needed: TXN_ENTRY_SIZE as u64,
                    available: self.trailing_bytes() as u64,
                },
            ));
        }
        Ok(())
    }
}
