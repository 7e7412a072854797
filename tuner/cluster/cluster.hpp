// Campaigns over several processes, on one node or many: `mpirun -n N tune run CONFIG` (and `fuzz run`).
// Rank 0 runs the campaign as one process would and alone writes the table, the journal and the reports;
// every rank first compiles its share of the candidates into the kernel cache (rank 0 then finds them
// there), then each other rank reports its GPUs to rank 0 and runs, on them, the worker jobs rank 0 sends it
// (fuzz, time and sanitizer jobs, exactly as a local worker pool would), until rank 0 says stop.
// All ranks must see the kernel cache and the campaign's work directory at the same paths (one node, or a
// shared file system): prepare() checks the cache, a job whose directory a rank cannot see fails to start.
// A rank that dies ends the MPI job (Open MPI's default); the campaign then resumes from rank 0's journal
// (`--resume`). Without MPI in the build (TUNEFUZZ_MPI=OFF), or started without mpirun, the process is rank 0
// of 1 and every function here is the single-process behaviour.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/worker/worker_client.hpp"

namespace tunefuzz::cluster {

/// Where a worker job runs: on rank `rank`, shown GPU `gpu` of that rank's node alone (-1: what the rank sees).
struct Place {
  int rank = 0;
  int gpu = -1;
};

/// MPI for the life of a process: started (with threads: jobs are sent from several at once) when the build
/// has MPI, ended at scope exit, after telling the other ranks to stop when this is rank 0. One per process,
/// made in main(); without it, or without MPI, the process is rank 0 of 1.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

int rank();
int size();
/// Whether this build can run campaigns over MPI ranks.
bool built_with_mpi();

/// Waits for every rank (nothing with one).
void barrier();

/// Every rank must see `directory` (the kernel cache) as rank 0 does: rank 0 leaves a token there, each rank
/// reads it back. Collective. Throws Error{bad_input} naming the ranks that cannot, on every rank.
void require_shared(const std::filesystem::path& directory, const std::string& what);

/// run_worker at `place`: here when the place is this rank, else on its rank, which runs it there and sends
/// back how it ended (a rank that cannot see `directory` answers failed_to_start, saying so).
/// `reuse` is run_worker's, here; a job sent to another rank runs in a worker of its own.
WorkerOutcome run_job(const YAML::Node& job, const std::filesystem::path& directory, const std::string& name,
                      double timeout_s, const std::vector<std::string>& wrapper, double kernel_deadline_s,
                      Place place, bool reuse = false);

/// Rank > 0: sends rank 0 this rank's GPUs (a list of {index, name, uuid}, or a map with `error`), then runs
/// the jobs rank 0 sends until it says stop. Returns once stopped.
void serve(const YAML::Node& gpus);

/// Rank 0: the report of each other rank (rank 1 first), as serve() sent it.
std::vector<YAML::Node> gather_gpus();

/// Rank 0: tells every other rank to stop serving (once; the Session does it at exit too).
void stop();

}  // namespace tunefuzz::cluster
