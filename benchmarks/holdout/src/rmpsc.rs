// Two-stage pipeline, one std::thread per stage, handing items through a bounded
// std::sync::mpsc::sync_channel(4). Stage 1 (line A, 1.4 ms/item) produces, stage 2 (line B,
// 2 ms/item) consumes and visits progress point `item` per item. Stage 2 is the bottleneck:
// A ~0%, B ~30% at s=60% (2 -> max(1.4, 0.8) ms an item).
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::sync::mpsc;
use std::thread;

fn main() {
    let args = rcommon::init();
    let n = args.n_or(750);
    let a_iters = rcommon::ms_iters(1.4, args.scale_a);
    let b_iters = rcommon::ms_iters(2.0, args.scale_b);
    let t0 = rcommon::now();

    let (tx, rx) = mpsc::sync_channel::<u64>(4);
    let stage1 = thread::spawn(move || {
        for i in 0..n {
            spin!(a_iters); // @line:A
            tx.send(i).expect("stage 2 hung up");
        }
    });
    let stage2 = thread::spawn(move || {
        for _ in 0..n {
            rx.recv().expect("stage 1 hung up");
            spin!(b_iters); // @line:B
            rcommon::progress();
        }
    });
    stage1.join().unwrap();
    stage2.join().unwrap();
    rcommon::print_elapsed(t0);
}
