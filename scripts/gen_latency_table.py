#!/usr/bin/env python3
# Generates the stall analysis's x86-64 latency/throughput table (analysis/stalls) from LLVM's
# scheduling models: one representative instruction per (mnemonic, operand form) is assembled with
# llvm-mc, the ones LLVM accepts go through `llvm-mca -instruction-tables -mcpu=CPU`, and each row
# (uops, latency, reciprocal throughput, may-load, may-store) becomes a C++ initializer keyed by the
# form the analysis computes from Zydis ("add r64,m64"). Run by CMake at build time; its output for
# znver3 is committed as the fallback (analysis/stalls/latency_table_fallback.inc).
# LLVM's scheduling models are Apache-2.0 WITH LLVM-exception: deriving a table from them is allowed.
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

INT2 = "add adc sub sbb and or xor cmp test mov imul xchg".split()
INT1 = "inc dec neg not mul div idiv push pop bswap".split()
SHIFTS = "shl shr sar rol ror".split()
CMOVS = "cmove cmovne cmovl cmovle cmovg cmovge cmovb cmovbe cmova cmovae cmovs cmovns".split()
SETS = "sete setne setl setle setg setge setb setbe seta setae".split()
BITS = "bt bts btr btc bsf bsr lzcnt tzcnt popcnt andn".split()
SSE2 = ("addsd subsd mulsd divsd sqrtsd minsd maxsd addss subss mulss divss sqrtss minss maxss "
        "addpd subpd mulpd divpd sqrtpd addps subps mulps divps sqrtps andpd andps orpd orps xorpd xorps "
        "movapd movaps movupd movups movsd movss movdqa movdqu paddd paddq psubd psubq pxor pand por "
        "pcmpeqb pcmpeqd pminub pmaxub pshufd punpcklqdq ucomisd ucomiss comisd comiss cvtsi2sd cvttsd2si "
        "cvtsd2ss cvtss2sd unpcklpd shufps pmulld pmuludq").split()
AVX3 = ("vaddsd vsubsd vmulsd vdivsd vaddpd vsubpd vmulpd vdivpd vaddps vsubps vmulps vdivps vxorps vxorpd "
        "vandps vandpd vpaddd vpaddq vpxor vpand vpor vfmadd231sd vfmadd231pd vfmadd231ps vpcmpeqb vpminub").split()
AVX2 = "vmovapd vmovaps vmovupd vmovups vmovdqa vmovdqu vsqrtpd vsqrtps vpshufd vbroadcastss".split()
MISC0 = "nop ret cdq cqo cld lfence mfence sfence pause rdtsc".split()
JCC = "jmp je jne jl jle jg jge jb jbe ja jae js jns call".split()

REG = {64: "rcx", 32: "ecx", 16: "cx", 8: "cl"}
REG2 = {64: "rdx", 32: "edx", 16: "dx", 8: "dl"}
MEM = {64: "qword ptr [rbx + 8]", 32: "dword ptr [rbx + 8]", 16: "word ptr [rbx + 8]", 8: "byte ptr [rbx + 8]",
       128: "xmmword ptr [rbx + 16]", 256: "ymmword ptr [rbx + 32]"}


def candidates():
    """(form, assembly) pairs; the form is what the analysis computes from a decoded instruction."""
    out = []
    for m in INT2:
        for w in (64, 32, 16, 8):
            out.append((f"{m} r{w},r{w}", f"{m} {REG[w]}, {REG2[w]}"))
            out.append((f"{m} r{w},m{w}", f"{m} {REG[w]}, {MEM[w]}"))
            out.append((f"{m} m{w},r{w}", f"{m} {MEM[w]}, {REG[w]}"))
            out.append((f"{m} r{w},i", f"{m} {REG[w]}, 42"))
            out.append((f"{m} m{w},i", f"{m} {MEM[w]}, 42"))
    for w in (64, 32):
        out.append((f"imul r{w},r{w},i", f"imul {REG[w]}, {REG2[w]}, 42"))
        out.append((f"lea r{w},m", f"lea {REG[w]}, [rbx + 8*rsi + 16]"))
        out.append((f"movzx r{w},m8", f"movzx {REG[w]}, byte ptr [rbx]"))
        out.append((f"movzx r{w},r8", f"movzx {REG[w]}, dl"))
        out.append((f"movsx r{w},m8", f"movsx {REG[w]}, byte ptr [rbx]"))
        out.append((f"movsx r{w},r8", f"movsx {REG[w]}, dl"))
    out.append(("movsxd r64,r32", "movsxd rcx, edx"))
    out.append(("movsxd r64,m32", "movsxd rcx, dword ptr [rbx]"))
    out.append(("lea r64,m", "lea rcx, [rbx + 8*rsi + 16]"))
    for m in INT1:
        for w in (64, 32, 8):
            out.append((f"{m} r{w}", f"{m} {REG[w]}"))
            out.append((f"{m} m{w}", f"{m} {MEM[w]}"))
    for m in SHIFTS:
        for w in (64, 32):
            out.append((f"{m} r{w},i", f"{m} {REG[w]}, 3"))
            out.append((f"{m} r{w},r8", f"{m} {REG2[w]}, cl"))
            out.append((f"{m} m{w},i", f"{m} {MEM[w]}, 3"))
    for m in CMOVS:
        for w in (64, 32):
            out.append((f"{m} r{w},r{w}", f"{m} {REG[w]}, {REG2[w]}"))
            out.append((f"{m} r{w},m{w}", f"{m} {REG[w]}, {MEM[w]}"))
    for m in SETS:
        out.append((f"{m} r8", f"{m} cl"))
    for m in BITS:
        for w in (64, 32):
            out.append((f"{m} r{w},r{w}", f"{m} {REG[w]}, {REG2[w]}"))
            out.append((f"{m} r{w},m{w}", f"{m} {REG[w]}, {MEM[w]}"))
    out.append(("andn r64,r64,r64", "andn rcx, rdx, rsi"))
    for m in SSE2:
        out.append((f"{m} r128,r128", f"{m} xmm1, xmm2"))
        for w in (128, 64, 32):
            out.append((f"{m} r128,m{w}", f"{m} xmm1, {MEM[w]}"))
        out.append((f"{m} m128,r128", f"{m} {MEM[128]}, xmm1"))
        out.append((f"{m} m64,r128", f"{m} {MEM[64]}, xmm1"))
        out.append((f"{m} m32,r128", f"{m} {MEM[32]}, xmm1"))
        out.append((f"{m} r128,r64", f"{m} xmm1, rcx"))
        out.append((f"{m} r64,r128", f"{m} rcx, xmm1"))
        out.append((f"{m} r32,r128", f"{m} ecx, xmm1"))
        out.append((f"{m} r128,r128,i", f"{m} xmm1, xmm2, 3"))
    for m in ("movq", "movd"):
        out.append((f"{m} r128,r64", f"{m} xmm1, rcx"))
        out.append((f"{m} r64,r128", f"{m} rcx, xmm1"))
        out.append((f"{m} r128,r32", f"{m} xmm1, ecx"))
        out.append((f"{m} r32,r128", f"{m} ecx, xmm1"))
        out.append((f"{m} r128,m64", f"{m} xmm1, {MEM[64]}"))
        out.append((f"{m} m64,r128", f"{m} {MEM[64]}, xmm1"))
    for m in AVX3:
        for r, w in (("xmm", 128), ("ymm", 256)):
            out.append((f"{m} r{w},r{w},r{w}", f"{m} {r}1, {r}2, {r}3"))
            out.append((f"{m} r{w},r{w},m{w}", f"{m} {r}1, {r}2, {MEM[w]}"))
        out.append((f"{m} r128,r128,m64", f"{m} xmm1, xmm2, {MEM[64]}"))
    for m in AVX2:
        for r, w in (("xmm", 128), ("ymm", 256)):
            out.append((f"{m} r{w},r{w}", f"{m} {r}1, {r}2"))
            out.append((f"{m} r{w},m{w}", f"{m} {r}1, {MEM[w]}"))
            out.append((f"{m} m{w},r{w}", f"{m} {MEM[w]}, {r}1"))
    for m in MISC0:
        out.append((m, m))
    for m in JCC:
        out.append((f"{m} rel", f"{m} 1f"))
    out.append(("jmp r64", "jmp rcx"))
    out.append(("jmp m64", "jmp qword ptr [rbx + 8]"))
    out.append(("call r64", "call rcx"))
    out.append(("call m64", "call qword ptr [rbx + 8]"))
    for p in ("rep stosb", "rep movsb", "rep stosq", "rep movsq"):
        out.append((p, p))
    return out


def accepted(pairs, mc):
    """The pairs llvm-mc assembles (it reports each bad line and goes on)."""
    text = ".intel_syntax noprefix\n" + "".join(f"{asm}\n1:\n" for _, asm in pairs)
    with tempfile.NamedTemporaryFile("w", suffix=".s") as f:
        f.write(text)
        f.flush()
        result = subprocess.run([mc, "-triple=x86_64", "-filetype=null", f.name], capture_output=True, text=True)
    bad = set()
    for match in re.finditer(r":(\d+):\d+: error", result.stderr):
        bad.add(int(match.group(1)))
    # Line 1 is the directive; pair i is on line 2 + 2i.
    return [p for i, p in enumerate(pairs) if 2 + 2 * i not in bad]


def table(pairs, mca, cpu):
    text = ".intel_syntax noprefix\n" + "".join(f"{asm}\n" for _, asm in pairs if not asm.endswith(" 1f"))
    branches = [p for p in pairs if p[1].endswith(" 1f")]
    # Direct branches: a label each, after the straight-line code (llvm-mca reads one block).
    text += "".join(f"{asm.replace(' 1f', ' 2f')}\n" for _, asm in branches) + "2:\n"
    ordered = [p for p in pairs if not p[1].endswith(" 1f")] + branches
    with tempfile.NamedTemporaryFile("w", suffix=".s") as f:
        f.write(text)
        f.flush()
        result = subprocess.run([mca, f"-mcpu={cpu}", "-instruction-tables", "-iterations=1", f.name],
                                capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"llvm-mca failed: {result.stderr[:2000]}")
    rows = []
    started = False
    for line in result.stdout.splitlines():
        if "Instructions:" in line and line.lstrip().startswith("[1]"):
            started = True
            continue
        if not started:
            continue
        if not line.strip():
            if rows:
                break
            continue
        m = re.match(r"\s*(\d+)\s+(\d+)\s+([\d.]+)\s+(.*)$", line)
        if not m:
            continue
        flags = m.group(4)
        rows.append((int(m.group(1)), int(m.group(2)), float(m.group(3)), "*" in flags[:8], "*" in flags[8:16]))
    if len(rows) != len(ordered):
        raise RuntimeError(f"llvm-mca printed {len(rows)} rows for {len(ordered)} instructions")
    return [(form, *row) for (form, _), row in zip(ordered, rows)]


def host_cpu(mca):
    """The CPU llvm-mca detects here, or None when it cannot name it (a VM's "(unknown)")."""
    out = subprocess.run([mca, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"Host CPU:\s*(\S+)", out)
    return m.group(1) if m and not m.group(1).startswith("(") else None


def use_fallback(output, why):
    """Copies the committed znver3 table, as the build does when llvm-mca is not installed."""
    fallback = Path(__file__).resolve().parent.parent / "analysis/stalls/latency_table_fallback.inc"
    print(f"gen_latency_table.py: {why}; using the committed table ({fallback.name})", file=sys.stderr)
    shutil.copyfile(fallback, output)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: gen_latency_table.py LLVM_MCA LLVM_MC OUTPUT [CPU]")
    mca, mc, output = sys.argv[1:4]
    cpu = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else host_cpu(mca)
    if cpu is None:
        use_fallback(output, f"{mca} cannot name this machine's CPU (set WHATIF_MCA_CPU to choose one)")
        return
    version = subprocess.run([mca, "--version"], capture_output=True, text=True).stdout
    llvm = re.search(r"LLVM version ([\d.]+)", version)
    try:
        rows = table(accepted(candidates(), mc), mca, cpu)
    except RuntimeError as error:
        use_fallback(output, str(error).splitlines()[0])
        return
    seen = set()
    with open(output, "w") as out:
        out.write(f"// Generated by scripts/gen_latency_table.py: llvm-mca {llvm.group(1) if llvm else '?'} "
                  f"-instruction-tables -mcpu={cpu}.\n// Data: LLVM's scheduling model for {cpu} "
                  "(Apache-2.0 WITH LLVM-exception). Columns: form, uops, latency, reciprocal throughput,\n"
                  "// may load, may store.\n")
        out.write(f'#define WHATIF_LATENCY_CPU "{cpu}"\n')
        out.write(f'#define WHATIF_LATENCY_SOURCE "llvm-mca {llvm.group(1) if llvm else "?"} -instruction-tables -mcpu={cpu}"\n')
        for form, uops, latency, rthroughput, load, store in rows:
            if form in seen:
                continue
            seen.add(form)
            out.write(f'{{"{form}", {uops}, {latency}, {rthroughput}, {str(load).lower()}, {str(store).lower()}}},\n')


if __name__ == "__main__":
    main()
