//! The coordinator keep budget shared by a partition's walks ([`KeepBudget`]).

use super::*;

fn txn_collector(keep: u64) -> Collector {
    Collector::new(TRANSACTION_STATE_TOPIC, false, 0).keep_at_most(keep)
}

#[test]
fn each_walk_starts_with_what_the_budget_has_left() {
    let budget = KeepBudget::new(100);
    // Two segments walked at once, both before either is taken in: the whole budget each.
    let (mut a, mut b) = (
        txn_collector(budget.remaining()),
        txn_collector(budget.remaining()),
    );
    assert!(a.keep.add(60) && b.keep.add(50));
    budget.take(&mut a);
    assert!(!a.keep.dropped);
    assert_eq!(budget.remaining(), 40);
    // Taken in after `a`, `b` goes past the budget: dropped, and so is the partition.
    budget.take(&mut b);
    assert!(b.keep.dropped);
    assert_eq!(budget.remaining(), 0);
    // A walk starting now keeps nothing: its first record drops it.
    let mut c = txn_collector(budget.remaining());
    assert_eq!(c.room(), 0);
    assert!(!c.keep.add(1));
    // Even an empty collection taken in after the drop leaves nothing.
    let mut d = txn_collector(0);
    budget.take(&mut d);
    assert_eq!(budget.remaining(), 0);
}

#[test]
fn a_walk_within_the_budget_keeps_its_records() {
    let budget = KeepBudget::new(100);
    let mut a = txn_collector(budget.remaining());
    assert!(a.keep.add(100));
    budget.take(&mut a);
    assert!(!a.keep.dropped);
    assert_eq!(budget.remaining(), 0);
    // A later piece of the same segment appended past the collector's own limit drops it.
    let mut whole = txn_collector(30);
    let mut piece = txn_collector(30);
    assert!(piece.keep.add(20));
    whole.append(piece);
    assert_eq!(whole.room(), 10);
    let mut piece = txn_collector(30);
    assert!(piece.keep.add(20));
    whole.append(piece);
    assert!(whole.keep.dropped);
    assert_eq!(whole.room(), 0);
}
