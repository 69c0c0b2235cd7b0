// Built with -no-pie: checks in-process that a non-PIE main executable has load bias 0 and that
// its own code maps to the right line. Run by ctest; prints the mismatch and exits 1 on failure.
#include <cstdio>
#include <cstring>
#include <string>

#include "symbols/symbol_map.h"

extern "C" __attribute__((noinline, used)) int whatif_nopie_marker(int x) {  // LINE:nopie_marker
  return x * 11 + (x >> 3);  // LINE:nopie_body
}

int main(int, char** argv) {
  using whatif::symbols::SymbolMap;
  auto map = SymbolMap::for_current_process(whatif::symbols::Scope{});
  if (!map.ok()) {
    std::printf("FAIL: %s\n", map.error().c_str());
    return 1;
  }
  auto address = reinterpret_cast<uintptr_t>(&whatif_nopie_marker);
  const auto* object = map.value()->object_at(address);
  if (!object || !object->is_main || object->bias != 0) {
    std::printf("FAIL: main object %s, bias %#lx (expected 0 for non-PIE)\n", object ? object->path.c_str() : "none",
                static_cast<unsigned long>(object ? object->bias : 0));
    return 1;
  }
  auto info = map.value()->lookup(address);
  const unsigned expected_first = std::stoul(argv[1]), expected_last = std::stoul(argv[2]);
  if (!info || info->frames[0].line < expected_first || info->frames[0].line > expected_last ||
      info->frames[0].file.find("nopie_probe.cpp") == std::string_view::npos) {
    std::printf("FAIL: lookup of whatif_nopie_marker gave %s:%u\n",
                info ? std::string(info->frames[0].file).c_str() : "nothing", info ? info->frames[0].line : 0);
    return 1;
  }
  std::printf("1 passed, 0 failed\n");
  return 0;
}
