#!/usr/bin/env python3
# The include-graph check behind docs/architecture.md: every quoted #include in runtime/, analysis/
# and launcher/ must point to its own folder or to a lower layer. Run by `make test` (ctest
# whatif_layers); `--self-test` plants an upward include in a copy and expects the check to fail.
import pathlib
import re
import shutil
import sys
import tempfile

# Folder -> layer. Higher layers may include lower ones; folders on one layer stay independent.
RUNTIME = {
    "base": 0,                                   # pure helpers: result type, signal-safe marks
    "os": 1, "x86": 1,                           # syscalls and the crash path; the x86 decoder
    "libc": 2, "config": 2, "symbols": 2,        # original symbols, options, ELF/DWARF
    "unwind": 2,                                 # DWARF CFI unwinding of sampled stacks
    "sampling": 3, "delays": 3, "progress": 3, "profile": 3, "lbr": 3, "fncounters": 3,  # subsystems
    "patch": 3,                                  # -p code patches (trampolines) over os/ and x86/
    "threads": 4,                                # a thread's state: the subsystems' parts
    "experiment": 5,                             # the profiler thread
    "facade": 6,                                 # what the shims call
    "interpose": 7,                              # the shims
}
ANALYSIS = {"profile": 10, "code": 10, "causal": 11, "branches": 11, "stalls": 11, "counters": 11}
# What the offline side may take from the runtime: pure code only, never a runtime subsystem.
OFFLINE_MAY_USE = {"base", "os", "x86", "symbols"}
GENERATED = {"whatif/profile_format.h", "whatif/environment.h", "whatif/latency_table.inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(root, path):
    """(kind, folder, rank) of a source file, or None when it is not layered."""
    rel = path.relative_to(root).parts
    if rel[0] == "runtime" and len(rel) > 2:
        return ("runtime", rel[1], RUNTIME.get(rel[1]))
    if rel[0] == "analysis" and len(rel) > 2:
        return ("analysis", rel[1], ANALYSIS.get(rel[1]))
    if rel[0] == "launcher":
        return ("launcher", "launcher", 20)
    return None


def target_of(include):
    """(kind, folder, rank) of an included header, or None when unknown."""
    parts = include.split("/")
    if include in GENERATED:
        return ("format", "format", -1)
    if parts[0] == "analysis" and len(parts) > 2:
        return ("analysis", parts[1], ANALYSIS.get(parts[1]))
    if len(parts) > 1 and parts[0] in RUNTIME:
        return ("runtime", parts[0], RUNTIME[parts[0]])
    return None


def check(root):
    problems = []
    files = [p for d in ("runtime", "analysis", "launcher") for p in sorted((root / d).rglob("*"))
             if p.suffix in (".h", ".cpp", ".c")]
    for path in files:
        kind, folder, rank = layer_of(root, path) or (None, None, None)
        if kind is None:
            continue
        where = path.relative_to(root)
        if rank is None:
            problems.append(f"{where}: folder {kind}/{folder} has no layer in scripts/check_layers.py")
            continue
        for include in INCLUDE.findall(path.read_text(errors="replace")):
            if kind == "launcher" and "/" not in include:
                continue  # the launcher's own headers
            target = target_of(include)
            if target is None:
                problems.append(f"{where}: includes \"{include}\", which belongs to no layer")
                continue
            tkind, tfolder, trank = target
            if tkind == "format" or (tkind, tfolder) == (kind, folder):
                continue
            if kind != "runtime" and tkind == "runtime" and tfolder not in OFFLINE_MAY_USE:
                problems.append(f"{where}: offline code includes runtime subsystem \"{include}\"")
            elif kind == "runtime" and tkind != "runtime":
                problems.append(f"{where}: the runtime includes offline code \"{include}\"")
            elif kind == tkind and trank >= rank:
                direction = "up" if trank > rank else "sideways"
                problems.append(f"{where}: includes \"{include}\" ({direction}: {tfolder} is layer {trank}, "
                                f"{folder} is layer {rank})")
    return problems, len(files)


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp)
        for d in ("runtime", "analysis", "launcher"):
            shutil.copytree(root / d, copy / d)
        planted = copy / "runtime" / "os" / "planted.cpp"
        planted.write_text('#include "experiment/profiler.h"\n')
        problems, _ = check(copy)
        if not any("planted.cpp" in p and "(up:" in p for p in problems):
            print("FAIL: a planted upward include (os -> experiment) was not caught")
            return 1
        print("ok: a planted upward include is caught:", next(p for p in problems if "planted.cpp" in p))
    return 0


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    if "--self-test" in sys.argv:
        return self_test(root)
    problems, count = check(root)
    for problem in problems:
        print("FAIL:", problem)
    if not problems:
        print(f"ok: {count} files, every include points down")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
