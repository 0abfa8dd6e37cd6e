//! A finished remote segment's transaction index, against its metadata's `TxnIndexEmpty`
//! flag (`remote_txn_index_hidden`) and against the aborted transactions whose ABORT
//! markers the replay of the remote history read in the segment
//! (`remote_txn_index_incomplete`), and whether each of its entries ends at an ABORT marker
//! of its producer (`remote_txn_index_extra`). All decide what a read_committed fetch served from
//! remote storage filters: `RemoteLogManager.collectAbortedTransactions` takes the aborted
//! transactions from the fetched segment's index and the later segments'
//! (`RemoteLogMetadataCache.nextSegmentWithTxnIndex`), through `RemoteIndexCache`, which
//! holds an empty index for a segment whose index object is absent
//! (`RemoteResourceNotFoundException` at fetch).

use super::checks::SegmentEvidence;
use super::replay::{RemoteSegment, UserPartition};
use crate::finding::{Finding, Kind};
use crate::partition::state::AbortedTxn;
use crate::partition::state::txnrec::TxnRecord;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::index::TxnIndex;
use serde::Serialize;
use std::path::Path;

/// Bytes of one `.txnindex` entry (`AbortedTxn`: version, producer id, first, last and last
/// stable offsets).
pub(super) const ABORTED_TXN_BYTES: u64 = 34;

/// The largest `.txnindex` object read whole to compare its entries (a million entries;
/// a larger one is judged by nothing here).
pub(super) const MAX_TXN_INDEX_BYTES: u64 = 34 << 20;

#[derive(Serialize)]
struct HiddenTxnIndex {
    segment: SegmentEvidence,
    file: String,
    txn_index_bytes: u64,
    aborted_transactions: u64,
}

/// `remote_txn_index_hidden`: the segment's metadata says its transaction index is empty
/// (`TxnIndexEmpty`) while the `.txnindex` object at `file` holds at least one aborted
/// transaction. `RemoteLogManager.copyLogSegment` sets the flag from the local segment's
/// index (`segment.txnIndex().isEmpty()`), so the two disagree only when the metadata or
/// the object was written by something else. A read_committed fetch served from remote
/// storage collects the aborted transactions of the fetched segment from its own index,
/// then of the later segments `RemoteLogMetadataCache.nextSegmentWithTxnIndex` finds — which
/// passes over every segment flagged empty: an aborted transaction whose marker lies in this
/// segment is not filtered from a fetch of an earlier segment.
///
/// `bytes`: the index's size — the `.txnindex` object's in `LocalTieredStorage`'s layout,
/// what the `.rsm-manifest` at `file` states in the Aiven plugin's (whose `.indexes`
/// object holds every index of the segment); `what` names it in the message.
pub(super) fn hidden(
    up: &UserPartition,
    s: &RemoteSegment,
    file: &Path,
    bytes: u64,
    what: &str,
) -> Option<Finding> {
    if !s.txn_index_empty || bytes < ABORTED_TXN_BYTES {
        return None;
    }
    let aborted = bytes / ABORTED_TXN_BYTES;
    let msg = format!(
        "remote segment {} (offsets {}..={}) is flagged TxnIndexEmpty in its metadata, but its transaction index {what} holds {aborted} aborted transaction(s) ({bytes} bytes)",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset
    );
    let f = Finding::new(Kind::RemoteTxnIndexHidden, &up.topic, up.partition, msg)
        .offset(s.start_offset)
        .segment(file.display().to_string())
        .broker("RemoteLogManager collects a remote read_committed fetch's aborted transactions from the fetched segment's own index, then from the later segments RemoteLogMetadataCache.nextSegmentWithTxnIndex returns, which skips every segment whose metadata says TxnIndexEmpty: the aborted transactions whose markers lie in this segment are not filtered from fetches of the segments before it; RemoteLogManager.copyLogSegment sets the flag from the local segment's transaction index, so the metadata or the object was written by another tool or plugin")
        .client_error("read_committed consumer: no exception — records of aborted transactions are delivered as if committed when fetched from remote storage before this segment")
        .remediation("keep the objects and the __remote_log_metadata partitions as they are; find which tool or RemoteLogMetadataManager plugin wrote the metadata (the copying broker's is in the evidence); read_committed consumers of the affected range must be checked for aborted data they processed");
    Some(
        f.evidence(
            serde_json::to_value(HiddenTxnIndex {
                segment: SegmentEvidence::of(s),
                file: file.display().to_string(),
                txn_index_bytes: bytes,
                aborted_transactions: aborted,
            })
            .unwrap_or_default(),
        ),
    )
}

/// The aborted transactions the replay of a replica's remote history found (from its
/// [`crate::partition::state::ReplayOutcome::aborted`]), with the offsets that replay read
/// from remote segments: a segment outside them was not replayed, and nothing is expected
/// of its index.
#[derive(Debug, Clone, Copy)]
pub struct RemoteAborts<'a> {
    pub first_offset: i64,
    pub last_offset: i64,
    pub aborted: &'a [AbortedTxn],
    /// Every transaction that replay closed or left open, with its marker's offset and
    /// type ([`crate::partition::state::ReplayOutcome::txns`]).
    pub txns: &'a [TxnRecord],
}

impl RemoteAborts<'_> {
    /// The replay read all of `s`.
    fn covers(&self, s: &RemoteSegment) -> bool {
        self.first_offset <= s.start_offset && s.end_offset <= self.last_offset
    }

    /// The aborted transactions whose ABORT marker lies in `s`, when the replay read all
    /// of `s`; `None` when it did not.
    fn of(&self, s: &RemoteSegment) -> Option<Vec<&AbortedTxn>> {
        self.covers(s).then(|| {
            (self.aborted.iter())
                .filter(|a| (s.start_offset..=s.end_offset).contains(&a.last_offset))
                .collect()
        })
    }
}

/// The checks of a finished remote segment's transaction index against the replay of the
/// remote history, when that replay read the whole segment: `remote_txn_index_incomplete`
/// ([`incomplete`]), then `remote_txn_index_extra` ([`super::txn_extra::extra`]; entries of
/// an index object only — a count stated by a manifest names none). The object is read
/// once; one too large to read whole is judged by neither.
pub(super) fn judge(
    up: &UserPartition,
    s: &RemoteSegment,
    aborts: Option<&RemoteAborts<'_>>,
    held: IndexHeld<'_>,
) -> Vec<Finding> {
    let Some(aborts) = aborts.filter(|a| a.covers(s)) else {
        return Vec::new();
    };
    let (file, bytes) = match &held {
        IndexHeld::Object(Some(path)) => match read_small(path) {
            Some(b) => (Some(*path), Some(std::borrow::Cow::Owned(b))),
            None => return Vec::new(),
        },
        IndexHeld::Read(path, b) => (Some(*path), Some(std::borrow::Cow::Borrowed(&b[..]))),
        _ => (None, None),
    };
    let index = bytes.as_deref().map(|b| TxnIndex::new(b, s.start_offset));
    let mut out: Vec<Finding> = incomplete(up, s, aborts, &held, index.as_ref())
        .into_iter()
        .collect();
    if let (Some(path), Some(index)) = (file, &index) {
        out.extend(super::txn_extra::extra(up, s, aborts, path, index));
    }
    out
}

/// What a segment's transaction index holds, as far as it can be read.
pub(super) enum IndexHeld<'a> {
    /// The `.txnindex` object (`LocalTieredStorage`), or none.
    Object(Option<&'a Path>),
    /// The index's bytes as read from the Aiven plugin's `.indexes` object at the path
    /// (an unencrypted segment's, at the place its manifest states:
    /// [`super::aiven::read_txn_index`]).
    Read(&'a Path, Vec<u8>),
    /// The entries' number, from the size the Aiven plugin's manifest at the path states
    /// (`None`: the manifest has no transaction index).
    Counted(&'a Path, Option<u32>),
}

#[derive(Serialize)]
struct Incomplete {
    segment: SegmentEvidence,
    file: Option<String>,
    /// The aborted transactions the segment's markers end, as the replay read them.
    aborted_in_segment: Vec<Expected>,
    index_entries: Option<u64>,
    /// Those the index lacks (`LocalTieredStorage`'s layout: by producer and marker
    /// offset), or how many at least (the Aiven plugin's: by count).
    missing: Vec<Expected>,
    missing_count: usize,
}

#[derive(Serialize)]
struct Expected {
    producer_id: i64,
    first_offset: i64,
    last_offset: i64,
}

/// `remote_txn_index_incomplete`: the replay of the remote history read ABORT markers in
/// segment `s` that end transactions it knew open — each one an entry
/// `LogSegment.updateTxnIndex` appended to the local segment's index, which
/// `RemoteLogManager.copyLogSegment` uploads (`LogSegmentData.transactionIndex`) — and
/// the segment's index holds fewer: a read_committed fetch from remote storage is not told
/// those transactions aborted and delivers their records. The index's other entries are
/// [`super::txn_extra::extra`]'s (an entry at an ABORT marker of its producer whose
/// transaction began before the replayed history is one the replay cannot expect, and is
/// right). `index`: the object's entries, read by [`judge`].
fn incomplete(
    up: &UserPartition,
    s: &RemoteSegment,
    aborts: &RemoteAborts<'_>,
    held: &IndexHeld<'_>,
    index: Option<&TxnIndex<'_>>,
) -> Option<Finding> {
    let expected = aborts.of(s)?;
    if expected.is_empty() {
        return None;
    }
    let (file, entries, missing): (Option<&Path>, Option<u64>, Vec<&AbortedTxn>) = match *held {
        IndexHeld::Object(None) => (None, Some(0), expected.clone()),
        IndexHeld::Object(Some(path)) | IndexHeld::Read(path, _) => {
            let index = index?;
            // (a set: an index of many aborts would make a list's lookups quadratic)
            let has: std::collections::HashSet<(i64, i64)> = (index.entries())
                .map(|e| (e.producer_id, e.last_offset))
                .collect();
            let missing = (expected.iter().copied())
                .filter(|a| !has.contains(&(a.producer_id, a.last_offset)))
                .collect();
            (Some(path), Some(index.len() as u64), missing)
        }
        IndexHeld::Counted(manifest, size) => {
            let n = size.map_or(0, |b| u64::from(b) / ABORTED_TXN_BYTES);
            let short = expected.len().saturating_sub(n as usize);
            (Some(manifest), Some(n), expected[..short].to_vec())
        }
    };
    if missing.is_empty() {
        return None;
    }
    let counted = matches!(*held, IndexHeld::Counted(..));
    let list = |v: &[&AbortedTxn]| -> Vec<Expected> {
        (v.iter().take(super::corrupt::LISTED))
            .map(|a| Expected {
                producer_id: a.producer_id,
                first_offset: a.first_offset,
                last_offset: a.last_offset,
            })
            .collect()
    };
    let where_ = match (file, counted) {
        (None, _) => "has no transaction index object".to_string(),
        (Some(_), true) => format!(
            "has a transaction index of {} entr{} (as its manifest states it)",
            entries.unwrap_or(0),
            if entries == Some(1) { "y" } else { "ies" }
        ),
        (Some(_), false) => format!(
            "has a transaction index object of {} entr{}",
            entries.unwrap_or(0),
            if entries == Some(1) { "y" } else { "ies" }
        ),
    };
    let first = missing[0];
    let lacking = match counted {
        // By count, which of them the index lacks is not known.
        true => format!("at least {} of them are not in it", missing.len()),
        false => format!(
            "{} of them are not in it (first: producer {} from offset {}, aborted at {})",
            missing.len(),
            first.producer_id,
            first.first_offset,
            first.last_offset
        ),
    };
    let msg = format!(
        "remote segment {} (offsets {}..={}) holds the ABORT markers of {} aborted transaction(s) but {where_}: {lacking}",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset,
        expected.len(),
    );
    // By count, the finding stands at the segment's first aborted transaction's marker.
    let at = if counted {
        expected[0].last_offset
    } else {
        first.last_offset
    };
    let evidence = Incomplete {
        segment: SegmentEvidence::of(s),
        file: file.map(|f| f.display().to_string()),
        aborted_in_segment: list(&expected),
        index_entries: entries,
        missing: if counted { Vec::new() } else { list(&missing) },
        missing_count: missing.len(),
    };
    Some(
        Finding::new(Kind::RemoteTxnIndexIncomplete, &up.topic, up.partition, msg)
            .offset(at)
            .segment(file.map_or_else(|| encode_uuid(&s.id), |f| f.display().to_string()))
            .broker("RemoteLogManager.collectAbortedTransactions builds a remote read_committed fetch's aborted transactions from the remote segments' transaction indexes (RemoteIndexCache, which holds an empty index for a segment whose index object is absent); the transactions this index lacks are not among them, so their records are returned as committed to fetches served from remote storage (below the leader's local log start). RemoteLogManager.copyLogSegment uploads the local segment's index as it was: the local index was already short, or the object was replaced or lost")
            .client_error("read_committed consumer: no exception — records of the aborted transactions are delivered as if committed when fetched from remote storage")
            .remediation("keep the objects and the __remote_log_metadata partitions as they are; read_committed consumers that read this range from remote storage must be checked for the aborted data they processed (the producers and offsets are in the evidence); the index object can be rebuilt from the segment's markers only by the storage's owner, outside Kafka")
            .evidence(serde_json::to_value(evidence).unwrap_or_default()),
    )
}

/// The bytes of the object at `path`, when it is small enough to read whole.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let len = std::fs::metadata(path).ok()?.len();
    (len <= MAX_TXN_INDEX_BYTES).then(|| std::fs::read(path).ok())?
}
