//! A partition's leader-epoch lineage and whether a remote segment belongs to it, as
//! `RemoteLogManager` judges it before it reads or deletes a remote segment.
//!
//! The lineage comes from the partition's `leader-epoch-checkpoint` today, behind
//! [`Lineage`]: the KRaft leadership history could give it too.

use std::collections::BTreeMap;

/// Epoch → first offset of the epoch, ascending by epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lineage {
    epochs: BTreeMap<i32, i64>,
}

impl Lineage {
    /// From `(epoch, start offset)` entries (a later entry for the same epoch wins, as a
    /// Java map fed in order).
    pub fn new(entries: impl IntoIterator<Item = (i32, i64)>) -> Self {
        Lineage {
            epochs: entries.into_iter().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.epochs.is_empty()
    }

    /// The entries, ascending by epoch.
    pub fn entries(&self) -> Vec<(i32, i64)> {
        self.epochs.iter().map(|(e, o)| (*e, *o)).collect()
    }

    /// The first entry (`LeaderEpochFileCache.earliestEntry`).
    pub fn first(&self) -> Option<(i32, i64)> {
        self.epochs.first_key_value().map(|(e, o)| (*e, *o))
    }

    /// `LeaderEpochFileCache.truncateFromStart(start)`: the entries starting at or below
    /// `start` go, the last of them kept with its start moved up to `start`. The broker's
    /// cache is this at load (`LogLoader.load` truncates it at the checkpointed log start)
    /// and after each move of the log start (`UnifiedLog.maybeIncrementLogStartOffset`).
    pub fn truncated_from_start(&self, start: i64) -> Lineage {
        let mut epochs = BTreeMap::new();
        let mut moved: Option<i32> = None;
        for (&e, &o) in &self.epochs {
            if o <= start {
                moved = Some(e);
            } else {
                epochs.insert(e, o);
            }
        }
        if let Some(e) = moved {
            epochs.insert(e, start);
        }
        Lineage { epochs }
    }

    /// The first entry whose epoch is `epoch` or above.
    pub fn first_at_or_above(&self, epoch: i32) -> Option<(i32, i64)> {
        self.epochs.range(epoch..).next().map(|(e, o)| (*e, *o))
    }

    /// The epoch of `offset`: the greatest epoch starting at or below it
    /// (`LeaderEpochFileCache.epochForOffset` for an offset inside the lineage).
    pub fn epoch_at(&self, offset: i64) -> Option<i32> {
        self.epochs
            .iter()
            .take_while(|(_, o)| **o <= offset)
            .last()
            .map(|(e, _)| *e)
    }

    /// `RemoteLogManager.buildFilteredLeaderEpochMap`: an epoch whose start offset equals
    /// the next epoch's start offset holds no records and is left out.
    pub fn filtered(&self) -> Lineage {
        let v: Vec<(i32, i64)> = self.entries();
        let mut out = BTreeMap::new();
        for (i, &(e, o)) in v.iter().enumerate() {
            if v.get(i + 1).is_some_and(|n| n.1 == o) {
                continue;
            }
            out.insert(e, o);
        }
        Lineage { epochs: out }
    }
}

/// Why a segment is outside the lineage (`None` from [`within_lineage`] when inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum OutsideLineage {
    /// The segment's last epoch is below the lineage's first or above its last.
    LastEpochOutOfBounds { segment_last_epoch: i32 },
    /// No epoch of the segment is at or above the lineage's first.
    NoEpochInRange,
    /// An epoch of the segment the lineage does not have.
    EpochNotInLineage { epoch: i32 },
    /// The segment's first valid epoch starts before the lineage's start of that epoch.
    StartsBeforeEpoch {
        epoch: i32,
        segment_offset: i64,
        lineage_offset: i64,
    },
    /// The segment ends at or after the start of the lineage's next epoch.
    EndsAfterEpoch {
        epoch: i32,
        end_offset: i64,
        next_epoch_offset: i64,
    },
    /// The segment's next epoch after `epoch` differs from the lineage's.
    NextEpochDiffers { epoch: i32 },
    /// The segment ends at or after the log end offset.
    EndsAtOrAfterLogEnd {
        end_offset: i64,
        log_end_offset: i64,
    },
}

/// `RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`: whether a segment with
/// `segment_epochs` (epoch → first offset in the segment) ending at `end_offset` lies in
/// `lineage` (already [`Lineage::filtered`]) of a log ending at `log_end_offset`.
pub fn within_lineage(
    segment_epochs: &Lineage,
    end_offset: i64,
    log_end_offset: i64,
    lineage: &Lineage,
) -> Option<OutsideLineage> {
    let seg = segment_epochs.filtered();
    let (Some((&seg_last, _)), Some((&first, _)), Some((&last, _))) = (
        seg.epochs.last_key_value(),
        lineage.epochs.first_key_value(),
        lineage.epochs.last_key_value(),
    ) else {
        // Kafka's maps are never empty here (a segment has epochs; the cache is checked).
        return Some(OutsideLineage::NoEpochInRange);
    };
    if seg_last < first || seg_last > last {
        return Some(OutsideLineage::LastEpochOutOfBounds {
            segment_last_epoch: seg_last,
        });
    }
    let Some((&seg_first, _)) = seg.epochs.range(first..).next() else {
        return Some(OutsideLineage::NoEpochInRange);
    };
    for (&epoch, &offset) in seg.epochs.range(seg_first..) {
        let Some(&lineage_offset) = lineage.epochs.get(&epoch) else {
            return Some(OutsideLineage::EpochNotInLineage { epoch });
        };
        let has_lower = lineage.epochs.range(..epoch).next_back().is_some();
        if epoch == seg_first && has_lower && offset < lineage_offset {
            return Some(OutsideLineage::StartsBeforeEpoch {
                epoch,
                segment_offset: offset,
                lineage_offset,
            });
        }
        let next_lineage = lineage.epochs.range(epoch + 1..).next();
        if epoch == seg_last {
            if let Some((_, &next)) = next_lineage
                && end_offset > next - 1
            {
                return Some(OutsideLineage::EndsAfterEpoch {
                    epoch,
                    end_offset,
                    next_epoch_offset: next,
                });
            }
        } else if next_lineage != seg.epochs.range(epoch + 1..).next() {
            return Some(OutsideLineage::NextEpochDiffers { epoch });
        }
    }
    (end_offset >= log_end_offset).then_some(OutsideLineage::EndsAtOrAfterLogEnd {
        end_offset,
        log_end_offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(e: &[(i32, i64)]) -> Lineage {
        Lineage::new(e.iter().copied())
    }

    // RemoteLogManagerTest.testBuildFilteredLeaderEpochMap
    #[test]
    fn filtered_drops_epochs_without_records() {
        let m = l(&[
            (0, 0),
            (1, 0),
            (2, 0),
            (3, 30),
            (4, 40),
            (5, 60),
            (6, 60),
            (7, 70),
            (8, 70),
        ]);
        assert_eq!(
            m.filtered().entries(),
            vec![(2, 0), (3, 30), (4, 40), (6, 60), (8, 70)]
        );
    }

    // RemoteLogManagerTest.testRemoteSegmentWithinLeaderEpochs
    #[test]
    fn kafka_within_leader_epochs_cases() {
        let leo = 90;
        let lineage = l(&[(0, 0), (1, 10), (2, 20), (3, 30), (4, 40), (5, 50), (7, 70)]);
        let ok = |seg: &[(i32, i64)], end: i64| within_lineage(&l(seg), end, leo, &lineage);
        assert_eq!(ok(&[(1, 15), (2, 20), (3, 30)], 35), None);
        assert_eq!(ok(&[(1, 15)], 19), None);
        assert_eq!(ok(&[(0, 0)], 5), None);
        assert_eq!(ok(&[(7, 70)], 75), None);
        assert_eq!(ok(&[(1, 15), (2, 20)], 29), None);
        assert_eq!(
            ok(&[(5, 55), (6, 60), (7, 70)], 85),
            Some(OutsideLineage::NextEpochDiffers { epoch: 5 })
        );
        assert_eq!(
            ok(&[(1, 15), (2, 20), (4, 40)], 45),
            Some(OutsideLineage::NextEpochDiffers { epoch: 2 })
        );
        let whole = lineage.entries();
        assert!(matches!(
            ok(&whole, 95),
            Some(OutsideLineage::EndsAtOrAfterLogEnd { .. })
        ));
        assert!(matches!(
            ok(&whole, 90),
            Some(OutsideLineage::EndsAtOrAfterLogEnd { .. })
        ));
        assert_eq!(
            ok(&[(1, 5), (2, 20)], 25),
            Some(OutsideLineage::StartsBeforeEpoch {
                epoch: 1,
                segment_offset: 5,
                lineage_offset: 10
            })
        );
        assert!(matches!(
            ok(&[(1, 15), (2, 20)], 35),
            Some(OutsideLineage::EndsAfterEpoch { epoch: 2, .. })
        ));
    }

    // The testkit's `truncate_from_start` and LeaderEpochFileCacheTest's truncation cases.
    #[test]
    fn truncated_from_start_moves_the_epoch_of_the_start_up() {
        let m = l(&[(0, 0), (1, 40), (2, 70)]);
        assert_eq!(m.truncated_from_start(50).entries(), vec![(1, 50), (2, 70)]);
        assert_eq!(m.truncated_from_start(40).entries(), vec![(1, 40), (2, 70)]);
        assert_eq!(m.truncated_from_start(70).entries(), vec![(2, 70)]);
        assert_eq!(m.truncated_from_start(-1), m);
        assert_eq!(
            l(&[(5, 100)]).truncated_from_start(90).entries(),
            vec![(5, 100)]
        );
        assert_eq!(m.epoch_at(69), Some(1));
        assert_eq!(m.epoch_at(-1), None);
        assert_eq!(m.first_at_or_above(1), Some((1, 40)));
        assert_eq!(m.first_at_or_above(3), None);
    }

    // RemoteLogManagerTest.testRemoteSegmentWithinLeaderEpochsForOverlappingSegments
    #[test]
    fn kafka_overlapping_segments_cases() {
        let lineage = l(&[(7, 51), (9, 100)]);
        let ok = |seg: &[(i32, i64)], end: i64| within_lineage(&l(seg), end, 210, &lineage);
        assert_eq!(ok(&[(5, 14), (7, 15), (9, 100)], 150), None);
        assert!(ok(&[(2, 5), (3, 6)], 7).is_some());
        assert!(ok(&[(7, 15), (9, 100), (10, 200)], 250).is_some());
        assert!(ok(&[(8, 75)], 100).is_some());
        assert!(ok(&[(7, 15), (9, 101)], 150).is_some());
        assert!(ok(&[(9, 99)], 150).is_some());
    }
}
