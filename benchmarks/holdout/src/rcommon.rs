// Shared helpers for the Rust holdout programs (the Rust counterpart of common.h), standard
// library only. Included by each program with
//     #[macro_use]
//     #[path = "rcommon.rs"]
//     mod rcommon;
// Provides: argument parsing (scaleA=X scaleB=X n=N), iteration counts for the spin work, the
// spin! macro, the `item` progress point through the Coz ABI (looked up with dlsym), and timing.
#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::time::Instant;

/// Spin iterations per millisecond. Measured on this machine (session 29): 1e8 iterations of the
/// spin! loop take ~135 ms (1.35 ns per iteration, one dependent imul+add), the same as common.h's
/// SPIN, so 740,000 iterations ~ 1 ms.
pub const ITERS_PER_MS: f64 = 740_000.0;

/// Non-optimizable dependent LCG chain, as common.h's SPIN. A macro (not a function) so that,
/// with collapse_debuginfo, every instruction of the loop carries the line that invokes it.
/// Only built-in operators and asm! are used: a call of wrapping_mul or std::hint::black_box,
/// even inlined, leaves its instructions attributed to core's source files in the line table.
/// The operators wrap because the Makefile builds with -C overflow-checks=off (as opt-level=2
/// does by default); a build with overflow checks would panic on the first iteration.
#[collapse_debuginfo(yes)]
macro_rules! spin {
    ($iters:expr) => {{
        let spin_n: u64 = $iters;
        let mut spin_x: u64 = 0x9e3779b97f4a7c15;
        let mut spin_i: u64 = 0;
        while spin_i < spin_n {
            spin_x = spin_x * 6364136223846793005 + 1442695040888963407;
            unsafe { ::std::arch::asm!("/* {0} */", inout(reg) spin_x, options(nomem, nostack, preserves_flags)) };
            spin_i += 1;
        }
        unsafe { ::std::arch::asm!("/* {0} */", in(reg) spin_x, options(nomem, nostack, preserves_flags)) };
    }};
}

/// Command-line arguments: scaleA=X scaleB=X n=N, in any order.
pub struct Args {
    pub scale_a: f64,
    pub scale_b: f64,
    pub n: Option<u64>,
}

impl Args {
    /// The item count: n= if given (and > 0), else the program's default.
    pub fn n_or(&self, default: u64) -> u64 {
        self.n.unwrap_or(default)
    }
}

fn usage(arg: &str) -> ! {
    eprintln!("unknown argument {} (use scaleA=X scaleB=X n=N)", arg);
    std::process::exit(2);
}

/// Parses the arguments and looks up the progress counter; call once at the start of main.
pub fn init() -> Args {
    let mut args = Args { scale_a: 1.0, scale_b: 1.0, n: None };
    for arg in std::env::args().skip(1) {
        if let Some(v) = arg.strip_prefix("scaleA=") {
            args.scale_a = v.parse().unwrap_or_else(|_| usage(&arg));
        } else if let Some(v) = arg.strip_prefix("scaleB=") {
            args.scale_b = v.parse().unwrap_or_else(|_| usage(&arg));
        } else if let Some(v) = arg.strip_prefix("n=") {
            let n: u64 = v.parse().unwrap_or_else(|_| usage(&arg));
            args.n = if n > 0 { Some(n) } else { None };
        } else {
            usage(&arg);
        }
    }
    init_progress();
    args
}

/// Iterations for `ms` milliseconds of spin work at `scale`, computed once per program.
pub fn ms_iters(ms: f64, scale: f64) -> u64 {
    (ms * scale * ITERS_PER_MS) as u64
}

// ---- progress point `item`, Coz ABI (include/whatif.h) ----

const COZ_COUNTER_TYPE_THROUGHPUT: c_int = 1;

/// coz_counter_t: the visit count (incremented atomically), then a reserved word.
#[repr(C)]
struct CozCounter {
    count: AtomicUsize,
    backoff: usize,
}

type CozGetCounter = unsafe extern "C" fn(c_int, *const c_char) -> *mut CozCounter;

extern "C" {
    // glibc's libc.so.6 (>= 2.34) exports dlsym; RTLD_DEFAULT is the null handle.
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

static ITEM_COUNTER: AtomicPtr<CozCounter> = AtomicPtr::new(std::ptr::null_mut());

fn init_progress() {
    unsafe {
        let f = dlsym(std::ptr::null_mut(), c"_coz_get_counter".as_ptr());
        if !f.is_null() {
            let get: CozGetCounter = std::mem::transmute(f);
            let c = get(COZ_COUNTER_TYPE_THROUGHPUT, c"item".as_ptr());
            ITEM_COUNTER.store(c, Ordering::Release);
        }
    }
}

/// True when a profiler's _coz_get_counter gave a counter for `item`.
pub fn progress_enabled() -> bool {
    !ITEM_COUNTER.load(Ordering::Acquire).is_null()
}

/// One visit of progress point `item` (a no-op without a profiler).
#[inline]
pub fn progress() {
    let c = ITEM_COUNTER.load(Ordering::Relaxed);
    if !c.is_null() {
        unsafe { (*c).count.fetch_add(1, Ordering::Relaxed) };
    }
}

// ---- timing ----

/// Start of the work region.
pub fn now() -> Instant {
    Instant::now()
}

/// Prints the work region's wall time as `elapsed_ns=NNN`.
pub fn print_elapsed(t0: Instant) {
    println!("elapsed_ns={}", t0.elapsed().as_nanos());
}
