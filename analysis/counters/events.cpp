// Event-name resolution through libpfm4 (pfm_get_os_event_encoding, PFM_OS_PERF_EVENT_EXT) with a
// fallback table of perf's software events. Launcher thread only (libpfm4 initialises once).
#include "analysis/counters/events.h"

#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "whatif/environment.h"

namespace whatif::counters {
namespace {

struct SoftwareName {
  const char* name;
  uint64_t config;
};
// perf's names for PERF_TYPE_SOFTWARE (tools/perf/util/parse-events.c), with its aliases.
constexpr SoftwareName kSoftware[] = {
    {"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},           {"task-clock", PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_COUNT_SW_PAGE_FAULTS},       {"faults", PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES}, {"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS}, {"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},  {"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS}, {"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", PERF_COUNT_SW_DUMMY},
};

bool pfm_ready() {
  static const int status = pfm_initialize();
  return status == PFM_SUCCESS;
}

}  // namespace

Result<ResolvedEvent> resolve_event(const std::string& name, bool include_kernel) {
  if (name.empty()) return Error{"-e: empty event name; give e.g. -e cycles,instructions,task-clock"};
  std::string pfm_error = "libpfm4 did not initialise";
  if (pfm_ready()) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    char* full_name = nullptr;
    pfm_perf_encode_arg_t arg{};
    arg.attr = &attr;
    arg.size = sizeof(arg);
    arg.fstr = &full_name;
    int privilege = PFM_PLM3 | (include_kernel ? PFM_PLM0 : 0);
    int status = pfm_get_os_event_encoding(name.c_str(), privilege, PFM_OS_PERF_EVENT_EXT, &arg);
    if (status == PFM_SUCCESS) {
      ResolvedEvent event;
      event.name = name;
      event.canonical = full_name != nullptr ? full_name : name;
      std::free(full_name);
      event.encoding.type = attr.type;
      event.encoding.config = attr.config;
      event.encoding.config1 = attr.config1;
      event.encoding.config2 = attr.config2;
      // Software events (context switches, migrations, faults) happen in the kernel on the task's
      // behalf: user-only would count none of them. The opener retries user-only where denied.
      event.encoding.exclude_kernel = attr.type == PERF_TYPE_SOFTWARE ? false : attr.exclude_kernel;
      event.encoding.exclude_hv = attr.exclude_hv;
      return event;
    }
    std::free(full_name);
    pfm_error = pfm_strerror(status);
  }
  for (const auto& software : kSoftware) {
    if (name == software.name) {
      ResolvedEvent event;
      event.name = name;
      event.canonical = std::string("perf software event ") + software.name;
      event.encoding.type = PERF_TYPE_SOFTWARE;
      event.encoding.config = software.config;
      event.encoding.exclude_kernel = false;  // as above: software events happen in the kernel
      return event;
    }
  }
  return Error{fmt::format("-e {}: unknown event ({}); perf's generic names (cycles, instructions, "
                           "cache-misses, task-clock, page-faults...) and this CPU's names from libpfm4's "
                           "`showevtinfo` work",
                           name, pfm_error)};
}

std::vector<std::string> split_event_list(const std::vector<std::string>& arguments) {
  std::vector<std::string> names;
  for (const std::string& argument : arguments) {
    for (auto& item : environment::split(argument, ',', false)) names.push_back(item);
  }
  return names;
}

bool needs_pmu_counter(const os::EventEncoding& encoding) {
  return encoding.type != PERF_TYPE_SOFTWARE && encoding.type != PERF_TYPE_TRACEPOINT &&
         encoding.type != PERF_TYPE_BREAKPOINT;
}

std::string open_failure_reason(int negative_errno) {
  int error = -negative_errno;
  switch (error) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
      return fmt::format("perf_event_open: {}: this machine has no hardware PMU for it (a VM without "
                         "a virtual PMU, or an event this CPU lacks); software events still work",
                         std::strerror(error));
    case EACCES:
    case EPERM:
      return fmt::format("perf_event_open: {}: perf is restricted; lower "
                         "/proc/sys/kernel/perf_event_paranoid (e.g. to 1) or run with CAP_PERFMON",
                         std::strerror(error));
    case EINVAL:
      return "perf_event_open: invalid argument: the kernel rejects this encoding on this CPU";
    default:
      return fmt::format("perf_event_open: {}", std::strerror(error));
  }
}

std::vector<std::string> forced_unavailable_events() {
  const char* value = std::getenv(environment::kUnavailableEvents);
  if (value == nullptr) return {};
  std::vector<std::string> names;
  for (auto& item : environment::split(value, environment::kListSeparator, false)) {
    for (auto& name : environment::split(item, ',', false)) names.push_back(name);
  }
  return names;
}

bool is_forced_unavailable(const std::string& name, const std::vector<std::string>& forced) {
  for (const auto& entry : forced) {
    if (entry == name || entry == "all") return true;
  }
  return false;
}

}  // namespace whatif::counters
