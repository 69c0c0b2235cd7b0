// The Rust book's thread pool (ch. 21, "Turning Our Single-Threaded Server into a Multithreaded
// Server"): 4 worker threads pull boxed jobs from an Arc<Mutex<mpsc::Receiver<Job>>>. Each round
// main sends 6 jobs of 0.3 ms (line A, in the job closure), waits for their 6 completions on a
// second channel, then runs 0.5 ms itself (line B) and visits progress point `item`.
// 4 workers on 2 CPUs: 6 x 0.3 ms of jobs take ~0.9 ms, so a round is ~1.4 ms ->
// 0.86 (A) / 1.1 (B) ms at s=60%: A ~39%, B ~21% (natively a round takes ~1.7 ms: ~0.3 ms of
// hand-offs through the channels and the mutex, on neither line).
#[macro_use]
#[path = "rcommon.rs"]
mod rcommon;

use std::sync::{mpsc, Arc, Mutex};
use std::thread;

type Job = Box<dyn FnOnce() + Send + 'static>;

pub struct ThreadPool {
    workers: Vec<Worker>,
    sender: Option<mpsc::Sender<Job>>,
}

impl ThreadPool {
    /// Create a new ThreadPool with `size` threads.
    pub fn new(size: usize) -> ThreadPool {
        assert!(size > 0);
        let (sender, receiver) = mpsc::channel();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut workers = Vec::with_capacity(size);
        for id in 0..size {
            workers.push(Worker::new(id, Arc::clone(&receiver)));
        }
        ThreadPool { workers, sender: Some(sender) }
    }

    pub fn execute<F>(&self, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        let job = Box::new(f);
        self.sender.as_ref().unwrap().send(job).unwrap();
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        drop(self.sender.take());
        for worker in &mut self.workers {
            if let Some(thread) = worker.thread.take() {
                thread.join().unwrap();
            }
        }
    }
}

struct Worker {
    #[allow(dead_code)]
    id: usize,
    thread: Option<thread::JoinHandle<()>>,
}

impl Worker {
    fn new(id: usize, receiver: Arc<Mutex<mpsc::Receiver<Job>>>) -> Worker {
        let thread = thread::spawn(move || loop {
            // the guard is a temporary: the lock is released before the job runs
            let message = receiver.lock().unwrap().recv();
            match message {
                Ok(job) => job(),
                Err(_) => break,
            }
        });
        Worker { id, thread: Some(thread) }
    }
}

const JOBS_PER_ROUND: usize = 6;

fn main() {
    let args = rcommon::init();
    let rounds = args.n_or(870);
    let a_iters = rcommon::ms_iters(0.3, args.scale_a);
    let b_iters = rcommon::ms_iters(0.5, args.scale_b);
    let pool = ThreadPool::new(4);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let t0 = rcommon::now();

    for _ in 0..rounds {
        for _ in 0..JOBS_PER_ROUND {
            let done = done_tx.clone();
            pool.execute(move || {
                spin!(a_iters); // @line:A
                done.send(()).unwrap();
            });
        }
        for _ in 0..JOBS_PER_ROUND {
            done_rx.recv().unwrap();
        }
        spin!(b_iters); // @line:B
        rcommon::progress();
    }
    drop(pool); // joins the workers
    rcommon::print_elapsed(t0);
}
