// One thread: compute 1 ms (line A), std::thread::sleep(800 us), compute 0.4 ms (line B), visit
// progress point `item`. ~2.25 ms an item (the sleep overshoots by ~50 us of timer slack):
// A ~27%, B ~11% at s=60%.
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::thread;
use std::time::Duration;

fn main() {
    let args = rcommon::init();
    let n = args.n_or(660);
    let a_iters = rcommon::ms_iters(1.0, args.scale_a);
    let b_iters = rcommon::ms_iters(0.4, args.scale_b);
    let t0 = rcommon::now();

    for _ in 0..n {
        spin!(a_iters); // @line:A
        thread::sleep(Duration::from_micros(800));
        spin!(b_iters); // @line:B
        rcommon::progress();
    }
    rcommon::print_elapsed(t0);
}
