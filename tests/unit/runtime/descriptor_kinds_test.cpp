// Unit tests of the per-descriptor memory of long blocking I/O's kind (facade/descriptor_kinds.h):
// what it answers, for how long, and when a close makes it look again.
#include "facade/descriptor_kinds.h"

#include <gtest/gtest.h>

#include <memory>

namespace whatif::facade {
namespace {

using Kind = DescriptorKinds::Kind;
constexpr uint64_t kNow = 5'000'000'000ull;

TEST(DescriptorKinds, ANewDescriptorIsLookedUp) {
  auto kinds = std::make_unique<DescriptorKinds>();
  EXPECT_EQ(kinds->lookup(7, kNow), Kind::kUnknown);
}

TEST(DescriptorKinds, TheAnswerStandsForAWhileAndThenIsLookedUpAgain) {
  auto kinds = std::make_unique<DescriptorKinds>();
  kinds->remember(7, Kind::kWokenByThread, kNow);
  kinds->remember(8, Kind::kOther, kNow);
  EXPECT_EQ(kinds->lookup(7, kNow + 1), Kind::kWokenByThread);
  EXPECT_EQ(kinds->lookup(8, kNow + DescriptorKinds::kValidNs - 4), Kind::kOther);
  EXPECT_EQ(kinds->lookup(8, kNow + DescriptorKinds::kValidNs), Kind::kUnknown)
      << "a descriptor closed where no shim sees it may hold a pipe now";
}

TEST(DescriptorKinds, AClosedDescriptorIsLookedUpAgainWhateverItIsNow) {
  // fd 7 was a TCP socket; closed and reused for a pipe, a thread woken through it is credited.
  auto kinds = std::make_unique<DescriptorKinds>();
  kinds->remember(7, Kind::kOther, kNow);
  kinds->remember(9, Kind::kOther, kNow);
  kinds->forget(7);
  EXPECT_EQ(kinds->lookup(7, kNow + 1), Kind::kUnknown);
  EXPECT_EQ(kinds->lookup(9, kNow + 1), Kind::kOther) << "only the closed one";
  kinds->forget_range(3, ~0u);  // close_range(3, ~0U, 0), as programs that close everything do
  EXPECT_EQ(kinds->lookup(9, kNow + 1), Kind::kUnknown);
}

TEST(DescriptorKinds, DescriptorsBeyondTheTableAreAlwaysLookedUp) {
  auto kinds = std::make_unique<DescriptorKinds>();
  kinds->remember(DescriptorKinds::kCached, Kind::kOther, kNow);
  kinds->remember(-1, Kind::kOther, kNow);
  EXPECT_EQ(kinds->lookup(DescriptorKinds::kCached, kNow), Kind::kUnknown);
  EXPECT_EQ(kinds->lookup(-1, kNow), Kind::kUnknown);
  kinds->forget(DescriptorKinds::kCached);  // no effect, no out-of-bounds store
  kinds->forget(-3);
}

TEST(DescriptorKinds, AnEpollSetNamesItsDescriptorsOnlyIfEveryRegistrationDid) {
  // epoll_wait's events say which descriptor is ready only through data.fd: a set where one
  // registration carried a pointer instead cannot be read so, and an unknown set neither.
  auto kinds = std::make_unique<DescriptorKinds>();
  EXPECT_FALSE(kinds->epoll_names_fds(5)) << "no registration seen";
  kinds->note_epoll_registration(5, true);
  kinds->note_epoll_registration(5, true);
  EXPECT_TRUE(kinds->epoll_names_fds(5));
  kinds->note_epoll_registration(5, false);
  kinds->note_epoll_registration(5, true);
  EXPECT_FALSE(kinds->epoll_names_fds(5)) << "one registration with data.ptr spoils the set";
  kinds->forget(5);  // closed: a new set may take the number
  kinds->note_epoll_registration(5, true);
  EXPECT_TRUE(kinds->epoll_names_fds(5));
  kinds->note_epoll_registration(DescriptorKinds::kCached, true);  // beyond the table: ignored
  EXPECT_FALSE(kinds->epoll_names_fds(DescriptorKinds::kCached));
  EXPECT_FALSE(kinds->epoll_names_fds(-1));
}

}  // namespace
}  // namespace whatif::facade
