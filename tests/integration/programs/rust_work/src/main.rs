// A Rust program for the integration tests: two threads run an LCG whose arithmetic is the standard
// library's inlined wrapping_mul/wrapping_add (DWARF puts those instructions in /rustc/<hash>/library/
// core/...), with a Coz throughput progress point per round. The runtime is reached through the Coz
// ABI declared here (include/whatif.h's _coz_get_counter), so the test needs no crate from crates.io.
// Usage: rust_work [milliseconds=1500]. Prints the rounds done.
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[repr(C)]
struct CozCounter {
    count: AtomicUsize,
    backoff: usize,
}

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

type GetCounter = unsafe extern "C" fn(c_int, *const c_char) -> *mut CozCounter;

/// The runtime's counter for a throughput point, or None when no profiler is loaded.
fn progress_counter(name: &'static [u8]) -> Option<&'static CozCounter> {
    // RTLD_DEFAULT is the null handle on glibc.
    let symbol = unsafe { dlsym(std::ptr::null_mut(), b"_coz_get_counter\0".as_ptr() as *const c_char) };
    if symbol.is_null() {
        return None;
    }
    let get: GetCounter = unsafe { std::mem::transmute(symbol) };
    let counter = unsafe { get(1, name.as_ptr() as *const c_char) };
    unsafe { counter.as_ref() }
}

/// Keeps the optimiser from folding the loop (std::hint::black_box needs Rust 1.66; Debian 12 has 1.63).
#[inline(always)]
fn opaque(value: &mut u64) {
    unsafe { std::arch::asm!("/* {0} */", inout(reg) *value) };
}

#[inline(never)]
fn mix(mut acc: u64, rounds: u64) -> u64 {
    for _ in 0..rounds { /* @rust-loop */
        acc = acc.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); /* @rust-hot */
        opaque(&mut acc);
    }
    acc
}

#[inline(never)]
fn light(mut acc: u64, rounds: u64) -> u64 {
    for _ in 0..rounds {
        acc = acc.rotate_left(7).wrapping_mul(2862933555777941757); /* @rust-light */
        opaque(&mut acc);
    }
    acc
}

fn main() {
    let millis: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1500);
    let deadline = Instant::now() + Duration::from_millis(millis);
    let counter = progress_counter(b"round\0");
    let workers: Vec<_> = (1..=2u64)
        .map(|seed| {
            std::thread::spawn(move || {
                let mut acc = seed;
                let mut rounds = 0u64;
                while Instant::now() < deadline {
                    acc = light(mix(acc, 200_000), 60_000);
                    rounds += 1;
                    if let Some(c) = counter {
                        c.count.fetch_add(1, Ordering::Relaxed);
                    }
                }
                (rounds, acc)
            })
        })
        .collect();
    let mut total = 0;
    let mut sink = 0;
    for worker in workers {
        let (rounds, acc) = worker.join().unwrap();
        total += rounds;
        sink ^= acc;
    }
    println!("rounds={} sink={}", total, sink & 1);
}
