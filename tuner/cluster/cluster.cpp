#include "tuner/cluster/cluster.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#ifdef TUNEFUZZ_HAVE_MPI
#include <mpi.h>
#endif

#include "tuner/common/error.hpp"

namespace tunefuzz::cluster {

namespace fs = std::filesystem;

namespace {

#ifdef TUNEFUZZ_HAVE_MPI
// The message of a job sent to another rank, and of how it ended.
std::string job_message(const YAML::Node& job, const fs::path& directory, const std::string& name,
                        double timeout_s, const std::vector<std::string>& wrapper, double kernel_deadline_s,
                        int gpu) {
  YAML::Node m;
  m["job"] = job;
  m["directory"] = directory.string();
  m["name"] = name;
  m["timeout_s"] = timeout_s;
  m["wrapper"] = YAML::Node(YAML::NodeType::Sequence);
  for (const std::string& w : wrapper) m["wrapper"].push_back(w);
  m["kernel_deadline_s"] = kernel_deadline_s;
  m["gpu"] = gpu;
  return YAML::Dump(m);
}

std::string outcome_message(const WorkerOutcome& o) {
  YAML::Node m;
  m["end"] = static_cast<int>(o.end);
  m["exit_code"] = o.exit_code;
  m["signal"] = o.signal;
  if (o.result) m["result"] = o.result;
  m["last_progress"] = o.last_progress;
  m["stderr_tail"] = o.stderr_tail;
  m["seconds"] = o.seconds;
  m["kernel_overran"] = o.kernel_overran;
  m["kernel_deadline_s"] = o.kernel_deadline_s;
  return YAML::Dump(m);
}

WorkerOutcome outcome_of(const std::string& message) {
  const YAML::Node m = YAML::Load(message);
  WorkerOutcome o;
  o.end = static_cast<WorkerOutcome::End>(m["end"].as<int>());
  o.exit_code = m["exit_code"].as<int>();
  o.signal = m["signal"].as<int>();
  if (m["result"]) o.result = m["result"];
  o.last_progress = m["last_progress"].as<std::string>();
  o.stderr_tail = m["stderr_tail"].as<std::string>();
  o.seconds = m["seconds"].as<double>();
  o.kernel_overran = m["kernel_overran"].as<bool>();
  o.kernel_deadline_s = m["kernel_deadline_s"].as<double>();
  return o;
}

// Runs a job another rank sent; a directory this rank does not see is a job that could not start.
std::string execute(const std::string& message) {
  WorkerOutcome outcome;
  try {
    const YAML::Node m = YAML::Load(message);
    const fs::path directory = m["directory"].as<std::string>();
    if (!fs::is_directory(directory)) {
      outcome.stderr_tail = "rank " + std::to_string(rank()) + " does not see the work directory " +
                            directory.string() +
                            ": over MPI every rank needs the campaign's work directory and the kernel cache at "
                            "the same paths (one node, or a shared file system)";
      return outcome_message(outcome);
    }
    outcome = run_worker(m["job"], directory, m["name"].as<std::string>(), m["timeout_s"].as<double>(),
                         m["wrapper"].as<std::vector<std::string>>(), m["kernel_deadline_s"].as<double>(),
                         m["gpu"].as<int>());
  } catch (const std::exception& e) {
    outcome = WorkerOutcome{};
    outcome.stderr_tail = "rank " + std::to_string(rank()) + " could not run the job: " + e.what();
  }
  return outcome_message(outcome);
}

// Tags: a stop, a rank's GPU report; each job (and its answer) gets a tag of its own from kFirstJob up.
constexpr int kStopTag = 1, kGpusTag = 2, kFirstJob = 16;

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void send(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receive(int from, int tag, int* tag_out = nullptr) {
  MPI_Message message;
  MPI_Status status;
  MPI_Mprobe(from, tag, MPI_COMM_WORLD, &message, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  MPI_Mrecv(text.data(), count, MPI_CHAR, &message, MPI_STATUS_IGNORE);
  if (tag_out) *tag_out = status.MPI_TAG;
  return text;
}

std::atomic<bool> stopped{false};
#endif

}  // namespace

Session::Session(int* argc, char*** argv) {
#ifdef TUNEFUZZ_HAVE_MPI
  // Only under a launcher (mpirun, srun): a process started alone stays out of MPI altogether, so a build
  // with MPI runs exactly as one without when nobody asked for ranks.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
  if (!launched) return;
  // MPI needs threads: the campaign's pools send jobs from several at once.
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE && size() > 1) {
    std::fprintf(stderr, "tunefuzz: this MPI library cannot be used from several threads (MPI_THREAD_MULTIPLE)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#else
  (void)argc;
  (void)argv;
#endif
}

Session::~Session() {
#ifdef TUNEFUZZ_HAVE_MPI
  if (!mpi_running()) return;
  stop();
  MPI_Finalize();
#endif
}

int rank() {
#ifdef TUNEFUZZ_HAVE_MPI
  int r = 0;
  if (mpi_running()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
#else
  return 0;
#endif
}

int size() {
  int s = 1;
#ifdef TUNEFUZZ_HAVE_MPI
  if (mpi_running()) MPI_Comm_size(MPI_COMM_WORLD, &s);
#endif
  return s;
}

bool built_with_mpi() {
#ifdef TUNEFUZZ_HAVE_MPI
  return true;
#else
  return false;
#endif
}

void barrier() {
#ifdef TUNEFUZZ_HAVE_MPI
  if (size() > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void require_shared(const fs::path& directory, const std::string& what) {
#ifdef TUNEFUZZ_HAVE_MPI
  if (size() < 2) return;
  // Rank 0's token: a name and content no other campaign writes.
  std::string token;
  if (rank() == 0) token = std::to_string(std::random_device{}()) + "-" + std::to_string(std::random_device{}());
  int length = static_cast<int>(token.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  token.resize(static_cast<size_t>(length));
  MPI_Bcast(token.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  const fs::path file = directory / (".tunefuzz-ranks-" + token);
  if (rank() == 0) {
    std::error_code ec;
    fs::create_directories(directory, ec);
    std::ofstream(file) << token;
  }
  barrier();
  std::string read;
  std::ifstream(file) >> read;
  const int sees = read == token ? 1 : 0;
  std::vector<int> all(static_cast<size_t>(size()));
  MPI_Allgather(&sees, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rank() == 0) {
    std::error_code ec;
    fs::remove(file, ec);
  }
  std::string blind;
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r]) blind += (blind.empty() ? "" : ", ") + std::to_string(r);
  if (!blind.empty())
    throw Error(ErrorKind::bad_input, "rank(s) " + blind + " do not see " + what + " " + directory.string() +
                                          " as rank 0 does: over MPI every rank needs it at the same path (one "
                                          "node, or a shared file system)");
#else
  (void)directory;
  (void)what;
#endif
}

WorkerOutcome run_job(const YAML::Node& job, const fs::path& directory, const std::string& name, double timeout_s,
                      const std::vector<std::string>& wrapper, double kernel_deadline_s, Place place,
                      bool reuse) {
  if (place.rank == rank())
    return run_worker(job, directory, name, timeout_s, wrapper, kernel_deadline_s, place.gpu, reuse);
#ifdef TUNEFUZZ_HAVE_MPI
  // A tag per job in flight: a million before one comes round again, far below Open MPI's MPI_TAG_UB and far
  // above the jobs a campaign has in flight at once.
  static std::atomic<unsigned> jobs{0};
  const int tag = kFirstJob + static_cast<int>(jobs++ % (1u << 20));
  send(job_message(job, directory, name, timeout_s, wrapper, kernel_deadline_s, place.gpu), place.rank, tag);
  return outcome_of(receive(place.rank, tag));
#else
  throw Error(ErrorKind::internal, "a job for rank " + std::to_string(place.rank) + " in a build without MPI");
#endif
}

void serve(const YAML::Node& gpus) {
#ifdef TUNEFUZZ_HAVE_MPI
  send(YAML::Dump(gpus), 0, kGpusTag);
  // A thread per job (rank 0's pools decide how many run at once), let go when it has answered; stop waits
  // for the last answer.
  std::mutex mutex;
  std::condition_variable idle;
  int running = 0;
  for (;;) {
    int tag = 0;
    std::string message = receive(0, MPI_ANY_TAG, &tag);
    if (tag == kStopTag) break;
    {
      const std::lock_guard lock(mutex);
      ++running;
    }
    std::thread([&mutex, &idle, &running, message = std::move(message), tag] {
      send(execute(message), 0, tag);
      const std::lock_guard lock(mutex);
      if (--running == 0) idle.notify_all();
    }).detach();
  }
  std::unique_lock lock(mutex);
  idle.wait(lock, [&] { return running == 0; });
#else
  (void)gpus;
#endif
}

std::vector<YAML::Node> gather_gpus() {
  std::vector<YAML::Node> out;
#ifdef TUNEFUZZ_HAVE_MPI
  for (int r = 1; r < size(); ++r) out.push_back(YAML::Load(receive(r, kGpusTag)));
#endif
  return out;
}

void stop() {
#ifdef TUNEFUZZ_HAVE_MPI
  if (rank() != 0 || !mpi_running() || stopped.exchange(true)) return;
  for (int r = 1; r < size(); ++r) send("", r, kStopTag);
#endif
}

}  // namespace tunefuzz::cluster
