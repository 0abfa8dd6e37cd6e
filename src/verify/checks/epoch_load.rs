//! How a broker's `LeaderEpochFileCache` constructor reads `leader-epoch-checkpoint`, by
//! version: since 2.7 (the cache rewritten over a `TreeMap` with KIP-595's fetch changes,
//! KAFKA-10435) it passes each entry, in file order, to `assign` — which refuses a negative
//! epoch or start offset (`IllegalArgumentException`), skips the latest epoch repeated from a
//! later offset (`isUpdateNeeded`) and otherwise first drops, from the newest down, every
//! entry whose epoch or start is not below the new one's (`maybeTruncateNonMonotonicEntries`).
//! Before 2.7 the constructor kept the entries as read (core's Scala `LeaderEpochFileCache`,
//! an `ArrayBuffer` filled from `checkpoint.read()`). The `assign` model is the one the
//! consumers' lineage and the tiering checks read too (`cluster::epoch_file::as_constructed`); this module decides which reading a partition's broker makes, and
//! words the refused file.

use super::mk;
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::recovery::BrokerVersion;
use crate::partition::scan::PartitionReport;
use crate::read::format::checkpoint::{EpochEntry, JavaThrows};
use serde_json::json;

/// The first release whose constructor runs the entries through `assign`.
const ASSIGNING: BrokerVersion = BrokerVersion(2, 7, 0);

/// Which constructor loads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConstructorRead {
    /// 2.7 or later: each entry through `assign`.
    Assign,
    /// Before 2.7: the entries as read.
    AsRead,
    /// Not known: either.
    Unknown,
}

impl ConstructorRead {
    /// `version` (`--broker-version`) when given; else a KRaft node's (`kraft`: the log dir's
    /// `meta.properties` is version 1, or the directory is the metadata log itself) — KRaft
    /// exists only since 2.8, and a broker before 2.7 refuses a version-1 `meta.properties`
    /// (`BrokerMetadataCheckpoint.read` knows version 0 only); else not known.
    pub(super) fn of(version: Option<BrokerVersion>, kraft: bool) -> ConstructorRead {
        match version {
            Some(v) if v >= ASSIGNING => ConstructorRead::Assign,
            Some(_) => ConstructorRead::AsRead,
            None if kraft => ConstructorRead::Assign,
            None => ConstructorRead::Unknown,
        }
    }

    /// [`ConstructorRead::of`] for partition `p` (scanned as `r`).
    pub(super) fn of_partition(
        p: &PartitionDir,
        r: &PartitionReport,
        version: Option<BrokerVersion>,
    ) -> ConstructorRead {
        ConstructorRead::of(version, r.source.kraft || p.is_kraft_metadata())
    }
}

/// The cache a 2.7+ constructor leaves of `entries` (none of them negative), as
/// `(epoch, start)`.
pub(super) fn assigned(entries: &[EpochEntry]) -> Vec<(i32, i64)> {
    (crate::cluster::epoch_file::as_constructed(entries).into_iter())
        .map(|e| (e.epoch, e.start_offset))
        .collect()
}

/// Whether the entries `ck` go back: an epoch not above the one before, or a start below it
/// (`LeaderEpochCheckpointFile` never writes such a file: the cache it writes is ascending).
pub(super) fn goes_back(ck: &[(i32, i64)]) -> bool {
    ck.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1)
}

/// The finding of a file holding a negative epoch or start offset (`entries[bad]`, the
/// first), when a broker that loads it may be 2.7 or later (`read` is not
/// [`ConstructorRead::AsRead`]): the constructor's `assign` throws `IllegalArgumentException`,
/// which is no `IOException`, so `LogManager.loadLogs` rethrows it and the broker does not
/// start (`small_files::partition_load_fate`). An error when the version is proven, a
/// warning with both readings said when it is not.
pub(super) fn negative_entry(
    r: &PartitionReport,
    entries: &[EpochEntry],
    bad: usize,
    read: ConstructorRead,
) -> Finding {
    let e = entries[bad];
    let what = if e.epoch < 0 {
        "leader epoch"
    } else {
        "start offset"
    };
    let error = format!(
        "entry {} of {} (epoch {}, start offset {}) has a negative {what}",
        bad + 1,
        entries.len(),
        e.epoch,
        e.start_offset
    );
    let (severity, scope, older) = match read {
        ConstructorRead::Unknown => (
            Severity::Warning,
            "a broker since 2.7, whose LeaderEpochFileCache constructor passes each entry to assign, refuses it with IllegalArgumentException (one before 2.7 keeps the entries as read and loads the partition)",
            " — for a broker since 2.7; one before 2.7 keeps the entries as read and loads the partition",
        ),
        _ => (
            Severity::Error,
            "the LeaderEpochFileCache constructor passes each entry to assign, which refuses it with IllegalArgumentException",
            "",
        ),
    };
    let ck: Vec<(i32, i64)> = entries.iter().map(|e| (e.epoch, e.start_offset)).collect();
    mk(
        r,
        Kind::LeaderEpochCheckpointMismatch,
        "leader-epoch-checkpoint",
        format!("leader-epoch-checkpoint: {error}: {scope}"),
    )
    .severity(severity)
    .evidence(json!({
        "error": error,
        "java_exception": JavaThrows::IllegalArgumentException.name(),
        "entry": [e.epoch, e.start_offset],
        "checkpoint": ck,
    }))
    .broker(super::small_files::partition_load_fate(
        r,
        "leader-epoch-checkpoint",
        "the LeaderEpochFileCache it builds, each entry through assign",
        JavaThrows::IllegalArgumentException,
        older,
        // The version only changes what an `IOException` does.
        None,
    ))
}

/// The words of a file whose entries go back ([`goes_back`]), for the reading `read` and
/// the cache 2.7+ loads of it (`loaded`); `loaded_wrong`: what the comparison says of that
/// cache, if it is wrong. `None` when nothing is to be said (2.7+ proven, its cache right).
pub(super) fn going_back(
    loaded: &[(i32, i64)],
    read: ConstructorRead,
    loaded_wrong: Option<String>,
) -> Option<(Severity, String)> {
    const BACK: &str = "entries are not in ascending epoch and offset order";
    let loads = format!(
        "the LeaderEpochFileCache constructor passes each entry to assign (maybeTruncateNonMonotonicEntries), which leaves the cache {}",
        entries_text(loaded)
    );
    match (read, loaded_wrong) {
        (ConstructorRead::AsRead, _) => Some((
            Severity::Warning,
            format!(
                "{BACK}: a broker before 2.7 keeps them as read and answers OffsetsForLeaderEpoch from them"
            ),
        )),
        (ConstructorRead::Assign, None) => None,
        (ConstructorRead::Assign, Some(m)) => Some((
            Severity::Warning,
            format!("{BACK}; {loads}, and that cache is wrong: {m}"),
        )),
        (ConstructorRead::Unknown, Some(m)) => Some((
            Severity::Warning,
            format!(
                "{BACK}: a broker before 2.7 keeps them as read; since 2.7 {loads}, and that cache is wrong too: {m}"
            ),
        )),
        (ConstructorRead::Unknown, None) => Some((
            Severity::Info,
            format!(
                "{BACK}: a problem only for a broker before 2.7, which keeps them as read and answers OffsetsForLeaderEpoch from them; since 2.7 {loads}: that cache agrees with the batches"
            ),
        )),
    }
}

/// `1 from 0, 3 from 5` (`no entry` for none).
pub(super) fn entries_text(list: &[(i32, i64)]) -> String {
    if list.is_empty() {
        return "no entry".into();
    }
    let v: Vec<String> = list.iter().map(|(e, s)| format!("{e} from {s}")).collect();
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(i32, i64)]) -> Vec<EpochEntry> {
        (list.iter())
            .map(|&(epoch, start_offset)| EpochEntry {
                epoch,
                start_offset,
            })
            .collect()
    }

    /// `--broker-version` decides; without it a KRaft node proves 2.7+, and nothing else
    /// does.
    #[test]
    fn the_constructor_is_known_from_the_version_or_kraft() {
        use ConstructorRead::*;
        let v = |a, b| Some(BrokerVersion(a, b, 0));
        assert_eq!(ConstructorRead::of(v(2, 7), false), Assign);
        assert_eq!(ConstructorRead::of(v(3, 9), false), Assign);
        assert_eq!(ConstructorRead::of(v(2, 6), false), AsRead);
        assert_eq!(ConstructorRead::of(v(2, 6), true), AsRead);
        assert_eq!(ConstructorRead::of(None, true), Assign);
        assert_eq!(ConstructorRead::of(None, false), Unknown);
    }

    /// `LeaderEpochFileCacheTest`'s monotonicity cases as the constructor applies them to a
    /// file.
    #[test]
    fn a_file_going_back_loads_as_assign_leaves_it() {
        for file in [
            &[(1, 0), (2, 6), (3, 5)][..],
            &[(1, 0), (3, 6), (3, 5)],
            &[(1, 0), (3, 5), (3, 6)],
        ] {
            assert!(goes_back(file), "{file:?}");
            assert_eq!(assigned(&entries(file)), vec![(1, 0), (3, 5)], "{file:?}");
        }
        assert!(!goes_back(&[(1, 0), (2, 0), (3, 5)]));
        assert_eq!(assigned(&entries(&[(1, 0), (2, 0)])), vec![(2, 0)]);
    }

    #[test]
    fn going_back_is_said_for_the_readings_it_holds_in() {
        use ConstructorRead::*;
        let loaded = &[(1, 0), (3, 5)][..];
        assert_eq!(going_back(loaded, Assign, None), None);
        let (s, m) = going_back(loaded, Unknown, None).unwrap();
        assert_eq!(s, Severity::Info);
        assert!(m.contains("only for a broker before 2.7") && m.contains("1 from 0, 3 from 5"));
        let (s, m) = going_back(loaded, Unknown, Some("x".into())).unwrap();
        assert!(s == Severity::Warning && m.contains("wrong too: x"), "{m}");
        let (s, m) = going_back(loaded, Assign, Some("x".into())).unwrap();
        assert!(s == Severity::Warning && !m.contains("before 2.7"), "{m}");
        let (s, m) = going_back(loaded, AsRead, None).unwrap();
        assert!(s == Severity::Warning && m.contains("before 2.7"), "{m}");
    }
}
