// MPI as collsim uses it: the process-wide MPI session, and a ProcessGroup over its processes.
//
// MPI can be initialised once per process and never again after MPI_Finalize. MpiSession
// therefore is shared: MpiSession::acquire() starts MPI on first use (unless the program already
// did) and the last holder to let go finalises it (only if collsim started it). The state this
// guards is MPI's own, which is process-wide by definition; that is the one reason for the shared
// instance behind acquire().
//
//   MpiWorld world;                          // joins MPI_COMM_WORLD (a private duplicate)
//   world.barrier();
//   double slowest = world.max(my_seconds);  // MPI_Allreduce(MAX)
//
// Every MPI call's failure is a BackendError naming the call and MPI_Error_string's text.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace collsim {

class MpiSession {
 public:
  // Throws BackendError when MPI was finalised already or MPI_Init fails.
  static std::shared_ptr<MpiSession> acquire();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  explicit MpiSession(bool owned) : owned_(owned) {}
  bool owned_;
};

// Throws BackendError("<call>: <MPI_Error_string>") unless rc == MPI_SUCCESS.
void mpi_check(int rc, const char* call);

class MpiWorld final : public ProcessGroup {
 public:
  MpiWorld();
  ~MpiWorld() override;
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int size() const override { return size_; }
  int index() const override { return rank_; }
  int local_index() const override { return local_rank_; }
  void barrier() override;
  double max(double v) override;
  std::uint64_t sum(std::uint64_t v) override;
  void broadcast(std::vector<char>& bytes) override;
  std::vector<OpTiming> gather(std::vector<OpTiming> mine) override;
  std::vector<std::string> describe_processes() override;
  std::vector<std::string> gather_text(std::string mine) override;
  int answer_unit_requests(const std::function<std::optional<std::size_t>()>& take) override;
  std::optional<std::size_t> request_unit() override;
  void abort_all(int code) override;

  // A communicator private to collsim (a duplicate of MPI_COMM_WORLD), errors returned.
  MPI_Comm comm() const { return comm_; }

 private:
  std::shared_ptr<MpiSession> session_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int size_ = 1;
  int rank_ = 0;
  int local_rank_ = 0;
};

}  // namespace collsim
