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

/// The end offset of the newest complete KRaft snapshot among file `names`: a name Kafka
/// gives the snapshots it writes ([`kraft_snapshot_id`]; not `.part` or `.deleted`, not a
/// renamed file), so that every list of one directory's names — discovery's snapshots, a
/// bundle's whole file list — gives the same answer (`None`: none). A snapshot is never
/// taken past the high watermark (`KafkaMetadataLog.createNewSnapshot`): every offset below
/// its end was committed.
pub fn newest_snapshot_end<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<i64> {
    (names.into_iter())
        .filter_map(kraft_snapshot_id)
        .map(|(end_offset, _)| end_offset)
        .max()
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

/// What `KafkaMetadataLog.recoverSnapshots` does at start with a file of the metadata log's
/// directory (it lists every name and gives it to `Snapshots.parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KraftSnapshotFate {
    /// Not a snapshot name: left alone.
    Ignored,
    /// The parse throws: the node does not start (`Throws` of [`KraftSnapshotName`]).
    Throws(&'static str),
    /// Collected for deletion and deleted (`Files.deleteIfExists` of the file's own path)
    /// once the snapshot state is found consistent: `partial` (`.checkpoint.part`),
    /// `deleted` (`.checkpoint.deleted`) or `below_log_start` (its end offset below the log
    /// start offset). Never opened.
    Deleted {
        end_offset: i64,
        epoch: i32,
        why: &'static str,
    },
    /// Kept as a snapshot id (`snapshotsToRetain`): it counts for the consistency check
    /// and may be the latest id. `canonical`: the file bears the name Kafka opens the id
    /// by (`Snapshots.snapshotPath`, read by `FileRawSnapshotReader.open`); another name
    /// that parses to the id (`00000000000000000100x0000000001.checkpoint`) is never
    /// opened.
    Retained {
        end_offset: i64,
        epoch: i32,
        canonical: bool,
    },
    /// Not judged (see [`KraftSnapshotName::Unmodelled`]).
    Unmodelled,
}

/// [`KraftSnapshotFate`] of `name` in a metadata log whose start offset is `log_start`.
pub fn kraft_snapshot_fate(name: &str, log_start: i64) -> KraftSnapshotFate {
    use KraftSnapshotFate::*;
    let (end_offset, epoch) = match kraft_snapshot_name(name) {
        KraftSnapshotName::NotSnapshot => return Ignored,
        KraftSnapshotName::Throws(e) => return Throws(e),
        KraftSnapshotName::Unmodelled => return Unmodelled,
        KraftSnapshotName::Parsed { end_offset, epoch } => (end_offset, epoch),
    };
    // `Snapshots.parse` tests the suffixes in this order.
    let why = if name.ends_with(".checkpoint.part") {
        Some("partial")
    } else if name.ends_with(".checkpoint.deleted") {
        Some("deleted")
    } else if end_offset < log_start {
        Some("below_log_start")
    } else {
        None
    };
    match why {
        Some(why) => Deleted {
            end_offset,
            epoch,
            why,
        },
        None => Retained {
            end_offset,
            epoch,
            // Kafka's name of a negative id (`NumberFormat`: `-0000000001`) does not parse
            // back to it: no file opens under one.
            canonical: end_offset >= 0
                && epoch >= 0
                && name == canonical_snapshot_name(end_offset, epoch),
        },
    }
}

/// Whether `name` is one Kafka itself gives a snapshot's files: the snapshot
/// (`Snapshots.snapshotPath`), its deletion mark (`Snapshots.markForDelete`:
/// `….checkpoint.deleted`) or a partial write (`Snapshots.createTempFile`: the id, `-`, the
/// temporary file's random digits, `.checkpoint.part`).
pub fn kafka_snapshot_file_name(name: &str) -> bool {
    let KraftSnapshotName::Parsed { end_offset, epoch } = kraft_snapshot_name(name) else {
        return false;
    };
    if end_offset < 0 || epoch < 0 {
        return false;
    }
    let canonical = canonical_snapshot_name(end_offset, epoch);
    if name == canonical || name == format!("{canonical}.deleted") {
        return true;
    }
    let stem = canonical.trim_end_matches(".checkpoint");
    name.strip_prefix(stem)
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".checkpoint.part"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::{
        KraftSnapshotFate as F, KraftSnapshotName as N, kafka_snapshot_file_name,
        kraft_snapshot_fate, kraft_snapshot_id, kraft_snapshot_name, newest_snapshot_end,
    };

    #[test]
    fn newest_snapshot_end_counts_only_the_names_kafka_writes() {
        let names = [
            "00000000000000000012-0000000002.checkpoint",
            "00000000000000000020-0000000002.checkpoint.part",
            "00000000000000000030-0000000002.checkpoint.deleted",
            "00000000000000000040x0000000002.checkpoint",
            "00000000000000000000.log",
        ];
        assert_eq!(newest_snapshot_end(names), Some(12));
        assert_eq!(newest_snapshot_end(["00000000000000000000.log"]), None);
    }
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

    /// `KafkaMetadataLog.recoverSnapshots`' three ways with a name `Snapshots.parse` reads
    /// (and the names Kafka itself writes).
    #[test]
    fn snapshot_fates_at_start() {
        let retained = |end_offset, epoch, canonical| F::Retained {
            end_offset,
            epoch,
            canonical,
        };
        let deleted = |end_offset, epoch, why| F::Deleted {
            end_offset,
            epoch,
            why,
        };
        for (name, start, want) in [
            ("leader-epoch-checkpoint", 0, F::Ignored),
            (
                "100-1.checkpoint",
                0,
                F::Throws("StringIndexOutOfBoundsException"),
            ),
            (
                "00000000000000000100-0000000001.checkpoint",
                100,
                retained(100, 1, true),
            ),
            (
                "00000000000000000100-0000000001.checkpoint",
                101,
                deleted(100, 1, "below_log_start"),
            ),
            (
                "00000000000000000100x0000000001.checkpoint",
                0,
                retained(100, 1, false),
            ),
            (
                "00000000000000000100-0000000001-copy.checkpoint",
                0,
                retained(100, 1, false),
            ),
            (
                "+0000000000000000100-0000000001.checkpoint",
                0,
                retained(100, 1, false),
            ),
            (
                "-0000000000000000001-0000000001.checkpoint",
                0,
                deleted(-1, 1, "below_log_start"),
            ),
            (
                "00000000000000000100--000000001.checkpoint",
                0,
                retained(100, -1, false),
            ),
            (
                "00000000000000000100-0000000001-77.checkpoint.part",
                0,
                deleted(100, 1, "partial"),
            ),
            (
                "00000000000000000100-0000000001.checkpoint.deleted",
                0,
                deleted(100, 1, "deleted"),
            ),
        ] {
            assert_eq!(kraft_snapshot_fate(name, start), want, "{name} at {start}");
        }
        for (name, kafkas) in [
            ("00000000000000000100-0000000001.checkpoint", true),
            ("00000000000000000100-0000000001.checkpoint.deleted", true),
            (
                "00000000000000000100-0000000001-8374651928374.checkpoint.part",
                true,
            ),
            ("00000000000000000100-0000000001-.checkpoint.part", false),
            ("00000000000000000100-0000000001-x.checkpoint.part", false),
            ("00000000000000000100x0000000001.checkpoint", false),
            ("00000000000000000100-0000000001.old.checkpoint", false),
            ("100-1.checkpoint", false),
        ] {
            assert_eq!(kafka_snapshot_file_name(name), kafkas, "{name}");
        }
    }
}
