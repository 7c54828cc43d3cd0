// The signal handlers that remove the app's live temporaries (signals.hpp).
#include "signals.hpp"

#include <signal.h>

namespace tcsolve::app {
namespace {

TempFileRegistry* g_registry = nullptr;  // set before the handlers are installed

/// Async-signal-safe: atomic loads, unlink(2), sigaction(2), raise(3).
extern "C" void remove_temporaries_and_die(int signal_number) {
  if (g_registry) g_registry->unlink_all();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signal_number, &dfl, nullptr);
  raise(signal_number);  // blocked in the handler: delivered, with the default action, on return
}

}  // namespace

TempFileRegistry& temporaries() {
  static TempFileRegistry registry;
  return registry;
}

void install_signal_cleanup() {
  g_registry = &temporaries();
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(signal_number, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    // The other two are blocked while one is handled: the registry is emptied once.
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    sigaddset(&action.sa_mask, SIGHUP);
    action.sa_flags = SA_RESTART;
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace tcsolve::app
