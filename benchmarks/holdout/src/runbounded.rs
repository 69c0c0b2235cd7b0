// Two producer threads send items through an UNBOUNDED std::sync::mpsc::channel() to one consumer,
// the main thread. Each producer makes a fixed half of the items, 0.9 ms each (line A), sends
// them and exits; the consumer spends 0.7 ms on each item it receives (line B) and visits
// progress point `item` per item. Together the producers outpace the consumer, so a backlog grows
// in the channel and the consumer is never starved: the run ends when it has drained the backlog.
// 3 threads on 2 CPUs. Fair sharing (each runnable thread 2/3 of a CPU while the producers run):
// per item c + p/4 = 0.7 + 0.225 = 0.925 ms; s=60%: A (p 0.36) 0.79 (~15%); B (c 0.28, now the
// consumer keeps up and the producers get the CPUs) (0.9 + 0.28) / 2 = 0.59 (~36%).
// Ideal scheduling (consumer first): 0.8 -> 0.7 (A, ~12%) / 0.59 (B, ~26%).
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::sync::mpsc;
use std::thread;

fn main() {
    let args = rcommon::init();
    let n = args.n_or(1200);
    let per_producer = (n + 1) / 2;
    let a_iters = rcommon::ms_iters(0.9, args.scale_a);
    let b_iters = rcommon::ms_iters(0.7, args.scale_b);
    let t0 = rcommon::now();

    let (tx, rx) = mpsc::channel::<u64>();
    let mut producers = Vec::new();
    for p in 0..2u64 {
        let tx = tx.clone();
        producers.push(thread::spawn(move || {
            for i in 0..per_producer {
                spin!(a_iters); // @line:A
                tx.send(p * per_producer + i).expect("consumer hung up");
            }
        }));
    }
    drop(tx);

    let mut consumed: u64 = 0;
    let mut sum: u64 = 0;
    // recv() fails once both producers have exited and the channel is empty.
    while let Ok(v) = rx.recv() {
        spin!(b_iters); // @line:B
        sum += v;
        consumed += 1;
        rcommon::progress();
    }
    for p in producers {
        p.join().unwrap();
    }
    let total = 2 * per_producer;
    if consumed != total || sum != total * (total - 1) / 2 {
        eprintln!("consumed {} items (expected {})", consumed, total);
        std::process::exit(1);
    }
    rcommon::print_elapsed(t0);
}
