// Function-level counters: name resolution and calibration at start-up (initialising thread), the
// -finstrument-functions hooks (application threads; a thread's first selected call allocates its
// ThreadCounters and opens its events, later calls neither allocate nor lock), totals for the profiler.
#include "fncounters/function_counters.h"

#include <link.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "fncounters/entry_patch.h"
#include "os/memory.h"
#include "os/os.h"
#include "symbols/function_index.h"
#include "symbols/interner.h"

namespace whatif::fncounters {
namespace {

constexpr uint32_t kCalibrationId = kMaxFunctions;
constexpr int kCalibrationPairs = 2000;
constexpr int kCalibrationBatches = 7;

thread_local ThreadCounters* t_counters __attribute__((tls_model("initial-exec"))) = nullptr;

/// Never called by the program: its address is the calibration target's key.
__attribute__((noinline)) void calibration_target() { asm volatile(""); }

uint64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t hash(uintptr_t address) { return (static_cast<uint64_t>(address) >> 2) * 0x9E3779B97F4A7C15ull; }

struct Object {
  std::string path;
  uintptr_t bias;
};

/// The loaded objects whose functions the user may name: the program and libraries outside the
/// system directories (system libraries are not built with -finstrument-functions).
std::vector<Object> candidate_objects() {
  std::vector<Object> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* raw) {
        auto* out = static_cast<std::vector<Object>*>(raw);
        std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.empty()) {
          if (!out->empty()) return 0;  // the vDSO on some systems
          name = os::executable_path();
          if (name.empty()) return 0;
        }
        for (const char* prefix : {"/lib", "/usr/lib", "linux-vdso"}) {
          if (name.rfind(prefix, 0) == 0) return 0;
        }
        if (name.find("libwhatif") != std::string::npos) return 0;
        out->push_back({name, static_cast<uintptr_t>(info->dlpi_addr)});
        return 0;
      },
      &objects);
  return objects;
}

bool names_function(std::string_view symbol, const std::string& wanted) {
  if (symbol == wanted) return true;
  return symbol.size() > wanted.size() && symbol.substr(0, wanted.size()) == wanted && symbol[wanted.size()] == '(';
}

}  // namespace

void FunctionCounters::Set::insert(uintptr_t address, uint32_t id) {
  for (uint64_t slot = hash(address) & mask;; slot = (slot + 1) & mask) {
    if (keys[slot] == address) return;
    if (keys[slot] == 0) {
      keys[slot] = address;
      ids[slot] = id;
      return;
    }
  }
}

void FunctionCounters::start(const std::vector<std::string>& functions, const std::vector<EventSpec>& events,
                             std::vector<std::string>& warnings, uint32_t cycle, bool rdpmc, bool live_patch) {
  rdpmc_ = rdpmc;
  live_patch_ = live_patch;
  std::size_t found = publish(ids_for(functions, warnings), warnings);
  if (found > 0) publish_events(events, cycle, warnings);
  // Programs built with -fpatchable-function-entry: the selected functions' entry NOPs become calls
  // to the trampoline; unselected ones keep their NOPs.
  int threads = os::thread_count();
  sync_patches(threads == 1, warnings);
}

void FunctionCounters::sync_patches(bool only_thread, std::vector<std::string>& warnings) {
  std::vector<std::pair<uintptr_t, uint32_t>> wanted;  // (entry NOPs, function id)
  for (const auto& [address, id] : resolved_) {
    if (id == kCalibrationId) continue;
    if (int offset = patchable_entry_offset(reinterpret_cast<const uint8_t*>(address)); offset >= 0) {
      wanted.emplace_back(address + static_cast<uintptr_t>(offset), id);
    }
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               wanted.end());
  std::vector<uintptr_t> patched = patched_entries();
  for (const auto& [entry, id] : wanted) {
    if (std::binary_search(patched.begin(), patched.end(), entry)) continue;
    std::string why = patch_entry(entry, this, only_thread, live_patch_);
    if (!why.empty()) {
      warnings.push_back("--counters: the -fpatchable-function-entry entry of " + names_[id] + " is not patched (" +
                         why + "): it is not counted; build with -finstrument-functions instead");
    }
  }
  // Functions no longer selected get their NOPs back (a start-up fallback entry stays patched: its
  // hook finds the function unselected and returns).
  for (uintptr_t entry : patched) {
    auto it = std::lower_bound(wanted.begin(), wanted.end(), std::make_pair(entry, uint32_t{0}));
    if (it == wanted.end() || it->first != entry) unpatch_entry(entry);
  }
}

void FunctionCounters::publish_events(const std::vector<EventSpec>& events, uint32_t cycle,
                                      std::vector<std::string>& warnings) {
  auto config = std::make_unique<EventConfig>();
  config->set.fill(-1);
  config->cycle = cycle == 0 ? 1 : cycle;
  for (const EventSpec& event : events) {
    // An event the run counted before keeps its index (and its totals); a new one is appended.
    std::size_t e = 0;
    while (e < event_count_ && !(specs_[e].name == event.name && specs_[e].encoding.type == event.encoding.type &&
                                 specs_[e].encoding.config == event.encoding.config &&
                                 specs_[e].encoding.config1 == event.encoding.config1 &&
                                 specs_[e].encoding.config2 == event.encoding.config2)) {
      ++e;
    }
    if (e == event_count_) {
      if (event_count_ == kMaxEvents) {
        warnings.push_back("--counters: more than " + std::to_string(kMaxEvents) + " events in this run; ignoring " +
                           event.name + " (name at most " + std::to_string(kMaxEvents) +
                           " distinct events over the start and every reload)");
        continue;
      }
      specs_[event_count_++] = event;
      // Counted from a reload on: only in the calls after it.
      if (config_.load(std::memory_order_relaxed) != nullptr) partial_[e] = true;
    }
    config->active[e] = true;
    config->set[e] = event.set;
    if (event.set >= 0) partial_[e] = true;
    config->set_count = std::max(config->set_count, event.set + 1);
  }
  config->count = event_count_;
  if (const EventConfig* previous = config_.load(std::memory_order_relaxed)) {
    for (std::size_t e = 0; e < previous->count; ++e) {
      if (previous->active[e] && !config->active[e]) partial_[e] = true;  // dropped: counted until now only
    }
  }
  calibrate(*config);
  config->cycling = config->set_count > 1;
  config_.store(config.get(), std::memory_order_release);  // pairs with adopt()'s acquire
  configs_.push_back(std::move(config));  // the old ones stay: threads may count with them until their next call
}

std::vector<uint32_t> FunctionCounters::ids_for(const std::vector<std::string>& functions,
                                                std::vector<std::string>& warnings) {
  std::vector<uint32_t> ids;
  for (const std::string& name : functions) {
    auto known = std::find(names_.begin(), names_.end(), name);
    if (known != names_.end()) {
      ids.push_back(static_cast<uint32_t>(known - names_.begin()));
      continue;
    }
    if (names_.size() == kMaxFunctions) {
      warnings.push_back("--counters: more than " + std::to_string(kMaxFunctions) + " functions in this run; ignoring " +
                         name);
      continue;
    }
    names_.push_back(name);
    ids.push_back(static_cast<uint32_t>(names_.size() - 1));
  }
  return ids;
}

std::size_t FunctionCounters::publish(const std::vector<uint32_t>& ids, std::vector<std::string>& warnings) {
  std::vector<std::pair<uintptr_t, uint32_t>> addresses;
  std::vector<bool> found(ids.size(), false);
  symbols::Interner interner;
  for (const Object& object : candidate_objects()) {
    auto index = symbols::FunctionIndex::open(object.path, &interner);
    if (!index) continue;
    for (const symbols::FunctionBounds& bounds : (*index)->functions()) {
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (!names_function(bounds.name, names_[ids[i]])) continue;
        addresses.emplace_back(bounds.begin + object.bias, ids[i]);
        found[i] = true;
      }
    }
  }
  std::size_t found_count = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (found[i]) {
      ++found_count;
      continue;
    }
    warnings.push_back("--counters: function " + names_[ids[i]] +
                       " not found in the program's symbol tables: check the name (C++ names as `nm -C` shows "
                       "them, without parameters to select every overload) and do not strip the binary");
  }
  // A patched entry after an endbr64 reports the NOPs' address: it names the function too.
  for (std::size_t i = 0, n = addresses.size(); i < n; ++i) {
    if (patchable_entry_offset(reinterpret_cast<const uint8_t*>(addresses[i].first)) == 4) {
      addresses.emplace_back(addresses[i].first + 4, addresses[i].second);
    }
  }
  addresses.emplace_back(reinterpret_cast<uintptr_t>(&calibration_target), kCalibrationId);
  auto set = std::make_unique<Set>();
  std::size_t capacity = 16;
  while (capacity < addresses.size() * 4) capacity *= 2;  // load factor at most 1/4: short probes
  set->keys.assign(capacity, 0);
  set->ids.assign(capacity, 0);
  set->mask = capacity - 1;
  for (const auto& [address, id] : addresses) set->insert(address, id);
  resolved_ = addresses;
  if (found_count == 0 && set_.load(std::memory_order_relaxed) == nullptr) return 0;  // nothing to count at start
  set_.store(set.get(), std::memory_order_release);  // pairs with find()'s acquire
  sets_.push_back(std::move(set));  // the old sets stay: a hook may still be probing one
  return found_count;
}

std::size_t FunctionCounters::reload(const std::vector<std::string>& functions, const std::vector<EventSpec>& events,
                                     uint32_t cycle, std::vector<std::string>& warnings) {
  std::size_t found = publish(ids_for(functions, warnings), warnings);
  publish_events(events, cycle, warnings);
  // Patched after the set that selects them is published (their hook finds them at once), and
  // unpatched after the set that drops them (their hook already ignores them).
  sync_patches(/*only_thread=*/false, warnings);
  return found;
}

bool FunctionCounters::take_reload_request() { return reload_flag().exchange(false, std::memory_order_acq_rel); }

int FunctionCounters::find(const void* function) const {
  const Set* set = set_.load(std::memory_order_acquire);
  if (set == nullptr) return -1;
  auto address = reinterpret_cast<uintptr_t>(function);
  for (uint64_t slot = hash(address) & set->mask;; slot = (slot + 1) & set->mask) {
    uintptr_t key = set->keys[slot];
    if (key == address) return static_cast<int>(set->ids[slot]);
    if (key == 0) return -1;
  }
}

ThreadCounters* FunctionCounters::create_thread_counters(bool registered) {
  auto* thread = new ThreadCounters;  // the thread's one allocation, on its first selected call
  thread->tid = os::gettid();
  thread->fds.fill(-1);
  if (registered) {
    adopt(*thread, config_.load(std::memory_order_acquire));
    ThreadCounters* head = threads_.load(std::memory_order_relaxed);
    do {
      thread->next = head;
    } while (!threads_.compare_exchange_weak(head, thread, std::memory_order_release, std::memory_order_relaxed));
  }
  return thread;
}

void FunctionCounters::adopt(ThreadCounters& thread, const EventConfig* config) {
  // Each cycle of sets starts again at set 0 under a new configuration.
  thread.active_set = 0;
  thread.outer_calls = 0;
  thread.config = config;
  for (std::size_t e = 0; e < config->count; ++e) {
    bool counting = counts_in(thread, e);
    if (!thread.tried[e]) {
      if (!config->active[e]) continue;  // opened when a configuration first counts it
      thread.tried[e] = true;
      int result = -ENOENT;
      if (!specs_[e].forced_unavailable) {
        // Cycled sets: only set 0 counts at first; the others wait, disabled, for their turn.
        os::CountingEvent::Options options;
        options.start_disabled = !counting;
        result = thread.events[e].open(specs_[e].encoding, 0, -1, options);
        if (result == 0) {
          thread.fds[e] = thread.events[e].fd();
          std::string why_not = rdpmc_ ? thread.events[e].map_user_page() : "disabled by WHATIF_RDPMC=off";
          thread.rdpmc[e] = why_not.empty();
          int unknown = 0;
          if (read_mode_[e].compare_exchange_strong(unknown, 3, std::memory_order_acq_rel)) {
            read_reason_[e] = why_not;  // this thread alone writes it (3: being written)
            read_mode_[e].store(why_not.empty() ? 1 : 2, std::memory_order_release);
          }
        }
      }
      if (result != 0) {
        int expected = 0;
        unavailable_[e].compare_exchange_strong(expected, -result, std::memory_order_acq_rel);
      }
      continue;
    }
    if (thread.fds[e] < 0) continue;
    // Opened under an earlier configuration: count now only if this one counts it in set 0.
    if (counting) thread.events[e].enable();
    else thread.events[e].disable();
  }
}

ThreadCounters* FunctionCounters::thread_counters() {
  ThreadCounters* thread = t_counters;
  if (thread == nullptr) thread = t_counters = create_thread_counters(/*registered=*/true);
  return thread;
}

void FunctionCounters::read_values(const ThreadCounters& thread, std::array<uint64_t, kMaxValues>& values) const {
  for (std::size_t e = 0; e < thread.config->count; ++e) {
    if (thread.fds[e] < 0 || !counts_in(thread, e)) {
      values[e + 1] = 0;  // not counting now: its set is not the active one (or it could not open)
      continue;
    }
    if (thread.rdpmc[e] && thread.events[e].read_user(values[e + 1])) continue;
    uint64_t reading[3] = {};
    os::read_raw(thread.fds[e], reading, sizeof(reading));
    values[e + 1] = reading[0];
  }
  values[0] = thread_cpu_ns();  // last on entry, so the reads above fall outside the callee's window
}

void FunctionCounters::switch_set(ThreadCounters& thread, int set) {
  const EventConfig& config = *thread.config;
  for (std::size_t e = 0; e < config.count; ++e) {
    if (thread.fds[e] < 0 || !config.active[e] || config.set[e] < 0) continue;
    if (config.set[e] == thread.active_set && config.set[e] != set) thread.events[e].disable();
    if (config.set[e] == set && config.set[e] != thread.active_set) thread.events[e].enable();
  }
  thread.active_set = set;
}

void FunctionCounters::enter_id(ThreadCounters& thread, uint32_t id) {
  if (thread.depth[id]++ > 0) return;  // recursion: counted once per outermost call
  // ScALPEL's multiplexing by call count: a thread's outermost selected calls count `cycle_` at a time
  // with one event set, then the next. Switching only between outermost calls keeps every call's
  // window, and its callees', inside one set.
  if (thread.top == 0) {
    // A reload's events take effect here, between outermost calls, as set switches do.
    if (!thread.pinned) {
      const EventConfig* config = config_.load(std::memory_order_acquire);
      if (config != thread.config) adopt(thread, config);
    }
    const EventConfig& config = *thread.config;
    if (config.cycling) {
      if (thread.outer_calls > 0 && thread.outer_calls % config.cycle == 0) {
        switch_set(thread, (thread.active_set + 1) % config.set_count);
      }
      ++thread.outer_calls;
    }
  }
  Frame& frame = thread.frames[thread.top++];
  frame.id = id;
  frame.nested = 0;
  frame.children.fill(0);
  read_values(thread, frame.start);
}

void FunctionCounters::exit_id(ThreadCounters& thread, uint32_t id) {
  if (thread.depth[id] == 0) return;  // entered before the counters started
  if (--thread.depth[id] > 0) return;
  std::array<uint64_t, kMaxValues> now{};
  read_values(thread, now);
  // An exception or longjmp may have skipped exits: close the frames above this function's.
  while (thread.top > 0 && thread.frames[thread.top - 1].id != id) {
    thread.depth[thread.frames[thread.top - 1].id] = 0;
    --thread.top;
  }
  if (thread.top == 0) return;
  Frame& frame = thread.frames[--thread.top];
  FunctionSlot& slot = thread.slots[id];
  std::array<uint64_t, kMaxValues> raw{};
  const EventConfig& config = *thread.config;
  const std::array<uint64_t, kMaxValues>& pair_cost = config.pair_cost;
  const std::array<uint64_t, kMaxValues>& inner_cost = config.inner_cost;
  std::size_t values = config.count + 1;
  for (std::size_t v = 0; v < values; ++v) {
    raw[v] = now[v] - frame.start[v];
    // Its own hooks' part inside its window, and every selected descendant's whole hook cost.
    uint64_t hooks = inner_cost[v] + frame.nested * pair_cost[v];
    uint64_t inclusive = raw[v] > hooks ? raw[v] - hooks : 0;
    uint64_t exclusive_hooks = frame.children[v] + inner_cost[v];
    uint64_t exclusive = raw[v] > exclusive_hooks ? raw[v] - exclusive_hooks : 0;
    slot.inclusive[v].store(slot.inclusive[v].load(std::memory_order_relaxed) + inclusive, std::memory_order_relaxed);
    slot.exclusive[v].store(slot.exclusive[v].load(std::memory_order_relaxed) + exclusive, std::memory_order_relaxed);
  }
  slot.calls.store(slot.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  for (std::size_t e = 0; e < config.count; ++e) {
    if (counts_in(thread, e)) {
      slot.measured[e].store(slot.measured[e].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }
  if (thread.top > 0) {
    Frame& parent = thread.frames[thread.top - 1];
    parent.nested += 1 + frame.nested;
    // What this call put in the parent's window: its raw window and its hooks' part outside it.
    for (std::size_t v = 0; v < values; ++v) parent.children[v] += raw[v] + pair_cost[v] - inner_cost[v];
  }
}

void FunctionCounters::enter(const void* function) {
  int id = find(function);
  if (id < 0) return;
  enter_id(*thread_counters(), static_cast<uint32_t>(id));
}

void FunctionCounters::exit(const void* function) {
  int id = find(function);
  if (id < 0) return;
  ThreadCounters* thread = t_counters;
  if (thread != nullptr) exit_id(*thread, static_cast<uint32_t>(id));
}

int FunctionCounters::enter_patched(const void* function) {
  int id = find(function);
  if (id >= 0) enter_id(*thread_counters(), static_cast<uint32_t>(id));
  return id;
}

void FunctionCounters::exit_patched(uint32_t id) {
  ThreadCounters* thread = t_counters;
  if (thread != nullptr) exit_id(*thread, id);
}

void FunctionCounters::calibrate(EventConfig& target) {
  // The cost a selected callee's hooks add to its caller, per event set (each set's reads cost what
  // they cost): time and events around batches of empty enter/exit pairs through the full path, on
  // a scratch thread state that counts `target`'s events without cycling and without corrections.
  EventConfig config = target;
  config.cycling = false;
  config.pair_cost.fill(0);
  config.inner_cost.fill(0);
  std::unique_ptr<ThreadCounters> scratch(create_thread_counters(/*registered=*/false));
  scratch->pinned = true;
  adopt(*scratch, &config);
  std::size_t values = config.count + 1;
  for (int set = 0; set < std::max(1, config.set_count); ++set) {
    if (set != scratch->active_set) switch_set(*scratch, set);
    std::array<uint64_t, kMaxValues> pair{}, inner{};
    calibrate_set(*scratch, pair, inner);
    for (std::size_t v = 0; v < values; ++v) {
      // Time and the always-counted events from the first set; each cycled event from its own.
      bool own = v == 0 || config.set[v - 1] < 0 ? set == 0 : config.set[v - 1] == set;
      if (!own) continue;
      target.pair_cost[v] = pair[v];
      target.inner_cost[v] = inner[v];
    }
  }
}

void FunctionCounters::calibrate_set(ThreadCounters& scratch, std::array<uint64_t, kMaxValues>& pair,
                                     std::array<uint64_t, kMaxValues>& inner) {
  const void* target = reinterpret_cast<const void*>(&calibration_target);
  std::size_t values = scratch.config->count + 1;
  FunctionSlot& target_slot = scratch.slots[kCalibrationId];
  target_slot.calls.store(0, std::memory_order_relaxed);
  for (std::size_t v = 0; v < values; ++v) target_slot.inclusive[v].store(0, std::memory_order_relaxed);
  std::vector<std::array<uint64_t, kMaxValues>> per_pair(kCalibrationBatches);
  for (int batch = 0; batch < kCalibrationBatches; ++batch) {
    std::array<uint64_t, kMaxValues> before{}, after{};
    read_values(scratch, before);
    for (int i = 0; i < kCalibrationPairs; ++i) {
      int id = find(target);
      enter_id(scratch, static_cast<uint32_t>(id));
      id = find(target);
      exit_id(scratch, static_cast<uint32_t>(id));
    }
    read_values(scratch, after);
    for (std::size_t v = 0; v < values; ++v) per_pair[batch][v] = (after[v] - before[v]) / kCalibrationPairs;
  }
  // The part inside an empty call's own window (from its entry read to its exit read): what the
  // calibration target's slot accumulated, per call (no correction applies while both costs are 0).
  uint64_t calls = std::max<uint64_t>(1, target_slot.calls.load(std::memory_order_relaxed));
  for (std::size_t v = 0; v < values; ++v) {
    std::vector<uint64_t> costs;
    for (const auto& batch : per_pair) costs.push_back(batch[v]);
    std::nth_element(costs.begin(), costs.begin() + kCalibrationBatches / 2, costs.end());
    pair[v] = costs[kCalibrationBatches / 2];
    inner[v] = std::min(pair[v], target_slot.inclusive[v].load(std::memory_order_relaxed) / calls);
  }
}

std::vector<FunctionTotals> FunctionCounters::totals() const {
  std::vector<FunctionTotals> out;
  std::size_t values = event_count_ + 1;
  for (ThreadCounters* thread = threads_.load(std::memory_order_acquire); thread != nullptr; thread = thread->next) {
    for (uint32_t id = 0; id < names_.size(); ++id) {
      const FunctionSlot& slot = thread->slots[id];
      uint64_t calls = slot.calls.load(std::memory_order_relaxed);
      if (calls == 0) continue;
      FunctionTotals totals;
      totals.tid = thread->tid;
      totals.function = names_[id];
      totals.calls = calls;
      for (std::size_t v = 0; v < values; ++v) {
        totals.inclusive[v] = slot.inclusive[v].load(std::memory_order_relaxed);
        totals.exclusive[v] = slot.exclusive[v].load(std::memory_order_relaxed);
      }
      for (std::size_t e = 0; e < event_count_; ++e) totals.measured[e] = slot.measured[e].load(std::memory_order_relaxed);
      out.push_back(std::move(totals));
    }
  }
  std::sort(out.begin(), out.end(), [](const FunctionTotals& a, const FunctionTotals& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.function < b.function;
  });
  return out;
}

std::vector<std::string> FunctionCounters::take_unavailable_warnings() {
  std::vector<std::string> out;
  // How the events are read, once every opened event's first thread has said (events never opened
  // are reported below as unavailable).
  bool all_known = true, any_opened = false;
  for (std::size_t e = 0; e < event_count_; ++e) {
    int mode = read_mode_[e].load(std::memory_order_acquire);
    int error = unavailable_[e].load(std::memory_order_acquire);
    if (mode == 1 || mode == 2) any_opened = true;
    else if (error == 0) all_known = false;
  }
  if (all_known && any_opened && !read_reported_.exchange(true, std::memory_order_acq_rel)) {
    std::string rdpmc, read;
    std::vector<std::pair<std::string, std::string>> by_reason;  // reason -> the events read(2) for it
    for (std::size_t e = 0; e < event_count_; ++e) {
      int mode = read_mode_[e].load(std::memory_order_acquire);
      if (mode == 1) rdpmc += (rdpmc.empty() ? "" : ", ") + specs_[e].name;
      if (mode != 2) continue;
      auto same = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == read_reason_[e]; });
      if (same == by_reason.end()) by_reason.emplace_back(read_reason_[e], specs_[e].name);
      else same->second += ", " + specs_[e].name;
    }
    for (const auto& [reason, names] : by_reason) read += (read.empty() ? "" : "; ") + names + " (" + reason + ")";
    out.push_back("--counters: counter reads: rdpmc for " + (rdpmc.empty() ? std::string("none") : rdpmc) +
                  "; read(2) for " + (read.empty() ? std::string("none") : read));
  }
  for (std::size_t e = 0; e < event_count_; ++e) {
    int error = unavailable_[e].load(std::memory_order_acquire);
    if (error == 0 || reported_[e].exchange(true, std::memory_order_acq_rel)) continue;
    std::string reason = specs_[e].forced_unavailable ? "forced by WHATIF_UNAVAILABLE_EVENTS"
                         : (error == ENOENT || error == ENODEV || error == EOPNOTSUPP)
                             ? "this machine has no hardware PMU for it"
                             : std::string(std::strerror(error));
    out.push_back("--counters: event " + specs_[e].name + " not available on this machine (" + reason +
                  "); its counts are 0, time and the other events are still counted");
  }
  return out;
}

}  // namespace whatif::fncounters
