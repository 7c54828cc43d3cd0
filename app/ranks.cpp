// This process in a job of several ranks (ranks.hpp).
#include "ranks.hpp"

#include "tcsolve/runtime/mpi.hpp"

namespace tcsolve::app {

JobRanks job_ranks() {
  JobRanks job;
  if (!runtime::MpiSession::active()) return job;
  job.world = runtime::mpi_world();
  job.rank = job.world->rank();
  job.size = job.world->size();
  return job;
}

RankFailure rank_failure(const std::exception* e) {
  if (!runtime::MpiSession::active()) return RankFailure::print;
  const JobRanks job = job_ranks();
  if (job.size < 2) return RankFailure::print;
  if (e == nullptr || dynamic_cast<const runtime::AgreedFailure*>(e) == nullptr) return RankFailure::abort_job;
  return job.speaks() ? RankFailure::print : RankFailure::silent;
}

}  // namespace tcsolve::app
