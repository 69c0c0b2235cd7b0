// Resolution of the original symbols with dlsym(RTLD_NEXT). Runs on the first thread that needs
// one, possibly inside another library's constructor before main.
#include "libc/real.h"

#include <atomic>

#include "os/log.h"

namespace whatif::real {

#define WHATIF_DEFINE_REAL(name) decltype(&::name) name = nullptr;
WHATIF_REAL_SYMBOLS(WHATIF_DEFINE_REAL, WHATIF_DEFINE_REAL)
#undef WHATIF_DEFINE_REAL

namespace detail {
std::atomic<int> g_resolve_state{0};
}
namespace {
std::atomic<int>& g_state = detail::g_resolve_state;

template <typename T>
void lookup(T& slot, const char* name, bool required) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr && required) {
    char message[256];
    auto out = fmt::format_to_n(message, sizeof(message) - 1, "cannot find the original {}: is libc unusual here?", name);
    log::fatal(std::string_view(message, out.size < sizeof(message) - 1 ? out.size : sizeof(message) - 1));
  }
  slot = reinterpret_cast<T>(symbol);
}
}  // namespace

void* resolve_late(const char* name, const char* library) {
  if (void* symbol = dlsym(RTLD_NEXT, name)) return symbol;
  void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);  // only if it is already loaded
  if (handle == nullptr) return nullptr;
  void* symbol = dlsym(handle, name);
  dlclose(handle);  // drops the reference RTLD_NOLOAD took; the library stays loaded
  return symbol;
}

void detail::resolve_all() {
  if (g_state.load(std::memory_order_acquire) == 2) return;
  int expected = 0;
  if (g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
#define WHATIF_LOOKUP_REQUIRED(name) lookup(name, #name, true);
#define WHATIF_LOOKUP_OPTIONAL(name) lookup(name, #name, false);
    WHATIF_REAL_SYMBOLS(WHATIF_LOOKUP_REQUIRED, WHATIF_LOOKUP_OPTIONAL)
#ifdef WHATIF_TEST_MISSING_REQUIRED
    // Test-only (never defined in libwhatif.so): tests/unit/runtime builds a copy of the runtime
    // with one more required name that no library defines, to see the crash path report it.
    void* missing = nullptr;
    lookup(missing, WHATIF_TEST_MISSING_REQUIRED, true);
#endif
#undef WHATIF_LOOKUP_REQUIRED
#undef WHATIF_LOOKUP_OPTIONAL
    g_state.store(2, std::memory_order_release);  // pairs with the acquire loads above and below
    return;
  }
  while (g_state.load(std::memory_order_acquire) != 2) {
  }
}

namespace {
std::atomic<int> g_runtime_threads{0};

struct RuntimeStart {
  void* (*routine)(void*);
  void* argument;
};

void* runtime_trampoline(void* raw) {
  RuntimeStart start = *static_cast<RuntimeStart*>(raw);
  delete static_cast<RuntimeStart*>(raw);
  void* result = start.routine(start.argument);
  g_runtime_threads.fetch_sub(1, std::memory_order_acq_rel);
  return result;
}
}  // namespace

int runtime_threads() { return g_runtime_threads.load(std::memory_order_acquire); }

void forget_runtime_threads() { g_runtime_threads.store(0, std::memory_order_release); }

int create_runtime_thread(pthread_t* thread, void* (*routine)(void*), void* argument) {
  pthread_attr_t attributes;
  if (int result = pthread_attr_init(&attributes); result != 0) return result;
  sigset_t all;
  sigfillset(&all);
  int result = pthread_attr_setsigmask_np(&attributes, &all);
  auto* start = new RuntimeStart{routine, argument};
  g_runtime_threads.fetch_add(1, std::memory_order_acq_rel);
  if (result == 0) result = pthread_create(thread, &attributes, &runtime_trampoline, start);
  if (result != 0) {
    g_runtime_threads.fetch_sub(1, std::memory_order_acq_rel);
    delete start;
  }
  pthread_attr_destroy(&attributes);
  return result;
}

}  // namespace whatif::real
