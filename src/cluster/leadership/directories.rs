//! The directory ids the image at a metadata log's end registers for each broker: what
//! `ClusterControlManager` keeps in `directoryToBroker` (from each registration's
//! `BrokerRegistration.directories`, KIP-858) and holds every new registration against —
//! `ClusterControlManager.registerBroker` (3.7 and later, with a `metadata.version` that
//! supports directory assignment) refuses a registration naming a directory id registered
//! for another broker (`InvalidRegistrationException`, "Broker N is already registered with
//! directory …": `ClusterControlManagerTest.testRegisterWithDuplicateDirectoryId`).
//!
//! Built once per replayed history ([`super::run`]) and carried by the report for
//! `verify`'s broker checks, which hold each log dir's `directory.id` against it. Only a
//! registration whose every later change the history holds is kept: none when a record
//! the replay could not apply lies at or after it (an unregistration, a new registration
//! may be in it), nor after a broker registration record kept raw.

use super::ClusterHistory;
use super::replay::Registration;
use crate::finding::Source;
use std::collections::{BTreeMap, BTreeSet};

/// `MetadataVersion.IBP_3_7_IV2`'s feature level, the first where
/// `isDirectoryAssignmentSupported` (below it `registerBroker` checks no directory).
const DIRECTORY_ASSIGNMENT_LEVEL: i16 = 17;

/// The directory ids one cluster's image registers, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredDirs {
    /// Where the replayed metadata log was read (its cluster, log dir, path).
    pub source: Source,
    /// The offset after its last record: the registrations hold as of it.
    pub end_offset: i64,
    /// `metadata.version` at the end (`None`: the log sets none).
    pub metadata_version: Option<i16>,
    /// Every broker id the history names in a broker record: those nodes are brokers.
    pub brokers: BTreeSet<i32>,
    /// Directory id → the registered brokers whose registration names it, each with the
    /// metadata offset of its `RegisterBrokerRecord`.
    pub owners: BTreeMap<[u8; 16], Vec<(i32, i64)>>,
}

impl RegisteredDirs {
    /// The registrations of `h`'s image at its end.
    pub fn of(h: &ClusterHistory) -> RegisteredDirs {
        let mut owners: BTreeMap<[u8; 16], Vec<(i32, i64)>> = BTreeMap::new();
        for (&broker, reg) in &h.history.registrations {
            if !whole(reg, &h.log.gaps) {
                continue;
            }
            for d in &reg.directories {
                owners.entry(*d).or_default().push((broker, reg.offset));
            }
        }
        RegisteredDirs {
            source: h.source.clone(),
            end_offset: h.log.end_offset,
            metadata_version: h.metadata_version(),
            brokers: h.history.brokers.iter().map(|e| e.broker).collect(),
            owners,
        }
    }

    /// Whether `registerBroker` checks directory ids at this image's `metadata.version`
    /// (`MetadataVersion.isDirectoryAssignmentSupported`; a log that sets none: the
    /// registrations' `LogDirs`, written only where it is supported, say it).
    pub fn checks_directories(&self) -> bool {
        self.metadata_version
            .is_none_or(|l| l >= DIRECTORY_ASSIGNMENT_LEVEL)
    }

    /// The brokers other than `broker` whose registration names `id`, each with the offset
    /// of its registration; empty when `broker`'s own registration names it too (an image
    /// `updateDirectories` never builds: not judged).
    pub fn others(&self, id: &[u8; 16], broker: i32) -> Vec<(i32, i64)> {
        let all = self.owners.get(id).map(Vec::as_slice).unwrap_or_default();
        if all.iter().any(|(b, _)| *b == broker) {
            return Vec::new();
        }
        all.to_vec()
    }
}

/// Whether the history holds every change of `reg` since its record: no record kept raw
/// that may have changed it, and no record it could not apply at or after it (a
/// snapshot's registration with any: its offsets are the snapshot's).
fn whole(reg: &Registration, gaps: &[i64]) -> bool {
    !reg.unsure && (gaps.is_empty() || !reg.from_snapshot && gaps.iter().all(|&g| g < reg.offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(offset: i64, from_snapshot: bool) -> Registration {
        Registration {
            offset,
            from_snapshot,
            epoch: 1,
            directories: vec![[1; 16]],
            unsure: false,
        }
    }

    /// A registration is whole when every record the replay missed lies before it, never
    /// after it, nor in the snapshot that gave it; one marked unsure never is.
    #[test]
    fn a_registration_is_whole_only_without_a_later_gap() {
        assert!(whole(&reg(5, false), &[]));
        assert!(whole(&reg(5, false), &[2, 4]));
        assert!(!whole(&reg(5, false), &[2, 5]));
        assert!(!whole(&reg(5, false), &[9]));
        assert!(whole(&reg(5, true), &[]));
        assert!(!whole(&reg(5, true), &[1]));
        let mut unsure = reg(5, false);
        unsure.unsure = true;
        assert!(!whole(&unsure, &[]));
    }
}
