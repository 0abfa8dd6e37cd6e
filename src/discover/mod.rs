//! Stage 1, **discover**: what the inputs are. Finds partition directories under any mix of
//! broker log dirs, partition dirs, single files and archives ([`layout`], [`archive`]), and
//! where each piece of evidence comes from: its cluster, broker and log dir (`identity`).
//!
//! Imports: nothing of klogscan's but [`crate::read`] (to name file kinds) and the
//! shared leaves (`finding`, `escape`).

pub mod archive;
pub(crate) mod compaction;
pub mod layout;

crate::internal_mod! {
    mod identity;
}
