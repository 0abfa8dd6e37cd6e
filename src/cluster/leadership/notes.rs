//! What the metadata log says about itself: records that do not decode, record types or
//! versions this reader does not know, and metadata transactions the loader never applies.

use super::ClusterHistory;
use crate::finding::{Finding, Kind, Severity};
use serde::Serialize;

const TOPIC: &str = "__cluster_metadata";
/// At most this many undecodable records are reported one by one.
pub const MAX_UNDECODABLE: usize = 50;

#[derive(Serialize)]
struct UnknownEvidence<'a> {
    api_key: i16,
    version: i16,
    records: u64,
    metadata_log: &'a str,
}

#[derive(Serialize)]
struct TxnEvidence<'a> {
    begin_offset: Option<i64>,
    abort_offset: Option<i64>,
    records: usize,
    reason: &'a str,
    metadata_log: &'a str,
}

/// The findings of the metadata log itself, with the partition index they belong to.
pub(super) fn of_log(h: &ClusterHistory, meta: Option<usize>) -> Vec<(Option<usize>, Finding)> {
    let path = h.log.path.as_str();
    let mut out = Vec::new();
    for u in h.log.undecodable.iter().take(MAX_UNDECODABLE) {
        out.push(
            Finding::new(
                Kind::MetadataRecordUndecodable,
                TOPIC,
                0,
                format!(
                    "{}: the metadata record at offset {} does not decode ({}); the history goes on without it",
                    u.file, u.offset, u.reason
                ),
            )
            .offset(u.offset)
            .segment(u.file.clone())
            .evidence(serde_json::json!({
                "reason": u.reason,
                "metadata_log": path,
                "undecodable_records": h.log.undecodable.len(),
            }))
            .broker("the metadata loader hands the record to its fault handler (MetadataBatchLoader.loadBatch): a broker logs the fault and goes on, a controller stops")
            .remediation("inspect it with kafka-dump-log.sh --cluster-metadata-decoder; the leadership history may miss the change it held"),
        );
    }
    for ((api_key, version), n) in &h.log.unknown {
        out.push(
            Finding::new(
                Kind::MetadataRecordUnknown,
                TOPIC,
                0,
                format!(
                    "{n} metadata record(s) of type {api_key} version {version}, which this reader does not know, were kept raw and not replayed"
                ),
            )
            .evidence(
                serde_json::to_value(UnknownEvidence {
                    api_key: *api_key,
                    version: *version,
                    records: *n,
                    metadata_log: path,
                })
                .unwrap_or_default(),
            )
            .broker("a broker of a release that knows the type applies it; an older one fails to load it")
            .remediation("none needed unless the history looks incomplete: a newer klogscan may know the type"),
        );
    }
    for t in &h.history.dropped_txns {
        if t.abort.is_some() {
            continue;
        }
        out.push(txn_finding(
            h,
            Some(t.begin),
            None,
            t.records,
            "the metadata log ends inside a metadata transaction (KIP-868): its records are not applied",
        ));
    }
    for (offset, why) in &h.history.txn_errors {
        out.push(txn_finding(h, None, Some(*offset), 0, why).severity(Severity::Warning));
    }
    out.into_iter().map(|f| (meta, f)).collect()
}

fn txn_finding(
    h: &ClusterHistory,
    begin: Option<i64>,
    at: Option<i64>,
    records: usize,
    reason: &str,
) -> Finding {
    let offset = begin.or(at).unwrap_or(0);
    Finding::new(
        Kind::MetadataTransactionIncomplete,
        TOPIC,
        0,
        format!("metadata offset {offset}: {reason}"),
    )
    .offset(offset)
    .evidence(
        serde_json::to_value(TxnEvidence {
            begin_offset: begin,
            abort_offset: at,
            records,
            reason,
            metadata_log: &h.log.path,
        })
        .unwrap_or_default(),
    )
    .broker("the metadata loader publishes nothing of an open transaction (MetadataBatchLoader.maybeFlushBatches); a new active controller aborts it")
    .remediation("none: a controller that takes over writes the AbortTransactionRecord")
}
