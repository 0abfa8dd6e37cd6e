//! Stage 4, **cluster**: rules over the typed per-partition results of many partitions and
//! brokers, joined within one cluster: the transaction coordinator's log ([`coordinator`]),
//! transactions across partitions (`txns`), replicas of one partition (`replicas`),
//! consumer groups ([`groups`]), and what the inputs prove about compaction (`compaction`).
//!
//! Imports: [`crate::partition`]'s results (never its internals' state), [`crate::read`],
//! [`crate::discover`] and the shared leaves; never [`crate::report`].

pub(crate) mod compaction;
pub mod coordinator;
pub mod groups;
pub mod tiering;

crate::internal_mod! {
    mod replicas;
    mod txns;
}
