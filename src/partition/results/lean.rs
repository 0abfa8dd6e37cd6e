//! [`Lean`]: a part of a partition's report kept out of line, and not at all while it is
//! empty.
//!
//! Every partition keeps its report to the end of the command, and most partitions of a
//! large cluster have nothing to say: no producer, no transaction, no cluster input
//! beyond their segment names. Inline, the replay outcome, the recovery plan and the
//! cluster inputs cost every report ≈ 650 bytes, empty or not; a `Lean` costs a null
//! pointer while its value equals the type's default, and the value plus one allocation
//! otherwise.

use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

/// A value of `T` behind one pointer, absent while it equals `T::default()`.
///
/// Reading (`Deref`) gives the value, or a shared default when absent; writing
/// (`DerefMut`) makes it present first. [`Lean::set`] and [`Lean::shrink`] drop a value
/// that is (again) the default.
#[derive(Clone, PartialEq)]
pub(crate) struct Lean<T: Empty>(Option<Box<T>>);

/// A type whose default value a [`Lean`] leaves out.
pub(crate) trait Empty: Default + PartialEq + Sized + 'static {
    /// The shared default value, what an absent [`Lean`] reads as.
    fn empty() -> &'static Self;
    /// Whether `self` is the default value.
    fn is_empty(&self) -> bool {
        self == Self::empty()
    }
}

/// Implements [`Empty`] for types with `Default + PartialEq + Sync`, each with its own
/// shared default.
macro_rules! empty_by_default {
    ($($t:ty),* $(,)?) => {$(
        impl Empty for $t {
            fn empty() -> &'static Self {
                static EMPTY: LazyLock<$t> = LazyLock::new(<$t>::default);
                &EMPTY
            }
        }
    )*};
}

empty_by_default!(
    crate::partition::state::ReplayOutcome,
    crate::partition::recovery::SegmentPlan,
    crate::partition::walked::ClusterInputs,
);

impl<T: Empty> Lean<T> {
    /// `value`, left out when it is the default.
    pub(crate) fn new(value: T) -> Self {
        Lean((!value.is_empty()).then(|| Box::new(value)))
    }
    /// Replace the value (left out when it is the default).
    pub(crate) fn set(&mut self, value: T) {
        *self = Lean::new(value);
    }
    /// The value, leaving the default in its place (nothing allocated).
    pub(crate) fn take(&mut self) -> T {
        self.0.take().map(|b| *b).unwrap_or_default()
    }
    /// The value to change in place, when present (an absent value is not made present).
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        self.0.as_deref_mut()
    }
    /// Drop the value if writes made it the default again.
    pub(crate) fn shrink(&mut self) {
        if self.0.as_deref().is_some_and(Empty::is_empty) {
            self.0 = None;
        }
    }
}

impl<T: Empty> Default for Lean<T> {
    fn default() -> Self {
        Lean(None)
    }
}

impl<T: Empty> From<T> for Lean<T> {
    fn from(value: T) -> Self {
        Lean::new(value)
    }
}

impl<T: Empty> Deref for Lean<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_deref().unwrap_or_else(|| T::empty())
    }
}

impl<T: Empty> DerefMut for Lean<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.0.get_or_insert_with(Default::default)
    }
}

impl<T: Empty + std::fmt::Debug> std::fmt::Debug for Lean<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::recovery::SegmentPlan;

    #[test]
    fn a_default_value_is_left_out_and_reads_as_the_default() {
        let mut l: Lean<SegmentPlan> = Lean::new(SegmentPlan::default());
        assert!(l.0.is_none());
        assert_eq!(*l, SegmentPlan::default());
        l.deleted.push("00000000000000000000.log".into());
        assert!(l.0.is_some(), "a write makes it present");
        assert_eq!(l.deleted, ["00000000000000000000.log"]);
        l.shrink();
        assert!(l.0.is_some(), "not the default: kept");
        l.deleted.clear();
        l.shrink();
        assert!(l.0.is_none(), "the default again: dropped");
    }

    #[test]
    fn take_and_set_move_the_value() {
        let plan = SegmentPlan {
            log_end_after: Some(7),
            ..Default::default()
        };
        let mut l = Lean::from(plan.clone());
        assert_eq!(l.take(), plan);
        assert!(l.0.is_none());
        assert_eq!(l.take(), SegmentPlan::default());
        l.set(plan.clone());
        assert_eq!(*l, plan);
        l.set(SegmentPlan::default());
        assert!(l.0.is_none());
    }
}
