//! KRaft snapshot names (`<endOffset>-<epoch>.checkpoint`) as `Snapshots.parse` reads them
//! when `KafkaMetadataLog.recoverSnapshots` lists the metadata log's directory at start.

use super::names::{JavaLong, java_parse_long};

/// The width of a snapshot name's end offset (`Snapshots`' offset formatter).
const OFFSET_WIDTH: usize = 20;
/// The width of its epoch, after the one-character separator.
const EPOCH_WIDTH: usize = 10;

/// What `Snapshots.parse` makes of a file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KraftSnapshotName {
    /// Not a snapshot name: it ends neither `.checkpoint`, `.checkpoint.part` nor
    /// `.checkpoint.deleted` (never parsed).
    NotSnapshot,
    /// Parsed: the end offset and epoch read at their fixed places.
    Parsed { end_offset: i64, epoch: i32 },
    /// The parse throws (`StringIndexOutOfBoundsException`, the name too short for a
    /// width; `NumberFormatException`, a width that is not a number): nothing in
    /// `recoverSnapshots` or `KafkaMetadataLog.apply` catches it.
    Throws(&'static str),
    /// Not judged: non-ASCII digits, which Java's parse accepts and this does not model.
    Unmodelled,
}

/// `Snapshots.parse` of `name`. Only the suffix selects the names it reads; then the end
/// offset is the first 20 characters (Java's `String.substring`, in UTF-16 units) read by
/// `Long.parseLong`, and the epoch the 10 characters after the 21st (the separator is not
/// checked) read by `Integer.parseInt`. So `100-1.checkpoint` throws
/// `StringIndexOutOfBoundsException`, `00000000000000000100-1.checkpoint`
/// `NumberFormatException` (its epoch's 10 characters are `1.checkpoi`).
pub fn kraft_snapshot_name(name: &str) -> KraftSnapshotName {
    use KraftSnapshotName::*;
    if ![".checkpoint", ".checkpoint.part", ".checkpoint.deleted"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        return NotSnapshot;
    }
    let units: Vec<u16> = name.encode_utf16().collect();
    let text = |from: usize, to: usize| units.get(from..to).map(String::from_utf16_lossy);
    const SIOOBE: &str = "StringIndexOutOfBoundsException";
    const NFE: &str = "NumberFormatException";
    let Some(offset) = text(0, OFFSET_WIDTH) else {
        return Throws(SIOOBE);
    };
    let end_offset = match java_parse_long(&offset) {
        JavaLong::Parsed(n) => n,
        JavaLong::Throws => return Throws(NFE),
        JavaLong::Unmodelled => return Unmodelled,
    };
    let Some(epoch) = text(OFFSET_WIDTH + 1, OFFSET_WIDTH + 1 + EPOCH_WIDTH) else {
        return Throws(SIOOBE);
    };
    match java_parse_long(&epoch) {
        JavaLong::Parsed(n) => match i32::try_from(n) {
            Ok(epoch) => Parsed { end_offset, epoch },
            Err(_) => Throws(NFE),
        },
        JavaLong::Throws => Throws(NFE),
        JavaLong::Unmodelled => Unmodelled,
    }
}

/// The name Kafka gives the snapshot ending at `end_offset` at `epoch`
/// (`Snapshots.filenameFromSnapshotId` and its suffix), the only one it opens a snapshot
/// under (`FileRawSnapshotReader.open` builds the path from the parsed id).
pub fn canonical_snapshot_name(end_offset: i64, epoch: i32) -> String {
    format!("{end_offset:020}-{epoch:010}.checkpoint")
}

/// The `(end offset, epoch)` of a KRaft snapshot file named as Kafka names it: parsed by
/// `Snapshots.parse` and under the name Kafka opens for that id (a name that parses but is
/// another, `00000000000000000100x0000000001.checkpoint`, names no file Kafka reads).
pub fn kraft_snapshot_id(name: &str) -> Option<(i64, i32)> {
    match kraft_snapshot_name(name) {
        KraftSnapshotName::Parsed { end_offset, epoch }
            if end_offset >= 0
                && epoch >= 0
                && name == canonical_snapshot_name(end_offset, epoch) =>
        {
            Some((end_offset, epoch))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{KraftSnapshotName as N, kraft_snapshot_id, kraft_snapshot_name};

    #[test]
    fn snapshot_names_at_fixed_widths() {
        for (name, want) in [
            (
                "00000000000000000100-0000000001.checkpoint",
                N::Parsed {
                    end_offset: 100,
                    epoch: 1,
                },
            ),
            (
                "00000000000000000100-0000000001-abc.checkpoint.part",
                N::Parsed {
                    end_offset: 100,
                    epoch: 1,
                },
            ),
            (
                "00000000000000000100x0000000001.checkpoint",
                N::Parsed {
                    end_offset: 100,
                    epoch: 1,
                },
            ),
            (
                "100-1.checkpoint",
                N::Throws("StringIndexOutOfBoundsException"),
            ),
            (
                "00000000000000000100.checkpoint",
                N::Throws("NumberFormatException"),
            ),
            (
                "00000000000000000100-1.checkpoint",
                N::Throws("NumberFormatException"),
            ),
            (
                "0000000000000000100-0000000001.checkpoint",
                N::Throws("NumberFormatException"),
            ),
            (
                "00000000000000000100-9999999999.checkpoint",
                N::Throws("NumberFormatException"),
            ),
            (
                "snapshot.checkpoint.deleted",
                N::Throws("NumberFormatException"),
            ),
            ("leader-epoch-checkpoint", N::NotSnapshot),
            (
                "00000000000000000100-0000000001.checkpoint.bak",
                N::NotSnapshot,
            ),
        ] {
            assert_eq!(kraft_snapshot_name(name), want, "{name}");
        }
        assert_eq!(
            kraft_snapshot_id("00000000000000000100-0000000001.checkpoint"),
            Some((100, 1))
        );
        for name in [
            "00000000000000000100x0000000001.checkpoint",
            "100-1.checkpoint",
            "00000000000000000100-0000000001.checkpoint.part",
        ] {
            assert_eq!(kraft_snapshot_id(name), None, "{name}");
        }
    }
}
