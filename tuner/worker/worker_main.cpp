// tunefuzz-worker: the only process that holds a CUDA context. Usage: tunefuzz-worker JOB.yaml RESULT.yaml.
// It runs one job (probe, fuzz, time or case) and writes the result; on an error it writes {error: {kind,
// message}} and exits non-zero: 3 when there is no usable GPU, 4 when the CUDA context was poisoned, 1
// otherwise.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <iostream>

#include "tuner/device/cuda.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/worker/protocol.hpp"

namespace {

using namespace tunefuzz;

YAML::Node run_job(const YAML::Node& job, const std::filesystem::path& result_path) {
  const std::string kind = job["kind"] ? job["kind"].as<std::string>() : "";
  if (kind == "probe") return to_yaml(device::query_device());
  if (kind == "fuzz")
    return to_yaml(device::run_fuzz_job(fuzz_job_from_yaml(job), [&](const FuzzResult& partial) {
      write_yaml(result_path, to_yaml(partial));
    }));
  if (kind == "time")
    return to_yaml(device::run_time_job(time_job_from_yaml(job), [&](const TimeResult& partial) {
      write_yaml(result_path, to_yaml(partial));
    }));
  if (kind == "case") return to_yaml(device::run_case_job(case_job_from_yaml(job)));
  throw Error(ErrorKind::bad_input, "unknown job kind '" + kind + "' (expected probe, fuzz, time or case)");
}

}  // namespace

int main(int argc, char** argv) {
  // Die with the coordinator: a campaign killed with -9 must not leave workers holding the GPU.
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;  // the coordinator died before the line above took effect
  if (argc != 3) {
    std::cerr << "usage: tunefuzz-worker JOB.yaml RESULT.yaml\n";
    return 2;
  }
  const std::filesystem::path result_path = argv[2];
  try {
    write_yaml(result_path, run_job(read_yaml(argv[1]), result_path));
    return 0;
  } catch (const Error& e) {
    // Keep whatever partial result the job wrote (timings done before a fault) and add the error to it.
    try {
      YAML::Node document = std::filesystem::exists(result_path) ? read_yaml(result_path) : YAML::Node();
      document["error"]["kind"] = to_string(e.kind());
      document["error"]["message"] = e.what();
      if (!e.detail().empty()) document["error"]["detail"] = e.detail();
      write_yaml(result_path, document);
    } catch (...) {
    }
    std::cerr << "tunefuzz-worker: " << e.what() << "\n";
    const auto* cuda = dynamic_cast<const device::CudaError*>(&e);
    if (cuda && cuda->poisons_context()) return device::kExitContextPoisoned;
    return exit_code_for(e.kind()) == 3 ? 3 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tunefuzz-worker: unexpected error: " << e.what() << "\n";
    return 1;
  }
}
