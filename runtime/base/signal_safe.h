// WHATIF_SIGNAL_SAFE marks functions that may run in a signal handler: they never allocate, lock,
// throw, use stdio or call libwhatif's own shims. Files named *_signal.cpp hold only such code.
// tests/unit/runtime/signal_callgraph_check.py checks everything these functions, the sigaction
// handlers and *_signal.cpp files reach (GCC call graphs; indirect calls listed there by hand).
#pragma once
#define WHATIF_SIGNAL_SAFE
