//! The partition's walk runs ahead of its replay: units (segments or pieces) are handed to
//! the threads in file order while fewer than a bound of bytes and units are walked but not
//! yet replayed, and each is replayed as soon as it and every unit before it are walked.
//!
//! This replaced windows walked in lockstep with the replay (a `join` of "replay window
//! k" and "walk window k + 1"): with many small segments the thread that finished its half
//! first waited at every window's end, and 10 000 segments of 16 KiB left the second
//! thread idle ≈ 25 % of the time. The replay order, and so the output, is unchanged: one
//! unit after the other, in the order of the cursor.
//!
//! The replaying thread also walks: while the next unit is not walked yet it runs queued
//! walks itself ([`rayon::yield_local`]), and it blocks only when every queued walk is
//! running on another thread. A walk that panics is re-raised on the replaying thread (it
//! never leaves it waiting for a result that cannot come).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc;

/// What a unit's walk sends back: its sequence number and the walked unit (or the panic).
type Done<W> = (usize, std::thread::Result<W>);

/// Walk the units `next_unit` hands out (each with its size in bytes) with `walk`, in
/// parallel, and give each walked unit to `replay` in the order handed out. At most
/// `max_bytes` of units (but always at least one unit) and `max_units` units are walked
/// and not yet replayed at any time.
pub(super) fn walk_ahead<U, W>(
    max_bytes: u64,
    max_units: usize,
    mut next_unit: impl FnMut() -> Option<(U, u64)>,
    walk: impl Fn(U) -> W + Sync,
    mut replay: impl FnMut(W),
) where
    U: Send,
    W: Send,
{
    let walk = &walk;
    rayon::in_place_scope_fifo(|s| {
        let (tx, rx) = mpsc::channel::<Done<W>>();
        // Units handed out and not yet replayed, from the next one to replay: the size
        // and, once walked, the result.
        let mut pending: VecDeque<(u64, Option<W>)> = VecDeque::new();
        let mut in_flight = 0u64;
        let (mut handed, mut replayed) = (0usize, 0usize);
        let mut more = true;
        loop {
            while more
                && (pending.is_empty() || (in_flight < max_bytes && pending.len() < max_units))
            {
                let Some((unit, bytes)) = next_unit() else {
                    more = false;
                    break;
                };
                let (tx, seq) = (tx.clone(), handed);
                s.spawn_fifo(move |_| {
                    let walked = catch_unwind(AssertUnwindSafe(|| walk(unit)));
                    // The receiver lives until every unit handed out is received.
                    let _ = tx.send((seq, walked));
                });
                handed += 1;
                in_flight += bytes;
                pending.push_back((bytes, None));
            }
            if pending.is_empty() {
                break; // nothing handed out is left, and nothing more to hand out
            }
            while let Ok(done) = rx.try_recv() {
                store(&mut pending, replayed, done);
            }
            if let Some((bytes, Some(_))) = pending.front() {
                let bytes = *bytes;
                if let Some((_, Some(w))) = pending.pop_front() {
                    replay(w);
                }
                in_flight -= bytes;
                replayed += 1;
                continue;
            }
            // The next unit is not walked yet: walk a queued unit here, or wait for one
            // that another thread is walking.
            if !matches!(rayon::yield_local(), Some(rayon::Yield::Executed))
                && let Ok(done) = rx.recv()
            {
                store(&mut pending, replayed, done);
            }
        }
    });
}

/// Put a walked unit in its place among the pending ones (re-raising a walk's panic).
fn store<W>(pending: &mut VecDeque<(u64, Option<W>)>, replayed: usize, (seq, walked): Done<W>) {
    match walked {
        Ok(w) => {
            if let Some(slot) = pending.get_mut(seq - replayed) {
                slot.1 = Some(w);
            }
        }
        Err(panic) => resume_unwind(panic),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Units replayed in the order handed out, whatever the order the walks end in, on 1
    /// and 4 threads; never more than the bounds walked ahead of the replay.
    #[test]
    fn replays_in_order_within_the_bounds() {
        for threads in [1, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let walked = AtomicUsize::new(0);
                let mut seen = Vec::new();
                walk_ahead(
                    10,
                    3,
                    units(200, 4),
                    |u| {
                        // Later units finish first now and then.
                        if u % 7 == 0 {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                        walked.fetch_add(1, Ordering::SeqCst);
                        u
                    },
                    |u| {
                        let ahead = walked.load(Ordering::SeqCst) - seen.len();
                        assert!(ahead <= 3, "{ahead} units walked ahead");
                        seen.push(u);
                    },
                );
                assert_eq!(seen, (1..=200).collect::<Vec<u64>>(), "{threads} threads");
            });
        }
    }

    /// Units 1..=`n` of `bytes` bytes each, in order.
    fn units(n: u64, bytes: u64) -> impl FnMut() -> Option<(u64, u64)> {
        let mut next = 0;
        move || {
            next += 1;
            (next <= n).then_some((next, bytes))
        }
    }

    /// A unit larger than the byte bound still goes, alone; no unit: nothing to do.
    #[test]
    fn a_unit_over_the_byte_bound_is_walked_alone_and_none_is_nothing() {
        let walked = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let walk = |u| {
            walked.fetch_add(1, Ordering::SeqCst);
            u
        };
        walk_ahead(10, 8, units(3, 100), walk, |u| {
            assert_eq!(walked.load(Ordering::SeqCst), seen.len() + 1, "alone");
            seen.push(u);
        });
        assert_eq!(seen, [1, 2, 3]);
        walk_ahead(10, 8, || None::<(u8, u64)>, |u| u, |_| panic!("no unit"));
    }

    /// A panicking walk is re-raised where the replay runs, instead of a wait forever.
    #[test]
    fn a_panicking_walk_is_raised_not_waited_for() {
        let r = std::panic::catch_unwind(|| {
            walk_ahead(
                10,
                2,
                units(5, 1),
                |u| {
                    assert_ne!(u, 3, "walk of unit 3 fails");
                    u
                },
                |_| {},
            )
        });
        assert!(r.is_err());
    }
}
