// One producer (line A, 1 ms an item) and two consumers (line B, 1.5 ms an item each) sharing a
// Mutex<VecDeque<u64>> of capacity 4 with two Condvars (not_empty, not_full); each consumer visits
// progress point `item` per item. 3 threads on 2 CPUs: with ideal scheduling 2.5 ms of CPU an
// item on 2 CPUs would set the pace (1.25 ms; the producer alone allows 1 ms, the consumers
// 0.75 ms), but the kernel shares the CPUs 3 ways and the producer gets ~2/3 of one: ~1.5 ms an
// item natively. At s=60%: A -> max(0.4 / (2/3), 1.9 / 2) = 0.95 ms (~36%); B -> the consumers
// idle more, the producer runs alone at 1 ms an item (~33%).
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

const CAP: usize = 4;
const STOP: u64 = u64::MAX; // one per consumer, after the n items

struct Queue {
    items: Mutex<VecDeque<u64>>,
    not_empty: Condvar,
    not_full: Condvar,
}

impl Queue {
    fn put(&self, v: u64) {
        let mut q = self.items.lock().unwrap();
        while q.len() >= CAP {
            q = self.not_full.wait(q).unwrap();
        }
        q.push_back(v);
        drop(q);
        self.not_empty.notify_one();
    }

    fn take(&self) -> u64 {
        let mut q = self.items.lock().unwrap();
        while q.is_empty() {
            q = self.not_empty.wait(q).unwrap();
        }
        let v = q.pop_front().unwrap();
        drop(q);
        self.not_full.notify_one();
        v
    }
}

fn main() {
    let args = rcommon::init();
    let n = args.n_or(1000);
    let a_iters = rcommon::ms_iters(1.0, args.scale_a);
    let b_iters = rcommon::ms_iters(1.5, args.scale_b);
    let queue = Arc::new(Queue {
        items: Mutex::new(VecDeque::with_capacity(CAP)),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    });
    let t0 = rcommon::now();

    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut done = 0u64;
                while queue.take() != STOP {
                    spin!(b_iters); // @line:B
                    rcommon::progress();
                    done += 1;
                }
                done
            })
        })
        .collect();
    let producer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            for i in 0..n {
                spin!(a_iters); // @line:A
                queue.put(i);
            }
            for _ in 0..2 {
                queue.put(STOP);
            }
        })
    };
    producer.join().unwrap();
    let consumed: u64 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(consumed, n);
    rcommon::print_elapsed(t0);
}
