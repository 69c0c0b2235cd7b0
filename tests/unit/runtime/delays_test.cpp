// Unit tests of delay accounting (runtime/delays): the invariants of the Coz paper §3.4 that keep
// virtual speedups honest. Runs the catch-up path on test threads with real (short) sleeps.
#include "delays/delays.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <string>
#include <thread>
#include <atomic>

#include "os/os.h"
#include "os/perf_event.h"
#include "threads/settle.h"

namespace whatif::delays {
namespace {

constexpr uint64_t kMs = 1000000;

void start_experiment(GlobalDelays& global, uint64_t delay_ns) {
  global.epoch_start_ns.store(global.global_ns.load());
  global.delay_size_ns.store(delay_ns);
  global.phase.store(static_cast<int>(Phase::kRunning));
}

/// Starts an experiment whose one selected sample, in another thread, delays the others by
/// `delay_ns`; `payer` pays it (catch_up). Returns the CPU time the pause took on this thread.
uint64_t cpu_of_paying(GlobalDelays& global, LocalDelays& payer, uint64_t delay_ns) {
  LocalDelays sampled;
  start_experiment(global, delay_ns);
  credit_selected_sample(global, sampled);
  uint64_t cpu = os::thread_cpu_ns();
  catch_up(global, payer);
  return os::thread_cpu_ns() - cpu;
}

TEST(Delays, SelectedSampleAdvancesOwnClockAndGlobalWithoutPausingItself) {
  GlobalDelays global;
  LocalDelays sampled;
  start_experiment(global, 2 * kMs);
  credit_selected_sample(global, sampled);
  EXPECT_EQ(sampled.local_ns.load(), 2 * kMs);
  EXPECT_EQ(global.global_ns.load(), 2 * kMs);
  catch_up(global, sampled);  // nothing owed: its own sample counts as its pause
  EXPECT_EQ(sampled.paused_ns.load(), 0u);
}

TEST(Delays, OtherThreadsPauseForTheDelayTheyOwe) {
  GlobalDelays global;
  LocalDelays sampled, other;
  start_experiment(global, 3 * kMs);
  credit_selected_sample(global, sampled);
  uint64_t start = os::monotonic_ns();
  catch_up(global, other);
  uint64_t paused = os::monotonic_ns() - start;
  EXPECT_GE(paused, 3 * kMs);
  EXPECT_EQ(other.local_ns.load(), 3 * kMs);
}

TEST(Delays, MinimalDelayRuleBothThreadsSampledNeitherPauses) {
  // §3.4.3: if every thread runs the selected line equally, no thread needs to pause.
  GlobalDelays global;
  LocalDelays a, b;
  start_experiment(global, 5 * kMs);
  credit_selected_sample(global, a);
  credit_selected_sample(global, b);
  EXPECT_EQ(global.global_ns.load(), 5 * kMs);  // raised to the max, not the sum
  catch_up(global, a);
  catch_up(global, b);
  EXPECT_EQ(a.paused_ns.load() + b.paused_ns.load(), 0u);
}

TEST(Delays, APausedThreadSpinsSoItKeepsItsCpuShareAndSleepsWhenAskedTo) {
  // A paused thread stands for a working one: spinning, it stays runnable and keeps the CPU share
  // that thread would have had, where a sleeper hands it to its siblings (more runnable threads
  // than CPUs then predicted 62% for a 50% effect). Paying on its return from a wait (catch_up),
  // only a thread that waits for a CPU (wall time per CPU time at least kSpinFromPermille) spins;
  // one paused in its work always does (next test). WHATIF_PAUSE=sleep (or a thread the timer
  // samples, in its handler) sleeps as Coz does.
  for (bool spin : {true, false}) {
    GlobalDelays global;
    global.spin_pauses.store(spin);
    global.oversubscribed.store(true);  // the program wants more CPUs than it has
    LocalDelays other;
    other.contention_permille.store(2000);
    uint64_t cpu = cpu_of_paying(global, other, 20 * kMs);
    EXPECT_GE(other.paused_ns.load(), 20 * kMs);
    if (spin) {
      EXPECT_GT(cpu, 2 * kMs) << "a spinning pause runs (on a busy machine, for its share of the 20 ms)";
    } else {
      EXPECT_LT(cpu, 2 * kMs) << "a sleeping pause takes no CPU";
    }
  }
  GlobalDelays global;
  global.oversubscribed.store(true);
  LocalDelays sampled, other, idle;
  other.contention_permille.store(2000);
  start_experiment(global, 20 * kMs);
  credit_selected_sample(global, sampled);
  uint64_t cpu = os::thread_cpu_ns();
  catch_up(global, idle);
  EXPECT_LT(os::thread_cpu_ns() - cpu, 2 * kMs) << "returning from a wait, a thread that never waits for a CPU sleeps: its CPU would idle";
  EXPECT_GE(idle.paused_ns.load(), 20 * kMs);
  cpu = os::thread_cpu_ns();
  BusyScope busy(other.busy);
  catch_up_held(global, other, /*keep_up=*/false, /*may_spin=*/false);
  EXPECT_LT(os::thread_cpu_ns() - cpu, 2 * kMs) << "may_spin=false sleeps even when pauses spin";
  // Nor does a thread that waits for a CPU spin while the program fits its CPUs: the waits are
  // then other processes', and a spinner would starve them (a server's load generator).
  GlobalDelays fits;
  LocalDelays waiting;
  waiting.contention_permille.store(2000);
  EXPECT_LT(cpu_of_paying(fits, waiting, 20 * kMs), 2 * kMs) << "a program that fits its CPUs sleeps";
}

TEST(Delays, AThreadPausedInItsWorkSpinsInAnOversubscribedProgramWhateverItsOwnFigure) {
  // Its own wall time per CPU time counts its earlier pauses, and a sleeping pause waits for no
  // CPU: gated on that figure, a stage of a 3-thread pipeline on 2 CPUs slept every pause, its CPU
  // idled, and its off-critical line came out at -12% to -24% for +3% to +6% (holdout semjthread B).
  // Returning from a wait to pay what accrued in it (catch_up), the figure still decides: see
  // APausedThreadSpinsSoItKeepsItsCpuShareAndSleepsWhenAskedTo.
  GlobalDelays global;
  global.oversubscribed.store(true);
  LocalDelays sampled, worker;  // contention_permille 1000: the figure says it never waits for a CPU
  start_experiment(global, 8 * kMs);  // short pauses: ctest runs CPU-time tests beside it
  credit_selected_sample(global, sampled);
  uint64_t cpu = os::thread_cpu_ns();
  {
    BusyScope busy(worker.busy);
    catch_up_held(global, worker, /*keep_up=*/false, /*may_spin=*/true, /*working=*/true);
  }
  EXPECT_GT(os::thread_cpu_ns() - cpu, 4 * kMs) << "a working thread's pause spins (its share of the 8 ms)";
  EXPECT_GE(worker.paused_ns.load(), 8 * kMs);

  // Its share is the larger of its figures: one that waited for a CPU in its last period, a burst
  // the windows average away, spins that period's share (a quarter of the 32 ms here), not more.
  LocalDelays bursting;
  bursting.burst_permille.store(4000);
  credit_selected_sample(global, sampled);
  credit_selected_sample(global, sampled);
  credit_selected_sample(global, sampled);
  credit_selected_sample(global, sampled);  // 32 ms, beside the 8 ms before
  credit_to_global(global, bursting);
  bursting.local_ns.fetch_sub(32 * kMs);
  cpu = os::thread_cpu_ns();
  {
    BusyScope busy(bursting.busy);
    catch_up_held(global, bursting, /*keep_up=*/false, /*may_spin=*/true, /*working=*/true);
  }
  EXPECT_GE(os::thread_cpu_ns() - cpu, 6 * kMs) << "a quarter of the 32 ms pause";
  EXPECT_LT(os::thread_cpu_ns() - cpu, 16 * kMs) << "the pause took more than its share of the CPU";
  EXPECT_GE(bursting.paused_ns.load(), 32 * kMs);

  GlobalDelays fits;  // nor does a working thread spin in a program that fits its CPUs
  LocalDelays sampled_there, fitting;
  start_experiment(fits, 20 * kMs);
  credit_selected_sample(fits, sampled_there);
  cpu = os::thread_cpu_ns();
  {
    BusyScope busy(fitting.busy);
    catch_up_held(fits, fitting, /*keep_up=*/false, /*may_spin=*/true, /*working=*/true);
  }
  EXPECT_LT(os::thread_cpu_ns() - cpu, 2 * kMs) << "a program that fits its CPUs sleeps";
}

TEST(Delays, ASpinningPauseTakesItsThreadsShareOfTheCpuNotTheWholePause) {
  // Bug: a pause spun for its wall length. It starts while its thread runs (in a sample's handler),
  // and one shorter than the scheduler's slice ran whole on its CPU: 16-27% more CPU time per ms
  // paused than the share of the working thread it stands for, so each pause took too much from
  // the program (twice as many threads as CPUs, two lines: 26.5% predicted for 32.4%). A thread
  // that gets an eighth of a CPU (8 ms of wall time per CPU-ms) spins an eighth of its pause in
  // CPU time, however the scheduler places it; the pause still stands for its whole length.
  GlobalDelays global;
  global.oversubscribed.store(true);
  LocalDelays other;
  other.contention_permille.store(8000);
  uint64_t cpu = cpu_of_paying(global, other, 80 * kMs);
  EXPECT_GE(cpu, 10 * kMs) << "an eighth of the 80 ms pause";
  EXPECT_LT(cpu, 15 * kMs) << "the pause took more than its thread's share of the CPU";
  EXPECT_GE(other.paused_ns.load(), 80 * kMs) << "it stands for the whole pause";
  EXPECT_EQ(other.local_ns.load(), 80 * kMs);
}

/// Samples `sampler` took since the last call.
std::size_t samples_taken(os::PerfSampler& sampler) {
  return sampler.drain([](const os::RawSample&) {});
}

TEST(Delays, ASpinningPauseIsNotSampled) {
  // Bug: a pause starts where its thread settles, at a sample, so a spin shorter than the sampling
  // period filled the next period and that sample landed in the line after the pause: the pauses'
  // CPU time went to the program's lines (16% more samples per item while they ran, most in the
  // unselected line). The thread's sampling events stop while it spins.
  os::PerfSampler sampler;
  int result = sampler.open(os::gettid(), kMs / 2, /*signal=*/0, /*wakeup_samples=*/1, /*with_stack=*/false);
  if (result != 0) GTEST_SKIP() << "perf_event_open(task-clock) failed here: " << std::strerror(-result);
  os::SamplingPause pause;
  pause.add(sampler.fd());
  ASSERT_EQ(sampler.enable(), 0);
  GlobalDelays global;
  global.oversubscribed.store(true);
  LocalDelays sampled, other;
  other.contention_permille.store(2000);
  other.sampling_pause = &pause;
  start_experiment(global, 40 * kMs);
  credit_selected_sample(global, sampled);
  samples_taken(sampler);
  os::spin_cpu_ns(5 * kMs);  // the thread's own work: about 10 samples
  catch_up(global, other);   // 20 ms of CPU spun: about 40 samples if they were taken
  std::size_t taken = samples_taken(sampler);
  EXPECT_GE(other.paused_ns.load(), 40 * kMs);
  EXPECT_GE(taken, 5u) << "the work before the pause is sampled";
  EXPECT_LE(taken, 15u) << "the pause's spin was sampled";
  os::spin_cpu_ns(5 * kMs);
  EXPECT_GE(samples_taken(sampler), 5u) << "sampling resumes after the pause";

  // The adaptive sampler's switch turns the events off (to the timer) while a pause spins: the
  // pause's end leaves them off. And a pause while they are meant to be off does not touch them.
  ASSERT_TRUE(pause.stop());
  pause.set_wanted(false);
  pause.resume();
  os::spin_cpu_ns(5 * kMs);
  EXPECT_LE(samples_taken(sampler), 1u) << "the end of a pause turned on events the switch had turned off";
  EXPECT_FALSE(pause.stop()) << "events meant to be off are not the pause's to stop";
}

TEST(Delays, StoppingAndRestartingTheSamplingEventsIsPartOfASpinningPause) {
  // Bug: a spinning pause spun its whole request after stopping the thread's events and restarted
  // them after it, and both cost the thread time the pause did not count: 15-20 us an event in this
  // nested VM, where each restart reprograms the CPU's timer. Threads that paused at every sample
  // then ran 3-4% slower in experiments than in baselines. The stop's time counts as spun and the
  // restart's is carried into the next pause.
  os::PerfSampler user, kernel;
  int result = user.open(os::gettid(), kMs, /*signal=*/0, /*wakeup_samples=*/1, /*with_stack=*/false);
  if (result != 0) GTEST_SKIP() << "perf_event_open(task-clock) failed here: " << std::strerror(-result);
  os::SamplingPause pause;
  pause.add(user.fd());
  if (kernel.open(os::gettid(), kMs, 0, 1, false, /*kernel_only=*/true) == 0) pause.add(kernel.fd());
  ASSERT_EQ(user.enable(), 0);
  GlobalDelays global;
  global.oversubscribed.store(true);
  LocalDelays sampled, other;
  other.contention_permille.store(2 * kNoContention);  // a CPU-ms stands for 2 ms of wall time
  other.sampling_pause = &pause;
  start_experiment(global, kMs / 5);
  uint64_t cpu_taken = 0, paid = 0;
  for (int i = 0; i < 50; ++i) {
    credit_selected_sample(global, sampled);
    const uint64_t before = os::thread_cpu_ns();
    catch_up(global, other);
    cpu_taken += os::thread_cpu_ns() - before;
    paid += kMs / 5;
  }
  // What the pauses took from the thread (in CPU time: half their wall time), less what is still
  // carried forward, is what they paid for (clock readings and the spin's last slice overshoot a
  // little: up to 5.4 us a pause under ASan in CI, so 10 us is allowed; before the fix the pauses
  // took 7.7-8.4 ms against this bound's 5.6).
  const uint64_t carried = other.excess_ns;
  EXPECT_LE(cpu_taken, (paid + carried) / 2 + 50 * 10000)
      << "pauses took " << cpu_taken << " ns of CPU for " << paid << " ns of wall time owed, " << carried
      << " carried forward";
}

TEST(Delays, OversleepIsCarriedIntoLaterPauses) {
  GlobalDelays global;
  LocalDelays sampled, other;
  start_experiment(global, kMs / 10);  // 100 µs: nanosleep oversleeps by tens of µs here
  uint64_t wall = 0;
  for (int i = 0; i < 50; ++i) {
    credit_selected_sample(global, sampled);
    const uint64_t before = os::monotonic_ns();
    catch_up(global, other);
    wall += os::monotonic_ns() - before;
  }
  uint64_t owed = 50 * (kMs / 10);
  EXPECT_EQ(other.local_ns.load(), owed);
  // Every oversleep is subtracted from later pauses: what was slept is at most what was owed plus
  // the excess still carried (without tracking it would be owed + 50 oversleeps).
  EXPECT_LE(other.paused_ns.load(), owed + other.excess_ns);
  // What the pauses took beside their sleeps counts as paid (count_sleeping_pause), so the sleeps
  // alone may fall short of the debt (by 5 us a pause in a loaded CI run); the pauses' wall time
  // may not. Asserting on the sleeps alone (> 90% of the debt) failed in CI.
  EXPECT_GE(wall, owed) << "slept " << other.paused_ns.load() << ", carried " << other.excess_ns;
}

/// The thread's timer slack in ns, as /proc/TID shows it to other threads.
long timer_slack_of(pid_t tid) {
  std::FILE* file = std::fopen(("/proc/" + std::to_string(tid) + "/timerslack_ns").c_str(), "r");
  if (file == nullptr) return -1;
  long slack = -1;
  if (std::fscanf(file, "%ld", &slack) != 1) slack = -1;
  std::fclose(file);
  return slack;
}

TEST(Delays, APauseSleepsWithoutTheThreadsTimerSlackAndGivesItBack) {
  // The default slack (50 us) lengthened every sleeping pause by that much, so pauses shorter than
  // the period paid about twice what they were asked for, at the wrong time.
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  long before = -1, after = -1;
  std::thread sleeper([&] {
    before = timer_slack_of(os::gettid());
    tid.store(os::gettid());
    os::sleep_ns(400 * kMs);
    after = timer_slack_of(os::gettid());
    done.store(true);
  });
  while (tid.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  long during = timer_slack_of(tid.load());
  sleeper.join();
  if (before < 0) GTEST_SKIP() << "/proc/TID/timerslack_ns is not readable here";
  EXPECT_GT(before, 1);
  EXPECT_EQ(during, 1) << "the slack while the pause sleeps";
  EXPECT_EQ(after, before) << "the program's own slack after it";
  EXPECT_TRUE(done.load());
}

/// Sets the process's runnable-thread count for a test and restores it after.
class RunnableCount {
 public:
  RunnableCount(int32_t live, int32_t cpus) : saved_(runnable_threads().live.load()), cpus_(runnable_threads().cpus) {
    runnable_threads().live.store(live);
    runnable_threads().cpus = cpus;
    runnable_threads().enabled = true;
    runnable_threads().note_change();  // the burst clock starts (or stays stopped)
  }
  ~RunnableCount() {
    runnable_threads().live.store(saved_);
    runnable_threads().note_change();
    runnable_threads().cpus = cpus_;
    runnable_threads().enabled = false;
    runnable_threads().burst_since_ns.store(0);
  }

 private:
  int32_t saved_;
  int32_t cpus_;
};

/// One burst reading of a thread that ran `cpu_ns` and then was off its CPU (not blocked) for `off_ns`.
uint32_t burst_after(LocalDelays& local, uint64_t cpu_ns, uint64_t off_ns) {
  start_burst(local);
  os::spin_cpu_ns(cpu_ns);
  os::sleep_ns(off_ns);  // as a wait for a CPU looks to the thread: time passes, its CPU time does not
  measure_burst(local);
  return local.burst_permille.load();
}

TEST(Delays, AThreadWaitingForACpuInABurstOfTheProgramsThreadsScalesItsSamples) {
  // Three runnable threads on two CPUs: a fan-out of tasks the 20-ms windows average away.
  RunnableCount three_on_two(3, 2);
  LocalDelays task;
  uint32_t permille = burst_after(task, 400000, 800000);
  EXPECT_GE(permille, 2500u) << "1.2 ms awake for 0.4 ms of CPU (more on a loaded machine)";
  GlobalDelays global;
  start_experiment(global, kMs / 2);
  EXPECT_EQ(credit_selected_sample(global, task), kMs / 2 * permille / 1000) << "a sample stands for its wall time";
}

TEST(Delays, InAnOversubscribedProgramASampleStandsForItsOwnPeriodsWallTime) {
  // Bug: a pool's main thread waited for a CPU while its tasks ran (the windows: 1.6 wall ms per CPU
  // ms), then ran its serial line alone; every sample of that line was scaled by 1.6.
  RunnableCount two_on_two(2, 2);  // the workers blocked now: no burst either
  GlobalDelays global;
  global.oversubscribed.store(true);
  start_experiment(global, kMs / 2);
  LocalDelays main_thread;
  main_thread.contention_permille.store(1600);
  EXPECT_EQ(credit_selected_sample(global, main_thread), kMs / 2 * 1600 / 1000)
      << "no reading of its own yet: the windows' figure";
  // Up to three readings: a neighbouring test that loads both CPUs can make the spin wait for one.
  uint32_t awake = 0;
  for (int attempt = 0; attempt < 3 && (attempt == 0 || awake >= 1300u); ++attempt) {
    start_burst(main_thread);
    os::spin_cpu_ns(400000);
    measure_burst(main_thread);
    awake = main_thread.awake_permille.load();
  }
  EXPECT_LT(awake, 1300u) << "it ran on its CPU the whole time";
  LocalDelays worker;
  worker.contention_permille.store(1000);
  EXPECT_GE(burst_after(worker, 400000, 800000), 1000u);
  EXPECT_GE(worker.awake_permille.load(), 2500u) << "1.2 ms awake for 0.4 ms of CPU";
  const uint64_t before = main_thread.local_ns.load();
  credit_selected_sample(global, main_thread);
  EXPECT_EQ(main_thread.local_ns.load() - before, kMs / 2 * awake / 1000) << "its own period's wall time";
  const uint64_t worker_before = worker.local_ns.load();
  credit_selected_sample(global, worker);
  EXPECT_EQ(worker.local_ns.load() - worker_before, kMs / 2 * worker.awake_permille.load() / 1000)
      << "a worker that waited for a CPU in its period: the wall time that took";
}

TEST(Delays, AThreadInABurstSpinsItsShareOfThePauseThoughTheProgramFitsOnAverage) {
  // The windows say the program fits its CPUs (oversubscribed off); this thread's last period says it
  // waited for a CPU among the program's own threads: it keeps its share, as in an oversubscribed
  // program, and spins a quarter of the pause at four times its CPU time in wall time.
  GlobalDelays global;
  LocalDelays task;
  task.burst_permille.store(4000);
  uint64_t cpu = cpu_of_paying(global, task, 40 * kMs);
  EXPECT_GE(cpu, 8 * kMs) << "a quarter of the 40 ms pause, spun";
  EXPECT_LT(cpu, 15 * kMs);
  EXPECT_GE(task.paused_ns.load(), 40 * kMs);
}

/// A working thread's pause (catch_up_held's `working`: its handler, a blocking or waking call, its
/// exit) of `delay_ns` raised by another thread's sample; returns the CPU time it took.
uint64_t cpu_of_working_pause(GlobalDelays& global, LocalDelays& payer, uint64_t delay_ns) {
  LocalDelays sampled;
  start_experiment(global, delay_ns);
  credit_selected_sample(global, sampled);
  const uint64_t cpu = os::thread_cpu_ns();
  BusyScope busy(payer.busy);
  catch_up_held(global, payer, /*keep_up=*/false, /*may_spin=*/true, /*working=*/true);
  return os::thread_cpu_ns() - cpu;
}

TEST(Delays, AWorkingThreadSpinsWhileMoreOfTheProgramsThreadsAreRunnableThanCpus) {
  // Bug: a main thread's serial line beside its three std::async tasks on two CPUs came out at +19%
  // for +10% (holdout futures B). The windows said the program fits its CPUs, and a task without a
  // burst figure of its own (it lives 1 ms) slept the pauses it paid at its exit and in its
  // handler: a task waiting for a CPU ran in them, and the virtual speedup erased that work as if
  // it cost nothing. Four runnable on two CPUs: a spin at half a CPU, half the pause in CPU time.
  {
    RunnableCount four_on_two(4, 2);
    GlobalDelays global;
    LocalDelays task;
    const uint64_t cpu = cpu_of_working_pause(global, task, 24 * kMs);
    EXPECT_GE(cpu, 9 * kMs) << "about half of the 24 ms pause, spun";
    EXPECT_LT(cpu, 16 * kMs);
    EXPECT_GE(task.paused_ns.load(), 24 * kMs);
    // Returning from a wait, a thread pays what accrued in it as before: a pipeline's woken stage
    // makes the burst itself, and spinning there lowered lines that fit their CPUs.
    GlobalDelays woken_global;
    LocalDelays woken;
    woken.burst_seen_ns = runnable_threads().burst_clock_ns() + 1000 * kMs;  // no CPU wait to absorb it
    EXPECT_LT(cpu_of_paying(woken_global, woken, 24 * kMs), 2 * kMs) << "a thread returning from a wait sleeps";
  }
  RunnableCount two_on_two(2, 2);
  GlobalDelays global;
  LocalDelays task;
  EXPECT_LT(cpu_of_working_pause(global, task, 24 * kMs), 2 * kMs) << "no thread waits for a CPU: the pause sleeps";
}

TEST(Delays, NoBurstWhileTheProgramFitsItsCpusOrTheThreadWasBlocked) {
  LocalDelays fits;
  {
    RunnableCount two_on_two(2, 2);
    EXPECT_EQ(burst_after(fits, 400000, 800000), 1000u) << "outside load is not the program's burst";
  }
  RunnableCount three_on_two(3, 2);
  LocalDelays blocked;
  start_burst(blocked);
  os::spin_cpu_ns(400000);
  mark_blocked(blocked);
  EXPECT_EQ(runnable_threads().blocked.load(), 1);
  os::sleep_ns(2 * kMs);
  GlobalDelays global;
  after_blocking(global, blocked, /*woken_by_thread=*/true);
  EXPECT_EQ(runnable_threads().blocked.load(), 0);
  measure_burst(blocked);
  EXPECT_LT(blocked.burst_permille.load(), 1200u) << "its 2 ms in a blocking call were not a wait for a CPU";
}

TEST(Delays, APauseOnTheReturnFromAWaitCountsItsCpuTimeAsWhatifs) {
  // Bug: only a pause in the handler or at a blocking or waking call counted its CPU time (system
  // calls, context switches) as whatif's; a thread woken into a debt counted it as the program's,
  // and raised the CPU bound of the experiment that paused it (experiment::delay_within_cpu_bound).
  GlobalDelays global;
  LocalDelays waker, sleeper;
  start_experiment(global, 4 * kMs);
  mark_blocked(sleeper);
  credit_selected_sample(global, waker);
  after_blocking(global, sleeper, /*woken_by_thread=*/false);
  EXPECT_GE(sleeper.paused_ns.load(), 4 * kMs);
  EXPECT_GT(global.paused_cpu_ns.load(), 0u) << "the sleep's system calls ran on the thread's CPU";
  EXPECT_LT(global.paused_cpu_ns.load(), 2 * kMs) << "its CPU time, not its sleep";
  const uint64_t counted = global.paused_cpu_ns.load();
  mark_blocked(sleeper);
  after_blocking(global, sleeper, /*woken_by_thread=*/false);
  EXPECT_EQ(global.paused_cpu_ns.load(), counted) << "nothing owed, no pause: nothing is whatif's";
}

TEST(Delays, TimeInSchedYieldIsNotAWaitForACpuInTheThreadsBurst) {
  // A thread that notified three workers on two CPUs, then waited for them in std::atomic::wait
  // (which calls sched_yield before it sleeps), sat behind them in its yields. Counted as awake, that
  // wait scaled the samples of the serial line it ran next, alone: 32-42% predicted for 24.6%.
  RunnableCount four_on_two(4, 2);
  LocalDelays notifier;
  // Up to three readings: a neighbouring test that loads both CPUs can make the spin wait for one
  // (under ctest -j2 it failed at times).
  for (int attempt = 0; attempt < 3; ++attempt) {
    start_burst(notifier);
    os::spin_cpu_ns(400000);
    before_yield(GlobalDelays{}, notifier, /*continues_loop=*/false);
    os::sleep_ns(2 * kMs);  // others ran meanwhile
    after_yield(notifier);
    measure_burst(notifier);
    if (notifier.burst_permille.load() < 1200u && notifier.awake_permille.load() < 1200u) break;
  }
  EXPECT_LT(notifier.burst_permille.load(), 1200u) << "its 2 ms in sched_yield were its choice, not its line's wait";
  EXPECT_LT(notifier.awake_permille.load(), 1200u);
}

/// The calling thread waits in a run queue for about `wall_ns`: it and a spinner share one CPU
/// (both pinned to it) while it spins for twice that in wall time. Returns its run-queue wait.
uint64_t wait_for_a_cpu(uint64_t wall_ns) {
  cpu_set_t saved;
  sched_getaffinity(0, sizeof(saved), &saved);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  sched_setaffinity(0, sizeof(one), &one);
  uint64_t before = 0, after = 0;
  os::own_run_queue_wait_ns(before);
  std::atomic<bool> done{false};
  std::thread spinner([&] {
    sched_setaffinity(0, sizeof(one), &one);
    while (!done.load()) {
    }
  });
  os::spin_ns(2 * wall_ns);
  done.store(true);
  spinner.join();
  sched_setaffinity(0, sizeof(saved), &saved);
  os::own_run_queue_wait_ns(after);
  return after - before;
}

/// A thread that owes `debt_ns` (another thread's selected sample), with its readings taken now.
void owe(GlobalDelays& global, LocalDelays& waiter, uint64_t debt_ns) {
  os::own_run_queue_wait_ns(waiter.wait_seen_ns);
  waiter.burst_seen_ns = runnable_threads().burst_clock_ns();
  LocalDelays sampled;
  start_experiment(global, debt_ns);
  credit_selected_sample(global, sampled);
}

TEST(Delays, AWaitForACpuInABurstOfTheProgramsThreadsPaysTheDebtItOverlaps) {
  uint64_t probe = 0;
  if (!os::own_run_queue_wait_ns(probe)) GTEST_SKIP() << "no /proc/thread-self/schedstat in this kernel";
  // A task queued behind two others that run the line (three runnable threads on two CPUs): its
  // wait is the fan-out's, shorter when the line is faster, so it pays nothing again.
  RunnableCount three_on_two(3, 2);
  GlobalDelays global;
  LocalDelays queued;
  owe(global, queued, 2 * kMs);
  uint64_t waited = wait_for_a_cpu(4 * kMs);
  ASSERT_GE(waited, 2 * kMs) << "the spinner did not take the CPU";
  catch_up(global, queued);
  EXPECT_EQ(queued.local_ns.load(), global.global_ns.load());
  EXPECT_EQ(queued.paused_ns.load(), 0u) << "its wait for a CPU paid the debt";
}

TEST(Delays, AWaitForACpuThatOtherProcessesCausedIsNoPayment) {
  uint64_t probe = 0;
  if (!os::own_run_queue_wait_ns(probe)) GTEST_SKIP() << "no /proc/thread-self/schedstat in this kernel";
  GlobalDelays global;
  LocalDelays waiter;
  {
    RunnableCount two_on_two(2, 2);  // the program fits: the spinner stands for another process
    owe(global, waiter, 2 * kMs);
    ASSERT_GE(wait_for_a_cpu(4 * kMs), 2 * kMs);
    catch_up(global, waiter);
  }
  EXPECT_GE(waiter.paused_ns.load(), 2 * kMs) << "a faster line would not have shortened that wait";
  LocalDelays crowded;
  {
    RunnableCount three_on_two(3, 2);
    global.oversubscribed.store(true);  // the windows' contention scaling covers every wait
    owe(global, crowded, 2 * kMs);
    ASSERT_GE(wait_for_a_cpu(4 * kMs), 2 * kMs);
    EXPECT_EQ(absorb_cpu_wait(global, crowded), 0u);
    global.oversubscribed.store(false);
  }
}

/// Runs `body` in a forked process (whose runtime globals it may move) and returns its exit code.
int in_forked_process(int (*body)()) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

/// A process tree's count: the root shares it, forks a child that counts from before fork,
/// and the child's threads leave it with the child, by its own exit path or (killed) the root's
/// cleanup. Exit code: 0, or the number of the first check that failed.
int tree_count_checks() {
  struct Shared {
    RunnableThreads count;
    RunnableTally child;
  };
  void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 100;
  auto* shared = new (memory) Shared;
  const int32_t own = runnable_threads().live.load();  // this process's threads counted so far
  share_runnable_threads(shared->count);
  if (shared->count.live.load() != own) return 1;
  for (bool leaves : {true, false}) {
    ThreadCreation creation = child_forking();
    if (shared->count.live.load() != own + 1) return 2;  // counted before the child first runs
    pid_t pid = fork();
    if (pid == 0) {
      LocalDelays forked;
      only_thread_after_fork(forked, shared->child, creation);
      thread_created();  // the child starts a thread of its own
      if (shared->count.live.load() != own + 2 || shared->child.live.load() != 2) _exit(3);
      if (leaves) leave_runnable_threads();  // its exit path; else killed before it
      _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
    if (leaves && shared->count.live.load() != own) return 5;
    if (!leaves && shared->count.live.load() != own + 2) return 6;  // until the root notices
    forget_runnable_threads(shared->child);                          // the root frees its slot
    if (shared->count.live.load() != own) return 7;
  }
  ThreadCreation failed = child_forking();
  child_not_forked(failed);
  return shared->count.live.load() == own ? 0 : 8;
}

TEST(Delays, AForkedChildsThreadsCountWithTheTreesUntilTheChildIsGone) {
  // Bug: each process counted its runnable threads on its own, and a child only once it ran: a
  // parent that forked a child per CPU and computed beside them was never a burst, and its line
  // came out at 0% for 20% (holdout forkwork B).
  EXPECT_EQ(in_forked_process(tree_count_checks), 0) << "the exit code names the check that failed";
}

TEST(Delays, ACreatedThreadCountsAsRunnableBeforeItFirstRuns) {
  RunnableCount two_on_two(2, 2);
  ThreadCreation creation = thread_created();
  EXPECT_TRUE(creation.counted);
  EXPECT_TRUE(runnable_threads().more_than_cpus()) << "queued, the third thread already makes the burst";
  LocalDelays child;
  thread_started(child, &creation);
  EXPECT_EQ(runnable_threads().live.load(), 3) << "counted once";
  EXPECT_EQ(child.burst_seen_ns, creation.burst_clock_ns) << "its readings start at its creation";
  thread_exited(child);
  ThreadCreation failed = thread_created();
  thread_not_started(failed);
  EXPECT_EQ(runnable_threads().live.load(), 2);
  EXPECT_FALSE(runnable_threads().more_than_cpus());
}

TEST(Delays, ThreadWokenByAnotherIsCreditedForDelaysWhileBlocked) {
  GlobalDelays global;
  LocalDelays waker;
  threads::ThreadState sleeper;  // blocks through the production path
  start_experiment(global, 4 * kMs);
  threads::before_blocking(global, sleeper);
  credit_selected_sample(global, waker);  // accrues while the sleeper is blocked
  after_blocking(global, sleeper.delays, /*woken_by_thread=*/true);
  EXPECT_EQ(sleeper.delays.paused_ns.load(), 0u);
  EXPECT_EQ(sleeper.delays.local_ns.load(), global.global_ns.load());
}

TEST(Delays, ACallToSchedYieldContinuesALoopOnlyRightAfterThePreviousOneReturned) {
  EXPECT_FALSE(continues_yield_loop(0, 5 * kMs)) << "the thread's first yield";
  EXPECT_TRUE(continues_yield_loop(5 * kMs, 5 * kMs + 200)) << "poll, yield again";
  EXPECT_TRUE(continues_yield_loop(5 * kMs, 5 * kMs + kYieldLoopGapNs - 1));
  EXPECT_FALSE(continues_yield_loop(5 * kMs, 5 * kMs + kYieldLoopGapNs)) << "work between courtesy yields";
  EXPECT_FALSE(continues_yield_loop(5 * kMs, 4 * kMs)) << "a clock that went backwards is no loop";
}

TEST(Delays, AThreadYieldingInALoopIsCreditedWhatAccruesWhileItWaitsOnly) {
  GlobalDelays global;
  LocalDelays sampled;
  threads::ThreadState waiter;  // yields through the production path
  start_experiment(global, 4 * kMs);
  credit_selected_sample(global, sampled);  // owed for its work, before it begins to wait
  threads::before_yield(global, waiter);
  EXPECT_TRUE(waiting_in_yield(waiter.delays, os::monotonic_ns())) << "inside sched_yield";
  after_yield(waiter.delays);
  EXPECT_EQ(waiter.delays.local_ns.load(), 4 * kMs);
  EXPECT_GE(waiter.delays.paused_ns.load(), 4 * kMs) << "a wait begins: what the thread owed is paid first";

  uint64_t paid = waiter.delays.paused_ns.load();
  credit_selected_sample(global, sampled);  // accrues while the waiter polls
  waiter.delays.yield_returned_ns.store(os::monotonic_ns());  // as if it had just returned (a loaded machine may preempt here)
  threads::before_yield(global, waiter);
  after_yield(waiter.delays);
  EXPECT_TRUE(waiting_in_yield(waiter.delays, os::monotonic_ns())) << "between two calls of a loop";
  EXPECT_EQ(waiter.delays.local_ns.load(), global.global_ns.load()) << "the loop waited for the other thread";
  EXPECT_EQ(waiter.delays.paused_ns.load(), paid) << "and paused for none of it";

  std::this_thread::sleep_for(std::chrono::nanoseconds(3 * kYieldLoopGapNs));  // works, then yields once
  EXPECT_FALSE(waiting_in_yield(waiter.delays, os::monotonic_ns())) << "working since its last yield";
  credit_selected_sample(global, sampled);
  // The first pause's oversleep is carried into this one (over 1 ms on a loaded machine: tests run
  // in parallel beside sanitizer builds): the pause plus what it carried is the 4 ms owed.
  uint64_t carried = waiter.delays.excess_ns;
  threads::before_yield(global, waiter);
  after_yield(waiter.delays);
  EXPECT_EQ(waiter.delays.local_ns.load(), global.global_ns.load());
  EXPECT_GE(waiter.delays.paused_ns.load() - paid + carried, 4 * kMs) << "a courtesy yield between work forgives nothing";
}

TEST(Delays, OwnSampleCreditedWhileBlockedIsNotCountedTwice) {
  // The profiler credits samples late: a thread's own sample can be credited while it is blocked.
  // Its wake-up must not add that raise again, or its clock runs ahead and drags the global one.
  GlobalDelays global;
  LocalDelays other;
  threads::ThreadState sleeper;  // blocks through the production path
  start_experiment(global, 4 * kMs);
  threads::before_blocking(global, sleeper);
  credit_selected_sample(global, sleeper.delays);  // its last sample before blocking, credited now
  after_blocking(global, sleeper.delays, /*woken_by_thread=*/true);
  EXPECT_EQ(sleeper.delays.local_ns.load(), global.global_ns.load());
  credit_selected_sample(global, sleeper.delays);
  EXPECT_EQ(global.global_ns.load(), 8 * kMs) << "two samples, two delays";
  catch_up(global, other);
  EXPECT_EQ(other.local_ns.load(), 8 * kMs);
  EXPECT_LE(other.paused_ns.load(), 8 * kMs + other.excess_ns) << "pauses what two samples owe, not more";
  EXPECT_GT(other.paused_ns.load(), 7 * kMs) << "less only the pause's own cost beside its sleep";
}

TEST(Delays, ThreadWokenByTimeoutOrIoExecutesDelaysAfterwards) {
  GlobalDelays global;
  LocalDelays waker;
  threads::ThreadState sleeper;  // blocks through the production path
  start_experiment(global, 4 * kMs);
  threads::before_blocking(global, sleeper);
  credit_selected_sample(global, waker);
  uint64_t start = os::monotonic_ns();
  after_blocking(global, sleeper.delays, /*woken_by_thread=*/false);
  EXPECT_GE(os::monotonic_ns() - start, 4 * kMs);
}

TEST(Delays, DebtsFromBeforeAnExperimentAreForgiven) {
  GlobalDelays global;
  LocalDelays sampled, late;
  start_experiment(global, 50 * kMs);
  credit_selected_sample(global, sampled);
  start_experiment(global, kMs);  // the next experiment starts before `late` caught up
  catch_up(global, late);
  EXPECT_EQ(late.paused_ns.load(), 0u) << "the 50 ms debt from the earlier experiment is forgiven";
  EXPECT_EQ(late.local_ns.load(), global.global_ns.load());
}

TEST(Delays, AThreadOutsideTheLineKeepsPausingWhileOthersRunIt) {
  // While another thread runs the selected line, the model freezes this one. Paying only the debt
  // seen before the pause let it run on for a sample period each time: a line run by both workers
  // of the demo predicted 98% at a 100% speedup for about 83%.
  // The margins are wide so that a loaded machine (tests run two at a time beside builds) cannot
  // reorder them: the other samples come 10-20 ms into a 100 ms pause (it used to be 0.1-0.5 ms
  // into a 20 ms one, and a test thread descheduled for longer failed it).
  for (bool keep_up : {false, true}) {
    GlobalDelays global;
    LocalDelays other;
    start_experiment(global, kMs);
    global.raise_to(100 * kMs);  // samples of the line elsewhere: a 100 ms pause
    std::thread line_runner([&global] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (int i = 101; i <= 105; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        global.raise_to(i * kMs);  // more samples while `other` pauses
      }
    });
    BusyScope busy(other.busy);
    catch_up_held(global, other, keep_up);
    line_runner.join();
    if (keep_up) {
      EXPECT_EQ(other.local_ns.load(), 105 * kMs) << "paused for everything that accrued while it paused";
    } else {
      EXPECT_EQ(other.local_ns.load(), 100 * kMs) << "without keep_up it pays only what it owed on entry";
    }
  }
}

TEST(Delays, NewThreadInheritsParentsClock) {
  GlobalDelays global;
  LocalDelays sampled, parent, child;
  start_experiment(global, 3 * kMs);
  credit_selected_sample(global, sampled);
  catch_up(global, parent);
  inherit(child, parent);
  catch_up(global, child);  // the parent's pause already delayed the child's creation
  EXPECT_EQ(child.paused_ns.load(), 0u);
}

TEST(Delays, ConcurrentCreditsNeverOvershootTheMaximum) {
  GlobalDelays global;
  start_experiment(global, 1000);
  constexpr int kThreads = 4, kSamples = 10000;
  LocalDelays locals[kThreads];
  std::vector<std::thread> threads;
  for (auto& local : locals) {
    threads.emplace_back([&global, &local] {
      for (int i = 0; i < kSamples; ++i) credit_selected_sample(global, local);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(global.global_ns.load(), uint64_t{kSamples} * 1000);
}

}  // namespace
}  // namespace whatif::delays
