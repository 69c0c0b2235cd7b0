// Unit tests of runtime/unwind: snapshots of this test's own stack taken inside a leaf that sets up
// no frame (as glibc's memset), which a frame-pointer chain would skip past; and a perf sample's
// register and stack copy (runtime/os) unwound the same way. Runs on the test's main thread.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "os/perf_event.h"
#include "unwind/unwinder.h"

namespace {

constexpr std::size_t kCopiedStack = 4096;  // at most: the copy stops at the stack mapping's end

/// What the leaf captures: perf-ordered registers and the stack from its sp.
struct Captured {
  uint64_t regs[whatif::unwind::kRegisterCount];
  unsigned char stack[kCopiedStack];
  uint64_t stack_top;    ///< in: the end of this thread's stack mapping (never copied past)
  std::size_t copied;    ///< out: bytes copied from regs[kSp]
};

}  // namespace

extern "C" {
void whatif_unwind_test_leaf(Captured* out);  // the assembly below
void whatif_unwind_test_copy_stack(Captured* out);
void whatif_unwind_test_middle(Captured* out);
void whatif_unwind_test_outer(Captured* out);
}

// A leaf with no frame: it stores the registers at its first instruction (its IP there is its own
// address, CFA = rsp + 8, rbp still the caller's) and calls out to copy the stack while its own
// frame is live (the callee's frames are below the captured sp, so the copy is of the stack as it
// was at capture). Offsets are perf's register numbers times 8.
__asm__(R"(
  .text
  .globl whatif_unwind_test_leaf
  .type whatif_unwind_test_leaf, @function
whatif_unwind_test_leaf:
  .cfi_startproc
  movq %rax, 0(%rdi)
  movq %rbx, 8(%rdi)
  movq %rcx, 16(%rdi)
  movq %rdx, 24(%rdi)
  movq %rsi, 32(%rdi)
  movq %rdi, 40(%rdi)
  movq %rbp, 48(%rdi)
  movq %rsp, 56(%rdi)
  leaq whatif_unwind_test_leaf(%rip), %rax
  movq %rax, 64(%rdi)
  movq %r8, 128(%rdi)
  movq %r9, 136(%rdi)
  movq %r10, 144(%rdi)
  movq %r11, 152(%rdi)
  movq %r12, 160(%rdi)
  movq %r13, 168(%rdi)
  movq %r14, 176(%rdi)
  movq %r15, 184(%rdi)
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call whatif_unwind_test_copy_stack@PLT
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size whatif_unwind_test_leaf, .-whatif_unwind_test_leaf
)");

extern "C" {

// Copies the raw stack as the kernel does for a sample: byte by byte, past ASan's redzones (which
// only mark where locals may be used, and the copy uses none of them).
__attribute__((no_sanitize("address"))) void whatif_unwind_test_copy_stack(Captured* out) {
  uint64_t sp = out->regs[whatif::unwind::kSp];
  out->copied = std::min<uint64_t>(kCopiedStack, out->stack_top - sp);
  const volatile uint8_t* from = reinterpret_cast<const volatile uint8_t*>(sp);
  for (uint64_t i = 0; i < out->copied; ++i) out->stack[i] = from[i];
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void whatif_unwind_test_middle(Captured* out) {
  whatif_unwind_test_leaf(out);
  __asm__ volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
}

__attribute__((noinline)) void whatif_unwind_test_outer(Captured* out) {
  whatif_unwind_test_middle(out);
  __asm__ volatile("" ::: "memory");
}

}  // extern "C"

namespace {

using whatif::unwind::Snapshot;
using whatif::unwind::Unwinder;

/// The exported function containing `address` ("" when none).
std::string function_at(uint64_t address) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || info.dli_sname == nullptr) return "";
  return info.dli_sname;
}

/// Names of the frames: the IP's function, then the callers' (return addresses looked up at -1).
std::vector<std::string> names(const uint64_t* frames, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(function_at(i == 0 ? frames[i] : frames[i] - 1));
  return out;
}

Snapshot snapshot_of(const Captured& captured, std::size_t stack_bytes) {
  return Snapshot{captured.regs, captured.regs[whatif::unwind::kSp], captured.stack, stack_bytes};
}

class UnwinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(unwinder_.load()) << unwinder_.load_error();
    pthread_attr_t attr;
    ASSERT_EQ(pthread_getattr_np(pthread_self(), &attr), 0);
    void* base = nullptr;
    size_t size = 0;
    ASSERT_EQ(pthread_attr_getstack(&attr, &base, &size), 0);
    pthread_attr_destroy(&attr);
    captured_.stack_top = reinterpret_cast<uint64_t>(base) + size;
    whatif_unwind_test_outer(&captured_);
    ASSERT_GE(captured_.copied, 256u) << "the test's frames are in the copy";
  }
  Unwinder unwinder_;
  Captured captured_{};
};

TEST_F(UnwinderTest, FindsTheCallersOfALeafWithoutAFrame) {
  uint64_t frames[16];
  std::size_t count = unwinder_.unwind(snapshot_of(captured_, captured_.copied), frames, 16);
  ASSERT_GE(count, 4u);
  std::vector<std::string> got = names(frames, count);
  EXPECT_EQ(got[0], "whatif_unwind_test_leaf");
  EXPECT_EQ(got[1], "whatif_unwind_test_middle");
  EXPECT_EQ(got[2], "whatif_unwind_test_outer");
  // The return address into middle is the word at the leaf's sp.
  uint64_t at_sp = 0;
  std::memcpy(&at_sp, captured_.stack, sizeof(at_sp));
  EXPECT_EQ(frames[1], at_sp);
}

TEST_F(UnwinderTest, AFramePointerWalkFromTheSameLeafSkipsItsCaller) {
  // What the fix is for: rbp still holds outer's (or an older) frame, so a frame-pointer chain's
  // first return address is not in middle. Checked here so the DWARF test above means something.
  uint64_t rbp = captured_.regs[whatif::unwind::kBp];
  uint64_t sp = captured_.regs[whatif::unwind::kSp];
  if (rbp >= sp && rbp + 16 <= sp + captured_.copied) {
    uint64_t return_address = 0;
    std::memcpy(&return_address, captured_.stack + (rbp - sp) + 8, sizeof(return_address));
    EXPECT_NE(function_at(return_address - 1), "whatif_unwind_test_middle");
  }
}

TEST_F(UnwinderTest, StopsWhereTheStackCopyEnds) {
  uint64_t frames[16];
  // Only the return address into middle is in the copy: middle's own return address is beyond it.
  std::size_t count = unwinder_.unwind(snapshot_of(captured_, 8), frames, 16);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(function_at(frames[1] - 1), "whatif_unwind_test_middle");
  EXPECT_EQ(unwinder_.unwind(snapshot_of(captured_, 0), frames, 16), 1u);
}

TEST_F(UnwinderTest, StopsWhenAskedAndAtCapacity) {
  uint64_t frames[16];
  auto stop_in_middle = [](void*, uint64_t frame, std::size_t index) {
    return index > 0 && function_at(frame - 1) == "whatif_unwind_test_middle";
  };
  EXPECT_EQ(unwinder_.unwind(snapshot_of(captured_, captured_.copied), frames, 16, stop_in_middle), 2u);
  EXPECT_EQ(unwinder_.unwind(snapshot_of(captured_, captured_.copied), frames, 3), 3u);
}

TEST_F(UnwinderTest, AnIpWithoutUnwindInfoKeepsTheIpAndStaysInTheSnapshot) {
  // libunwind then guesses (a return address at sp, as after a call to a bad pointer); whatever it
  // finds, it reads only the snapshot and loaded objects, and the IP comes first.
  uint64_t regs[whatif::unwind::kRegisterCount];
  std::memcpy(regs, captured_.regs, sizeof(regs));
  regs[whatif::unwind::kIp] = 16;  // in no loaded object
  uint64_t frames[16];
  Snapshot snapshot{regs, regs[whatif::unwind::kSp], captured_.stack, captured_.copied};
  std::size_t count = unwinder_.unwind(snapshot, frames, 16);
  ASSERT_GE(count, 1u);
  EXPECT_LE(count, 16u);
  EXPECT_EQ(frames[0], 16u);
}

// ---- A real perf sample's snapshot --------------------------------------------------------------

extern "C" __attribute__((noinline)) void whatif_unwind_test_spin_caller(volatile uint64_t* sink, uint64_t bytes) {
  // memset on a buffer, the bug's shape: glibc's memset sets up no frame.
  static unsigned char buffer[256 * 1024];
  for (uint64_t done = 0; done < bytes; done += sizeof(buffer)) {
    std::memset(buffer, static_cast<int>(done), sizeof(buffer));
    __asm__ volatile("" : : "r"(buffer) : "memory");
    *sink = *sink + buffer[done % sizeof(buffer)];
  }
}

TEST(PerfSnapshot, SamplesInMemsetUnwindToTheirCaller) {
  whatif::os::PerfSampler sampler;
  int result = sampler.open(static_cast<pid_t>(syscall(SYS_gettid)), 200000, 0, 1);
  if (result == -EACCES || result == -EPERM || result == -ENOENT || result == -ENODEV) {
    GTEST_SKIP() << "perf_event_open denied here: " << std::strerror(-result);
  }
  ASSERT_EQ(result, 0) << std::strerror(-result);
  ASSERT_TRUE(sampler.has_stack());
  Unwinder unwinder;
  ASSERT_TRUE(unwinder.load()) << unwinder.load_error();
  ASSERT_EQ(sampler.enable(), 0);
  int samples = 0, with_stack = 0, in_caller = 0;
  volatile uint64_t sink = 0;
  for (int round = 0; round < 200 && in_caller < 5; ++round) {
    whatif_unwind_test_spin_caller(&sink, 64ull << 20);
    sampler.drain([&](const whatif::os::RawSample& sample) {
      ++samples;
      if (sample.user == nullptr) return;
      ++with_stack;
      EXPECT_EQ(sample.user->regs[whatif::unwind::kIp], sample.ip);
      EXPECT_EQ(sample.user->stack_start, sample.user->regs[whatif::unwind::kSp]);
      EXPECT_GT(sample.user->size, 0u);
      Snapshot snapshot{sample.user->regs, sample.user->stack_start, sample.user->bytes, sample.user->size};
      uint64_t frames[8];
      std::size_t count = unwinder.unwind(snapshot, frames, 8);
      if (function_at(sample.ip) == "whatif_unwind_test_spin_caller") return;  // not in memset
      for (std::size_t i = 1; i < count; ++i) {
        if (function_at(frames[i] - 1) == "whatif_unwind_test_spin_caller") {
          ++in_caller;
          break;
        }
      }
    });
  }
  sampler.disable();
  EXPECT_GT(samples, 0);
  EXPECT_EQ(with_stack, samples) << "every sample carries registers and stack";
  EXPECT_GE(in_caller, 5) << "samples inside memset unwound to the calling function";
}

}  // namespace
