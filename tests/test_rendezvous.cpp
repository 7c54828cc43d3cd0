// The meeting of a process' GPU members before each collective (runtime/internal/tcsolve/
// runtime/rendezvous.hpp), on cpu threads:
//   - no thread leaves a round before every thread has arrived: each thread adds to the round's
//     count before the barrier and reads it after, over many rounds (a thread that left early,
//     or a round opened twice, would read a short count);
//   - rounds do not mix: the count of the next round is never seen before this round is open;
//   - abort() releases threads already waiting and later calls, with Error, within a timeout;
//   - a count of one never waits.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/rendezvous.hpp"

namespace {

using tcsolve::runtime::detail::Rendezvous;

TEST_CASE("the members' rendezvous lets no thread through a round before all arrive", "[rendezvous]") {
  for (const int threads : {2, 3, 4}) {
    INFO(threads << " threads");
    constexpr int kRounds = 3000;
    Rendezvous meet(threads);
    std::vector<std::atomic<int>> arrived(kRounds);
    for (auto& a : arrived) a.store(0);
    std::atomic<int> short_counts{0}, early{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (int r = 0; r < kRounds; ++r) {
          arrived[static_cast<std::size_t>(r)].fetch_add(1);
          meet.arrive_and_wait();
          if (arrived[static_cast<std::size_t>(r)].load() != threads) short_counts.fetch_add(1);
          // the next round cannot be complete yet: this thread has not arrived there
          if (r + 1 < kRounds && arrived[static_cast<std::size_t>(r) + 1].load() >= threads) early.fetch_add(1);
        }
      });
    for (auto& th : pool) th.join();
    CHECK(short_counts.load() == 0);
    CHECK(early.load() == 0);
  }
}

TEST_CASE("the members' rendezvous: abort() releases the waiting threads and later calls with Error", "[rendezvous]") {
  Rendezvous meet(4);
  std::atomic<int> released{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; ++t)  // three of four: they wait until aborted
    pool.emplace_back([&] {
      try {
        meet.arrive_and_wait();
      } catch (const tcsolve::Error&) {
        released.fetch_add(1);
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(released.load() == 0);
  const auto t0 = std::chrono::steady_clock::now();
  meet.abort();
  for (auto& th : pool) th.join();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(released.load() == 3);
  CHECK(waited < 5.0);  // a generous bound for a loaded machine: released, not timed out
  CHECK_THROWS_AS(meet.arrive_and_wait(), tcsolve::Error);
}

TEST_CASE("the members' rendezvous of one thread never waits", "[rendezvous]") {
  Rendezvous meet(1);
  for (int r = 0; r < 100; ++r) meet.arrive_and_wait();
  SUCCEED();
}

}  // namespace
