// Unit tests of the per-descriptor memory of long blocking I/O's kind (facade/descriptor_kinds.h):
// what it answers, for how long, and when a close makes it look again; and which I/O calls take the
// blocking protocol (facade::io_call).
#include "facade/descriptor_kinds.h"
#include "facade/runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

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

sockaddr_in ipv4(const char* address, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  inet_pton(AF_INET, address, &in.sin_addr);
  return in;
}

sockaddr_in6 ipv6(const char* address, uint16_t port) {
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(port);
  inet_pton(AF_INET6, address, &in6.sin6_addr);
  return in6;
}

template <typename Address>
bool own_peer(const DescriptorKinds& kinds, const Address& peer) {
  return kinds.is_own_peer(reinterpret_cast<const sockaddr*>(&peer), sizeof(peer));
}

template <typename Address>
void note(DescriptorKinds& kinds, int fd, const Address& local, bool listening) {
  const auto* address = reinterpret_cast<const sockaddr*>(&local);
  uint64_t key = listening ? DescriptorKinds::wildcard_port_key(address, sizeof(local)) : 0;
  kinds.note_own_endpoint(fd, key != 0 ? key : DescriptorKinds::endpoint_key(address, sizeof(local)));
}

TEST(DescriptorKinds, ATcpPeerIsOneOfOursWhenItIsAnEndpointWeListenOnOrConnectedFrom) {
  auto kinds = std::make_unique<DescriptorKinds>();
  EXPECT_FALSE(own_peer(*kinds, ipv4("127.0.0.1", 8080))) << "nothing noted: another process";
  note(*kinds, 5, ipv4("127.0.0.1", 8080), /*listening=*/true);
  note(*kinds, 6, ipv4("127.0.0.1", 40001), /*listening=*/false);
  EXPECT_TRUE(own_peer(*kinds, ipv4("127.0.0.1", 8080))) << "a client thread's socket: its peer is our listener";
  EXPECT_TRUE(own_peer(*kinds, ipv4("127.0.0.1", 40001))) << "the accepted socket: its peer is our connect";
  EXPECT_TRUE(own_peer(*kinds, ipv6("::ffff:127.0.0.1", 40001))) << "the same peer seen by a dual-stack socket";
  EXPECT_FALSE(own_peer(*kinds, ipv4("127.0.0.1", 40002))) << "a load generator's connection";
  EXPECT_FALSE(own_peer(*kinds, ipv4("10.0.0.2", 8080))) << "another host";
  kinds->forget(6);
  EXPECT_FALSE(own_peer(*kinds, ipv4("127.0.0.1", 40001))) << "closed: the port may be anyone's now";
  kinds->forget_range(3, 10);
  EXPECT_FALSE(own_peer(*kinds, ipv4("127.0.0.1", 8080)));
}

TEST(DescriptorKinds, AListenerOnAnyAddressServesLoopbackPeersOnItsPort) {
  auto kinds = std::make_unique<DescriptorKinds>();
  note(*kinds, 5, ipv4("0.0.0.0", 9000), /*listening=*/true);
  note(*kinds, 7, ipv6("::", 9001), /*listening=*/true);
  EXPECT_TRUE(own_peer(*kinds, ipv4("127.0.0.1", 9000)));
  EXPECT_TRUE(own_peer(*kinds, ipv4("127.0.0.5", 9000)));
  EXPECT_TRUE(own_peer(*kinds, ipv6("::1", 9001)));
  EXPECT_FALSE(own_peer(*kinds, ipv4("192.168.1.9", 9000))) << "not known to be this machine";
  EXPECT_FALSE(own_peer(*kinds, ipv4("127.0.0.1", 9002)));
}

TEST(DescriptorKinds, OnlyIpAddressesHaveEndpointKeys) {
  sockaddr unix_address{};
  unix_address.sa_family = AF_UNIX;
  EXPECT_EQ(DescriptorKinds::endpoint_key(&unix_address, sizeof(unix_address)), 0u);
  auto a = ipv6("2001:db8::1", 80), b = ipv6("2001:db8::2", 80);
  EXPECT_NE(DescriptorKinds::endpoint_key(reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0u);
  EXPECT_NE(DescriptorKinds::endpoint_key(reinterpret_cast<sockaddr*>(&a), sizeof(a)),
            DescriptorKinds::endpoint_key(reinterpret_cast<sockaddr*>(&b), sizeof(b)));
  auto c = ipv4("127.0.0.1", 80);
  EXPECT_EQ(DescriptorKinds::endpoint_key(reinterpret_cast<sockaddr*>(&c), sizeof(c) - 1), 0u) << "too short";
}

TEST(DescriptorKinds, WhetherADescriptorWasNonBlockingIsRememberedWithItsKind) {
  auto kinds = std::make_unique<DescriptorKinds>();
  kinds->remember(7, DescriptorKinds::Entry{Kind::kOther, true}, kNow);
  kinds->remember(8, DescriptorKinds::Entry{Kind::kWokenByThread, false}, kNow);
  EXPECT_TRUE(kinds->lookup_entry(7, kNow + 1).nonblocking);
  EXPECT_EQ(kinds->lookup(7, kNow + 1), Kind::kOther);
  EXPECT_FALSE(kinds->lookup_entry(8, kNow + 1).nonblocking);
  EXPECT_EQ(kinds->lookup(8, kNow + 1), Kind::kWokenByThread);
  kinds->forget_kind(7);  // fcntl(F_SETFL)
  EXPECT_EQ(kinds->lookup(7, kNow + 1), Kind::kUnknown);
  EXPECT_FALSE(kinds->lookup_entry(7, kNow + DescriptorKinds::kValidNs).nonblocking);
}

TEST(IoCalls, OnlyACallThatCanWaitTakesTheBlockingProtocol) {
  // A server's non-blocking sockets: the call cannot wait, so it neither blocks nor is woken, and
  // the protocol around it (clock reads, the runnable count) was pure cost: 0.2-0.5 us a call.
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  int file = open("/proc/self/stat", O_RDONLY);
  ASSERT_GE(file, 0);
  EXPECT_EQ(io_call(pipe_ends[0], false), IoCall::kMayBeWokenByThread) << "a blocking pipe: another thread ends its wait";
  EXPECT_EQ(io_call(pipe_ends[0], true), IoCall::kWakes) << "MSG_DONTWAIT: it cannot wait, but a reader may wake";
  EXPECT_EQ(io_call(file, false), IoCall::kWokenByIo);

  ASSERT_EQ(fcntl(pipe_ends[0], F_SETFL, O_NONBLOCK), 0);
  ASSERT_EQ(fcntl(file, F_SETFL, O_NONBLOCK), 0);
  EXPECT_EQ(io_call(pipe_ends[0], false), IoCall::kMayBeWokenByThread) << "remembered until the flags change";
  descriptor_flags_changed(pipe_ends[0]);  // the fcntl shim's call
  descriptor_flags_changed(file);
  EXPECT_EQ(io_call(pipe_ends[0], false), IoCall::kWakes);
  EXPECT_EQ(io_call(file, false), IoCall::kNothing) << "neither waits nor wakes a thread of the program";

  ASSERT_EQ(fcntl(pipe_ends[0], F_SETFL, 0), 0);
  descriptor_flags_changed(pipe_ends[0]);
  EXPECT_EQ(io_call(pipe_ends[0], false), IoCall::kMayBeWokenByThread) << "blocking again";
  for (int fd : {pipe_ends[0], pipe_ends[1], file}) {
    close(fd);
    descriptors_closed(static_cast<unsigned int>(fd), static_cast<unsigned int>(fd));
  }
}

}  // namespace
}  // namespace whatif::facade
