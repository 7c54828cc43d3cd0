// The distributed C API (tcsolve_mpi.h), compiled into libtcsolve only in a build with MPI:
// tcsolveCreateDistributed (a handle holding a DeviceGroup of host members over a duplicate of
// the caller's communicator, and the grid) and tcsolvePdgesv (ScaLAPACK pdgesv's arguments
// checked in one agreed step, so that a bad argument on any rank ends every rank with the same
// status and message; then tcsolve::solve(DistributedSystem, options, group), whose own errors
// are agreed too, and this rank's piece of X written into B).
#include "tcsolve_mpi.h"

#include <algorithm>
#include <memory>
#include <vector>
#include <string>

#include "arguments.hpp"
#include "context.hpp"
#include "solve_params.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/mpi.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::capi {
namespace {

/// The 1-based offsets ia, ja, ib, jb: 1 only for now.
void whole_matrix(const char* name, std::int64_t v) {
  if (v != 1)
    throw InvalidInput(std::string(name) + ": " + text(v) +
                       " (only 1 for now: the solve takes the whole global A and B, no submatrix)");
}

Descriptor descriptor(const int* d) {
  return Descriptor{d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8]};
}

}  // namespace
}  // namespace tcsolve::capi

using namespace tcsolve;
using namespace tcsolve::capi;

extern "C" {

tcsolveStatus_t tcsolveCreateDistributed(tcsolveHandle_t* handle, tcsolveBackend_t backend, MPI_Comm comm,
                                         int nprow, int npcol) {
  return guarded(nullptr, "tcsolveCreateDistributed", [&] {
    not_null("handle", handle);
    *handle = nullptr;
    if (backend != TCSOLVE_BACKEND_AUTO && backend != TCSOLVE_BACKEND_CPU && backend != TCSOLVE_BACKEND_CUDA)
      throw InvalidInput("backend: " + std::to_string(static_cast<int>(backend)) +
                         " is not TCSOLVE_BACKEND_AUTO, _CPU or _CUDA");
    // mpi_communicator checks that MPI is initialized (InvalidInput otherwise)
    if (comm == MPI_COMM_NULL) throw InvalidInput("comm: MPI_COMM_NULL");
    // the duplicate first (a collective on every rank), then the grid checked in agreement
    // cuda: every rank a GPU member (NCCL bootstrapped over the duplicate); a rank without a
    // device ends every rank with the same Unavailable
    const bool cuda = backend == TCSOLVE_BACKEND_CUDA;
    auto group = std::make_shared<runtime::DeviceGroup>(runtime::DeviceGroup::mpi(
        runtime::mpi_communicator(&comm), cuda ? runtime::Memory::device : runtime::Memory::host));
    runtime::agreed(group->host_communicator(), [&] {
      if (nprow < 1 || npcol < 1)
        throw InvalidInput("nprow x npcol = " + std::to_string(nprow) + " x " + std::to_string(npcol) +
                           ": both must be >= 1");
      check_grid(Grid{nprow, npcol}, group->size());
    });
    auto h = std::make_unique<tcsolveContext>();
    h->backend = cuda ? Backend::cuda : Backend::cpu;
    h->group = std::move(group);
    h->nprow = nprow;
    h->npcol = npcol;
    register_handle(h.get());
    *handle = h.release();
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolvePdgesv(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, int64_t nrhs,
                              const double* A, int64_t ia, int64_t ja, const int desca[9], double* B, int64_t ib,
                              int64_t jb, const int descb[9], tcsolveSolveInfo_t* info) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolvePdgesv")) return s;
  h->interrupt.store(false);
  h->last_solve = LastSolve{};
  return guarded(h, "tcsolvePdgesv", [&] {
    if (!h->group)
      throw InvalidInput("h: not a distributed handle (make it with tcsolveCreateDistributed of tcsolve_mpi.h)");
    runtime::Communicator& comm = *h->group->host_communicator();
    const Grid grid{h->nprow, h->npcol};
    const int prow = grid.row_of(comm.rank()), pcol = grid.col_of(comm.rank());
    SolveOptions options;
    DistributedSystem sys;
    sys.grid = grid;
    // every argument of every rank checked in one agreed step: the lowest failing rank's message
    runtime::agreed(&comm, [&] {
      const tcsolveSolveParams_t p = read_params(params);
      options = solve_options(p, h->backend);
      if (p.row_major != 0) throw InvalidInput("params->row_major: 1 (descriptors lay out column-major pieces only)");
      nonnegative("n", n);
      nonnegative("nrhs", nrhs);
      whole_matrix("ia", ia);
      whole_matrix("ja", ja);
      whole_matrix("ib", ib);
      whole_matrix("jb", jb);
      not_null("desca", desca);
      not_null("descb", descb);
      sys.desc_a = descriptor(desca);
      sys.desc_b = descriptor(descb);
      validate(sys.desc_a, grid, prow, "desca");
      validate(sys.desc_b, grid, prow, "descb");
      if (sys.desc_a.m != n || sys.desc_a.n != n)
        throw InvalidInput("desca: M x N = " + text(sys.desc_a.m) + " x " + text(sys.desc_a.n) + " is not n x n = " +
                           text(n) + " x " + text(n) + " (the whole global A only for now)");
      if (sys.desc_b.m != n || sys.desc_b.n != nrhs)
        throw InvalidInput("descb: M x N = " + text(sys.desc_b.m) + " x " + text(sys.desc_b.n) +
                           " is not n x nrhs = " + text(n) + " x " + text(nrhs) + " (the whole global B only for now)");
      if (sys.desc_a.local_rows(grid, prow) * sys.desc_a.local_cols(grid, pcol) > 0) not_null("A", A);
      if (sys.desc_b.local_rows(grid, prow) * sys.desc_b.local_cols(grid, pcol) > 0) not_null("B", B);
    });
    if (n == 0 || nrhs == 0) {
      if (info) *info = tcsolveSolveInfo_t{1, 0, 0, params ? params->variant : static_cast<int>(Variant::auto_), 0.0, -1.0};
      return TCSOLVE_STATUS_SUCCESS;
    }
    sys.A = A;
    sys.B = B;
    // cuda: A and B may be host or device pointers (A is read on the device where it is; B goes
    // through a host copy of this rank's piece, X back the same way)
    const bool cuda = h->backend == Backend::cuda;
    const std::size_t b_count = static_cast<std::size_t>(sys.desc_b.lld) *
                                static_cast<std::size_t>(std::max(0, sys.desc_b.local_cols(grid, pcol)));
    const bool b_on_device = cuda && b_count > 0 && cuda::pointer_device(B) >= 0;
    sys.a_on_device = cuda && A != nullptr && cuda::pointer_device(A) >= 0;
    std::vector<double> b_host;
    if (b_on_device) {
      b_host.resize(b_count);
      cuda::copy_to_host(b_host.data(), B, b_count * sizeof(double));
      sys.B = b_host.data();
    }
    const SolveResult r = solve(sys, options, *h->group);
    if (b_on_device) {
      scatter(r.x.data(), static_cast<int>(r.x.rows()), sys.desc_b, grid, prow, pcol, b_host.data());
      cuda::copy_to_device(B, b_host.data(), b_count * sizeof(double));
    } else {
      scatter(r.x.data(), static_cast<int>(r.x.rows()), sys.desc_b, grid, prow, pcol, B);
    }
    h->last_solve = record_solve(r);
    fill_info(r, info);
    return solve_status(h, "tcsolvePdgesv", r);
  });
}

}  // extern "C"
