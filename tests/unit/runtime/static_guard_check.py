#!/usr/bin/env python3
# The fork-safety check of lazily built statics: no function of the runtime may take the guard of a
# function-local static (__cxa_guard_acquire). Run by ctest on libwhatif.so; no thread context.
#
# A fork copies the guard of a static that another thread is building as "in progress", and the
# child, alone, then waits on it for ever: a `forkwork` child hung at its exit on the guard of a
# static the parent's profiler thread was building when the parent forked. Statics the runtime
# fills lazily are constant-initialized atomics instead (os::page_size).
import re
import subprocess
import sys


def guarded_functions(path):
    """Names of the functions in `path` (a shared object or an object file) that call
    __cxa_guard_acquire, demangled."""
    dump = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", path], capture_output=True, text=True, check=True)
    found = []
    function = None
    for line in dump.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            function = None if m.group(1).startswith("__cxa_guard") else m.group(1)  # the PLT stub itself
        elif "__cxa_guard_acquire" in line and function is not None and function not in found:
            found.append(function)
    if not found:
        return []
    names = subprocess.run(["c++filt"], input="\n".join(found), capture_output=True, text=True, check=True)
    return names.stdout.split("\n")[: len(found)]


def main():
    if len(sys.argv) < 2:
        print("usage: static_guard_check.py FILE...", file=sys.stderr)
        return 2
    bad = []
    for path in sys.argv[1:]:
        bad += ["%s: %s" % (path, name) for name in guarded_functions(path)]
    if bad:
        print("FAIL: a function-local static built on first use takes a guard that a fork can copy held:")
        for entry in bad:
            print("  " + entry)
        return 1
    print("ok: no guarded function-local static in", ", ".join(sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
