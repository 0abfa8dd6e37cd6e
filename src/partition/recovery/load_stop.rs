//! Where a failing load stops, and what of the prediction it leaves: the steps of
//! `LogLoader.load` (and `UnifiedLog`/`LogManager.loadLog` around it) that ran before the
//! throw are said, those after it are not reached.
//!
//! The broker's order (`LogLoader.load`; 2.8's `Log.loadSegments` where it differs):
//! the producer-state manager is built before the load and lists the snapshots; the first
//! pass (`removeTempFilesAndCollectSwapFiles`) deletes the `.deleted` files as its listing
//! meets them, then the `.swap` files of an unfinished split, then the `.cleaned` files; the
//! load opens every `.log.swap` and reads its next offset (3.0 and later); the second pass
//! deletes the files in the swapped range and the third renames the swaps;
//! `loadSegmentFiles` meets the files in name order (orphaned indexes deleted, segments
//! opened, those missing or with a corrupt index recovered); before 3.0
//! `completeSwapOperations` then recovers and renames the swaps; `recoverLog` recovers the
//! segments from the recovery point after an unclean shutdown (the truncation, and the
//! segments after it deleted), reads the last segment's end and empties a log that ends
//! below its log start (the leader-epoch cache cleared, a segment created); the final
//! producer-state rebuild removes the stray snapshots, cuts the others
//! (`truncateAndReload`) and replays; only a load that returns gives the log start, log end
//! and recovery point, and `LogManager.loadLog` then queues a `-delete` directory.

use super::chain::Chain;
use super::{LeftoverAction, ProducerRebuild, RecoveryPrediction, SegmentInput};
use crate::discover::layout::java_name_order;
use std::cmp::Ordering;

/// The step of the load that throws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stop {
    /// Building the producer-state manager (a `.snapshot` name): before `LogLoader.load`.
    BeforeLoad,
    /// The first pass's listing (a `.cleaned` name; any `.cleaned` or `.swap` one before
    /// 3.0): the `.deleted` files it met before are deleted, which ones the listing's order
    /// decides.
    TempListing,
    /// The first pass's sorting of the swaps (a `.swap` name, 3.0 and later): after its
    /// listing, before the split swaps and the `.cleaned` files are deleted.
    TempSwaps,
    /// Opening a `.log.swap` segment and reading its next offset (3.0 and later).
    SwapRead,
    /// `loadSegmentFiles` at the file it meets under `at` (name order); `recovers`: the
    /// segment opened there is recovered, and its recovery throws.
    SegmentFiles { at: String, recovers: bool },
    /// Brokers before 3.0: `completeSwapOperations` opening a swap segment.
    SwapCompletion,
    /// A recovery step (its rebuild or the segment's recovery): the segment and whether it
    /// is recovered for its index (in `loadSegmentFiles`) or after the unclean shutdown.
    Recovery(usize, bool),
    /// `recoverLog` reading the last segment's end.
    LogEnd,
    /// The final producer-state rebuild's replay.
    FinalRebuild,
}

/// The phases of the load, in its order (the leftovers' and the stops').
const NEVER: u8 = 0;
const LISTING: u8 = 1;
const SPLIT_SWAPS: u8 = 2;
const CLEANED: u8 = 3;
const SWAP_READ: u8 = 4;
const SWAPPED: u8 = 5;
const SEGMENT_FILES: u8 = 6;
const SWAP_COMPLETION: u8 = 7;
const RECOVERIES: u8 = 8;
const LOG_END: u8 = 9;
const EMPTIED: u8 = 10;
const FINAL: u8 = 11;
const AFTER_LOAD: u8 = 12;

impl Stop {
    /// The stable id of the step (`load_stops_at`).
    pub(super) fn id(&self) -> &'static str {
        match self {
            Stop::BeforeLoad => "before_load",
            Stop::TempListing | Stop::TempSwaps => "first_pass",
            Stop::SwapRead => "swap_read",
            Stop::SegmentFiles { .. } | Stop::Recovery(_, true) => "segment_files",
            Stop::SwapCompletion => "swap_completion",
            Stop::Recovery(_, false) => "recovery",
            Stop::LogEnd => "log_end",
            Stop::FinalRebuild => "producer_state_rebuild",
        }
    }

    fn phase(&self) -> u8 {
        match self {
            Stop::BeforeLoad => NEVER,
            Stop::TempListing => LISTING,
            Stop::TempSwaps => SPLIT_SWAPS,
            Stop::SwapRead => SWAP_READ,
            Stop::SegmentFiles { .. } | Stop::Recovery(_, true) => SEGMENT_FILES,
            Stop::SwapCompletion => SWAP_COMPLETION,
            Stop::Recovery(_, false) => RECOVERIES,
            Stop::LogEnd => LOG_END,
            Stop::FinalRebuild => FINAL,
        }
    }

    /// Words for the leftovers the load does not reach.
    fn words(&self) -> &'static str {
        match self {
            Stop::BeforeLoad => {
                "before LogLoader.load starts (building the producer-state manager)"
            }
            Stop::TempListing | Stop::TempSwaps => {
                "in its first pass (removeTempFilesAndCollectSwapFiles)"
            }
            Stop::SwapRead => "while reading the .log.swap segments, before any swap is completed",
            Stop::SegmentFiles { .. } | Stop::Recovery(_, true) => {
                "in loadSegmentFiles, before it reaches this file"
            }
            Stop::SwapCompletion => "while completing the swaps (Log.completeSwapOperations)",
            Stop::Recovery(_, false) => "while recovering the log (recoverLog)",
            Stop::LogEnd => "reading the last segment's end, before the log start check",
            Stop::FinalRebuild => "in the final producer-state rebuild",
        }
    }
}

/// When `loadSegmentFiles` meets a file (a leftover's phase), and in the name order of that
/// loop, where relevant.
fn leftover_phase(l: &LeftoverAction) -> u8 {
    let a = l.action.as_str();
    match l.kind.as_str() {
        "deleted" if a.starts_with("deleted at startup") => LISTING,
        "cleaned" => CLEANED,
        "swap" if a.starts_with("deleted at startup (belongs to an unfinished split") => {
            SPLIT_SWAPS
        }
        // Before 3.0 the listing deletes the index files at an interrupted swap's base.
        "swap" if a.starts_with("kept, and the index files") => LISTING,
        "swap" if a.contains("brokers before 3.0") => SWAP_COMPLETION,
        "swap" | "snapshot_in_swapped_range" => SWAPPED,
        "orphan_index" | "noncanonical_name" => SEGMENT_FILES,
        "snapshot_replaced_at_recovery" => RECOVERIES,
        "leader_epoch_cache_cleared" => EMPTIED,
        "stray_snapshot"
        | "snapshot_below_log_start"
        | "snapshot_beyond_log"
        | "corrupt_snapshot" => FINAL,
        "delete_dir" | "future_dir" | "stray_dir" => AFTER_LOAD,
        _ => NEVER,
    }
}

/// The recovery steps ([`Chain::steps`]) the load starts before it throws at `stop`, and
/// the one among them that throws.
fn started(
    stop: &Stop,
    segs: &[SegmentInput],
    chain: Option<&Chain>,
) -> (Vec<bool>, Option<usize>) {
    let Some(c) = chain else {
        return (Vec::new(), None);
    };
    let mut failing = None;
    // The failing recovery step, found once.
    let recovery_at = match stop {
        Stop::Recovery(seg, for_index) => {
            (c.steps.iter()).position(|s| s.seg == *seg && s.for_index == *for_index)
        }
        _ => None,
    };
    let started = (c.steps.iter().enumerate())
        .map(|(i, st)| match stop {
            Stop::BeforeLoad | Stop::TempListing | Stop::TempSwaps | Stop::SwapRead => false,
            Stop::SegmentFiles { at, recovers } => {
                let o = java_name_order(segs[st.seg].load_name(), at);
                let here = *recovers && o == Ordering::Equal && st.for_index;
                if here && failing.is_none() {
                    failing = Some(i);
                }
                st.for_index && (o == Ordering::Less || here)
            }
            Stop::Recovery(..) => {
                failing = recovery_at;
                recovery_at.is_some_and(|p| i <= p)
            }
            // Before 3.0: the first swap whose index is a directory throws in its recovery.
            Stop::SwapCompletion => {
                let s = &segs[st.seg];
                let here = s.open_error.is_some()
                    && s.corrupt_index.as_deref() == Some(super::swaps::SWAP_RECOVERY_BEFORE_3_0);
                if here && failing.is_none() {
                    failing = Some(i);
                }
                st.for_index
            }
            Stop::LogEnd | Stop::FinalRebuild => true,
        })
        .collect();
    (started, failing)
}

/// The leftover actions of a load that throws at `stop`: those of the steps before it
/// stand, the others are not reached (or may be, where the broker's order is the file
/// system's).
/// `loop_at`: the name at which `loadSegmentFiles` throws (a file's, or the segment's
/// whose recovery throws there).
fn cut_leftovers(
    leftovers: &mut [LeftoverAction],
    (stop, loop_at): (&Stop, Option<&str>),
    chain: Option<&Chain>,
    started: &[bool],
) {
    let at = stop.phase();
    for l in leftovers.iter_mut() {
        let p = leftover_phase(l);
        let reached = match p {
            NEVER => Some(true),
            // Deleted by a recovery's rebuild: one the load starts (in `loadSegmentFiles`
            // for an index, or after the unclean shutdown).
            RECOVERIES => Some(deleting_step(l, chain).map_or(p < at, |i| started[i])),
            _ if p < at => Some(true),
            _ if p > at => Some(false),
            LISTING | SWAP_COMPLETION => None,
            SEGMENT_FILES => {
                Some(loop_at.is_some_and(|n| java_name_order(&l.file, n) == Ordering::Less))
            }
            _ => Some(true),
        };
        match reached {
            Some(true) => {}
            Some(false) => {
                l.action = format!(
                    "not reached: the load fails {} (load_failure); the file stays as it is",
                    stop.words()
                );
            }
            None => {
                l.action = format!(
                    "done only if the load gets to it before it fails {} (load_failure): the order is the directory listing's, not predicted",
                    stop.words()
                );
            }
        }
    }
}

/// The recovery step whose rebuild deletes the snapshot `l` for good
/// ([`Chain::deleted`]: the last step at that base).
fn deleting_step(l: &LeftoverAction, chain: Option<&Chain>) -> Option<usize> {
    let c = chain?;
    let offset: i64 = l.file.split('.').next()?.parse().ok()?;
    let (_, base) = c.deleted.iter().find(|(o, _)| *o == offset)?;
    c.steps.iter().rposition(|s| s.base == *base)
}

/// Cut `pr` back to what a load throwing at `stop` does: the steps before the throw are
/// said, nothing after it (no log start, log end or recovery point after the load, no
/// producer state, no snapshots after load).
pub(super) fn cut(
    pr: &mut RecoveryPrediction,
    stop: &Stop,
    segs: &[SegmentInput],
    chain: Option<&Chain>,
) {
    let (started, failing) = started(stop, segs, chain);
    let loop_at = match stop {
        Stop::SegmentFiles { at, .. } => Some(at.as_str()),
        Stop::Recovery(seg, true) => segs.get(*seg).map(|s| s.load_name()),
        _ => None,
    };
    cut_leftovers(&mut pr.leftovers, (stop, loop_at), chain, &started);
    let at = stop.phase();
    let steps = chain.map_or(&[][..], |c| &c.steps[..]);
    // The segments whose recovery the load starts, and those whose recovery it finishes.
    let mut started_names = std::collections::HashSet::new();
    let mut done_names = std::collections::HashSet::new();
    for ((i, st), _) in (steps.iter().enumerate().zip(&started)).filter(|(_, s)| **s) {
        started_names.insert(segs[st.seg].name.as_str());
        if Some(i) != failing {
            done_names.insert(segs[st.seg].name.as_str());
        }
    }
    // A recovery the load starts is said (the one that throws too: it runs up to there).
    if at < LOG_END {
        (pr.recovered_segments).retain(|r| started_names.contains(r.segment.as_str()));
    }
    // A truncation stands once its recovery is over.
    let completed = |name: &str| done_names.contains(name);
    if at < LOG_END
        && pr
            .truncation
            .as_ref()
            .is_some_and(|t| !completed(&t.segment))
    {
        pr.truncation = None;
    }
    // The segments after a truncation are deleted right after it; emptying the log, and a
    // `-delete` directory's deletion, come after the last segment's read.
    if at < LOG_END || (at == LOG_END && pr.truncation.is_none()) {
        pr.deleted_segments.clear();
    }
    if at < FINAL {
        pr.created_segment = None;
    }
    pr.log_start_offset_after = None;
    pr.log_end_offset_after = None;
    pr.log_end_recovered = None;
    pr.recovery_point_after = None;
    let ps = &mut pr.producer_state;
    *ps = if at == FINAL {
        // The rebuild loads its snapshot and replays up to where it throws.
        ProducerRebuild {
            producers: None,
            open_transactions: None,
            snapshots_after_load: None,
            ..ps.clone()
        }
    } else {
        ProducerRebuild {
            snapshot: None,
            snapshot_offset: None,
            snapshot_written_at_load: false,
            skipped: false,
            replay_from: None,
            replay_to: None,
            producers: None,
            open_transactions: None,
            snapshots_after_load: None,
            origin: None,
        }
    };
    pr.load_stops_at = Some(stop.id().into());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(file: &str, kind: &str, action: &str) -> LeftoverAction {
        LeftoverAction {
            file: file.into(),
            kind: kind.into(),
            action: action.into(),
        }
    }

    /// Each leftover's step of the load, as its action words it.
    #[test]
    fn leftover_phases() {
        let cases = [
            (
                l(
                    "0.log.deleted",
                    "deleted",
                    "deleted at startup (it was scheduled for deletion)",
                ),
                LISTING,
            ),
            (
                l(
                    "1-2.checkpoint.deleted",
                    "deleted",
                    "left alone by LogLoader",
                ),
                NEVER,
            ),
            (l("0.log.cleaned", "cleaned", "deleted at startup"), CLEANED),
            (
                l(
                    "5.log.swap",
                    "swap",
                    "deleted at startup (belongs to an unfinished split: …)",
                ),
                SPLIT_SWAPS,
            ),
            (
                l(
                    "0.log.swap",
                    "swap",
                    "swap completed at startup: range [0, 4) …",
                ),
                SWAPPED,
            ),
            (
                l(
                    "0.index.swap",
                    "swap",
                    "kept, and the index files of segment 0 deleted at startup (brokers before 3.0: …)",
                ),
                LISTING,
            ),
            (
                l(
                    "0.log.swap",
                    "swap",
                    "swap completed at startup (brokers before 3.0: …)",
                ),
                SWAP_COMPLETION,
            ),
            (
                l("0.snapshot", "snapshot_in_swapped_range", "deleted"),
                SWAPPED,
            ),
            (l("7.index", "orphan_index", "deleted"), SEGMENT_FILES),
            (l("8.snapshot", "stray_snapshot", "deleted"), FINAL),
            (l("x.tmp", "tmp", "ignored"), NEVER),
            (l("t-0.a-delete", "delete_dir", "loaded"), AFTER_LOAD),
        ];
        for (a, want) in cases {
            assert_eq!(leftover_phase(&a), want, "{a:?}");
        }
    }

    /// A leftover of the step that throws: by name in `loadSegmentFiles`, in doubt in the
    /// first pass's listing; before it, said; after it, not reached.
    #[test]
    fn leftovers_cut_at_the_stop() {
        let mut ls = vec![
            l(
                "00000000000000000000.log.deleted",
                "deleted",
                "deleted at startup (x)",
            ),
            l(
                "00000000000000000000.log.swap",
                "swap",
                "swap completed at startup: range",
            ),
            l(
                "00000000000000000003.index",
                "orphan_index",
                "deleted at startup (orphaned index file: its .log is missing)",
            ),
            l(
                "00000000000000000009.index",
                "orphan_index",
                "deleted at startup (orphaned index file: its .log is missing)",
            ),
        ];
        let stop = Stop::SegmentFiles {
            at: "00000000000000000005.log".into(),
            recovers: false,
        };
        cut_leftovers(
            &mut ls,
            (&stop, Some("00000000000000000005.log")),
            None,
            &[],
        );
        assert!(ls[0].action.starts_with("deleted at startup"));
        assert!(ls[1].action.starts_with("swap completed"));
        assert!(ls[2].action.starts_with("deleted at startup"));
        assert!(ls[3].action.starts_with("not reached"), "{:?}", ls[3]);
        let mut ls = vec![
            l(
                "00000000000000000000.log.deleted",
                "deleted",
                "deleted at startup (x)",
            ),
            l(
                "00000000000000000000.log.swap",
                "swap",
                "swap completed at startup: range",
            ),
        ];
        cut_leftovers(&mut ls, (&Stop::TempListing, None), None, &[]);
        assert!(ls[0].action.starts_with("done only if"), "{:?}", ls[0]);
        assert!(ls[1].action.starts_with("not reached"), "{:?}", ls[1]);
    }
}
