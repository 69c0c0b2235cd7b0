// Two std::threads sharing an Arc<Mutex<u64>>: each item is 0.8 ms of work outside the lock
// (line A) then 1.2 ms inside it, holding the guard (line B); one visit of progress point `item`
// per item, by either thread. The lock is busy 2 x 1.2 ms per 2 x 2 ms of thread work, so it is
// the bottleneck: A ~0%, B ~47% at s=60% (1.2 -> max(0.48, (0.8 + 0.48) / 2) ms an item).
// n is the item count per thread.
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let args = rcommon::init();
    let per_thread = args.n_or(625);
    let a_iters = rcommon::ms_iters(0.8, args.scale_a);
    let b_iters = rcommon::ms_iters(1.2, args.scale_b);
    let t0 = rcommon::now();

    let total = Arc::new(Mutex::new(0u64));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                for _ in 0..per_thread {
                    spin!(a_iters); // @line:A
                    let mut guard = total.lock().unwrap();
                    spin!(b_iters); // @line:B
                    *guard += 1;
                    drop(guard);
                    rcommon::progress();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(*total.lock().unwrap(), 2 * per_thread);
    rcommon::print_elapsed(t0);
}
