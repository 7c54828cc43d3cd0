// SIGINT, SIGTERM and SIGHUP while files are being written: the app's one registry of live
// temporary files (tcsolve/io/output_file.hpp), emptied by the signal handlers before the
// process dies of the signal, so that nothing is left behind.
#pragma once

#include "tcsolve/io/output_file.hpp"

namespace tcsolve::app {

/// The app's registry of live temporaries: every writer records its temporary here (through
/// OutputOptions::temporaries, see output_options in cli_util.hpp).
TempFileRegistry& temporaries();

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink every registered temporary,
/// restore the default disposition and raise the signal again, so that the process still dies
/// of it (the exit status says "killed by SIGINT"). A signal the process started with ignored
/// (nohup, `cmd &` without job control) stays ignored. Call once, first thing in main.
void install_signal_cleanup();

}  // namespace tcsolve::app
