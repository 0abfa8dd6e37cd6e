//! Stage 3, **partition**: everything decided from one partition directory alone. The walk
//! of each segment once ([`scan`]), the events it yields (`event`), the producer-state
//! replay as a leader rebuilds it (`state`), the leader-epoch cache as the append path
//! builds it (`epochs`), the recovery model of a broker's log loader (`recovery`), the
//! replay of a `__consumer_offsets` partition as the group coordinator loads it
//! ([`groups`]), what the walk keeps for the cluster stage ([`walked`]), the events a
//! report's timeline draws ([`timeline`]), and the per-partition cause links (`causes`).
//!
//! Imports: the read and discover stages and the shared leaves (`finding`, `escape`); never
//! the cluster stage or the renderers. A rule that needs one partition's
//! bytes goes here; a rule that needs two partitions, a coordinator or a group goes to the
//! cluster stage.

pub(crate) mod causes;
pub(crate) mod epochs;
pub mod groups;
pub mod remote;
pub mod results;
pub mod scan;
pub(crate) mod share_state;
pub mod timeline;
pub mod walked;

crate::internal_mod! {
    mod event;
    mod recovery;
    mod state;
}
