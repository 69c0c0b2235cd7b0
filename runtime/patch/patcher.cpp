// Installing progress-point patches (see patcher.h). Profiler thread only, at start-up.
#include "patch/patcher.h"

#include <sys/mman.h>

#include <cstring>

#include "os/memory.h"

namespace whatif::patch {
namespace {

// The trampoline must reach the site and the site's rip-relative targets with rel32.
constexpr uint64_t kReach = 1ull << 30;

void write_jump(uint64_t site, const uint8_t (&jump)[kJumpLength]) {
  if ((site & 7) + kJumpLength <= 8) {  // one aligned 8-byte store: fetched whole or not at all
    auto* word = reinterpret_cast<uint64_t*>(site & ~uint64_t{7});
    uint64_t value = __atomic_load_n(word, __ATOMIC_RELAXED);
    std::memcpy(reinterpret_cast<uint8_t*>(&value) + (site & 7), jump, kJumpLength);
    __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
    return;
  }
  auto* bytes = reinterpret_cast<uint8_t*>(site);
  for (std::size_t i = 1; i < kJumpLength; ++i) __atomic_store_n(bytes + i, jump[i], __ATOMIC_RELAXED);
  __atomic_store_n(bytes, jump[0], __ATOMIC_SEQ_CST);  // the opcode last
}

}  // namespace

Result<Installed> install(uint64_t site, uint64_t function_begin, uint64_t function_end,
                          const std::vector<std::pair<uint64_t, uint64_t>>& fragments) {
  const std::size_t page = os::page_size();
  void* pages = os::map_near(site, 2 * page, kReach);
  if (pages == nullptr) return Error{"no free page within 1 GiB of the line for its trampoline"};
  const auto code_address = reinterpret_cast<uint64_t>(pages);
  auto* counter = reinterpret_cast<uint64_t*>(code_address + page);

  FunctionCode function{reinterpret_cast<const uint8_t*>(function_begin), function_begin, function_end - function_begin};
  std::vector<FunctionCode> parts;
  for (const auto& [begin, end] : fragments) parts.push_back({reinterpret_cast<const uint8_t*>(begin), begin, end - begin});
  Result<Plan> plan = plan_patch(function, site, code_address, reinterpret_cast<uint64_t>(counter), parts);
  if (!plan) {
    os::unmap(pages, 2 * page);
    return Error{plan.error()};
  }
  if (plan->trampoline.size() > page) {
    os::unmap(pages, 2 * page);
    return Error{"its trampoline does not fit in a page"};
  }
  std::memcpy(pages, plan->trampoline.data(), plan->trampoline.size());
  if (int error = os::protect(code_address, page, PROT_READ | PROT_EXEC); error != 0) {
    os::unmap(pages, 2 * page);
    return Error{std::string("cannot make its trampoline executable: ") + std::strerror(-error)};
  }
  if (int error = os::protect(site, kJumpLength, PROT_READ | PROT_WRITE | PROT_EXEC); error != 0) {
    os::unmap(pages, 2 * page);
    return Error{std::string("cannot make the program's code writable: ") + std::strerror(-error)};
  }
  write_jump(site, plan->jump);
  os::protect(site, kJumpLength, PROT_READ | PROT_EXEC);

  Installed installed;
  installed.site = site;
  installed.counter = counter;
  installed.trampoline_begin = code_address;
  installed.trampoline_end = code_address + plan->trampoline.size();
  installed.displaced = plan->displaced;
  installed.displaced_instructions = plan->displaced_instructions;
  return installed;
}

}  // namespace whatif::patch
