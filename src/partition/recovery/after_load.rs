//! The producer snapshot files a load leaves (`UnifiedLog.rebuildProducerState` after
//! `LogLoader.load`): what `verify`'s prediction lists as `snapshots_after_load`.

use super::SegmentInput;

/// What [`after_load`] reads of the prediction.
pub(super) struct AfterLoad {
    /// Snapshot files left before the final rebuild writes its own.
    pub(super) kept: Vec<i64>,
    /// The base offsets of the segments the load leaves, ascending.
    pub(super) bases: Vec<i64>,
    pub(super) loaded: Option<i64>,
    pub(super) log_start: Option<i64>,
    pub(super) log_end: Option<i64>,
    pub(super) skipped: bool,
}

/// The snapshot files once loaded: `kept`, then the final rebuild's
/// (`UnifiedLog.rebuildProducerState(lastOffset = log end)`, `takeSnapshot` writing only
/// above the last snapshot offset). Skipped (no snapshot after a clean shutdown, or an
/// emptied log): empty snapshots at the last two segment bases and the log end, above 0.
/// Else its replay from the snapshot loaded (or the log start) passes the last two
/// segment bases below the log end, a snapshot at each above it, then one at the log end.
pub(super) fn after_load(a: AfterLoad) -> Option<Vec<i64>> {
    // The final rebuild's replay always runs when not skipped: its
    // `isEmptyBeforeTruncation` is read off `LogLoader`'s own `ProducerStateManager`,
    // which no recovery touches (each has its own) and which the load checks is still
    // empty before the rebuild — no producer, map end 0 — so it holds only for a log end
    // of 0, where there is nothing to replay.
    let log_end = a.log_end?;
    let mut files: std::collections::BTreeSet<i64> = a.kept.into_iter().collect();
    let last_two = &a.bases[a.bases.len().saturating_sub(2)..];
    let mut last = if a.skipped {
        0
    } else {
        a.loaded.or(a.log_start).unwrap_or(0)
    };
    let passed = last_two.iter().filter(|&&b| a.skipped || b < log_end);
    for &o in passed.chain(std::iter::once(&log_end)) {
        if o > last {
            files.insert(o);
            last = o;
        }
    }
    Some(files.into_iter().collect())
}

/// The base offsets of the segments a load leaves: those it does not delete, and the one
/// it creates (named `created`).
pub(super) fn bases_after(
    segs: &[SegmentInput],
    deleted: &[String],
    created: Option<&str>,
) -> Vec<i64> {
    let created = created.and_then(|n| n.strip_suffix(".log")?.parse().ok());
    (segs.iter().filter(|s| !deleted.contains(&s.name)))
        .map(|s| s.base)
        .chain(created)
        .collect()
}
