// fill_once: a value computed on first use and kept in a constant-initialized atomic, in place of a
// function-local static built on first use, whose guard a fork can copy held (the child then waits
// for ever; tests/unit/runtime/static_guard_check.py). Any thread; the computation may run twice.
#pragma once
#include <atomic>

namespace whatif::base {

/// `slot`'s value, or `compute()` stored there first while it still holds `unknown`. Two threads may
/// both compute: `compute` must give the same value each time and may not be costly to repeat.
template <typename T, typename Compute>
T fill_once(std::atomic<T>& slot, T unknown, Compute compute) {
  T value = slot.load(std::memory_order_relaxed);
  if (value == unknown) {
    value = compute();
    slot.store(value, std::memory_order_relaxed);
  }
  return value;
}

}  // namespace whatif::base
