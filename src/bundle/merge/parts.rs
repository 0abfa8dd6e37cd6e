//! The partitions of a merge, rebuilt from the bundles' frames into the report's list.

use super::super::content::PartitionFrame;
use crate::finding::Finding;
use crate::partition::walked::BatchKey;
use crate::results::PartitionReport;
use std::path::Path;

/// The partitions of bundles, each rebuilt as the report's partition as its frame is read
/// (a frame's decoded form is about twice a report's size: it is never held for more than
/// one partition at a time), with what the frame carried besides its JSON form put back
/// where a scan keeps it. Every bundle of a merge is read into one `Parts`, whose lists
/// become the report's (no second list of partitions is made).
#[derive(Debug, Clone, Default)]
pub(crate) struct Parts {
    pub reports: Vec<PartitionReport>,
    /// Each partition's own findings.
    pub findings: Vec<Vec<Finding>>,
    /// The cluster ids, log dirs (as sources name them) and log dir paths read so far:
    /// each decoded once per partition and finding, kept once (as a scan shares them).
    shared: std::collections::HashSet<std::sync::Arc<str>>,
    log_dirs: std::collections::HashSet<std::sync::Arc<Path>>,
}

impl Parts {
    /// Room for `n` partitions (the count the bundles' file inventories give).
    pub(super) fn with_capacity(n: usize) -> Parts {
        Parts {
            reports: Vec::with_capacity(n),
            findings: Vec::with_capacity(n),
            ..Parts::default()
        }
    }

    /// Add the partition of `f`, its batch keys `batches` (from its fingerprint frame).
    pub(super) fn push(&mut self, f: PartitionFrame, batches: Option<Vec<BatchKey>>) {
        let PartitionFrame {
            result,
            mut outcome,
            fingerprints: _,
            leader_epochs,
            log_dir,
            recovery,
            damaged,
        } = f;
        let mut p = result.partition;
        outcome.txns = result.txns;
        p.carried.outcome.set(outcome);
        // Held until the merge ends: not with the room serde's growth left, and set whole
        // (left out while empty, as a scan's).
        let mut inputs = result.cluster_inputs;
        inputs.batches = batches.map(thin_vec::ThinVec::from);
        p.carried.cluster_inputs.set(inputs);
        p.carried.segment_names = result.segment_names;
        p.carried.set_timeline(result.timeline.map(Box::new));
        p.carried.leader_epochs = leader_epochs.into();
        p.carried.leader_epochs.shrink_to_fit();
        p.carried.log_dir = log_dir.map(|d| self.log_dir(&d));
        if let Some(r) = recovery {
            r.restore(&mut p);
        }
        p.carried.set_damaged(damaged);
        self.share(&mut p.source);
        let mut findings = result.findings;
        for f in &mut findings {
            self.share(&mut f.source);
        }
        self.reports.push(p);
        self.findings.push(findings);
    }

    /// `s`'s cluster id and log dir, the copies read before when there are.
    fn share(&mut self, s: &mut crate::finding::Source) {
        for name in [&mut s.cluster_id, &mut s.log_dir].into_iter().flatten() {
            match self.shared.get(&**name) {
                Some(kept) => *name = kept.clone(),
                None => {
                    self.shared.insert(name.clone());
                }
            }
        }
    }

    /// The log dir `d`, the copy read before when there is one.
    fn log_dir(&mut self, d: &str) -> std::sync::Arc<Path> {
        let path = Path::new(d);
        if let Some(kept) = self.log_dirs.get(path) {
            return kept.clone();
        }
        let kept: std::sync::Arc<Path> = std::sync::Arc::from(path);
        self.log_dirs.insert(kept.clone());
        kept
    }
}
