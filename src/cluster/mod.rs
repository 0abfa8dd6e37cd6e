//! Stage 4, **cluster**: rules over the typed per-partition results of many partitions and
//! brokers, joined within one cluster: the transaction coordinator's log ([`coordinator`]),
//! transactions across partitions (`txns`), replicas of one partition (`replicas`),
//! the groups' checks across `__consumer_offsets` partitions (`groups`), committed offsets
//! held against their partitions ([`consumers`]), one broker's log dirs holding one
//! partition twice (`duplicates`), or logs of two incarnations of one topic
//! (`topic_ids`), and tiered storage: the
//! `__remote_log_metadata` replay against each replica (`tiering`).
//!
//! Imports: the partition stage's results, the read and discover stages and the shared
//! leaves; never the renderers.

pub mod consumers;
pub mod coordinator;
pub(crate) mod groups;
pub mod leadership;
pub mod lost;
pub mod report;

crate::internal_mod! {
    mod duplicates;
    mod epoch_file;
    mod replicas;
    mod tiering;
    mod topic_ids;
    mod txns;
}
