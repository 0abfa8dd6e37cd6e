//! The typed results of the analysis, all nameable from one place: the options and
//! per-partition reports of the per-partition stage (defined in `partition::results`), the
//! whole report of the cluster stage (`cluster::report`), and every type they hold.

pub use crate::cluster::report::ScanReport;
pub use crate::partition::results::*;

// The types the report structs hold, re-exported so that a user can name them (they are
// defined in internal modules).
pub use crate::cluster::leadership::RegisteredDirs;
pub use crate::discover::identity::NonLiveCounts;
pub use crate::discover::identity::{GivenClusterId, GivenClusterIdError};
pub use crate::partition::state::txnrec::{FirstTxnBatch, TxnEnd, TxnRecord};
pub use crate::partition::state::{
    AbortedTxn, LastActivity, LastEvent, OpenTxn, ProducerState, ReplayOptions, ReplayOutcome,
    TxnStats,
};

/// The cluster-wide transactions (`ScanReport::transactions`, `txns --cluster`): the types
/// of [`TxnAnalysis`](cluster_txns::TxnAnalysis).
pub mod cluster_txns {
    pub use crate::cluster::txns::end_version::Tv01Marker;
    pub use crate::cluster::txns::group::Grouping;
    pub use crate::cluster::txns::input::Domain;
    pub use crate::cluster::txns::stats::{
        ByTransactionalId, IdStats, LongTxn, PartitionStats, Sizes, TxnStatistics,
    };
    pub use crate::cluster::txns::{
        ClusterTxn, ClusterTxnPart, CoordinatorInfo, Outcome, Placed, Target, TxnAnalysis,
    };
}
