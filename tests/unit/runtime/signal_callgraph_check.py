#!/usr/bin/env python3
# The signal-safety check: merges the call graphs GCC writes per translation unit
# (-fcallgraph-info=su, one .ci VCG file next to each object), starts from every function signal
# context can enter, walks everything reachable and fails if any reachable function allocates,
# locks, uses stdio, throws, or calls one of libwhatif's own shims. Run by ctest at build time.
#
# Entry points (signal context can start there):
#   * the handlers installed with sigaction (`sa_sigaction = &f` / `sa_handler = &f` in the sources),
#   * every function annotated WHATIF_SIGNAL_SAFE (runtime/base/signal_safe.h),
#   * every function defined in a *_signal.cpp file (such files hold only signal-context code).
# Indirect calls (virtual calls, function pointers) cannot be followed from the graph: each one in
# reachable code must be listed in INDIRECT_TARGETS below with the functions it may call, which are
# then walked too; an unlisted one fails the check.
#
# Usage: signal_callgraph_check.py --sources DIR [--shims FILE] OBJECT_OR_CI...
import argparse
import collections
import pathlib
import re
import sys

# Allocator, lock, stdio and exception functions (mangled or demangled names).
FORBIDDEN = re.compile(
    r"^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|strdup|strndup)$"
    r"|operator new|operator delete|^_Zn[wa]m|^_Zd[la]Pv"
    r"|^pthread_mutex_|^pthread_rwlock_|^pthread_cond_|^pthread_spin_lock|^sem_wait|^sem_timedwait"
    r"|__cxa_guard_acquire"  # a function-local static's first-use lock
    r"|printf|^puts$|^fputs|^fputc|^putc|^putchar|^fwrite|^fopen|^fclose|^fflush|^syslog"
    r"|__cxa_throw|__cxa_rethrow|__cxa_allocate_exception|std::__throw|_ZSt\d+__throw"
    r"|^dlopen$|^dlsym$|^dlclose$"
)
# Sanitizer instrumentation (ASan's fake stack, UBSan's reports) is not the code's own call.
INSTRUMENTATION = re.compile(r"^(__asan_|__ubsan_|__tsan_|__sanitizer_|__msan_)")

# Indirect calls in signal-reachable code: caller (regex on its demangled name) -> the functions it
# may call (regexes on demangled names). Keep this in step with the code: a new indirect call in
# signal context fails the check until it is listed here.
INDIRECT_TARGETS = {
    # on_runtime_signal (facade/runtime_signal.cpp): thread->sampler->on_signal(...), a virtual call.
    r"whatif::facade::on_runtime_signal\(": [r"whatif::sampling::\w+ThreadSampler::on_signal\("],
    # settle_delays: thread.sampler->scan_own(visitor, &scan) and ->on_timer(), virtual calls.
    r"whatif::threads::settle_delays\(": [r"whatif::sampling::\w+ThreadSampler::scan_own\(",
                                          r"whatif::sampling::\w+ThreadSampler::on_timer\("],
    # The samplers' scan_own call their OwnSampleVisitor: only settle_delays passes one (a lambda).
    r"whatif::os::PerfSampler::scan_own\(|whatif::sampling::SampleRing::scan_own\("
    r"|whatif::sampling::\w+ThreadSampler::scan_own\(": [r"whatif::threads::settle_delays\(.*<lambda"],
    # on_trap_signal (facade/runtime_signal.cpp, --lbr): a SIGTRAP that is not the tracer's goes to
    # the program's own handler (sa_sigaction / sa_handler), which is the program's code, not ours.
    r"whatif::facade::on_trap_signal\(": [],
    # real_clock_gettime (os/os.cpp): libc's clock_gettime through the pointer dlsym resolved before
    # main, a libc function (the vDSO's read), async-signal-safe as POSIX lists it.
    r"whatif::os::real_clock_gettime\(": [],
}

NODE = re.compile(r'node: \{ title: "([^"]*)" label: "((?:[^"\\]|\\.)*)"( shape : ellipse)? \}')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)" label: "([^"]*)" \}')


class Graph:
    def __init__(self):
        self.label = {}        # node id -> demangled signature
        self.defined = set()   # node ids with a body in some translation unit
        self.where = {}        # node id -> file:line of the definition
        self.calls = collections.defaultdict(list)  # node id -> [(callee id, call site)]
        self.unit = {}         # node id -> the .ci file that defines it
        self.by_name = collections.defaultdict(set)  # mangled/global title -> node ids

    def load(self, ci_path):
        text = ci_path.read_text(errors="replace")
        # Titles with a ':' are local to their unit (static / anonymous-namespace functions).
        def node_id(title):
            return f"{ci_path}|{title}" if ":" in title and title != "__indirect_call" else title
        for title, label, external in NODE.findall(text):
            nid = node_id(title)
            lines = label.split("\\n")
            self.label.setdefault(nid, lines[0])
            if not external:
                self.defined.add(nid)
                self.label[nid] = lines[0]
                self.where[nid] = lines[1] if len(lines) > 1 else "?"
                self.unit[nid] = ci_path
        for source, target, site in EDGE.findall(text):
            self.calls[node_id(source)].append((node_id(target), site))


def ci_files(paths):
    """The .ci file of each object (foo.cpp.o -> foo.cpp.ci) or the .ci files given directly."""
    found = []
    for raw in paths:
        path = pathlib.Path(raw)
        ci = path if path.suffix == ".ci" else path.with_suffix(".ci")
        if not ci.exists():
            sys.exit(f"FAIL: no call graph {ci} (is the object built with -fcallgraph-info=su?)")
        found.append(ci)
    return found


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
SCOPE_OPEN = re.compile(r"\b(namespace|class|struct)\s+([\w:]*)[^;{()]*\{")


def annotated_functions(sources):
    """Qualified names of the functions annotated WHATIF_SIGNAL_SAFE and of the sigaction handlers,
    found by a small scanner over the sources that tracks namespace and class scopes."""
    annotated, handlers = set(), set()
    for path in sorted(sources):
        if path.name == "signal_safe.h":
            continue
        text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), path.read_text())
        # Scope stack: (name or None, depth at which it closes).
        scopes, depth = [], 0
        opens = {m.end() - 1: m for m in SCOPE_OPEN.finditer(text)}
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
                m = opens.get(i)
                scopes.append((m.group(2) or "{anonymous}", depth) if m else (None, depth))
            elif ch == "}":
                if scopes and scopes[-1][1] == depth:
                    scopes.pop()
                depth -= 1
            elif text.startswith("WHATIF_SIGNAL_SAFE", i) and not text.startswith("WHATIF_SIGNAL_SAFE_", i):
                declaration = text[i:text.find("(", i)]
                name = re.findall(r"~?[\w:]+$", declaration.strip())
                if name and "#define" not in text[max(0, i - 10):i]:
                    prefix = "::".join(s for s, _ in scopes if s)
                    annotated.add((prefix + "::" if prefix else "") + name[0])
        for m in re.finditer(r"\bsa_(?:sigaction|handler)\s*=\s*&?\s*([\w:]+)", text):
            if not m.group(1).startswith("SIG_"):  # SIG_DFL / SIG_IGN are not code
                handlers.add(m.group(1))
    return annotated, handlers


def plain(label):
    return label.replace("{anonymous}::", "")


def function_name(label):
    """The qualified name of a demangled signature: what precedes its last parameter list, without
    anonymous namespaces ("void ns::{anonymous}::f(int) const" -> "void ns::f")."""
    close = label.rfind(")")
    depth = 0
    for i in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(label[i], 0)
        if depth == 0:
            return label[:i].replace("{anonymous}::", "")
    return label


def matches(label, name, qualified=True):
    """Whether a signature defines `name`: fully qualified (annotations), or any scope (handlers)."""
    own = function_name(label)
    name = name.replace("{anonymous}::", "")
    if own == name or own.endswith((" " + name, "*" + name, "&" + name)):
        return True
    return not qualified and own.endswith("::" + name)


def exported_shims(shims):
    if shims is None:
        return set()
    return set(re.findall(r"WHATIF_EXPORT\s+[^(]*?\**\b(\w+)\s*\(", shims.read_text()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", type=pathlib.Path, action="append", required=True,
                        help="directory (or file) whose sources are scanned for entry points")
    parser.add_argument("--shims", type=pathlib.Path, help="interpose/shims.cpp: names signal code must not call")
    parser.add_argument("--list", action="store_true", help="print every reachable function")
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    graph = Graph()
    units = ci_files(args.inputs)
    for ci in units:
        graph.load(ci)
    for nid in graph.label:
        graph.by_name[nid.split("|")[-1]].add(nid)

    sources = []
    for root in args.sources:
        sources += [root] if root.is_file() else [p for p in root.rglob("*") if p.suffix in (".cpp", ".h")]
    annotated, handlers = annotated_functions(sources)
    shims = exported_shims(args.shims)

    # Entry points: node -> why it is one.
    entries = {}
    defined = sorted(graph.defined)
    for nid in defined:
        label = graph.label[nid]
        for name in sorted(handlers):
            if matches(label, name, qualified=False):
                entries.setdefault(nid, f"sigaction handler {name}")
        for name in sorted(annotated):
            if matches(label, name):
                entries.setdefault(nid, f"WHATIF_SIGNAL_SAFE {name}")
        if graph.unit[nid].name.endswith("_signal.cpp.ci"):
            entries.setdefault(nid, f"defined in {graph.unit[nid].name[:-3]}")
    unmatched_handlers = [h for h in handlers if not any(matches(graph.label[n], h, False) for n in defined)]
    if unmatched_handlers:
        print(f"FAIL: sigaction handler(s) {', '.join(sorted(unmatched_handlers))} not found in the call graphs")
        return 1
    inlined_only = sorted(a for a in annotated if not any(matches(graph.label[n], a) for n in defined))

    # Breadth-first walk from every entry, remembering how each function was reached.
    parent = {nid: None for nid in entries}
    queue = collections.deque(sorted(entries))
    failures, used_indirect, external_leaves = [], set(), collections.Counter()

    def resolve(target):
        """A callee's definition anywhere in the merged graph, else the external node itself."""
        if target in graph.defined:
            return target
        # Complete-object constructors and destructors (C1/D1) are aliases GCC emits as C2/D2.
        for name in (target, re.sub(r"([CD])1([EI])", r"\g<1>2\2", target)):
            for candidate in graph.by_name.get(name, ()):
                if candidate in graph.defined:
                    return candidate
        return target

    while queue:
        nid = queue.popleft()
        callees = []
        for target, site in graph.calls.get(nid, ()):
            if target == "__indirect_call":
                rules = [(k, v) for k, v in INDIRECT_TARGETS.items() if re.search(k, plain(graph.label[nid]))]
                if not rules:
                    failures.append((nid, f"an indirect call at {site} that the check cannot follow "
                                          "(list its targets in INDIRECT_TARGETS)"))
                    continue
                for key, targets in rules:
                    used_indirect.add(key)
                    for pattern in targets:
                        hits = [n for n in defined if re.search(pattern, plain(graph.label[n]))]
                        if not hits:
                            failures.append((nid, f"indirect call at {site}: no function matches {pattern}"))
                        callees += [(hit, f"{site} (indirect)") for hit in hits]
                continue
            callees.append((resolve(target), site))
        for callee, site in callees:
            if callee in parent:
                continue
            parent[callee] = (nid, site)
            name = callee.split("|")[-1]
            label = graph.label.get(callee, name)
            if INSTRUMENTATION.match(name):
                continue
            if name in shims:  # the shim's body is in the graph too, but calling it is the bug
                failures.append((callee, "one of libwhatif's own shims (re-enters the runtime)"))
                continue
            if callee not in graph.defined:
                external_leaves[name] += 1
                if FORBIDDEN.search(name) or FORBIDDEN.search(label):
                    failures.append((callee, "signal-unsafe (allocator, lock, stdio or exception)"))
                elif name.startswith("_ZN6whatif") or "whatif::" in label:
                    failures.append((callee, "defined in no call graph given (pass its object)"))
                continue
            queue.append(callee)

    def path_to(nid):
        steps = []
        while parent.get(nid) is not None:
            caller, site = parent[nid]
            steps.append(f"    -> {graph.label.get(nid, nid)}   [called at {site}]")
            nid = caller
        steps.append(f"    {graph.label[nid]}   [entry: {entries[nid]}]")
        return "\n".join(reversed(steps))

    reachable = sorted(n for n in parent if n in graph.defined)
    if args.list:
        for nid in reachable:
            print(f"  {graph.label[nid]}  ({graph.where[nid]})")
    for nid, why in failures:
        name = graph.label.get(nid, nid.split("|")[-1])
        print(f"FAIL: signal context reaches {nid.split('|')[-1]}: {why}\n  {name}\n{path_to(nid)}")
    unused = [k for k in INDIRECT_TARGETS if k not in used_indirect]
    print(f"{len(units)} translation units, {len(entries)} entry points "
          f"({len([e for e in entries.values() if e.startswith('sigaction')])} sigaction handlers), "
          f"{len(reachable)} reachable functions checked, "
          f"{sum(1 for k in INDIRECT_TARGETS if k in used_indirect)} indirect-call rules used")
    print("external functions reached: " + ", ".join(sorted(external_leaves)))
    if inlined_only:
        print("annotated but never emitted out of line (checked inside their callers): " + ", ".join(inlined_only))
    if unused:
        print("note: indirect-call rules no reachable function used: " + ", ".join(unused))
    if failures:
        return 1
    print("ok: no reachable function allocates, locks, uses stdio, throws or re-enters a shim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
