// Short-lived scoped threads. Each round std::thread::scope spawns 2 fresh threads that each run
// 1 ms (line A, the same line in both); main does nothing in the scope and waits for them at its
// end (std's implicit wait for scoped threads, not an explicit join), then runs 0.7 ms itself
// (line B) and visits progress point `item` once per round. Strictly serial phases:
// 1.7 ms a round -> 1.1 (A) / 1.28 (B) ms at s=60%: A ~35%, B ~25%.
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::thread;

fn main() {
    let args = rcommon::init();
    let rounds = args.n_or(780);
    let a_iters = rcommon::ms_iters(1.0, args.scale_a);
    let b_iters = rcommon::ms_iters(0.7, args.scale_b);
    let t0 = rcommon::now();

    for _ in 0..rounds {
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    spin!(a_iters); // @line:A
                });
            }
        });
        spin!(b_iters); // @line:B
        rcommon::progress();
    }
    rcommon::print_elapsed(t0);
}
