//! The group coordinator's state rebuilt offline from `__consumer_offsets`, like its load
//! (Kafka 4.x `GroupCoordinatorShard.replay`): per group its type (classic, consumer,
//! share, streams), epochs, members, target assignment, topology, offsets, KIP-1331
//! description epochs, and whether it is live or deleted ([`replay`], [`model`]); the
//! findings of that load ([`check`]); reading the partitions of an inventory and feeding
//! the scan's cluster check (`load`).

pub mod check;
mod expiry;
pub(crate) mod load;
pub mod model;
pub(crate) mod release;
pub mod render;
pub mod replay;
mod values;

pub use load::{GroupsOptions, list_groups, list_groups_read, replay_partition_dir};

pub use model::{Group, GroupState, GroupType};
pub use replay::{Input, Replay};
