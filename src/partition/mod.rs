//! Stage 3, **partition**: everything decided from one partition directory alone. The walk
//! of each segment once ([`scan`]), the events it yields (`event`), the producer-state
//! replay as a leader rebuilds it (`state`), the recovery model of a broker's log loader
//! (`recovery`), the cross-examination of a partition's other files ([`verify`]), what the
//! walk keeps for the cluster stage ([`walked`]), and the per-partition cause links
//! (`causes`).
//!
//! Imports: [`crate::read`], [`crate::discover`] and the shared leaves (`finding`, `results`,
//! `escape`); never [`crate::cluster`] or [`crate::report`]. A rule that needs one partition's
//! bytes goes here; a rule that needs two partitions, a coordinator or a group goes to the
//! cluster stage.

pub(crate) mod causes;
pub mod scan;
pub mod verify;
pub mod walked;

crate::internal_mod! {
    mod event;
    mod recovery;
    mod state;
}
