// Unit tests of the counting events' user-space reads (runtime/os/perf_counter): the perf page's
// seqlock read with a stand-in for the rdpmc instruction (offset plus the counter sign-extended from
// its width, no read while the kernel forbids it or the event has no counter, a retry when the kernel
// updated the page meanwhile), and on this machine's own events: the fallback to read(2) with its
// reason for a software event, and rdpmc itself where a hardware PMU exists.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstring>
#include <vector>

#include "os/perf_counter.h"

namespace whatif::os {
namespace {

perf_event_mmap_page readable_page(uint32_t index, int64_t offset, uint16_t width) {
  perf_event_mmap_page page;
  std::memset(&page, 0, sizeof(page));
  page.cap_user_rdpmc = 1;
  page.index = index;
  page.offset = offset;
  page.pmc_width = width;
  page.lock = 2;
  return page;
}

TEST(PerfCounterUserRead, OffsetPlusTheCounterSignExtendedFromItsWidth) {
  perf_event_mmap_page page = readable_page(3, 1000, 48);
  std::vector<uint32_t> asked;
  uint64_t value = 0;
  ASSERT_TRUE(read_user_page(&page, [&](uint32_t counter) { asked.push_back(counter); return 0xFFFFFFFFFFF0ull; }, value));
  EXPECT_EQ(asked, std::vector<uint32_t>{2}) << "rdpmc takes index - 1";
  EXPECT_EQ(value, 984u) << "a 48-bit counter of 2^48 - 16 is -16 after the offset";
  ASSERT_TRUE(read_user_page(&page, [](uint32_t) { return 5000ull; }, value));
  EXPECT_EQ(value, 6000u);
}

TEST(PerfCounterUserRead, NoReadWhenTheKernelForbidsItOrTheEventHasNoCounter) {
  int calls = 0;
  auto counting = [&](uint32_t) { ++calls; return 1ull; };
  uint64_t value = 7;
  perf_event_mmap_page no_counter = readable_page(0, 10, 48);  // a software event, or a disabled one
  EXPECT_FALSE(read_user_page(&no_counter, counting, value));
  perf_event_mmap_page forbidden = readable_page(2, 10, 48);
  forbidden.cap_user_rdpmc = 0;  // /sys/bus/event_source/devices/cpu/rdpmc = 0
  EXPECT_FALSE(read_user_page(&forbidden, counting, value));
  EXPECT_EQ(calls, 0) << "rdpmc would fault: it must not run";
  EXPECT_EQ(value, 7u);
}

TEST(PerfCounterUserRead, RetriesWhenTheKernelUpdatedThePageDuringTheRead) {
  perf_event_mmap_page page = readable_page(1, 100, 40);
  int calls = 0;
  uint64_t value = 0;
  ASSERT_TRUE(read_user_page(&page, [&](uint32_t) {
    if (++calls == 1) {  // the event was rescheduled meanwhile: new offset, new sequence
      page.offset = 500;
      page.lock += 2;
      return 1ull;
    }
    return 2ull;
  }, value));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(value, 502u) << "the second, consistent read";
}

TEST(PerfCounterUserRead, ASoftwareEventIsReadWithReadAndSaysWhy) {
  CountingEvent event;
  EventEncoding task_clock{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, true, true};
  int result = event.open(task_clock, 0, -1, {});
  if (result != 0) GTEST_SKIP() << "perf_event_open(task-clock) failed here: " << std::strerror(-result);
  std::string why = event.map_user_page();
  EXPECT_NE(why.find("cap_user_rdpmc 0"), std::string::npos) << why;
  uint64_t value = 0;
  EXPECT_FALSE(event.read_user(value)) << "no hardware counter behind a software event";
  CounterReading reading;
  EXPECT_TRUE(event.read(reading));
}

TEST(PerfCounterUserRead, AHardwareEventIsReadWithRdpmcWhereThereIsAPmu) {
  CountingEvent event;
  EventEncoding instructions{PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, true, true};
  int result = event.open(instructions, 0, -1, {});
  if (result != 0) GTEST_SKIP() << "no hardware PMU here (" << std::strerror(-result) << "): the read(2) path is tested above";
  std::string why = event.map_user_page();
  if (!why.empty()) GTEST_SKIP() << "the kernel forbids rdpmc here: " << why;
  uint64_t first = 0, second = 0;
  ASSERT_TRUE(event.read_user(first));
  volatile uint64_t sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + static_cast<uint64_t>(i);
  ASSERT_TRUE(event.read_user(second));
  EXPECT_GT(second - first, 100000u) << "instructions retired by the loop";
  CounterReading reading;
  ASSERT_TRUE(event.read(reading));
  EXPECT_GE(reading.value, second) << "read(2) and rdpmc count the same event";
}

}  // namespace
}  // namespace whatif::os
