// The memory a benchmark run needs at its peak, so that a command can check it against what is
// available before anything is allocated.
#pragma once

namespace tcsolve::bench {

struct MemoryNeed {
  double host = 0;    ///< bytes of host memory
  double device = 0;  ///< bytes of device memory (0 on the cpu backend)
};

}  // namespace tcsolve::bench
