// tunefuzz-worker: the only process that holds a GPU context. Usage: tunefuzz-worker JOB.yaml RESULT.yaml.
// It runs one job (probe, fuzz, time or case) and writes the result; on an error it writes {error: {kind,
// message}} and exits non-zero: 3 when there is no usable GPU, 4 when the device context was poisoned, 1
// otherwise. `tunefuzz-worker --serve` runs jobs one after another for a coordinator that keeps it (serve()).
//
// A job runs on the runtime its image was compiled for, read from the image's ELF header: a cubin (EM_CUDA)
// on the CUDA driver, an AMDGPU code object from hiprtc (EM_AMDGPU: a gfx* target) on the HIP runtime. For
// HIP only the fuzz job is written; a time job (no AMD baseline to time against) or a case job for an AMD
// image is refused, saying so. The probe asks CUDA first, then HIP. tunefuzz-hip-worker is this program built
// without CUDA (TUNEFUZZ_WORKER_HIP_ONLY), for a machine with an AMD GPU and no NVIDIA driver, where
// tunefuzz-worker cannot even start (it links libcuda.so.1): point TUNEFUZZ_WORKER at it.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "fuzz/oracle.hpp"
#include "tuner/device/hip/jobs.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/worker/protocol.hpp"
#if !TUNEFUZZ_WORKER_HIP_ONLY
#include "runtime/cuda/cuda.hpp"
#endif

namespace {

using namespace tunefuzz;

// The runtimes this build of the worker holds. A job for one it lacks is refused (the call sites below are
// discarded statements there, so nothing of that runtime is linked).
#if TUNEFUZZ_WORKER_HIP_ONLY
constexpr bool kCuda = false;
#else
constexpr bool kCuda = true;
#endif
#if TUNEFUZZ_HAVE_HIP
constexpr bool kHip = true;
#else
constexpr bool kHip = false;
#endif

/// True when `image` is an AMDGPU code object: an ELF whose e_machine (little-endian, bytes 18-19) is
/// EM_AMDGPU (224), what hiprtc builds for a gfx* target. Anything else goes to the CUDA driver (a cubin is
/// EM_CUDA, 190), whose loader judges it.
bool is_amd_image(const std::filesystem::path& image) {
  std::ifstream in(image, std::ios::binary);
  std::array<unsigned char, 20> header{};
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size()))
    throw Error(ErrorKind::io, "cannot read the ELF header of " + image.string());
  constexpr int kEmAmdgpu = 224;
  const bool elf = header[0] == 0x7f && header[1] == 'E' && header[2] == 'L' && header[3] == 'F';
  return elf && (header[18] | header[19] << 8) == kEmAmdgpu;
}

/// Refuses a `job` (e.g. "fuzz job") for `candidate` whose image is for a runtime this worker lacks or, for
/// AMD, a job that is not written for HIP (`not_written`: why).
void require_runtime(bool amd, const std::string& job, const std::string& candidate,
                     const char* not_written = nullptr) {
  const std::string image =
      candidate + (amd ? " is an AMDGPU code object (a gfx* target)" : " is a CUDA image");
  if (amd && not_written)
    throw Error(ErrorKind::unsupported,
                "the " + job + " is not written for AMD GPUs (" + not_written + "); " + image);
  if (amd && !kHip)
    throw Error(ErrorKind::unsupported, image +
                                            ", and this worker was built without HIP (ROCm's HIP not found "
                                            "by CMake, or -DTUNEFUZZ_HIP=OFF): its " +
                                            job + " cannot run");
  if (!amd && !kCuda)
    throw Error(ErrorKind::unsupported, image + ", and tunefuzz-hip-worker is built without CUDA: its " +
                                            job + " runs in tunefuzz-worker");
}

DeviceInfo probe() {
#if TUNEFUZZ_WORKER_HIP_ONLY
  return device::hip::probe();
#else
  try {
    return device::query_device();
  } catch (const Error& cuda) {
    if constexpr (kHip) {
      if (cuda.kind() != ErrorKind::no_device) throw;
      try {
        return device::hip::probe();
      } catch (const Error& hip) {
        if (hip.kind() != ErrorKind::no_device) throw;
        throw Error(ErrorKind::no_device, std::string(cuda.what()) + "; " + hip.what());
      }
    }
    throw;
  }
#endif
}

YAML::Node run_job(const YAML::Node& job, const std::filesystem::path& result_path) {
  const std::string kind = job["kind"] ? job["kind"].as<std::string>() : "";
  if (kind == "probe") return to_yaml(probe());
  if (kind == "fuzz") {
    const FuzzJob fuzz = fuzz_job_from_yaml(job);
    fuzz::set_host_threads(static_cast<unsigned>(fuzz.host_threads));
    const auto write_partial = [&](const FuzzResult& partial) { write_yaml(result_path, to_yaml(partial)); };
    const bool amd = is_amd_image(fuzz.image);
    require_runtime(amd, "fuzz job", fuzz.candidate);
    if constexpr (kHip) {
      if (amd) return to_yaml(device::hip::run_fuzz_job(fuzz, write_partial));
    }
    if constexpr (kCuda) return to_yaml(device::run_fuzz_job(fuzz, write_partial));
  }
  if (kind == "time") {
    const TimeJob time = time_job_from_yaml(job);
    fuzz::set_host_threads(static_cast<unsigned>(time.host_threads));
    for (const TimeJob::Entry& entry : time.candidates)
      require_runtime(
          is_amd_image(entry.image), "time job", entry.candidate,
          "it verifies and times every candidate against cuBLAS in the same process, and there is "
          "no AMD baseline (rocBLAS or hipBLAS) here");
    if constexpr (kCuda)
      return to_yaml(device::run_time_job(
          time, [&](const TimeResult& partial) { write_yaml(result_path, to_yaml(partial)); }));
  }
  if (kind == "case") {
    const CaseJob replay = case_job_from_yaml(job);
    fuzz::set_host_threads(0);  // a serving worker keeps the last job's share otherwise
    for (const CaseSet& set : replay.sets)
      require_runtime(is_amd_image(set.image), "case job", set.candidate,
                      "replaying a reproducer's case, as `fuzz replay` does, runs on CUDA only");
    if constexpr (kCuda) return to_yaml(device::run_case_job(replay));
  }
  if (kind == "probe" || kind == "fuzz" || kind == "time" || kind == "case")
    throw Error(ErrorKind::internal, "the " + kind + " job reached no runtime");
  throw Error(ErrorKind::bad_input, "unknown job kind '" + kind + "' (expected probe, fuzz, time or case)");
}

/// True for an error after which this process cannot use the device again.
bool poisons_context(const Error& e) {
  if constexpr (kHip) {
    if (device::hip::poisons_context(e)) return true;
  }
#if !TUNEFUZZ_WORKER_HIP_ONLY
  if (const auto* cuda = dynamic_cast<const device::CudaError*>(&e)) return cuda->poisons_context();
#endif
  return false;
}

}  // namespace

// One job: its result written to `result_path`; the exit code a worker of this one job returns.
int run_one(const std::filesystem::path& job_path, const std::filesystem::path& result_path) {
  try {
    write_yaml(result_path, run_job(read_yaml(job_path), result_path));
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
    if (poisons_context(e)) return device::kExitContextPoisoned;
    return exit_code_for(e.kind()) == 3 ? 3 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tunefuzz-worker: unexpected error: " << e.what() << "\n";
    return 1;
  }
}

// `--serve`: jobs one after another, each a line on standard input (job, result and log paths,
// tab-separated), its output in its log, answered by "done" on file descriptor 3 once its result is written.
// A job that does not end with 0 ends the worker with its code, as a worker of one job would have exited. The
// device's primary context is made when the worker starts (a coordinator may start workers ahead of their
// jobs) and held, so no job creates it again.
int serve() {
#if !TUNEFUZZ_WORKER_HIP_ONLY
  std::optional<device::Context> held;
  try {
    held.emplace();
  } catch (const std::exception&) {
    // no CUDA device here (an AMD job, or none at all): nothing to hold; a job says what is missing
  }
#endif
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream fields(line);
    std::string job, result, log;
    if (!std::getline(fields, job, '\t') || !std::getline(fields, result, '\t') ||
        !std::getline(fields, log)) {
      std::cerr << "tunefuzz-worker --serve: expected JOB<TAB>RESULT<TAB>LOG, got '" << line << "'\n";
      return 2;
    }
    std::cout.flush();
    std::cerr.flush();
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) {
      std::cerr << "tunefuzz-worker --serve: cannot open " << log << ": " << std::strerror(errno) << "\n";
      return 1;
    }
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    close(out);
    const int code = run_one(job, result);
    std::cout.flush();
    std::cerr.flush();
    if (code != 0) return code;
    if (write(3, "done\n", 5) != 5) return 1;  // the coordinator is gone
  }
  return 0;
}

int main(int argc, char** argv) {
  // Die with the coordinator: a campaign killed with -9 must not leave workers holding the GPU.
  const pid_t parent = getppid();
  if (argc == 2 && std::string(argv[1]) == "--serve") {
    // A serving worker outlives the coordinator thread that started it (it waits idle for the next stage's
    // threads), and the parent-death signal follows that thread, not the process: watch the process.
    std::thread([parent] {
      while (getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::_Exit(1);
    }).detach();
    return serve();
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;  // the coordinator died before the line above took effect
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " JOB.yaml RESULT.yaml | --serve\n";
    return 2;
  }
  return run_one(argv[1], argv[2]);
}
