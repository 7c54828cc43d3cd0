// Running a group's local members on threads (the distributed K-means and solver): one thread
// per local member of the group, member 0 on the caller's. A member's failure that the others did
// not agree on (not runtime::AgreedFailure) aborts the group's communicators, so that no member
// stays blocked in a collective.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::runtime {

/// Calls work(m) for every local member m of `group`, each on a thread of its own (m = 0 on the
/// caller's), and waits for all of them. Then rethrows the first error of a member that failed
/// on its own, else the first agreed error (every member threw it); returns when none failed.
template <class Work>
void run_members(DeviceGroup& group, Work&& work) {
  const int members = group.local_members();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(members));
  std::vector<char> agreed_failures(static_cast<std::size_t>(members), 0);
  std::atomic<bool> aborted{false};
  auto guarded = [&](int m) {
    try {
      work(m);
    } catch (const AgreedFailure&) {  // every member throws it: nobody waits
      errors[static_cast<std::size_t>(m)] = std::current_exception();
      agreed_failures[static_cast<std::size_t>(m)] = 1;
    } catch (...) {  // the others may wait in a collective: end them
      errors[static_cast<std::size_t>(m)] = std::current_exception();
      if (!aborted.exchange(true)) group.abort();
    }
  };
  std::vector<std::thread> threads;
  for (int m = 1; m < members; ++m) threads.emplace_back(guarded, m);
  guarded(0);
  for (std::thread& t : threads) t.join();
  for (int m = 0; m < members; ++m)
    if (errors[static_cast<std::size_t>(m)] && !agreed_failures[static_cast<std::size_t>(m)])
      std::rethrow_exception(errors[static_cast<std::size_t>(m)]);
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tcsolve::runtime
