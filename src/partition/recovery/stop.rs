//! Why `LogSegment.recover` stops on a segment, typed: the walk knows what it met there (a
//! CRC that fails, a size field below the 14-byte minimum and the bytes left, the end of a
//! malformed COMMIT/ABORT, …) and says so in a [`StopReason`]. The recovery model's rules (`plan`,
//! `replays`, `predict`) decide on it — whether `FileLogInputStream.nextBatch` throws when
//! a read that no recovery cut first gets there, whether a recovery at load throws
//! `InvalidOffsetException` — never on its words, which its `Display` gives (the `reason`
//! of a truncation, of damage no recovery looks at, of a load failure).

use crate::read::format::Unframed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What the reason of a segment emptied by `InvalidOffsetException` names (an offset not
/// above the last indexed one): `recoverLog` catches it and empties the segment, but a
/// recovery run at load (`LogLoader.loadSegmentFiles`, for a missing or corrupt index)
/// catches nothing and the load fails (`throws_at_load`).
const INVALID_OFFSET: &str = "(InvalidOffsetException)";

/// What the words of a zero-filled tail add when reading it throws: a size field below the
/// 14-byte minimum with at least 18 bytes left (`FileLogInputStream.nextBatch`:
/// `CorruptRecordException`). Recovery truncates there; a read of the bytes with no
/// recovery before it — the last segment's `readNextOffset` at load, which frames the
/// batches from the offset index's last entry on, always before such a tail — throws
/// (`predict`'s load failure). (A corrupt length inside a segment may lie before the
/// index's last entry, where that read does not go: not marked.)
const THROWS_WHEN_READ: &str = "(reading it throws CorruptRecordException: size below 14)";

/// True when an entry at the end of a walk with its size field `size` and `len` bytes
/// from it on throws when `FileLogInputStream.nextBatch` reads it (it returns no batch
/// when 17 bytes or fewer are left, and throws for a size below
/// `LegacyRecord.RECORD_OVERHEAD_V0`).
pub(crate) fn throws_when_read(size: i64, len: u64) -> bool {
    len > 17 && size < 14
}

/// Why `LogSegment.recover` stops on a segment (the walk's first entry that fails
/// `ensureValid` or whose control record throws, the tail, or an offset that makes the
/// index appends throw). Shown as its words; stored in bundles as itself (a bundle of an
/// earlier klogscan, which stored the words only, is read as [`StopReason::Words`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// `ensureValid`: the batch's CRC fails (`CorruptRecordException`).
    CrcMismatch,
    /// The bytes after a control batch with a producer id whose COMMIT/ABORT record does
    /// not decode: `LogSegment.recover` adds the batch's size to its valid bytes before
    /// the producer-state update throws `InvalidRecordException` (`ProducerAppendInfo.append`
    /// → `EndTransactionMarker.deserialize`), catches it and truncates after the batch,
    /// which it keeps (the walk's [`super::ControlThrow`]; every replay that reads it
    /// throws). The stop is at the batch's end: none when the batch ends the file.
    MalformedControl,
    /// An entry that frames but fails `ensureValid` (a v2 batch shorter than its 61-byte
    /// header, …): the format layer's error, in words.
    InvalidBatch { error: String },
    /// A partial batch at the end of the file: its declared size, the bytes present.
    PartialBatch { declared: u64, available: u64 },
    /// `len` zero bytes to the end of the file (a preallocated segment after a crash).
    ZeroFilled { len: u64 },
    /// `len` bytes to the end of the file that do not frame as an entry, and why.
    Unframed { len: u64, why: Unframed },
    /// An entry with a plausible header (offset ≥ 0, magic 0–2) whose size field `size` is
    /// impossible, and why: the walk cannot go past it.
    ImpossibleSize { size: i32, why: Unframed },
    /// `OffsetIndex.append` of `offset`, not above the last indexed one `last`, throws
    /// `InvalidOffsetException`: `recoverLog` empties the segment.
    OffsetNotAboveIndexed { offset: i64, last: i64 },
    /// `TimeIndex.maybeAppend` of `offset`, below the offset of the last entry appended
    /// (`last`), throws `InvalidOffsetException`: `recoverLog` empties the segment.
    TimeIndexBelowLast { offset: i64, last: i64 },
    /// The tail of a segment a completed swap brings in (`swaps`), named in fewer words.
    Swapped { tail: SwappedTail },
    /// A stop read from a bundle of an earlier klogscan: its words only, which no rule
    /// reads (a merge plans nothing from them).
    Words { text: String },
}

/// How a swapped-in segment ends where its walk (`swaps`: framing and CRCs only) stops:
/// the tails of [`StopReason`], without their sizes in words. Its zero-filled tail is not
/// taken as throwing when read (that walk does not model the reads at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SwappedTail {
    PartialBatch,
    ZeroFilled { len: u64 },
    Unframed { why: Unframed },
    ImpossibleSize { why: Unframed },
}

/// How `FileLogInputStream.nextBatch` throws `CorruptRecordException` at a stop when a
/// read that frames the batches (no recovery cut them first) gets there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadThrows {
    /// A zero-filled tail of 18 bytes or more: every position in it reads a size of 0, so
    /// the read throws however it starts (`preallocated_tail`).
    ZeroTail,
    /// A size field below 14 with 18 bytes or more left, in bytes that do not frame
    /// (`header` false: `trailing_bytes`) or behind a plausible entry header (`header`:
    /// `invalid_batch`). A read that starts after a corrupt length does not meet it.
    BelowMinimum { header: bool },
}

impl StopReason {
    /// How reading the stop throws, `left` bytes from it to the end of the file (`None`:
    /// it does not, or the walk that stopped there does not say).
    pub(crate) fn read_throws(&self, left: u64) -> Option<ReadThrows> {
        let below =
            |why: &Unframed| *why == Unframed::SizeBelowMinimum && throws_when_read(0, left);
        match self {
            StopReason::ZeroFilled { len } if throws_when_read(0, *len) => {
                Some(ReadThrows::ZeroTail)
            }
            StopReason::Unframed { why, .. }
            | StopReason::Swapped {
                tail: SwappedTail::Unframed { why },
            } if below(why) => Some(ReadThrows::BelowMinimum { header: false }),
            StopReason::ImpossibleSize { why, .. }
            | StopReason::Swapped {
                tail: SwappedTail::ImpossibleSize { why },
            } if below(why) => Some(ReadThrows::BelowMinimum { header: true }),
            _ => None,
        }
    }

    /// True for a zero-filled tail whose read throws wherever it starts
    /// ([`ReadThrows::ZeroTail`]): the one `LogSegment.readNextOffset` of the last segment
    /// meets at load.
    pub(crate) fn zero_tail_throws(&self) -> bool {
        matches!(self, StopReason::ZeroFilled { len } if throws_when_read(0, *len))
    }

    /// True when a recovery stopped here throws `InvalidOffsetException` (the segment is
    /// emptied by `recoverLog`, the load fails when run by `loadSegmentFiles`).
    pub(crate) fn invalid_offset(&self) -> bool {
        matches!(
            self,
            StopReason::OffsetNotAboveIndexed { .. } | StopReason::TimeIndexBelowLast { .. }
        )
    }

    /// The stop at the end of a file that ends as `tail` (`None`: cleanly), as the scan's
    /// walk names it: `(position, reason, offset of the entry there when readable)`.
    pub(crate) fn of_tail(
        tail: crate::read::format::Tail,
    ) -> Option<(u64, StopReason, Option<i64>)> {
        use crate::read::format::Tail;
        Some(match tail {
            Tail::Clean => return None,
            Tail::Partial {
                position,
                declared,
                available,
                offset,
            } => (
                position,
                StopReason::PartialBatch {
                    declared,
                    available,
                },
                Some(offset),
            ),
            Tail::ZeroFilled { position, len } => (position, StopReason::ZeroFilled { len }, None),
            Tail::Garbage {
                position,
                len,
                reason,
            } => (position, StopReason::Unframed { len, why: reason }, None),
            Tail::CorruptEntry {
                position,
                size,
                reason,
                ..
            } => (
                position,
                StopReason::ImpossibleSize { size, why: reason },
                None,
            ),
        })
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::CrcMismatch => f.write_str("CRC mismatch (CorruptRecordException)"),
            StopReason::MalformedControl => {
                f.write_str("after a malformed control record, which recovery keeps (its producer-state update throws InvalidRecordException)")
            }
            StopReason::InvalidBatch { error } => write!(f, "invalid batch: {error}"),
            StopReason::PartialBatch {
                declared,
                available,
            } => write!(
                f,
                "partial batch ({declared} bytes declared, {available} present)"
            ),
            StopReason::ZeroFilled { len } => {
                write!(f, "{len} zero bytes (preallocated tail)")?;
                if throws_when_read(0, *len) {
                    write!(f, " {THROWS_WHEN_READ}")?;
                }
                Ok(())
            }
            StopReason::Unframed { len, why } => {
                write!(f, "{len} bytes that do not frame as a batch ({why})")
            }
            StopReason::ImpossibleSize { size, why } => {
                write!(f, "entry size {size} impossible ({why})")
            }
            StopReason::OffsetNotAboveIndexed { offset, last } => write!(
                f,
                "offset {offset} not above the last indexed offset {last} {INVALID_OFFSET}: the segment is emptied"
            ),
            StopReason::TimeIndexBelowLast { offset, last } => write!(
                f,
                "time index entry for offset {offset} below the last one appended ({last}) {INVALID_OFFSET}: the segment is emptied"
            ),
            StopReason::Swapped { tail } => match tail {
                SwappedTail::PartialBatch => f.write_str("partial batch"),
                SwappedTail::ZeroFilled { len } => {
                    write!(f, "{len} zero bytes (preallocated tail)")
                }
                SwappedTail::Unframed { why } => {
                    write!(f, "bytes that do not frame as a batch ({why})")
                }
                SwappedTail::ImpossibleSize { why } => write!(f, "entry size impossible ({why})"),
            },
            StopReason::Words { text } => f.write_str(text),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The derived form (`remote = "Self"`: an inherent function, not this one).
        StopReason::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for StopReason {
    /// The derived form, or the words alone (what bundles of format 6 written before the
    /// reason was typed hold): [`StopReason::Words`].
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Typed(#[serde(deserialize_with = "StopReason::deserialize")] StopReason),
            Words(String),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Typed(r) => r,
            Stored::Words(text) => StopReason::Words { text },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle written before the reason was typed holds `[position, words, offset]`: it
    /// reads as the words; a typed reason reads back as itself.
    #[test]
    fn a_stop_reads_back_typed_or_as_the_words_of_an_earlier_bundle() {
        let old: (u64, StopReason, Option<i64>) =
            serde_json::from_str(r#"[7, "CRC mismatch (CorruptRecordException)", 3]"#).unwrap();
        assert_eq!(
            old.1,
            StopReason::Words {
                text: "CRC mismatch (CorruptRecordException)".into()
            }
        );
        assert_eq!(old.1.read_throws(100), None);
        for r in [
            StopReason::CrcMismatch,
            StopReason::ZeroFilled { len: 40 },
            StopReason::Unframed {
                len: 20,
                why: Unframed::SizeBelowMinimum,
            },
            StopReason::Swapped {
                tail: SwappedTail::ImpossibleSize {
                    why: Unframed::SizeBelowMinimum,
                },
            },
            StopReason::Words { text: "x".into() },
        ] {
            let json = serde_json::to_string(&(1u64, &r, None::<i64>)).unwrap();
            let back: (u64, StopReason, Option<i64>) = serde_json::from_str(&json).unwrap();
            assert_eq!(back.1, r, "{json}");
        }
    }

    /// Reading throws at a size field below 14 with 18 bytes or more left, never at other
    /// reasons; a swapped-in zero tail is not taken as throwing (as before the reason was
    /// typed).
    #[test]
    fn reading_throws_only_below_the_minimum_with_18_bytes_left() {
        let below = Unframed::SizeBelowMinimum;
        let zeros = |len| StopReason::ZeroFilled { len };
        assert_eq!(zeros(18).read_throws(18), Some(ReadThrows::ZeroTail));
        assert!(zeros(18).zero_tail_throws());
        assert_eq!(zeros(17).read_throws(17), None);
        assert!(!zeros(17).zero_tail_throws());
        let unframed = |why| StopReason::Unframed { len: 30, why };
        assert_eq!(
            unframed(below).read_throws(18),
            Some(ReadThrows::BelowMinimum { header: false })
        );
        assert_eq!(unframed(below).read_throws(17), None);
        assert_eq!(unframed(Unframed::UnknownMagic).read_throws(30), None);
        assert!(!unframed(below).zero_tail_throws());
        let size = |why| StopReason::ImpossibleSize { size: 5, why };
        assert_eq!(
            size(below).read_throws(30),
            Some(ReadThrows::BelowMinimum { header: true })
        );
        assert_eq!(size(Unframed::SizePastLargestSegment).read_throws(30), None);
        let swapped = |tail| StopReason::Swapped { tail };
        assert_eq!(
            swapped(SwappedTail::ZeroFilled { len: 40 }).read_throws(40),
            None
        );
        assert_eq!(
            swapped(SwappedTail::Unframed { why: below }).read_throws(40),
            Some(ReadThrows::BelowMinimum { header: false })
        );
        for r in [
            StopReason::CrcMismatch,
            StopReason::MalformedControl,
            StopReason::PartialBatch {
                declared: 100,
                available: 40,
            },
        ] {
            assert_eq!(r.read_throws(1000), None, "{r}");
            assert!(!r.invalid_offset(), "{r}");
        }
        assert!(StopReason::OffsetNotAboveIndexed { offset: 1, last: 2 }.invalid_offset());
        assert!(StopReason::TimeIndexBelowLast { offset: 1, last: 2 }.invalid_offset());
    }
}
