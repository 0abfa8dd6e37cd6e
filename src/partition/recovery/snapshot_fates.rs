//! What a load does with each producer snapshot of the partition (`LogLoader.load`:
//! `removeStraySnapshots`, then `ProducerStateManager.truncateAndReload` and
//! `loadFromSnapshot`, in the recoveries' rebuilds and the final one): which are deleted
//! unread and why, which corrupt ones a rebuild reads (and deletes), which the recoveries
//! replace. The prediction's `leftovers` name them.

use super::chain;
use super::{LeftoverAction, SegmentInput, SnapshotInput};

/// What loading does with each snapshot (`LogLoader`: `removeStraySnapshots`, then
/// `truncateAndReload` and `loadProducerState`): the strays and those out of the loaded
/// log's range are deleted unread, added to `leftovers`. Returns the valid snapshots left
/// (the load reads the newest), the corrupt ones left (their fate is [`corrupt_fates`]'),
/// and whether snapshot files remain once the strays are removed (the clean-shutdown
/// shortcut looks at those).
pub(super) fn snapshot_fates<'s>(
    snapshots: &'s [SnapshotInput],
    segs: &[SegmentInput],
    leo_after: Option<i64>,
    log_start_after: Option<i64>,
    leftovers: &mut Vec<LeftoverAction>,
) -> (Vec<&'s SnapshotInput>, Vec<&'s SnapshotInput>, bool) {
    // Strays deleted, then those beyond the new log end or at/below the log start.
    let bases: Vec<i64> = segs.iter().map(|s| s.base).collect();
    let newest = snapshots.iter().map(|s| s.offset).max();
    let last_base = bases.last().copied();
    let (mut usable, mut corrupt): (Vec<&SnapshotInput>, _) = (Vec::new(), Vec::new());
    let is_stray = |offset: i64| {
        let kept_newest = Some(offset) == newest && last_base.is_none_or(|b| offset > b);
        !bases.contains(&offset) && !kept_newest
    };
    for s in snapshots {
        // In the load's order: `LogLoader.load` runs `removeStraySnapshots` before any
        // `truncateAndReload` deletes what lies beyond the log or at its start.
        let (kind, action) = if is_stray(s.offset) {
            (
                "stray_snapshot",
                "deleted: matches no segment base offset and is not the newest",
            )
        } else if leo_after.is_some_and(|l| s.offset > l) {
            (
                "snapshot_beyond_log",
                "deleted: above the log end offset after loading",
            )
        } else if log_start_after.is_some_and(|l| s.offset <= l) {
            (
                "snapshot_below_log_start",
                "deleted: at or below the log start offset",
            )
        } else if !s.valid {
            // Read or not as the rebuilds reach it ([`corrupt_fates`]).
            corrupt.push(s);
            continue;
        } else {
            usable.push(s);
            continue;
        };
        leftovers.push(LeftoverAction {
            file: s.name.clone(),
            kind: kind.into(),
            action: action.into(),
        });
    }
    // The clean-shutdown shortcut looks at the snapshots left after the stray ones are
    // removed (`removeStraySnapshots` runs first); corrupt, beyond-log and below-log-start
    // snapshots are only deleted later, by `truncateAndReload`, so they still count.
    let has_snapshot_files = snapshots.iter().any(|s| !is_stray(s.offset));
    (usable, corrupt, has_snapshot_files)
}

/// What the load does with each corrupt snapshot `snapshot_fates` left to it: one a
/// rebuild reaches as the newest left is read, throws `CorruptSnapshotException` and is
/// deleted (`ProducerStateManager.loadFromSnapshot`, which then tries the next older one);
/// one a recovery's rebuild cuts (`truncateAndReload`: nothing above the recovered
/// segment's base is kept) is deleted unread; one below the snapshot the load reads stays
/// on disk unread (no leftover: only a later truncation below that snapshot reaches it).
pub(super) fn corrupt_fates(
    corrupt: &[&SnapshotInput],
    chain: Option<&chain::Chain>,
    loaded: Option<i64>,
    leftovers: &mut Vec<LeftoverAction>,
) {
    for s in corrupt {
        let fate = match chain {
            Some(c) if c.corrupt_read.contains(&s.offset) => None,
            Some(c) => match c.corrupt_unread.iter().find(|(o, _)| *o == s.offset) {
                Some((_, base)) => Some(*base),
                None => continue,
            },
            None if loaded.is_some_and(|l| l > s.offset) => continue,
            None => None,
        };
        leftovers.push(match fate {
            None => LeftoverAction {
                file: s.name.clone(),
                kind: "corrupt_snapshot".into(),
                action: "deleted when loaded (CorruptSnapshotException); the next older snapshot is used".into(),
            },
            Some(base) => LeftoverAction {
                file: s.name.clone(),
                kind: "snapshot_replaced_at_recovery".into(),
                action: format!(
                    "deleted unread by the producer-state rebuild before the recovery of the segment at {base} (no snapshot above its base is kept: this corrupt one is never read); the recoveries write their own"
                ),
            },
        });
    }
}

/// The snapshots on disk, usable but for the recoveries, that a recovery's rebuild
/// deletes for good ([`chain::Chain::deleted`]).
pub(super) fn replaced_at_recovery<'a>(
    c: &'a chain::Chain,
    usable: &'a [&SnapshotInput],
) -> impl Iterator<Item = LeftoverAction> + 'a {
    c.deleted.iter().filter_map(|(o, base)| {
        let s = usable.iter().find(|s| s.offset == *o)?;
        Some(LeftoverAction {
            file: s.name.clone(),
            kind: "snapshot_replaced_at_recovery".into(),
            action: format!(
                "deleted by the producer-state rebuild before the recovery of the segment at {base} (no snapshot above its base is kept); the recoveries write their own"
            ),
        })
    })
}
