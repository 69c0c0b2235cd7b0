// WHATIF_SIGNAL_SAFE marks functions that may run in a signal handler: they never allocate, lock,
// throw or use stdio. Files named *_signal.cpp hold only such code (checked by a unit test).
#pragma once
#define WHATIF_SIGNAL_SAFE
