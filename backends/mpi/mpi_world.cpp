#include "backends/mpi/mpi_world.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <type_traits>

#include "topology/error.hpp"

namespace collsim {

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  if (MPI_Error_string(rc, text.data(), &len) != MPI_SUCCESS) len = 0;
  throw BackendError(fmt::format(
      "{}: {}", call, len > 0 ? std::string(text.data(), len) : fmt::format("MPI error {}", rc)));
}

namespace {
std::mutex g_session_mutex;
std::weak_ptr<MpiSession> g_session;  // MPI's process-wide state (see the header)
}  // namespace

std::shared_ptr<MpiSession> MpiSession::acquire() {
  std::lock_guard<std::mutex> lk(g_session_mutex);
  if (auto live = g_session.lock()) return live;
  int finalized = 0;
  mpi_check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized) {
    throw BackendError(
        "MPI was finalized already in this process and cannot be started again; keep one MPI "
        "backend open for the whole program");
  }
  int initialized = 0;
  mpi_check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (!initialized) {
    int provided = 0;
    mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  }
  std::shared_ptr<MpiSession> s(new MpiSession(!initialized));
  g_session = s;
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  if (owned_ && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
}

MpiWorld::MpiWorld() : session_(MpiSession::acquire()) {
  mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  MPI_Comm node = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  const int rc = MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);
  mpi_check(rc, "MPI_Comm_rank");
}

MpiWorld::~MpiWorld() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiWorld::barrier() { mpi_check(MPI_Barrier(comm_), "MPI_Barrier"); }

double MpiWorld::max(double v) {
  double out = 0;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

void MpiWorld::broadcast(std::vector<char>& bytes) {
  mpi_check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, comm_),
            "MPI_Bcast");
}

std::uint64_t MpiWorld::sum(std::uint64_t v) {
  std::uint64_t out = 0;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return out;
}

namespace {
// Gathers variable-length byte strings on process 0 (others get only their own back).
std::vector<std::vector<char>> gather_bytes(MPI_Comm comm, int size, int rank,
                                            const std::vector<char>& mine) {
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size);
  mpi_check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int i = 0; i < size; ++i) {
      displs[i] = total;
      total += counts[i];
    }
    all.resize(total);
  }
  mpi_check(MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(),
                        MPI_BYTE, 0, comm),
            "MPI_Gatherv");
  if (rank != 0) return {mine};
  std::vector<std::vector<char>> out(size);
  for (int i = 0; i < size; ++i) {
    out[i].assign(all.begin() + displs[i], all.begin() + displs[i] + counts[i]);
  }
  return out;
}
}  // namespace

std::vector<OpTiming> MpiWorld::gather(std::vector<OpTiming> mine) {
  static_assert(std::is_trivially_copyable_v<OpTiming>);
  std::vector<char> bytes(mine.size() * sizeof(OpTiming));
  if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<OpTiming> out;
  for (const std::vector<char>& part : gather_bytes(comm_, size_, rank_, bytes)) {
    const std::size_t k = part.size() / sizeof(OpTiming);
    const std::size_t at = out.size();
    out.resize(at + k);
    if (k > 0) std::memcpy(out.data() + at, part.data(), k * sizeof(OpTiming));
  }
  return out;
}

namespace {
// The tags of a request for a unit of work (empty, to process 0) and of its answer (the unit, or
// -1 when none is left): point-to-point messages on collsim's own communicator, so that any MPI
// carries them with MPI_THREAD_FUNNELED and needs no one-sided progress on process 0.
constexpr int kUnitRequestTag = 7101;
constexpr int kUnitAnswerTag = 7102;
}  // namespace

int MpiWorld::answer_unit_requests(const std::function<std::optional<std::size_t>()>& take) {
  int stopped = 0;
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, kUnitRequestTag, comm_, &waiting, &status), "MPI_Iprobe");
    if (!waiting) return stopped;
    const int from = status.MPI_SOURCE;
    mpi_check(MPI_Recv(nullptr, 0, MPI_BYTE, from, kUnitRequestTag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv");
    const std::optional<std::size_t> unit = take();
    const std::int64_t answer = unit ? static_cast<std::int64_t>(*unit) : -1;
    mpi_check(MPI_Send(&answer, 1, MPI_INT64_T, from, kUnitAnswerTag, comm_), "MPI_Send");
    if (!unit) ++stopped;
  }
}

std::optional<std::size_t> MpiWorld::request_unit() {
  mpi_check(MPI_Send(nullptr, 0, MPI_BYTE, 0, kUnitRequestTag, comm_), "MPI_Send");
  std::int64_t answer = -1;
  mpi_check(MPI_Recv(&answer, 1, MPI_INT64_T, 0, kUnitAnswerTag, comm_, MPI_STATUS_IGNORE),
            "MPI_Recv");
  if (answer < 0) return std::nullopt;
  return static_cast<std::size_t>(answer);
}

void MpiWorld::abort_all(int code) {
  if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

std::vector<std::string> MpiWorld::describe_processes() {
  const std::string me = ProcessGroup::describe_processes().front();
  std::vector<std::string> out;
  for (const std::vector<char>& part :
       gather_bytes(comm_, size_, rank_, std::vector<char>(me.begin(), me.end()))) {
    out.emplace_back(part.begin(), part.end());
  }
  return out;
}

std::vector<std::string> MpiWorld::gather_text(std::string mine) {
  std::vector<std::string> out;
  for (const std::vector<char>& part :
       gather_bytes(comm_, size_, rank_, std::vector<char>(mine.begin(), mine.end()))) {
    out.emplace_back(part.begin(), part.end());
  }
  return out;
}

}  // namespace collsim
