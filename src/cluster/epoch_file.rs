//! A replica's `leader-epoch-checkpoint` as the cluster checks read it (the leadership
//! epoch check, the consumers' commit validation, the tiering check, and `verify`'s
//! cross-check of the file): the entries its broker's `LeaderEpochFileCache` loads
//! (`LeaderEpochCheckpointFile.read`), or why the file could not be read.
//!
//! One reader for all of them: bounded and FIFO-safe (`read::segment::load`: opened with
//! `O_NONBLOCK`, its type checked on the handle), from what the bundles recorded for an
//! inventory rebuilt from them (the collect's read failure included, so that a merge says
//! what the scan says), and aware of what stands in the file's place when discovery did
//! not take it for the file (a directory, a FIFO).
//!
//! A file that cannot be read is not one that is absent: the broker reads what klogscan
//! may not (permissions), or fails on what is in its place (a directory or a FIFO:
//! `CheckpointFileWithFailureHandler.read` throws `KafkaStorageException` and the log dir
//! goes offline). Its lineage is unknown, so the verdicts resting on it are not given, and
//! the file is named once, as an `unreadable_file` finding
//! ([`Finding::names_unreadable_file`] tells whether a check said it already).

use crate::discover::layout::{Inventory, LEADER_EPOCH_CHECKPOINT, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::results::PartitionReport;
use crate::read::format::checkpoint::{EpochEntry, parse_leader_epoch_checkpoint};
use crate::read::segment::{FileClass, MmapMode, error_reason, load};
use std::path::PathBuf;

/// A replica's `leader-epoch-checkpoint` that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub path: PathBuf,
    /// Why: the operating system's error, or what is in the file's place.
    pub error: String,
    /// The `evidence.reason` of its finding (`io_error`, `special_file`, …).
    pub reason: String,
    /// Discovery named it already (a FIFO, a symlink not followed): no finding of its own.
    pub said: bool,
}

impl Unread {
    fn of(path: PathBuf, e: &std::io::Error) -> Self {
        Unread {
            path,
            error: e.to_string(),
            reason: error_reason(e).unwrap_or("io_error").to_string(),
            said: false,
        }
    }
}

/// Where the file's bytes are, before they are read.
#[derive(Debug, Clone)]
pub enum Place {
    /// On this machine, read when asked for ([`Place::read`]).
    File(PathBuf),
    /// As a bundle recorded it (an inventory rebuilt from bundles).
    Recorded(Vec<u8>),
}

impl Place {
    /// The file's bytes (bounded, FIFO-safe), or why they could not be read.
    pub fn read(&self) -> Result<Vec<u8>, Unread> {
        match self {
            Place::File(f) => load(f, FileClass::Checkpoint, MmapMode::Never, None)
                .map(|d| d.to_vec())
                .map_err(|e| Unread::of(f.clone(), &e)),
            Place::Recorded(b) => Ok(b.clone()),
        }
    }
}

/// What stands where `p`'s `leader-epoch-checkpoint` should: the file discovery found, or
/// an entry of another kind holding its name (a directory, or a symlink followed to one,
/// which discovery files among the unknown entries and a read then refuses); `None` when
/// nothing does (or only single files of the directory were named).
pub fn standing_in(p: &PartitionDir) -> Option<PathBuf> {
    if let Some(f) = &p.leader_epoch_checkpoint {
        return Some(f.clone());
    }
    let path = p.path.join(LEADER_EPOCH_CHECKPOINT);
    (!p.partial && p.unknown.contains(&path)).then_some(path)
}

/// Where `p`'s `leader-epoch-checkpoint` is: `Ok(None)` when it has none, `Err` when it is
/// known already not to be readable — discovery named what is in its place (a FIFO, a
/// symlink not followed: `said`), or the collect of a bundle could not read it.
pub fn locate(inv: &Inventory, p: &PartitionDir) -> Result<Option<Place>, Unread> {
    let path = p.path.join(LEADER_EPOCH_CHECKPOINT);
    if let Some((_, why)) = inv.errors.iter().find(|(e, _)| *e == path) {
        return Err(Unread {
            path,
            error: why.clone(),
            reason: "special_file".into(),
            said: true,
        });
    }
    let Some(recorded) = &inv.recorded else {
        return Ok(standing_in(p).map(Place::File));
    };
    if let Some(u) = recorded.unread.get(&path) {
        return Err(Unread {
            path,
            error: u.error.clone(),
            reason: u.reason.clone(),
            said: false,
        });
    }
    let text = inv.small_file(&p.path, None, LEADER_EPOCH_CHECKPOINT, |_| None);
    Ok(text.map(Place::Recorded))
}

/// The bytes of `p`'s `leader-epoch-checkpoint` (`Ok(None)`: it has none), or why they
/// could not be read.
pub fn read_bytes(inv: &Inventory, p: &PartitionDir) -> Result<Option<Vec<u8>>, Unread> {
    locate(inv, p)?.map(|at| at.read()).transpose()
}

/// The entries of `p`'s `leader-epoch-checkpoint`: `Ok(None)` when it has none or the
/// file does not parse (`verify` reports that), `Err` when it could not be read.
pub fn read(inv: &Inventory, p: &PartitionDir) -> Result<Option<Vec<EpochEntry>>, Unread> {
    Ok(read_bytes(inv, p)?.and_then(|b| parse_leader_epoch_checkpoint(&b).ok()))
}

/// The cache `LeaderEpochFileCache`'s constructor (Kafka 2.7 and later) builds from a file's
/// `entries`, in file order: each goes through `assign`, which skips one that repeats the
/// latest epoch at the same or a later start (`isUpdateNeeded`) and otherwise first removes,
/// from the newest down, every entry whose epoch or start offset is not below the new one's
/// (`maybeTruncateNonMonotonicEntries`). A negative entry makes `assign` throw
/// `IllegalArgumentException` (the log does not load); it is left out here, and the cache
/// answers only for the rest (`verify` reports the throw).
pub fn as_constructed(entries: &[EpochEntry]) -> Vec<EpochEntry> {
    let mut kept: Vec<EpochEntry> = Vec::new();
    for e in entries
        .iter()
        .filter(|e| e.epoch >= 0 && e.start_offset >= 0)
    {
        let needed = kept
            .last()
            .is_none_or(|l| e.epoch != l.epoch || e.start_offset < l.start_offset);
        if !needed {
            continue;
        }
        while kept
            .last()
            .is_some_and(|l| l.epoch >= e.epoch || l.start_offset >= e.start_offset)
        {
            kept.pop();
        }
        kept.push(*e);
    }
    kept
}

/// The lineage `p`'s broker answers `OffsetsForLeaderEpoch` from
/// (`LeaderEpochFileCache.endOffsetFor`), as far as the inputs show it: the batches'
/// lineage (`report`'s leader epochs) with the entries of the copy's `leader-epoch-checkpoint`
/// that come after it — an epoch the broker assigned when it became leader, before any batch
/// of it (`Partition.makeLeader` → `maybeAssignEpochStartOffset` writes `epoch start` at the
/// log end, and the checkpoint is written at once). Entries within the batches' range are
/// left to the batches (`verify` judges the file against them); an entry is taken only
/// above the batches' latest epoch, at or after its start and at or below the log end, each
/// above the one before. A copy without the file, or whose file cannot be read, keeps its
/// batches' lineage.
pub(crate) fn answering_lineage(
    inv: &Inventory,
    p: Option<&PartitionDir>,
    report: &PartitionReport,
) -> Vec<(i32, i64)> {
    let mut lineage: Vec<(i32, i64)> = report.carried.leader_epochs.to_vec();
    let entries = match p.map(|p| read(inv, p)) {
        Some(Ok(Some(e))) => e,
        _ => return lineage,
    };
    let Some(end) = report.log_end_offset else {
        return lineage;
    };
    for e in entries {
        let after = lineage
            .last()
            .is_none_or(|&(le, ls)| e.epoch > le && e.start_offset >= ls);
        if after && e.start_offset <= end && e.start_offset >= 0 {
            lineage.push((e.epoch, e.start_offset));
        }
    }
    lineage
}

/// The `unreadable_file` finding of `u`, on replica `r`, with what was not given because
/// of it (`broker`: the finding's `broker_behaviour`). Worded as `verify`'s and the other
/// checks' findings of the same file, so that a run meeting it twice says it once.
pub fn finding(r: &PartitionReport, u: &Unread, broker: &str) -> Finding {
    Finding::new(
        Kind::UnreadableFile,
        &r.topic,
        r.partition,
        format!("cannot read {}: {}", u.path.display(), u.error),
    )
    .segment(LEADER_EPOCH_CHECKPOINT)
    .evidence(serde_json::json!({"reason": u.reason, "error": u.error}))
    .broker(broker)
}

/// Whether `u` is to be named by a check: not when discovery named it, nor when a finding
/// of `said` names it already.
pub fn to_name<'a>(u: &Unread, mut said: impl Iterator<Item = &'a Finding>) -> bool {
    !u.said && !said.any(|f| f.names_unreadable_file(&u.path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO where the file was (swapped in after discovery): the read fails at once,
    /// it does not wait for a writer.
    #[test]
    fn a_fifo_in_its_place_is_not_waited_on() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(LEADER_EPOCH_CHECKPOINT);
        let c = std::ffi::CString::new(f.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let at = Place::File(f.clone());
        std::thread::spawn(move || tx.send(at.read()).unwrap());
        let got = rx.recv_timeout(std::time::Duration::from_secs(10));
        let u = got.expect("the read waited on the FIFO").unwrap_err();
        assert_eq!((u.path, u.reason.as_str()), (f, "special_file"));
    }

    /// A readable file gives its bytes; a directory in its place is refused, not absent.
    #[test]
    fn a_file_is_read_and_a_directory_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(LEADER_EPOCH_CHECKPOINT);
        std::fs::write(&f, "0\n1\n0 0\n").unwrap();
        assert_eq!(Place::File(f.clone()).read().unwrap(), b"0\n1\n0 0\n");
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
        let u = Place::File(f).read().unwrap_err();
        assert_eq!(u.reason, "special_file", "{u:?}");
    }

    /// The constructor's `assign` over a file's entries (`LeaderEpochFileCacheTest`'s
    /// `shouldEnforceMonotonicallyIncreasingEpochs`, `shouldEnforceOffsetsIncreaseMonotonically`,
    /// `shouldNotUpdateEpochAndStartOffsetIfItDidNotChange`): an entry going back removes the
    /// newer ones it is not above, a repeat of the latest epoch at a later start is skipped,
    /// at an earlier one it replaces it; a negative entry is left out; an ascending file
    /// stays as written.
    #[test]
    fn the_constructor_assigns_each_entry_in_file_order() {
        let e = |v: &[(i32, i64)]| -> Vec<EpochEntry> {
            (v.iter())
                .map(|&(epoch, start_offset)| EpochEntry {
                    epoch,
                    start_offset,
                })
                .collect()
        };
        let c = |v: &[(i32, i64)]| as_constructed(&e(v));
        assert_eq!(c(&[(1, 0), (2, 6), (3, 5)]), e(&[(1, 0), (3, 5)]));
        assert_eq!(c(&[(1, 0), (3, 5), (3, 6)]), e(&[(1, 0), (3, 5)]));
        assert_eq!(c(&[(1, 0), (3, 6), (3, 5)]), e(&[(1, 0), (3, 5)]));
        assert_eq!(c(&[(-1, 0), (2, 5)]), e(&[(2, 5)]));
        assert_eq!(c(&[(0, 0), (1, 3), (2, 6)]), e(&[(0, 0), (1, 3), (2, 6)]));
    }
}
