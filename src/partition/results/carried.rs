//! What a [`PartitionReport`](super::PartitionReport) carries besides its JSON form ([`Carried`]), and the part of
//! it few partitions fill ([`Rare`]).

use super::Lean;
use crate::partition::state::ReplayOutcome;

/// The part of a [`PartitionReport`](super::PartitionReport) that is not in its JSON form: what the per-partition
/// analysis hands the cluster checks, `verify` and the renderers (the replay outcome, the
/// recovery model's plan, the walk's positions and kept inputs). Internal: the report's
/// accessors give an embedder what it may read.
#[derive(Debug, Clone)]
pub(crate) struct Carried {
    /// Newest batch timestamp seen.
    pub(crate) max_timestamp: i64,
    /// Newest batch timestamp a broker's clock set (markers, LogAppendTime batches): what
    /// the reference time holds the log dir's checkpoint times against.
    pub(crate) broker_timestamp: i64,
    /// The full replay outcome (producers, aborted transactions, statistics); left out
    /// while it is empty (a partition without batches).
    pub(crate) outcome: Lean<ReplayOutcome>,
    /// Shared with the log dir's other partitions (see `LogDirFiles::path`).
    pub(crate) log_dir: Option<std::sync::Arc<std::path::Path>>,
    /// Offset of the first batch (may be above the first segment's base offset).
    pub(crate) first_offset: Option<i64>,
    /// `(leaderEpoch, startOffset)` as a broker rebuilds the leader-epoch cache from batches.
    pub(crate) leader_epochs: thin_vec::ThinVec<(i32, i64)>,
    /// The same cache as the append path leaves it (every batch through `assign`): what
    /// `verify` also accepts in `leader-epoch-checkpoint`. Not carried in bundles.
    pub(crate) append_epochs: crate::partition::epochs::AppendPathCache,
    /// This partition's findings: `ScanReport::findings[finding_range]`.
    pub(crate) finding_range: std::ops::Range<usize>,
    /// Per segment with a `.log`, in order: where `LogSegment.recover` would stop on it
    /// (the recovery model's input, from this scan's walk).
    pub(crate) segment_walks: thin_vec::ThinVec<crate::partition::recovery::SegmentWalk>,
    /// What the broker's recovery does to the segments on the next start (which it
    /// recovers, where it truncates, what it deletes, what it never looks at).
    pub(crate) recovery: Lean<crate::partition::recovery::SegmentPlan>,
    /// What few partitions have (damaged batches, index verdicts with a wrong entry,
    /// snapshot states, a timeline): one pointer, left out while all of it is empty
    /// (72 bytes a report less; 100 000 reports are kept to the end of a scan).
    pub(crate) rare: Option<Box<Rare>>,
    /// What this partition's walk kept for the cluster checks (coordinator records, group
    /// replay anomalies, batch keys of replicated partitions; see [`crate::partition::walked`]).
    /// Exchanged with [`PartitionResult`](super::PartitionResult).
    pub(crate) cluster_inputs: Lean<crate::partition::walked::ClusterInputs>,
    /// The file names of the segments with a `.log`, in walk order: what the segment
    /// numbers of the cluster inputs index. Exchanged with [`PartitionResult`](super::PartitionResult).
    pub(crate) segment_names: crate::partition::walked::SegmentNames,
}

/// The rarely filled part of [`Carried`] ([`Carried::rare`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Rare {
    /// The CRC-bad batches fed to the replay (for linking what follows from them).
    pub(crate) damaged: Vec<crate::partition::causes::DamagedBatch>,
    /// With `collect_index_verdicts`: per segment (as `segment_walks`), its index checks
    /// against the walk (`None` when the walk did not finish); empty when every segment's
    /// are clean, the usual case (read them with [`Carried::index_verdict`]).
    pub(crate) index_verdicts: Vec<Option<crate::read::format::index::IndexVerdicts>>,
    /// With `capture_snapshots`: the replayed producer state just before each snapshot's
    /// offset `N` (i.e. after every batch below `N`), as `(N, state)`.
    pub(crate) snapshot_states: Vec<(i64, Vec<crate::partition::state::ProducerState>)>,
    /// With `ScanOptions::collect_timelines`: what the HTML timeline draws, collected by
    /// this partition's walk (`None`: not collected, or no batch). Not part of the JSON
    /// report; exchanged with [`PartitionResult::timeline`](super::PartitionResult::timeline).
    pub(crate) timeline: Option<Box<crate::partition::timeline::Timeline>>,
}

impl Rare {
    fn is_empty(&self) -> bool {
        self.damaged.is_empty()
            && self.index_verdicts.is_empty()
            && self.snapshot_states.is_empty()
            && self.timeline.is_none()
    }
}

impl Default for Carried {
    fn default() -> Self {
        Carried {
            max_timestamp: i64::MIN,
            broker_timestamp: i64::MIN,
            outcome: Lean::default(),
            log_dir: None,
            first_offset: None,
            leader_epochs: Default::default(),
            append_epochs: Default::default(),
            finding_range: 0..0,
            segment_walks: Default::default(),
            recovery: Default::default(),
            rare: None,
            cluster_inputs: Default::default(),
            segment_names: Default::default(),
        }
    }
}

/// Index verdicts without a wrong entry and without an ABORT marker: what every clean
/// verdict reads as (no list is kept for a partition whose segments all have one).
static CLEAN_VERDICTS: std::sync::LazyLock<crate::read::format::index::IndexVerdicts> =
    std::sync::LazyLock::new(Default::default);

impl Carried {
    /// The rarely filled part, made present to be written.
    pub(crate) fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Default::default)
    }
    /// Drop the rarely filled part when nothing in it is left.
    pub(crate) fn shrink_rare(&mut self) {
        if self.rare.as_deref().is_some_and(Rare::is_empty) {
            self.rare = None;
        }
    }
    /// The CRC-bad batches fed to the replay.
    pub(crate) fn damaged(&self) -> &[crate::partition::causes::DamagedBatch] {
        self.rare.as_deref().map_or(&[], |r| &r.damaged)
    }
    /// Set the CRC-bad batches (nothing kept when there are none).
    pub(crate) fn set_damaged(&mut self, d: Vec<crate::partition::causes::DamagedBatch>) {
        if !d.is_empty() || self.rare.is_some() {
            self.rare_mut().damaged = d;
            self.shrink_rare();
        }
    }
    /// Take the CRC-bad batches out.
    pub(crate) fn take_damaged(&mut self) -> Vec<crate::partition::causes::DamagedBatch> {
        let d = self.rare.as_mut().map(|r| std::mem::take(&mut r.damaged));
        self.shrink_rare();
        d.unwrap_or_default()
    }
    /// With `capture_snapshots`: the replayed producer state just before each snapshot's
    /// offset.
    pub(crate) fn snapshot_states(&self) -> &[(i64, Vec<crate::partition::state::ProducerState>)] {
        self.rare.as_deref().map_or(&[], |r| &r.snapshot_states)
    }
    /// The timeline, when one was collected.
    pub(crate) fn timeline(&self) -> Option<&crate::partition::timeline::Timeline> {
        self.rare.as_deref()?.timeline.as_deref()
    }
    /// Set (or clear) the timeline.
    pub(crate) fn set_timeline(&mut self, t: Option<Box<crate::partition::timeline::Timeline>>) {
        if t.is_some() || self.rare.is_some() {
            self.rare_mut().timeline = t;
            self.shrink_rare();
        }
    }
    /// Take the timeline out.
    pub(crate) fn take_timeline(&mut self) -> Option<Box<crate::partition::timeline::Timeline>> {
        let t = self.rare.as_mut().and_then(|r| r.timeline.take());
        self.shrink_rare();
        t
    }

    /// With `collect_index_verdicts`: the index verdicts of the `k`-th walked segment
    /// (`None`: the walk did not finish, or no such segment).
    pub(crate) fn index_verdict(
        &self,
        k: usize,
    ) -> Option<&crate::read::format::index::IndexVerdicts> {
        let verdicts = self.rare.as_deref().map_or(&[][..], |r| &r.index_verdicts);
        if verdicts.is_empty() {
            return (k < self.segment_walks.len()).then_some(&*CLEAN_VERDICTS);
        }
        verdicts.get(k)?.as_ref()
    }

    /// Keep no list of index verdicts when every segment's are clean (no wrong entry in
    /// either index, no ABORT marker): [`Self::index_verdict`] reads them back the same.
    pub(crate) fn drop_clean_verdicts(&mut self) {
        let clean = |v: &crate::read::format::index::IndexVerdicts| {
            v.offset.as_ref().is_none_or(|p| p.count == 0)
                && v.time.as_ref().is_none_or(|p| p.count == 0)
                && v.abort_markers.is_empty()
        };
        let Some(rare) = self.rare.as_deref_mut() else {
            return;
        };
        if rare
            .index_verdicts
            .iter()
            .all(|v| v.as_ref().is_some_and(clean))
        {
            rare.index_verdicts = Vec::new();
        }
        self.shrink_rare();
    }
}
