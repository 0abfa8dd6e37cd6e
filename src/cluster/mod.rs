//! Stage 4, **cluster**: rules over the typed per-partition results of many partitions and
//! brokers, joined within one cluster: the transaction coordinator's log ([`coordinator`]),
//! transactions across partitions (`txns`), replicas of one partition (`replicas`),
//! and the groups' checks across `__consumer_offsets` partitions (`groups`).
//!
//! Imports: the partition stage's results, the read and discover stages and the shared
//! leaves; never the renderers.

pub mod coordinator;
pub(crate) mod groups;
pub mod report;

crate::internal_mod! {
    mod replicas;
    mod txns;
}
